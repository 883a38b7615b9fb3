//! `vzero openings`, `vzero book build` and the book in `vzero match` / `vzero uci`, on a tiny run
//! directory written with `vzero_data::write_chunk`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use vzero_data::{write_chunk, ChunkMeta, GameRecord, Row, RunDir};

const BIN: &str = env!("CARGO_BIN_EXE_vzero");

fn game(moves: &[&str], result: &str, gen: u64, priors: &[f32], values: &[f32]) -> GameRecord {
    GameRecord {
        variant: "empire".into(),
        start_fen: vzero_rules::Variant::builtin("empire").unwrap().start_fen().into(),
        moves: moves.iter().map(|s| s.to_string()).collect(),
        result: result.into(),
        reason: "checkmate".into(),
        network: format!("gen-{gen:06}-step-{:09}", gen * 10),
        white: "selfplay".into(),
        black: "selfplay".into(),
        priors: priors.to_vec(),
        values: values.to_vec(),
    }
}

fn run_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vzero-openings-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = RunDir::create_or_open(&dir).unwrap();
    let meta = ChunkMeta {
        variant: "empire".into(),
        encoding_version: 1,
        planes: [1, 1, 1],
        policy_size: 4,
        network: "gen-000001-step-000000010".into(),
        worker: "t".into(),
        created_unix: 0,
        short_term_horizons: vec![],
        source: Default::default(),
    };
    let row = Row { planes: vec![0.0], policy: vec![], wdl: [1.0, 0.0, 0.0], search_value: 0.0, moves_left: 1.0, ply: 0, weight: 1.0, policy_weight: 0.0, ..Row::default() };
    let games = [
        game(&["a3a4", "a7a6"], "1-0", 1, &[0.5, 0.25], &[0.1, -0.3]),
        game(&["a3a4", "h7h6"], "0-1", 2, &[0.3, 0.6], &[0.3, 0.2]),
        game(&["h3h4"], "1/2-1/2", 2, &[0.2], &[0.0]),
        game(&["a3a4", "a7a7"], "1-0", 2, &[], &[]),
    ];
    // One HDF5 writer at a time in this process (the tests run in parallel threads).
    static HDF5: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = HDF5.lock().unwrap_or_else(|e| e.into_inner());
    write_chunk(&run.new_chunk_path("t"), &meta, &[row], &games).unwrap();
    assert_eq!(run.list_chunks().unwrap().len(), 1);
    dir
}

fn vzero(args: &[&str]) -> (String, String) {
    let out = Command::new(BIN).args(args).output().expect("run vzero");
    let (so, se) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "vzero {args:?} failed:\n{so}\n{se}");
    (so, se)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn openings_csv_md_svg_and_filters() {
    let dir = run_dir("tree");
    let svg = dir.join("tree.svg");
    let (csv, err) = vzero(&["openings", "--variant", "empire", "--from", s(&dir), "--plies", "2", "--format", "csv", "--no-progress", "--svg", s(&svg)]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4, "{csv}\n{err}");
    assert_eq!(lines[1], "1,a3a4,Pa4,a3a4,Pa4,white,2,0.6667,1,0,1,1,1,0.5000,0.0,2.0,0.4000,0.2000");
    assert_eq!(lines[2], "2,a3a4 a7a6,Pa4 Pa6,a7a6,Pa6,black,1,0.5000,1,0,0,0,1,0.0000,-inf,2.0,0.2500,-0.3000");
    assert_eq!(lines[3], "2,a3a4 h7h6,Pa4 Ph6,h7h6,Ph6,black,1,0.5000,0,0,1,1,0,1.0000,+inf,2.0,0.6000,0.2000");
    assert_eq!(lines[4], "1,h3h4,Ph4,h3h4,Ph4,white,1,0.3333,0,1,0,0,0,0.5000,0.0,1.0,0.2000,0.0000");
    // the illegal record is named by chunk file and index, and counted as skipped
    assert!(err.contains(".h5#3: ply 2 (a7a7)"), "{err}");
    assert!(err.contains("3 games counted, 0 filtered out, 1 games skipped"), "{err}");
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));

    let out = dir.join("tree.md");
    vzero(&["openings", "--variant", "empire", "--from", s(&dir), "--plies", "2", "--format", "md", "--out", s(&out), "--no-progress", "--min-games", "2"]);
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("3 games, White 1 / draws 1 / Black 1"), "{md}");
    assert!(md.contains("| 1. Pa4 | Pa4 | a3a4 | 2 | 66.7% | 1/0/1 | 1/0/1 | 50.0% | +0 | 2.0 | 0.400 | 0.200 |"), "{md}");
    assert_eq!(md.lines().filter(|l| l.starts_with("| ")).count(), 2, "{md}"); // header + one line

    let (csv, err) = vzero(&["openings", "--variant", "empire", "--from", s(&dir), "--plies", "2", "--format", "csv", "--no-progress", "--generations", "2..2", "--decisive"]);
    assert!(err.contains("1 games counted, 2 filtered out, 1 games skipped"), "{err}");
    assert_eq!(csv.lines().count(), 1 + 2);
    let (json, _) = vzero(&["openings", "--variant", "empire", "--from", s(&dir), "--format", "json", "--no-progress"]);
    assert!(json.contains("\"skipped\": 1"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn book_build_then_match_and_uci_use_it() {
    let dir = run_dir("book");
    let book = dir.join("book.json");
    let (out, err) = vzero(&["book", "build", "--variant", "empire", "--from", s(&dir), "--plies", "2", "--out", s(&book), "--no-progress"]);
    assert!(out.contains("2 positions, 4 moves, 2 plies, from 3 games"), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&book).unwrap()).unwrap();
    assert_eq!(v["format"], "vzero-book");
    let start = vzero_rules::Position::startpos(vzero_rules::Variant::builtin("empire").unwrap());
    let key = format!("{:016x}", start.key());
    let pos = v["positions"].as_array().unwrap().iter().find(|p| p["key"] == key.as_str()).expect("start position in the book");
    assert_eq!(pos["moves"][0]["uci"], "a3a4");
    assert_eq!(pos["moves"][0]["games"], 2);

    let pgn = dir.join("m.pgn");
    vzero(&["match", "random", "random", "--variant", "empire", "--games", "2", "--opening-book", s(&book), "--book-plies", "1", "--pgn", s(&pgn), "--no-progress"]);
    let text = std::fs::read_to_string(&pgn).unwrap();
    let firsts: Vec<&str> = text.lines().filter(|l| l.starts_with("1. ")).map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(firsts.len(), 2);
    assert!(firsts.iter().all(|m| *m == "a3a4" || *m == "h3h4"), "{firsts:?}");
    assert_eq!(firsts[0], firsts[1], "both games of a pair share the opening");

    // the book as EPD for Fairy-Stockfish's match tools, read back as a match book
    let epd = dir.join("books").join("empire.epd");
    std::fs::create_dir_all(epd.parent().unwrap()).unwrap();
    let (out, _) = vzero(&["book", "export", "--book", s(&book), "--format", "epd", "--out", s(&epd)]);
    assert!(out.contains("2 positions of empire"), "{out}");
    let text = std::fs::read_to_string(&epd).unwrap();
    let start_line = text.lines().find(|l| l.starts_with(&start.fen())).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(start_line, format!("{} bm a3a4 h3h4; c0 \"weights a3a4:{:.2} h3h4:{:.2}\";", start.fen(), pos["moves"][0]["weight"].as_f64().unwrap(), pos["moves"][1]["weight"].as_f64().unwrap()));
    let pgn2 = dir.join("epd.pgn");
    vzero(&["match", "random", "random", "--variant", "empire", "--games", "4", "--book", s(&epd), "--max-plies", "6", "--pgn", s(&pgn2), "--no-progress"]);
    let text = std::fs::read_to_string(&pgn2).unwrap();
    let fens: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("[FEN \"")).collect();
    let books: Vec<String> = std::fs::read_to_string(&epd).unwrap().lines().map(|l| l.split(" bm ").next().unwrap().to_string()).collect();
    let started_at_start = text.matches("[White ").count() - fens.len();
    assert!(started_at_start >= 2 && fens.iter().all(|f| books.iter().any(|b| f.starts_with(b.as_str()))), "{text}");

    let mut child = Command::new(BIN).args(["uci", "--book", s(&book)]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"uci\nposition startpos moves a3a4\ngo nodes 1\nisready\nquit\n").unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    assert!(out.contains("option name Book type string"), "{out}");
    assert!(out.contains("info string book move"), "{out}");
    let best = out.lines().find(|l| l.starts_with("bestmove")).unwrap();
    assert!(best == "bestmove a7a6" || best == "bestmove h7h6", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
