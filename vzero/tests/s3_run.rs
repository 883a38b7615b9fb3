//! A run on object storage, against a real S3-compatible server (moto in server mode, from the
//! project's `.venv`; `scripts/setup.sh` installs it) that this test starts on the loopback
//! address and stops. Two `vzero selfplay` processes and a `vzero learn` share one `s3://` run,
//! each with its own local cache (as on separate machines); processes killed at arbitrary
//! moments leave no partial object; `vzero train` resumes the run; `vzero openings` and
//! `vzero gauntlet` read it; a checkpoint is published at most once.

mod common;

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use vzero_data::{Chunk, RunDir, StorageOptions};

const BUCKET: &str = "vzero-test";

/// The moto server, killed when dropped.
struct Moto {
    child: Child,
    endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http(port: u16, request: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.write_all(request.as_bytes())?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    Ok(out)
}

fn start_moto(dir: &Path) -> Moto {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/moto_server");
    assert!(bin.exists(), "{} is missing: run scripts/setup.sh (scripts/test.sh does)", bin.display());
    // Port 0: the server binds a free port itself and says which (a port found free here and
    // handed over could be taken meanwhile by the other test's server).
    let log_path = dir.join("moto.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let child = Command::new(&bin)
        .args(["-H", "127.0.0.1", "-p", "0"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let mut moto = Moto { child, endpoint: String::new() };
    let t = Instant::now();
    let port = loop {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        if let Some(port) = text.split("Running on http://127.0.0.1:").nth(1).and_then(|r| r.split_whitespace().next()).and_then(|p| p.parse::<u16>().ok()) {
            break port;
        }
        assert!(moto.child.try_wait().unwrap().is_none(), "moto exited: {text}");
        assert!(t.elapsed() < Duration::from_secs(60), "moto named no port within 60 s: {text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    moto.endpoint = format!("http://127.0.0.1:{port}");
    loop {
        if http(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_ok_and(|r| r.starts_with("HTTP/1.1 200")) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "moto did not answer within 60 s (see {})", dir.join("moto.log").display());
        std::thread::sleep(Duration::from_millis(200));
    }
    let r = http(port, &format!("PUT /{BUCKET} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")).unwrap();
    assert!(r.starts_with("HTTP/1.1 200"), "creating the bucket: {r}");
    moto
}

/// A `vzero` command with the object-storage environment and its own cache directory.
fn cmd(moto: &Moto, cache: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(common::BIN);
    c.args(args)
        .env("AWS_ENDPOINT", &moto.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("VZERO_CACHE", cache);
    c
}

fn ok(o: Output, what: &str) -> String {
    let (out, err) = (String::from_utf8_lossy(&o.stdout).to_string(), String::from_utf8_lossy(&o.stderr).to_string());
    assert!(o.status.success(), "{what} failed ({:?}):\n{out}\n{err}", o.status);
    out
}

/// The test process's view of the run, through a cache of its own.
fn open(moto: &Moto, cache: &Path, url: &str) -> RunDir {
    let opts = StorageOptions { endpoint: Some(moto.endpoint.clone()), region: Some("us-east-1".into()), allow_http: Some(true), cache_dir: Some(cache.to_path_buf()), timeout_s: None };
    std::env::set_var("AWS_ACCESS_KEY_ID", "test");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "test");
    RunDir::open_with(url, &opts).unwrap()
}

/// Every listed chunk opens and holds whole games; every listed checkpoint's files are there
/// and complete. Returns (chunks, games, workers).
fn check_run(run: &RunDir) -> (usize, usize, HashSet<String>) {
    let chunks = run.list_chunks().unwrap();
    let mut games = 0;
    let mut workers = HashSet::new();
    for p in &chunks {
        let c = Chunk::open(p).unwrap_or_else(|e| panic!("a listed chunk is unreadable: {e}"));
        let recs = c.games().unwrap();
        assert_eq!(c.read_all().unwrap().len(), recs.iter().map(|g| g.moves.len()).sum::<usize>());
        games += recs.len();
        workers.insert(c.meta.worker.clone());
    }
    for e in run.list_checkpoints().unwrap() {
        run.fetch_checkpoint(&e.path).unwrap_or_else(|err| panic!("listed checkpoint {} incomplete: {err}", e.name()));
        vzero_model::checkpoint::read_meta(&e.path).unwrap_or_else(|err| panic!("{err}"));
    }
    (chunks.len(), games, workers)
}

#[test]
fn two_selfplay_processes_and_a_learner_share_an_s3_run() {
    let dir: PathBuf = std::env::temp_dir().join(format!("vzero-s3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let moto = start_moto(&dir);
    let cfg = dir.join("tiny.toml");
    // (a small gauntlet for step 5, never run on its own schedule; metrics every 3 steps so
    // that the 9-step learner writes some)
    let text = common::tiny_config("", "[gauntlet]\nevery = 1000\ngames = 2\nsims = 4\nopponents = [\"random\"]\nmax_plies = 40").replace("threads = 1\n", "threads = 1\nlog_every = 3\n");
    assert!(text.contains("log_every = 3"));
    std::fs::write(&cfg, text).unwrap();
    let cfg = cfg.to_str().unwrap();
    let url = format!("s3://{BUCKET}/runs/tiny");
    let cache = |name: &str| dir.join(format!("cache-{name}"));

    // Create-if-absent answers with a precondition failure, which the run reports as a second
    // publication; the object keeps its first content.
    let probe = open(&moto, &cache("probe"), &format!("s3://{BUCKET}/probe"));
    let f = probe.checkpoints_dir().join("gen-000000-step-000000000.json");
    std::fs::write(f.with_extension("safetensors"), b"weights").unwrap();
    probe.publish_new(&f.with_extension("safetensors")).unwrap();
    std::fs::write(&f, b"{\"step\":1}").unwrap();
    probe.publish_new(&f).unwrap();
    std::fs::write(&f, b"{\"step\":2}").unwrap();
    let e = probe.publish_new(&f).unwrap_err().to_string();
    assert!(e.contains("already published") && e.contains("probe/checkpoints/gen-000000-step-000000000.json"), "{e}");
    let again = open(&moto, &cache("probe2"), &format!("s3://{BUCKET}/probe"));
    let entry = again.latest_checkpoint_entry().unwrap().unwrap();
    assert_eq!(std::fs::read(&entry.path).unwrap(), b"{\"step\":1}");
    // A learner killed between the two PUTs of a checkpoint leaves its weights without
    // metadata: that orphan does not block the next publication of the same name, but a
    // published checkpoint (metadata present) is never overwritten.
    let stem = probe.checkpoints_dir().join("gen-000001-step-000000005");
    std::fs::write(stem.with_extension("safetensors"), b"orphaned weights").unwrap();
    probe.publish_new(&stem.with_extension("safetensors")).unwrap();
    std::fs::write(stem.with_extension("safetensors"), b"resumed weights").unwrap();
    std::fs::write(stem.with_extension("json"), b"{\"step\":5}").unwrap();
    probe.publish_checkpoint(&stem).unwrap();
    std::fs::write(stem.with_extension("safetensors"), b"a second learner's weights").unwrap();
    let e = probe.publish_checkpoint(&stem).unwrap_err().to_string();
    assert!(e.contains("already published") && e.contains("gen-000001-step-000000005.safetensors"), "{e}");
    let again = open(&moto, &cache("probe3"), &format!("s3://{BUCKET}/probe"));
    let entry = again.latest_checkpoint_entry().unwrap().unwrap();
    assert_eq!(entry.name(), "gen-000001-step-000000005");
    assert_eq!(std::fs::read(entry.path.with_extension("safetensors")).unwrap(), b"resumed weights");

    // 1. Two self-play processes and one learner, each with its own cache (separate machines).
    let spawn_selfplay = |name: &str| {
        cmd(&moto, &cache(name), &["selfplay", "--config", cfg, "--run", &url, "--games", "6", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let learner = cmd(&moto, &cache("learn"), &["learn", "--config", cfg, "--run", &url, "--steps", "9", "--minutes", "4", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One learner per run on object storage too: the lease object names the holder, and a
    // second learner is refused while it holds it.
    let watch = open(&moto, &cache("watch"), &url);
    let t = Instant::now();
    while !vzero_data::lease::read_holder(&watch).unwrap().is_some_and(|h| h.pid == learner.id()) {
        assert!(t.elapsed() < Duration::from_secs(60), "the learner took no lease");
        std::thread::sleep(Duration::from_millis(100));
    }
    let second = cmd(&moto, &cache("second"), &["learn", "--config", cfg, "--run", &url, "--steps", "1000", "--quiet"]).output().unwrap();
    let e = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success() && e.contains("has a learner already") && e.contains(&format!("pid {} (vzero learn)", learner.id())), "{e}");
    // Self-play only now: with data the learner could reach its 9 steps and give the lease up
    // before the second learner asked (which would then take it and wait for data for ever).
    let a = spawn_selfplay("a");
    let b = spawn_selfplay("b");
    let (pa, pb) = (a.id(), b.id());
    let learner_pid = learner.id();
    ok(learner.wait_with_output().unwrap(), "vzero learn");
    assert!(vzero_data::lease::read_holder(&watch).unwrap().is_none(), "the lease object is removed on exit");
    ok(a.wait_with_output().unwrap(), "selfplay a");
    ok(b.wait_with_output().unwrap(), "selfplay b");

    let run = open(&moto, &cache("check"), &url);
    let (chunks, games, workers) = check_run(&run);
    assert!(games >= 12, "{games} games in {chunks} chunks");
    for pid in [pa, pb] {
        assert!(workers.iter().any(|w| w.contains(&format!("_p{pid}w"))), "no chunk of self-play process {pid}: {workers:?}");
    }
    let newest = run.latest_checkpoint_entry().unwrap().unwrap();
    assert!(newest.generation >= 1, "{newest:?}");
    let metrics = std::fs::read_to_string(run.metrics_csv()).unwrap();
    assert!(metrics.lines().count() >= 2, "metrics.csv on the store: {metrics}");
    // The learner's TensorBoard event file is an object of the run too (published like metrics.csv).
    let events: Vec<_> = std::fs::read_dir(run.root()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with("events.out.tfevents.")).collect();
    assert!(events.len() == 1 && events[0].metadata().unwrap().len() > 100, "the learner's event file on the store: {events:?}");
    assert!(run.root().join("config.toml").exists(), "the stored config is on the store");
    // `vzero status` reads the run from the store: its games, and the heartbeats of the three
    // processes (stopped now).
    let status = ok(cmd(&moto, &cache("status"), &["status", "--run", &url]).output().unwrap(), "vzero status");
    assert!(status.contains(&format!("data         {games} games")), "{status}");
    for (role, pid) in [("selfplay", pa), ("selfplay", pb), ("learner", learner_pid)] {
        assert!(status.lines().any(|l| l.trim_start().starts_with(role) && l.contains(&format!(":{pid} stopped"))), "{role} {pid}: {status}");
    }

    // 2. Processes killed at arbitrary moments leave no partial object behind.
    for (k, wait_ms) in [1500u64, 3500, 6000].into_iter().enumerate() {
        let mut c = cmd(&moto, &cache(&format!("kill{k}")), &["train", "--run", &url, "--minutes", "2", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(wait_ms));
        let watch = open(&moto, &cache(&format!("watch-kill{k}")), &url);
        if k == 2 {
            // The last one is killed while it holds the learner lease.
            let t = Instant::now();
            while !vzero_data::lease::read_holder(&watch).unwrap().is_some_and(|h| h.pid == c.id()) {
                assert!(t.elapsed() < Duration::from_secs(60), "vzero train took no lease");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        c.kill().unwrap();
        c.wait().unwrap();
        if k == 2 {
            let h = vzero_data::lease::read_holder(&watch).unwrap();
            assert!(h.is_some_and(|h| h.pid == c.id()), "a SIGKILLed holder leaves its lease object (the resume below takes it over)");
        }
        check_run(&open(&moto, &cache(&format!("check-kill{k}")), &url));
        let out = ok(cmd(&moto, &cache("vzero-check"), &["check", "--run", &url]).output().unwrap(), "vzero check");
        assert!(out.starts_with(&format!("ok: {url}: ")), "{out}");
    }

    // 3. Resume: training goes on from the newest checkpoint, metrics steps go forward.
    let before = open(&moto, &cache("before"), &url).latest_checkpoint_entry().unwrap().unwrap();
    let out = ok(cmd(&moto, &cache("resume"), &["train", "--run", &url, "--games", "4", "--quiet"]).output().unwrap(), "vzero train (resume)");
    assert!(out.contains(&url), "the run is named by its URL: {out}");
    let run = open(&moto, &cache("after"), &url);
    let after = run.latest_checkpoint_entry().unwrap().unwrap();
    assert!(after.step >= before.step && after.generation >= before.generation, "{before:?} -> {after:?}");
    let steps: Vec<u64> = std::fs::read_to_string(run.metrics_csv()).unwrap().lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]), "metrics steps go forward: {steps:?}");
    let (_, games, _) = check_run(&run);

    // 4. The opening statistics read the same run: every game.
    let out = ok(cmd(&moto, &cache("openings"), &["openings", "--variant", "empire", "--from", &url, "--plies", "2", "--format", "json", "--no-progress"]).output().unwrap(), "vzero openings");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let counted = v["games"].as_u64().unwrap_or_else(|| panic!("no games count: {out}"));
    assert_eq!(counted as usize, games, "{out}");

    // 5. A gauntlet by hand on the run: its files are published to the store.
    let out = ok(cmd(&moto, &cache("gauntlet"), &["gauntlet", "--run", &url]).output().unwrap(), "vzero gauntlet");
    assert!(out.contains(&format!("{url}/arena/elo.csv")), "{out}");
    let run = open(&moto, &cache("final"), &url);
    let elo = std::fs::read_to_string(run.root().join("arena/elo.csv")).unwrap();
    assert!(elo.lines().count() >= 2, "{elo}");
    assert!(run.root().join("plots/elo.svg").exists());

    // 6. An NNUE net from the same run: trained on one machine, resumed on another (its own
    //    cache), exported on a third; checkpoints, metrics and the plot live on the store.
    let out = ok(cmd(&moto, &cache("nnue-a"), &["nnue", "train", "--run", &url, "--steps", "20", "--batch", "64", "--log-every", "10", "--patience", "0", "--quiet"]).output().unwrap(), "vzero nnue train");
    assert!(out.starts_with("trained 20 steps (0 → 20)"), "{out}");
    let o = cmd(&moto, &cache("nnue-b"), &["nnue", "train", "--run", &url, "--steps", "30", "--batch", "64", "--log-every", "10", "--patience", "0"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = ok(o, "vzero nnue train (resume elsewhere)");
    assert!(out.starts_with("trained 10 steps (20 → 30)") && err.contains("(step 20)"), "{out}\n{err}");
    let nets = dir.join("nets");
    std::fs::create_dir_all(&nets).unwrap();
    let out = ok(cmd(&moto, &cache("nnue-c"), &["nnue", "export", "--run", &url, "--out", nets.to_str().unwrap()]).output().unwrap(), "vzero nnue export");
    assert!(out.contains("30 steps"), "{out}");
    let run = open(&moto, &cache("nnue-check"), &url);
    assert_eq!(run.list_files("nnue", ".vzck").unwrap(), vec!["ckpt-000000020.vzck".to_string(), "ckpt-000000030.vzck".to_string()]);
    let m = run.root().join("nnue/metrics.csv");
    assert!(run.fetch(&m, true).unwrap() && run.fetch(&run.root().join("nnue/loss.svg"), true).unwrap());
    let steps: Vec<u64> = std::fs::read_to_string(&m).unwrap().lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect();
    assert_eq!(steps, vec![10, 20, 30]);
    assert!(run.stray_files().unwrap().is_empty());
    drop(moto);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Labelling spread over machines: one `vzero nnue loop` round publishes a net to an `s3://`
/// run, then two `vzero nnue play --follow` processes (each with its own cache and job, as on
/// separate machines) play into the same run with the teachers' net of `nnue/nets.csv` loaded,
/// and a trainer elsewhere trains on every position they wrote.
#[test]
fn nnue_players_on_two_machines_follow_the_loop_s_net_into_one_s3_run() {
    let dir: PathBuf = std::env::temp_dir().join(format!("vzero-s3-nnue-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let moto = start_moto(&dir);
    let url = format!("s3://{BUCKET}/runs/nnue-scale");
    let cache = |name: &str| dir.join(format!("cache-{name}"));
    // the teacher: vzero's own UCI engine, with a log of what each process sends it
    let teacher = |name: &str| -> (String, PathBuf) {
        let log = dir.join(format!("{name}.log"));
        let script = dir.join(format!("{name}.sh"));
        std::fs::write(&script, format!("#!/bin/sh\ntee -a {} | exec {} uci --variant empire\n", log.display(), common::BIN)).unwrap();
        (format!("uci:sh {}:nodes=8", script.display()), log)
    };
    let (loop_teacher, loop_log) = teacher("loop");
    ok(
        cmd(&moto, &cache("loop"), &["nnue", "loop", "--variant", "empire", "--run", &url, "--teacher", &loop_teacher, "--workers", "1", "--rounds", "1", "--play-minutes", "0.05", "--train-minutes", "0.03", "--gate-games", "0", "--patience", "0", "--quiet"])
            .output()
            .unwrap(),
        "vzero nnue loop",
    );
    assert!(!std::fs::read_to_string(&loop_log).unwrap().contains("EvalFile"));
    let run = open(&moto, &cache("check"), &url);
    let before: usize = run.list_chunks().unwrap().len();
    let nets = std::fs::read_to_string({
        let p = run.root().join("nnue/nets.csv");
        assert!(run.fetch(&p, true).unwrap());
        p
    })
    .unwrap();
    let net = nets.lines().nth(1).unwrap().split(',').nth(9).unwrap().to_string();
    assert!(net.starts_with("empire-") && net.ends_with(".nnue"), "ungated: the teachers take round 0's net: {nets}");

    // two players at once, on "two machines"
    let players: Vec<(Child, PathBuf)> = ["m1", "m2"]
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (spec, log) = teacher(m);
            let seed = (i + 7).to_string();
            let child = cmd(&moto, &cache(m), &["nnue", "play", "--variant", "empire", "--run", &url, "--teacher", &spec, "--workers", "1", "--games", "4", "--follow", "--job", m, "--seed", &seed, "--quiet"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, log)
        })
        .collect();
    for (child, log) in players {
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let out = ok(o, "vzero nnue play --follow");
        assert!(out.contains(": 4 games"), "{out}");
        assert!(err.contains(&format!("teachers play with {net}")), "{err}");
        let sent = std::fs::read_to_string(&log).unwrap();
        assert!(sent.lines().any(|l| l.starts_with("setoption name EvalFile value ") && l.ends_with(&net)), "{sent}");
    }
    // both players' games are in the run, whole, and a trainer on a third machine reads them
    let run = open(&moto, &cache("check2"), &url);
    let chunks = run.list_chunks().unwrap();
    let mut games = 0;
    for p in &chunks {
        let c = Chunk::open(p).unwrap_or_else(|e| panic!("a listed chunk is unreadable: {e}"));
        assert_eq!(c.meta.source, vzero_data::Source::Label, "{}", p.display());
        games += c.games().unwrap().len();
    }
    assert!(chunks.len() >= before + 2, "{} chunks, {before} before the players", chunks.len());
    let nets_games: usize = nets.lines().nth(1).unwrap().split(',').nth(2).unwrap().parse().unwrap();
    assert_eq!(games, nets_games + 8, "the loop's round's games and the players' 4 + 4");
    let o = cmd(&moto, &cache("trainer"), &["nnue", "train", "--run", &url, "--minutes", "0.02", "--batch", "64", "--patience", "0", "--quiet"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = ok(o, "vzero nnue train");
    assert!(out.starts_with("trained ") && err.contains("resuming from"), "{out}\n{err}");
    assert!(run.stray_files().unwrap().is_empty());
    drop(moto);
    let _ = std::fs::remove_dir_all(&dir);
}
