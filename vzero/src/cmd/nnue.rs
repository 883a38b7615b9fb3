//! `vzero nnue …`: Fairy-Stockfish NNUE nets (`HalfKAv2Variants`) for a variant: evaluate a
//! `.nnue` file exactly as Fairy-Stockfish does, write the material net, show the layout.

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use vzero_nnue::{format, Arithmetic, Evaluator, FsfMapping, Network};
use vzero_rules::Variant;

use crate::cmd::rules::PositionArgs;

/// The `nnue` subcommands.
#[derive(Subcommand, Debug)]
pub enum NnueCommand {
    /// Evaluate a position with a .nnue file as Fairy-Stockfish's `eval` does; the first line is
    /// its `NNUE evaluation        +X.XX (white side)`, the second the raw integer terms.
    Eval(EvalArgs),
    /// Write a variant's material net (PSQT rows = piece values, every other weight 0): its
    /// evaluation is the material balance, to check a Fairy-Stockfish build by hand.
    Material(MaterialArgs),
    /// Show a variant's feature layout: Fairy-Stockfish piece types in plane order, features,
    /// file size, the build it needs.
    Info(InfoArgs),
    /// Train a float net on the CPU from a run's games (positions replayed, targets: search
    /// values and results mixed by --lambda); checkpoints in DIR/nnue/, resumed from the newest.
    Train(TrainArgs),
    /// Quantise a training checkpoint into a .nnue file Fairy-Stockfish loads.
    Export(ExportArgs),
    /// Games a teacher engine (Fairy-Stockfish) plays against itself with random moves early,
    /// every searched position kept with its raw score: training data, into a run.
    Play(crate::cmd::nnue_play::PlayArgs),
    /// Rounds of: teacher engines (Fairy-Stockfish) play and score games, the trainer trains,
    /// the new net is published and the teachers load it for the next round.
    Loop(crate::cmd::nnue_loop::LoopArgs),
}

/// `vzero nnue train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Run directory (local or s3://): its chunks' games and scored positions are the data;
    /// checkpoints, metrics.csv and loss.svg go to DIR/nnue/ (one NNUE trainer per run).
    #[arg(long)]
    pub run: PathBuf,
    /// Variant (default: the checkpoint's, else the run's config's, else its data's).
    #[arg(long)]
    pub variant: Option<String>,
    /// More data: run directories (local or s3://) and PGN files (a PGN game's only target is
    /// its result; undecided games and games of other variants are skipped).
    #[arg(long, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Stop after this many minutes, reading the data included (at least one step is taken).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Stop after this many steps in all (counting earlier sessions); default 1000 when no
    /// --minutes.
    #[arg(long)]
    pub steps: Option<u64>,
    /// Weight of the search-value target (the rest on the game result).
    #[arg(long, default_value_t = 0.5)]
    pub lambda: f32,
    /// Positions per step.
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Adam's learning rate (default 1e-3; a resumed run keeps its own unless given).
    #[arg(long)]
    pub lr: Option<f32>,
    /// Fraction of the games held out for the validation loss.
    #[arg(long, default_value_t = 0.1)]
    pub holdout: f64,
    /// Skip positions whose played move captures (positions in check are always skipped).
    #[arg(long)]
    pub skip_captures: bool,
    /// Steps between metrics rows (and validation losses).
    #[arg(long, default_value_t = 100)]
    pub log_every: u64,
    /// Minutes between checkpoints (one is always written at the end).
    #[arg(long, default_value_t = 10.0)]
    pub checkpoint_minutes: f64,
    /// Threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Early stopping: stop once the validation loss has not improved for this many
    /// validations (every --log-every steps) and keep the best net; 0: off (train to the limit,
    /// keep the last net).
    #[arg(long, default_value_t = 5)]
    pub patience: u64,
    /// With --patience: divide the learning rate by 10 this many times when the validation
    /// loss stops improving, before stopping (reduce-on-plateau; measured: held-out loss
    /// 0.07315 -> 0.07282 on 3.46M depth-2 empire positions, docs/nnue.md); 0: stop at once.
    #[arg(long, default_value_t = 2)]
    pub lr_drops: u32,
    /// Train without the virtual factoriser (piece-square rows shared by every king position,
    /// folded into the net at export; on by default).
    #[arg(long)]
    pub no_factorizer: bool,
    /// Show no training position mirrored left to right (by default half of them are, each
    /// epoch anew, where every piece of the variant moves as its mirror image).
    #[arg(long)]
    pub no_mirror: bool,
    /// Seed of the initial net and the batch order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `vzero nnue export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Run directory: exports the newest checkpoint in DIR/nnue/.
    #[arg(long, conflicts_with = "net", required_unless_present = "net")]
    pub run: Option<PathBuf>,
    /// A checkpoint file (.vzck).
    #[arg(long)]
    pub net: Option<PathBuf>,
    /// Output .nnue file, or a directory: then the file is named <variant>-<first 12 hex of
    /// its sha256>.nnue.
    #[arg(long)]
    pub out: PathBuf,
}

/// How the hidden layers add (`--arithmetic`).
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ArithmeticArg {
    /// Fairy-Stockfish's x86 builds with SSSE3 and no VNNI (modern, avx2, bmi2, avx512).
    Ssse3,
    /// Its scalar, SSE2, NEON and VNNI builds.
    Exact,
}

/// `vzero nnue eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The .nnue file.
    #[arg(long)]
    pub net: PathBuf,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Hidden-layer arithmetic of the Fairy-Stockfish build to reproduce (they differ only for
    /// nets whose sums of four products leave the 16-bit range).
    #[arg(long, value_enum, default_value = "ssse3")]
    pub arithmetic: ArithmeticArg,
    /// Evaluate every FEN of this file (one a line; `-`: standard input) instead of one
    /// position: one line each, `FEN: NNUE evaluation …` (`FEN: none (in check)` for a side to
    /// move in check, which Fairy-Stockfish does not evaluate); the net is read once.
    #[arg(long, conflicts_with_all = ["fen", "moves"])]
    pub fens: Option<PathBuf>,
}

/// `vzero nnue material`.
#[derive(Args, Debug)]
pub struct MaterialArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// Output file (.nnue); its name should start with the variant's for Fairy-Stockfish.
    #[arg(long)]
    pub out: PathBuf,
}

/// `vzero nnue info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
}

/// Runs an `nnue` subcommand.
pub fn run(c: NnueCommand) -> Result<()> {
    match c {
        NnueCommand::Eval(a) => eval(a),
        NnueCommand::Material(a) => material(a),
        NnueCommand::Info(a) => info(a),
        NnueCommand::Train(a) => train(a),
        NnueCommand::Export(a) => export(a),
        NnueCommand::Play(a) => crate::cmd::nnue_play::run(a),
        NnueCommand::Loop(a) => crate::cmd::nnue_loop::run(a),
    }
}

fn mapping(variant: &str) -> Result<FsfMapping> {
    Ok(FsfMapping::for_variant(Variant::load(variant)?)?)
}

fn eval(a: EvalArgs) -> Result<()> {
    let arithmetic = match a.arithmetic {
        ArithmeticArg::Ssse3 => Arithmetic::Ssse3,
        ArithmeticArg::Exact => Arithmetic::Exact,
    };
    if let Some(file) = &a.fens {
        return eval_fens(&a, file, arithmetic);
    }
    let game = a.position.game()?;
    let pos = game.position();
    let m = FsfMapping::for_variant(pos.variant())?;
    let net = format::read_file(&a.net, &m)?;
    let e = Evaluator::new(m, net)?.with_arithmetic(arithmetic).evaluate(pos)?;
    println!("{}", e.fsf_line());
    println!(
        "internal {} (white side): ({} psqt + {} positional) / 16 = {} for {} to move, bucket {}",
        e.white_value(),
        e.psqt,
        e.positional,
        e.value,
        if e.side_to_move == vzero_rules::Color::White { "White" } else { "Black" },
        e.bucket.index()
    );
    if pos.is_check() {
        println!("note: the side to move is in check; Fairy-Stockfish's eval prints only \"Final evaluation: none (in check)\" here");
    }
    Ok(())
}

/// `vzero nnue eval --fens FILE`: one line per FEN, the net read once.
fn eval_fens(a: &EvalArgs, file: &std::path::Path, arithmetic: Arithmetic) -> Result<()> {
    use std::io::{BufRead, Write};
    let variant = Variant::load(&a.position.variant)?;
    let m = FsfMapping::for_variant(variant)?;
    let net = format::read_file(&a.net, &m)?;
    let evaluator = Evaluator::new(m, net)?.with_arithmetic(arithmetic);
    let input: Box<dyn BufRead> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?))
    };
    let mut out = std::io::stdout().lock();
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", file.display()))?;
        let fen = line.trim();
        if fen.is_empty() {
            continue;
        }
        let pos = vzero_rules::Position::from_fen(variant, fen).with_context(|| format!("{} line {}", file.display(), i + 1))?;
        if pos.is_check() {
            writeln!(out, "{fen}: none (in check)")?;
        } else {
            writeln!(out, "{fen}: {}", evaluator.evaluate(&pos)?.fsf_line())?;
        }
    }
    Ok(())
}

fn material(a: MaterialArgs) -> Result<()> {
    let m = mapping(&a.variant)?;
    let net = Network::material(&m);
    format::write_file(&a.out, &net)?;
    let size = std::fs::metadata(&a.out).with_context(|| format!("reading {}", a.out.display()))?.len();
    println!("wrote {} ({size} bytes, {} features): the {} material net", a.out.display(), m.dimensions(), m.name());
    Ok(())
}

fn info(a: InfoArgs) -> Result<()> {
    let m = mapping(&a.variant)?;
    let v = m.variant();
    let letters: Vec<String> = (0..v.pieces().len())
        .map(|pt| vzero_rules::PieceType(pt as u8))
        .map(|pt| (m.slot(pt).unwrap_or(0), pt))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .map(|pt| {
            format!(
                "{}={}",
                v.pieces()[pt.index()].fen(vzero_rules::Color::Black),
                m.fsf_type(pt).map_or("?", |t| t.name())
            )
        })
        .collect();
    println!("variant        {}", m.name());
    println!("piece types    {} (Fairy-Stockfish order, king last)", letters.join(" "));
    println!(
        "squares        {} ({} files x {} ranks), Black's ranks {}",
        m.squares(),
        m.files(),
        m.ranks(),
        if m.flips_black() { "flipped" } else { "not flipped" }
    );
    println!(
        "hands          {}",
        if m.uses_hands() { format!("{} slots per type and colour", m.pockets()) } else { "none".into() }
    );
    println!("king blocks    {}", m.king_blocks());
    println!("features       {} ({} per king block)", m.dimensions(), m.piece_indices());
    println!("max pieces     {} (bucket = min((pieces - 1) * 8 / {}, 7))", m.max_pieces(), m.max_pieces());
    println!("file size      {} bytes (empty description)", format::file_size(m.dimensions(), 0));
    println!(
        "build          {}",
        if m.fits_standard_build() {
            "any Fairy-Stockfish build"
        } else {
            "Fairy-Stockfish built with largeboards=yes"
        }
    );
    Ok(())
}

// ---- training ----------------------------------------------------------------------------

use vzero_pipeline::nnue::{export_nnue, train_nnue, NnueTrainOptions};

fn train(a: TrainArgs) -> Result<()> {
    let from: Vec<String> = a.from.iter().map(|p| p.display().to_string()).collect();
    let opts = NnueTrainOptions {
        lambda: a.lambda,
        batch: a.batch,
        lr: a.lr,
        holdout: a.holdout,
        skip_captures: a.skip_captures,
        log_every: a.log_every,
        checkpoint_minutes: a.checkpoint_minutes,
        threads: a.threads,
        seed: a.seed,
        steps: a.steps,
        minutes: a.minutes,
        factorizer: !a.no_factorizer,
        mirror: !a.no_mirror,
        patience: (a.patience > 0).then_some(a.patience),
        lr_drops: a.lr_drops,
        quiet: a.quiet,
    };
    // refused before the run is opened, so that a mistyped first command creates no run
    opts.check()?;
    if let Some(v) = &a.variant {
        FsfMapping::for_variant(Variant::load(v)?)?;
    }
    let run = vzero_data::RunDir::create_or_open(&a.run).with_context(|| format!("opening run {}", a.run.display()))?;
    let s = train_nnue(&run, a.variant.as_deref(), &from, &opts)?;
    if s.last_step != s.step || s.stopped_early {
        eprintln!(
            "early stopping: {}kept step {} of {} (the best validation loss)",
            if s.stopped_early { "the validation loss stopped improving; " } else { "" },
            s.step,
            s.last_step
        );
    }
    println!(
        "trained {} steps ({} → {}), {} positions in {:.1} s ({:.0} positions/s) on {} training positions, validation loss {} on {}; targets {}; checkpoint {}",
        s.step - s.start_step,
        s.start_step,
        s.step,
        s.positions,
        s.seconds,
        s.per_second(),
        s.train_positions,
        s.validation_loss.map_or("n/a".to_string(), |v| format!("{v:.5}")),
        s.validation_positions,
        s.targets,
        s.checkpoint.unwrap_or_else(|| "unchanged".to_string())
    );
    Ok(())
}

fn export(a: ExportArgs) -> Result<()> {
    let run = a.run.as_ref().map(vzero_data::RunDir::create_or_open).transpose()?;
    let (path, description) = export_nnue(run.as_ref(), a.net.as_deref(), &a.out)?;
    let size = std::fs::metadata(&path).with_context(|| format!("reading {}", path.display()))?.len();
    println!("wrote {} ({size} bytes): {description}", path.display());
    Ok(())
}
