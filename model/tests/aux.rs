//! The auxiliary training heads (`AuxHeads`): their losses fall on learnable targets, they are
//! recorded in checkpoints (an old checkpoint has none), and a different head set is a clear
//! load error.

use vzero_model::checkpoint::{self, CheckpointInfo, Expected};
use vzero_model::{
    soft_probs, AuxHeads, AuxTargets, Device, Model, ModelError, NetConfig, PolicyHead,
    PolicyTargets, TrainBatch, TrainConfig, Trainer,
};

mod common;
use common::Rng;

fn init() {
    vzero_model::set_threads(1);
}

fn tiny(policy_head: PolicyHead, aux: AuxHeads) -> NetConfig {
    NetConfig {
        input_planes: 4,
        global_inputs: 0,
        board_height: 5,
        board_width: 5,
        policy_size: 3 * 25,
        blocks: 1,
        channels: 8,
        global_pool_blocks: vec![0],
        global_pool_channels: 4,
        policy_head,
        value_channels: 4,
        value_hidden: 16,
        moves_left_head: false,
        aux,
    }
}

fn all_aux() -> AuxHeads {
    AuxHeads::all(vec![6, 16])
}

fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vzero-aux-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A batch whose every target is a function of two input cells `a` and `c`: the main policy
/// prefers move 1 or 2 (and spreads a little over 3..8), the opponent's reply is move 10 or 11,
/// the short-term values are +-0.5 and +-0.3, the material +-0.6. Row 5 has no opponent target
/// and row 6 no short-term or material target.
struct Synth {
    planes: Vec<f32>,
    policy: PolicyTargets,
    opponent: PolicyTargets,
    wdl: Vec<[f32; 3]>,
    short_term: Vec<f32>,
    st_weight: Vec<f32>,
    material: Vec<f32>,
    mat_weight: Vec<f32>,
}

fn synth(cfg: &NetConfig, b: usize) -> Synth {
    let mut r = Rng(77);
    let per = cfg.input_len();
    let planes: Vec<f32> = (0..b * per)
        .map(|_| if r.below(3) == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut s = Synth {
        planes,
        policy: PolicyTargets::new(),
        opponent: PolicyTargets::new(),
        wdl: Vec::new(),
        short_term: Vec::new(),
        st_weight: Vec::new(),
        material: Vec::new(),
        mat_weight: Vec::new(),
    };
    for i in 0..b {
        let a = s.planes[i * per] > 0.5;
        let c = s.planes[i * per + 25] > 0.5;
        let sign = |x: bool| if x { 1.0 } else { -1.0 };
        let best = if a { 1 } else { 2 };
        s.policy
            .push([(best, 0.7), (3, 0.1), (4, 0.08), (5, 0.06), (6, 0.04), (7, 0.02)]);
        if i == 5 {
            s.opponent.push([]);
        } else {
            s.opponent.push([(if c { 10 } else { 11 }, 1.0)]);
        }
        s.wdl.push(if c { [1.0, 0.0, 0.0] } else { [0.0, 0.0, 1.0] });
        s.short_term.extend([0.5 * sign(a), 0.3 * sign(c)]);
        s.st_weight.push(if i == 6 { 0.0 } else { 1.0 });
        s.material.push(0.6 * sign(a != c));
        s.mat_weight.push(if i == 6 { 0.0 } else { 1.0 });
    }
    s
}

impl Synth {
    fn batch(&self) -> TrainBatch<'_> {
        TrainBatch {
            planes: &self.planes,
            globals: None,
            policy: &self.policy,
            wdl: &self.wdl,
            moves_left: None,
            weights: None,
            aux: AuxTargets {
                opponent_policy: Some(&self.opponent),
                short_term: Some((&self.short_term, &self.st_weight)),
                material: Some((&self.material, &self.mat_weight)),
            },
        }
    }
}

#[test]
fn every_aux_loss_falls_on_a_learnable_target() {
    init();
    for head in [PolicyHead::Dense { channels: 2 }, PolicyHead::Spatial { planes: 3 }] {
        let cfg = tiny(head.clone(), all_aux());
        let model = Model::new_seeded(&cfg, Device::Cpu, 3).unwrap();
        let data = synth(&cfg, 32);
        let mut tr = Trainer::new(&model, TrainConfig::adamw()).unwrap();
        tr.set_lr(3e-3);
        let first = tr.evaluate(&model, &data.batch()).unwrap();
        assert!(
            first.opponent_policy > 0.0
                && first.soft_policy > 0.0
                && first.short_term_value > 0.0
                && first.material > 0.0,
            "{head:?}: {first:?}"
        );
        let c = tr.config().clone();
        let total = first.policy * c.loss.policy
            + first.value * c.loss.value
            + first.opponent_policy * c.loss.opponent_policy
            + first.soft_policy * c.loss.soft_policy
            + first.short_term_value * c.loss.short_term_value
            + first.material * c.loss.material;
        assert!((first.total - total).abs() < 1e-3 * total, "{first:?}");
        for _ in 0..150 {
            tr.step(&model, &data.batch()).unwrap();
        }
        let last = tr.evaluate(&model, &data.batch()).unwrap();
        // The soft target's entropy bounds its loss from below; the others can reach ~0.
        let soft_floor = {
            let p = soft_probs(&data.policy, vzero_model::SOFT_POLICY_TEMPERATURE);
            -p[..6].iter().map(|&x| x * x.ln()).sum::<f32>() as f64
        };
        assert!(
            last.opponent_policy < 0.3 * first.opponent_policy,
            "{head:?} opponent: {first:?} -> {last:?}"
        );
        assert!(
            last.soft_policy - soft_floor < 0.3 * (first.soft_policy - soft_floor),
            "{head:?} soft (floor {soft_floor}): {first:?} -> {last:?}"
        );
        assert!(
            last.short_term_value < 0.3 * first.short_term_value,
            "{head:?} short-term: {first:?} -> {last:?}"
        );
        assert!(
            last.material < 0.3 * first.material,
            "{head:?} material: {first:?} -> {last:?}"
        );
    }
}

#[test]
fn aux_targets_without_heads_or_heads_without_targets_give_zero_losses() {
    init();
    let plain = tiny(PolicyHead::Dense { channels: 2 }, AuxHeads::none());
    let data = synth(&plain, 8);
    // Targets for heads the network does not have are ignored.
    let model = Model::new_seeded(&plain, Device::Cpu, 1).unwrap();
    let tr = Trainer::new(&model, TrainConfig::sgd()).unwrap();
    let l = tr.evaluate(&model, &data.batch()).unwrap();
    assert_eq!((l.opponent_policy, l.soft_policy, l.short_term_value, l.material), (0.0, 0.0, 0.0, 0.0));
    // Heads without targets train nothing but the soft policy (derived from the main target).
    let model = Model::new_seeded(&tiny(PolicyHead::Dense { channels: 2 }, all_aux()), Device::Cpu, 1).unwrap();
    let tr = Trainer::new(&model, TrainConfig::sgd()).unwrap();
    let batch = TrainBatch { aux: AuxTargets::default(), ..data.batch() };
    let l = tr.evaluate(&model, &batch).unwrap();
    assert_eq!((l.opponent_policy, l.short_term_value, l.material), (0.0, 0.0, 0.0));
    assert!(l.soft_policy > 0.0);
    // Wrong lengths are input errors, not panics.
    let short = &data.short_term[..3];
    let bad = TrainBatch {
        aux: AuxTargets { short_term: Some((short, &data.st_weight)), ..data.batch().aux },
        ..data.batch()
    };
    let e = tr.evaluate(&model, &bad).unwrap_err();
    assert!(matches!(e, ModelError::Input(_)) && e.to_string().contains("short-term"), "{e}");
}

#[test]
fn soft_targets_are_the_policy_to_the_quarter_renormalised() {
    let t = PolicyTargets::from_rows(&[vec![(0, 0.81), (1, 0.16), (2, 0.03)], vec![], vec![(4, 1.0)]]);
    let s = soft_probs(&t, 4.0);
    let raw = [0.81f32.powf(0.25), 0.16f32.powf(0.25), 0.03f32.powf(0.25)];
    let sum: f32 = raw.iter().sum();
    for k in 0..3 {
        assert!((s[k] - raw[k] / sum).abs() < 1e-6, "{s:?}");
    }
    assert_eq!(s[3], 1.0);
}

#[test]
fn checkpoints_record_the_aux_heads_and_refuse_another_head_set() {
    init();
    let dir = tmpdir("ckpt");
    let info = CheckpointInfo { variant: "empire".into(), encoding_version: 3, ..Default::default() };
    let plain = tiny(PolicyHead::Spatial { planes: 3 }, AuxHeads::none());
    let with_aux = NetConfig { aux: all_aux(), ..plain.clone() };

    // A network without aux heads writes no "aux" field: its JSON is what older versions wrote,
    // and such a file (no field) loads as "no aux heads".
    let m = Model::new_seeded(&plain, Device::Cpu, 2).unwrap();
    checkpoint::save(&m, &dir.join("plain"), &info).unwrap();
    let json = std::fs::read_to_string(dir.join("plain.json")).unwrap();
    assert!(!json.contains("\"aux\""), "{json}");
    let (_, meta) = checkpoint::load(&dir.join("plain"), &Expected::new("empire", 3), Device::Cpu).unwrap();
    assert!(meta.net.aux.is_none());

    // With aux heads: round trip, every output (aux included) bit-exact.
    let m = Model::new_seeded(&with_aux, Device::Cpu, 2).unwrap();
    let data = synth(&with_aux, 6);
    let mut tr = Trainer::new(&m, TrainConfig::sgd()).unwrap();
    for _ in 0..2 {
        tr.step(&m, &data.batch()).unwrap();
    }
    checkpoint::save(&m, &dir.join("aux"), &info).unwrap();
    let json = std::fs::read_to_string(dir.join("aux.json")).unwrap();
    assert!(json.contains("\"short_term_horizons\"") && json.contains("\"opponent_policy\": true"), "{json}");
    let exp = Expected { net: Some(&with_aux), ..Expected::new("empire", 3) };
    let (loaded, meta) = checkpoint::load(&dir.join("aux"), &exp, Device::Cpu).unwrap();
    assert_eq!(meta.net.aux, all_aux());
    let (x, _) = m.input_tensors(6, &data.planes, None).unwrap();
    let (a, b) = tch::no_grad(|| (m.forward_t(&x, None, false), loaded.forward_t(&x, None, false)));
    for (p, q) in [
        (a.opponent_policy, b.opponent_policy),
        (a.soft_policy, b.soft_policy),
        (a.short_term, b.short_term),
        (a.material, b.material),
    ] {
        let (p, q) = (p.unwrap(), q.unwrap());
        assert!(p.equal(&q));
    }

    // Resuming with another head set: a network-config mismatch naming the field.
    for (stem, want) in [("aux", &plain), ("plain", &with_aux)] {
        let exp = Expected { net: Some(want), ..Expected::new("empire", 3) };
        let e = checkpoint::load(&dir.join(stem), &exp, Device::Cpu).unwrap_err();
        assert!(matches!(e, ModelError::Mismatch { what: "network config", .. }), "{e}");
        assert!(e.to_string().contains("aux"), "{e}");
    }
    let fewer = NetConfig { aux: AuxHeads { short_term_horizons: vec![6], ..all_aux() }, ..plain.clone() };
    let e = checkpoint::load(&dir.join("aux"), &Expected { net: Some(&fewer), ..Expected::new("empire", 3) }, Device::Cpu)
        .unwrap_err();
    assert!(e.to_string().contains("short_term_horizons"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_horizons_are_config_errors_naming_the_field() {
    for (h, needle) in [(vec![0], "at least 1"), (vec![6, 6], "twice"), (vec![1; 9], "at most 8")] {
        let cfg = tiny(
            PolicyHead::Dense { channels: 2 },
            AuxHeads { short_term_horizons: h, ..AuxHeads::none() },
        );
        let e = cfg.validate().unwrap_err().to_string();
        assert!(e.contains("aux.short_term_horizons") && e.contains(needle), "{e}");
        assert!(Model::new(&cfg, Device::Cpu).is_err());
    }
    // The JSON of a config without the field deserialises to no aux heads.
    let mut v = serde_json::to_value(tiny(PolicyHead::Dense { channels: 2 }, AuxHeads::none())).unwrap();
    assert!(v.get("aux").is_none());
    v["aux"] = serde_json::json!({ "material": true });
    let cfg: NetConfig = serde_json::from_value(v).unwrap();
    assert_eq!(cfg.aux, AuxHeads { material: true, ..AuxHeads::none() });
}
