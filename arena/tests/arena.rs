//! Elo, SPRT, ratings, PGN round trips and the built-in players.

use vzero_arena::elo::{elo_from_score, MatchStats, SprtConfig, SprtDecision, Z95};
use vzero_arena::matches::{pgn_record, write_pgn};
use vzero_rules::pgn::parse_pgn;
use vzero_arena::{compute_ratings, fsf_command, run_match, GameRecord, MatchConfig, PlayerSpec, UciEngine, UciEngineSpec, VariantIni, VZERO_VARIANTS_INI};
use vzero_rules::{Game, Outcome, Reason, Variant};

fn stats(w: u32, d: u32, l: u32) -> MatchStats {
    MatchStats { wins: w, draws: d, losses: l, penta: [0; 5] }
}

#[test]
fn elo_of_known_scores() {
    assert!((elo_from_score(0.6) - 70.437).abs() < 0.01);
    assert!((elo_from_score(0.4) + 70.437).abs() < 0.01);
    assert!((elo_from_score(0.75) - 190.849).abs() < 0.01);
    assert!((elo_from_score(0.9) - 381.697).abs() < 0.01);
    // 6/0/4: score 0.6, trinomial variance 0.24 per game, se sqrt(0.024)
    let e = stats(6, 0, 4).elo().unwrap();
    assert!(!e.pentanomial);
    assert!((e.elo - 70.437).abs() < 0.01);
    let se = (0.24f64 / 10.0).sqrt();
    assert!((e.low - elo_from_score(0.6 - Z95 * se)).abs() < 1e-9);
    assert!((e.high - elo_from_score(0.6 + Z95 * se)).abs() < 1e-9);
    // draws count half and shrink the variance: 2/6/2 -> 0 Elo, narrower than 5/0/5
    let (a, b) = (stats(2, 6, 2).elo().unwrap(), stats(5, 0, 5).elo().unwrap());
    assert!(a.elo.abs() < 1e-9 && a.margin() < b.margin());
    // pentanomial when every game is in a pair: pairs [0,1,2,1,0] => mean 0.5, var per pair 1/32
    let p = MatchStats { wins: 4, draws: 0, losses: 4, penta: [0, 1, 2, 1, 0] };
    let e = p.elo().unwrap();
    assert!(e.pentanomial && e.elo.abs() < 1e-9);
    let se = (1.0f64 / 32.0 / 4.0).sqrt();
    assert!((e.high - elo_from_score(0.5 + Z95 * se)).abs() < 1e-9);
}

#[test]
fn sprt_decisions() {
    let c = SprtConfig::parse("0,10,0.05,0.05").unwrap();
    let (lo, hi) = c.bounds();
    assert!((hi - (0.95f64 / 0.05).ln()).abs() < 1e-12 && (lo + hi).abs() < 1e-12);
    // clearly better: 60% over 1000 games
    assert_eq!(stats(500, 200, 300).sprt(&c), SprtDecision::H1);
    // equal over many games
    assert_eq!(stats(3000, 4000, 3000).sprt(&c), SprtDecision::H0);
    // clearly worse
    assert_eq!(stats(300, 200, 500).sprt(&c), SprtDecision::H0);
    // too few games to tell
    assert_eq!(stats(3, 4, 3).sprt(&c), SprtDecision::Continue);
    assert!(SprtConfig::parse("10,0,0.05,0.05").is_err());
    assert!(SprtConfig::parse("0,10,0.05").is_err());
}

fn rec(w: &str, b: &str, s: f64) -> GameRecord {
    GameRecord { white: w.into(), black: b.into(), white_score: s }
}

#[test]
fn ratings_hand_checked_chain_and_cycle() {
    // random - B: B scores 6/10; B - C: C scores 6/8. A chain has no cycle, so the maximum
    // likelihood differences are the pairwise ones: B = +70.44, C = B + 190.85.
    let mut g = Vec::new();
    for i in 0..10 {
        let s = if i < 6 { 1.0 } else { 0.0 };
        if i % 2 == 0 { g.push(rec("B", "random", s)) } else { g.push(rec("random", "B", 1.0 - s)) }
    }
    for i in 0..8 {
        g.push(rec("C", "B", if i < 6 { 1.0 } else { 0.0 }));
    }
    let r = compute_ratings(&g, "random", 0.0).unwrap();
    let get = |n: &str| r.iter().find(|x| x.player == n).unwrap().clone();
    assert_eq!(r[0].player, "C");
    assert!((get("B").elo - 70.437).abs() < 0.01, "{r:?}");
    assert!((get("C").elo - 261.286).abs() < 0.01, "{r:?}");
    assert_eq!(get("random").elo, 0.0);
    assert_eq!(get("random").margin, 0.0);
    assert_eq!(get("B").games, 18);
    assert!((get("B").score - 8.0 / 18.0).abs() < 1e-12);
    // intervals from the information: 1 / (n c^2 p (1-p)) per link, adding along the chain
    let c = std::f64::consts::LN_10 / 400.0;
    let v1 = 1.0 / (10.0 * c * c * 0.24);
    let v2 = 1.0 / (8.0 * c * c * 0.1875);
    assert!((get("B").margin - Z95 * v1.sqrt()).abs() < 0.01);
    assert!((get("B").margin - 219.78).abs() < 0.05);
    assert!((get("C").margin - Z95 * (v1 + v2).sqrt()).abs() < 0.01);

    // rock-paper-scissors: each beats the next 3-1, so all are equal
    let mut g = Vec::new();
    for (x, y) in [("random", "X"), ("X", "Y"), ("Y", "random")] {
        for i in 0..4 {
            g.push(rec(x, y, if i < 3 { 1.0 } else { 0.0 }));
        }
    }
    let r = compute_ratings(&g, "random", 0.0).unwrap();
    assert!(r.iter().all(|x| x.elo.abs() < 1e-6), "{r:?}");
    // errors: unknown anchor, 100% score without a prior; a prior keeps it finite
    assert!(compute_ratings(&g, "nobody", 0.0).is_err());
    let all = vec![rec("A", "random", 1.0), rec("random", "A", 0.0)];
    assert!(compute_ratings(&all, "random", 0.0).is_err());
    let r = compute_ratings(&all, "random", 1.0).unwrap();
    assert!((r[0].elo - elo_from_score(2.5 / 3.0)).abs() < 0.01);
}

#[test]
fn pgn_round_trip() {
    let v = Variant::builtin("shogun").unwrap();
    let fen = "4k3/P7/8/3N4/8/8/8/+N3K3[Pp] w - - 0 1";
    let mut g = Game::from_fen(v, fen).unwrap();
    for m in ["a7a8+", "e8d7", "P@e4", "P@e5"] {
        g.play_uci(m).unwrap();
    }
    let rec = pgn_record("test", 3, "greedy", "random \"x\"", &g, 0.5, "adjudication", Some("draw after 4 plies"));
    let mut buf = Vec::new();
    write_pgn(&mut buf, &rec, g.start()).unwrap();
    write_pgn(&mut buf, &rec, g.start()).unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(text.contains("[Variant \"shogun\"]") && text.contains("[SetUp \"1\"]") && text.contains(&format!("[FEN \"{fen}\"]")));
    assert!(text.contains("1. a7a8+ e8d7 2. P@e4 P@e5 1/2-1/2"), "{text}");
    let back = parse_pgn(&text, "mem.pgn").unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[0], rec);
    assert_eq!(back[0].tag("Black"), Some("random \"x\""));
    assert_eq!(back[0].tag("Termination"), Some("adjudication"));
    assert_eq!(back[0].white_score(), Some(0.5));
    assert_eq!(back[1].replay(v).unwrap().position().fen(), g.position().fen());
    // comments, NAGs, variations, glued move numbers, Black-to-move numbering
    let other = "[White \"a\"]\n[Black \"b\"]\n[Result \"0-1\"]\n\n1.e2e4 {hi} (1. d2d4 d7d5) e7e5 $1 2. g1f3 ; rest\n2... b8c6 0-1\n";
    let p = parse_pgn(other, "x.pgn").unwrap();
    assert_eq!(p[0].moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
    assert_eq!(p[0].result, "0-1");
    // errors name file and line
    let e = parse_pgn("[White \"a\"]\n\n1. e2e4 e7e5\n", "bad.pgn").unwrap_err().to_string();
    assert!(e.starts_with("bad.pgn:3:") && e.contains("no result"), "{e}");
    let e = parse_pgn("[White \"a\"]\n[Black b]\n", "bad.pgn").unwrap_err().to_string();
    assert!(e.starts_with("bad.pgn:2:"), "{e}");
}

#[test]
fn greedy_and_alphabeta_take_mate_in_one() {
    // Find positions with a mate in one along seeded random games (deterministic).
    use rand::{seq::SliceRandom, SeedableRng};
    let mut found = 0;
    for (vname, seed) in [("shogun", 1u64), ("empire", 2), ("shogun", 3)] {
        let v = Variant::builtin(vname).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut g = Game::startpos(v);
        while !g.result().is_over() && found < 6 {
            let mates = mates_in_one(&g);
            if !mates.is_empty() && mates.len() < g.position().legal_moves().len() {
                found += 1;
                for spec in ["greedy", "alphabeta:1", "alphabeta:3"] {
                    let mut p = PlayerSpec::parse(spec).unwrap().build(v, seed).unwrap();
                    let m = p.choose(&g).unwrap();
                    assert!(mates.contains(&m), "{spec} played {} in {}", g.position().uci(m), g.position().fen());
                }
            }
            let m = *g.position().legal_moves().choose(&mut rng).unwrap();
            g.play(m);
        }
    }
    assert!(found >= 2, "only {found} positions with a mate in one");
}

fn mates_in_one(g: &Game) -> Vec<vzero_rules::Move> {
    g.position()
        .legal_moves()
        .into_iter()
        .filter(|&m| {
            let mut c = g.clone();
            c.play(m);
            let r = c.result();
            r.outcome == Outcome::Loss && r.reason == Reason::Checkmate
        })
        .collect()
}

#[test]
fn spec_grammar() {
    assert_eq!(PlayerSpec::parse("alphabeta").unwrap(), PlayerSpec::AlphaBeta { depth: 3 });
    assert_eq!(PlayerSpec::parse("mcts:64").unwrap(), PlayerSpec::Mcts { sims: 64, knowledge: false });
    assert_eq!(PlayerSpec::parse("mcts:64:knowledge").unwrap(), PlayerSpec::Mcts { sims: 64, knowledge: true });
    assert_eq!(PlayerSpec::parse("mcts:knowledge").unwrap().name(), "mcts:800:knowledge");
    match PlayerSpec::parse("net:runs/a/gen7:gumbel:32").unwrap() {
        PlayerSpec::Net { sims, gumbel, .. } => assert!(gumbel && sims == 32),
        s => panic!("{s:?}"),
    }
    assert_eq!(PlayerSpec::parse("net:x/y.json:200").unwrap().name(), "net:y:200");
    match PlayerSpec::parse("net:x/y:gumbel:32:kv=0.25:kp=0:batch=2").unwrap() {
        s @ PlayerSpec::Net { .. } => {
            assert_eq!(s.name(), "net:y:gumbel:32:kv=0.25:kp=0:batch=2");
            let PlayerSpec::Net { options, .. } = s else { unreachable!() };
            assert_eq!((options.knowledge_value, options.knowledge_prior, options.batch), (Some(0.25), Some(0.0), Some(2)));
        }
        s => panic!("{s:?}"),
    }
    match PlayerSpec::parse("uci:fairy-stockfish --x:nodes=500:opt=Hash=16:variantpath=v.ini:name=fsf").unwrap() {
        PlayerSpec::Uci(u) => {
            assert_eq!(u.command, ["fairy-stockfish", "--x"]);
            assert_eq!(u.nodes, Some(500));
            assert_eq!(u.options, [("Hash".to_string(), "16".to_string())]);
            assert_eq!(u.variant_path, Some(VariantIni::File("v.ini".into())));
            assert_eq!(u.name(), "fsf");
        }
        s => panic!("{s:?}"),
    }
    // fsf: Fairy-Stockfish from $VZERO_FSF or the PATH, with vzero's variant definitions
    match PlayerSpec::parse("fsf:nodes=1").unwrap() {
        PlayerSpec::Uci(u) => {
            assert_eq!(u.command, fsf_command());
            assert_eq!((u.nodes, u.variant_path.clone()), (Some(1), Some(VariantIni::Vzero)));
            assert_eq!(u.name(), "fsf:nodes=1");
        }
        s => panic!("{s:?}"),
    }
    match PlayerSpec::parse("fsf:movetime=100:variantpath=my.ini:name=F").unwrap() {
        PlayerSpec::Uci(u) => {
            assert_eq!((u.movetime, u.variant_path.clone(), u.name()), (Some(100), Some(VariantIni::File("my.ini".into())), "F".to_string()));
        }
        s => panic!("{s:?}"),
    }
    assert_eq!(PlayerSpec::parse("fsf").unwrap().name(), "fsf:nodes=1000");
    for bad in ["fsf:bogus=1", "fsf:nodes=x"] {
        assert!(PlayerSpec::parse(bad).is_err(), "{bad}");
    }
    for bad in ["", "randomx", "random:1", "mcts:0", "mcts:x", "mcts:64:bogus", "net:x:64:kv=2", "net:x:64:batch=0", "net:x:64:foo=1", "net:x:kv=0.5:64", "net", "uci:", "uci:x:bogus=1", "alphabeta:99"] {
        assert!(PlayerSpec::parse(bad).is_err(), "{bad}");
    }
    // a missing engine is an error at build time, not a panic
    let v = Variant::builtin("empire").unwrap();
    assert!(PlayerSpec::parse("uci:/nonexistent/engine").unwrap().build(v, 0).is_err());
}

#[test]
fn vzero_variant_definitions_are_written_whole_for_fairy_stockfish() {
    // the built-in definitions define the two variants Fairy-Stockfish plays for vzero, and the
    // file handed to the engine is exactly them (also when it is asked for again)
    for v in ["empire", "shogun"] {
        assert!(VariantIni::defines_vzero(v), "{v}");
    }
    for v in ["spqr", "empire-faceoff", "shogun-auto", "empir"] {
        assert!(!VariantIni::defines_vzero(v), "{v}");
    }
    let a = VariantIni::Vzero.path().unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), VZERO_VARIANTS_INI);
    assert_eq!(VariantIni::Vzero.path().unwrap(), a);
    assert_eq!(VariantIni::File("x.ini".into()).path().unwrap(), "x.ini");
    // an engine given vzero's definitions for a variant they do not hold is refused at its start,
    // naming the variant (a shell that answers the handshake stands in for the engine)
    let spec = UciEngineSpec {
        command: ["sh", "-c", "echo uciok; cat > /dev/null"].map(String::from).to_vec(),
        nodes: Some(1),
        movetime: None,
        depth: None,
        clock: None,
        options: Vec::new(),
        variant_path: Some(VariantIni::Vzero),
        label: None,
        timeout: std::time::Duration::from_secs(5),
    };
    let e = UciEngine::start(&spec, Variant::builtin("spqr").unwrap()).err().unwrap();
    assert!(format!("{e:#}").contains("not spqr"), "{e:#}");
}

#[test]
fn greedy_beats_random_and_pairs_swap_colours() {
    let v = Variant::builtin("empire").unwrap();
    let mut cfg = MatchConfig::new(v);
    cfg.games = 8;
    cfg.concurrency = 2;
    cfg.seed = 5;
    let r = run_match(&PlayerSpec::Greedy, &PlayerSpec::Random, &cfg).unwrap();
    assert_eq!(r.stats.games(), 8);
    assert_eq!(r.stats.pairs(), 4);
    assert!(r.stats.points() >= 6.5, "{:?}", r.stats);
    for pair in r.games.chunks(2) {
        assert!(pair[0].a_white && !pair[1].a_white);
        // same opening: the first 8 moves agree
        assert_eq!(pair[0].pgn.moves[..8], pair[1].pgn.moves[..8]);
        assert_eq!(pair[0].pgn.tag("White"), Some("greedy"));
        assert_eq!(pair[1].pgn.tag("White"), Some("random"));
    }
    // SPRT stops early on a lopsided match
    cfg.games = 200;
    cfg.sprt = Some(SprtConfig::parse("0,50,0.05,0.05").unwrap());
    let r = run_match(&PlayerSpec::Greedy, &PlayerSpec::Random, &cfg).unwrap();
    assert_eq!(r.sprt.map(|s| s.0), Some(SprtDecision::H1));
    assert!(r.stats.games() < 100, "{:?}", r.stats);
}
