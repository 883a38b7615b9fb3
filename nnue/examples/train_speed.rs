//! CPU training speed: `cargo run --release -p vzero-nnue --example train_speed [variant]
//! [batches] [steps] [threads] [factoriser]` trains on positions from random play (targets: the
//! material balance) and prints training positions per second (forward, backward, sparse Adam,
//! clip), median of 5 rounds, for each batch size of the comma-separated `batches` (default
//! `1024`) with its ratio to the first, and the evaluation speed of the float net. The
//! factoriser (`on`, the default, as `vzero nnue train` trains; `off`) doubles the rows a
//! position touches.

use std::time::Instant;
use vzero_nnue::train::{mean_loss, AdamConfig, Sample, Trainer};
use vzero_nnue::{FloatNetwork, FsfMapping, NET_TO_INTERNAL};
use vzero_rules::{Position, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).cloned().unwrap_or_else(|| "empire".into());
    let batches: Vec<usize> = args.get(2).map_or(vec![1024], |s| s.split(',').filter_map(|b| b.parse().ok()).collect());
    let steps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let threads: usize = args
        .get(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let factoriser = args.get(5).map_or(true, |s| s != "off");
    let v = Variant::builtin(&name).expect("variant");
    let m = FsfMapping::for_variant(v).expect("mapping");
    let material = FloatNetwork::material(&m);
    // 200,000 positions, so a batch of 16,384 is a small share of them (as of a real run's)
    let mut samples = Vec::new();
    let mut pos = Position::startpos(v);
    let mut x = 12345u64;
    let mut ply = 0;
    while samples.len() < 200_000 {
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
    let mut first = None;
    let mut trainer = None;
    for &batch in &batches {
        let mut t = Trainer::new(FloatNetwork::init(&m, 1), AdamConfig::default(), threads);
        if factoriser {
            t = t.with_factorizer(m.piece_indices());
        }
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
        let ratio = first.map_or(String::new(), |f: f64| format!("; {:.2}x batch {}", rates[2] / f, batches[0]));
        first.get_or_insert(rates[2]);
        println!(
            "{name}: training {:.0} positions/s (median of 5 x {steps} steps of {batch}, {threads} threads, factoriser {}; min {:.0}, max {:.0}){ratio}",
            rates[2],
            if factoriser { "on" } else { "off" },
            rates[0],
            rates[4]
        );
        trainer = Some(t);
    }
    let Some(t) = trainer else { return };
    let t0 = Instant::now();
    let l = mean_loss(&t.net, &samples[..50_000], 0.5, threads);
    let eval_rate = 50_000.0 / t0.elapsed().as_secs_f64();
    println!("{name}: float forward {eval_rate:.0} positions/s; loss {l:.4}");
}
