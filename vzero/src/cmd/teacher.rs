//! `vzero import` (games into training rows) and `vzero label` (positions labelled by a
//! teacher engine): the supervised start of a run, before `vzero learn` / `vzero train`.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use vzero_data::RunDir;
use vzero_rules::Variant;
use vzero_teacher::{collect_positions, import_games, label_positions, ImportOptions, LabelOptions, PositionSource, DEFAULT_CP_SCALE};

/// Skipped games printed before "… and N more".
const SHOW_SKIPPED: usize = 10;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// PGN files (UCI moves as Fairy-Stockfish writes them, or the SAN-like form vzero writes).
    #[arg(long, required = true, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Run directory the rows are written into (created if needed).
    #[arg(long)]
    pub run: PathBuf,
    /// Policy target smoothing ε (the move played gets 1 − ε, the other legal moves share ε);
    /// 0 = one-hot.
    #[arg(long, default_value_t = 0.0)]
    pub label_smoothing: f32,
    /// Rows per chunk file.
    #[arg(long, default_value_t = 2000)]
    pub rows_per_chunk: usize,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Args, Debug)]
pub struct LabelArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// The teacher: a player spec that reports a score: `alphabeta:D`, `mcts:N[:knowledge]`,
    /// `net:CKPT:N`, or `uci:CMD[:nodes=N|:movetime=MS|:opt=Name=Value|:variantpath=PATH…]`.
    #[arg(long)]
    pub teacher: String,
    /// Run directory the rows are written into (created if needed).
    #[arg(long)]
    pub run: PathBuf,
    /// Positions to label (random play: required; games: at most this many, default all).
    #[arg(long)]
    pub positions: Option<usize>,
    /// Take the positions from these PGN files or run directories (every position before a
    /// move, distinct); default: random play from the start position.
    #[arg(long, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Random play: each position after 0..=N random plies from the start.
    #[arg(long, default_value_t = 24)]
    pub random_plies: u32,
    /// Node limit of the teacher: `go nodes N` for `uci:` engines (when the spec has no
    /// limit), the simulations of `mcts` teachers.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// For `alphabeta` teachers: the depth (replaces the spec's).
    #[arg(long)]
    pub depth: Option<u32>,
    /// Teachers labelling at once (processes for `uci:`, threads otherwise).
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// Centipawns of the logistic mapping scores to W/D/L: p = 1 / (1 + exp(−cp / scale)).
    #[arg(long, default_value_t = DEFAULT_CP_SCALE)]
    pub cp_scale: f64,
    /// Rows per chunk file (the most a killed job loses per teacher).
    #[arg(long, default_value_t = 500)]
    pub rows_per_chunk: usize,
    /// Seed of the position sample (and of random play).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

fn print_skipped<T: std::fmt::Display>(skipped: &[T]) {
    for s in skipped.iter().take(SHOW_SKIPPED) {
        eprintln!("skipped {s}");
    }
    if skipped.len() > SHOW_SKIPPED {
        eprintln!("… and {} more skipped", skipped.len() - SHOW_SKIPPED);
    }
}

/// `vzero import`.
pub fn import(a: ImportArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    let run = RunDir::create_or_open(&a.run)?;
    let opts = ImportOptions { label_smoothing: a.label_smoothing, rows_per_chunk: a.rows_per_chunk, progress: !a.no_progress };
    let s = import_games(&run, variant, &a.from, &opts)?;
    print_skipped(&s.skipped);
    for f in &s.already_imported {
        eprintln!("{}: already imported into {} (nothing written)", f.display(), a.run.display());
    }
    println!(
        "imported {} of {} games: {} rows in {} chunks ({} rows already there), {} skipped, {:.1} s",
        s.imported,
        s.games,
        s.rows,
        s.chunks,
        s.rows_already_there,
        s.skipped.len(),
        s.seconds
    );
    println!("policy target: {}", if a.label_smoothing > 0.0 { format!("move played, smoothed by {}", a.label_smoothing) } else { "move played (one-hot)".into() });
    println!("data: {}", run.describe(&run.data_dir()));
    Ok(())
}

/// The teacher spec with the command line's depth or node limit applied.
fn teacher_spec(a: &LabelArgs) -> Result<String> {
    let mut spec = a.teacher.clone();
    if let Some(d) = a.depth {
        if !spec.starts_with("alphabeta") {
            bail!("--depth applies to alphabeta teachers; give uci: engines --nodes or nodes=/movetime= in the spec");
        }
        spec = format!("alphabeta:{d}");
    }
    if let Some(n) = a.nodes {
        match spec.split(':').next() {
            Some("uci") if spec.contains(":nodes=") || spec.contains(":movetime=") => {
                bail!("--nodes and a nodes=/movetime= option in the teacher spec: give one")
            }
            Some("uci") => spec = format!("{spec}:nodes={n}"),
            Some("mcts") => spec = format!("mcts:{n}{}", if spec.ends_with(":knowledge") { ":knowledge" } else { "" }),
            _ => bail!("--nodes applies to uci: and mcts teachers"),
        }
    }
    Ok(spec)
}

/// `vzero label`.
pub fn label(a: LabelArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    let teacher = teacher_spec(&a)?;
    crate::cmd::arena::say_engine(&vzero_arena::PlayerSpec::parse(&teacher)?, variant)?;
    let run = RunDir::create_or_open(&a.run)?;
    let source = if a.from.is_empty() { PositionSource::Random { plies: a.random_plies } } else { PositionSource::Games(a.from.clone()) };
    let (positions, skipped) = collect_positions(variant, &source, a.positions, a.seed)?;
    print_skipped(&skipped);
    if positions.is_empty() {
        bail!("no positions to label from {}", source.describe());
    }
    let opts = LabelOptions {
        teacher: teacher.clone(),
        concurrency: a.concurrency,
        cp_scale: a.cp_scale,
        rows_per_chunk: a.rows_per_chunk,
        seed: a.seed,
        job: format!("{} n={:?} seed={}", source.describe(), a.positions, a.seed),
        progress: !a.no_progress,
    };
    let s = label_positions(&run, variant, &positions, &opts)?;
    println!(
        "labelled {} positions with {teacher} in {:.1} s ({:.1} positions/s, {} teachers), {} chunks; {} already labelled by an earlier run of this job",
        s.labelled,
        s.seconds,
        s.per_second(),
        a.concurrency,
        s.chunks,
        s.already_done
    );
    let skipped: usize = s.skipped.values().sum();
    if skipped > 0 || s.restarts > 0 {
        println!("skipped {skipped} positions, {} teacher restarts", s.restarts);
        for (why, n) in &s.skipped {
            println!("  {n} × {why}");
        }
    }
    println!("values: p(win) = 1 / (1 + exp(-cp / {})), mates 1 or 0; job {:016x}", a.cp_scale, s.job_id);
    println!("data: {}", run.describe(&run.data_dir()));
    Ok(())
}
