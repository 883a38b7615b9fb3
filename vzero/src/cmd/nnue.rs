//! `vzero nnue …`: Fairy-Stockfish NNUE nets (`HalfKAv2Variants`) for a variant: evaluate a
//! `.nnue` file exactly as Fairy-Stockfish does, write the material net, show the layout.

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
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
}

/// `vzero nnue train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Run directory (local): its chunks' games are the data; checkpoints and metrics.csv go
    /// to DIR/nnue/.
    #[arg(long)]
    pub run: PathBuf,
    /// Variant (default: the checkpoint's, else the run's config's, else its data's).
    #[arg(long)]
    pub variant: Option<String>,
    /// More run directories whose games to train on too.
    #[arg(long, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Stop after this many minutes.
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
    }
}

fn mapping(variant: &str) -> Result<FsfMapping> {
    Ok(FsfMapping::for_variant(Variant::load(variant)?)?)
}

fn eval(a: EvalArgs) -> Result<()> {
    let game = a.position.game()?;
    let pos = game.position();
    let m = FsfMapping::for_variant(pos.variant())?;
    let net = format::read_file(&a.net, &m)?;
    let arithmetic = match a.arithmetic {
        ArithmeticArg::Ssse3 => Arithmetic::Ssse3,
        ArithmeticArg::Exact => Arithmetic::Exact,
    };
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

use std::time::{Duration, Instant};
use vzero_nnue::checkpoint;
use vzero_nnue::dataset::{game_samples, white_result, DataOptions, SampleCounts};
use vzero_nnue::train::{mean_loss, AdamConfig, Sample, Trainer};
use vzero_nnue::FloatNetwork;

/// Checkpoints kept in DIR/nnue/ (the older ones are removed).
const KEEP_CHECKPOINTS: usize = 2;
const METRICS_HEADER: &str = "step,positions,train_loss,validation_loss,lr,positions_per_s";
const TARGETS: &str = "search values";

fn local_run(dir: &std::path::Path) -> Result<()> {
    if dir.to_string_lossy().starts_with("s3://") {
        anyhow::bail!("vzero nnue reads and writes local run directories only (s3:// is not supported yet): {}", dir.display());
    }
    Ok(())
}

/// The `.h5` chunks of a run (data/ and its archive), oldest first.
fn run_chunks(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    local_run(dir)?;
    if !dir.is_dir() {
        anyhow::bail!("{}: no such run directory", dir.display());
    }
    let run = vzero_data::RunDir::create_or_open(dir)?;
    let mut chunks = run.list_chunks()?;
    if let Ok(rd) = std::fs::read_dir(run.archive_dir()) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".h5") && !n.starts_with('.') {
                chunks.push(e.path());
            }
        }
    }
    Ok(chunks)
}

/// The variant of a run: its config's, else its data's.
fn run_variant(dir: &std::path::Path) -> Result<Option<String>> {
    let run = vzero_data::RunDir::create_or_open(dir)?;
    if let Some(v) = run.stored_variant()? {
        return Ok(Some(v));
    }
    Ok(run.data_variant()?.map(|(v, _)| v))
}

struct Data {
    train: Vec<Sample>,
    validation: Vec<Sample>,
    games: usize,
    counts: SampleCounts,
}

/// Every game of the runs, replayed into samples; `round(games · holdout)` games (at least one
/// when there are two or more and `holdout > 0`), spread evenly, go to validation.
fn load_data(runs: &[PathBuf], mapping: &FsfMapping, opts: &DataOptions, holdout: f64) -> Result<Data> {
    let mut games = Vec::new();
    for dir in runs {
        for chunk in run_chunks(dir)? {
            let c = vzero_data::Chunk::open(&chunk)?;
            for (i, g) in c.games()?.into_iter().enumerate() {
                if g.variant == mapping.name() {
                    games.push((format!("{} of {}", i + 1, chunk.display()), g));
                }
            }
        }
    }
    let n = games.len();
    let k = if holdout > 0.0 && n >= 2 { ((n as f64 * holdout).round() as usize).clamp(1, n - 1) } else { 0 };
    let mut d = Data { train: Vec::new(), validation: Vec::new(), games: n, counts: SampleCounts::default() };
    for (i, (name, g)) in games.iter().enumerate() {
        let held = (i + 1) * k / n != i * k / n;
        let out = if held { &mut d.validation } else { &mut d.train };
        let counts = game_samples(mapping, name, &g.start_fen, &g.moves, white_result(&g.result, &g.reason), &g.values, opts, out)?;
        d.counts.add(counts);
    }
    Ok(d)
}

fn nnue_dir(run: &std::path::Path) -> PathBuf {
    run.join("nnue")
}

fn append_metrics(path: &std::path::Path, line: &str) -> Result<()> {
    use std::io::Write;
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    if new {
        writeln!(f, "{METRICS_HEADER}")?;
    }
    writeln!(f, "{line}").with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn save_checkpoint(dir: &std::path::Path, c: &checkpoint::CheckpointRef<'_>) -> Result<PathBuf> {
    let path = dir.join(checkpoint::file_name(c.trainer.step));
    checkpoint::save_ref(&path, c)?;
    let all = checkpoint::list(dir)?;
    for (_, old) in all.iter().rev().skip(KEEP_CHECKPOINTS) {
        let _ = std::fs::remove_file(old);
    }
    Ok(path)
}

fn train(a: TrainArgs) -> Result<()> {
    local_run(&a.run)?;
    if !(0.0..=1.0).contains(&a.lambda) {
        anyhow::bail!("--lambda must be in [0, 1], got {}", a.lambda);
    }
    if a.batch == 0 {
        anyhow::bail!("--batch must be at least 1");
    }
    let dir = nnue_dir(&a.run);
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let resumed = match checkpoint::latest(&dir)? {
        Some(p) => Some((checkpoint::load(&p)?, p)),
        None => None,
    };
    let variant = match (&a.variant, &resumed, run_variant(&a.run)?) {
        (Some(v), _, _) => v.clone(),
        (None, Some((c, _)), _) => c.variant.clone(),
        (None, None, Some(v)) => v,
        (None, None, None) => anyhow::bail!("{}: no variant: pass --variant (the run has no config and no data)", a.run.display()),
    };
    let m = mapping(&variant)?;
    let (mut trainer, lambda) = match resumed {
        Some((c, p)) => {
            if c.variant != m.name() || c.trainer.net.dimensions() != m.dimensions() {
                anyhow::bail!("{}: a checkpoint for '{}' ({} features), not for '{}' ({} features)", p.display(), c.variant, c.trainer.net.dimensions(), m.name(), m.dimensions());
            }
            eprintln!("resuming from {} (step {})", p.display(), c.trainer.step);
            let mut t = c.trainer;
            t.threads = threads;
            if let Some(lr) = a.lr {
                t.adam.lr = lr;
            }
            (t, a.lambda)
        }
        None => {
            let adam = AdamConfig { lr: a.lr.unwrap_or(1e-3), ..AdamConfig::default() };
            (Trainer::new(FloatNetwork::init(&m, a.seed), adam, threads), a.lambda)
        }
    };
    let mut runs = vec![a.run.clone()];
    runs.extend(a.from.iter().cloned());
    let opts = DataOptions { skip_captures: a.skip_captures, ..DataOptions::default() };
    let t_load = Instant::now();
    let data = load_data(&runs, &m, &opts, a.holdout)?;
    if data.train.is_empty() {
        anyhow::bail!("{}: no training positions for {} (games: {}, in check: {}, captures skipped: {})", a.run.display(), m.name(), data.games, data.counts.in_check, data.counts.captures);
    }
    eprintln!(
        "{} games: {} training and {} validation positions ({} in check, {} captures, {} other skipped) in {:.1} s",
        data.games,
        data.train.len(),
        data.validation.len(),
        data.counts.in_check,
        data.counts.captures,
        data.counts.other,
        t_load.elapsed().as_secs_f64()
    );
    let steps_goal = match (a.steps, a.minutes) {
        (Some(s), _) => Some(s),
        (None, None) => Some(1000),
        (None, Some(_)) => None,
    };
    let deadline = a.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let metrics = dir.join("metrics.csv");
    let pb = if a.quiet {
        ProgressBar::hidden()
    } else {
        let pb = match steps_goal {
            Some(s) => ProgressBar::new(s.saturating_sub(trainer.step)),
            None => ProgressBar::new_spinner(),
        };
        pb.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} steps [{elapsed_precise}, eta {eta}] {msg}").expect("valid template"));
        pb
    };
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(a.seed ^ trainer.step.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut order: Vec<usize> = (0..data.train.len()).collect();
    let mut cursor = order.len();
    let (start_step, start_positions) = (trainer.step, trainer.positions);
    let t0 = Instant::now();
    let mut last_ckpt = Instant::now();
    let (mut window_loss, mut window_n, mut window_t, mut window_pos) = (0f64, 0u64, Instant::now(), trainer.positions);
    let mut last_val = f32::NAN;
    let mut batch: Vec<&Sample> = Vec::with_capacity(a.batch);
    let variant_name = m.name();
    fn ckpt<'a>(variant: &'a str, t: &'a Trainer, lambda: f32) -> checkpoint::CheckpointRef<'a> {
        checkpoint::CheckpointRef { variant, trainer: t, lambda, targets: TARGETS }
    }
    let mut saved = None;
    loop {
        let done_steps = steps_goal.is_some_and(|s| trainer.step >= s);
        let done_time = deadline.is_some_and(|d| Instant::now() >= d);
        if done_steps || done_time {
            break;
        }
        batch.clear();
        while batch.len() < a.batch {
            if cursor == order.len() {
                // A new epoch: a fresh shuffle.
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.gen_range(0..=i));
                }
                cursor = 0;
            }
            batch.push(&data.train[order[cursor]]);
            cursor += 1;
        }
        let loss = trainer.step(&batch, lambda);
        window_loss += loss as f64;
        window_n += 1;
        pb.inc(1);
        let last = steps_goal.is_some_and(|s| trainer.step >= s) || deadline.is_some_and(|d| Instant::now() >= d);
        if trainer.step % a.log_every.max(1) == 0 || last {
            if !data.validation.is_empty() {
                last_val = mean_loss(&trainer.net, &data.validation, lambda, threads);
            }
            let secs = window_t.elapsed().as_secs_f64().max(1e-9);
            let pps = (trainer.positions - window_pos) as f64 / secs;
            let train_loss = window_loss / window_n.max(1) as f64;
            append_metrics(&metrics, &format!("{},{},{:.6},{},{},{:.0}", trainer.step, trainer.positions, train_loss, if last_val.is_nan() { String::new() } else { format!("{last_val:.6}") }, trainer.adam.lr, pps))?;
            pb.set_message(format!("loss {train_loss:.5} val {last_val:.5} {pps:.0} pos/s"));
            (window_loss, window_n, window_t, window_pos) = (0.0, 0, Instant::now(), trainer.positions);
        }
        if last_ckpt.elapsed().as_secs_f64() >= a.checkpoint_minutes * 60.0 && !last {
            saved = Some(save_checkpoint(&dir, &ckpt(variant_name, &trainer, lambda))?);
            last_ckpt = Instant::now();
        }
    }
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64().max(1e-9);
    if trainer.step > start_step || checkpoint::latest(&dir)?.is_none() {
        saved = Some(save_checkpoint(&dir, &ckpt(variant_name, &trainer, lambda))?);
    }
    let trained = trainer.positions - start_positions;
    println!(
        "trained {} steps ({} → {}), {} positions in {:.1} s ({:.0} positions/s), validation loss {}; checkpoint {}",
        trainer.step - start_step,
        start_step,
        trainer.step,
        trained,
        secs,
        trained as f64 / secs,
        if last_val.is_nan() { "n/a".to_string() } else { format!("{last_val:.5}") },
        saved.map_or_else(|| "unchanged".to_string(), |p| p.display().to_string())
    );
    Ok(())
}

fn export(a: ExportArgs) -> Result<()> {
    let path = match (&a.net, &a.run) {
        (Some(p), _) => p.clone(),
        (None, Some(run)) => {
            local_run(run)?;
            checkpoint::latest(&nnue_dir(run))?.with_context(|| format!("{}: no checkpoint in {} (run vzero nnue train first)", run.display(), nnue_dir(run).display()))?
        }
        (None, None) => anyhow::bail!("pass --run DIR or --net CKPT"),
    };
    let c = checkpoint::load(&path)?;
    let m = mapping(&c.variant)?;
    if c.trainer.net.dimensions() != m.dimensions() {
        anyhow::bail!("{}: {} features, but variant '{}' has {}", path.display(), c.trainer.net.dimensions(), m.name(), m.dimensions());
    }
    let description = format!(
        "vzero nnue: {}, {} positions, lambda {} ({}) + results, {} steps",
        m.name(),
        c.trainer.positions,
        c.lambda,
        c.targets,
        c.trainer.step
    );
    let net = c.trainer.net.quantize(&description)?;
    let bytes = format::encode(&net);
    let out = if a.out.is_dir() || a.out.to_string_lossy().ends_with('/') {
        std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
        a.out.join(checkpoint::net_file_name(m.name(), &bytes))
    } else {
        a.out.clone()
    };
    format::write_file(&out, &net)?;
    println!("wrote {} ({} bytes): {description}", out.display(), bytes.len());
    Ok(())
}
