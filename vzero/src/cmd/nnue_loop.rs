//! `vzero nnue loop`: teacher workers play and score games, the NNUE trainer trains, each new
//! net is published and loaded by the teachers of the next round (see
//! [`vzero_pipeline::nnue::rounds`]).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use vzero_data::RunDir;
use vzero_pipeline::nnue::{run_loop, LoopEvent, LoopOptions};
use vzero_pipeline::nnue::NnueTrainOptions;
use vzero_rules::Variant;

use crate::cmd::nnue_play::{play_line, GameArgs};

/// `vzero nnue loop`.
#[derive(Args, Debug)]
pub struct LoopArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// Run directory (local or s3://): games go to its data, checkpoints to nnue/, nets to
    /// nnue/nets/ with nnue/nets.csv.
    #[arg(long)]
    pub run: PathBuf,
    /// The teacher: a UCI engine that loads NNUE nets, e.g.
    /// `fsf:depth=2` (Fairy-Stockfish's own training-data depth, the measured default of
    /// scripts/nnue.sh) or `uci:/path/to/fairy-stockfish:variantpath=/path/to/variants.ini:depth=2`.
    #[arg(long)]
    pub teacher: String,
    /// Teacher processes playing at once.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Stop after this many minutes in all.
    #[arg(long, default_value_t = 30.0)]
    pub minutes: f64,
    /// Stop after this many rounds in all (counting earlier sessions).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// Minutes of play per round.
    #[arg(long, default_value_t = 6.0)]
    pub play_minutes: f64,
    /// Minutes of training per round.
    #[arg(long, default_value_t = 4.0)]
    pub train_minutes: f64,
    #[command(flatten)]
    pub game: GameArgs,
    /// Games of each round's gate: the new net plays the teachers' current evaluation (classical
    /// or the best net so far) at the teacher's limits and becomes the teachers' net only when
    /// it scores over 50%; 0: every new net becomes the teachers' net.
    #[arg(long, default_value_t = 40)]
    pub gate_games: u32,
    /// Early stopping of each round's training: stop once the validation loss has not improved
    /// for this many validations (every 100 steps) and keep the best net; 0: off.
    #[arg(long, default_value_t = 5)]
    pub patience: u64,
    /// With --patience: divide the learning rate by 10 this many times on a plateau before a
    /// round's training stops (as `vzero nnue train --lr-drops`).
    #[arg(long, default_value_t = 2)]
    pub lr_drops: u32,
    /// Keep positions whose best move captures (by default they are skipped, as
    /// Fairy-Stockfish's trainers skip them: the net scores quiet positions).
    #[arg(long)]
    pub keep_captures: bool,
    /// Show no training position mirrored (as `vzero nnue train --no-mirror`).
    #[arg(long)]
    pub no_mirror: bool,
    /// Weight of the teacher's score in the loss (the rest on the game's result).
    #[arg(long, default_value_t = 0.75)]
    pub lambda: f32,
    /// Trainer threads (default: all cores; the teachers are idle while it trains).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the random moves and the trainer.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `vzero nnue loop`.
pub fn run(a: LoopArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    let opts = LoopOptions {
        teacher: a.teacher.clone(),
        workers: a.workers,
        minutes: a.minutes,
        rounds: a.rounds,
        play_minutes: a.play_minutes,
        train_minutes: a.train_minutes,
        play: a.game.options(a.seed, !a.quiet),
        train: NnueTrainOptions {
            lambda: a.lambda,
            threads: a.threads,
            seed: a.seed,
            quiet: a.quiet,
            patience: (a.patience > 0).then_some(a.patience),
            lr_drops: a.lr_drops,
            skip_captures: !a.keep_captures,
            mirror: !a.no_mirror,
            ..NnueTrainOptions::default()
        },
        gate_games: a.gate_games,
    };
    // refused before the run is opened, so that a mistyped first command creates no run
    opts.check(variant)?;
    crate::cmd::arena::say_engine(&vzero_arena::PlayerSpec::parse(&a.teacher)?, variant)?;
    let run = RunDir::create_or_open(&a.run).with_context(|| format!("opening run {}", a.run.display()))?;
    let mut on_event = |e: LoopEvent| match e {
        LoopEvent::RoundStart { round, net } => {
            eprintln!("round {round}: teachers play with {}", net.as_deref().unwrap_or("the classical evaluation"));
        }
        LoopEvent::Played { round, summary: s } => {
            for w in &s.warnings {
                eprintln!("warning: {w}");
            }
            eprintln!("round {round}: {}", play_line(&s))
        }
        LoopEvent::Gate { round, report } => eprintln!("round {round}: gate: {report}"),
        LoopEvent::Published(r) => eprintln!(
            "round {}: published nnue/nets/{} (step {}, validation loss {}); the teachers now use {}",
            r.round,
            r.net,
            r.train_step,
            r.validation_loss.map_or("n/a".to_string(), |v| format!("{v:.5}")),
            r.teacher
        ),
    };
    let s = run_loop(&run, variant, &opts, &mut on_event)?;
    println!(
        "loop: {} rounds, {} games, {} positions labelled in {:.0} s of play ({:.0} positions/s), {:.0} s of training, {:.0} s of gates; {} restarts, {} games abandoned",
        s.rounds,
        s.games,
        s.positions,
        s.play_seconds,
        s.positions_per_second(),
        s.train_seconds,
        s.gate_seconds,
        s.restarts,
        s.abandoned
    );
    for r in &s.published {
        println!(
            "  round {}: {} ({} positions, step {}, gate {}, teachers then use {})",
            r.round,
            run.describe(&run.root().join("nnue/nets").join(&r.net)),
            r.positions,
            r.train_step,
            r.gate_score.map_or("off".to_string(), |g| format!("{:.1}%", 100.0 * g)),
            r.teacher
        );
    }
    Ok(())
}
