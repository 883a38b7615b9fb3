//! `vzero import`, `vzero label` and the hand-over to training, as a user runs them: an
//! external UCI teacher (`vzero uci`, a real process), a labelling job killed and resumed,
//! and import → learn → train on one run directory.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{vzero, BIN};
use vzero_data::{Chunk, RunDir, Source};


fn fresh(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vzero-teacher-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Label chunks of a run by batch number; every chunk must open (none half-written) and no
/// batch may appear twice.
fn label_chunks(run: &Path) -> BTreeMap<usize, Chunk> {
    let run = RunDir::create_or_open(run).unwrap();
    let mut out = BTreeMap::new();
    for p in run.list_chunks().unwrap() {
        let c = Chunk::open(&p).unwrap_or_else(|e| panic!("half-written chunk {}: {e}", p.display()));
        assert_eq!(c.meta.source, Source::Label);
        let w = &c.meta.worker;
        let b: usize = w[w.rfind("_b").unwrap() + 2..].parse().unwrap();
        assert!(out.insert(b, c).is_none(), "batch {b} written twice");
    }
    out
}

#[test]
fn an_external_uci_teacher_labels_legal_moves_with_values_that_follow_its_scores() {
    let dir = fresh("uci");
    let up = "rnb1kbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1";
    let down = "rnb1kbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET b kq - 0 1";
    let pgn = dir.join("lopsided.pgn");
    std::fs::write(
        &pgn,
        format!("[Variant \"empire\"]\n[FEN \"{up}\"]\n[SetUp \"1\"]\n[Result \"1-0\"]\n\n1. a3a4 1-0\n\n[Variant \"empire\"]\n[FEN \"{down}\"]\n[SetUp \"1\"]\n[Result \"1-0\"]\n\n1... a7a6 1-0\n"),
    )
    .unwrap();
    let run = dir.join("run");
    let teacher = format!("uci:{BIN} uci:nodes=200");
    let (code, out, err) = vzero(&["label", "--variant", "empire", "--teacher", &teacher, "--from", pgn.to_str().unwrap(), "--run", run.to_str().unwrap(), "--concurrency", "2", "--rows-per-chunk", "1", "--no-progress"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("labelled 2 positions") && out.contains("positions/s"), "{out}");
    let v = vzero_rules::Variant::load("empire").unwrap();
    let mv = vzero_encoding::MoveEncoder::new(v);
    let inp = vzero_encoding::InputEncoder::new(v);
    let chunks = label_chunks(&run);
    assert_eq!(chunks.len(), 2);
    let mut seen = Vec::new();
    for c in chunks.values() {
        let rows = c.read_all().unwrap();
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        // which of the two positions this row is: by its planes
        let fen = [up, down].into_iter().find(|f| inp.encode_game(&vzero_rules::Game::from_fen(v, f).unwrap()) == row.planes).expect("a labelled position");
        let pos = vzero_rules::Position::from_fen(v, fen).unwrap();
        let expected = if fen == up { 1.0 } else { -1.0 };
        let m = mv.decode(&pos, row.policy[0].0 as usize).expect("a legal move of the labelled position");
        assert!(pos.legal_moves().contains(&m));
        assert_eq!(row.moves_left, 1.0);
        // a queen up is a positive score for the side to move, a queen down a negative one
        assert_eq!((row.wdl[0] - row.wdl[2]).signum(), expected, "value {:?} of {fen}", row.wdl);
        seen.push(fen);
    }
    seen.sort();
    assert_eq!(seen, {
        let mut both = vec![up, down];
        both.sort();
        both
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_label_job_resumes_without_duplicates_or_partial_chunks() {
    let dir = fresh("kill");
    let run = dir.join("run");
    let args = ["label", "--variant", "empire", "--teacher", "alphabeta:3", "--positions", "120", "--random-plies", "20", "--rows-per-chunk", "4", "--concurrency", "1", "--seed", "5", "--no-progress", "--run", run.to_str().unwrap()];
    let mut child = Command::new(BIN).args(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t = Instant::now();
    let data = run.join("data");
    loop {
        let n = std::fs::read_dir(&data).map(|d| d.filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".h5")).count()).unwrap_or(0);
        if n >= 2 || t.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = label_chunks(&run).len();
    assert!((2..30).contains(&before), "{before} chunks before the kill");
    let (code, out, err) = vzero(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(&format!("{} already labelled", before * 4)), "{out}");
    let chunks = label_chunks(&run);
    assert_eq!(chunks.keys().copied().collect::<Vec<_>>(), (0..30).collect::<Vec<_>>());
    let mut planes = HashSet::new();
    for c in chunks.values() {
        for r in c.read_all().unwrap() {
            assert!(planes.insert(r.planes.iter().map(|x| x.to_bits()).collect::<Vec<_>>()), "a position labelled twice");
        }
    }
    assert_eq!(planes.len(), 120);
    let _ = std::fs::remove_dir_all(&dir);
}


#[test]
fn import_then_learn_then_train_on_one_run() {
    let dir = fresh("flow");
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    // games to import: a short match between two classical players, as PGN
    let pgn = dir.join("games.pgn");
    let (code, out, err) = vzero(&["match", "greedy", "random", "--variant", "empire", "--games", "6", "--seed", "2", "--no-progress", "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = vzero(&["import", "--variant", "empire", "--from", pgn.to_str().unwrap(), "--run", run_s, "--no-progress"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("imported 6 of 6 games"), "{out}");
    let cfg = dir.join("tiny.toml");
    std::fs::write(&cfg, common::tiny_config("", "[learn.external]\nshare = 0.5\nhalf_life_rows = 100")).unwrap();
    let (code, out, err) = vzero(&["learn", "--config", cfg.to_str().unwrap(), "--run", run_s, "--steps", "10", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("trained 10 steps"), "{out}");
    let metrics = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    let header = metrics.lines().next().unwrap();
    assert!(header.ends_with("external_rows,external_share"), "{header}");
    assert!(metrics.lines().nth(1).unwrap().ends_with(",1.000000"), "all external before self-play: {metrics}");
    let stored = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(stored.contains("[learn.external]") && stored.contains("half_life_rows = 100"), "{stored}");
    // self-play continues from the supervised network
    let (code, out, err) = vzero(&["train", "--run", run_s, "--games", "4", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let run_dir = RunDir::create_or_open(&run).unwrap();
    let selfplay: Vec<Chunk> = run_dir.list_chunks().unwrap().iter().map(|p| Chunk::open(p).unwrap()).filter(|c| c.meta.source == Source::SelfPlay).collect();
    assert!(!selfplay.is_empty());
    assert!(selfplay.iter().all(|c| c.meta.network != "gen-000000-step-000000000"), "self-play started from generation 0");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every file of a directory tree with its contents (to show that a command changed nothing).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_run_takes_its_variant_from_its_data_and_a_failed_command_changes_nothing() {
    let dir = fresh("variant");
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    let pgn = dir.join("shogun.pgn");
    let (code, out, err) = vzero(&["match", "greedy", "random", "--variant", "shogun", "--games", "2", "--seed", "3", "--max-plies", "60", "--no-progress", "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = vzero(&["import", "--variant", "shogun", "--from", pgn.to_str().unwrap(), "--run", run_s, "--no-progress"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!run.join("config.toml").exists(), "import writes no config");

    // Another variant than the data's: refused, naming both, and the run is as it was.
    let before = snapshot(&run);
    let tiny = dir.join("tiny-empire.toml");
    std::fs::write(&tiny, common::tiny_config("", "")).unwrap();
    for args in [
        vec!["learn", "--variant", "empire", "--run", run_s, "--steps", "1", "--quiet"],
        vec!["train", "--config", tiny.to_str().unwrap(), "--run", run_s, "--steps", "1", "--quiet"],
        vec!["selfplay", "--variant", "empire", "--run", run_s, "--games", "1", "--quiet"],
    ] {
        let (code, out, err) = vzero(&args);
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(err.contains("holds variant 'shogun'") && err.contains("not 'empire'") && err.contains(".h5"), "{args:?}: {err}");
        assert_eq!(snapshot(&run), before, "{args:?} changed the run");
    }

    // Without --variant: the run's data decides.
    let (code, out, err) = vzero(&["learn", "--run", run_s, "--steps", "0", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let stored = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(stored.contains("variant = \"shogun\""), "{stored}");
    let ckpt = RunDir::create_or_open(&run).unwrap().latest_checkpoint().unwrap().unwrap();
    assert!(std::fs::read_to_string(&ckpt).unwrap().contains("\"shogun\""), "{}", ckpt.display());

    // A config/variant conflict with the stored config: a clear error, the run unchanged.
    let before = snapshot(&run);
    let (code, _, err) = vzero(&["learn", "--variant", "empire", "--run", run_s, "--steps", "1", "--quiet"]);
    assert_ne!(code, 0);
    assert!(err.contains("--variant empire does not match the config's variant 'shogun'"), "{err}");
    assert_eq!(snapshot(&run), before, "the conflict changed the run");
    let _ = std::fs::remove_dir_all(&dir);
}
