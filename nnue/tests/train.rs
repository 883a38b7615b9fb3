//! Training: analytic gradients equal finite differences; training lowers the held-out loss.

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_nnue::train::{gradients, mean_loss, value_to_score, AdamConfig, Sample, Trainer};
use vzero_nnue::{Bucket, FloatNetwork, NET_TO_INTERNAL};

const DIMS: usize = 96;

/// A small random net whose activations sit mostly inside the clipped ReLUs' linear range.
fn tiny_net(seed: u64) -> FloatNetwork {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut net = FloatNetwork::zeroed(DIMS);
    net.ft_bias_mut().iter_mut().for_each(|w| *w = rng.gen_range(0.3..0.7));
    net.ft_weight_mut().iter_mut().for_each(|w| *w = rng.gen_range(-0.06..0.06));
    net.psqt_mut().iter_mut().for_each(|w| *w = rng.gen_range(-0.3..0.3));
    for s in net.stacks_mut() {
        s.l1_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.04..0.04));
        s.l1_bias.iter_mut().for_each(|w| *w = rng.gen_range(0.3..0.7));
        s.l2_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.15..0.15));
        s.l2_bias.iter_mut().for_each(|w| *w = rng.gen_range(0.3..0.7));
        s.out_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.5..0.5));
        s.out_bias = rng.gen_range(-0.2..0.2);
    }
    net
}

fn tiny_samples(n: usize, seed: u64) -> Vec<Sample> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut pick = |k: usize| {
                let mut v: Vec<u32> = (0..DIMS as u32).collect();
                for i in 0..k {
                    let j = rng.gen_range(i..DIMS);
                    v.swap(i, j);
                }
                v.truncate(k);
                v
            };
            let (us, them) = (pick(12), pick(12));
            Sample {
                us,
                them,
                bucket: Bucket::new(rng.gen_range(0..8)),
                score: rng.gen_range(-800.0..800.0),
                result: [-1.0, 0.0, 1.0][rng.gen_range(0..3)],
            }
        })
        .collect()
}

/// Checks d loss / d w of one weight against central differences; `None` when the weight
/// sits at a kink of a clipped ReLU (one-sided differences disagree).
fn check(
    name: &str,
    net: &mut FloatNetwork,
    batch: &[Sample],
    analytic: f32,
    w: impl Fn(&mut FloatNetwork) -> &mut f32,
) -> bool {
    let lambda = 0.6;
    let h = 2e-3f32;
    let loss = |net: &FloatNetwork| mean_loss(net, batch, lambda, 1) as f64;
    let w0 = *w(net);
    let l0 = loss(net);
    *w(net) = w0 + h;
    let lp = loss(net);
    *w(net) = w0 - h;
    let lm = loss(net);
    *w(net) = w0;
    let (fwd, bwd) = ((lp - l0) / h as f64, (l0 - lm) / h as f64);
    let numeric = (lp - lm) / (2.0 * h as f64);
    if (fwd - bwd).abs() > 0.2 * fwd.abs().max(bwd.abs()) + 1e-4 {
        return false; // a kink
    }
    let tol = 0.03 * numeric.abs().max(analytic.abs() as f64) + 2e-5;
    assert!((numeric - analytic as f64).abs() <= tol, "{name}: analytic {analytic} numeric {numeric}");
    true
}

#[test]
fn analytic_gradients_equal_finite_differences() {
    let mut net = tiny_net(1);
    let batch = tiny_samples(12, 2);
    let refs: Vec<&Sample> = batch.iter().collect();
    let g = gradients(&net, &refs, 0.6, 2);
    let b = batch[0].bucket.index();
    let mut checked = 0;
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..6 {
        let o = rng.gen_range(0..16);
        let i = rng.gen_range(0..1024);
        checked += check("l1_weight", &mut net, &batch, g.dense.stacks[b].l1_weight[o * 1024 + i], |n| {
            &mut n.stacks_mut()[b].l1_weight[o * 1024 + i]
        }) as usize;
        checked +=
            check("l1_bias", &mut net, &batch, g.dense.stacks[b].l1_bias[o], |n| &mut n.stacks_mut()[b].l1_bias[o])
                as usize;
        let (o2, i2) = (rng.gen_range(0..32), rng.gen_range(0..16));
        checked += check("l2_weight", &mut net, &batch, g.dense.stacks[b].l2_weight[o2 * 16 + i2], |n| {
            &mut n.stacks_mut()[b].l2_weight[o2 * 16 + i2]
        }) as usize;
        checked +=
            check("l2_bias", &mut net, &batch, g.dense.stacks[b].l2_bias[o2], |n| &mut n.stacks_mut()[b].l2_bias[o2])
                as usize;
        checked += check("out_weight", &mut net, &batch, g.dense.stacks[b].out_weight[o2], |n| {
            &mut n.stacks_mut()[b].out_weight[o2]
        }) as usize;
        let j = rng.gen_range(0..512);
        checked += check("ft_bias", &mut net, &batch, g.dense.ft_bias[j], |n| &mut n.ft_bias_mut()[j]) as usize;
        // A row active as "us" in sample 0 and one active as "them".
        for f in [batch[0].us[rng.gen_range(0..12)], batch[0].them[rng.gen_range(0..12)]] {
            let (row, prow) = g.ft_row(f);
            let f = f as usize;
            checked += check("ft_weight", &mut net, &batch, row[j], |n| &mut n.ft_weight_mut()[f * 512 + j]) as usize;
            let k = rng.gen_range(0..8);
            checked += check("psqt", &mut net, &batch, prow[k], |n| &mut n.psqt_mut()[f * 8 + k]) as usize;
        }
    }
    checked +=
        check("out_bias", &mut net, &batch, g.dense.stacks[b].out_bias, |n| &mut n.stacks_mut()[b].out_bias) as usize;
    assert!(checked >= 50, "only {checked} weights away from kinks");
    // The loss the gradients report is the mean loss.
    assert!((g.loss - mean_loss(&net, &batch, 0.6, 1)).abs() < 1e-5);
    // Untouched rows have zero gradient and are not listed.
    let touched = g.touched_rows();
    assert!(touched.windows(2).all(|w| w[0] < w[1]));
    for f in 0..DIMS as u32 {
        if !touched.contains(&f) {
            assert!(g.ft_row(f).0.iter().all(|&x| x == 0.0));
        }
    }
}

#[test]
fn forward_sample_equals_forward() {
    let (v, m) = common::mapping("shogun");
    let net = FloatNetwork::init(&m, 5);
    for pos in common::random_positions(v, 50, 6) {
        let f = m.features(&pos).unwrap();
        let s = Sample::new(&f, 0.0, 0.0);
        let (a, b) = (net.forward(&f).unwrap(), net.forward_sample(&s));
        assert!((a - b).abs() < 1e-4, "{a} {b}");
    }
}

#[test]
fn a_step_changes_only_touched_rows_and_clips() {
    let net = tiny_net(7);
    let batch = tiny_samples(4, 8);
    let refs: Vec<&Sample> = batch.iter().collect();
    let mut t = Trainer::new(net.clone(), AdamConfig { lr: 10.0, ..AdamConfig::default() }, 2);
    let g = gradients(&t.net, &refs, 0.5, 2);
    let touched = g.touched_rows();
    t.apply(&g);
    assert_eq!(t.step, 1);
    for f in 0..DIMS {
        let changed = t.net.ft_weight()[f * 512..(f + 1) * 512] != net.ft_weight()[f * 512..(f + 1) * 512];
        assert_eq!(changed, touched.contains(&(f as u32)), "row {f}");
    }
    for s in t.net.stacks() {
        assert!(s.l1_weight.iter().all(|w| w.abs() <= 127.0 / 64.0));
        assert!(s.out_weight.iter().all(|w| w.abs() <= 127.0 * 127.0 / 9600.0));
    }
}

#[test]
fn value_to_score_inverts_the_sigmoid() {
    for v in [-0.9f32, -0.3, 0.0, 0.5, 0.95] {
        let s = value_to_score(v, 10_000.0);
        let p = 1.0 / (1.0 + (-s / 410.0).exp());
        assert!((p - (v + 1.0) / 2.0).abs() < 1e-4);
    }
    assert_eq!(value_to_score(1.0, 3000.0), 3000.0);
    assert_eq!(value_to_score(-1.0, 3000.0), -3000.0);
}

/// From a random init without the material PSQT, training on random empire positions whose
/// targets are the material balance lowers the loss on held-out positions clearly.
#[test]
fn training_lowers_the_held_out_loss() {
    let (v, m) = common::mapping("empire");
    let material = FloatNetwork::material(&m);
    let positions = common::random_positions(v, 6000, 11);
    let samples: Vec<Sample> = positions
        .iter()
        .filter(|p| !p.is_check())
        .map(|p| {
            let f = m.features(p).unwrap();
            let score = material.forward(&f).unwrap() * NET_TO_INTERNAL;
            let result = if score > 300.0 {
                1.0
            } else if score < -300.0 {
                -1.0
            } else {
                0.0
            };
            Sample::new(&f, score, result)
        })
        .collect();
    // Hold out every fifth game-ish block (positions of one random game are consecutive).
    let (train, held): (Vec<_>, Vec<_>) = samples.iter().enumerate().partition(|(i, _)| (i / 100) % 5 != 0);
    let train: Vec<&Sample> = train.into_iter().map(|(_, s)| s).collect();
    let held: Vec<Sample> = held.into_iter().map(|(_, s)| s.clone()).collect();
    let mut net = FloatNetwork::init(&m, 12);
    net.psqt_mut().fill(0.0);
    let lambda = 0.8;
    let mut t = Trainer::new(net, AdamConfig { lr: 2e-3, ..AdamConfig::default() }, 2);
    let before = mean_loss(&t.net, &held, lambda, 2);
    let mut rng = StdRng::seed_from_u64(13);
    let start = std::time::Instant::now();
    for _ in 0..300 {
        let batch: Vec<&Sample> = (0..256).map(|_| train[rng.gen_range(0..train.len())]).collect();
        t.step(&batch, lambda);
    }
    let secs = start.elapsed().as_secs_f64();
    let after = mean_loss(&t.net, &held, lambda, 2);
    eprintln!("held-out loss {before:.5} -> {after:.5}; {:.0} positions/s", t.positions as f64 / secs);
    assert!(after < 0.7 * before, "held-out loss {before} -> {after}");
}

/// The virtual factoriser: gradients of virtual rows equal finite differences, a step moves
/// them, and the folded net (what is exported) computes exactly the factored net's function.
#[test]
fn factorised_rows_have_exact_gradients_and_fold_into_the_same_function() {
    const F: usize = 24; // DIMS = 4 king blocks of 24
    let mut rng = StdRng::seed_from_u64(11);
    let mut net = tiny_net(5).with_factorizer(F);
    assert_eq!((net.dimensions(), net.factor(), net.rows()), (DIMS, F, DIMS + F));
    // random virtual rows (they start at zero: the same function)
    for w in &mut net.ft_weight_mut()[DIMS * 512..] {
        *w = rng.gen_range(-0.05..0.05);
    }
    for w in &mut net.psqt_mut()[DIMS * 8..] {
        *w = rng.gen_range(-0.2..0.2);
    }
    let batch = tiny_samples(10, 6);
    let refs: Vec<&Sample> = batch.iter().collect();
    let g = gradients(&net, &refs, 0.6, 2);
    let touched = g.touched_rows();
    let virtuals: Vec<u32> = touched.iter().copied().filter(|&r| r as usize >= DIMS).collect();
    assert!(!virtuals.is_empty() && virtuals.iter().all(|&r| (r as usize) < DIMS + F));
    let mut checked = 0;
    for &v in virtuals.iter().take(6) {
        let (row, prow) = g.ft_row(v);
        let (j, k, r) = (rng.gen_range(0..512), rng.gen_range(0..8), v as usize);
        checked += check("virtual ft_weight", &mut net, &batch, row[j], |n| &mut n.ft_weight_mut()[r * 512 + j]) as usize;
        checked += check("virtual psqt", &mut net, &batch, prow[k], |n| &mut n.psqt_mut()[r * 8 + k]) as usize;
    }
    assert!(checked >= 6, "only {checked} weights away from kinks");
    // folded: the same outputs, no virtual rows
    let folded = net.folded();
    assert_eq!((folded.dimensions(), folded.factor(), folded.rows()), (DIMS, 0, DIMS));
    for s in &batch {
        let (a, b) = (net.forward_sample(s), folded.forward_sample(s));
        assert!((a - b).abs() < 1e-4, "{a} vs {b}");
    }
    // a trainer step moves the touched virtual rows and keeps the shapes
    let mut t = Trainer::new(tiny_net(5), AdamConfig::default(), 2).with_factorizer(F);
    assert_eq!(t.moments.m.rows(), DIMS + F);
    let before = t.net.clone();
    t.step(&refs, 0.6);
    let r = virtuals[0] as usize;
    assert_ne!(before.ft_weight()[r * 512..(r + 1) * 512], t.net.ft_weight()[r * 512..(r + 1) * 512]);
}
