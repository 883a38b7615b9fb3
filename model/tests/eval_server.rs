//! The evaluation server: many threads' positions in shared forward passes give the answers
//! each thread's own network gives; a lone client is not held back by the batch wait; a bad
//! checkpoint is an error for its clients only; two networks in one batch stay apart.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use vzero_model::{checkpoint, checkpoint_info, fresh_model, net_config, random_positions, Device, EvalServer, Evaluation, LegalMoves, NetKey, ServerConfig};
use vzero_rules::Variant;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vzero-eval-server-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A saved 1x8 empire network (seeded) and its key.
fn saved_net(dir: &std::path::Path, seed: u64) -> (vzero_model::Model, Arc<NetKey>) {
    let variant = Variant::load("empire").unwrap();
    let cfg = net_config(variant, 1, 8).unwrap();
    let model = fresh_model(variant, &cfg, Device::Cpu, seed).unwrap();
    let path = dir.join(format!("gen-{seed:06}.json"));
    checkpoint::save(&model, &path, &checkpoint_info(variant, seed, 0, None)).unwrap();
    (model, Arc::new(NetKey { path, variant, device: Device::Cpu }))
}

/// `n` encoded positions (planes, legal moves), different per `seed`.
fn positions(n: usize, seed: u64) -> (Vec<f32>, LegalMoves) {
    random_positions(Variant::load("empire").unwrap(), n, 60, seed)
}

fn assert_close(a: &Evaluation, b: &Evaluation, what: &str) {
    assert_eq!(a.offsets, b.offsets, "{what}: offsets");
    assert_eq!(a.wdl.len(), b.wdl.len(), "{what}: positions");
    for (x, y) in a.policy.iter().zip(&b.policy).chain(a.wdl.iter().flatten().zip(b.wdl.iter().flatten())) {
        assert!((x - y).abs() < 1e-4, "{what}: {x} vs {y}");
    }
}

#[test]
fn batched_answers_equal_each_threads_own_and_batches_span_threads() {
    vzero_model::set_threads(1);
    let dir = tmpdir("equal");
    let (model, key) = saved_net(&dir, 3);
    // a long wait: every batch waits until all four clients are in
    let server = EvalServer::start(ServerConfig { executors: 1, max_batch: 4096, max_wait: Duration::from_secs(20), threads: 1 }).unwrap();
    let clients: Vec<_> = (0..4).map(|_| server.client()).collect();
    let expected: Vec<Vec<Evaluation>> = (0..4u64)
        .map(|c| (0..3u64).map(|r| { let (p, l) = positions(5 + c as usize, 10 * c + r); model.evaluate(&p, None, &l).unwrap() }).collect())
        .collect();
    let got: Vec<Vec<Evaluation>> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(c, mut client)| {
                let key = key.clone();
                s.spawn(move || {
                    (0..3u64)
                        .map(|r| {
                            let (mut p, mut l) = positions(5 + c, 10 * c as u64 + r);
                            let mut out = Evaluation::default();
                            client.evaluate(&key, &mut p, &mut l, &mut out).unwrap();
                            assert_eq!(l.len(), 5 + c, "the client's buffers come back");
                            out
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for c in 0..4 {
        for r in 0..3 {
            assert_close(&got[c][r], &expected[c][r], &format!("client {c} request {r}"));
        }
    }
    let stats = server.stats();
    // 12 requests of 5..8 positions: with every client waited for, 3 forward passes of 26
    assert_eq!(stats.requests.load(std::sync::atomic::Ordering::Relaxed), 12);
    assert_eq!(stats.positions.load(std::sync::atomic::Ordering::Relaxed), 3 * (5 + 6 + 7 + 8));
    assert_eq!(stats.forwards.load(std::sync::atomic::Ordering::Relaxed), 3, "one forward pass per round of the four clients");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lone_client_does_not_wait_for_the_batch() {
    vzero_model::set_threads(1);
    let dir = tmpdir("lone");
    let (_, key) = saved_net(&dir, 4);
    let server = EvalServer::start(ServerConfig { executors: 2, max_batch: 4096, max_wait: Duration::from_secs(30), threads: 1 }).unwrap();
    let mut client = server.client();
    let t = Instant::now();
    for r in 0..5 {
        let (mut p, mut l) = positions(8, r);
        let mut out = Evaluation::default();
        client.evaluate(&key, &mut p, &mut l, &mut out).unwrap();
        assert_eq!(out.len(), 8);
    }
    // five waits of the full 30 s would take 150 s; the only client is always "all clients"
    assert!(t.elapsed() < Duration::from_secs(20), "a lone client waited: {:?}", t.elapsed());
    // a second client that never asks holds the first one back by at most the wait
    let (mut p, mut l) = positions(4, 9);
    let mut out = Evaluation::default();
    let server2 = EvalServer::start(ServerConfig { executors: 1, max_batch: 4096, max_wait: Duration::from_millis(300), threads: 1 }).unwrap();
    let mut c2 = server2.client();
    let _idle2 = server2.client();
    let t = Instant::now();
    c2.evaluate(&key, &mut p, &mut l, &mut out).unwrap();
    assert!(t.elapsed() >= Duration::from_millis(300), "the batch waited for the other client: {:?}", t.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_checkpoint_fails_its_clients_only_and_two_networks_stay_apart() {
    vzero_model::set_threads(1);
    let dir = tmpdir("bad");
    let (model_a, key_a) = saved_net(&dir, 5);
    let (model_b, key_b) = saved_net(&dir, 6);
    let bad_path = dir.join("gen-000099.json");
    std::fs::write(&bad_path, "{ truncated").unwrap();
    let bad = Arc::new(NetKey { path: bad_path, variant: key_a.variant, device: Device::Cpu });
    let server = EvalServer::start(ServerConfig { executors: 1, max_batch: 4096, max_wait: Duration::from_secs(20), threads: 1 }).unwrap();
    let clients: Vec<_> = (0..3).map(|_| server.client()).collect();
    let keys = [key_a.clone(), key_b.clone(), bad.clone()];
    // all three in one batch (the wait holds it until the three are in)
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .into_iter()
            .zip(keys.iter().cloned())
            .map(|(mut client, key)| {
                s.spawn(move || {
                    let (mut p, mut l) = positions(6, 1);
                    let mut out = Evaluation::default();
                    client.evaluate(&key, &mut p, &mut l, &mut out).map(|_| out)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (p, l) = positions(6, 1);
    assert_close(results[0].as_ref().unwrap(), &model_a.evaluate(&p, None, &l).unwrap(), "network a");
    assert_close(results[1].as_ref().unwrap(), &model_b.evaluate(&p, None, &l).unwrap(), "network b");
    assert_ne!(results[0].as_ref().unwrap().wdl, results[1].as_ref().unwrap().wdl, "two different networks");
    let e = results[2].as_ref().unwrap_err().to_string();
    assert!(e.contains("gen-000099.json"), "the error names the checkpoint: {e}");
    // the server still serves
    let mut client = server.client();
    let (mut p2, mut l2) = positions(3, 2);
    let mut out = Evaluation::default();
    client.evaluate(&key_a, &mut p2, &mut l2, &mut out).unwrap();
    assert_eq!(out.len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
