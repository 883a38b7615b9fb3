//! `vzero bench`: speed measurements printed as medians and ratios.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::time::Instant;
use vzero_rules::{Position, Variant};
use vzero_selfplay::EvaluatorMode;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft nodes per second, single thread, with and without bulk counting.
    Perft(PerftBench),
    /// Self-play network evaluations per second against the bare network at the same batch.
    Selfplay(SelfplayBench),
    /// Replay-window memory per row, planes unpacked (f32) against packed, per variant.
    Rows(RowsBench),
}

/// Options of `vzero bench rows`.
#[derive(Args, Debug)]
pub struct RowsBench {
    /// Variants (default: every built-in one).
    #[arg(long, num_args = 1..)]
    variants: Vec<String>,
    /// Rows per variant: positions of random games, each with a policy target over 24 moves (a
    /// full search's typical support at 64 simulations).
    #[arg(long, default_value_t = 2000)]
    rows: usize,
}

/// `vzero bench rows`: bytes per row of a window block, before (f32 planes) and after packing.
fn rows(b: RowsBench) -> Result<()> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let names: Vec<String> = if b.variants.is_empty() { vzero_rules::variant::builtin_names().iter().map(|s| s.to_string()).collect() } else { b.variants };
    println!("{:<16} {:>6} {:>14} {:>14} {:>8} {:>12} {:>12}", "variant", "planes", "planes f32 B", "planes packed", "ratio", "row f32 B", "row packed B");
    for name in names {
        let v = Variant::load(&name)?;
        let enc = vzero_encoding::InputEncoder::new(v);
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut block = vzero_data::RowBlock::new(enc.size());
        let mut game = vzero_rules::Game::startpos(v);
        while block.len() < b.rows {
            if game.result().is_over() || game.moves().len() > 200 {
                game = vzero_rules::Game::startpos(v);
            }
            let policy: Vec<(u32, f32)> = (0..24).map(|k| (k, 1.0 / 24.0)).collect();
            let row = vzero_data::Row { planes: enc.encode_game(&game), policy, wdl: [1.0, 0.0, 0.0], ..Default::default() };
            block.push(&row);
            let moves = game.position().legal_moves();
            let Some(&m) = moves.choose(&mut rng) else { game = vzero_rules::Game::startpos(v); continue };
            game.play(m);
        }
        let n = block.len() as f64;
        let dense = block.heap_bytes() as f64 / n;
        let dense_planes = (enc.size() * 4) as f64;
        let mut packed = block.clone();
        packed.pack(enc.num_planes());
        packed.planes.shrink_to_fit();
        let packed_row = packed.heap_bytes() as f64 / n;
        let packed_planes = packed.packed.as_ref().map_or(0.0, |p| p.bytes_per_row() as f64);
        // the packed block must unpack to the same rows
        let mut again = packed.clone();
        again.unpack();
        anyhow::ensure!(again.planes == block.planes, "{name}: packed planes do not unpack to the originals");
        println!(
            "{:<16} {:>6} {:>14.0} {:>14.0} {:>7.1}x {:>12.0} {:>12.0}",
            name,
            enc.num_planes(),
            dense_planes,
            packed_planes,
            dense_planes / packed_planes.max(1.0),
            dense,
            packed_row
        );
    }
    println!("(row: planes plus every other column of the window's cache, 24 policy entries)");
    Ok(())
}

/// Options of `vzero bench perft`.
#[derive(Args, Debug)]
pub struct PerftBench {
    /// Timed runs per case; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Directory of the Fairy-Stockfish oracle (perft positions).
    #[arg(long, default_value = "../shared/oracle")]
    oracle: PathBuf,
    /// Depth for the start positions.
    #[arg(long, default_value_t = 5)]
    depth: u32,
}

/// Fairy-Stockfish's single-core perft speed on this machine kind, as quoted in issue 2 (M nodes/s).
const FSF_MNPS: f64 = 14.0;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs `f` `runs` times; returns (nodes, median nodes per second).
fn measure(runs: usize, mut f: impl FnMut() -> u64) -> (u64, f64) {
    let mut rates = Vec::new();
    let mut nodes = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        nodes = f();
        rates.push(nodes as f64 / t.elapsed().as_secs_f64().max(1e-9));
    }
    (nodes, median(rates))
}

/// Oracle positions of `variant` with the largest depth of at most `max_nodes` nodes.
fn oracle_positions(dir: &Path, variant: &str, max_nodes: u64) -> Result<Vec<(String, u32)>> {
    let path = dir.join(format!("{variant}-perft.csv"));
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut best: Vec<(String, u32)> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 3 {
            continue;
        }
        let (depth, nodes): (u32, u64) = (f[1].parse()?, f[2].parse()?);
        if nodes > max_nodes {
            continue;
        }
        match best.iter_mut().find(|(fen, _)| fen == f[0]) {
            Some(e) => e.1 = e.1.max(depth),
            None => best.push((f[0].to_string(), depth)),
        }
    }
    Ok(best)
}

fn perft(b: PerftBench) -> Result<()> {
    println!("perft, single thread, median of {} runs; reference: Fairy-Stockfish {FSF_MNPS} M nodes/s (bulk counting)", b.runs);
    println!("{:<28} {:>12} {:>10} {:>10} {:>8} {:>8}", "case", "nodes", "bulk Mn/s", "full Mn/s", "bulk/ful", "vs FSF");
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name)?;
        let mut cases: Vec<(String, Vec<(String, u32)>)> = vec![(format!("{name} start d{}", b.depth), vec![(v.start_fen().to_string(), b.depth)])];
        if let Ok(list) = oracle_positions(&b.oracle, name, 2_000_000) {
            cases.push((format!("{name} oracle ({})", list.len()), list));
        }
        for (label, positions) in cases {
            let positions: Vec<(Position, u32)> =
                positions.iter().map(|(fen, d)| Ok((Position::from_fen(v, fen)?, *d))).collect::<Result<_>>()?;
            let (nodes, bulk) = measure(b.runs, || positions.iter().map(|(p, d)| p.perft(*d)).sum());
            let (_, full) = measure(b.runs, || positions.iter().map(|(p, d)| p.perft_unbulked(*d)).sum());
            println!(
                "{label:<28} {nodes:>12} {:>10.2} {:>10.2} {:>8.2} {:>8.2}",
                bulk / 1e6,
                full / 1e6,
                bulk / full,
                bulk / 1e6 / FSF_MNPS
            );
        }
    }
    Ok(())
}

pub fn run(b: BenchCommand) -> Result<()> {
    match b {
        BenchCommand::Perft(p) => perft(p),
        BenchCommand::Selfplay(s) => selfplay(s),
        BenchCommand::Rows(r) => rows(r),
    }
}

/// Options of `vzero bench selfplay`.
#[derive(Args, Debug)]
pub struct SelfplayBench {
    /// Variant (embedded default config).
    #[arg(long, default_value = "empire")]
    variant: String,
    /// Seconds of self-play per run.
    #[arg(long, default_value_t = 15.0)]
    seconds: f64,
    /// Runs; medians are reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A training config to take the network and `[selfplay]` settings from (default: the
    /// variant's embedded config).
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// Device of the network (auto, cpu, cuda, cuda:N).
    #[arg(long, default_value = "cpu")]
    device: vzero_model::DeviceChoice,
    /// Workers of the process measurement (default: the config's `selfplay.workers`).
    #[arg(long)]
    workers: Option<usize>,
    /// Evaluators the process measurement compares: `per-worker` (each worker its own network),
    /// `shared` (one evaluation server batching all workers' leaves), or `both` (interleaved runs
    /// and their ratio); `none` skips it.
    #[arg(long, default_value = "both")]
    evaluator: String,
    /// Shared evaluator: server threads (default: the config's `selfplay.evaluator_threads`).
    #[arg(long)]
    evaluator_threads: Option<usize>,
    /// Shared evaluator: batch wait in milliseconds (default: the config's
    /// `selfplay.evaluator_wait_ms`).
    #[arg(long)]
    evaluator_wait_ms: Option<f64>,
    /// Skip the single-worker measurement against the bare network.
    #[arg(long)]
    no_single: bool,
}

/// CPU seconds used by this process so far (user + system, all threads; /proc/self/stat, Linux
/// clock ticks of 1/100 s); 0 where unavailable.
fn process_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // fields after the command name (which may contain spaces) in parentheses
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            Some(ticks as f64 / 100.0)
        })
        .unwrap_or(0.0)
}

/// Self-play evaluations per second against the bare network at the same batch size.
fn selfplay(b: SelfplayBench) -> Result<()> {
    use vzero_model::{checkpoint, checkpoint_info, fresh_model};

    let mut cfg = match &b.config {
        Some(path) => vzero_pipeline::RunConfig::load(path)?,
        None => vzero_pipeline::RunConfig::embedded(&b.variant)?,
    };
    if let Some(t) = b.evaluator_threads {
        cfg.selfplay.evaluator_threads = t;
    }
    if let Some(w) = b.evaluator_wait_ms {
        cfg.selfplay.evaluator_wait_ms = w;
    }
    cfg.selfplay.validate().map_err(anyhow::Error::msg)?;
    let variant = Variant::load(&cfg.variant)?;
    let device = b.device.resolve()?;
    let modes: Vec<EvaluatorMode> = match b.evaluator.as_str() {
        "both" => vec![EvaluatorMode::PerWorker, EvaluatorMode::Shared],
        "per-worker" => vec![EvaluatorMode::PerWorker],
        "shared" => vec![EvaluatorMode::Shared],
        "none" => vec![],
        other => anyhow::bail!("--evaluator {other}: expected per-worker, shared, both or none"),
    };
    vzero_model::set_threads(1);
    let dir = std::env::temp_dir().join(format!("vzero-bench-selfplay-{}", std::process::id()));
    let run = vzero_data::RunDir::create_or_open(&dir)?;
    let net = cfg.net_config(variant)?;
    let model = fresh_model(variant, &net, device, 1)?;
    checkpoint::save(&model, &run.checkpoints_dir().join(vzero_data::checkpoint_name(0, 0)), &checkpoint_info(variant, 0, 0, None))?;
    let batch = cfg.selfplay.games_per_worker * cfg.selfplay.leaves_per_game;
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())).unwrap_or_default();
    println!("machine: {} cores, {cpu}; device {device:?}", std::thread::available_parallelism().map_or(0, |n| n.get()));
    if !b.no_single {
        single_worker(&b, &cfg, variant, device, &run, &model, batch)?;
    }
    if !modes.is_empty() {
        process_workers(&b, &cfg, variant, device, &run, &modes)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// One self-play run of `workers` workers with the given evaluator for `seconds`: (moves/s,
/// evaluations/s, positions per forward pass).
fn selfplay_run(cfg: &vzero_pipeline::RunConfig, variant: Variant, device: vzero_model::Device, run: &vzero_data::RunDir, workers: usize, mode: EvaluatorMode, seconds: f64, seed: u64) -> Result<(f64, f64, f64)> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let stats = Arc::new(vzero_selfplay::Stats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut sp = cfg.selfplay.clone();
    sp.workers = workers;
    sp.evaluator = mode;
    sp.rows_per_chunk = usize::MAX / 2;
    let evaluator = sp.start_evaluator()?;
    if let Some(server) = &evaluator {
        let _ = stats.evaluator.set(server.clone());
    }
    let starts = Arc::new(sp.start_lines(variant)?);
    let handles: Vec<_> = (0..workers)
        .map(|i| {
            let ctx = vzero_selfplay::WorkerContext {
                run: run.clone(),
                variant,
                config: sp.clone(),
                device,
                stop: stop.clone(),
                stats: stats.clone(),
                max_games: None,
                name: format!("bench{seed}w{i}"),
                seed: seed * 1000 + i as u64,
                evaluator: evaluator.clone(),
                starts: starts.clone(),
            };
            std::thread::spawn(move || vzero_selfplay::run_worker(ctx))
        })
        .collect();
    // the clock starts once every worker has evaluated (networks loaded, kernels warm)
    let warm = Instant::now();
    while stats.batches.load(Ordering::Relaxed) < workers as u64 && warm.elapsed().as_secs_f64() < 60.0 && !handles.iter().any(|h| h.is_finished()) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // forward passes and the positions in them: the shared evaluator's, else the workers' own
    let batches = || match stats.evaluator.get() {
        Some(s) => (s.stats().forwards.load(Ordering::Relaxed), s.stats().positions.load(Ordering::Relaxed)),
        None => (stats.batches.load(Ordering::Relaxed), stats.evals.load(Ordering::Relaxed)),
    };
    let (moves0, evals0) = (stats.moves.load(Ordering::Relaxed), stats.evals.load(Ordering::Relaxed));
    let (f0, p0) = batches();
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < seconds && !handles.iter().any(|h| h.is_finished()) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let secs = t.elapsed().as_secs_f64();
    let (moves, evals) = (stats.moves.load(Ordering::Relaxed) - moves0, stats.evals.load(Ordering::Relaxed) - evals0);
    let (f1, p1) = batches();
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().map_err(|_| anyhow::anyhow!("self-play thread panicked"))??;
    }
    Ok((moves as f64 / secs, evals as f64 / secs, (p1 - p0) as f64 / (f1 - f0).max(1) as f64))
}

/// Self-play of a whole process (the config's workers) with each evaluator, runs interleaved:
/// moves/s, evaluations/s, positions per forward pass, and the shared/per-worker ratio.
fn process_workers(b: &SelfplayBench, cfg: &vzero_pipeline::RunConfig, variant: Variant, device: vzero_model::Device, run: &vzero_data::RunDir, modes: &[EvaluatorMode]) -> Result<()> {
    let workers = b.workers.unwrap_or(cfg.selfplay.workers).max(1);
    let mut results: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); modes.len()];
    let mut ratios = Vec::new();
    for r in 0..b.runs.max(1) {
        // alternate which evaluator goes first, so a drift in machine load hits both alike
        let order: Vec<usize> = if r % 2 == 0 { (0..modes.len()).collect() } else { (0..modes.len()).rev().collect() };
        let mut this = vec![(0.0, 0.0, 0.0); modes.len()];
        for &m in &order {
            this[m] = selfplay_run(cfg, variant, device, run, workers, modes[m], b.seconds, r as u64)?;
            eprintln!("  run {}/{} {}: {:.0} moves/s, {:.0} evals/s, {:.1} positions per forward pass", r + 1, b.runs.max(1), modes[m], this[m].0, this[m].1, this[m].2);
            results[m].push(this[m]);
        }
        if modes.len() == 2 {
            ratios.push(this[1].0 / this[0].0);
        }
    }
    for (m, mode) in modes.iter().enumerate() {
        let col = |k: usize| median(results[m].iter().map(|x| [x.0, x.1, x.2][k]).collect());
        println!(
            "selfplay {} net {}x{}, {workers} workers x {} games, {mode} evaluator{}: {:.0} moves/s, {:.0} evals/s, {:.1} positions per forward pass (medians of {} runs of {} s)",
            variant.name(),
            cfg.net.blocks,
            cfg.net.channels,
            cfg.selfplay.games_per_worker,
            if *mode == EvaluatorMode::Shared { format!(" ({} threads, wait {} ms)", cfg.selfplay.evaluator_threads, cfg.selfplay.evaluator_wait_ms) } else { String::new() },
            col(0),
            col(1),
            col(2),
            b.runs.max(1),
            b.seconds
        );
    }
    if !ratios.is_empty() {
        println!("  shared/per-worker moves/s ratio {:.3} (median of {} interleaved runs' ratios; target >= 1 on a CPU)", median(ratios.clone()), ratios.len());
    }
    Ok(())
}

/// One worker's self-play evaluations per second against the bare network at its batch size.
#[allow(clippy::too_many_arguments)]
fn single_worker(b: &SelfplayBench, cfg: &vzero_pipeline::RunConfig, variant: Variant, device: vzero_model::Device, run: &vzero_data::RunDir, model: &vzero_model::Model, batch: usize) -> Result<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use vzero_encoding::{InputEncoder, MoveEncoder};
    use vzero_model::LegalMoves;

    // Reference: the bare network on positions from a self-play-like spread of plies.
    let input = InputEncoder::new(variant);
    let moves = MoveEncoder::new(variant);
    let mut planes = Vec::new();
    let mut legal = LegalMoves::new();
    let mut game = vzero_rules::Game::startpos(variant);
    let mut k = 0usize;
    while legal.len() < batch {
        if game.result().is_over() {
            game = vzero_rules::Game::startpos(variant);
        }
        let pos = *game.position();
        planes.extend(input.encode(&pos, game.repetitions()));
        legal.push_iter(moves.legal_indices(&pos).into_iter().map(|(i, _)| i as u32));
        let ms = pos.legal_moves();
        k = k.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        game.play(ms[(k >> 33) as usize % ms.len()]);
    }
    // One second of the bare network: (positions per wall second, per CPU second).
    let bare = || {
        let (t, c) = (Instant::now(), process_cpu_secs());
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < 1.0 {
            model.evaluate(&planes, None, &legal).expect("forward pass");
            n += batch as u64;
        }
        (n as f64 / t.elapsed().as_secs_f64(), n as f64 / (process_cpu_secs() - c).max(1e-3))
    };
    bare(); // warm-up: oneDNN kernels, the inference fold

    // Self-play runs interleaved with bare-network seconds (two before and two after each run),
    // so a change in machine load hits both sides of each run's ratio alike. The CPU-time
    // figures count only the time this process ran (the main thread sleeps during self-play),
    // so they hold up when other processes share the cores.
    let (mut raws, mut rates, mut ratios, mut cpu_ratios) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut batches, mut evals, mut eval_share) = (0u64, 0u64, Vec::new());
    for r in 0..b.runs.max(1) {
        let mut around = vec![bare(), bare()];
        let stats = Arc::new(vzero_selfplay::Stats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut sp = cfg.selfplay.clone();
        sp.workers = 1;
        sp.evaluator = EvaluatorMode::PerWorker;
        sp.rows_per_chunk = usize::MAX / 2;
        let starts = Arc::new(sp.start_lines(variant)?);
        let ctx = vzero_selfplay::WorkerContext {
            run: run.clone(),
            variant,
            config: sp,
            device,
            evaluator: None,
            starts,
            stop: stop.clone(),
            stats: stats.clone(),
            max_games: None,
            name: format!("bench{r}"),
            seed: r as u64,
        };
        let (t, c) = (Instant::now(), process_cpu_secs());
        let h = std::thread::spawn(move || vzero_selfplay::run_worker(ctx));
        std::thread::sleep(std::time::Duration::from_secs_f64(b.seconds));
        stop.store(true, Ordering::Relaxed);
        h.join().map_err(|_| anyhow::anyhow!("self-play thread panicked"))??;
        let (secs, cpu) = (t.elapsed().as_secs_f64(), (process_cpu_secs() - c).max(1e-3));
        let n = stats.evals.load(Ordering::Relaxed);
        let rate = n as f64 / secs;
        batches += stats.batches.load(Ordering::Relaxed);
        evals += n;
        eval_share.push(stats.eval_nanos.load(Ordering::Relaxed) as f64 / 1e9 / secs);
        around.extend([bare(), bare()]);
        ratios.push(rate / median(around.iter().map(|a| a.0).collect()));
        cpu_ratios.push(n as f64 / cpu / median(around.iter().map(|a| a.1).collect()));
        raws.extend(around.into_iter().map(|a| a.0));
        rates.push(rate);
    }
    let (raw, sp) = (median(raws), median(rates));
    println!(
        "selfplay {} net {}x{} batch {batch}, 1 thread, {} network: bare network {:.0} pos/s, self-play {:.0} evals/s, ratio {:.3} (median of {} runs' ratios; target >= 0.9); CPU-time ratio {:.3}",
        variant.name(),
        cfg.net.blocks,
        cfg.net.channels,
        model.resolved_precision(batch),
        raw,
        sp,
        median(ratios),
        b.runs.max(1),
        median(cpu_ratios)
    );
    println!(
        "  self-play: {:.1} positions per forward pass on average, {:.0} % of the time in encoding + forward passes",
        evals as f64 / batches.max(1) as f64,
        100.0 * median(eval_share)
    );
    Ok(())
}
