//! `vzero nnue train`: a Fairy-Stockfish NNUE net trained on a run's positions (and the training
//! step of `vzero nnue loop`). [`train_nnue_held`] reads top to bottom: open the trainer (resume
//! or start), find the sources, read the samples, then step, log and checkpoint until the goal,
//! keeping the best net under early stopping. `lambda` weighs the score target against the
//! result (see [`vzero_nnue::train`]); a rerun resumes from the newest checkpoint.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use vzero_data::{Lease, RunDir};
use vzero_nnue::checkpoint;
use vzero_nnue::dataset::{DataOptions, SampleCounts};
use vzero_nnue::train::{mean_loss, AdamConfig, Sample, Trainer};
use vzero_nnue::{FeatureMirror, FloatNetwork, FsfMapping};
use vzero_rules::Variant;

use super::files::{draw_loss_plot, latest_checkpoint, nnue_dir, nnue_lease, save_checkpoint, trim_metrics, trim_metrics_local, METRICS_HEADER};
use super::samples::{load_data, run_variant, targets_of, Data};

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
    /// Stop after this many minutes from the session's start, reading the data included (at
    /// least one step is taken), so that a budget given to a script holds.
    pub minutes: Option<f64>,
    /// Early stopping: stop once the validation loss has not improved for this many
    /// validations (every `log_every` steps), and keep the best net (its checkpoint is the one
    /// written). `None`: train to the step or time limit and keep the last net.
    pub patience: Option<u64>,
    /// With early stopping: times the learning rate is divided by [`LR_DROP`] when the
    /// validation loss stops improving, before training stops (reduce-on-plateau: a constant
    /// rate plateaus while a smaller one keeps improving on the same data).
    pub lr_drops: u32,
    /// Train with the virtual factoriser (piece-square rows shared by every king block, folded
    /// into the real rows at export); a checkpoint without one gets it (zero: the same net).
    pub factorizer: bool,
    /// Show each training position mirrored left to right half the time (a fresh draw every
    /// epoch), where the variant's pieces move as their mirror images ([`FeatureMirror`]):
    /// Fairy-Stockfish's features give every king square its own block, so the mirror doubles
    /// what each block sees. Validation positions are never mirrored.
    pub mirror: bool,
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
            mirror: true,
            patience: Some(5),
            lr_drops: 0,
            quiet: false,
        }
    }
}

/// The factor a plateau divides the learning rate by (see [`NnueTrainOptions::lr_drops`]).
pub const LR_DROP: f32 = 10.0;

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
    let deadline = opts.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let threads = opts.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let (mapping, mut trainer) = open_trainer(run, variant, opts, threads)?;
    let (runs, pgns) = sources(run, from)?;
    let data = read_samples(run, &runs, &pgns, &mapping, opts)?;
    let mirror = opts.mirror.then(|| FeatureMirror::of(&mapping)).flatten();
    if opts.mirror && mirror.is_none() {
        eprintln!("no mirrored positions: a piece of {} does not move as its mirror image", mapping.name());
    }
    let targets = format!("{}{}", targets_of(&data, opts.lambda), if mirror.is_some() { ", each position shown mirrored half the time" } else { "" });
    let out = Outputs::open(run, lease, mapping.name(), opts.lambda, targets, trainer.step)?;
    let (start_step, start_positions, t0) = (trainer.step, trainer.positions, Instant::now());
    let trained = train_steps(&mut trainer, &data, opts, mirror.as_ref(), threads, deadline, &out)?;
    let mut saved = trained.saved;
    let mut validation_loss = trained.validation_loss;
    // keep the best net: its step is where a resumed run goes on, and the metrics end there
    if let Some((val, best)) = trained.best.filter(|(_, b)| b.step < trainer.step) {
        trainer = *best;
        trainer.threads = threads;
        validation_loss = val;
        trim_metrics_local(&out.metrics, trainer.step)?;
    }
    if trainer.step > start_step || latest_checkpoint(run)?.is_none() {
        saved = Some(out.checkpoint(&trainer)?);
    }
    Ok(NnueTrainSummary {
        start_step,
        step: trainer.step,
        last_step: trained.last_step,
        stopped_early: trained.stopped_early,
        positions: trainer.positions - start_positions,
        seconds: t0.elapsed().as_secs_f64(),
        validation_loss: if validation_loss.is_nan() { None } else { Some(validation_loss) },
        checkpoint: saved.map(|p| p.display().to_string()),
        train_positions: data.train.len(),
        validation_positions: data.validation.len(),
        games: data.games,
        skipped: data.counts,
        targets: out.targets,
    })
}

/// The variant's feature mapping and the trainer: the run's newest checkpoint resumed (with
/// this session's threads, factoriser and learning rate), else a new net. The variant is
/// `variant`, else the checkpoint's, else the run's.
fn open_trainer(run: &RunDir, variant: Option<&str>, opts: &NnueTrainOptions, threads: usize) -> Result<(FsfMapping, Trainer)> {
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
            t.threads = threads;
            if let Some(lr) = opts.lr {
                t.adam.lr = lr;
            }
            t
        }
        None => {
            let adam = AdamConfig { lr: opts.lr.unwrap_or(1e-3), ..AdamConfig::default() };
            Trainer::new(FloatNetwork::init(&m, opts.seed), adam, threads)
        }
    };
    if opts.factorizer {
        trainer = trainer.with_factorizer(m.piece_indices());
    }
    Ok((m, trainer))
}

/// The runs to read (`run` first, then the `from` runs) and the PGN files among `from`.
fn sources(run: &RunDir, from: &[String]) -> Result<(Vec<RunDir>, Vec<PathBuf>)> {
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
    Ok((runs, pgns))
}

/// Reads every sample and says how many (refusing a session with nothing to train on).
fn read_samples(run: &RunDir, runs: &[RunDir], pgns: &[PathBuf], m: &FsfMapping, opts: &NnueTrainOptions) -> Result<Data> {
    let data_opts = DataOptions { skip_captures: opts.skip_captures, ..DataOptions::default() };
    let t_load = Instant::now();
    let mut data = load_data(runs, pgns, m, &data_opts, opts.holdout)?;
    let held_out = data.validation.len();
    data.validation = validation_subset(std::mem::take(&mut data.validation), VALIDATION_CHECKED);
    if data.train.is_empty() {
        bail!("{}: no training positions for {} (games: {}, in check: {}, captures skipped: {})", run.location(), m.name(), data.games, data.counts.in_check, data.counts.captures);
    }
    eprintln!(
        "{} games and {} scored positions: {} training and {} validation positions{} ({} in check, {} captures, {} other skipped) in {:.1} s",
        data.games,
        data.scored,
        data.train.len(),
        held_out,
        if held_out > data.validation.len() { format!(" (each check on {} of them)", data.validation.len()) } else { String::new() },
        data.counts.in_check,
        data.counts.captures,
        data.counts.other,
        t_load.elapsed().as_secs_f64()
    );
    Ok(data)
}

/// Validation positions a check uses at most: the held-out set grows with the data (10% of 13M
/// positions is 1.3M, checked every 100 steps of 1,024), its mean loss does not need it all.
const VALIDATION_CHECKED: usize = 200_000;

/// At most `cap` of `held` positions, evenly spread over them (the same subset for the same
/// data, so that a resumed session checks on what it checked on before).
fn validation_subset(held: Vec<Sample>, cap: usize) -> Vec<Sample> {
    if held.len() <= cap {
        return held;
    }
    let n = held.len();
    let mut keep = (0..cap).map(|i| i * n / cap).peekable();
    held.into_iter().enumerate().filter_map(|(j, s)| (keep.next_if_eq(&j).is_some()).then_some(s)).collect()
}

/// Where a session writes: the run's `nnue/` folder with `metrics.csv` (trimmed to the resumed
/// step) and `loss.svg`, under the trainer lease.
struct Outputs<'a> {
    run: &'a RunDir,
    lease: &'a Lease,
    dir: PathBuf,
    metrics: PathBuf,
    plot: PathBuf,
    variant: &'a str,
    lambda: f32,
    targets: String,
}

impl<'a> Outputs<'a> {
    fn open(run: &'a RunDir, lease: &'a Lease, variant: &'a str, lambda: f32, targets: String, step: u64) -> Result<Outputs<'a>> {
        let dir = nnue_dir(run);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let (metrics, plot) = (dir.join("metrics.csv"), dir.join("loss.svg"));
        trim_metrics(run, &metrics, step)?;
        Ok(Outputs { run, lease, dir, metrics, plot, variant, lambda, targets })
    }

    /// A checkpoint of `t`, then the metrics and the plot up to its step, each published.
    fn checkpoint(&self, t: &Trainer) -> Result<PathBuf> {
        self.lease.check()?;
        let path = save_checkpoint(self.run, &self.dir, &checkpoint::CheckpointRef { variant: self.variant, trainer: t, lambda: self.lambda, targets: &self.targets })?;
        if self.metrics.exists() {
            self.run.publish(&self.metrics)?;
            draw_loss_plot(&self.metrics, &self.plot)?;
            self.run.publish(&self.plot)?;
        }
        Ok(path)
    }

    /// Appends a metrics row.
    fn log(&self, t: &Trainer, train_loss: f64, validation_loss: f32, positions_per_s: f64) -> Result<()> {
        let val = if validation_loss.is_nan() { String::new() } else { format!("{validation_loss:.6}") };
        let row = format!("{},{},{:.6},{},{},{:.0}", t.step, t.positions, train_loss, val, t.adam.lr, positions_per_s);
        Ok(vzero_data::metrics::append_csv_row(&self.metrics, METRICS_HEADER, &row)?)
    }
}

/// What the steps of a session left.
struct Trained {
    last_step: u64,
    stopped_early: bool,
    /// The validation loss at the last log (NaN without validation positions).
    validation_loss: f32,
    /// The best validation loss and the trainer then (with early stopping).
    best: Option<(f32, Box<Trainer>)>,
    /// The last periodic checkpoint.
    saved: Option<PathBuf>,
}

/// Steps over shuffled epochs of the training samples until the step goal, the time limit or
/// early stopping (the deadline only after a first step); logs every `log_every` steps (with the
/// validation loss) and checkpoints every `checkpoint_minutes`. With a `mirror`, each position
/// of a batch is shown mirrored or not by a coin of the batch order's generator.
fn train_steps(
    trainer: &mut Trainer,
    data: &Data,
    opts: &NnueTrainOptions,
    mirror: Option<&FeatureMirror>,
    threads: usize,
    deadline: Option<Instant>,
    out: &Outputs,
) -> Result<Trained> {
    let steps_goal = match (opts.steps, opts.minutes) {
        (Some(s), _) => Some(s),
        (None, None) => Some(1000),
        (None, Some(_)) => None,
    };
    let first_step = trainer.step;
    let finished = |t: &Trainer| steps_goal.is_some_and(|s| t.step >= s) || (t.step > first_step && deadline.is_some_and(|d| Instant::now() >= d));
    let pb = progress_bar(opts.quiet, steps_goal.map(|s| s.saturating_sub(trainer.step)));
    let rng = rand::rngs::StdRng::seed_from_u64(opts.seed ^ trainer.step.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut batches = Batches::new(data.train.len(), mirror, rng);
    let mut last_ckpt = Instant::now();
    let (mut window_loss, mut window_n, mut window_t, mut window_pos) = (0f64, 0u64, Instant::now(), trainer.positions);
    let mut trained = Trained { last_step: trainer.step, stopped_early: false, validation_loss: f32::NAN, best: None, saved: None };
    let mut plateau = opts.patience.map(|p| Plateau::new(p, opts.lr_drops));
    while !finished(trainer) {
        let batch = batches.next(&data.train, opts.batch);
        window_loss += trainer.step(&batch, opts.lambda) as f64;
        window_n += 1;
        pb.inc(1);
        let last = finished(trainer);
        if trainer.step % opts.log_every.max(1) == 0 || last {
            let mut verdict = Verdict::Go;
            if !data.validation.is_empty() {
                let val = mean_loss(&trainer.net, &data.validation, opts.lambda, threads);
                trained.validation_loss = val;
                if let Some(plateau) = plateau.as_mut() {
                    let improved = trained.best.as_ref().is_none_or(|(b, _)| val < *b);
                    if improved {
                        trained.best = Some((val, Box::new(trainer.clone())));
                    }
                    verdict = plateau.check(improved);
                }
            }
            let pps = (trainer.positions - window_pos) as f64 / window_t.elapsed().as_secs_f64().max(1e-9);
            let train_loss = window_loss / window_n.max(1) as f64;
            out.log(trainer, train_loss, trained.validation_loss, pps)?;
            pb.set_message(format!("loss {train_loss:.5} val {:.5} {pps:.0} pos/s", trained.validation_loss));
            (window_loss, window_n, window_t, window_pos) = (0.0, 0, Instant::now(), trainer.positions);
            match verdict {
                Verdict::Go => {}
                Verdict::DropRate => {
                    trainer.adam.lr /= LR_DROP;
                    pb.println(format!("step {}: no better validation loss in {} checks; learning rate now {:.2e}", trainer.step, opts.patience.unwrap_or(0), trainer.adam.lr));
                }
                Verdict::Stop => {
                    trained.stopped_early = true;
                    break;
                }
            }
        }
        if last_ckpt.elapsed().as_secs_f64() >= opts.checkpoint_minutes * 60.0 && !last {
            trained.saved = Some(out.checkpoint(trainer)?);
            last_ckpt = Instant::now();
        }
    }
    pb.finish_and_clear();
    trained.last_step = trainer.step;
    Ok(trained)
}

/// The batch order: shuffled epochs of the training positions, each position shown mirrored
/// (with a mirror) by a fresh coin every time it is drawn; the mirrored copies live in reused
/// storage.
struct Batches<'m> {
    order: Vec<usize>,
    cursor: usize,
    rng: rand::rngs::StdRng,
    mirror: Option<&'m FeatureMirror>,
    picks: Vec<(usize, bool)>,
    mirrored: Vec<Sample>,
}

impl<'m> Batches<'m> {
    fn new(positions: usize, mirror: Option<&'m FeatureMirror>, rng: rand::rngs::StdRng) -> Batches<'m> {
        Batches { order: (0..positions).collect(), cursor: positions, rng, mirror, picks: Vec::new(), mirrored: Vec::new() }
    }

    /// The next `n` positions of `train` (a new epoch reshuffles when one ends).
    fn next<'a>(&'a mut self, train: &'a [Sample], n: usize) -> Vec<&'a Sample> {
        self.picks.clear();
        while self.picks.len() < n {
            if self.cursor == self.order.len() {
                for i in (1..self.order.len()).rev() {
                    self.order.swap(i, self.rng.gen_range(0..=i));
                }
                self.cursor = 0;
            }
            let flip = self.mirror.is_some() && self.rng.gen::<bool>();
            self.picks.push((self.order[self.cursor], flip));
            self.cursor += 1;
        }
        let mut flipped = 0;
        if let Some(m) = self.mirror {
            for &(i, _) in self.picks.iter().filter(|p| p.1) {
                if self.mirrored.len() == flipped {
                    self.mirrored.push(train[i].clone());
                }
                train[i].mirror_into(m, &mut self.mirrored[flipped]);
                flipped += 1;
            }
        }
        let mut flips = self.mirrored[..flipped].iter();
        self.picks.iter().map(|&(i, flip)| if flip { flips.next().expect("one copy per flip") } else { &train[i] }).collect()
    }
}

/// What a validation check calls for under early stopping with learning-rate drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Train on.
    Go,
    /// A plateau with drops left: divide the learning rate by [`LR_DROP`] and train on.
    DropRate,
    /// A plateau with no drops left: stop (the best net is kept).
    Stop,
}

/// Early stopping's count: checks since the best validation loss against the patience, and the
/// learning-rate drops still allowed (each starts a new count).
struct Plateau {
    patience: u64,
    since_best: u64,
    drops_left: u32,
}

impl Plateau {
    fn new(patience: u64, drops: u32) -> Plateau {
        Plateau { patience: patience.max(1), since_best: 0, drops_left: drops }
    }

    /// After a check: `improved` when its loss is the best so far.
    fn check(&mut self, improved: bool) -> Verdict {
        if improved {
            self.since_best = 0;
            return Verdict::Go;
        }
        self.since_best += 1;
        if self.since_best < self.patience {
            Verdict::Go
        } else if self.drops_left > 0 {
            self.drops_left -= 1;
            self.since_best = 0;
            Verdict::DropRate
        } else {
            Verdict::Stop
        }
    }
}

/// A bar over `steps` (a spinner without a step goal), hidden when `quiet`.
fn progress_bar(quiet: bool, steps: Option<u64>) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = match steps {
        Some(s) => ProgressBar::new(s),
        None => ProgressBar::new_spinner(),
    };
    pb.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} steps [{elapsed_precise}, eta {eta}] {msg}").expect("valid template"));
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(n: usize) -> Vec<Sample> {
        (0..n).map(|i| Sample { us: Vec::new(), them: Vec::new(), bucket: vzero_nnue::features::Bucket::new(0), score: i as f32, result: 0.0 }).collect()
    }

    /// With a mirror, about half of what a batch shows is a position mirrored (its features
    /// through the mirror, its bucket and targets the original's), the rest as it is; over
    /// epochs a position is shown both ways. Without one every position is its own.
    #[test]
    fn batches_show_positions_mirrored_half_the_time() {
        let m = FsfMapping::for_variant(Variant::builtin("empire").unwrap()).unwrap();
        let mirror = FeatureMirror::of(&m).unwrap();
        let mut pos = vzero_rules::Position::startpos(m.variant());
        let mut train = Vec::new();
        for i in 0..6 {
            train.push(Sample::new(&m.features(&pos).unwrap(), i as f32, 0.5));
            let moves = pos.legal_moves();
            pos.play(moves[(7 * i + 3) % moves.len()]);
        }
        let original = |s: &Sample| train.iter().find(|t| t.score == s.score).unwrap().clone();
        let rng = || rand::rngs::StdRng::seed_from_u64(7);
        let mut b = Batches::new(train.len(), Some(&mirror), rng());
        let (mut flipped, mut kept) = (vec![0; train.len()], vec![0; train.len()]);
        for _ in 0..200 {
            for s in b.next(&train, 4) {
                let o = original(s);
                assert_eq!((s.bucket, s.result), (o.bucket, o.result));
                let mut back = o.clone();
                o.mirror_into(&mirror, &mut back);
                if *s == o {
                    kept[s.score as usize] += 1;
                } else {
                    assert_eq!(*s, back, "either the position or its mirror");
                    flipped[s.score as usize] += 1;
                }
            }
        }
        let (f, k): (usize, usize) = (flipped.iter().sum(), kept.iter().sum());
        assert!((300..500).contains(&f) && f + k == 800, "{f} mirrored of {}", f + k);
        assert!(flipped.iter().zip(&kept).all(|(&f, &k)| f > 0 && k > 0), "{flipped:?} {kept:?}");
        let mut plain = Batches::new(train.len(), None, rng());
        for _ in 0..50 {
            assert!(plain.next(&train, 4).into_iter().all(|s| *s == original(s)));
        }
    }

    /// Patience 2 with one drop: two checks without a better loss drop the rate, an improvement
    /// resets the count, two more without one stop; no drops: the first plateau stops.
    #[test]
    fn plateaus_drop_the_rate_then_stop() {
        use Verdict::*;
        let mut p = Plateau::new(2, 1);
        let seen: Vec<Verdict> = [true, false, false, false, true, false, false].iter().map(|&i| p.check(i)).collect();
        assert_eq!(seen, vec![Go, Go, DropRate, Go, Go, Go, Stop]);
        let mut q = Plateau::new(3, 0);
        assert_eq!([false, false, false].map(|i| q.check(i)), [Go, Go, Stop]);
        let mut zero = Plateau::new(0, 0);
        assert_eq!(zero.check(false), Stop, "patience 0 counts as 1");
    }

    /// A capped validation set keeps `cap` positions spread evenly over the held-out ones, in
    /// order; a small one is kept whole.
    #[test]
    fn validation_subsets_are_spread_and_stable() {
        let scores = |v: Vec<Sample>| v.iter().map(|s| s.score as usize).collect::<Vec<_>>();
        assert_eq!(scores(validation_subset(samples(5), 10)), vec![0, 1, 2, 3, 4]);
        let kept = scores(validation_subset(samples(1000), 100));
        assert_eq!(kept.len(), 100);
        assert!(kept.windows(2).all(|w| w[1] - w[0] == 10), "{kept:?}");
        let odd = scores(validation_subset(samples(1001), 7));
        assert_eq!(odd, scores(validation_subset(samples(1001), 7)), "the same subset each time");
        assert_eq!((odd.len(), odd[0]), (7, 0));
        assert!(odd[6] >= 850, "{odd:?}");
    }
}
