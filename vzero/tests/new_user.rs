//! What a new user trips on (issue 35), each as a test that failed before its fix, and the
//! principles over every read-only command: no trained network overwritten without `--force`,
//! nothing written by a command that only reads, lost data counted and named, one `error:` line.

mod common;

use std::path::{Path, PathBuf};

use common::{copy_dir, latest_checkpoint, snapshot, tiny_run as pristine_run, vzero, Session};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A private copy of the pristine run.
fn copy_run() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dst = t.path().join("run");
    copy_dir(pristine_run(), &dst);
    (t, dst)
}

fn chunks(run: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(run.join("data")).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "h5")).collect();
    v.sort();
    v
}

#[test]
fn init_refuses_to_overwrite_a_checkpoint_without_force() {
    let (_t, run) = copy_run();
    let ckpt = latest_checkpoint(&run);
    let stem = ckpt.with_extension("");
    let before = std::fs::read(&ckpt).unwrap();
    let (code, out, err) = vzero(&["init", "--variant", "empire", "--out", s(&stem)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.starts_with("error: ") && err.contains(s(&ckpt)) && err.contains("--force"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(&ckpt).unwrap(), before, "the trained network is intact");
    let (code, _, err) = vzero(&["init", "--variant", "empire", "--out", s(&stem), "--force"]);
    assert_eq!(code, 0, "{err}");
    assert_ne!(std::fs::read(&ckpt).unwrap(), before, "--force replaces it");
}

#[test]
fn read_only_commands_create_nothing() {
    let empty = tempfile::tempdir().unwrap();
    for cmd in ["status", "check"] {
        let (code, out, err) = vzero(&[cmd, "--run", s(empty.path())]);
        assert_eq!(code, 0, "{cmd}: {out}{err}");
        assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0, "{cmd} wrote into an empty directory");
    }
    let (_t, run) = copy_run();
    let before = snapshot(&run);
    let ckpt = latest_checkpoint(&run);
    let fen_moves = ["--variant", "empire", "--moves", "e3e4"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["status", "--run", s(&run)],
        vec!["check", "--run", s(&run)],
        vec!["openings", "--from", s(&run), "--plies", "4", "--no-progress"],
        vec!["openings", "--from", s(&run), "--format", "json", "--no-progress"],
        vec!["eval", "--model", s(&ckpt), "--variant", "empire"],
        vec!["eval", "--model", s(&ckpt), "--variant", "empire", "--json"],
        [&["moves"][..], &fen_moves].concat(),
        [&["replay"][..], &fen_moves].concat(),
        [&["result"][..], &fen_moves].concat(),
        vec!["perft", "--variant", "empire", "--depth", "2"],
    ];
    for c in &commands {
        let (code, out, err) = vzero(c);
        assert_eq!(code, 0, "{c:?}: {out}{err}");
        assert_eq!(snapshot(&run), before, "{c:?} changed the run");
    }
}

#[test]
fn lost_data_is_counted_and_named() {
    let (_t, run) = copy_run();
    let (code, clean, _) = vzero(&["status", "--run", s(&run)]);
    assert_eq!(code, 0);
    assert!(!clean.contains("warning"), "{clean}");
    let damaged = chunks(&run)[1].clone();
    let bytes = std::fs::read(&damaged).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 3]).unwrap();
    let name = damaged.file_name().unwrap().to_str().unwrap();
    // status counts chunks from their names (a day's run has tens of thousands) and opens
    // none of these: it reports the same counts; `check` and every reader name the damage
    let (code, out, err) = vzero(&["status", "--run", s(&run)]);
    assert_eq!(code, 0, "{err}");
    let data_line = |o: &str| o.lines().find(|l| l.starts_with("data ")).unwrap_or_default().to_string();
    assert_eq!(data_line(&out), data_line(&clean), "{out}");
    let (code, out, _) = vzero(&["check", "--run", s(&run)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.lines().any(|l| l.starts_with("problem:") && l.contains(name)), "{out}");
    let (code, _, err) = vzero(&["openings", "--from", s(&run), "--no-progress"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(name) && err.contains("1 unreadable chunk: its games are lost") && err.contains("0 games skipped"), "{err}");
    // a config that does not parse: check flags it in one line, status still reports
    std::fs::write(run.join("config.toml"), "variant = [[ garbage").unwrap();
    let (code, out, err) = vzero(&["check", "--run", s(&run)]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("problem:") && l.contains("config.toml") && l.contains("line 1")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("problem:") && l.contains(name)), "{out}");
    let (code, out, err) = vzero(&["status", "--run", s(&run)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("variant      empire") && out.lines().filter(|l| l.contains("config.toml")).count() == 1, "{out}");
}

#[test]
fn openings_takes_the_variant_from_the_run_and_refuses_another() {
    let run = pristine_run();
    let (code, out, err) = vzero(&["openings", "--from", s(run), "--plies", "2", "--no-progress"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(empire)"), "{out}");
    let (code, out, err) = vzero(&["openings", "--variant", "shogun", "--from", s(run), "--no-progress"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(err.lines().count(), 1, "one error, not a skip per game: {err}");
    assert!(err.starts_with("error: ") && err.contains("is a run of empire, not of shogun"), "{err}");
}

#[test]
fn book_export_and_build_create_the_parent_directory() {
    let run = pristine_run();
    let t = tempfile::tempdir().unwrap();
    let book = t.path().join("new/books/b.json");
    let (code, _, err) = vzero(&["book", "build", "--from", s(run), "--out", s(&book), "--no-progress"]);
    assert_eq!(code, 0, "{err}");
    let epd = t.path().join("other/dir/empire.epd");
    let (code, out, err) = vzero(&["book", "export", "--book", s(&book), "--format", "epd", "--out", s(&epd)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(std::fs::read_to_string(&epd).unwrap().lines().count() > 0);
}

#[test]
fn eval_labels_the_network_and_the_search_readings() {
    let ckpt = latest_checkpoint(pristine_run());
    let (code, out, err) = vzero(&["eval", "--model", s(&ckpt), "--variant", "empire"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("wdl network ")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("wdl search ") && l.contains("knowledge blend")), "{out}");
    assert!(out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["move", "network", "search"]), "{out}");
}

#[test]
fn a_move_after_the_end_is_named_as_such() {
    let (_, out, _) = vzero(&["replay", "--variant", "empire", "--moves", "e3e4"]);
    assert_eq!(out.lines().count(), 2);
    // White (king a1) is mated by the black queen on a2, guarded by the king on a3
    let mate = "8/8/8/8/8/k7/q7/K7 w - - 0 1";
    let (code, out, err) = vzero(&["result", "--variant", "empire", "--fen", mate]);
    assert_eq!((code, out.trim()), (0, "loss checkmate"), "{err}");
    let (code, out, err) = vzero(&["replay", "--variant", "empire", "--fen", mate, "--moves", "a1b1"]);
    assert_eq!(code, 1);
    assert_eq!(out.lines().count(), 1, "the finished position only: {out}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(line["move"].is_null(), "no move shown that was not played: {line}");
    assert!(err.starts_with("error: the game is over (") && err.contains("'a1b1' cannot be played"), "{err}");
    let (code, _, err) = vzero(&["moves", "--variant", "empire", "--fen", mate, "--moves", "a1b1"]);
    assert_eq!(code, 1);
    assert!(err.contains("the game is over"), "{err}");
}

#[test]
fn long_inputs_are_echoed_by_a_bounded_prefix() {
    let fen = "x".repeat(10_000);
    let (code, _, err) = vzero(&["moves", "--variant", "empire", "--fen", &fen]);
    assert_eq!(code, 1);
    assert!(err.len() < 400 && err.contains("(10000 characters)"), "{} bytes: {}", err.len(), &err[..err.len().min(300)]);
    let mut e = Session::start(&[]);
    e.send(&format!("position fen {}", "8/".repeat(30_000)));
    e.send(&format!("{} is not a command", "z".repeat(100_000)));
    e.send("isready");
    let lines = e.until("readyok", 20);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines.iter().all(|l| l.len() < 400), "{:?}", lines.iter().map(|l| l.len()).collect::<Vec<_>>());
    e.send("quit");
}

#[test]
fn argument_errors_start_with_one_error_line_and_exit_2() {
    for args in [&["perft", "--depth", "-1"][..], &["perft", "--depth", "abc"], &["openings", "--from", ".", "--format", "html"], &["init", "--nosuch"]] {
        let (code, _, err) = vzero(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
    // errors in the input (not the command line) exit 1, in one line
    let (code, _, err) = vzero(&["perft", "--variant", "nosuch", "--depth", "1"]);
    assert_eq!((code, err.lines().count()), (1, 1), "{err}");
}

#[test]
fn a_variant_file_missing_a_field_says_which_in_one_readable_line() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("v.toml");
    std::fs::write(&f, "# my variant\nname = \"v\"\nranks = 8\n").unwrap();
    let (code, _, err) = vzero(&["perft", "--variant", s(&f), "--depth", "1"]);
    assert_eq!(code, 1);
    assert_eq!(err.trim(), format!("error: variant definition {}: missing field `files`", f.display()));
}

#[test]
fn uci_refuses_an_unusable_model_at_start_and_at_setoption() {
    let (code, _, err) = vzero(&["uci", "--model", "/nonexistent/net"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error: --model /nonexistent/net") && err.contains("No such file"), "{err}");
    let (_t, run) = copy_run();
    let ckpt = latest_checkpoint(&run);
    let weights = ckpt.with_extension("safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let mut e = Session::start(&[]);
    e.send(&format!("setoption name ModelPath value {}", ckpt.display()));
    e.send("isready");
    let lines = e.until("readyok", 20);
    assert!(lines.iter().any(|l| l.starts_with("info string error: ModelPath") && l.contains("keeping no network")), "{lines:?}");
    e.send("quit");
}

#[test]
fn uci_answers_nonsense_limits_with_an_error_and_a_real_search() {
    let mut e = Session::start(&["--sims", "64"]);
    for go in ["go nodes -5", "go nodes abc", "go depth -1", "go movetime -100"] {
        e.send(go);
        let lines = e.until("bestmove", 30);
        let word = go.split_whitespace().nth(1).unwrap();
        assert!(lines[0].starts_with(&format!("info string error: go {word} ")) && lines[0].ends_with("ignored"), "{go}: {lines:?}");
        let nodes: u64 = lines.iter().rev().find_map(|l| l.split(" nodes ").nth(1)).and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        assert!(nodes >= 64, "{go}: the default search ran ({nodes} nodes): {lines:?}");
    }
    // depth 1 bounds the search, after every root move has been looked at
    e.send("ucinewgame");
    e.send("go movetime 5000 depth 1");
    let lines = e.until("bestmove", 30);
    let nodes: u64 = lines.iter().rev().find_map(|l| l.split(" nodes ").nth(1)).and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap();
    let (_, legal, _) = vzero(&["moves", "--variant", "empire"]);
    assert!(nodes >= legal.lines().count() as u64 && nodes < 5000, "{nodes} nodes: {lines:?}");
    e.send("quit");
}

#[test]
fn uci_skill_level_caps_the_search() {
    let mut e = Session::start(&["--sims", "2000"]);
    e.send("uci");
    let lines = e.until("uciok", 10);
    assert!(lines.iter().any(|l| l == "option name Skill Level type spin default 20 min 0 max 20"), "{lines:?}");
    let nodes_of = |lines: &[String]| -> u64 { lines.iter().rev().find_map(|l| l.split(" nodes ").nth(1)).and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap() };
    for (level, cap) in [(0u32, 4u64), (6, 32), (12, 256)] {
        e.send(&format!("setoption name Skill Level value {level}"));
        e.send("ucinewgame");
        e.send("go nodes 2000");
        let lines = e.until("bestmove", 30);
        let n = nodes_of(&lines);
        assert!(n <= cap + 4 && n >= cap.min(4), "level {level}: {n} nodes, cap {cap}: {lines:?}");
    }
    e.send("setoption name Skill Level value 20");
    e.send("ucinewgame");
    e.send("go nodes 2000");
    assert!(nodes_of(&e.until("bestmove", 60)) >= 2000);
    e.send("setoption name Skill Level value 21");
    e.send("isready");
    let lines = e.until("readyok", 10);
    assert!(lines.iter().any(|l| l.starts_with("info string error: Skill Level 21")), "{lines:?}");
    e.send("quit");
}
