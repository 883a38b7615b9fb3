//! Opening tree, book and filters on a small deterministic set of Empire games, checked against
//! hand-computed expectations.

use std::path::PathBuf;

use rand::SeedableRng;
use vzero_openings::{scan, Book, BookBuilder, Filter, Input, OpeningTree, PgnReader, Summary, TreeRow};
use vzero_rules::{Position, Variant};

// G1 and G2 reach the same position after 4 plies by two move orders, then both play b3b4.
const PGN: &str = r#"[Event "t"]
[White "A"]
[Black "B"]
[Result "1-0"]
[Variant "empire"]
[Network "gen-000001-step-000000010"]

1. a3a4 a7a6 2. h3h4 h7h6 3. b3b4 1-0

[Event "t"]
[White "B"]
[Black "A"]
[Result "0-1"]
[Variant "empire"]
[Network "gen-000002-step-000000020"]

1. h3h4 {a comment} h7h6 2. a3a4 (2. b3b4) a7a6 3. b3b4 0-1

[Event "t"]
[White "A"]
[Black "C"]
[Result "1/2-1/2"]
[Variant "empire"]
[Network "gen-000003-step-000000030"]

1. a3a4 a7a6 1/2-1/2

[Event "t"]
[White "C"]
[Black "A"]
[Result "1-0"]
[Variant "empire"]
[Network "gen-000003-step-000000031"]

1. a3a4 h7h6 1-0

[Event "illegal"]
[White "A"]
[Black "B"]
[Result "1-0"]
[Variant "empire"]

1. a3a4 a7a6 2. h3h4
h7h7 1-0

[Event "unfinished"]
[White "A"]
[Black "B"]
[Result "*"]

1. a3a4 *

[Event "other variant"]
[White "A"]
[Black "B"]
[Variant "nosuch"]
[Result "1-0"]

1. a3a4 1-0

[Event "bad fen"]
[White "A"]
[Black "B"]
[Variant "empire"]
[FEN "rnbqkbnr/zzz w - - 0 1"]
[Result "1-0"]

1. a3a4 1-0
"#;

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("needle in text") + 1
}

fn write_pgn(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

fn empire() -> Variant {
    Variant::builtin("empire").unwrap()
}

fn tree_of(filter: &Filter, plies: usize) -> (OpeningTree, Summary, PathBuf, tempfile::TempDir) {
    let (dir, p) = write_pgn("games.pgn", PGN);
    let mut tree = OpeningTree::new(plies);
    let sum = scan(&[Input::Pgn(p.clone())], empire(), filter, false, |g| tree.add(g)).unwrap();
    (tree, sum, p, dir)
}

fn row<'a>(rows: &'a [TreeRow], line: &str) -> &'a TreeRow {
    rows.iter().find(|r| r.line_uci.join(" ") == line).unwrap_or_else(|| panic!("no row {line}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn counts_scores_and_order() {
    let (tree, sum, _, _d) = tree_of(&Filter::default(), 4);
    assert_eq!(sum.counted, 4);
    assert_eq!(sum.read, 8);
    let roots = tree.roots();
    assert_eq!(roots.len(), 1);
    assert_eq!((roots[0].1, roots[0].2, roots[0].3, roots[0].4), (4, 2, 1, 1));
    let rows = tree.rows(1);
    // depth-first, siblings by frequency: a3a4 (3 games) before h3h4 (1 game)
    let order: Vec<String> = rows.iter().map(|r| r.line_uci.join(" ")).collect();
    assert_eq!(
        order,
        [
            "a3a4",
            "a3a4 a7a6",
            "a3a4 a7a6 h3h4",
            "a3a4 a7a6 h3h4 h7h6",
            "a3a4 h7h6",
            "h3h4",
            "h3h4 h7h6",
            "h3h4 h7h6 a3a4",
            "h3h4 h7h6 a3a4 a7a6",
        ]
    );
    let a4 = row(&rows, "a3a4");
    assert_eq!((a4.games, a4.white_wins, a4.draws, a4.black_wins), (3, 2, 1, 0));
    assert_eq!((a4.mover.as_str(), a4.mover_wins, a4.mover_losses), ("white", 2, 0));
    assert!(close(a4.frequency, 0.75));
    assert!(close(a4.score, 2.5 / 3.0));
    assert!(close(a4.elo.unwrap(), -400.0 * (3.0f64 / 2.5 - 1.0).log10()));
    assert!(close(a4.avg_length, 3.0)); // 5 + 2 + 2 plies
    assert_eq!(a4.san, "Pa4");
    assert_eq!(a4.prior, None); // PGN games have no priors
    let a6 = row(&rows, "a3a4 a7a6");
    assert_eq!((a6.games, a6.white_wins, a6.draws, a6.black_wins), (2, 1, 1, 0));
    assert_eq!((a6.mover.as_str(), a6.mover_wins, a6.mover_losses), ("black", 0, 1));
    assert!(close(a6.frequency, 2.0 / 3.0));
    assert!(close(a6.score, 0.25));
    assert!(close(a6.elo.unwrap(), -400.0 * 3f64.log10()));
    assert!(close(a6.avg_length, 3.5));
    let h4 = row(&rows, "h3h4");
    assert!(close(h4.frequency, 0.25));
    assert_eq!((h4.white_wins, h4.black_wins, h4.mover_losses), (0, 1, 1));
    assert_eq!(h4.elo, None); // 0%
    // min games
    let rows2 = tree.rows(2);
    let order2: Vec<String> = rows2.iter().map(|r| r.line_uci.join(" ")).collect();
    assert_eq!(order2, ["a3a4", "a3a4 a7a6"]);
    // exports
    let csv = vzero_openings::to_csv(&rows);
    assert_eq!(csv.lines().count(), 10);
    assert!(csv.lines().nth(1).unwrap().starts_with("1,a3a4,Pa4,a3a4,Pa4,white,3,0.7500,2,1,0,2,0,0.8333,"), "{csv}");
    let md = vzero_openings::to_markdown(&rows, &tree.roots(), sum.skipped.len(), "empire");
    assert!(md.contains("| 1. Pa4 | Pa4 | a3a4 | 3 | 75.0% | 2/1/0 | 2/1/0 | 83.3% | +280 |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&vzero_openings::to_json(&rows, &tree.roots(), 4, "empire")).unwrap();
    assert_eq!(json["games"], 4);
    assert_eq!(json["lines"][1]["uci"], "a7a6");
    let svg = vzero_openings::tree_svg(&rows, "t", 5);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("games</title>").count(), 2 + 2 + 1 + 1 + 1); // W/D/L parts with n > 0
}

#[test]
fn malformed_games_are_skipped_with_file_and_line() {
    let (_, sum, p, _d) = tree_of(&Filter::default(), 4);
    let f = p.display().to_string();
    assert_eq!(sum.skipped.len(), 4, "{:?}", sum.skipped);
    let s = &sum.skipped;
    assert_eq!(s[0].origin, format!("{f}:{}", line_of(PGN, "h7h7")));
    assert!(s[0].reason.contains("ply 4 (h7h7)"), "{}", s[0].reason);
    assert_eq!(s[1].origin, format!("{f}:{}", line_of(PGN, "[Event \"unfinished\"]")));
    assert!(s[1].reason.contains("result '*'"));
    assert_eq!(s[2].origin, format!("{f}:{}", line_of(PGN, "[Event \"other variant\"]")));
    assert!(s[2].reason.contains("variant 'nosuch'"));
    assert_eq!(s[3].origin, format!("{f}:{}", line_of(PGN, "[Event \"bad fen\"]")));
    assert!(s[3].reason.contains("bad FEN"));
    assert!(sum.line().contains("4 games skipped"), "{}", sum.line());
}

#[test]
fn pgn_reader_recovers_after_a_missing_result() {
    let text = "[White \"A\"]\n\n1. a3a4 a7a6\n\n[White \"B\"]\n\n1. h3h4 1-0\n";
    let mut r = PgnReader::new(std::io::Cursor::new(text), "x.pgn");
    let first = r.next_game().unwrap().unwrap().unwrap_err();
    assert_eq!(first.origin, "x.pgn:1");
    assert!(first.reason.contains("missing result token"));
    let second = r.next_game().unwrap().unwrap().unwrap();
    assert_eq!((second.white.as_str(), second.moves.clone(), second.origin.as_str()), ("B", vec!["h3h4".to_string()], "x.pgn:5"));
    assert!(r.next_game().unwrap().is_none());
}

#[test]
fn lines_are_numbered_by_turn_from_any_start_and_through_double_moves() {
    // empire from its start position with Black to move at turn 12: the line starts `12...`
    let fen = empire().start_fen().replacen(" w ", " b ", 1);
    let fen = format!("{} 0 12", fen.rsplitn(3, ' ').nth(2).unwrap());
    let black_first = format!(
        "[Variant \"empire\"]\n[FEN \"{fen}\"]\n[Result \"0-1\"]\n\n12... a7a6 13. a3a4 h7h6 0-1\n\n"
    );
    // spqr, two bare Dictator kings: White's turn 7 is a double move, Black's a move and a pass
    let double = "[Variant \"spqr\"]\n[FEN \"5k6/12/12/12/12/12/12/12/12/12/12/6K5 w - - 0 7 Kk\"]\n[Result \"1/2-1/2\"]\n\n7. g1g2 g2g3 f12f11 0000 8. g3g4 1/2-1/2\n\n";
    for (variant, pgn, want_turns, want_numbers) in [
        ("empire", black_first, vec![12, 13, 13], vec!["12...", "13."]),
        ("spqr", double.to_string(), vec![7, 7, 7, 7, 8], vec!["7.", "8."]),
    ] {
        let (_d, p) = write_pgn("g.pgn", &pgn);
        let mut tree = OpeningTree::new(8);
        let sum = scan(&[Input::Pgn(p)], Variant::builtin(variant).unwrap(), &Filter::default(), false, |g| tree.add(g)).unwrap();
        assert_eq!(sum.counted, 1, "{variant}: {:?}", sum.skipped);
        let rows = tree.rows(1);
        let last = rows.last().unwrap();
        assert_eq!(rows.iter().map(|r| r.turn).collect::<Vec<_>>(), want_turns, "{variant}");
        let numbers: Vec<&str> = last.line.split_whitespace().filter(|t| t.ends_with('.')).collect();
        assert_eq!(numbers, want_numbers, "{variant}: {}", last.line);
        assert_eq!(last.line.split_whitespace().count(), want_turns.len() + want_numbers.len(), "{variant}: {}", last.line);
        assert!(last.line.starts_with(want_numbers[0]), "{variant}: {}", last.line);
        let md = vzero_openings::to_markdown(&rows, &tree.roots(), 0, variant);
        assert!(md.contains(&last.line), "{md}");
        // the SVG labels a later move with its own turn: Black's as `n… move`
        let svg = vzero_openings::tree_svg(&rows, "t", 8);
        let second = &rows[1];
        let dots = if second.mover == "black" { "…" } else { "." };
        assert!(svg.contains(&format!("{}{dots} {}", second.turn, second.san)), "{svg}");
    }
}

#[test]
fn filters() {
    let gens = |s: &str| Filter { generations: Some(Filter::parse_generations(s).unwrap()), ..Default::default() };
    let count = |f: &Filter| {
        let (t, s, _, _d) = tree_of(f, 2);
        (t.games(), s.filtered)
    };
    assert_eq!(count(&Filter { decisive: true, ..Default::default() }).0, 3);
    assert_eq!(count(&Filter { players: Some(Filter::parse_players("B,A").unwrap()), ..Default::default() }).0, 2);
    assert_eq!(count(&gens("2..3")).0, 3);
    assert_eq!(count(&gens("..1")).0, 1);
    assert_eq!(count(&gens("3")).0, 2);
    assert_eq!(count(&gens("gen-000002..")).0, 3);
    assert!(Filter::parse_generations("x..3").is_err());
    assert!(Filter::parse_players("A").is_err());
}

#[test]
fn book_merges_transpositions_and_picks_by_weight() {
    let (dir, p) = write_pgn("games.pgn", PGN);
    let v = empire();
    let mut b = BookBuilder::new(v, 5);
    scan(&[Input::Pgn(p)], v, &Filter::default(), false, |g| b.add(g)).unwrap();
    let book = b.finish(1);
    // the position after 4 plies, reached by both move orders
    let mut x = Position::startpos(v);
    for m in ["a3a4", "a7a6", "h3h4", "h7h6"] {
        x.play_uci(m).unwrap();
    }
    let mut y = Position::startpos(v);
    for m in ["h3h4", "h7h6", "a3a4", "a7a6"] {
        y.play_uci(m).unwrap();
    }
    assert_eq!(x.key(), y.key());
    let moves = book.moves(&y);
    assert_eq!(moves.len(), 1);
    assert_eq!((moves[0].uci.as_str(), moves[0].games), ("b3b4", 2));
    assert!(close(moves[0].score, 0.5)); // G1 won by White, G2 by Black
    assert!(close(moves[0].weight, 2.0 * 0.6 / 1.1));
    // start position: a3a4 3 games (score 5/6), h3h4 1 game (score 0)
    let start = Position::startpos(v);
    let sm = book.moves(&start);
    assert_eq!(sm.iter().map(|m| (m.uci.as_str(), m.games)).collect::<Vec<_>>(), [("a3a4", 3), ("h3h4", 1)]);
    let (wa, wh) = (3.0 * (5.0 / 6.0 + 0.1) / 1.1, 0.1 / 1.1);
    assert!(close(sm[0].weight, wa) && close(sm[1].weight, wh));

    // save / load round trip (atomic: no temporary file left)
    let path = dir.path().join("book.json");
    book.save(&path).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    let mut book = Book::load(&path).unwrap();
    assert_eq!(book.variant(), "empire");
    // start, a4, a4 a6, a4 a6 h4, h4, h4 h6, h4 h6 a4 and the merged position after 4 plies
    assert_eq!(book.positions().len(), 8);
    // weighted choice
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let n = 20_000;
    let a4 = start.parse_uci("a3a4").unwrap();
    let hits = (0..n).filter(|_| book.pick(&start, 0, &mut rng) == Some(a4)).count();
    let expect = wa / (wa + wh);
    assert!(((hits as f64 / n as f64) - expect).abs() < 0.01, "{hits} of {n}, expected {expect}");
    assert_eq!(book.pick(&y, 4, &mut rng), Some(y.parse_uci("b3b4").unwrap()));
    // ply limit
    book.set_max_plies(4);
    assert_eq!(book.pick(&y, 4, &mut rng), None);
    assert!(book.pick(&start, 3, &mut rng).is_some());
    // unknown position
    let mut z = start;
    z.play_uci("g3g4").unwrap();
    assert_eq!(book.pick(&z, 1, &mut rng), None);
}

#[test]
fn san_is_unique_among_legal_moves_in_every_variant() {
    use rand::seq::SliceRandom;
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let mut drops = 0;
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name).unwrap();
        for _ in 0..20 {
            let mut pos = Position::startpos(v);
            for _ in 0..60 {
                let moves = pos.legal_moves();
                let Some(&m) = moves.choose(&mut rng) else { break };
                let mut sans: Vec<String> = moves.iter().map(|&x| vzero_openings::san(&pos, x)).collect();
                drops += sans.iter().filter(|s| s.contains('@')).count();
                let n = sans.len();
                sans.sort();
                sans.dedup();
                assert_eq!(sans.len(), n, "{name}: ambiguous SAN in {}", pos.fen());
                pos.play(m);
            }
        }
    }
    assert!(drops > 0, "some variant has drops");
}
