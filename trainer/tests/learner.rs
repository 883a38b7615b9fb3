use std::cell::Cell;
use std::fs;

use vzero_data::{write_chunk, RunDir};
use vzero_model::{AuxHeads, Device, NetConfig, PolicyHead};
use vzero_rules::Variant;
use vzero_trainer::synth::{synth_meta, synth_rows, SYNTH_HORIZONS};
use vzero_trainer::*;

fn variant() -> Variant {
    Variant::builtin("empire").unwrap()
}

fn tiny_net(v: Variant) -> NetConfig {
    let inp = vzero_encoding::InputEncoder::new(v);
    let [c, h, w] = inp.shape();
    let p = vzero_encoding::MoveEncoder::new(v).len();
    let mut n = NetConfig::with_size(c, h, w, p, 1, 16);
    n.policy_head = PolicyHead::Dense { channels: 2 };
    n.value_channels = 8;
    n.value_hidden = 16;
    n
}

fn cfg() -> LearnConfig {
    LearnConfig {
        batch_size: 64,
        optimizer: "adamw".into(),
        lr: 3e-3,
        lr_warmup_steps: 0,
        lr_schedule: LrSchedule::Constant,
        weight_decay: 1e-4,
        max_reuse: 4.0,
        min_rows: 500,
        window_min: 100_000,
        window_exponent: 0.65,
        window_scale: 8.0,
        publish_every: 20,
        threads: 1,
        precision: Default::default(),
        log_every: 5,
        moves_left_weight: 0.1,
        value_q_ratio: 0.0,
        seed: 1,
        knowledge: Default::default(),
        external: Default::default(),
        stream_buffer_rows: None,
        retention: "keep".into(),
        opponent_policy_weight: 0.15,
        soft_policy_weight: 8.0,
        short_term_value_weight: 0.25,
        material_weight: 0.75,
    }
}

fn add_chunk(run: &RunDir, rows: usize, seed: u64) {
    let v = variant();
    write_chunk(&run.new_chunk_path("t"), &synth_meta(v, "x"), &synth_rows(v, rows, seed), &[]).unwrap();
}

/// A fresh run directory (kept alive by the returned guard) holding two chunks of 512 rows.
fn run_with_two_chunks() -> (tempfile::TempDir, RunDir) {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    for seed in 0..2 {
        add_chunk(&run, 512, seed);
    }
    (dir, run)
}

fn json_count(run: &RunDir) -> usize {
    fs::read_dir(run.checkpoints_dir()).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".json")).count()
}

#[test]
fn learns_publishes_caps_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path().join("run")).unwrap();
    let v = variant();
    let net = tiny_net(v);
    let mut l = Learner::open(&run, v, &net, cfg(), Device::Cpu).unwrap();
    // generation 0 published at once
    assert_eq!((l.step(), l.generation()), (0, 0));
    assert_eq!(run.latest_checkpoint().unwrap().unwrap(), run.checkpoints_dir().join("gen-000000-step-000000000.json"));
    // below min_rows: nothing to do
    add_chunk(&run, 256, 1);
    let s = l.run(&|| true, &mut |_| {}).unwrap();
    assert_eq!((s.stop, s.steps), (StopReason::NeedData, 0));
    for seed in 2..5 {
        add_chunk(&run, 256, seed);
    }
    let mut calls = 0;
    let s = l.run(&|| true, &mut |st| {
        calls += 1;
        assert!(st.losses.total.is_finite());
    })
    .unwrap();
    // reuse cap: 4 x 1024 rows / 64 per batch = 64 steps, then it needs data
    assert_eq!((s.stop, s.steps, s.samples), (StopReason::NeedData, 64, 4096));
    assert!(calls >= 64);
    assert_eq!(s.published, ["gen-000001-step-000000020", "gen-000002-step-000000040", "gen-000003-step-000000060", "gen-000004-step-000000064"]);
    assert_eq!(json_count(&run), 5);
    assert_eq!(run.latest_checkpoint().unwrap().unwrap(), run.checkpoints_dir().join("gen-000004-step-000000064.json"));
    // metrics and plot
    let m = read_metrics(&run.metrics_csv()).unwrap();
    assert_eq!(m.len(), 12);
    assert_eq!(m.last().unwrap().step, 60);
    let (first, last) = (&m[0], m.last().unwrap());
    eprintln!("first {first:?}\nlast {last:?}");
    assert!(last.loss_total < 0.7 * first.loss_total, "loss must fall: {} -> {}", first.loss_total, last.loss_total);
    assert!(last.loss_policy < first.loss_policy && last.loss_value < first.loss_value);
    assert!(last.policy_entropy < first.policy_entropy);
    assert!(m.iter().all(|r| r.samples_per_s > 0.0 && r.lr > 0.0));
    let svg = fs::read_to_string(run.plots_dir().join("losses.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("</svg>"));
    // no new data: nothing more
    let s = l.run(&|| true, &mut |_| {}).unwrap();
    assert_eq!((s.stop, s.steps), (StopReason::NeedData, 0));
    // keep_going stops it
    add_chunk(&run, 256, 9);
    let n = Cell::new(0);
    let s = l.run(&|| { n.set(n.get() + 1); n.get() <= 3 }, &mut |_| {}).unwrap();
    assert_eq!((s.stop, s.steps), (StopReason::Stopped, 3));
    assert_eq!(s.published, ["gen-000005-step-000000067"]);
    drop(l);

    // re-open: resumes at the same step / generation / samples
    let mut l = Learner::open(&run, v, &net, cfg(), Device::Cpu).unwrap();
    assert_eq!((l.step(), l.generation(), l.samples_seen()), (67, 5, 67 * 64));
    assert_eq!(l.network(), "gen-000005-step-000000067");
    let s = l.run(&|| true, &mut |_| {}).unwrap();
    assert_eq!((s.stop, s.steps), (StopReason::NeedData, 80 - 67));
    assert_eq!(l.step(), 80);
    // one learner per run: a second is refused while this one holds the run's lease
    let e = Learner::open(&run, v, &net, cfg(), Device::Cpu).err().unwrap();
    assert!(format!("{e:#}").contains("has a learner already"), "{e:#}");
    drop(l);
    // a different network config is refused on resume
    let mut other = net.clone();
    other.channels = 8;
    let e = Learner::open(&run, v, &other, cfg(), Device::Cpu).err().unwrap();
    assert!(format!("{e:#}").contains("network config"), "{e:#}");
}

#[test]
fn kill_between_publishes_resumes_from_last_checkpoint() {
    let (_dir, run) = run_with_two_chunks();
    let (v, net) = (variant(), tiny_net(variant()));
    let mut c = cfg();
    c.publish_every = 10;
    let mut l = Learner::open(&run, v, &net, c.clone(), Device::Cpu).unwrap();
    let n = Cell::new(0);
    let s = l.run(&|| { n.set(n.get() + 1); n.get() <= 25 }, &mut |_| {}).unwrap();
    assert_eq!(s.step, 25);
    drop(l);
    // Simulate SIGKILL after step 25 but before its checkpoint: remove it, leave a half-written
    // temporary checkpoint of a dead writer and metrics rows past step 20.
    fs::remove_file(run.checkpoints_dir().join("gen-000003-step-000000025.json")).unwrap();
    let tmp = run.checkpoints_dir().join(".gen-000003-step-000000025.safetensors.999999999-0.tmp");
    fs::write(&tmp, b"partial").unwrap();
    assert_eq!(read_metrics(&run.metrics_csv()).unwrap().last().unwrap().step, 25);
    assert_eq!(run.latest_checkpoint().unwrap().unwrap(), run.checkpoints_dir().join("gen-000002-step-000000020.json"));
    let l = Learner::open(&run, v, &net, c, Device::Cpu).unwrap();
    assert_eq!((l.step(), l.generation(), l.samples_seen()), (20, 2, 20 * 64));
    assert!(!tmp.exists(), "dead writer's tmp removed");
    assert_eq!(read_metrics(&run.metrics_csv()).unwrap().last().unwrap().step, 20, "metrics truncated to the resumed step");
}

#[test]
fn corrupt_chunk_skipped_foreign_variant_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let v = variant();
    let net = tiny_net(v);
    add_chunk(&run, 600, 0);
    let bad = run.data_dir().join("0000000000001-bad-000000.h5");
    fs::write(&bad, b"\x89HDF\r\n\x1a\ntruncated").unwrap();
    let mut c = cfg();
    c.max_reuse = 0.5;
    let mut l = Learner::open(&run, v, &net, c.clone(), Device::Cpu).unwrap();
    let s = l.run(&|| true, &mut |_| {}).unwrap();
    assert_eq!(s.steps, 4); // 0.5 * 600 / 64
    assert_eq!(l.window().skipped().len(), 1);
    assert_eq!(l.window().skipped()[0].0, bad);
    // a chunk of another variant in the run is refused, naming the file
    let mut meta = synth_meta(v, "x");
    meta.variant = "shogun".into();
    let foreign = run.new_chunk_path("f");
    write_chunk(&foreign, &meta, &synth_rows(v, 10, 1), &[]).unwrap();
    let e = format!("{:#}", l.run(&|| true, &mut |_| {}).err().unwrap());
    assert!(e.contains("variant") && e.contains(&*foreign.to_string_lossy()), "{e}");
}

#[test]
fn config_validation_and_schedule() {
    let mut c = cfg();
    c.validate().unwrap();
    c.optimizer = "adam".into();
    assert!(c.validate().unwrap_err().to_string().contains("learn.optimizer"));
    let mut c = cfg();
    c.window_exponent = 2.0;
    assert!(c.validate().unwrap_err().to_string().contains("learn.window_exponent"));
    let mut c = cfg();
    c.batch_size = 0;
    assert!(c.validate().unwrap_err().to_string().contains("learn.batch_size"));
    let mut c = cfg();
    c.lr_schedule = LrSchedule::Step { every: 0, factor: 0.1 };
    assert!(c.validate().unwrap_err().to_string().contains("every"));
    // lr schedule
    let mut c = cfg();
    c.lr = 0.1;
    c.lr_warmup_steps = 10;
    c.lr_schedule = LrSchedule::Step { every: 100, factor: 0.1 };
    assert!((c.lr_at(0) - 0.01).abs() < 1e-12);
    assert!((c.lr_at(50) - 0.1).abs() < 1e-12);
    assert!((c.lr_at(250) - 0.001).abs() < 1e-12);
    c.lr_schedule = LrSchedule::Cosine { period: 100, min_factor: 0.0 };
    assert!((c.lr_at(50) - 0.05).abs() < 1e-9 && c.lr_at(99) < 0.001 && (c.lr_at(100) - 0.1).abs() < 1e-12);
    // serde: round trip, unknown fields refused, defaults for optional fields
    let json = serde_json::to_string(&cfg()).unwrap();
    assert_eq!(serde_json::from_str::<LearnConfig>(&json).unwrap(), cfg());
    let bad = json.replacen("{", "{\"batch\":1,", 1);
    assert!(serde_json::from_str::<LearnConfig>(&bad).unwrap_err().to_string().contains("batch"));
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v.as_object_mut().unwrap().remove("log_every");
    assert_eq!(serde_json::from_value::<LearnConfig>(v).unwrap().log_every, 10);
}

#[test]
fn learner_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<Learner>();
}

#[test]
fn run_polling_picks_up_new_data() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let v = variant();
    let net = tiny_net(v);
    add_chunk(&run, 512, 0);
    let mut l = Learner::open(&run, v, &net, cfg(), Device::Cpu).unwrap();
    // a "self-play process" adds a chunk while the learner waits; stop at step 40
    let run2 = run.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        add_chunk(&run2, 512, 1);
    });
    let step = Cell::new(0u64);
    let t = std::time::Instant::now();
    let s = l
        .run_polling(&|| step.get() < 40 && t.elapsed().as_secs() < 60, std::time::Duration::from_millis(50), &mut |st| step.set(st.step))
        .unwrap();
    writer.join().unwrap();
    assert_eq!((s.stop, s.step), (StopReason::Stopped, 40)); // 32 steps on the first chunk, then more
    // (whether the new chunk arrived before or after the first 32 steps depends on timing)
    assert!(s.published.last().unwrap().ends_with("-step-000000040"), "{:?}", s.published);
    assert_eq!(run.latest_checkpoint().unwrap().unwrap().file_stem().unwrap().to_string_lossy(), *s.published.last().unwrap());
}

#[test]
fn net_must_fit_the_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::create_or_open(dir.path()).unwrap();
    let v = variant();
    let mut net = tiny_net(v);
    net.policy_size += 1;
    let e = Learner::open(&run, v, &net, cfg(), Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("policy_size"), "{e}");
}

#[test]
fn plot_from_metrics() {
    let rows: Vec<MetricsRow> = (1..=50)
        .map(|i| MetricsRow {
            step: i * 10,
            samples: i * 640,
            loss_total: 8.0 / (i as f64).sqrt(),
            loss_policy: 6.0 / (i as f64).sqrt(),
            loss_value: 1.0 / (i as f64).sqrt() + 0.5,
            loss_moves_left: 0.3,
            value_accuracy: 0.5 + 0.4 * (i as f64 / 50.0),
            ..Default::default()
        })
        .collect();
    // kept under target/tmp for a look
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("losses-example.svg");
    draw_plot(&path, &rows).unwrap();
    let svg = fs::read_to_string(&path).unwrap();
    assert!(svg.contains("<polyline") && svg.contains("training losses") && svg.contains("policy"));
}

#[test]
fn checkpoints_record_the_annealed_knowledge_blend() {
    let (_dir, run) = run_with_two_chunks();
    let (v, net) = (variant(), tiny_net(variant()));
    let mut c = cfg();
    c.publish_every = 10;
    c.knowledge = vzero_mcts::Knowledge { value_weight: 0.5, prior_weight: 0.25, anneal_steps: 20, ..Default::default() };
    let mut l = Learner::open(&run, v, &net, c, Device::Cpu).unwrap();
    let n = Cell::new(0);
    l.run(&|| { n.set(n.get() + 1); n.get() <= 25 }, &mut |_| {}).unwrap();
    let meta = |name: &str| vzero_model::checkpoint::read_meta(&run.checkpoints_dir().join(name)).unwrap();
    let k0 = meta("gen-000000-step-000000000.json").knowledge.expect("generation 0 records the blend");
    assert_eq!((k0.value_weight, k0.prior_weight), (0.5, 0.25));
    let k10 = meta("gen-000001-step-000000010.json").knowledge.unwrap();
    assert!((k10.value_weight - 0.25).abs() < 1e-6 && (k10.prior_weight - 0.125).abs() < 1e-6, "{k10:?}");
    // annealed away: nothing recorded, searches use the network alone
    assert_eq!(meta("gen-000002-step-000000020.json").knowledge, None);
    let (evaluator, _) = vzero_model::NetEvaluator::load(&run.checkpoints_dir().join("gen-000001-step-000000010.json"), v, Device::Cpu).unwrap();
    assert_eq!(evaluator.knowledge(), k10);
}

#[test]
fn a_released_part_of_the_blend_stays_released_in_later_checkpoints_and_after_a_resume() {
    let (_dir, run) = run_with_two_chunks();
    let (v, net) = (variant(), tiny_net(variant()));
    let mut c = cfg();
    c.publish_every = 10;
    c.knowledge = vzero_mcts::Knowledge { value_weight: 0.5, prior_weight: 1.0, anneal_steps: 1000, ..Default::default() };
    let meta = |name: &str| vzero_model::checkpoint::read_meta(&run.checkpoints_dir().join(name)).unwrap();
    {
        let mut l = Learner::open(&run, v, &net, c.clone(), Device::Cpu).unwrap();
        let n = Cell::new(0);
        l.run(&|| { n.set(n.get() + 1); n.get() <= 10 }, &mut |_| {}).unwrap();
        assert!(l.released().is_none());
        l.release(vzero_mcts::BlendPart::Prior);
        l.release(vzero_mcts::BlendPart::Prior); // a second release keeps the first step
        assert_eq!(l.released().prior_step, Some(10));
        let n = Cell::new(0);
        l.run(&|| { n.set(n.get() + 1); n.get() <= 10 }, &mut |_| {}).unwrap();
    }
    let before = meta("gen-000001-step-000000010.json");
    assert_eq!(before.knowledge.unwrap().prior_weight, 0.99, "published before the release");
    assert!(before.release.is_none());
    let after = meta("gen-000002-step-000000020.json");
    let k = after.knowledge.unwrap();
    assert_eq!(k.prior_weight, 0.0);
    assert!((k.value_weight - 0.49).abs() < 1e-6, "the value part still anneals: {k:?}");
    assert_eq!(after.release.prior_step, Some(10));
    // a resumed learner keeps the release, and its searches use the learned policy
    let mut l = Learner::open(&run, v, &net, c, Device::Cpu).unwrap();
    assert_eq!(l.released().prior_step, Some(10));
    let n = Cell::new(0);
    l.run(&|| { n.set(n.get() + 1); n.get() <= 10 }, &mut |_| {}).unwrap();
    let last = meta("gen-000003-step-000000030.json");
    assert_eq!((last.knowledge.unwrap().prior_weight, last.release.prior_step), (0.0, Some(10)));
    let (evaluator, _) = vzero_model::NetEvaluator::load(&run.checkpoints_dir().join("gen-000003-step-000000030.json"), v, Device::Cpu).unwrap();
    assert_eq!(evaluator.knowledge().prior_weight, 0.0);
}

#[test]
fn aux_heads_learn_from_chunks_log_their_losses_and_must_match_on_resume() {
    let (_dir, run) = run_with_two_chunks();
    let v = variant();
    let plain = tiny_net(v);
    let net = NetConfig {
        aux: AuxHeads::all(vec![16, 6]),
        ..plain.clone()
    };
    let mut l = Learner::open(&run, v, &net, cfg(), Device::Cpu).unwrap();
    let n = Cell::new(0);
    let mut first = None;
    l.run(&|| { n.set(n.get() + 1); n.get() <= 60 }, &mut |s| {
        first.get_or_insert(s.losses);
    })
    .unwrap();
    let first = first.unwrap();
    assert!(first.opponent_policy > 0.0 && first.soft_policy > 0.0 && first.short_term_value > 0.0 && first.material > 0.0, "{first:?}");
    // metrics.csv: the base columns in place, then one column per head.
    let text = fs::read_to_string(run.metrics_csv()).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(header, format!("{METRICS_HEADER},loss_opponent_policy,loss_soft_policy,loss_short_term_value,loss_material"));
    let m = read_metrics(&run.metrics_csv()).unwrap();
    assert_eq!(m.len(), 12);
    let line = text.lines().nth(1).unwrap();
    assert_eq!(MetricsRow::parse(&line.split(',').take(14).collect::<Vec<_>>().join(",")).unwrap().step, m[0].step, "base columns unchanged");
    let (a, b) = (&m[0], m.last().unwrap());
    for k in 0..4 {
        let (name, x) = a.aux_losses[k];
        let y = b.aux_losses[k].1;
        assert_eq!(b.aux_losses[k].0, name);
        eprintln!("{name}: {x} -> {y}");
        // (model/tests/aux.rs checks learnability itself; here the targets must reach the heads.)
        assert!(x > 0.0 && y < 0.9 * x, "{name} must fall: {x} -> {y}");
    }
    let svg = fs::read_to_string(run.plots_dir().join("losses.svg")).unwrap();
    assert!(svg.contains("short term value") && svg.contains("material"));
    // The checkpoint records the heads; the net with the synthetic horizons in another order
    // is another network.
    let meta = vzero_model::checkpoint::read_meta(&l.checkpoint_path()).unwrap();
    assert_eq!(meta.net.aux, net.aux);
    drop(l);
    for other in [plain, NetConfig { aux: AuxHeads { short_term_horizons: SYNTH_HORIZONS.to_vec(), ..net.aux.clone() }, ..net.clone() }] {
        let e = Learner::open(&run, v, &other, cfg(), Device::Cpu).err().unwrap();
        let e = format!("{e:#}");
        assert!(e.contains("network config") && e.contains("aux"), "{e}");
    }
    let l = Learner::open(&run, v, &net, cfg(), Device::Cpu).unwrap();
    assert_eq!(l.step(), 60);
}

#[test]
fn metrics_rows_with_aux_columns_round_trip() {
    let row = MetricsRow { step: 7, loss_total: 1.5, aux_losses: vec![("loss_soft_policy", 2.25), ("loss_material", 0.125)], ..Default::default() };
    let line = row.to_csv();
    assert_eq!(MetricsRow::parse_with(&line, &["loss_soft_policy", "loss_material"]).unwrap(), row);
    assert!(MetricsRow::parse(&line).is_none());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metrics.csv");
    fs::write(&path, format!("{},loss_soft_policy,loss_material\n{line}\n", METRICS_HEADER)).unwrap();
    assert_eq!(read_metrics(&path).unwrap(), vec![row.clone()]);
    // Columns from a newer version are ignored; the base columns still read.
    fs::write(&path, format!("{},loss_future\n{},9.0\n", METRICS_HEADER, MetricsRow { aux_losses: vec![], ..row.clone() }.to_csv())).unwrap();
    assert_eq!(read_metrics(&path).unwrap()[0].step, 7);
    assert!(cfg().validate().is_ok());
    let bad = LearnConfig { soft_policy_weight: -1.0, ..cfg() };
    assert!(bad.validate().unwrap_err().to_string().contains("learn.soft_policy_weight"));
}
