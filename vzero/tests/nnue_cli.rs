//! `vzero nnue`: the material net written and evaluated end to end with Fairy-Stockfish's
//! known answers, and one-line refusals.

use std::process::Command;

fn vzero(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vzero")).args(args).output().expect("run vzero");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn material_net_gives_fairy_stockfish_s_eval() {
    let dir = std::env::temp_dir().join(format!("vzero-nnue-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empire = dir.join("empire-material.nnue");
    let empire = empire.to_str().unwrap();
    let (code, out, err) = vzero(&["nnue", "material", "--variant", "empire", "--out", empire]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("86016 features"), "{out}");
    let (code, out, err) = vzero(&["nnue", "eval", "--net", empire, "--variant", "empire"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("NNUE evaluation        +6.64 (white side)"));
    assert!(out.lines().nth(1).unwrap().starts_with("internal 1381 (white side)"), "{out}");
    let shogun = dir.join("shogun-material.nnue");
    let shogun = shogun.to_str().unwrap();
    let (code, _, err) = vzero(&["nnue", "material", "--variant", "shogun", "--out", shogun]);
    assert_eq!(code, 0, "{err}");
    let fen = "1nb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[RR] b Kk - 0 1";
    let (code, out, err) = vzero(&["nnue", "eval", "--net", shogun, "--variant", "shogun", "--fen", fen]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().next(), Some("NNUE evaluation        +18.40 (white side)"));
    // Another variant's file, a variant Fairy-Stockfish cannot hold: one line, non-zero exit.
    let (code, _, err) = vzero(&["nnue", "eval", "--net", shogun, "--variant", "empire"]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a net for empire") && err.contains("a net for shogun"), "{err}");
    let (code, _, err) = vzero(&["nnue", "info", "--variant", "spqr"]);
    assert_eq!(code, 1);
    assert_eq!(err.trim(), "error: variant 'spqr' cannot have a Fairy-Stockfish net: its board has 12 ranks; Fairy-Stockfish holds at most 12 files and 10 ranks");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A tiny self-play run, then `vzero nnue train` (resumed by a second call), `vzero nnue
/// export` into a directory, and `vzero nnue eval` reading the exported net.
#[test]
fn train_resume_export_and_eval_from_a_tiny_run() {
    let dir = std::env::temp_dir().join(format!("vzero-nnue-train-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("tiny.toml");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tests/tiny-empire.toml"), &cfg).unwrap();
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run_s, "--games", "4", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");

    let (code, out, err) = vzero(&["nnue", "train", "--run", run_s, "--steps", "50", "--batch", "64", "--log-every", "10", "--patience", "0", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("trained 50 steps (0 → 50), 3200 positions"), "{out}");
    assert!(err.contains("validation positions"), "{err}");
    let nnue = run.join("nnue");
    assert!(nnue.join("ckpt-000000050.vzck").is_file());
    let metrics = std::fs::read_to_string(nnue.join("metrics.csv")).unwrap();
    let lines: Vec<&str> = metrics.lines().collect();
    assert_eq!(lines[0], "step,positions,train_loss,validation_loss,lr,positions_per_s");
    assert_eq!(lines.len(), 6, "{metrics}");
    assert!(lines[5].starts_with("50,3200,"), "{metrics}");
    let val: f64 = lines[5].split(',').nth(3).unwrap().parse().expect("a validation loss");
    assert!(val.is_finite() && val >= 0.0);

    // A second call resumes from the newest checkpoint: the step goes on.
    let (code, out, err) = vzero(&["nnue", "train", "--run", run_s, "--steps", "60", "--batch", "64", "--patience", "0", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("resuming from") && err.contains("(step 50)"), "{err}");
    assert!(out.starts_with("trained 10 steps (50 → 60)"), "{out}");
    assert!(std::fs::read_to_string(nnue.join("metrics.csv")).unwrap().lines().last().unwrap().starts_with("60,3840,"));

    // The loss plot is drawn beside the metrics.
    assert!(std::fs::read_to_string(nnue.join("loss.svg")).unwrap().starts_with("<svg"));

    // A second NNUE trainer on the run is refused, naming the live holder; nothing changes.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let holder = vzero_data::Holder { host: vzero_base::hostname(), pid: std::process::id(), command: "vzero nnue loop".into(), since: now, renewed: now, ttl_s: 60, token: "t".into() };
    let lock = run.join(vzero_data::lease::NNUE_LEASE_NAME);
    std::fs::write(&lock, serde_json::to_vec(&holder).unwrap()).unwrap();
    let before = std::fs::read_to_string(nnue.join("metrics.csv")).unwrap();
    let (code, _, err) = vzero(&["nnue", "train", "--run", run_s, "--steps", "70", "--batch", "64", "--quiet"]);
    assert_eq!(code, 1);
    assert!(err.contains("has an NNUE trainer already") && err.contains(&format!("pid {} (vzero nnue loop)", std::process::id())), "{err}");
    assert_eq!(std::fs::read_to_string(nnue.join("metrics.csv")).unwrap(), before);
    // A holder whose process is gone is taken over.
    let gone = vzero_data::Holder { pid: 4_000_000_000, ..holder };
    std::fs::write(&lock, serde_json::to_vec(&gone).unwrap()).unwrap();
    let (code, out, err) = vzero(&["nnue", "train", "--run", run_s, "--steps", "60", "--batch", "64", "--patience", "0", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!lock.exists(), "released on exit");

    // Export into a directory: named <variant>-<12 hex of its sha256>.nnue; eval reads it.
    let outdir = dir.join("nets");
    std::fs::create_dir_all(&outdir).unwrap();
    let (code, out, err) = vzero(&["nnue", "export", "--run", run_s, "--out", outdir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("vzero nnue: empire, 3840 positions seen, 60 steps; targets lambda 0.5: search values (") && out.contains("positions) + game results"), "{out}");
    assert!(out.contains("game results, each position shown mirrored half the time"), "empire's pieces are symmetric: {out}");
    let files: Vec<_> = std::fs::read_dir(&outdir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("empire-") && name.ends_with(".nnue") && name.len() == "empire-".len() + 12 + 5, "{name}");
    let bytes = std::fs::read(&files[0]).unwrap();
    assert_eq!(vzero_nnue::checkpoint::net_file_name("empire", &bytes), name);
    let (code, out, err) = vzero(&["nnue", "eval", "--net", files[0].to_str().unwrap(), "--variant", "empire"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NNUE evaluation "), "{out}");

    // Early stopping keeps the net of the best validation loss: the checkpoint written is at
    // the step of the last metrics row, whose validation loss is the lowest of all.
    let es = dir.join("es");
    let (code, out, err) = vzero(&["nnue", "train", "--variant", "empire", "--run", es.to_str().unwrap(), "--from", run_s, "--steps", "300", "--batch", "64", "--log-every", "10", "--patience", "3", "--lr", "0.01", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let rows: Vec<Vec<String>> = std::fs::read_to_string(es.join("nnue/metrics.csv")).unwrap().lines().skip(1).map(|l| l.split(',').map(String::from).collect()).collect();
    let vals: Vec<f64> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
    let last: u64 = rows.last().unwrap()[0].parse().unwrap();
    assert!(vals.iter().all(|&v| v >= *vals.last().unwrap()), "{vals:?}");
    assert!(es.join("nnue").join(format!("ckpt-{last:09}.vzck")).is_file(), "{out}\n{err}");
    assert!(out.starts_with(&format!("trained {last} steps (0 → {last})")), "{out}");
    if last < 300 {
        assert!(err.contains(&format!("kept step {last} of ")), "{err}");
    }

    // PGN games as data (their results as targets), into a fresh run; a --from that is
    // neither a file nor a run is refused in one line.
    let pgn = dir.join("games.pgn");
    let (code, _, err) = vzero(&["match", "random", "random", "--variant", "empire", "--games", "4", "--max-plies", "60", "--pgn", pgn.to_str().unwrap(), "--no-progress"]);
    assert_eq!(code, 0, "{err}");
    let fresh = dir.join("fresh");
    let (code, out, err) = vzero(&["nnue", "train", "--variant", "empire", "--run", fresh.to_str().unwrap(), "--from", pgn.to_str().unwrap(), "--steps", "3", "--batch", "16", "--holdout", "0", "--no-mirror", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("PGN results as scores (") && !out.contains("mirrored"), "{out}");
    let (code, _, err) = vzero(&["nnue", "train", "--variant", "empire", "--run", fresh.to_str().unwrap(), "--from", dir.join("nope").to_str().unwrap(), "--steps", "4"]);
    assert_eq!(code, 1);
    assert!(err.contains("neither a PGN file nor a run directory"), "{err}");

    // A truncated checkpoint is refused in one line.
    let ckpt = nnue.join("ckpt-000000060.vzck");
    let bad = dir.join("bad.vzck");
    std::fs::write(&bad, &std::fs::read(&ckpt).unwrap()[..1000]).unwrap();
    let (code, _, err) = vzero(&["nnue", "export", "--net", bad.to_str().unwrap(), "--out", dir.join("x.nnue").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.vzck") && err.contains("truncated"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `vzero nnue loop` with a real UCI teacher process (vzero's own engine behind a shell script
/// that logs what it is sent): a round plays, trains and publishes a net; a second call goes on
/// with the next round, whose teachers load that net with `setoption name EvalFile`.
#[test]
fn loop_rounds_publish_nets_that_the_next_round_s_teachers_load() {
    let dir = std::env::temp_dir().join(format!("vzero-nnue-loop-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("uci.log");
    let script = dir.join("teacher.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntee -a {} | exec {} uci --variant empire\n", log.display(), env!("CARGO_BIN_EXE_vzero"))).unwrap();
    let run = dir.join("run");
    let teacher = format!("uci:sh {}:nodes=8", script.display());
    let args = |rounds: &'static str, gate: &'static str| -> Vec<String> {
        ["nnue", "loop", "--variant", "empire", "--run", run.to_str().unwrap(), "--teacher", &teacher, "--workers", "1", "--rounds", rounds, "--play-minutes", "0.05", "--train-minutes", "0.03", "--gate-games", gate, "--patience", "0", "--quiet"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let call = |rounds, gate| {
        let a = args(rounds, gate);
        vzero(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // Round 0 without a gate: its net becomes the teachers' net.
    let (code, out, err) = call("1", "0");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("loop: 1 rounds,"), "{out}");
    assert!(err.contains("round 0: teachers play with the classical evaluation"), "{err}");
    assert!(!std::fs::read_to_string(&log).unwrap().contains("EvalFile"), "round 0 has no net yet");
    let nets = std::fs::read_to_string(run.join("nnue/nets.csv")).unwrap();
    let rows: Vec<&str> = nets.lines().collect();
    assert_eq!(rows.len(), 2, "{nets}");
    let first = rows[1].split(',').nth(1).unwrap().to_string();
    assert_eq!(rows[1].split(',').nth(9), Some(first.as_str()), "ungated: the teachers take the net: {nets}");
    let net0 = run.join("nnue/nets").join(&first);
    let bytes = std::fs::read(&net0).unwrap();
    assert_eq!(vzero_nnue::checkpoint::net_file_name("empire", &bytes), first);
    let positions: usize = rows[1].split(',').nth(3).unwrap().parse().unwrap();
    assert!(positions > 0, "{nets}");

    // The next call goes on at round 1, whose teacher loads round 0's net; its net is gated.
    let (code, out, err) = call("2", "2");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("loop: 1 rounds,"), "{out}");
    assert!(err.contains(&format!("round 1: teachers play with {first}")), "{err}");
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(sent.contains(&format!("setoption name EvalFile value {}", net0.display())), "{sent}");
    let nets = std::fs::read_to_string(run.join("nnue/nets.csv")).unwrap();
    let rows: Vec<&str> = nets.lines().collect();
    assert_eq!(rows.len(), 3, "{nets}");
    assert!(rows[2].starts_with("1,empire-"), "{nets}");
    assert!(err.contains("round 1: gate: round1 vs teachers: 2 games"), "{err}");
    let f: Vec<&str> = rows[2].split(',').collect();
    let gate: f64 = f[8].parse().unwrap();
    assert!((0.0..=1.0).contains(&gate), "{nets}");
    assert_eq!(f[9], if gate > 0.5 { f[1] } else { first.as_str() }, "the teachers keep their net unless the new one scores over 50%: {nets}");
    let steps: Vec<u64> = rows[1..].iter().map(|r| r.split(',').nth(6).unwrap().parse().unwrap()).collect();
    assert!(steps[1] > steps[0], "the trainer goes on from its checkpoint: {steps:?}");
    // the nets evaluate
    let second = run.join("nnue/nets").join(rows[2].split(',').nth(1).unwrap());
    let (code, out, err) = vzero(&["nnue", "eval", "--net", second.to_str().unwrap(), "--variant", "empire"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NNUE evaluation "), "{out}");
    // Another engine than a UCI one is refused in one line, the run unchanged.
    let (code, _, err) = vzero(&["nnue", "loop", "--variant", "empire", "--run", run.to_str().unwrap(), "--teacher", "alphabeta:2", "--rounds", "3"]);
    assert_eq!(code, 1);
    assert!(err.contains("must be a UCI engine"), "{err}");
    assert_eq!(std::fs::read_to_string(run.join("nnue/nets.csv")).unwrap(), nets);
    // A refused first call creates no run directory (a loop, or a training, that cannot run).
    let never = dir.join("never");
    for args in [
        vec!["nnue", "loop", "--variant", "empire", "--run", never.to_str().unwrap(), "--teacher", "alphabeta:2"],
        vec!["nnue", "loop", "--variant", "empire", "--run", never.to_str().unwrap(), "--teacher", "uci:x:nodes=ten"],
        vec!["nnue", "loop", "--variant", "empire", "--run", never.to_str().unwrap(), "--teacher", "uci:x", "--workers", "0"],
        vec!["nnue", "loop", "--variant", "spqr", "--run", never.to_str().unwrap(), "--teacher", "uci:x"],
        vec!["nnue", "train", "--variant", "empire", "--run", never.to_str().unwrap(), "--lambda", "2"],
        vec!["nnue", "train", "--variant", "spqr", "--run", never.to_str().unwrap()],
    ] {
        let (code, _, err) = vzero(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!never.exists(), "{args:?} created {}", never.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
