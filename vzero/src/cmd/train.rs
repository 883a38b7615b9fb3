//! `vzero train`, `vzero selfplay` and `vzero learn`: the training loop, together in one process
//! or each half alone against a shared run directory.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vzero_arena::gauntlet::read_elo_csv;
use vzero_arena::run_gauntlet;
use vzero_data::RunDir;
use vzero_model::DeviceChoice;
use vzero_pipeline::{ConfigChoice, Event, Limits, RunConfig, Session};
use vzero_rules::Variant;

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
    /// Override the teacher workers of `vzero train`: a player spec that teaches (e.g.
    /// `fsf:nodes=1000`, `alphabeta:3`, `uci:/path/to/engine:nodes=500`), or `off`.
    #[arg(long)]
    pub teacher: Option<String>,
    /// No progress bar (for logs).
    #[arg(long)]
    pub quiet: bool,
}

impl RunArgs {
    fn session(&self) -> Result<Session> {
        let choice = ConfigChoice { file: self.config.clone(), variant: self.variant.clone(), device: self.device.map(|d| d.to_string()), workers: self.workers, teacher: self.teacher.clone() };
        Session::open(&self.run, &choice)
    }

    fn limits(&self) -> Limits {
        Limits { minutes: self.minutes, games: self.games, steps: self.steps }
    }
}

/// Shows a session's events: progress on the bar, notes and gauntlets as lines above it (on
/// stderr when there is no bar).
fn show(pb: &ProgressBar) -> impl FnMut(Event<'_>) + '_ {
    let line = move |s: &str| if pb.is_hidden() { eprintln!("{s}") } else { pb.println(s) };
    move |e| match e {
        Event::Progress(m) => pb.set_message(m.to_string()),
        Event::Gauntlet(g) => line(&g.line()),
        Event::Note(m) => line(m),
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

fn print_paths(run: &RunDir) {
    println!("run directory  {}", run.location());
    println!("  checkpoints  {}", run.describe(&run.checkpoints_dir()));
    println!("  data         {}", run.describe(&run.data_dir()));
    println!("  metrics      {}", run.describe(&run.metrics_csv()));
    println!("  plots        {}", run.describe(&run.plots_dir()));
}

/// `vzero train`: self-play and training together.
pub fn train(a: RunArgs) -> Result<()> {
    let session = a.session()?;
    let pb = bar(a.quiet);
    let result = session.train(&a.limits(), &mut show(&pb));
    pb.finish_and_clear();
    let t = result?;
    println!("{}", t.selfplay);
    if let Some(line) = &t.teacher {
        println!("{line}");
    }
    println!("trained {} steps this session (step {} in all, generation {}), {:.1} min", t.steps, t.step, t.generation, t.minutes);
    match &t.latest_gauntlet {
        Some(g) => println!("latest {}", g.line()),
        None => {
            if let Some(r) = read_elo_csv(&t.elo_csv).ok().and_then(|rows| rows.last().cloned()) {
                println!("latest gauntlet {}: elo {:.0} [{:.0}, {:.0}] (earlier session)", r.checkpoint, r.elo, r.lo, r.hi);
            } else if session.config().gauntlet.every > 0 {
                println!("no gauntlet yet (every {} generations)", session.config().gauntlet.every);
            }
        }
    }
    print_paths(session.run());
    if t.elo_csv.exists() {
        let run = session.run();
        println!("  elo          {} ({})", run.describe(&t.elo_csv), run.describe(&run.plots_dir().join("elo.svg")));
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

/// An existing run (disk or object storage) with its stored config and variant, for the commands
/// that rate what a run made; errors say when the directory or its config is missing.
fn open_finished_run(path: &std::path::Path) -> Result<(RunDir, RunConfig, Variant)> {
    if !vzero_data::remote::is_remote_spec(path) && !path.is_dir() {
        bail!("run directory {} does not exist", path.display());
    }
    let run = RunDir::create_or_open(path)?;
    let stored = run.root().join("config.toml");
    let cfg = RunConfig::load(&stored).with_context(|| format!("{} is not a vzero run (no config.toml)", run.location()))?;
    let variant = Variant::load(&cfg.variant)?;
    Ok((run, cfg, variant))
}

/// `vzero gauntlet`: one gauntlet by hand.
pub fn gauntlet(a: GauntletArgs) -> Result<()> {
    let (run, cfg, variant) = open_finished_run(&a.run)?;
    let ckpt = match a.checkpoint {
        Some(p) => p,
        None => run.latest_checkpoint()?.with_context(|| format!("no checkpoint in {}", run.location()))?,
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
    vzero_trainer::tensorboard::RunEvents::new(&run).log_elo(g.row.step, &g.elo_vs_opponents());
    println!("{}", g.line());
    print!("{}", vzero_arena::format_table(&g.ratings));
    let dir = vzero_arena::gauntlet::arena_dir(&run);
    println!("games    {}", run.describe(&dir.join("games.pgn")));
    println!("ratings  {}", run.describe(&dir.join("ratings.csv")));
    println!("elo      {} ({})", run.describe(&dir.join("elo.csv")), run.describe(&run.plots_dir().join("elo.svg")));
    Ok(())
}

/// Arguments of `vzero curve`.
#[derive(Args, Debug, Clone)]
pub struct CurveArgs {
    /// Run directory.
    #[arg(long)]
    pub run: PathBuf,
    /// Checkpoints measured, evenly spaced over the run's training time (the newest is always one).
    #[arg(long, default_value_t = 4)]
    pub points: usize,
    /// Games per point (colour-swapped pairs from the same random openings for every point).
    #[arg(long, default_value_t = 40)]
    pub games: u32,
    /// Simulations per move of both sides.
    #[arg(long, default_value_t = 64)]
    pub sims: u32,
    /// Random plies of each pair's opening.
    #[arg(long, default_value_t = 8)]
    pub openings_plies: u32,
    /// A game longer than this many plies (opening included) is adjudicated a draw.
    #[arg(long, default_value_t = 500)]
    pub max_plies: u32,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Seed of the openings and the players' randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `vzero curve`: the run's learning curve, checkpoints against generation 0.
pub fn curve(a: CurveArgs) -> Result<()> {
    let (run, _, variant) = open_finished_run(&a.run)?;
    let paired = vzero_arena::PairedGames {
        games: a.games,
        sims: a.sims,
        max_plies: a.max_plies,
        opening_plies: a.openings_plies,
        concurrency: a.concurrency,
    };
    let cc = vzero_arena::CurveConfig { points: a.points, paired, seed: a.seed };
    println!("learning curve of {}: {} points, {} games each at {} simulations, against generation 0", run.location(), a.points, a.games, a.sims);
    let points = vzero_arena::run_curve(&run, variant, &cc, |p, played| {
        println!("{}{}", p.line(), if played { "" } else { "  (measured before)" });
    })?;
    let games: u32 = points.iter().map(|p| p.games).sum();
    if let Some(last) = points.last() {
        println!("summary: {} points, {games} games; newest {} after {:.1} min: elo {} [{}, {}] against generation 0", points.len(), last.checkpoint, last.minutes, vzero_arena::elo::fmt_elo(last.elo), vzero_arena::elo::fmt_elo(last.lo), vzero_arena::elo::fmt_elo(last.hi));
    }
    let dir = vzero_arena::gauntlet::arena_dir(&run);
    println!("curve    {} ({})", run.describe(&dir.join("curve.csv")), run.describe(&run.plots_dir().join("curve.svg")));
    Ok(())
}

/// `vzero selfplay`: self-play alone, against the run's newest checkpoint.
pub fn selfplay(a: RunArgs) -> Result<()> {
    let session = a.session()?;
    let pb = bar(a.quiet);
    let result = session.selfplay(&Limits { steps: None, ..a.limits() }, &mut show(&pb));
    pb.finish_and_clear();
    println!("{}", result?.selfplay);
    print_paths(session.run());
    Ok(())
}

/// `vzero learn`: training alone, on the data that self-play processes write into the run.
pub fn learn(a: RunArgs) -> Result<()> {
    let session = a.session()?;
    let pb = bar(a.quiet);
    let result = session.learn(&Limits { games: None, ..a.limits() }, &mut show(&pb));
    pb.finish_and_clear();
    let l = result?;
    println!("trained {} steps (step {} in all, generation {})", l.steps, l.step, l.generation);
    print_paths(session.run());
    Ok(())
}
