//! The rules commands as scripts use them: stable outputs, one-line errors, non-zero exits.

use std::process::Command;

fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vzero")).args(args).output().expect("run vzero");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn perft_ends_with_the_total() {
    let (code, out, _) = vzero(&["perft", "--variant", "empire", "--depth", "3"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().last(), Some("20895"));
    let (code, out, _) = vzero(&["perft", "--variant", "shogun", "--depth", "2", "--divide"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last(), Some(&"400"));
    let sum: u64 = lines.iter().filter_map(|l| l.split_once(": ")).map(|(_, n)| n.parse::<u64>().unwrap()).sum();
    assert_eq!(sum, 400);
}

#[test]
fn moves_lists_legal_moves() {
    let (code, out, _) = vzero(&["moves", "--variant", "shogun", "--fen", "4k3/P7/8/3N4/8/8/8/+N3K3[Pp] w - - 0 1"]);
    assert_eq!(code, 0);
    let moves: Vec<&str> = out.lines().collect();
    assert!(moves.contains(&"a7a8+") && !moves.contains(&"a7a8"), "{out}");
    assert!(moves.contains(&"P@e4"));
    assert!(!moves.iter().any(|m| m.starts_with("d5") && m.ends_with('+')), "promotion limit: {out}");
}

#[test]
fn result_reports_outcome_and_reason() {
    let (code, out, _) = vzero(&["result", "--variant", "empire", "--moves", "b1a2 b8a6 a2b1 a6b8 b1a2 b8a6 a2b1 a6b8"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "loss repetition");
    let (_, out, _) = vzero(&["result", "--variant", "empire", "--fen", "8/1K6/8/8/8/6k1/8/8 w - - 0 1", "--moves", "b7b8"]);
    assert_eq!(out.trim(), "loss campmate");
    let (_, out, _) = vzero(&["result", "--variant", "shogun"]);
    assert_eq!(out.trim(), "ongoing none");
}

#[test]
fn bad_input_gives_one_line_and_nonzero_exit() {
    let cases: &[&[&str]] = &[
        &["perft", "--variant", "nope", "--depth", "1"],
        &["perft", "--variant", "empire", "--fen", "8/8/8 w - - 0 1", "--depth", "1"],
        &["moves", "--variant", "empire", "--moves", "e2e4"],
        &["moves", "--variant", "empire", "--moves", "zz"],
        &["result", "--variant", "shogun", "--fen", "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[Q] w KQkq - 0 1"],
        &["perft", "--variant", "/nonexistent/variant.toml", "--depth", "1"],
    ];
    for args in cases {
        let (code, out, err) = vzero(args);
        assert_ne!(code, 0, "{args:?}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn variants_are_listed() {
    let (code, out, _) = vzero(&["variants"]);
    assert_eq!(code, 0);
    for name in ["empire", "shogun", "spqr", "empire-faceoff", "shogun-auto"] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{out}");
    }
}

#[test]
fn replay_prints_one_json_line_per_position() {
    let (code, out, err) = vzero(&["replay", "--variant", "empire", "--moves", "b1a2 b8a6 a2b1 a6b8 b1a2 b8a6 a2b1 a6b8"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 9);
    assert_eq!(lines[0]["fen"], "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1");
    assert_eq!(lines[0]["moves"].as_array().unwrap().len(), 30);
    assert_eq!(lines[0]["move"], "b1a2");
    assert_eq!(lines[0]["san"], "Ea2");
    assert_eq!(lines[1]["san"], "Na6");
    assert_eq!((lines[8]["result"].as_str(), lines[8]["reason"].as_str()), (Some("loss"), Some("repetition")));
    assert!(lines[8]["move"].is_null() && lines[8]["san"].is_null());
    let sorted = |v: &serde_json::Value| {
        let m: Vec<&str> = v["moves"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        m.windows(2).all(|w| w[0] < w[1])
    };
    assert!(lines.iter().all(sorted));
    // A check, and an illegal move: the lines up to it, then one error line.
    let (code, out, err) = vzero(&["replay", "--variant", "shogun", "--moves", "e2e4 f7f6 d1h5 e2e4"]);
    assert_ne!(code, 0);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2]["san"], "Qh5+");
    assert_eq!(lines[3]["check"], true);
    assert!(err.starts_with("error: ") && err.trim().lines().count() == 1, "{err}");
}

#[test]
fn replay_and_result_read_a_pgn_game() {
    let dir = std::env::temp_dir().join(format!("vzero-cli-pgn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // a game from a FEN, as vzero serve and vzero match write it (UCI movetext; the numbers
    // do not matter to the reader)
    let pgn = dir.join("g.pgn");
    std::fs::write(&pgn, "[Event \"t\"]\n[Variant \"shogun\"]\n[FEN \"7k/8/P7/8/8/8/8/K5R1[R] w - - 0 1\"]\n[SetUp \"1\"]\n[Result \"*\"]\n\n1. a6a7 h8h7 2. g1g2 *\n").unwrap();
    let (code, out, err) = vzero(&["replay", "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["fen"], "7k/8/P7/8/8/8/8/K5R1[R] w - - 0 1");
    assert_eq!(lines[0]["move"], "a6a7");
    let (code, res, _) = vzero(&["result", "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(res.trim(), "ongoing none");
    // --pgn with --moves is refused; a file with no game, or a bad move, is an error naming it
    let (code, _, _) = vzero(&["replay", "--pgn", pgn.to_str().unwrap(), "--moves", "a6a7"]);
    assert_ne!(code, 0);
    std::fs::write(&pgn, "").unwrap();
    let (code, _, err) = vzero(&["replay", "--pgn", pgn.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("no game"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
