//! TensorBoard event files of `vzero train`, read by TensorBoard's own Python reader
//! (`.venv-py`, made by scripts/setup.sh) through scripts/check_tensorboard.py: every
//! metrics.csv column at its steps with its values, self-play games/s, the gauntlet Elo at the
//! gauntleted checkpoints' steps, and a file cut inside its last record still readable. Then
//! again after a restart from an earlier checkpoint (as after a learner killed between logging
//! rows and publishing them): the rows past that checkpoint, which metrics.csv drops, are
//! dropped from TensorBoard's view too, and the second process's file continues the curves.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::vzero;

/// Runs scripts/check_tensorboard.py on the run; returns its output.
fn check(python: &Path, root: &Path, run: &Path, extra: &[&str]) -> String {
    let out = Command::new(python).arg(root.join("scripts/check_tensorboard.py")).arg(run).args(extra).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("tensorboard ok"), "{text}");
    text
}

fn event_files(run: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(run).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains("tfevents")).collect();
    v.sort();
    v
}

/// Steps of the metrics.csv rows.
fn metrics_steps(run: &Path) -> Vec<u64> {
    std::fs::read_to_string(run.join("metrics.csv")).unwrap().lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect()
}

#[test]
fn tensorboard_reads_the_event_files_of_a_training_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join(".venv-py/bin/python");
    assert!(python.exists(), "{} missing: run scripts/setup.sh (it creates .venv-py with tensorboard)", python.display());
    let dir: PathBuf = std::env::temp_dir().join(format!("vzero-tensorboard-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("tiny.toml");
    // `extra` lands in the tiny config's last table, [learn], until the [gauntlet] header.
    let extra = "log_every = 4\n[gauntlet]\nevery = 4\ngames = 2\nsims = 2\nopponents = [\"random\", \"greedy\"]\nprevious = 1\nmax_plies = 16\n";
    std::fs::write(&cfg, common::tiny_config("material = true", extra)).unwrap();
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();

    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run_s, "--steps", "48", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(event_files(&run).len(), 1, "one event file per learner process");
    assert!(run.join("arena/elo.csv").exists(), "a gauntlet ran: {out}");
    let text = check(&python, &root, &run, &["--last-elo"]);
    assert!(text.contains("loss/material"), "{text}");
    eprintln!("first run: {}", text.trim());

    // Restart from a checkpoint before the last metrics row: remove the newer checkpoints.
    let last = *metrics_steps(&run).last().unwrap();
    let ckpts = run.join("checkpoints");
    for e in std::fs::read_dir(&ckpts).unwrap().filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        if vzero_data::parse_checkpoint_name(name.split('.').next().unwrap()).is_some_and(|(g, s)| g > 0 && s >= last) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let (code, out, err) = vzero(&["train", "--run", run_s, "--steps", "72", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(event_files(&run).len(), 2, "the second learner process writes a file of its own");
    let text = check(&python, &root, &run, &[]);
    eprintln!("after the restart: {}", text.trim());
    let _ = std::fs::remove_dir_all(&dir);
}
