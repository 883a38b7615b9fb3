//! Trainer throughput vs the raw training step (issue 6: target ratio >= 0.9).
//!
//! `cargo run --release -p vzero-trainer --example learnbench -- [batch] [steps] [blocks]x[channels] [threads] [variant] [aux|-] [device]`
//!
//! `aux` turns every auxiliary head on (opponent and soft policy, short-term values, material),
//! with their targets in both measurements. `device`: cpu (default), auto, cuda or cuda:N.
//!
//! Writes synthetic chunks of the variant's shape into a temporary run, then measures
//! (a) `Trainer::step` alone on one prepared batch (the ceiling), and (b) `Learner::run` over
//! the same number of steps (window sampling, batch assembly, metrics every 10 steps, one
//! publish at the end), both after a warm-up, interleaved twice; then (d) `Trainer::step` in BF16
//! (`[learn] precision = "bf16"`) against f32 from the same weights on the same batch,
//! interleaved three times: samples/s of each, their ratio, and the losses of the first step.

use std::time::Instant;

use vzero_data::{write_chunk, Chunk, RowBlock, RunDir};
use vzero_model::{AuxHeads, AuxTargets, Model, NetConfig, PolicyTargets, TrainBatch, TrainConfig, TrainPrecision, Trainer};
use vzero_rules::Variant;
use vzero_trainer::synth::{synth_meta, synth_rows, SYNTH_HORIZONS};
use vzero_trainer::{LearnConfig, Learner};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let batch: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(256);
    let steps: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(40);
    let (blocks, channels) = args.get(2).and_then(|s| s.split_once('x')).map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap())).unwrap_or((4, 32));
    let threads: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(2);
    let variant = Variant::builtin(args.get(4).map(|s| s.as_str()).unwrap_or("empire"))?;
    let inp = vzero_encoding::InputEncoder::new(variant);
    let [c, h, w] = inp.shape();
    let policy = vzero_encoding::MoveEncoder::new(variant).len();
    let aux = args.get(5).map(|s| s == "aux").unwrap_or(false);
    let device = args.get(6).map(|s| s.parse::<vzero_model::DeviceChoice>()).transpose()?.unwrap_or(vzero_model::DeviceChoice::Cpu).resolve()?;
    let mut net = NetConfig::with_size(c, h, w, policy, blocks, channels);
    if aux {
        net.aux = AuxHeads::all(SYNTH_HORIZONS.to_vec());
    }
    vzero_model::set_threads(threads);

    let dir = tempfile::tempdir()?;
    let run = RunDir::create_or_open(dir.path())?;
    let rows_needed = (batch as u64 * steps * 3) as usize; // reuse cap 1 -> never hit
    let per_chunk = 2000;
    let t = Instant::now();
    for i in 0..rows_needed.div_ceil(per_chunk) {
        write_chunk(&run.new_chunk_path("bench"), &synth_meta(variant, "x"), &synth_rows(variant, per_chunk, i as u64), &[])?;
    }
    let chunks = run.list_chunks()?;
    println!(
        "variant {} planes {c}x{h}x{w} policy {policy}; net {blocks}x{channels} dense{}; batch {batch}; {steps} steps; {threads} threads; device {}",
        variant.name(),
        if aux { " + all aux heads" } else { "" },
        vzero_model::device::describe(device)
    );
    println!("wrote {} chunks ({} rows) in {:.2}s", chunks.len(), chunks.len() * per_chunk, t.elapsed().as_secs_f64());

    // (a) raw Trainer::step on one prepared batch
    let block = Chunk::open(&chunks[0])?.read_block()?;
    let mut b = RowBlock::new(block.plane_len);
    b.short_term_horizons = block.short_term_horizons.clone();
    for i in 0..batch {
        b.push_from(&block, i % block.len());
    }
    let (mut pt, mut ot) = (PolicyTargets::new(), PolicyTargets::new());
    for i in 0..b.len() {
        let (idx, p) = b.policy(i);
        pt.push(idx.iter().copied().zip(p.iter().copied()));
        let (idx, p) = b.opponent_policy(i);
        ot.push(idx.iter().copied().zip(p.iter().copied()));
    }
    let model = Model::new_seeded(&net, device, 0)?;
    let mut tr = Trainer::new(&model, TrainConfig::sgd())?;
    let aux_targets = if aux {
        AuxTargets {
            opponent_policy: Some(&ot),
            short_term: Some((&b.short_term, &b.short_term_weight)),
            material: Some((&b.material, &b.material_weight)),
        }
    } else {
        AuxTargets::default()
    };
    let tb = TrainBatch {
        planes: &b.planes,
        globals: None,
        policy: &pt,
        wdl: &b.wdl,
        moves_left: Some(&b.moves_left),
        weights: Some(&b.weight),
        aux: aux_targets,
    };
    let mut raw_ms: Vec<f64> = Vec::new();
    let mut raw = |tr: &mut Trainer, n: u64| -> anyhow::Result<f64> {
        let t = Instant::now();
        for _ in 0..n {
            let s = Instant::now();
            tr.step(&model, &tb)?;
            raw_ms.push(s.elapsed().as_secs_f64() * 1e3);
        }
        Ok((n as usize * batch) as f64 / t.elapsed().as_secs_f64())
    };
    raw(&mut tr, 3)?; // warm-up

    // (b) the learner
    let cfg = LearnConfig {
        batch_size: batch,
        max_reuse: 1.0,
        min_rows: 1,
        window_min: 1_000_000,
        publish_every: 1_000_000,
        threads,
        lr_warmup_steps: 0,
        ..LearnConfig::cpu_default()
    };
    let mut learner = Learner::open(&run, variant, &net, cfg, device)?;
    // keep_going needs the learner's step: use a global counter updated by the progress callback
    fn l_step_below(limit: u64) -> bool {
        STEP.with(|s| s.get() < limit)
    }
    thread_local!(static STEP: std::cell::Cell<u64> = const { std::cell::Cell::new(0) });
    let mut learn_ms: Vec<f64> = Vec::new();
    let mut learn_run = |l: &mut Learner, n: u64| -> anyhow::Result<f64> {
        STEP.with(|s| s.set(l.step()));
        let limit = l.step() + n;
        let t = Instant::now();
        let mut last = Instant::now();
        l.run(&|| l_step_below(limit), &mut |st| {
            STEP.with(|s| s.set(st.step));
            learn_ms.push(last.elapsed().as_secs_f64() * 1e3);
            last = Instant::now();
        })?;
        Ok((n as usize * batch) as f64 / t.elapsed().as_secs_f64())
    };
    learn_run(&mut learner, 3)?; // warm-up (loads the window cache)
    let mut raws = Vec::new();
    let mut learns = Vec::new();
    for _ in 0..3 {
        raws.push(raw(&mut tr, steps)?);
        learns.push(learn_run(&mut learner, steps)?);
    }
    // (d) BF16 against f32: the same weights, the same batch
    let precisions = [TrainPrecision::F32, TrainPrecision::Bf16];
    let models = precisions.map(|_| Model::new_seeded(&net, device, 1));
    let models = [models[0].as_ref().map_err(|e| anyhow::anyhow!("{e}"))?, models[1].as_ref().map_err(|e| anyhow::anyhow!("{e}"))?];
    let mut trainers = Vec::new();
    let mut first = Vec::new();
    for (m, p) in models.iter().zip(precisions) {
        let mut t = Trainer::new(m, TrainConfig { precision: p, ..TrainConfig::sgd() })?;
        first.push(t.step(m, &tb)?.total);
        t.step(m, &tb)?; // warm-up
        trainers.push(t);
    }
    let mut rates = [Vec::new(), Vec::new()];
    for _ in 0..3 {
        for (k, (m, t)) in models.iter().zip(trainers.iter_mut()).enumerate() {
            let s = Instant::now();
            for _ in 0..steps {
                t.step(m, &tb)?;
            }
            rates[k].push((steps as usize * batch) as f64 / s.elapsed().as_secs_f64());
        }
    }
    let mid = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (f, b) = (mid(&rates[0]), mid(&rates[1]));
    println!(
        "precision: f32 {:?} samples/s, bf16 {:?} (bf16 {}): medians {f:.0} vs {b:.0}, bf16/f32 {:.3}; first-step loss f32 {:.5} bf16 {:.5} (rel. diff {:.2e})",
        rates[0].iter().map(|x| x.round()).collect::<Vec<_>>(),
        rates[1].iter().map(|x| x.round()).collect::<Vec<_>>(),
        if device != vzero_model::Device::Cpu { "on the GPU" } else if vzero_model::cpu_has_amx_bf16() { "on AMX" } else { "without AMX" },
        b / f,
        first[0],
        first[1],
        (first[1] - first[0]).abs() / first[0].abs()
    );
    // (c) the learner's own per-step work without the step: window sampling + target building
    let expect = vzero_data::ChunkExpect { variant: variant.name().into(), encoding_version: vzero_encoding::ENCODING_VERSION, planes: Some([c, h, w]), policy_size: Some(policy) };
    let mut win = vzero_data::ReplayWindow::new(&run, expect, vzero_data::WindowConfig { min_rows: 1_000_000, scale: 1.0, exponent: 1.0 }, 0)?;
    win.set_short_term_horizons(&net.aux.short_term_horizons);
    win.refresh()?;
    let mut out = RowBlock::default();
    win.sample_into(batch, &mut out)?; // loads the cache
    let n = 200;
    let t = Instant::now();
    for _ in 0..n {
        win.sample_into(batch, &mut out)?;
        pt.clear();
        ot.clear();
        for i in 0..out.len() {
            let (idx, p) = out.policy(i);
            pt.push(idx.iter().copied().zip(p.iter().copied()));
            if aux {
                let (idx, p) = out.opponent_policy(i);
                ot.push(idx.iter().copied().zip(p.iter().copied()));
            }
        }
    }
    let sample_ms = t.elapsed().as_secs_f64() * 1e3 / n as f64;
    let best = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    println!("raw Trainer::step   samples/s: {:?} (best {:.0})", raws.iter().map(|x| x.round()).collect::<Vec<_>>(), best(&raws));
    println!("Learner::run        samples/s: {:?} (best {:.0})", learns.iter().map(|x| x.round()).collect::<Vec<_>>(), best(&learns));
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (rm, lm) = (median(&raw_ms[3..]), median(&learn_ms[3..])); // without the warm-up steps
    println!(
        "median ms/step: raw {rm:.2}, learner {lm:.2} (incl. sampling, metrics, callbacks) -> samples/s {:.0} vs {:.0}, ratio {:.3}",
        batch as f64 * 1e3 / rm,
        batch as f64 * 1e3 / lm,
        rm / lm
    );
    let step_ms = batch as f64 * 1e3 / best(&raws);
    println!("sampling + targets: {sample_ms:.3} ms/batch vs {step_ms:.1} ms/step -> overhead bound {:.3}", step_ms / (step_ms + sample_ms));
    println!("ratio (best/best): {:.3}; per pair: {:?}", best(&learns) / best(&raws), raws.iter().zip(&learns).map(|(r, l)| format!("{:.3}", l / r)).collect::<Vec<_>>());

    Ok(())
}
