//! `vzero nnue play`: games a teacher engine plays against itself, every searched position kept
//! with its raw score (Fairy-Stockfish's training-data generator's job, into a run); the data
//! step of `vzero nnue loop`, alone. With `--follow`, the teachers play with the net the run's
//! loop (or trainer) last chose in `nnue/nets.csv`, switching to each new one as self-play
//! workers switch to checkpoints: labelling spread over machines that write into one `s3://` run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use vzero_data::RunDir;
use vzero_rules::Variant;
use vzero_pipeline::nnue::{published_nets, teacher_with_net, teachers_net};
use vzero_teacher::{play_games, PlayOptions, PlaySummary};

/// How a teacher's games are played (shared by `vzero nnue play` and `vzero nnue loop`).
#[derive(Args, Debug, Clone)]
pub struct GameArgs {
    /// Random moves per game, at plies drawn from 0..--random-until.
    #[arg(long, default_value_t = 5)]
    pub random_moves: u32,
    /// See --random-moves.
    #[arg(long, default_value_t = 24)]
    pub random_until: u32,
    /// Positions before this ply are not kept.
    #[arg(long, default_value_t = 8)]
    pub write_from: u32,
    /// A game reaching this many plies stops without a result.
    #[arg(long, default_value_t = 400)]
    pub max_plies: u32,
    /// Adjudicate a game once the teacher's score reaches this many centipawns (0: never).
    #[arg(long, default_value_t = 1500)]
    pub adjudicate_cp: i32,
    /// Games per chunk file at most (with --positions-per-chunk: the most a killed worker loses).
    #[arg(long, default_value_t = 1024)]
    pub games_per_chunk: usize,
    /// A chunk file is written once its games hold this many positions (big files: reading a
    /// day's labels back opens hundreds of files, not a hundred thousand).
    #[arg(long, default_value_t = 16_384)]
    pub positions_per_chunk: usize,
}

impl GameArgs {
    /// The play options these arguments give (teacher, workers, limits and job left to set).
    pub fn options(&self, seed: u64, progress: bool) -> PlayOptions {
        PlayOptions {
            random_moves: self.random_moves,
            random_until: self.random_until,
            write_from: self.write_from,
            max_plies: self.max_plies,
            adjudicate_cp: self.adjudicate_cp,
            games_per_chunk: self.games_per_chunk,
            positions_per_chunk: self.positions_per_chunk,
            seed,
            progress,
            ..PlayOptions::default()
        }
    }
}

/// `vzero nnue play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// Run directory (local or s3://) the games are written into.
    #[arg(long)]
    pub run: PathBuf,
    /// The teacher: a player spec that reports scores, e.g.
    /// `uci:/path/to/fairy-stockfish:variantpath=/path/to/variants.ini:nodes=5000`.
    #[arg(long)]
    pub teacher: String,
    /// Teachers playing at once.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Games to play (default: until --minutes).
    #[arg(long)]
    pub games: Option<usize>,
    /// Stop starting games after this many minutes (default 10 without --games).
    #[arg(long)]
    pub minutes: Option<f64>,
    #[command(flatten)]
    pub game: GameArgs,
    /// Seed of the random moves (a rerun with the same seed and job plays the same openings).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A name for this job in the chunks' names (give each machine its own, with its own
    /// --seed, when several play into one run).
    #[arg(long, default_value = "play")]
    pub job: String,
    /// Play with the teachers' net of the run's `nnue/nets.csv` (what `vzero nnue loop` chose
    /// last), looking for a newer one every --follow-minutes; without a net yet, the classical
    /// evaluation.
    #[arg(long)]
    pub follow: bool,
    /// Minutes between looks at `nnue/nets.csv` with --follow.
    #[arg(long, default_value_t = 2.0)]
    pub follow_minutes: f64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// One line about a teacher's games.
pub fn play_line(s: &PlaySummary) -> String {
    format!(
        "{} games ({} white wins, {} draws, {} black wins; {}), {} positions kept{} of {} searches in {:.0} s ({:.0} positions/s), {} chunks, {} restarts{}",
        s.games,
        s.results[0],
        s.results[1],
        s.results[2],
        s.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", "),
        s.positions,
        if s.siblings > 0 { format!(" ({} of them off the games' paths, from multi-PV lines)", s.siblings) } else { String::new() },
        s.searches,
        s.seconds,
        s.per_second(),
        s.chunks,
        s.restarts,
        if s.abandoned.is_empty() { String::new() } else { format!(", abandoned: {:?}", s.abandoned) }
    )
}

/// Runs `vzero nnue play`.
pub fn run(a: PlayArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    crate::cmd::arena::say_engine(&vzero_arena::PlayerSpec::parse(&a.teacher)?, variant)?;
    let run = RunDir::create_or_open(&a.run).with_context(|| format!("opening run {}", a.run.display()))?;
    let minutes = match (a.games, a.minutes) {
        (None, None) => Some(10.0),
        (_, m) => m,
    };
    let deadline = minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let opts = PlayOptions {
        teacher: a.teacher.clone(),
        concurrency: a.workers,
        games: a.games.unwrap_or(usize::MAX),
        deadline,
        job: a.job.clone(),
        ..a.game.options(a.seed, !a.quiet)
    };
    let s = if a.follow { follow(&run, variant, &opts, a.follow_minutes)? } else { play_games(&run, variant, &opts)? };
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    println!("{}: {}", run.location(), play_line(&s));
    Ok(())
}

/// Plays in segments of `every` minutes, each with the teachers' net of the run's
/// `nnue/nets.csv` at its start (a new seed and job name per segment, so that no two segments
/// play the same openings or write the same chunk names).
fn follow(run: &RunDir, variant: Variant, opts: &PlayOptions, every: f64) -> Result<PlaySummary> {
    if !(every.is_finite() && every > 0.0) {
        anyhow::bail!("--follow-minutes must be positive, not {every}");
    }
    let mut total = PlaySummary::default();
    let mut current: Option<String> = None;
    for segment in 0u64.. {
        let left = opts.games.saturating_sub(total.games);
        if left == 0 || opts.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let (name, net) = teachers_net(run, &published_nets(run)?)?.unzip();
        if segment == 0 || name != current {
            eprintln!("teachers play with {}", name.as_deref().unwrap_or("the classical evaluation"));
            current = name;
        }
        let end = Instant::now() + Duration::from_secs_f64(every * 60.0);
        let seg = PlayOptions {
            teacher: teacher_with_net(&opts.teacher, net.as_deref())?,
            games: left,
            deadline: Some(opts.deadline.map_or(end, |d| d.min(end))),
            seed: opts.seed.wrapping_add(segment.wrapping_mul(0x9e37_79b9)),
            job: format!("{}-{segment:04}", opts.job),
            ..opts.clone()
        };
        total.add(play_games(run, variant, &seg)?);
    }
    Ok(total)
}
