//! `vzero analyse`: annotated PGN, CSV and SVG for the games of a PGN file, malformed games
//! skipped with file:line, with a network checkpoint and without one.

mod common;

use common::vzero;

const PGN: &str = r#"[Event "blunder"]
[Variant "shogun"]
[White "alice"]
[Black "bob"]
[FEN "4k3/8/8/3r4/8/8/8/3RK3[] b - - 0 1"]
[SetUp "1"]
[Result "*"]

1... d5d2 2. d1d2 *

[Event "broken"]
[Variant "shogun"]
[Result "*"]

1. e2e4 e7e5 2. e4e5 *

[Event "opening"]
[Variant "shogun"]
[White "carol"]
[Black "dave"]
[Result "1/2-1/2"]

1. e2e4 e7e5 2. g1f3 b8c6 1/2-1/2
"#;

#[test]
fn analyse_writes_pgn_csv_svg_and_skips_bad_games() {
    let dir = std::env::temp_dir().join(format!("vzero-analyse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let games = dir.join("games.pgn");
    std::fs::write(&games, PGN).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (rc, _, err) = vzero(&["init", "--variant", "shogun", "--out", &p("net"), "--blocks", "1", "--channels", "8"]);
    assert_eq!(rc, 0, "{err}");
    let (rc, out, err) = vzero(&[
        "analyse", &p("games.pgn"), "--variant", "shogun", "--model", &p("net"), "--nodes", "64", "--out", &p("a.pgn"), "--csv", &p("a.csv"), "--svg", &p("a.svg"), "--no-progress",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains(&format!("skipped {}:15: ply 3 (e4e5)", games.display())), "{err}");
    assert!(err.contains("analysed 2 games (8 positions)"), "{err}");
    let pgn = std::fs::read_to_string(dir.join("a.pgn")).unwrap();
    let annotated = vzero_rules::pgn::parse_pgn(&pgn, "a.pgn").unwrap();
    assert_eq!(annotated.len(), 2);
    assert_eq!(annotated[0].tag("Event"), Some("blunder"));
    assert!(annotated[0].tag("Annotator").unwrap().contains("nodes 64"));
    assert_eq!(annotated[1].moves, ["e2e4", "e7e5", "g1f3", "b8c6"]);
    assert_eq!(pgn.matches("[%eval ").count(), 6, "{pgn}");
    let csv = std::fs::read_to_string(dir.join("a.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("1,1,d5d2,black,"), "{csv}");
    let svg = std::fs::read_to_string(dir.join("a.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 2);
    // without a network (material value): hanging the rook is a blunder, with the best line
    let (rc, out, err) = vzero(&["analyse", &p("games.pgn"), "--variant", "shogun", "--nodes", "400", "--no-progress"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("1... d5d2 $4 { [%eval ") && out.contains("Blunder. Best "), "{out}");
    assert!(err.contains("game 1 (alice – bob, *, 2 plies): White 0/0/0"), "{err}");
    // bad input: a clear error, no panic
    let (rc, _, err) = vzero(&["analyse", &p("missing.pgn"), "--variant", "shogun"]);
    assert_eq!(rc, 1);
    assert!(err.starts_with("error: ") && err.contains("missing.pgn"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
