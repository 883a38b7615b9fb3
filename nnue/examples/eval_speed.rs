//! Integer evaluation speed: `cargo run --release -p vzero-nnue --example eval_speed [variant]`
//! evaluates positions from random play with a random net and prints positions per second
//! (features and a full accumulator refresh per position).

use std::time::Instant;
use vzero_nnue::{Arithmetic, Evaluator, FloatNetwork, FsfMapping, PositionFeatures};
use vzero_rules::{Position, Variant};

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "shogun".into());
    let v = Variant::builtin(&name).expect("variant");
    let m = FsfMapping::for_variant(v).expect("mapping");
    let net = FloatNetwork::init(&m, 1).quantize("speed").expect("net");
    // Positions from a deterministic pseudo-random walk.
    let mut positions = Vec::new();
    let mut pos = Position::startpos(v);
    let mut x = 12345u64;
    while positions.len() < 10_000 {
        let moves = pos.legal_moves();
        if moves.is_empty() || positions.len() % 100 == 99 || pos.flag_reached() {
            pos = Position::startpos(v);
        } else {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos.play(moves[(x >> 33) as usize % moves.len()]);
        }
        positions.push(pos);
    }
    for arith in [Arithmetic::Ssse3, Arithmetic::Exact] {
        let e = Evaluator::new(m.clone(), net.clone()).expect("evaluator").with_arithmetic(arith);
        let mut scratch = PositionFeatures::default();
        let mut best = f64::MAX;
        let mut check = 0i64;
        for _ in 0..5 {
            let t = Instant::now();
            for p in &positions {
                check += e.evaluate_into(p, &mut scratch).map(|r| r.value as i64).unwrap_or(0);
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name} {arith:?}: {:.0} positions/s (best of 5 over {} positions; checksum {check})",
            positions.len() as f64 / best,
            positions.len()
        );
    }
}
