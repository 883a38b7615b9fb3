//! The whole training loop in miniature: `vzero train` with a tiny network writes HDF5 chunks
//! consistent with its game records and publishes checkpoints; a `vzero selfplay` process picks
//! up a checkpoint that `vzero learn` publishes while it runs; after a SIGKILL, `vzero train`
//! resumes the run with nothing half-written read. The network has every auxiliary head, and each
//! row's auxiliary targets are checked against the game replayed from its record.

mod common;

use common::vzero;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use vzero_data::{Chunk, Row, RunDir};
use vzero_encoding::MoveEncoder;
use vzero_mcts::Quiescence;
use vzero_rules::{Color, Game, Variant};



/// Every chunk: readable, rows consistent with the games recorded beside them.
fn check_chunks(run: &RunDir) -> (usize, usize, Vec<String>) {
    let v = Variant::builtin("empire").unwrap();
    let (mut rows, mut games) = (0, 0);
    let mut networks = Vec::new();
    for path in run.list_chunks().unwrap() {
        let chunk = Chunk::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(chunk.meta.variant, "empire");
        networks.push(chunk.meta.network.clone());
        let recs = chunk.games().unwrap();
        let data = chunk.read_all().unwrap();
        // One row per move of every game in the chunk; full searches carry a policy target.
        assert_eq!(data.len(), recs.iter().map(|g| g.moves.len()).sum::<usize>(), "{}", path.display());
        for r in &data {
            assert!((r.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            let p: f32 = r.policy.iter().map(|x| x.1).sum();
            if r.policy_weight > 0.0 {
                assert!((p - 1.0).abs() < 1e-3, "policy target sums to {p}");
            } else {
                assert!(r.policy.is_empty());
            }
            assert!(r.moves_left >= 1.0);
        }
        // Rows are stored game by game, in the order of the records.
        let mut offset = 0;
        for g in &recs {
            let rows_of_game = &data[offset..offset + g.moves.len()];
            offset += g.moves.len();
            if g.reason == "max-plies" {
                // No result: each row's value target is its own search's W/D/L.
                for r in rows_of_game {
                    assert!((r.wdl[0] - r.wdl[2] - r.search_value).abs() < 1e-4, "{:?} vs {}", r.wdl, r.search_value);
                }
            } else {
                for r in rows_of_game {
                    assert!(r.wdl.iter().all(|&x| x == 0.0 || x == 1.0), "result target {:?}", r.wdl);
                }
            }
            let mut game = Game::from_fen(v, &g.start_fen).unwrap();
            let mut positions = Vec::new();
            for m in &g.moves {
                positions.push(*game.position());
                game.play_uci(m).unwrap_or_else(|e| panic!("recorded move: {e}"));
            }
            check_aux_targets(v, rows_of_game, &positions, &g.moves, &g.result, g.reason == "max-plies", &chunk.meta.short_term_horizons);
            let res = game.result();
            match g.reason.as_str() {
                "max-plies" => assert!(!res.is_over() && g.moves.len() == 60 && g.result == "1/2-1/2"),
                reason => {
                    assert_eq!(res.reason.to_string(), reason);
                    let mover_white = game.position().side_to_move() == vzero_rules::Color::White;
                    let want = match (res.outcome, mover_white) {
                        (vzero_rules::Outcome::Draw, _) => "1/2-1/2",
                        (vzero_rules::Outcome::Win, true) | (vzero_rules::Outcome::Loss, false) => "1-0",
                        _ => "0-1",
                    };
                    assert_eq!(g.result, want, "{reason}");
                }
            }
            assert_eq!(g.priors.len(), g.moves.len());
        }
        rows += data.len();
        games += recs.len();
    }
    (rows, games, networks)
}

/// The auxiliary targets of one game's rows, recomputed from the replayed positions: material
/// from `Quiescence`, the opponent policy from the next row (or the move played there), the
/// short-term values by the formula of data/README.md from the rows' search values and sides.
fn check_aux_targets(v: Variant, rows: &[Row], positions: &[vzero_rules::Position], moves: &[String], result: &str, truncated: bool, horizons: &[u32]) {
    assert_eq!(horizons, [2, 6]);
    let n = rows.len();
    let side = |t: usize| positions[t].side_to_move();
    let enc = MoveEncoder::new(v);
    for t in 0..n {
        let r = &rows[t];
        let material = (Quiescence::default().balance(&positions[t]) / vzero_mcts::MATERIAL_SCALE).tanh();
        assert_eq!((r.material, r.material_weight), (material, 1.0), "material of row {t}");
        if t + 1 < n {
            let next = &rows[t + 1];
            let want = if next.policy_weight > 0.0 {
                next.policy.clone()
            } else {
                let mv = positions[t + 1].parse_uci(&moves[t + 1]).unwrap();
                vec![(enc.encode(&positions[t + 1], mv).unwrap() as u32, 1.0)]
            };
            assert_eq!((&r.opponent_policy, r.opponent_weight), (&want, 1.0), "opponent policy of row {t}");
        } else {
            assert!(r.opponent_policy.is_empty() && r.opponent_weight == 0.0);
        }
        let same = |u: usize| if side(u) == side(t) { 1.0 } else { -1.0 };
        let z = if truncated {
            same(n - 1) * rows[n - 1].search_value as f64
        } else {
            match (result, side(t)) {
                ("1/2-1/2", _) => 0.0,
                ("1-0", Color::White) | ("0-1", Color::Black) => 1.0,
                _ => -1.0,
            }
        };
        assert_eq!(r.short_term_weight, 1.0);
        for (j, &h) in horizons.iter().enumerate() {
            let l = 1.0 - 1.0 / h as f64;
            let mut want = l.powi((n - t) as i32) * z;
            for u in t..n {
                want += (1.0 - l) * l.powi((u - t) as i32) * same(u) * rows[u].search_value as f64;
            }
            assert!((r.short_term[j] as f64 - want).abs() < 1e-5, "row {t} horizon {h}: {} vs {want}", r.short_term[j]);
        }
    }
}

fn steps(run: &Path) -> Vec<u64> {
    std::fs::read_to_string(run.join("metrics.csv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect()
}

#[test]
fn tiny_training_loop_publishes_reloads_and_resumes() {
    let dir: PathBuf = std::env::temp_dir().join(format!("vzero-train-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("tiny.toml");
    std::fs::write(&cfg, common::tiny_config("opponent_policy = true\nsoft_policy = true\nshort_term_value = true\nmaterial = true", "")).unwrap();
    let run_path = dir.join("run");
    let run_s = run_path.to_str().unwrap();

    // 1. Self-play and training together.
    let (code, out, err) = vzero(&["train", "--config", cfg.to_str().unwrap(), "--run", run_s, "--games", "8", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("checkpoints") && out.contains("metrics"), "{out}");
    let run = RunDir::create_or_open(&run_path).unwrap();
    let (rows, games, _) = check_chunks(&run);
    assert!(games >= 8 && rows > 0, "{games} games, {rows} rows");
    let first = run.latest_checkpoint_entry().unwrap().unwrap();
    assert!(first.generation >= 1, "a checkpoint beyond generation 0 was published");
    // The network has the auxiliary heads, and metrics.csv a loss column for each.
    let meta = vzero_model::checkpoint::read_meta(&first.path).unwrap();
    assert_eq!(meta.net.aux.short_term_horizons, [2, 6]);
    assert!(meta.net.aux.opponent_policy && meta.net.aux.soft_policy && meta.net.aux.material);
    let header = std::fs::read_to_string(run_path.join("metrics.csv")).unwrap().lines().next().unwrap().to_string();
    assert!(header.ends_with("loss_opponent_policy,loss_soft_policy,loss_short_term_value,loss_material"), "{header}");

    // 2. A self-play process picks up a checkpoint published while it runs.
    let mut child = Command::new(env!("CARGO_BIN_EXE_vzero"))
        .args(["selfplay", "--run", run_s, "--minutes", "5", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let target = first.step + 3;
    let (code, out, err) = vzero(&["learn", "--run", run_s, "--steps", &target.to_string(), "--minutes", "3", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lock = run_path.join("learner.lock");
    assert!(!lock.exists(), "the lease is released on exit");
    let newest = run.latest_checkpoint_entry().unwrap().unwrap();
    assert!(newest.generation > first.generation && newest.step >= target, "{newest:?}");
    let worker = format!("_p{}w0", child.id()); // <host>_p<pid>w<thread>
    let t = Instant::now();
    let mut picked_up = false;
    while t.elapsed() < Duration::from_secs(120) && !picked_up {
        std::thread::sleep(Duration::from_millis(300));
        for path in run.list_chunks().unwrap() {
            let Ok(c) = Chunk::open(&path) else { continue };
            if c.meta.worker.ends_with(&worker) && c.meta.network == newest.name() {
                picked_up = true;
            }
        }
    }
    // 3. Killed at an arbitrary moment...
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(picked_up, "self-play never wrote games with {}", newest.name());

    // One learner per run: while one holds the lease, a second is refused, naming the holder.
    let mut dead = Command::new(env!("CARGO_BIN_EXE_vzero")).args(["learn", "--run", run_s, "--minutes", "5", "--quiet"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // (its lease is taken first; its heartbeat, which `vzero status` reads below, once it has
    // opened the run: wait for both)
    let t = Instant::now();
    let holds = || std::fs::read_to_string(&lock).is_ok_and(|l| l.contains(&format!("\"pid\": {}", dead.id())));
    let beats = || vzero_data::heartbeat::read_heartbeats(&run).is_ok_and(|b| b.iter().any(|b| b.pid == dead.id() && b.state == "running"));
    while !(holds() && beats()) {
        assert!(t.elapsed() < Duration::from_secs(60), "the second learner took no lease or wrote no heartbeat in 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, _, err) = vzero(&["learn", "--run", run_s, "--steps", "1000", "--quiet"]);
    assert_ne!(code, 0);
    assert!(err.contains("has a learner already") && err.contains(&format!("pid {} (vzero learn)", dead.id())) && err.contains("since"), "{err}");
    // `vzero status` shows the learner, and the killed self-play process as gone.
    let (code, status, err) = vzero(&["status", "--run", run_s]);
    assert_eq!(code, 0, "{err}");
    assert!(status.contains(&format!("learner      host ")) && status.contains(&format!("pid {} (vzero learn)", dead.id())), "{status}");
    assert!(status.contains(&format!(":{} gone (killed)", child.id())) && status.contains(&format!(":{} running", dead.id())), "{status}");
    assert!(status.contains("network      gen-") && status.lines().any(|l| l.starts_with("data ") && l.contains(" games, ")), "{status}");
    // A SIGKILLed learner leaves its lease behind; the next learner takes it over.
    dead.kill().unwrap();
    dead.wait().unwrap();
    assert!(lock.exists(), "a SIGKILLed learner cannot remove its lease");

    // ... and resumed: nothing half-written is read, training continues from the newest step.
    let before = steps(&run_path);
    let (code, out, err) = vzero(&["train", "--run", run_s, "--games", "4", "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    check_chunks(&run);
    let after = steps(&run_path);
    assert!(after.windows(2).all(|w| w[0] <= w[1]), "metrics steps go forward: {after:?}");
    assert!(after.len() >= before.len());
    assert!(run.latest_checkpoint_entry().unwrap().unwrap().step >= newest.step);
    let leftovers: Vec<_> = std::fs::read_dir(run.data_dir()).unwrap().filter_map(|e| e.ok()).filter(|e| !e.file_name().to_string_lossy().ends_with(".h5")).collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    let (code, out, err) = vzero(&["check", "--run", run_s]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("ok: ") && out.contains(" chunks (") && out.contains(" checkpoints"), "{out}");
    // A broken invariant is found: a second copy of a chunk counts its games twice.
    let chunk = run.list_chunks().unwrap().into_iter().next().unwrap();
    std::fs::copy(&chunk, chunk.with_file_name("9999999999999-copy-000000.h5")).unwrap();
    let (code, out, _) = vzero(&["check", "--run", run_s]);
    assert_ne!(code, 0);
    assert!(out.contains("counted twice"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
