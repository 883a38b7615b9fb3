//! `vzero uci` as the tools of pychess players drive it: each test sends exactly the lines the
//! tool sends (lichess-bot through python-chess, fairyfishnet, variantfishtest) and reads the
//! answers the way the tool does, so it fails when the engine answers differently.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{bestmove, vzero, Session};
use vzero_rules::{Game, Position, Variant};

/// The options as python-chess (`chess.engine`, which lichess-bot uses) reads them: every
/// `option` line must parse, with a default that fits its type; returns name → (type, line).
fn python_chess_options(head: &[String]) -> HashMap<String, (String, String)> {
    let mut opts = HashMap::new();
    for l in head.iter().filter(|l| l.starts_with("option ")) {
        let t: Vec<&str> = l.split_whitespace().collect();
        let ti = t.iter().position(|&x| x == "type").unwrap_or_else(|| panic!("no type: {l}"));
        let name = t[2..ti].join(" ");
        let kind = t[ti + 1];
        let field = |k: &str| t.iter().position(|&x| x == k).map(|i| t[i + 1..].iter().take_while(|x| !["min", "max", "var", "default"].contains(x)).copied().collect::<Vec<_>>().join(" "));
        match kind {
            "spin" => {
                let (d, lo, hi): (i64, i64, i64) = (field("default").unwrap().parse().unwrap(), field("min").unwrap().parse().unwrap(), field("max").unwrap().parse().unwrap());
                assert!(lo <= d && d <= hi, "{l}");
            }
            "check" => assert!(matches!(field("default").as_deref(), Some("true" | "false")), "{l}"),
            "combo" => {
                let d = field("default").unwrap();
                assert!(l.contains(&format!(" var {d}")), "combo default not among its vars: {l}");
            }
            "string" => assert!(field("default").is_some(), "{l}"),
            "button" => {}
            _ => panic!("unknown option type: {l}"),
        }
        opts.insert(name.to_ascii_lowercase(), (kind.to_string(), l.clone()));
    }
    opts
}

/// The last `info` line with `multipv 1` (or none) before `bestmove`.
fn last_info(lines: &[String]) -> &str {
    lines.iter().rev().find(|l| l.starts_with("info ") && !l.starts_with("info string") && !l.contains(" multipv 2")).map(String::as_str).unwrap_or("")
}

fn legal(fen_or_start: Option<&str>, variant: &str, moves: &[String]) -> Game {
    let v = Variant::load(variant).unwrap();
    let mut g = match fen_or_start {
        Some(f) => Game::from_fen(v, f).unwrap(),
        None => Game::startpos(v),
    };
    for m in moves {
        g.play_uci(m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    g
}

#[test]
fn lichess_bot_handshake_options_and_clock_move() {
    // python-chess: uci, then the configured options (lichess-bot's engine `uci_options`), then
    // per game ucinewgame/isready and per move position + go with both clocks.
    let mut s = Session::start(&[]);
    s.send("uci");
    let head = s.until("uciok", 20);
    assert!(head[0].starts_with("id name vzero"), "{head:?}");
    let opts = python_chess_options(&head);
    for name in ["uci_variant", "threads", "hash", "multipv", "ponder", "move overhead", "uci_showwdl", "uci_analysemode", "uci_chess960", "variantpath", "modelpath", "clear hash"] {
        assert!(opts.contains_key(name), "option {name} missing: {head:?}");
    }
    assert!(opts["ponder"].1.ends_with("default false"), "ponder must be off by default");
    for line in ["setoption name UCI_Variant value shogun", "setoption name Threads value 1", "setoption name Hash value 64", "setoption name Move Overhead value 100"] {
        s.send(line);
    }
    s.send("isready");
    let lines = s.until("readyok", 20);
    assert!(lines.iter().all(|l| l == "readyok" || l.starts_with("info string variant shogun")), "{lines:?}");
    s.send("ucinewgame");
    s.send("isready");
    s.until("readyok", 20);
    s.send("position startpos moves e2e4 e7e5");
    s.send("go wtime 10000 btime 10000 winc 100 binc 100");
    let t = Instant::now();
    let out = s.until("bestmove", 30);
    assert!(t.elapsed() < Duration::from_secs(4), "a move with 10 s on the clock took {:?}", t.elapsed());
    let bm = bestmove(&out);
    legal(None, "shogun", &["e2e4".into(), "e7e5".into(), bm.clone()]);
    let info = last_info(&out);
    assert!(info.contains(" score cp ") || info.contains(" score mate "), "{info}");
    assert!(info.contains(&format!(" pv {bm}")), "{info}");
    s.quit();
}

/// fairyfishnet's `go()` parser (src/fairyfishnet/engine.py), ported: integers where it reads
/// integers, score kinds cp/mate, an error where Python's `int()` would raise.
fn fairyfishnet_parse(arg: &str, info: &mut HashMap<String, String>) -> Result<(), String> {
    const INTS: [&str; 10] = ["depth", "seldepth", "time", "nodes", "currmovenumber", "hashfull", "nps", "tbhits", "cpuload", "multipv"];
    const KEYS: [&str; 14] = ["depth", "seldepth", "time", "nodes", "multipv", "currmove", "currmovenumber", "hashfull", "nps", "tbhits", "cpuload", "refutation", "currline", "string"];
    let mut cur = "";
    let (mut kind, mut value) = (None, None);
    for token in arg.split(' ') {
        if cur == "string" {
            info.entry("string".into()).and_modify(|s| *s += &format!(" {token}")).or_insert(token.into());
        } else if token == "score" {
            cur = "score";
        } else if token == "pv" {
            cur = "pv";
            if info.get("multipv").is_none_or(|m| m == "1") {
                info.remove("pv");
            }
        } else if KEYS.contains(&token) {
            cur = KEYS.iter().find(|k| **k == token).unwrap();
            info.remove(cur);
        } else if INTS.contains(&cur) {
            token.parse::<i64>().map_err(|_| format!("int({token:?}) after {cur}"))?;
            info.insert(cur.into(), token.into());
        } else if cur == "score" {
            match token {
                "cp" | "mate" => {
                    kind = Some(token.to_string());
                    value = None;
                }
                "lowerbound" | "upperbound" => {}
                _ => value = Some(token.parse::<i64>().map_err(|_| format!("int({token:?}) in score"))?),
            }
        } else if cur != "pv" || info.get("multipv").is_none_or(|m| m == "1") {
            info.entry(cur.into()).and_modify(|s| *s += &format!(" {token}")).or_insert(token.into());
        }
    }
    if let (Some(k), Some(v)) = (kind, value) {
        info.insert("score".into(), format!("{k} {v}"));
    }
    Ok(())
}

#[test]
fn fairyfishnet_analysis_job_and_fen() {
    // worker.py: options, then per ply `position fen F moves …` and `go movetime M nodes N`,
    // reading every info line; after a move job `d` + `isready`, reading `Fen:`.
    let mut s = Session::start(&[]);
    s.send("uci");
    let head = s.until("uciok", 20);
    // engine.uci(): the variants are the UCI_Variant combo's default and every `var`
    let combo = head.iter().find(|l| l.starts_with("option name UCI_Variant type combo default ")).unwrap();
    let tokens: Vec<&str> = combo.split_whitespace().skip(1).collect();
    let mut variants = vec![tokens[5]];
    variants.extend(tokens.windows(2).filter(|w| w[0] == "var").map(|w| w[1]));
    for v in vzero_rules::variant::builtin_names() {
        assert!(variants.contains(&v), "{v} not offered: {combo}");
    }
    for line in ["setoption name UCI_Chess960 value false", "setoption name UCI_Variant value empire", "setoption name Threads value 1", "setoption name Hash value 128", "setoption name UCI_AnalyseMode value true"] {
        s.send(line);
    }
    s.send("isready");
    for l in s.until("readyok", 20) {
        assert!(l == "readyok" || l.starts_with("info string"), "unexpected answer to isready: {l}");
    }
    let start = Position::startpos(Variant::builtin("empire").unwrap()).fen();
    let mut moves: Vec<String> = Vec::new();
    for ply in 0..4 {
        s.send(&format!("position fen {start} moves {}", moves.join(" ")));
        s.send("go movetime 4000 nodes 300");
        let out = s.until("bestmove", 30);
        let mut info = HashMap::new();
        for l in &out {
            if let Some(arg) = l.strip_prefix("info ") {
                fairyfishnet_parse(arg, &mut info).unwrap_or_else(|e| panic!("fairyfishnet cannot parse '{l}': {e}"));
            } else if !l.starts_with("bestmove") {
                panic!("unexpected answer to go: {l}");
            }
        }
        for key in ["depth", "nodes", "time", "score", "pv"] {
            assert!(info.contains_key(key), "ply {ply}: no {key} in {out:?}");
        }
        let nodes: u64 = info["nodes"].parse().unwrap();
        assert!((300..=302).contains(&nodes), "nodes {nodes} for go nodes 300");
        // the node limit ended it, not movetime 4000 (the engine's own clock: the wall clock
        // of a loaded machine would measure the scheduler)
        let ms: u64 = info["time"].parse().unwrap();
        assert!(ms < 4000, "nodes 300 must end before movetime 4000: time {ms}");
        let bm = bestmove(&out);
        assert_eq!(info["pv"].split(' ').next(), Some(bm.as_str()), "{out:?}");
        moves.push(bm);
    }
    // the engine stands where the last job put it: before the last bestmove
    let g = legal(Some(&start), "empire", &moves[..moves.len() - 1]);
    s.send("d");
    s.send("isready");
    let out = s.until("readyok", 20);
    let fen = out.iter().find_map(|l| l.strip_prefix("Fen: ")).expect("a Fen: line");
    assert_eq!(fen, g.position().fen());
    s.quit();
}

#[test]
fn variantfishtest_adjudication_from_engine_output() {
    // variantfishtest: setoption UCI_Variant, ucinewgame, `clear hash`, then per move
    // `position fen <book line> moves …` and `go wtime btime winc binc`; it adjudicates from
    // the multipv-1 score: `bestmove (none)` without pv + `mate 0` = loss for the side to move,
    // + `cp 0` = draw; `mate 1` = win; and it needs `time` in the info to run the clocks.
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("setoption name UCI_Variant value shogun");
    s.send("ucinewgame");
    s.send("setoption name clear hash value true");
    let go = "go wtime 10000 btime 10000 winc 100 binc 100";
    let cases = [
        ("R6k/6pp/8/8/8/8/8/4K3[] b - - 0 1", "score mate 0", true),
        ("7k/5+F2/6K1/8/8/8/8/8[] b - - 0 1", "score cp 0", true),
        ("6k1/5ppp/8/8/8/8/8/R3K3[] w - - 0 1", "score mate 1", false),
    ];
    for (fen, want, over) in cases {
        s.send(&format!("position fen {fen} moves "));
        s.send(go);
        let out = s.until("bestmove", 30);
        let info = last_info(&out);
        assert!(info.contains(want), "{fen}: expected '{want}' in {out:?}");
        if over {
            assert_eq!(out.last().unwrap(), "bestmove (none)", "{out:?}");
            assert!(!info.contains(" pv"), "no pv in a finished game: {info}");
        } else {
            assert!(info.contains(" time "), "{info}");
            legal(Some(fen), "shogun", &[bestmove(&out)]);
        }
    }
    // a game from an EPD book line as `vzero book export` writes it (operations after the FEN)
    let epd = "rnb+fkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNB+FKBNR[] b KQkq - 0 1 bm e7e5 d7d5; c0 \"weights e7e5:5.50 d7d5:1.00\"";
    let line = epd.trim_end_matches(';'); // variantfishtest strips the trailing ';'
    let mut moves: Vec<String> = Vec::new();
    for _ in 0..6 {
        s.send(&format!("position fen {line} moves {}", moves.join(" ")));
        s.send(go);
        let out = s.until("bestmove", 30);
        let info = last_info(&out);
        assert!(info.contains(" score ") && info.contains(" time "), "{out:?}");
        let bm = bestmove(&out);
        if bm == "(none)" {
            break;
        }
        // a one-move pv with cp 0 would be adjudicated a draw: only when the game ends after it
        let pv: Vec<&str> = info.split(" pv ").nth(1).unwrap_or("").split_whitespace().collect();
        if info.contains("score cp 0 ") && pv.len() == 1 {
            let mut g = legal(Some(line.split(" bm ").next().unwrap()), "shogun", &moves);
            g.play_uci(&bm).unwrap();
            assert!(g.result().is_over(), "cp 0 with a one-move pv in an ongoing game: {info}");
        }
        moves.push(bm);
    }
    legal(Some(line.split(" bm ").next().unwrap()), "shogun", &moves);
    s.quit();
}

#[test]
fn multipv_wdl_and_mate_scores() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("setoption name UCI_Variant value shogun");
    s.send("setoption name MultiPV value 3");
    s.send("setoption name UCI_ShowWDL value true");
    s.send("position startpos");
    s.send("go nodes 3000");
    let out = s.until("bestmove", 60);
    let last: Vec<&String> = out.iter().rev().skip(1).take(3).collect::<Vec<_>>().into_iter().rev().collect();
    let mut firsts = Vec::new();
    for (k, l) in last.iter().enumerate() {
        assert!(l.contains(&format!(" multipv {} score ", k + 1)), "{l}");
        let wdl: Vec<u32> = l.split(" wdl ").nth(1).unwrap().split_whitespace().take(3).map(|x| x.parse().unwrap()).collect();
        assert_eq!(wdl.iter().sum::<u32>(), 1000, "{l}");
        firsts.push(l.split(" pv ").nth(1).unwrap().split_whitespace().next().unwrap().to_string());
    }
    assert_eq!(firsts[0], bestmove(&out));
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2], "{firsts:?}");
    // a mate in two (three plies) proven by the solver: `score mate 2` on the first line
    s.send("setoption name MultiPV value 1");
    s.send("position fen 4k3/8/8/8/8/8/5R2/4K2R[] w - - 0 1");
    s.send("go movetime 2000");
    let out = s.until("bestmove", 30);
    assert!(last_info(&out).contains(" score mate 2 "), "{out:?}");
    s.quit();
}

#[test]
fn infinite_stop_ponder_and_ponderhit() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("position startpos moves e3e4");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    s.send("isready");
    let lines = s.until("readyok", 10);
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    s.send("stop");
    let out = s.until("bestmove", 10);
    legal(None, "empire", &["e3e4".into(), bestmove(&out)]);
    // ponder: no bestmove while pondering; after ponderhit the clock (1 s a side) applies
    s.send("setoption name Ponder value true");
    s.send("position startpos moves e3e4 e7e5");
    s.send("go ponder wtime 1000 btime 1000");
    std::thread::sleep(Duration::from_millis(500));
    s.send("isready");
    let lines = s.until("readyok", 10);
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    let t = Instant::now();
    s.send("ponderhit");
    let out = s.until("bestmove", 10);
    assert!(t.elapsed() < Duration::from_millis(900), "after ponderhit the clock limits apply: {:?}", t.elapsed());
    legal(None, "empire", &["e3e4".into(), "e7e5".into(), bestmove(&out)]);
    s.quit();
}

#[test]
fn variant_path_loads_a_definition_and_announces_it() {
    let dir = std::env::temp_dir().join(format!("vzero-uci-variant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/variants/empire.toml")).unwrap();
    let def = src.replacen("name = \"empire\"", "name = \"my-empire\"", 1);
    assert_ne!(def, src, "the definition names its variant");
    let path = dir.join("my-empire.toml");
    std::fs::write(&path, def).unwrap();
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send(&format!("setoption name VariantPath value {}", path.display()));
    s.send("setoption name UCI_Variant value my-empire");
    let start = Position::startpos(Variant::load(path.to_str().unwrap()).unwrap()).fen();
    let out = s.until("info string variant", 10);
    assert_eq!(out.last().unwrap(), &format!("info string variant my-empire files 8 ranks 8 pocket 0 template fairy startpos {start}"));
    s.send("position startpos");
    s.send("go nodes 100");
    let out = s.until("bestmove", 20);
    legal(None, path.to_str().unwrap(), &[bestmove(&out)]);
    s.send("d");
    s.send("isready");
    let out = s.until("readyok", 10);
    assert!(out.contains(&format!("Fen: {start}")), "{out:?}");
    // errors name the option and the file, and the engine goes on
    s.send("setoption name VariantPath value /nonexistent/x.toml");
    s.send("setoption name UCI_Variant value nosuchvariant");
    s.send("isready");
    let out = s.until("readyok", 10);
    assert!(out.iter().any(|l| l.starts_with("info string error: VariantPath /nonexistent/x.toml")), "{out:?}");
    assert!(out.iter().any(|l| l.starts_with("info string error: UCI_Variant nosuchvariant")), "{out:?}");
    s.quit();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn threads_and_tree_reuse() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("setoption name Threads value 2");
    s.send("position startpos");
    s.send("go nodes 4000");
    let out = s.until("bestmove", 60);
    let info = last_info(&out);
    let nodes: u64 = info.split(" nodes ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!((4000..=4002).contains(&nodes), "{info}");
    let line = out.last().unwrap().clone();
    let mut parts = line.split_whitespace().skip(1);
    let (bm, ponder) = (parts.next().unwrap().to_string(), parts.nth(1).expect("a ponder move").to_string());
    // the next position continues the game: the trees are advanced, not rebuilt
    s.send(&format!("position startpos moves {bm} {ponder}"));
    s.send("go nodes 1000");
    let out = s.until("bestmove", 60);
    let reuse = out.iter().find(|l| l.starts_with("info string tree reuse")).unwrap_or_else(|| panic!("{out:?}"));
    let kept: u64 = reuse.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(kept > 1, "{reuse}");
    legal(None, "empire", &[bm, ponder, bestmove(&out)]);
    s.quit();
}

/// Plays `plies` plies of `vzero uci` against itself on real clocks: each side's clock loses
/// the wall time from sending `go` to reading `bestmove` and gains the increment; a finished
/// game starts again from the start position on the same clocks. Panics if a clock runs out.
fn clock_game(variant: &str, base_ms: i64, inc_ms: i64, plies: usize) -> (i64, i64) {
    let mut s = Session::start(&["--variant", variant]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("ucinewgame");
    let (mut clocks, mut moves) = ([base_ms, base_ms], Vec::<String>::new());
    let mut spent = [0i64, 0];
    for ply in 0..plies {
        let g = legal(None, variant, &moves);
        if g.result().is_over() {
            moves.clear();
            s.send("ucinewgame");
        }
        let side = ply % 2; // both clocks alternate move by move whatever the game
        let stm_white = legal(None, variant, &moves).position().side_to_move() == vzero_rules::Color::White;
        let (w, b) = if stm_white { (clocks[side], clocks[1 - side]) } else { (clocks[1 - side], clocks[side]) };
        s.send(&format!("position startpos moves {}", moves.join(" ")));
        let t = Instant::now();
        s.send(&format!("go wtime {w} btime {b} winc {inc_ms} binc {inc_ms}"));
        let out = s.until("bestmove", 120);
        let used = t.elapsed().as_millis() as i64;
        spent[side] += used;
        clocks[side] -= used;
        assert!(clocks[side] > 0, "{variant} {base_ms}+{inc_ms}: lost on time at ply {ply} ({used} ms for this move)");
        clocks[side] += inc_ms;
        moves.push(bestmove(&out));
    }
    s.quit();
    (spent[0].max(spent[1]), clocks[0].min(clocks[1]))
}

#[test]
fn clock_games_of_200_plies_never_lose_on_time() {
    // 1+0 and 3+2 scaled down by 10 and 30 (6 s and 6 s + 67 ms a side) to keep the test short,
    // with the no-network evaluator; the default Move Overhead (30 ms) is kept.
    for (variant, base, inc) in [("empire", 6_000, 0), ("shogun", 6_000, 67)] {
        let (most_spent, least_left) = clock_game(variant, base, inc, 200);
        eprintln!("{variant} {base}+{inc} ms, 200 plies: most time spent by a side {most_spent} ms, least left {least_left} ms");
        // the time is used, not hoarded: more than 40% of the budget goes into the search. Early
        // stops on clear moves leave the rest (shogun used 48% on a 2-core AVX2 EPYC); spending
        // it by stretching the next moves' limits lost at equal clocks (README, time manager)
        let budget = base + 100 * inc;
        assert!(most_spent * 5 > budget * 2, "{variant}: spent only {most_spent} ms of {budget}");
        assert!(least_left > 0, "{variant}: {least_left}");
    }
}

#[test]
fn bad_input_is_answered_not_fatal() {
    let mut s = Session::start(&[]);
    s.send("uci");
    s.until("uciok", 20);
    s.send("position fen this is not a fen");
    s.send("go nodes 10");
    let out = s.until("bestmove", 10);
    assert!(out.iter().any(|l| l.starts_with("info string error: position fen")), "{out:?}");
    assert_eq!(out.last().unwrap(), "bestmove (none)");
    s.send("position startpos moves e3e4 e3e5");
    s.send("setoption name Threads value 0");
    s.send("setoption name MultiPV value x");
    s.send("isready");
    let out = s.until("readyok", 10);
    assert!(out.iter().any(|l| l.contains("move 2 'e3e5'")), "{out:?}");
    assert!(out.iter().any(|l| l.contains("Threads 0")) && out.iter().any(|l| l.contains("MultiPV x")), "{out:?}");
    s.quit();
    let (rc, _, err) = vzero(&["uci", "--variant", "nosuch"]);
    assert_eq!(rc, 1);
    assert!(err.starts_with("error: ") && err.contains("nosuch"), "{err}");
}

#[test]
fn bridge_wrapper_script_starts_the_engine() {
    // lichess-bot runs engine.dir/engine.name with engine_options as --name=value
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/vzero-uci");
    let mut child = std::process::Command::new(script)
        .args(["--sims=50", "--variant=shogun"])
        .env("VZERO", common::BIN)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"uci\nposition startpos\ngo\nisready\nquit\n").unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert!(out.contains("option name UCI_Variant type combo default shogun "), "{out}");
    assert!(out.contains("option name Simulations type spin default 50 "), "{out}");
    let bm = out.lines().find(|l| l.starts_with("bestmove")).unwrap().split_whitespace().nth(1).unwrap();
    legal(None, "shogun", &[bm.to_string()]);
}
