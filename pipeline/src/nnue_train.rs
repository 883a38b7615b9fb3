//! Training a Fairy-Stockfish NNUE net on a run's positions, as a library: what
//! `vzero nnue train` and `vzero nnue export` run, and the training step of `vzero nnue loop`.
//!
//! Data: every game of the run (and of `from` runs) replayed into samples (targets: the search
//! values of self-play rows and the games' results), and every position a teacher scored
//! ([`vzero_data::ScoredPosition`]: `vzero label` rows, `vzero nnue play` and the loop's games)
//! with the teacher's raw score and the game's result. A chunk whose positions carry scores
//! contributes those (not its games again). `lambda` weighs the score target against the result
//! (see [`vzero_nnue::train`]). Games are split into training and validation by a fixed stride.
//!
//! Checkpoints go to `DIR/nnue/ckpt-<step>.vzck` (atomic; the two newest kept), one row per
//! `log_every` steps to `DIR/nnue/metrics.csv`; a rerun resumes from the newest checkpoint.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use vzero_data::lease::{DEFAULT_TTL, NNUE_LEASE_NAME};
use vzero_data::{Chunk, Lease, RunDir, TeacherScore};
use vzero_nnue::checkpoint;
use vzero_nnue::dataset::{game_samples, scored_sample, white_result, DataOptions, SampleCounts, ScoredReplay, UciScore};
use vzero_nnue::train::{mean_loss, AdamConfig, Sample, Trainer};
use vzero_nnue::{format, FloatNetwork, FsfMapping};
use vzero_rules::Variant;

/// Checkpoints kept in DIR/nnue/ (the older ones are removed).
const KEEP_CHECKPOINTS: usize = 2;
/// The columns of `nnue/metrics.csv`.
pub const METRICS_HEADER: &str = "step,positions,train_loss,validation_loss,lr,positions_per_s";

/// How to train.
#[derive(Clone, Debug)]
pub struct NnueTrainOptions {
    /// Weight of the score target (teacher score or search value); the rest on the result.
    pub lambda: f32,
    /// Positions per step.
    pub batch: usize,
    /// Adam's learning rate (default 1e-3; a resumed run keeps its own unless given).
    pub lr: Option<f32>,
    /// Fraction of the games (and scored chunks) held out for the validation loss.
    pub holdout: f64,
    /// Skip positions whose move captures (positions in check are always skipped).
    pub skip_captures: bool,
    /// Steps between metrics rows (and validation losses).
    pub log_every: u64,
    /// Minutes between checkpoints (one is always written at the end).
    pub checkpoint_minutes: f64,
    /// Threads (default: all cores).
    pub threads: Option<usize>,
    /// Seed of the initial net and the batch order.
    pub seed: u64,
    /// Stop after this many steps in all (counting earlier sessions).
    pub steps: Option<u64>,
    /// Stop after this many minutes.
    pub minutes: Option<f64>,
    /// Early stopping: stop once the validation loss has not improved for this many
    /// validations (every `log_every` steps), and keep the best net (its checkpoint is the one
    /// written). `None`: train to the step or time limit and keep the last net.
    pub patience: Option<u64>,
    /// Train with the virtual factoriser (piece-square rows shared by every king block, folded
    /// into the real rows at export); a checkpoint without one gets it (zero: the same net).
    pub factorizer: bool,
    /// No progress bar (the lines saying what is resumed and loaded are printed all the same).
    pub quiet: bool,
}

impl NnueTrainOptions {
    /// Refuses options no training can run with (checked before a run is opened or created, so
    /// that a mistyped command leaves nothing behind).
    pub fn check(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.lambda) {
            bail!("lambda must be in [0, 1], got {}", self.lambda);
        }
        if self.batch == 0 {
            bail!("the batch must be at least 1 position");
        }
        if !(0.0..1.0).contains(&self.holdout) {
            bail!("the held-out fraction must be in [0, 1), got {}", self.holdout);
        }
        if self.log_every == 0 {
            bail!("the steps between metrics rows must be at least 1");
        }
        if self.minutes.is_some_and(|m| !(m > 0.0)) {
            bail!("the training minutes must be > 0");
        }
        Ok(())
    }
}

impl Default for NnueTrainOptions {
    fn default() -> Self {
        NnueTrainOptions {
            lambda: 0.5,
            batch: 1024,
            lr: None,
            holdout: 0.1,
            skip_captures: false,
            log_every: 100,
            checkpoint_minutes: 10.0,
            threads: None,
            seed: 1,
            steps: None,
            minutes: None,
            factorizer: true,
            patience: Some(5),
            quiet: false,
        }
    }
}

/// What a training session did.
#[derive(Clone, Debug, Default)]
pub struct NnueTrainSummary {
    /// The step it started from and the step kept (with early stopping, the best
    /// validation's, which the checkpoint holds).
    pub start_step: u64,
    pub step: u64,
    /// The last step trained (past `step` when early stopping went back to a better net).
    pub last_step: u64,
    /// Whether early stopping ended the session (before its step or time limit).
    pub stopped_early: bool,
    /// Positions trained on by this session.
    pub positions: u64,
    pub seconds: f64,
    /// The validation loss of the net kept (None without validation positions).
    pub validation_loss: Option<f32>,
    /// The checkpoint written last (None: unchanged).
    pub checkpoint: Option<String>,
    pub train_positions: usize,
    pub validation_positions: usize,
    /// Games read, and the positions skipped.
    pub games: usize,
    pub skipped: SampleCounts,
    /// The targets trained on, in words (also in the checkpoint and the net's description).
    pub targets: String,
}

impl NnueTrainSummary {
    /// Positions per second of this session.
    pub fn per_second(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }
}

/// Takes the run's NNUE trainer lease for `command`: one NNUE trainer per run (beside the run's
/// one learner), refused naming the holder, taken over when stale.
pub fn nnue_lease(run: &RunDir, command: &str) -> Result<Lease> {
    Ok(Lease::acquire_named(run, NNUE_LEASE_NAME, "NNUE trainer", command, DEFAULT_TTL)?)
}

/// The newest training checkpoint of the run (on object storage: listed on the store and
/// downloaded into the cache), if any.
fn latest_checkpoint(run: &RunDir) -> Result<Option<PathBuf>> {
    let dir = nnue_dir(run);
    if run.is_remote() {
        let names = run.list_files("nnue", ".vzck")?;
        if let Some(newest) = names.iter().filter(|n| n.starts_with("ckpt-")).max() {
            run.fetch(&dir.join(newest), false)?;
        }
    }
    Ok(checkpoint::latest(&dir)?)
}

/// Keeps the metrics rows up to `step` (a resumed trainer writes the later steps again, so
/// that the steps of `metrics.csv` strictly increase); on object storage the run's copy is
/// read first.
fn trim_metrics(run: &RunDir, path: &Path, step: u64) -> Result<()> {
    run.fetch(path, true)?;
    trim_metrics_local(path, step)
}

/// [`trim_metrics`] of the local file alone.
fn trim_metrics_local(path: &Path, step: u64) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
    let keep: Vec<&str> = text.lines().enumerate().filter(|(i, l)| *i == 0 || l.split(',').next().and_then(|s| s.parse::<u64>().ok()).is_some_and(|s| s <= step)).map(|(_, l)| l).collect();
    if keep.len() < text.lines().count() {
        vzero_model::checkpoint::write_atomic(path, (keep.join("\n") + "\n").as_bytes())?;
    }
    Ok(())
}

/// Draws `nnue/loss.svg` (training and validation loss against the step) from `metrics.csv`.
fn draw_loss_plot(metrics: &Path, plot: &Path) -> Result<()> {
    let text = std::fs::read_to_string(metrics).with_context(|| format!("reading {}", metrics.display()))?;
    let (mut train, mut val) = (Vec::new(), Vec::new());
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (Some(step), Some(t)) = (f.first().and_then(|s| s.parse::<f64>().ok()), f.get(2).and_then(|s| s.parse::<f64>().ok())) else { continue };
        train.push((step, t));
        if let Some(v) = f.get(3).and_then(|s| s.parse::<f64>().ok()) {
            val.push((step, v));
        }
    }
    vzero_trainer::draw_lines(plot, "NNUE training loss", "loss", &[("training", train), ("validation", val)])
}

/// The `nnue/` directory of a run.
pub fn nnue_dir(run: &RunDir) -> PathBuf {
    run.root().join("nnue")
}

/// The `.h5` chunks of a run (data/ and its archive), oldest first.
fn run_chunks(run: &RunDir) -> Result<Vec<PathBuf>> {
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
fn run_variant(run: &RunDir) -> Result<Option<String>> {
    if let Some(v) = run.stored_variant()? {
        return Ok(Some(v));
    }
    Ok(run.data_variant()?.map(|(v, _)| v))
}

/// Training and validation samples.
struct Data {
    train: Vec<Sample>,
    validation: Vec<Sample>,
    games: usize,
    counts: SampleCounts,
    /// Samples from teacher scores, from search values, and from PGN games (results only).
    scored: usize,
    searched: usize,
    from_pgn: usize,
}

/// One unit of data: a game, or a chunk's scored positions. `name` says where it is (in
/// errors); `key` is what [`holdout_split`] hashes ([`holdout_key`]).
enum Item {
    /// A game of a run (its values: the search's) or of a PGN file (`pgn`; its values: the
    /// game's result from each mover's side).
    Game { name: String, key: String, record: vzero_data::GameRecord, pgn: bool },
    Scored { name: String, key: String, positions: Vec<vzero_data::ScoredPosition> },
}

impl Item {
    fn key(&self) -> &str {
        match self {
            Item::Game { key, .. } | Item::Scored { key, .. } => key,
        }
    }
}

/// An item's holdout key: `what` (e.g. `game 3`; empty for a whole file) and the file's name
/// without its directory, so that the key is the same on every machine and cache.
fn holdout_key(what: &str, path: &str) -> String {
    format!("{what}|{}", path.rsplit('/').next().unwrap_or(path))
}

/// Which items are held out for validation: those whose key ([`holdout_key`]: file name and
/// index, not the directory) hashes below `holdout`, so that an item keeps its side as the data
/// grows (a trainer resumed on more data, e.g. each round of the loop, never trains on what it
/// validated on before); at least one when there are two or more items.
fn holdout_split(items: &[Item], holdout: f64) -> Vec<bool> {
    let cut = (holdout.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
    let mut held: Vec<bool> =
        items.iter().map(|it| holdout > 0.0 && vzero_model::checkpoint::fnv1a64(it.key().as_bytes()) < cut).collect();
    if holdout > 0.0 && items.len() >= 2 && !held.contains(&true) {
        held[items.len() - 1] = true;
    }
    if items.len() >= 2 && !held.contains(&false) {
        held[0] = false;
    }
    held
}

/// Every game and scored position of the runs as samples; the items [`holdout_split`] picks go
/// to validation.
fn load_data(runs: &[RunDir], pgns: &[PathBuf], mapping: &FsfMapping, opts: &DataOptions, holdout: f64) -> Result<Data> {
    let mut items = Vec::new();
    for path in pgns {
        items.extend(pgn_items(path, mapping)?);
    }
    for run in runs {
        for path in run_chunks(run)? {
            let c = Chunk::open(&path)?;
            if c.meta.variant != mapping.name() {
                continue;
            }
            let scored = c.scored_positions()?;
            let file = path.display().to_string();
            if !scored.is_empty() {
                items.push(Item::Scored { key: holdout_key("", &file), name: file, positions: scored });
                continue;
            }
            for (i, g) in c.games()?.into_iter().enumerate() {
                if g.variant == mapping.name() {
                    let what = format!("game {}", i + 1);
                    items.push(Item::Game { name: format!("{what} of {file}"), key: holdout_key(&what, &file), record: g, pgn: false });
                }
            }
        }
    }
    let held: Vec<bool> = holdout_split(&items, holdout);
    let mut d = Data { train: Vec::new(), validation: Vec::new(), games: 0, counts: SampleCounts::default(), scored: 0, searched: 0, from_pgn: 0 };
    for (item, &held) in items.iter().zip(&held) {
        let out = if held { &mut d.validation } else { &mut d.train };
        match item {
            Item::Game { name, record: g, pgn, .. } => {
                d.games += 1;
                let c = game_samples(mapping, name, &g.start_fen, &g.moves, white_result(&g.result, &g.reason), &g.values, opts, out)?;
                if *pgn {
                    d.from_pgn += c.kept;
                } else {
                    d.searched += c.kept;
                }
                d.counts.add(c);
            }
            Item::Scored { name, positions, .. } => {
                let mut replay = ScoredReplay::default();
                for (j, sp) in positions.iter().enumerate() {
                    let score = match sp.score {
                        TeacherScore::Cp(c) => UciScore::Cp(c),
                        TeacherScore::Mate(m) => UciScore::Mate(m),
                    };
                    let what = format!("scored position {} of {name}", j + 1);
                    let pos = replay.position(mapping, &what, &sp.start_fen, &sp.moves)?;
                    let c = scored_sample(mapping, &what, pos, score, &sp.best, sp.result, opts, out)?;
                    d.scored += c.kept;
                    d.counts.add(c);
                }
            }
        }
    }
    Ok(d)
}

/// The decided games of a PGN file as items whose "search values" are the game's result from
/// each mover's side (a PGN game has no scores: both targets are its result). Games that do
/// not parse or replay, of another variant or without a result are skipped with a warning
/// naming their `file:line`.
fn pgn_items(path: &Path, mapping: &FsfMapping) -> Result<Vec<Item>> {
    let mut items = Vec::new();
    let mut skipped = 0usize;
    vzero_openings::for_each_game(&[vzero_openings::Input::Pgn(path.to_path_buf())], |g| {
        // (replay refuses games of other variants, bad FENs, illegal moves and no result)
        match g.and_then(|raw| vzero_openings::replay(raw, mapping.variant())) {
            Ok(g) => {
                let white = 2.0 * g.white_score as f32 - 1.0;
                let mut pos = g.start;
                let mut moves = Vec::with_capacity(g.moves.len());
                let mut values = Vec::with_capacity(g.moves.len());
                for m in &g.moves {
                    values.push(if pos.side_to_move() == vzero_rules::Color::White { white } else { -white });
                    moves.push(pos.uci(*m));
                    pos.play(*m);
                }
                let record = vzero_data::GameRecord {
                    variant: mapping.name().to_string(),
                    start_fen: g.start.fen(),
                    moves,
                    result: g.raw.result.clone(),
                    reason: "pgn".to_string(),
                    network: String::new(),
                    white: g.raw.white.clone(),
                    black: g.raw.black.clone(),
                    priors: Vec::new(),
                    values,
                };
                let origin = g.raw.origin.clone();
                items.push(Item::Game { key: holdout_key("", &origin), name: origin, record, pgn: true });
            }
            Err(s) => {
                if skipped < 10 {
                    eprintln!("skipped {s}");
                }
                skipped += 1;
            }
        }
        true
    })?;
    if skipped > 0 {
        eprintln!("{}: {} games read, {skipped} skipped", path.display(), items.len() + skipped);
    }
    Ok(items)
}

fn append_metrics(path: &Path, line: &str) -> Result<()> {
    use std::io::Write;
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    if new {
        writeln!(f, "{METRICS_HEADER}")?;
    }
    writeln!(f, "{line}").with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Saves a checkpoint (atomically), publishes it once, then removes all but the newest
/// [`KEEP_CHECKPOINTS`] (files and objects).
fn save_checkpoint(run: &RunDir, dir: &Path, c: &checkpoint::CheckpointRef<'_>) -> Result<PathBuf> {
    let path = dir.join(checkpoint::file_name(c.trainer.step));
    checkpoint::save_ref(&path, c)?;
    run.publish_new(&path)?;
    let all = checkpoint::list(dir)?;
    for (_, old) in all.iter().rev().skip(KEEP_CHECKPOINTS) {
        run.remove_file(old)?;
    }
    Ok(path)
}

/// The targets of a net in words, for its checkpoint and description.
fn targets_of(d: &Data, lambda: f32) -> String {
    let mut parts = Vec::new();
    if d.scored > 0 {
        parts.push(format!("teacher scores ({} positions)", d.scored));
    }
    if d.searched > 0 {
        parts.push(format!("search values ({} positions)", d.searched));
    }
    if d.from_pgn > 0 {
        parts.push(format!("PGN results as scores ({} positions)", d.from_pgn));
    }
    format!("lambda {lambda}: {} + game results", if parts.is_empty() { "none".to_string() } else { parts.join(", ") })
}

/// Trains on the games and scored positions of `run` and of the `from` run directories;
/// checkpoints in the run's `nnue/`, resumed from the newest.
pub fn train_nnue(run: &RunDir, variant: Option<&str>, from: &[String], opts: &NnueTrainOptions) -> Result<NnueTrainSummary> {
    let lease = nnue_lease(run, "vzero nnue train")?;
    train_nnue_held(run, &lease, variant, from, opts)
}

/// [`train_nnue`] by the holder of the run's NNUE trainer `lease` (checked before every
/// publication): checkpoints, `metrics.csv` and `loss.svg` in the run's `nnue/`, each
/// published to the store of an object-storage run (a checkpoint once, the others replaced).
pub fn train_nnue_held(run: &RunDir, lease: &Lease, variant: Option<&str>, from: &[String], opts: &NnueTrainOptions) -> Result<NnueTrainSummary> {
    opts.check()?;
    let dir = nnue_dir(run);
    let threads = opts.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let resumed = match latest_checkpoint(run)? {
        Some(p) => Some((checkpoint::load(&p)?, p)),
        None => None,
    };
    let variant = match (variant, &resumed, run_variant(run)?) {
        (Some(v), _, _) => v.to_string(),
        (None, Some((c, _)), _) => c.variant.clone(),
        (None, None, Some(v)) => v,
        (None, None, None) => bail!("{}: no variant: pass --variant (the run has no config and no data)", run.location()),
    };
    let m = FsfMapping::for_variant(Variant::load(&variant)?)?;
    let mut trainer = match resumed {
        Some((c, p)) => {
            if c.variant != m.name() || c.trainer.net.dimensions() != m.dimensions() {
                bail!("{}: a checkpoint for '{}' ({} features), not for '{}' ({} features)", p.display(), c.variant, c.trainer.net.dimensions(), m.name(), m.dimensions());
            }
            eprintln!("resuming from {} (step {})", run.describe(&p), c.trainer.step);
            let mut t = c.trainer;
            if opts.factorizer {
                t = t.with_factorizer(m.piece_indices());
            }
            t.threads = threads;
            if let Some(lr) = opts.lr {
                t.adam.lr = lr;
            }
            t
        }
        None => {
            let adam = AdamConfig { lr: opts.lr.unwrap_or(1e-3), ..AdamConfig::default() };
            let t = Trainer::new(FloatNetwork::init(&m, opts.seed), adam, threads);
            if opts.factorizer {
                t.with_factorizer(m.piece_indices())
            } else {
                t
            }
        }
    };
    let mut runs = vec![run.clone()];
    let mut pgns = Vec::new();
    for f in from {
        let p = Path::new(f);
        if p.is_file() {
            pgns.push(p.to_path_buf());
            continue;
        }
        if !vzero_data::remote::is_remote_spec(p) && !p.join("data").is_dir() {
            bail!("--from {f}: neither a PGN file nor a run directory (no data/ folder)");
        }
        runs.push(RunDir::create_or_open(f).with_context(|| format!("opening run {f}"))?);
    }
    let data_opts = DataOptions { skip_captures: opts.skip_captures, ..DataOptions::default() };
    let t_load = Instant::now();
    let data = load_data(&runs, &pgns, &m, &data_opts, opts.holdout)?;
    if data.train.is_empty() {
        bail!("{}: no training positions for {} (games: {}, in check: {}, captures skipped: {})", run.location(), m.name(), data.games, data.counts.in_check, data.counts.captures);
    }
    let targets = targets_of(&data, opts.lambda);
    {
        eprintln!(
            "{} games and {} scored positions: {} training and {} validation positions ({} in check, {} captures, {} other skipped) in {:.1} s",
            data.games,
            data.scored,
            data.train.len(),
            data.validation.len(),
            data.counts.in_check,
            data.counts.captures,
            data.counts.other,
            t_load.elapsed().as_secs_f64()
        );
    }
    let steps_goal = match (opts.steps, opts.minutes) {
        (Some(s), _) => Some(s),
        (None, None) => Some(1000),
        (None, Some(_)) => None,
    };
    let deadline = opts.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let metrics = dir.join("metrics.csv");
    let plot = dir.join("loss.svg");
    trim_metrics(run, &metrics, trainer.step)?;
    let pb = if opts.quiet {
        ProgressBar::hidden()
    } else {
        let pb = match steps_goal {
            Some(s) => ProgressBar::new(s.saturating_sub(trainer.step)),
            None => ProgressBar::new_spinner(),
        };
        pb.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} steps [{elapsed_precise}, eta {eta}] {msg}").expect("valid template"));
        pb
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(opts.seed ^ trainer.step.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut order: Vec<usize> = (0..data.train.len()).collect();
    let mut cursor = order.len();
    let (start_step, start_positions) = (trainer.step, trainer.positions);
    let t0 = Instant::now();
    let mut last_ckpt = Instant::now();
    let (mut window_loss, mut window_n, mut window_t, mut window_pos) = (0f64, 0u64, Instant::now(), trainer.positions);
    let mut last_val = f32::NAN;
    let mut batch: Vec<&Sample> = Vec::with_capacity(opts.batch);
    let variant_name = m.name();
    let lambda = opts.lambda;
    // A checkpoint, then the metrics and the plot up to its step, each published.
    let ckpt = |t: &Trainer| -> Result<PathBuf> {
        lease.check()?;
        let path = save_checkpoint(run, &dir, &checkpoint::CheckpointRef { variant: variant_name, trainer: t, lambda, targets: &targets })?;
        if metrics.exists() {
            run.publish(&metrics)?;
            draw_loss_plot(&metrics, &plot)?;
            run.publish(&plot)?;
        }
        Ok(path)
    };
    let mut saved = None;
    // early stopping: the best validation loss so far, the trainer then, and validations since
    let mut best: Option<(f32, Box<Trainer>)> = None;
    let mut since_best = 0u64;
    let mut stopped_early = false;
    loop {
        let done_steps = steps_goal.is_some_and(|s| trainer.step >= s);
        let done_time = deadline.is_some_and(|d| Instant::now() >= d);
        if done_steps || done_time {
            break;
        }
        batch.clear();
        while batch.len() < opts.batch {
            if cursor == order.len() {
                // a new epoch: a fresh shuffle
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
        if trainer.step % opts.log_every.max(1) == 0 || last {
            if !data.validation.is_empty() {
                last_val = mean_loss(&trainer.net, &data.validation, lambda, threads);
                if opts.patience.is_some() {
                    if best.as_ref().is_none_or(|(b, _)| last_val < *b) {
                        best = Some((last_val, Box::new(trainer.clone())));
                        since_best = 0;
                    } else {
                        since_best += 1;
                    }
                }
            }
            let secs = window_t.elapsed().as_secs_f64().max(1e-9);
            let pps = (trainer.positions - window_pos) as f64 / secs;
            let train_loss = window_loss / window_n.max(1) as f64;
            let val = if last_val.is_nan() { String::new() } else { format!("{last_val:.6}") };
            append_metrics(&metrics, &format!("{},{},{:.6},{},{},{:.0}", trainer.step, trainer.positions, train_loss, val, trainer.adam.lr, pps))?;
            pb.set_message(format!("loss {train_loss:.5} val {last_val:.5} {pps:.0} pos/s"));
            (window_loss, window_n, window_t, window_pos) = (0.0, 0, Instant::now(), trainer.positions);
        }
        if opts.patience.is_some_and(|p| since_best >= p.max(1)) {
            stopped_early = true;
            break;
        }
        if last_ckpt.elapsed().as_secs_f64() >= opts.checkpoint_minutes * 60.0 && !last {
            saved = Some(ckpt(&trainer)?);
            last_ckpt = Instant::now();
        }
    }
    pb.finish_and_clear();
    // keep the best net: its step is where a resumed run goes on, and the metrics end there
    let last_step = trainer.step;
    if let Some((val, b)) = best {
        if b.step < trainer.step {
            trainer = *b;
            trainer.threads = threads;
            last_val = val;
            trim_metrics_local(&metrics, trainer.step)?;
        }
    }
    if trainer.step > start_step || latest_checkpoint(run)?.is_none() {
        saved = Some(ckpt(&trainer)?);
    }
    Ok(NnueTrainSummary {
        start_step,
        step: trainer.step,
        last_step,
        stopped_early,
        positions: trainer.positions - start_positions,
        seconds: t0.elapsed().as_secs_f64(),
        validation_loss: if last_val.is_nan() { None } else { Some(last_val) },
        checkpoint: saved.map(|p| p.display().to_string()),
        train_positions: data.train.len(),
        validation_positions: data.validation.len(),
        games: data.games,
        skipped: data.counts,
        targets,
    })
}

/// Quantises the newest checkpoint of `run` (or the checkpoint file `net`) into a .nnue file at
/// `out` (a directory: `<variant>-<first 12 hex of its sha256>.nnue` in it). Returns the path
/// written and the net's description.
pub fn export_nnue(run: Option<&RunDir>, net: Option<&Path>, out: &Path) -> Result<(PathBuf, String)> {
    let path = match (net, run) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(run)) => {
            latest_checkpoint(run)?.with_context(|| format!("{}: no checkpoint in {} (run vzero nnue train first)", run.location(), run.describe(&nnue_dir(run))))?
        }
        (None, None) => bail!("pass a run or a checkpoint"),
    };
    let c = checkpoint::load(&path)?;
    let m = FsfMapping::for_variant(Variant::load(&c.variant)?)?;
    if c.trainer.net.dimensions() != m.dimensions() {
        bail!("{}: {} features, but variant '{}' has {}", path.display(), c.trainer.net.dimensions(), m.name(), m.dimensions());
    }
    let description = format!("vzero nnue: {}, {} positions seen, {} steps; targets {}", m.name(), c.trainer.positions, c.trainer.step, c.targets);
    let quantised = c.trainer.net.quantize(&description)?;
    let bytes = format::encode(&quantised);
    let file = if out.is_dir() || out.to_string_lossy().ends_with('/') {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        out.join(checkpoint::net_file_name(m.name(), &bytes))
    } else {
        out.to_path_buf()
    };
    format::write_file(&file, &quantised)?;
    Ok((file, description))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(what: &str, file: &str) -> Item {
        let g = vzero_data::GameRecord {
            variant: "empire".into(),
            start_fen: String::new(),
            moves: Vec::new(),
            result: String::new(),
            reason: String::new(),
            network: String::new(),
            white: String::new(),
            black: String::new(),
            priors: Vec::new(),
            values: Vec::new(),
        };
        Item::Game { name: format!("{what} of {file}"), key: holdout_key(what, file), record: g, pgn: false }
    }

    /// An item keeps its side as data is added, whatever directory holds the run.
    #[test]
    fn holdout_is_stable_as_the_data_grows_and_across_machines() {
        let items = |dir: &str, n: usize| (0..n).map(|i| game(&format!("game {}", i % 4 + 1), &format!("{dir}/data/{:04}.h5", i / 4))).collect::<Vec<_>>();
        let small = holdout_split(&items("/a", 400), 0.1);
        let big = holdout_split(&items("/other machine/cache", 4000), 0.1);
        assert_eq!(small[..], big[..400], "the first 400 items keep their side");
        let share = big.iter().filter(|&&h| h).count() as f64 / big.len() as f64;
        assert!((0.07..0.13).contains(&share), "{share}");
        assert_eq!(holdout_split(&items("/a", 2), 0.0), vec![false, false]);
        let two = holdout_split(&items("/a", 2), 0.01);
        assert!(two.contains(&true) && two.contains(&false), "{two:?}");
    }
}
