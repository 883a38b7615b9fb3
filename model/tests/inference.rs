//! The fused inference path (`Model::evaluate*`: BN folded into the convs, channels-last, f32 or
//! BF16, legal-move policy readout) against the reference forward pass
//! (`Model::evaluate_reference_into`: `forward_t` in eval mode, unfused f32).

use tch::Tensor;
use vzero_model::checkpoint::{self, CheckpointInfo, Expected};
use vzero_model::{
    fresh_model, net_config, AuxHeads, Device, Evaluation, InferencePrecision, LegalMoves, Model, NetConfig,
    PolicyHead, PolicyTargets, TrainBatch, TrainConfig, Trainer,
};
use vzero_rules::Variant;

/// Tolerances against the reference (absolute): f32 is the same arithmetic reordered; BF16
/// rounds weights and activations to 8 significant bits (measured on the default 4x32 empire
/// net: policy 1.5e-2, W/D/L 1e-2, moves-left ~1-9 plies; the small nets here are similar).
const F32_PROB: f32 = 2e-5;
const F32_PLIES: f32 = 2e-3;
const BF16_PROB: f32 = 0.08;
const BF16_PLIES: f32 = 25.0;

mod common;
use common::Rng;

fn init() {
    vzero_model::set_threads(1);
}

/// Random BN statistics and affine parameters (as after training), so that folding matters.
fn randomise_bn(model: &Model, seed: i64) {
    vzero_model::device::with_torch_seed(seed as u64, || tch::no_grad(|| {
        for (name, mut t) in model.var_store().variables() {
            let bn = name.contains(".bn") || name.contains("bn1");
            if name.ends_with("running_var") {
                let _ = t.uniform_(0.3, 3.0);
            } else if name.ends_with("running_mean") || (bn && name.ends_with("bias")) {
                let _ = t.uniform_(-0.5, 0.5);
            } else if bn && name.ends_with("weight") {
                let _ = t.uniform_(0.5, 1.5);
            }
        }
    }));
    model.refold();
}

/// `n` positions of random games of `variant`: planes and legal move indices.
fn positions(variant: Variant, n: usize, seed: u64) -> (Vec<f32>, LegalMoves) {
    vzero_model::random_positions(variant, n, 120, seed)
}

/// Largest differences (policy probability, W/D/L probability, moves-left plies) and the
/// number of positions whose most probable move differs by more than a near-tie: the
/// reference's top move is more than `CLEAR_GAP` more probable (in the reference) than the
/// other evaluation's top move.
fn diff(a: &Evaluation, b: &Evaluation) -> (f32, f32, f32, usize) {
    assert_eq!(a.offsets, b.offsets);
    assert_eq!((a.len(), a.moves_left.len()), (b.len(), b.moves_left.len()));
    let max = |x: f32, y: f32| {
        if x.is_nan() || y.is_nan() {
            f32::INFINITY
        } else {
            x.max(y)
        }
    };
    let dp = a
        .policy
        .iter()
        .zip(&b.policy)
        .fold(0.0, |m, (x, y)| max(m, (x - y).abs()));
    let dw = a.wdl.iter().zip(&b.wdl).fold(0.0, |m, (x, y)| {
        (0..3).fold(m, |m, k| max(m, (x[k] - y[k]).abs()))
    });
    let dm = a
        .moves_left
        .iter()
        .zip(&b.moves_left)
        .fold(0.0, |m, (x, y)| max(m, (x - y).abs()));
    let argmax = |v: &[f32]| {
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
    };
    let flips = (0..a.len())
        .filter(|&i| {
            let (p, q) = (a.policy(i), argmax(b.policy(i)));
            p.get(argmax(p))
                .zip(p.get(q))
                .is_some_and(|(x, y)| x - y > CLEAR_GAP)
        })
        .count();
    (dp, dw, dm, flips)
}

/// Argmax changes between moves within this reference probability are near-ties.
const CLEAR_GAP: f32 = 0.02;

/// Model creation and [`randomise_bn`] use torch's process-global RNG; tests run in parallel.
static TORCH_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Checks `model`'s fused path in f32 and BF16 (and `Auto`) against its reference on batches
/// of several sizes taken from `planes`/`legal` (globals, if any, from `globals`).
fn check_against_reference(
    what: &str,
    model: &Model,
    planes: &[f32],
    globals: Option<&[f32]>,
    legal: &LegalMoves,
) {
    let per = model.config().input_len();
    let g = model.config().global_inputs;
    let (mut r, mut e) = (Evaluation::default(), Evaluation::default());
    let (mut flips, mut total) = (0, 0);
    for &b in &[1usize, 3, 4, 17, legal.len()] {
        let b = b.min(legal.len());
        let mut lm = LegalMoves::new();
        for i in 0..b {
            lm.push(legal.get(i));
        }
        let (x, gl) = (&planes[..b * per], globals.map(|gs| &gs[..b * g]));
        model.evaluate_reference_into(x, gl, &lm, &mut r).unwrap();
        for p in [
            InferencePrecision::F32,
            InferencePrecision::Bf16,
            InferencePrecision::Auto,
        ] {
            model.set_inference_precision(p);
            model.evaluate_into(x, gl, &lm, &mut e).unwrap();
            let (dp, dw, dm, f) = diff(&r, &e);
            let bf16 = model.resolved_precision(b) == InferencePrecision::Bf16;
            let (tp, tm) = if bf16 {
                (BF16_PROB, BF16_PLIES)
            } else {
                (F32_PROB, F32_PLIES)
            };
            assert!(
                dp <= tp && dw <= tp && dm <= tm,
                "{what}, {p} at batch {b}: max |dp| {dp:e}, |dW/D/L| {dw:e}, |d moves-left| {dm:e} plies (tolerance {tp:e}, {tm:e})"
            );
            if !bf16 {
                assert_eq!(f, 0, "{what}, {p} at batch {b}: f32 changed an argmax");
            } else if p == InferencePrecision::Bf16 {
                flips += f;
                total += b;
            }
        }
        // sums to one per position
        for i in 0..e.len() {
            let s: f32 = e.policy(i).iter().sum();
            assert!(
                e.policy(i).is_empty() || (s - 1.0).abs() < 1e-4,
                "{what}: policy sums to {s}"
            );
        }
    }
    // BF16 may swap near-tied moves, but other argmax changes must be rare.
    assert!(
        flips * 50 <= total,
        "{what}: BF16 changed the argmax of {flips} of {total} positions by more than a near-tie"
    );
}

#[test]
fn fused_inference_matches_reference_on_every_variant_and_head() {
    init();
    for name in vzero_rules::variant::builtin_names() {
        let variant = Variant::builtin(name).unwrap();
        let (planes, legal) = positions(variant, 40, 7);
        let mapped = net_config(variant, 2, 16).unwrap();
        let dense = NetConfig {
            policy_head: PolicyHead::Dense { channels: 4 },
            ..mapped.clone()
        };
        for (head, cfg) in [("mapped", mapped), ("dense", dense)] {
            let model = {
                let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
                let model = fresh_model(variant, &cfg, Device::Cpu, 3).unwrap();
                randomise_bn(&model, 5);
                model
            };
            check_against_reference(&format!("{name} {head}"), &model, &planes, None, &legal);
        }
    }
}

#[test]
fn fused_inference_skips_the_aux_heads_and_matches_reference() {
    init();
    let variant = Variant::builtin("empire").unwrap();
    let (planes, legal) = positions(variant, 24, 9);
    let mapped = net_config(variant, 2, 16).unwrap();
    let dense = NetConfig {
        policy_head: PolicyHead::Dense { channels: 4 },
        ..mapped.clone()
    };
    for (head, plain) in [("mapped", mapped), ("dense", dense)] {
        let cfg = NetConfig {
            aux: AuxHeads::all(vec![6, 16]),
            ..plain.clone()
        };
        let (with_aux, mut without) = {
            let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
            let model = fresh_model(variant, &cfg, Device::Cpu, 3).unwrap();
            randomise_bn(&model, 5);
            (model, fresh_model(variant, &plain, Device::Cpu, 4).unwrap())
        };
        check_against_reference(&format!("{head} + aux"), &with_aux, &planes, None, &legal);
        // The same weights without the auxiliary heads serve exactly the same evaluations: the
        // fused path never computes them.
        without.var_store_mut().copy(with_aux.var_store()).unwrap();
        for m in [&with_aux, &without] {
            m.set_inference_precision(InferencePrecision::F32);
        }
        let a = with_aux.evaluate(&planes, None, &legal).unwrap();
        let b = without.evaluate(&planes, None, &legal).unwrap();
        assert_eq!(a, b, "{head}: the aux heads changed an evaluation");
        assert!(with_aux.num_parameters() > without.num_parameters());
    }
}

#[test]
fn fused_inference_matches_reference_with_spatial_head_and_global_inputs() {
    init();
    let cfg = NetConfig {
        input_planes: 6,
        global_inputs: 3,
        board_height: 6,
        board_width: 7,
        policy_size: 5 * 42,
        blocks: 3,
        channels: 12,
        global_pool_blocks: vec![0, 2],
        global_pool_channels: 4,
        policy_head: PolicyHead::Spatial { planes: 5 },
        value_channels: 6,
        value_hidden: 10,
        moves_left_head: false,
        aux: Default::default(),
    };
    let model = {
        let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
        let model = Model::new_seeded(&cfg, Device::Cpu, 11).unwrap();
        randomise_bn(&model, 12);
        model
    };
    let mut rng = Rng(99);
    let b = 24;
    let planes: Vec<f32> = (0..b * cfg.input_len())
        .map(|_| (rng.below(4) == 0) as u8 as f32)
        .collect();
    let globals: Vec<f32> = (0..b * 3)
        .map(|_| rng.below(100) as f32 / 50.0 - 1.0)
        .collect();
    let mut legal = LegalMoves::new();
    for _ in 0..b {
        let mut v: Vec<u32> = (0..1 + rng.below(30))
            .map(|_| rng.below(cfg.policy_size) as u32)
            .collect();
        v.sort_unstable();
        v.dedup();
        legal.push(&v);
    }
    check_against_reference("spatial + globals", &model, &planes, Some(&globals), &legal);
}

#[test]
fn fold_follows_training_steps_and_weight_loads() {
    init();
    let variant = Variant::builtin("empire").unwrap();
    let cfg = net_config(variant, 2, 16).unwrap();
    let model = {
        let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
        fresh_model(variant, &cfg, Device::Cpu, 21).unwrap()
    };
    model.set_inference_precision(InferencePrecision::F32);
    let (planes, legal) = positions(variant, 16, 3);
    let (mut before, mut after, mut r) = (
        Evaluation::default(),
        Evaluation::default(),
        Evaluation::default(),
    );
    model
        .evaluate_into(&planes, None, &legal, &mut before)
        .unwrap();

    // A training step changes weights and BN statistics: the next evaluation must see them.
    let mut targets = PolicyTargets::new();
    for i in 0..legal.len() {
        targets.push(legal.get(i).iter().take(3).map(|&m| (m, 1.0 / 3.0)));
    }
    let wdl: Vec<[f32; 3]> = (0..legal.len())
        .map(|i| [(i % 2) as f32, 0.0, 1.0 - (i % 2) as f32])
        .collect();
    let batch = TrainBatch {
        planes: &planes,
        globals: None,
        policy: &targets,
        wdl: &wdl,
        moves_left: None,
        weights: None,
        aux: Default::default(),
    };
    let mut tr = Trainer::new(&model, TrainConfig::sgd()).unwrap();
    for _ in 0..3 {
        tr.step(&model, &batch).unwrap();
    }
    model
        .evaluate_into(&planes, None, &legal, &mut after)
        .unwrap();
    model
        .evaluate_reference_into(&planes, None, &legal, &mut r)
        .unwrap();
    assert_ne!(
        before, after,
        "the fused net did not follow the training steps"
    );
    let (dp, dw, dm, _) = diff(&r, &after);
    assert!(
        dp <= F32_PROB && dw <= F32_PROB && dm <= F32_PLIES,
        "after training: {dp:e} {dw:e} {dm:e}"
    );

    // Hot reload: loading other weights into a model that has already evaluated.
    let dir = std::env::temp_dir().join(format!("vzero-infer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let other = {
        let _rng = TORCH_RNG.lock().unwrap_or_else(|e| e.into_inner());
        let other = fresh_model(variant, &cfg, Device::Cpu, 22).unwrap();
        randomise_bn(&other, 23);
        other
    };
    let info = CheckpointInfo {
        variant: "empire".into(),
        encoding_version: 1,
        encoding_fingerprint: None,
        step: 1,
        samples_seen: 0,
        parent: None,
        knowledge: None,
        release: Default::default(),
    };
    checkpoint::save(&other, &dir.join("other"), &info).unwrap();
    let mut model = model;
    checkpoint::load_weights(&mut model, &dir.join("other.safetensors"), None).unwrap();
    let (mut want, mut got) = (Evaluation::default(), Evaluation::default());
    other
        .evaluate_reference_into(&planes, None, &legal, &mut want)
        .unwrap();
    model
        .evaluate_into(&planes, None, &legal, &mut got)
        .unwrap();
    let (dp, dw, dm, _) = diff(&want, &got);
    assert!(
        dp <= F32_PROB && dw <= F32_PROB && dm <= F32_PLIES,
        "after load_weights: {dp:e} {dw:e} {dm:e}"
    );
    // ... and through checkpoint::load (a fresh model, as self-play's hot reload does).
    let (loaded, _) =
        checkpoint::load(&dir.join("other"), &Expected::new("empire", 1), Device::Cpu).unwrap();
    loaded.set_inference_precision(InferencePrecision::F32);
    loaded
        .evaluate_into(&planes, None, &legal, &mut got)
        .unwrap();
    let (dp, dw, dm, _) = diff(&want, &got);
    assert!(
        dp <= F32_PROB && dw <= F32_PROB && dm <= F32_PLIES,
        "after load: {dp:e} {dw:e} {dm:e}"
    );

    // In-place changes through var_store() need an explicit refold.
    tch::no_grad(|| {
        for (name, mut t) in loaded.var_store().variables() {
            if name.ends_with("wdl.bias") {
                let _ = t.copy_(&Tensor::from_slice(&[5.0f32, 0.0, -5.0]));
            }
        }
    });
    loaded.refold();
    loaded
        .evaluate_into(&planes, None, &legal, &mut got)
        .unwrap();
    loaded
        .evaluate_reference_into(&planes, None, &legal, &mut want)
        .unwrap();
    let (dp, dw, dm, _) = diff(&want, &got);
    assert!(
        dp <= F32_PROB && dw <= F32_PROB && dm <= F32_PLIES,
        "after refold: {dp:e} {dw:e} {dm:e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inference_precision_parses_and_resolves() {
    assert_eq!(
        "auto".parse::<InferencePrecision>().unwrap(),
        InferencePrecision::Auto
    );
    assert_eq!(
        " FP32 ".parse::<InferencePrecision>().unwrap(),
        InferencePrecision::F32
    );
    assert_eq!(
        "bf16".parse::<InferencePrecision>().unwrap(),
        InferencePrecision::Bf16
    );
    assert!("fp16".parse::<InferencePrecision>().is_err());
    for p in [
        InferencePrecision::Auto,
        InferencePrecision::F32,
        InferencePrecision::Bf16,
    ] {
        assert_eq!(p.to_string().parse::<InferencePrecision>().unwrap(), p);
    }
    let min = vzero_model::AUTO_BF16_MIN_BATCH;
    let auto = InferencePrecision::Auto;
    assert_eq!(auto.kind_for(Device::Cpu, min - 1), tch::Kind::Float);
    let big = if vzero_model::cpu_has_amx_bf16() {
        tch::Kind::BFloat16
    } else {
        tch::Kind::Float
    };
    assert_eq!(auto.kind_for(Device::Cpu, min), big);
    assert_eq!(auto.kind_for(Device::Cuda(0), 1024), tch::Kind::Float);
    assert_eq!(
        InferencePrecision::Bf16.kind_for(Device::Cpu, 1),
        tch::Kind::BFloat16
    );
}
