//! Accuracy of the fused inference path against the reference forward pass:
//! `cargo run --release -p vzero-model --example nnacc -- [options]`.
//!
//! Positions come from random games of the variant (every ply, a new game after the end or
//! `--max-plies`); each batch is evaluated by `Model::evaluate_reference_into` (unfused f32) and
//! by `Model::evaluate_into` in f32 and in BF16. Prints, per precision, the max and mean absolute
//! difference of the legal-move probabilities, of W/D/L, of the value W-L and of moves-left
//! (plies), and how often the most probable move differs.
//!
//! Options: --variant empire  --checkpoint PATH (default: a fresh net with randomised BN
//!          statistics)  --positions 4096  --batch 32  --max-plies 200  --seed 1

use vzero_model::{
    device, fresh_model, net_config, random_positions, Device, Evaluation, InferencePrecision,
    LegalMoves, Model,
};
use vzero_rules::Variant;

#[derive(Default)]
struct Diff {
    max_p: f32,
    sum_p: f64,
    n_p: usize,
    max_wdl: f32,
    max_value: f32,
    max_ml: f32,
    argmax_diff: usize,
    /// Largest reference-probability loss of the fused argmax move vs the reference argmax.
    max_regret: f32,
    /// Argmax differences where the reference's top move leads by more than 0.01.
    argmax_diff_clear: usize,
    positions: usize,
}

fn argmax(v: &[f32]) -> usize {
    v.iter()
        .enumerate()
        .fold((0, f32::NEG_INFINITY), |(bi, bv), (i, &x)| {
            if x > bv {
                (i, x)
            } else {
                (bi, bv)
            }
        })
        .0
}

impl Diff {
    fn add(&mut self, r: &Evaluation, e: &Evaluation) {
        for (a, b) in r.policy.iter().zip(&e.policy) {
            let d = (a - b).abs();
            self.max_p = self.max_p.max(d);
            self.sum_p += d as f64;
            self.n_p += 1;
        }
        for i in 0..r.len() {
            for k in 0..3 {
                self.max_wdl = self.max_wdl.max((r.wdl[i][k] - e.wdl[i][k]).abs());
            }
            self.max_value = self.max_value.max((r.value(i) - e.value(i)).abs());
            let (ra, ea) = (argmax(r.policy(i)), argmax(e.policy(i)));
            if ra != ea {
                self.argmax_diff += 1;
                let regret = r.policy(i)[ra] - r.policy(i)[ea];
                self.max_regret = self.max_regret.max(regret);
                if regret > 0.01 {
                    self.argmax_diff_clear += 1;
                }
            }
            self.positions += 1;
        }
        for (a, b) in r.moves_left.iter().zip(&e.moves_left) {
            self.max_ml = self.max_ml.max((a - b).abs());
        }
    }
}

fn main() {
    let mut variant = "empire".to_string();
    let mut checkpoint = None;
    let (mut positions, mut batch, mut max_plies, mut seed) = (4096usize, 32usize, 200usize, 1u64);
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let v = pair.get(1).cloned().unwrap_or_default();
        match pair[0].as_str() {
            "--variant" => variant = v,
            "--checkpoint" => checkpoint = Some(v),
            "--positions" => positions = v.parse().expect("--positions N"),
            "--batch" => batch = v.parse().expect("--batch N"),
            "--max-plies" => max_plies = v.parse().expect("--max-plies N"),
            "--seed" => seed = v.parse().expect("--seed N"),
            other => panic!("unknown option {other}"),
        }
    }
    device::set_threads(1);
    let v = Variant::builtin(&variant).unwrap_or_else(|e| panic!("{e}"));
    let model: Model = match &checkpoint {
        Some(p) => {
            let (m, meta) = vzero_model::checkpoint::load(
                std::path::Path::new(p),
                &vzero_model::expected(v),
                Device::Cpu,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            println!("checkpoint {p}: step {}", meta.step);
            m
        }
        None => {
            let cfg = net_config(v, 4, 32).expect("config");
            let m = fresh_model(v, &cfg, Device::Cpu, seed).expect("model");
            tch::manual_seed(seed as i64);
            tch::no_grad(|| {
                for (k, mut t) in m.var_store().variables() {
                    if k.ends_with("running_var") {
                        let _ = t.uniform_(0.5, 2.0);
                    } else if k.ends_with("running_mean")
                        || (k.contains("bn") && k.ends_with("bias"))
                    {
                        let _ = t.uniform_(-0.3, 0.3);
                    } else if k.contains("bn") && k.ends_with("weight") {
                        let _ = t.uniform_(0.5, 1.5);
                    }
                }
            });
            m.refold();
            println!("fresh 4x32 net (seed {seed}) with randomised BN statistics");
            m
        }
    };
    let (all_planes, all_legal) = random_positions(v, positions, max_plies, seed);
    let per = model.config().input_len();
    let (mut f32d, mut bf16d) = (Diff::default(), Diff::default());
    let (mut r, mut e) = (Evaluation::default(), Evaluation::default());
    let mut done = 0;
    while done < positions {
        let b = batch.min(positions - done);
        let planes = &all_planes[done * per..(done + b) * per];
        let mut legal = LegalMoves::new();
        for i in done..done + b {
            legal.push(all_legal.get(i));
        }
        model
            .evaluate_reference_into(planes, None, &legal, &mut r)
            .expect("reference");
        for (p, d) in [
            (InferencePrecision::F32, &mut f32d),
            (InferencePrecision::Bf16, &mut bf16d),
        ] {
            model.set_inference_precision(p);
            model
                .evaluate_into(planes, None, &legal, &mut e)
                .expect("fused");
            d.add(&r, &e);
        }
        done += b;
    }
    println!("{variant}: {done} positions of random games, batch {batch}");
    println!("| path | max abs dp | mean abs dp | max abs dW/D/L | max abs d(W-L) | max abs d moves-left (plies) | argmax differs | of which ref gap > 0.01 | max ref-prob loss |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, d) in [("fused f32", &f32d), ("fused bf16", &bf16d)] {
        println!(
            "| {name} | {:.2e} | {:.2e} | {:.2e} | {:.2e} | {:.2e} | {} / {} ({:.2} %) | {} | {:.3} |",
            d.max_p,
            d.sum_p / d.n_p.max(1) as f64,
            d.max_wdl,
            d.max_value,
            d.max_ml,
            d.argmax_diff,
            d.positions,
            100.0 * d.argmax_diff as f64 / d.positions.max(1) as f64,
            d.argmax_diff_clear,
            d.max_regret
        );
    }
}
