//! Side-by-side harness for `scripts/nn-compare.sh`: inference positions/s of `Model::evaluate_into`
//! on positions of random games of a variant's real net, measured as wall-clock and as this
//! thread's CPU time (`/proc/thread-self/schedstat`, so time spent preempted by other processes
//! does not count). Uses only API that predates the fused inference path, so the same file
//! builds against older commits.
//!
//! Options: --variant empire  --nets 4x32  --batches 1,8,32,128  --reps 3  --label new
//!          --positions N (fixed work: N positions per rep and batch instead of ~0.25 s, e.g.
//!          for `perf stat` cycle counts)
//! Output: one `RESULT <label> <net> <batch> <wall pos/s> <cpu pos/s>` line per rep and batch.

use std::time::Instant;

use vzero_encoding::{InputEncoder, MoveEncoder};
use vzero_model::{device, fresh_model, net_config, Device, Evaluation, LegalMoves};
use vzero_rules::{Game, Variant};

/// Nanoseconds this thread has run on a CPU (0 where schedstat is unavailable).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|t| t.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let (mut variant, mut nets, mut batches, mut reps, mut label) = (
        "empire".to_string(),
        vec![(4usize, 32usize)],
        vec![1usize, 8, 32, 128],
        3usize,
        "run".to_string(),
    );
    let mut fixed: Option<usize> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let v = pair.get(1).cloned().unwrap_or_default();
        match pair[0].as_str() {
            "--variant" => variant = v,
            "--nets" => {
                nets = v
                    .split(',')
                    .map(|n| {
                        let (b, c) = n.split_once('x').expect("--nets BxC");
                        (b.parse().expect("blocks"), c.parse().expect("channels"))
                    })
                    .collect()
            }
            "--batches" => batches = v.split(',').map(|b| b.parse().expect("batch")).collect(),
            "--reps" => reps = v.parse().expect("--reps N"),
            "--label" => label = v,
            "--positions" => fixed = Some(v.parse().expect("--positions N")),
            other => panic!("unknown option {other}"),
        }
    }
    device::set_threads(1);
    let v = Variant::builtin(&variant).unwrap_or_else(|e| panic!("{e}"));
    let input = InputEncoder::new(v);
    let moves = MoveEncoder::new(v);
    let max_b = batches.iter().copied().max().unwrap_or(1);
    let (mut planes, mut legal) = (Vec::new(), LegalMoves::new());
    let mut game = Game::startpos(v);
    let mut k = 0x2545_f491_4f6c_dd1du64;
    while legal.len() < max_b {
        if game.result().is_over() || game.moves().len() >= 200 {
            game = Game::startpos(v);
        }
        let pos = *game.position();
        planes.extend(input.encode(&pos, game.repetitions()));
        legal.push_iter(moves.legal_indices(&pos).into_iter().map(|(i, _)| i as u32));
        let ms = pos.legal_moves();
        k ^= k << 13;
        k ^= k >> 7;
        k ^= k << 17;
        game.play(ms[(k >> 33) as usize % ms.len()]);
    }
    let per = input.size();
    for &(blocks, channels) in &nets {
        let cfg = net_config(v, blocks, channels).expect("config");
        let model = fresh_model(v, &cfg, Device::Cpu, 1).expect("model");
        let mut out = Evaluation::default();
        for _ in 0..reps {
            for &b in &batches {
                let mut lm = LegalMoves::new();
                for i in 0..b {
                    lm.push(legal.get(i));
                }
                let x = &planes[..b * per];
                let mut run = || {
                    model
                        .evaluate_into(x, None, &lm, &mut out)
                        .expect("evaluate")
                };
                run();
                let t = Instant::now();
                run();
                let calls = match fixed {
                    Some(n) => n.div_ceil(b),
                    None => ((0.25 / t.elapsed().as_secs_f64().max(1e-6)).ceil() as usize)
                        .clamp(1, 10_000),
                };
                let (t, c) = (Instant::now(), thread_cpu_ns());
                for _ in 0..calls {
                    run();
                }
                let wall = t.elapsed().as_secs_f64();
                let cpu = (thread_cpu_ns() - c) as f64 / 1e9;
                let n = (calls * b) as f64;
                println!(
                    "RESULT {label} {blocks}x{channels} {b} {:.1} {:.1}",
                    n / wall,
                    if cpu > 0.0 { n / cpu } else { 0.0 }
                );
            }
        }
    }
}
