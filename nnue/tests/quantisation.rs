//! The integer forward pass against an independent reference, the quantised net against the
//! float net, and the two hidden-layer arithmetics.

mod common;

use common::{mapping, random_positions};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_nnue::layers::{Affine, HIDDEN1, HIDDEN2, STACK_INPUTS};
use vzero_nnue::{Arithmetic, FloatNetwork, FsfMapping, Network, PositionFeatures, NET_TO_INTERNAL};
use vzero_rules::Color;

/// A float net with trained-net-like magnitudes: material PSQT plus noise, feature transformer
/// weights of a few hundredths, hidden and output weights well inside the clipping range.
fn random_float_net(m: &FsfMapping, seed: u64) -> FloatNetwork {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut net = FloatNetwork::material(m);
    net.ft_bias_mut().iter_mut().for_each(|w| *w = rng.gen_range(-0.1..0.5));
    net.ft_weight_mut().iter_mut().for_each(|w| *w = rng.gen_range(-0.06..0.06));
    net.psqt_mut().iter_mut().for_each(|w| *w += rng.gen_range(-0.05..0.05));
    for s in net.stacks_mut() {
        s.l1_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.12..0.12));
        s.l1_bias.iter_mut().for_each(|w| *w = rng.gen_range(-0.1..0.3));
        s.l2_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.5..0.5));
        s.l2_bias.iter_mut().for_each(|w| *w = rng.gen_range(-0.1..0.3));
        s.out_weight.iter_mut().for_each(|w| *w = rng.gen_range(-0.5..0.5));
        s.out_bias = rng.gen_range(-0.1..0.1);
    }
    net
}

/// Fairy-Stockfish's integer evaluation written out plainly, from the net's accessors.
fn reference_eval(net: &Network, f: &PositionFeatures) -> i32 {
    let ft = net.feature_transformer();
    let us = f.side_to_move();
    let b = f.bucket().index();
    let mut input = vec![0u8; 1024];
    let mut psqt = [0i32; 2];
    for (half, c) in [us, us.flip()].into_iter().enumerate() {
        for j in 0..512 {
            let mut acc = ft.biases()[j];
            for &i in f.perspective(c) {
                acc = acc.wrapping_add(ft.weights()[i as usize * 512 + j]);
            }
            input[half * 512 + j] = acc.clamp(0, 127) as u8;
        }
        psqt[half] = f.perspective(c).iter().map(|&i| ft.psqt()[i as usize * 8 + b]).sum();
    }
    let stack = &net.stacks()[b];
    let layer = |a: &Affine, x: &[u8]| -> Vec<i32> {
        (0..a.outputs())
            .map(|o| a.biases()[o] + (0..a.inputs()).map(|i| a.weight(o, i) as i32 * x[i] as i32).sum::<i32>())
            .collect()
    };
    let relu = |v: Vec<i32>| -> Vec<u8> { v.into_iter().map(|x| (x >> 6).clamp(0, 127) as u8).collect() };
    let h1 = relu(layer(stack.hidden1(), &input));
    let h2 = relu(layer(stack.hidden2(), &h1));
    let positional = layer(stack.output(), &h2)[0];
    ((psqt[0] - psqt[1]) / 2 + positional) / 16
}

#[test]
fn integer_forward_pass_matches_a_plain_reference() {
    for (name, seed) in [("empire", 3), ("shogun", 4)] {
        let (v, m) = mapping(name);
        let net = random_float_net(&m, seed).quantize("test").unwrap();
        assert!(!net.may_saturate());
        for pos in random_positions(v, 60, seed) {
            let f = m.features(&pos).unwrap();
            let e = net.evaluate(&f).unwrap();
            assert_eq!(e.value, reference_eval(&net, &f), "{name} {}", pos.fen());
            assert_eq!(e.value, net.evaluate_with(&f, Arithmetic::Exact).unwrap().value);
        }
    }
}

/// Tolerances, in internal units (an endgame pawn is 208), on 500 random-play positions per
/// variant with evaluations spread over several pawns: the integer net against the float net
/// it was quantised from at most 160 (mean 48; measured 77 and 24 for empire, 129 and 35
/// for shogun, 1.5-2 % of the mean |eval|): weight rounding shifts each hidden unit a
/// little, the same way on every position; against the float net of its own (dequantised)
/// weights, where only the activations' rounding differs, at most 24 (mean 6; measured 17 and 3.9, 11 and 3.0).
#[test]
fn quantised_net_stays_close_to_the_float_net() {
    for (name, seed) in [("empire", 11), ("shogun", 12)] {
        let (v, m) = mapping(name);
        let float = random_float_net(&m, seed);
        let net = float.quantize("test").unwrap();
        let dequantised = net.to_float();
        let (mut max, mut sum, mut dmax, mut dsum, mut spread) = (0f32, 0f32, 0f32, 0f32, 0f32);
        let positions = random_positions(v, 500, seed);
        for pos in &positions {
            let f = m.features(pos).unwrap();
            let q = net.evaluate(&f).unwrap().value as f32;
            let x = float.forward(&f).unwrap() * NET_TO_INTERNAL;
            let d = dequantised.forward(&f).unwrap() * NET_TO_INTERNAL;
            (max, sum, spread) = (max.max((x - q).abs()), sum + (x - q).abs(), spread + x.abs());
            (dmax, dsum) = (dmax.max((d - q).abs()), dsum + (d - q).abs());
        }
        let n = positions.len() as f32;
        let (mean, dmean) = (sum / n, dsum / n);
        eprintln!(
            "{name}: float max {max:.1} mean {mean:.1}; dequantised max {dmax:.1} mean {dmean:.1}; mean |eval| {:.0}",
            spread / n
        );
        assert!(max <= 160.0 && mean <= 48.0, "{name}: max {max} mean {mean}");
        assert!(dmax <= 24.0 && dmean <= 6.0, "{name}: dequantised max {dmax} mean {dmean}");
        // Dequantising and quantising again gives back the same integer net.
        assert_eq!(dequantised.quantize("test").unwrap(), net);
    }
}

#[test]
fn material_float_net_quantises_to_the_material_net() {
    for name in ["empire", "shogun"] {
        let (v, m) = mapping(name);
        let mut q = FloatNetwork::material(&m).quantize("").unwrap();
        let mut i = Network::material(&m);
        q.set_description("");
        i.set_description("");
        assert_eq!(q, i, "{name}");
        let f = m.features(&vzero_rules::Position::startpos(v)).unwrap();
        let x = FloatNetwork::material(&m).forward(&f).unwrap() * NET_TO_INTERNAL;
        assert!((x - i.evaluate(&f).unwrap().value as f32).abs() < 0.5);
    }
}

/// A hidden layer whose four-product lanes leave the i16 range: the SSSE3 builds saturate,
/// the exact builds do not.
#[test]
fn ssse3_arithmetic_saturates_four_product_lanes() {
    let w = vec![127i8; HIDDEN1 * 1024];
    let a = Affine::new(STACK_INPUTS, HIDDEN1, vec![0; HIDDEN1], w).unwrap();
    assert!(a.may_saturate());
    let input = [127u8; 1024];
    let mut exact = [0i32; HIDDEN1];
    let mut ssse3 = [0i32; HIDDEN1];
    a.propagate(&input, &mut exact, Arithmetic::Exact);
    a.propagate(&input, &mut ssse3, Arithmetic::Ssse3);
    assert_eq!(exact[0], 1024 * 127 * 127);
    // 64 groups of four lanes, each lane 4·127·127 = 64516 saturated to 32767.
    assert_eq!(ssse3[0], 64 * 4 * 32767);
    // One lane: inputs 0, 1, 4, 5 of a group are summed together; 2, 3, 6, 7 apart.
    let mut x = [0u8; 1024];
    x[0] = 127;
    x[1] = 127;
    x[4] = 127;
    x[2] = 127;
    a.propagate(&x, &mut ssse3, Arithmetic::Ssse3);
    assert_eq!(ssse3[0], 32767 + 127 * 127);
    let small = Affine::new(HIDDEN1, HIDDEN2, vec![0; HIDDEN2], vec![64i8; HIDDEN2 * 32]).unwrap();
    assert!(!small.may_saturate());
}

/// Updating an accumulator with the features a move removes and adds equals a refresh.
#[test]
fn incremental_updates_equal_a_refresh() {
    use vzero_nnue::Accumulator;
    let (v, m) = mapping("shogun");
    let net = random_float_net(&m, 5).quantize("t").unwrap();
    let ft = net.feature_transformer();
    let positions = random_positions(v, 80, 5);
    for w in positions.windows(2) {
        let (a, b) = (m.features(&w[0]).unwrap(), m.features(&w[1]).unwrap());
        for c in Color::ALL {
            let (fa, fb) = (a.perspective(c), b.perspective(c));
            let mut acc = Accumulator::default();
            ft.refresh(fa, &mut acc);
            fa.iter().filter(|f| !fb.contains(f)).for_each(|&f| ft.sub(f, &mut acc));
            fb.iter().filter(|f| !fa.contains(f)).for_each(|&f| ft.add(f, &mut acc));
            let mut fresh = Accumulator::default();
            ft.refresh(fb, &mut fresh);
            assert_eq!((acc.values, acc.psqt), (fresh.values, fresh.psqt));
        }
    }
}
