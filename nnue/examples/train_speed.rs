//! CPU training speed: `cargo run --release -p vzero-nnue --example train_speed [variant]
//! [batch] [steps] [threads]` trains on positions from random play (targets: the material
//! balance) and prints training positions per second (forward, backward, sparse Adam, clip),
//! median of 5 rounds, and the evaluation speed of the float net.

use std::time::Instant;
use vzero_nnue::train::{mean_loss, AdamConfig, Sample, Trainer};
use vzero_nnue::{FloatNetwork, FsfMapping, NET_TO_INTERNAL};
use vzero_rules::{Position, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).cloned().unwrap_or_else(|| "empire".into());
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let steps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let threads: usize = args
        .get(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let v = Variant::builtin(&name).expect("variant");
    let m = FsfMapping::for_variant(v).expect("mapping");
    let material = FloatNetwork::material(&m);
    let mut samples = Vec::new();
    let mut pos = Position::startpos(v);
    let mut x = 12345u64;
    let mut ply = 0;
    while samples.len() < 50_000 {
        let moves = pos.legal_moves();
        if moves.is_empty() || ply >= 100 || pos.flag_reached() {
            pos = Position::startpos(v);
            ply = 0;
            continue;
        }
        ply += 1;
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        pos.play(moves[(x >> 33) as usize % moves.len()]);
        if pos.is_check() {
            continue;
        }
        if let Ok(f) = m.features(&pos) {
            let score = material.forward(&f).unwrap() * NET_TO_INTERNAL;
            samples.push(Sample::new(&f, score, score.signum()));
        }
    }
    let mut t = Trainer::new(FloatNetwork::init(&m, 1), AdamConfig::default(), threads);
    let mut rates = Vec::new();
    let mut k = 0;
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..steps {
            let b: Vec<&Sample> = (0..batch).map(|i| &samples[(k + i * 7919) % samples.len()]).collect();
            k += batch;
            t.step(&b, 0.5);
        }
        rates.push((steps * batch) as f64 / t0.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let t0 = Instant::now();
    let l = mean_loss(&t.net, &samples, 0.5, threads);
    let eval_rate = samples.len() as f64 / t0.elapsed().as_secs_f64();
    println!(
        "{name}: training {:.0} positions/s (median of 5 x {steps} steps of {batch}, {threads} threads; min {:.0}, max {:.0}); float forward {:.0} positions/s; loss {l:.4}",
        rates[2], rates[0], rates[4], eval_rate
    );
}
