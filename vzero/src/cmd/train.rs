//! `vzero train`, `vzero selfplay` and `vzero learn`: the training loop, together in one process
//! or each half alone against a shared run directory.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vzero_arena::gauntlet::{read_elo_csv, GauntletSummary};
use vzero_arena::run_gauntlet;
use vzero_data::RunDir;
use vzero_model::DeviceChoice;
use vzero_rules::Variant;
use vzero_selfplay::{run_worker, Stats, WorkerContext};
use vzero_trainer::{LearnStatus, Learner, StopReason};

use crate::config::RunConfig;

/// Options shared by the three commands.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Variant whose embedded default config to use (when no --config and no stored config).
    #[arg(long)]
    pub variant: Option<String>,
    /// Config file (TOML); default: the run's stored config, else the variant's embedded one.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run directory: data, checkpoints, metrics and plots.
    #[arg(long)]
    pub run: PathBuf,
    /// Stop after this many minutes.
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Stop after this many finished self-play games (this process).
    #[arg(long)]
    pub games: Option<u64>,
    /// Stop after this many training steps (in all, counting earlier sessions).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Override the config's device: auto, cpu, cuda, cuda:N.
    #[arg(long)]
    pub device: Option<DeviceChoice>,
    /// Override the number of self-play workers.
    #[arg(long)]
    pub workers: Option<usize>,
    /// No progress bar (for logs).
    #[arg(long)]
    pub quiet: bool,
}

/// The effective config of a run: `--config`, else the run's stored config, else the embedded
/// default of `--variant` (empire by default). Stored into the run directory.
fn resolve_config(a: &RunArgs, run: &RunDir) -> Result<RunConfig> {
    let stored = run.root().join("config.toml");
    let mut cfg = if let Some(path) = &a.config {
        RunConfig::load(path)?
    } else if stored.exists() {
        RunConfig::load(&stored)?
    } else {
        RunConfig::embedded(a.variant.as_deref().unwrap_or("empire"))?
    };
    if let Some(v) = &a.variant {
        if &cfg.variant != v {
            bail!("--variant {v} does not match the config's variant '{}'", cfg.variant);
        }
    }
    if stored.exists() {
        let old = RunConfig::load(&stored)?;
        if old.variant != cfg.variant {
            bail!("run {} holds variant '{}', not '{}'", run.root().display(), old.variant, cfg.variant);
        }
    }
    if let Some(d) = a.device {
        cfg.device = d.to_string();
    }
    if let Some(w) = a.workers {
        cfg.selfplay.workers = w;
    }
    cfg.validate()?;
    vzero_model::checkpoint::write_atomic(&stored, cfg.to_toml()?.as_bytes())?;
    Ok(cfg)
}

struct Limits {
    start: Instant,
    minutes: Option<f64>,
    steps: Option<u64>,
}

impl Limits {
    fn time_left(&self) -> bool {
        self.minutes.is_none_or(|m| self.start.elapsed().as_secs_f64() < m * 60.0)
    }
}

fn bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"));
    pb.enable_steady_tick(Duration::from_millis(250));
    pb
}

fn selfplay_line(stats: &Stats) -> String {
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let evals = l(&stats.evals);
    let batches = l(&stats.batches).max(1);
    format!(
        "games {} (+{} ={} -{}) moves {} rows {} | batch {:.1} | net {}",
        l(&stats.games),
        l(&stats.results[0]),
        l(&stats.results[1]),
        l(&stats.results[2]),
        l(&stats.moves),
        l(&stats.rows),
        evals as f64 / batches as f64,
        stats.network.lock().unwrap_or_else(|e| e.into_inner())
    )
}

fn learn_line(s: &LearnStatus) -> String {
    format!(
        "step {} gen {} loss {:.3} (policy {:.3} value {:.3}) window {} rows",
        s.step, s.generation, s.losses.total, s.losses.policy, s.losses.value, s.window_rows
    )
}

/// Starts `workers` self-play threads.
fn spawn_workers(cfg: &RunConfig, run: &RunDir, variant: Variant, stop: &Arc<AtomicBool>, stats: &Arc<Stats>, max_games: Option<u64>) -> Result<Vec<std::thread::JoinHandle<Result<()>>>> {
    let device = cfg.device.parse::<DeviceChoice>().map_err(anyhow::Error::msg)?.resolve()?;
    let host = std::process::id();
    (0..cfg.selfplay.workers)
        .map(|i| {
            let ctx = WorkerContext {
                run: run.clone(),
                variant,
                config: cfg.selfplay.clone(),
                device,
                stop: stop.clone(),
                stats: stats.clone(),
                max_games,
                name: format!("p{host}w{i}"),
                seed: rand_seed(i),
            };
            std::thread::Builder::new().name(format!("selfplay-{i}")).spawn(move || run_worker(ctx)).context("starting a self-play thread")
        })
        .collect()
}

fn rand_seed(i: usize) -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    t ^ (std::process::id() as u64) << 32 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn join(workers: Vec<std::thread::JoinHandle<Result<()>>>) -> Result<()> {
    for w in workers {
        match w.join() {
            Ok(r) => r?,
            Err(_) => bail!("a self-play thread panicked"),
        }
    }
    Ok(())
}

fn open_learner(cfg: &RunConfig, run: &RunDir, variant: Variant) -> Result<Learner> {
    let device = cfg.device.parse::<DeviceChoice>().map_err(anyhow::Error::msg)?.resolve()?;
    let net = cfg.net_config(variant)?;
    Learner::open(run, variant, &net, cfg.learn.clone(), device)
}

fn print_paths(run: &RunDir) {
    println!("run directory  {}", run.root().display());
    println!("  checkpoints  {}", run.checkpoints_dir().display());
    println!("  data         {}", run.data_dir().display());
    println!("  metrics      {}", run.metrics_csv().display());
    println!("  plots        {}", run.plots_dir().display());
}

/// `vzero train`: self-play and training together.
pub fn train(a: RunArgs) -> Result<()> {
    let run = RunDir::create_or_open(&a.run)?;
    let cfg = resolve_config(&a, &run)?;
    let variant = Variant::load(&cfg.variant)?;
    let removed = run.clean_tmp()?;
    if removed > 0 {
        eprintln!("removed {removed} temporary files left by an interrupted run");
    }
    let limits = Limits { start: Instant::now(), minutes: a.minutes, steps: a.steps };
    let mut learner = open_learner(&cfg, &run, variant)?;
    let start_step = learner.step();
    let stop = Arc::new(AtomicBool::new(false));
    let stats = Arc::new(Stats::default());
    let workers = spawn_workers(&cfg, &run, variant, &stop, &stats, a.games)?;
    let pb = bar(a.quiet);
    let mut last_learn = String::from("waiting for data");
    let games_done = || a.games.is_some_and(|g| stats.games.load(Ordering::Relaxed) >= g);
    let mut failure = None;
    // Gauntlets: for generations published from now on (not the one resumed from); the time
    // of earlier sessions counts up to their last gauntlet.
    let every = cfg.gauntlet.every;
    let elo_csv = vzero_arena::gauntlet::arena_dir(&run).join("elo.csv");
    let minutes_before = if start_step == 0 { 0.0 } else { read_elo_csv(&elo_csv).unwrap_or_default().iter().map(|r| r.minutes).fold(0.0, f64::max) };
    let mut gauntlet_done = learner.generation();
    let mut latest_gauntlet: Option<GauntletSummary> = None;
    loop {
        let step_limit = limits.steps.is_some_and(|s| learner.step() >= s);
        if !limits.time_left() || games_done() || step_limit || workers.iter().all(|w| w.is_finished()) {
            break;
        }
        let done = gauntlet_done;
        let due = |g: u64| every > 0 && g > done && g % every == 0;
        let step = Cell::new(learner.step());
        let generation = Cell::new(learner.generation());
        // Stops right after publishing a generation that is due for a gauntlet (the learner then
        // has nothing unpublished, so stopping adds no generation).
        let keep_going = || {
            limits.time_left()
                && !games_done()
                && limits.steps.is_none_or(|s| step.get() < s)
                && !workers.iter().any(|w| w.is_finished())
                && !due(generation.get())
        };
        let mut progress = |s: &LearnStatus| {
            step.set(s.step);
            generation.set(s.generation);
            last_learn = learn_line(s);
            pb.set_message(format!("{} | {}", selfplay_line(&stats), last_learn));
        };
        let summary = match learner.run(&keep_going, &mut progress) {
            Ok(s) => s,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        if due(learner.generation()) {
            // Self-play goes on in its threads meanwhile; the learner waits.
            gauntlet_done = learner.generation();
            let ckpt = run.checkpoints_dir().join(format!("{}.json", learner.network()));
            pb.set_message(format!("{} | {} (gauntlet of {})", selfplay_line(&stats), last_learn, learner.network()));
            let minutes = minutes_before + limits.start.elapsed().as_secs_f64() / 60.0;
            match run_gauntlet(&run, variant, &ckpt, &cfg.gauntlet, minutes) {
                Ok(g) => {
                    pb.println(g.line());
                    latest_gauntlet = Some(g);
                }
                Err(e) => pb.println(format!("warning: gauntlet of {} failed: {e:#}", learner.network())),
            }
        } else if summary.stop == StopReason::NeedData {
            pb.set_message(format!("{} | {} (waiting for data)", selfplay_line(&stats), last_learn));
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let joined = join(workers);
    if failure.is_none() && joined.is_ok() && games_done() {
        // The game limit bounds self-play; train on what it produced (within the reuse cap).
        let step = Cell::new(learner.step());
        let keep_going = || limits.time_left() && limits.steps.is_none_or(|s| step.get() < s);
        if let Err(e) = learner.run(&keep_going, &mut |s: &LearnStatus| {
            step.set(s.step);
            pb.set_message(format!("{} | {}", selfplay_line(&stats), learn_line(s)));
        }) {
            failure = Some(e);
        }
    }
    pb.finish_and_clear();
    if let Some(e) = failure {
        return Err(e);
    }
    joined?;
    learner.publish()?;
    println!("{}", selfplay_line(&stats));
    println!(
        "trained {} steps this session (step {} in all, generation {}), {:.1} min",
        learner.step() - start_step,
        learner.step(),
        learner.generation(),
        limits.start.elapsed().as_secs_f64() / 60.0
    );
    match latest_gauntlet {
        Some(g) => println!("latest {}", g.line()),
        None => {
            if let Some(r) = read_elo_csv(&elo_csv).ok().and_then(|rows| rows.last().cloned()) {
                println!("latest gauntlet {}: elo {:.0} [{:.0}, {:.0}] (earlier session)", r.checkpoint, r.elo, r.lo, r.hi);
            } else if every > 0 {
                println!("no gauntlet yet (every {every} generations)");
            }
        }
    }
    print_paths(&run);
    if elo_csv.exists() {
        println!("  elo          {} ({})", elo_csv.display(), run.plots_dir().join("elo.svg").display());
    }
    Ok(())
}

/// Arguments of `vzero gauntlet`.
#[derive(Args, Debug, Clone)]
pub struct GauntletArgs {
    /// Run directory (its stored config's `[gauntlet]` section is used; defaults when off).
    #[arg(long)]
    pub run: PathBuf,
    /// Checkpoint to rate (default: the run's newest).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Training minutes recorded for the checkpoint (default: its file time minus generation 0's).
    #[arg(long)]
    pub minutes: Option<f64>,
}

fn mtime(p: &std::path::Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// `vzero gauntlet`: one gauntlet by hand.
pub fn gauntlet(a: GauntletArgs) -> Result<()> {
    if !a.run.is_dir() {
        bail!("run directory {} does not exist", a.run.display());
    }
    let run = RunDir::create_or_open(&a.run)?;
    let stored = run.root().join("config.toml");
    let cfg = RunConfig::load(&stored).with_context(|| format!("{} is not a vzero run (no config.toml)", run.root().display()))?;
    let variant = Variant::load(&cfg.variant)?;
    let ckpt = match a.checkpoint {
        Some(p) => p,
        None => run.latest_checkpoint()?.with_context(|| format!("no checkpoint in {}", run.checkpoints_dir().display()))?,
    };
    let minutes = a.minutes.unwrap_or_else(|| {
        let first = run.list_checkpoints().ok().and_then(|c| c.first().map(|c| c.path.clone()));
        let json = if ckpt.extension().is_some_and(|e| e == "json") { ckpt.clone() } else { ckpt.with_extension("json") };
        match (first.as_deref().and_then(mtime), mtime(&json)) {
            (Some(t0), Some(t)) => t.duration_since(t0).map_or(0.0, |d| d.as_secs_f64() / 60.0),
            _ => 0.0,
        }
    });
    let g = run_gauntlet(&run, variant, &ckpt, &cfg.gauntlet, minutes)?;
    println!("{}", g.line());
    print!("{}", vzero_arena::format_table(&g.ratings));
    let dir = vzero_arena::gauntlet::arena_dir(&run);
    println!("games    {}", dir.join("games.pgn").display());
    println!("ratings  {}", dir.join("ratings.csv").display());
    println!("elo      {} ({})", dir.join("elo.csv").display(), run.plots_dir().join("elo.svg").display());
    Ok(())
}

/// `vzero selfplay`: self-play alone, against the run's newest checkpoint.
pub fn selfplay(a: RunArgs) -> Result<()> {
    let run = RunDir::create_or_open(&a.run)?;
    let cfg = resolve_config(&a, &run)?;
    let variant = Variant::load(&cfg.variant)?;
    if run.latest_checkpoint()?.is_none() {
        eprintln!("no checkpoint in {} yet: waiting for `vzero learn` to publish one", run.checkpoints_dir().display());
    }
    let limits = Limits { start: Instant::now(), minutes: a.minutes, steps: None };
    let stop = Arc::new(AtomicBool::new(false));
    let stats = Arc::new(Stats::default());
    let workers = spawn_workers(&cfg, &run, variant, &stop, &stats, a.games)?;
    let pb = bar(a.quiet);
    while limits.time_left() && !workers.iter().all(|w| w.is_finished()) {
        pb.set_message(selfplay_line(&stats));
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, Ordering::Relaxed);
    let joined = join(workers);
    pb.finish_and_clear();
    joined?;
    println!("{}", selfplay_line(&stats));
    print_paths(&run);
    Ok(())
}

/// `vzero learn`: training alone, on the data that self-play processes write into the run.
pub fn learn(a: RunArgs) -> Result<()> {
    let run = RunDir::create_or_open(&a.run)?;
    let cfg = resolve_config(&a, &run)?;
    let variant = Variant::load(&cfg.variant)?;
    let limits = Limits { start: Instant::now(), minutes: a.minutes, steps: a.steps };
    let mut learner = open_learner(&cfg, &run, variant)?;
    let start_step = learner.step();
    let pb = bar(a.quiet);
    pb.set_message("waiting for data");
    let step = Cell::new(learner.step());
    let keep_going = || limits.time_left() && limits.steps.is_none_or(|s| step.get() < s);
    learner.run_polling(&keep_going, Duration::from_millis(500), &mut |s: &LearnStatus| {
        step.set(s.step);
        pb.set_message(learn_line(s));
    })?;
    pb.finish_and_clear();
    learner.publish()?;
    println!("trained {} steps (step {} in all, generation {})", learner.step() - start_step, learner.step(), learner.generation());
    print_paths(&run);
    Ok(())
}
