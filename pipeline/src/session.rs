//! Sessions: self-play workers, the learner loop, gauntlets and limits over one run directory.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use crossbeam_channel::{select, unbounded, Receiver, Sender};
use vzero_arena::gauntlet::{read_elo_csv, GauntletSummary};
use vzero_arena::run_gauntlet;
use vzero_data::heartbeat::BEAT_PERIOD;
use vzero_data::{parse_checkpoint_name, Heartbeat, Progress, RunDir};
use vzero_model::DeviceChoice;
use vzero_rules::Variant;
use vzero_selfplay::{run_worker, Stats, WorkerContext};
use vzero_trainer::{LearnStatus, LearnSummary, Learner, StopReason};

use crate::config::RunConfig;
use crate::switch;
use crate::teachers::{selfplay_workers, TeacherConfig, Teachers};

/// Where a run's config comes from, and the overrides of the command line.
#[derive(Clone, Debug, Default)]
pub struct ConfigChoice {
    /// A config file; default: the run's stored config, else the embedded default of `variant`.
    pub file: Option<PathBuf>,
    /// The variant whose embedded default to use (empire when none); must match the config's.
    pub variant: Option<String>,
    /// Device override (`auto`, `cpu`, `cuda`, `cuda:N`).
    pub device: Option<String>,
    /// Number of self-play workers override.
    pub workers: Option<usize>,
    /// Teacher override: a player spec that teaches (`[teacher]`'s other fields kept, or their
    /// defaults; no fallback), or `off` (no teacher).
    pub teacher: Option<String>,
}

/// When a session stops (the first limit reached; none: until the caller's process ends).
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Wall-clock minutes.
    pub minutes: Option<f64>,
    /// Finished self-play games of this session.
    pub games: Option<u64>,
    /// Training steps in all (counting earlier sessions).
    pub steps: Option<u64>,
}

/// What a session reports while it runs.
#[derive(Debug)]
pub enum Event<'a> {
    /// A one-line status (self-play and learner figures), several times a second.
    Progress(&'a str),
    /// A gauntlet finished.
    Gauntlet(&'a GauntletSummary),
    /// Something worth a line (the device, leftovers removed, a failed gauntlet).
    Note(&'a str),
}

/// What [`Session::train`] did.
#[derive(Clone, Debug)]
pub struct TrainSummary {
    /// Self-play figures ([`selfplay_line`]).
    pub selfplay: String,
    /// Training steps of this session, the step and generation reached.
    pub steps: u64,
    pub step: u64,
    pub generation: u64,
    pub minutes: f64,
    /// The last gauntlet of this session.
    pub latest_gauntlet: Option<GauntletSummary>,
    /// The run's gauntlet ratings (may not exist).
    pub elo_csv: PathBuf,
    /// The teacher workers' figures ([`TeacherStats::line`]), when the config has a `[teacher]`.
    pub teacher: Option<String>,
}

/// What [`Session::selfplay`] did.
#[derive(Clone, Debug)]
pub struct SelfplaySummary {
    pub selfplay: String,
}

/// What [`Session::learn`] did.
#[derive(Clone, Debug)]
pub struct LearnOutcome {
    pub steps: u64,
    pub step: u64,
    pub generation: u64,
    pub summary: LearnSummary,
}

/// A run directory with its effective config.
pub struct Session {
    run: RunDir,
    cfg: RunConfig,
    variant: Variant,
    /// The lines of `selfplay.start_book`, read once and shared by every self-play worker.
    starts: Arc<Vec<vzero_openings::OpeningLine>>,
}

impl Session {
    /// Opens (or creates) the run directory `run` and resolves its config: `choice.file`, else
    /// the run's stored `config.toml`, else the embedded default of `choice.variant`, else of
    /// the variant of the run's data (its chunks: e.g. games imported before any training),
    /// else empire. A variant that differs from the config's, the stored config's or the run's
    /// data is an error. The overrides are applied and the config validated; nothing is
    /// written yet: the config is stored (atomically, as the run's `config.toml`) once a
    /// command has started without error ([`Session::store_config`]), so a command that fails
    /// leaves the run as it found it.
    pub fn open(run: &Path, choice: &ConfigChoice) -> Result<Session> {
        let from_file = choice.file.as_deref().map(RunConfig::load).transpose()?;
        let storage = from_file.as_ref().map(|c| c.storage.clone()).unwrap_or_default();
        let run = RunDir::open_with(run, &storage).with_context(|| format!("opening run {}", run.display()))?;
        let stored = run.root().join("config.toml");
        let mut cfg = if let Some(cfg) = from_file {
            cfg
        } else if stored.exists() {
            RunConfig::load(&stored)?
        } else if let Some(v) = &choice.variant {
            RunConfig::embedded(v)?
        } else {
            match run.data_variant()? {
                Some((v, chunk)) => RunConfig::embedded(&v).with_context(|| {
                    format!("run {} holds data of variant '{v}' (e.g. {chunk}) and no config: pass --config", run.location())
                })?,
                None => RunConfig::embedded("empire")?,
            }
        };
        if let Some(v) = &choice.variant {
            if &cfg.variant != v {
                bail!("--variant {v} does not match the config's variant '{}'", cfg.variant);
            }
        }
        let variant = Variant::load(&cfg.variant)?;
        run.check_variant_of(&cfg.variant, variant.name())?;
        if let Some(d) = &choice.device {
            cfg.device = d.clone();
        }
        if let Some(w) = choice.workers {
            cfg.selfplay.workers = w;
        }
        match choice.teacher.as_deref() {
            None => {}
            Some("off") => cfg.teacher = None,
            Some(spec) => {
                let base = cfg.teacher.take().unwrap_or_else(|| TeacherConfig::new(spec));
                cfg.teacher = Some(TeacherConfig { spec: spec.to_string(), fallback: None, ..base });
            }
        }
        if let (Some(_), Some(t)) = (choice.workers, cfg.teacher.as_mut()) {
            t.selfplay_workers = None; // --workers counts with or without a teacher
        }
        cfg.validate()?;
        // an unreadable start book stops the command here, not in a worker thread later
        let starts = Arc::new(cfg.selfplay.start_lines(variant)?);
        Ok(Session { run, cfg, variant, starts })
    }

    /// Stores the effective config as the run's `config.toml` (atomically; published on
    /// object storage). The commands call it once they have started without error.
    pub fn store_config(&self) -> Result<()> {
        let stored = self.run.root().join("config.toml");
        vzero_base::write_atomic(&stored, self.cfg.to_toml()?.as_bytes())?;
        self.run.publish(&stored)?;
        Ok(())
    }

    pub fn run(&self) -> &RunDir {
        &self.run
    }

    pub fn config(&self) -> &RunConfig {
        &self.cfg
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    fn device(&self) -> Result<vzero_model::Device> {
        self.cfg.device.parse::<DeviceChoice>().map_err(anyhow::Error::msg)?.resolve().map_err(Into::into)
    }

    /// Starts `n` self-play worker threads; each sends on `finished` when it ends.
    fn spawn_workers(
        &self,
        n: usize,
        stop: &Arc<AtomicBool>,
        stats: &Arc<Stats>,
        max_games: Option<u64>,
        finished: &Sender<()>,
    ) -> Result<Vec<std::thread::JoinHandle<Result<()>>>> {
        let device = self.device()?;
        // the host name and process id: unique across the machines, pods and processes of a run
        // (the pods of a Kubernetes Job all run vzero under the same process id)
        let process = format!("{}_p{}", vzero_base::hostname(), std::process::id());
        let evaluator = self.cfg.selfplay.start_evaluator()?;
        if let Some(server) = &evaluator {
            let _ = stats.evaluator.set(server.clone());
        }
        (0..n)
            .map(|i| {
                let ctx = WorkerContext {
                    run: self.run.clone(),
                    variant: self.variant,
                    config: self.cfg.selfplay.clone(),
                    device,
                    stop: stop.clone(),
                    stats: stats.clone(),
                    max_games,
                    name: format!("{process}w{i}"),
                    seed: rand_seed(i),
                    evaluator: evaluator.clone(),
                    starts: self.starts.clone(),
                };
                let finished = Finished(finished.clone());
                std::thread::Builder::new()
                    .name(format!("selfplay-{i}"))
                    .spawn(move || {
                        let _finished = finished;
                        run_worker(ctx)
                    })
                    .map_err(|e| anyhow::anyhow!("starting a self-play thread: {e}"))
            })
            .collect()
    }

    fn open_learner(&self, on: &mut dyn FnMut(Event<'_>)) -> Result<Learner> {
        let device = self.device()?;
        let bf16 = self.cfg.learn.precision.bf16_on(device);
        on(Event::Note(&format!(
            "learner device: {device:?} (config: {}), training in {} (precision: {})",
            self.cfg.device,
            if bf16 { "bf16" } else { "f32" },
            self.cfg.learn.precision
        )));
        let net = self.cfg.net_config(self.variant)?;
        let mut learner = Learner::open(&self.run, self.variant, &net, self.cfg.learn.clone(), device)?;
        // a release by a check of the resumed checkpoint itself (the run stopped before another)
        for part in switch::releases_since(&self.run, learner.step())? {
            learner.release(part);
        }
        Ok(learner)
    }

    /// Self-play and training together: worker threads play and write chunks while the learner
    /// trains, publishes checkpoints (which the workers pick up) and, every `gauntlet.every`
    /// generations, rates the newest one. With a game limit, the learner trains on what the
    /// games produced (within the reuse cap) after they end. Publishes a final checkpoint.
    pub fn train(&self, limits: &Limits, on: &mut dyn FnMut(Event<'_>)) -> Result<TrainSummary> {
        let (run, cfg, variant) = (&self.run, &self.cfg, self.variant);
        let removed = run.clean_tmp()?;
        if removed > 0 {
            on(Event::Note(&format!("removed {removed} temporary files left by an interrupted run")));
        }
        let start = Instant::now();
        let time_left = || limits.minutes.is_none_or(|m| start.elapsed().as_secs_f64() < m * 60.0);
        let mut learner = self.open_learner(on)?;
        self.store_config()?;
        let start_step = learner.step();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let counters = Arc::new(LearnerCounters::default());
        counters.set(learner.step(), learner.generation());
        let _heartbeat = heartbeat(run, "train", Some(stats.clone()), Some(counters.clone()), on);
        let counted = stats.clone();
        learner.count_games(move || counted.games.load(Ordering::Relaxed)); // games/s for TensorBoard
        let teachers = cfg.teacher.as_ref().map(|t| Teachers::start(run, variant, t)).transpose()?;
        let n = selfplay_workers(cfg.selfplay.workers, cfg.teacher.as_ref().zip(teachers.as_ref()).map(|(c, t)| (c, &t.stats.teacher)));
        if n != cfg.selfplay.workers {
            on(Event::Note(&format!("self-play: {n} worker(s) beside the teacher ([teacher] selfplay_workers; [selfplay] workers = {} without it)", cfg.selfplay.workers)));
        }
        let (finished_tx, finished) = unbounded();
        let workers = self.spawn_workers(n, &stop, &stats, limits.games, &finished_tx)?;
        // self-play figures, then the teachers'
        let played = || match &teachers {
            Some(t) => format!("{} | {}", selfplay_line(&stats), t.stats.line()),
            None => selfplay_line(&stats),
        };
        let warnings = |on: &mut dyn FnMut(Event<'_>)| {
            for w in teachers.iter().flat_map(|t| t.stats.take_warnings()) {
                on(Event::Note(&w));
            }
        };
        let mut last_learn = String::from("waiting for data");
        let games_done = || limits.games.is_some_and(|g| stats.games.load(Ordering::Relaxed) >= g);
        let mut failure = None;
        // Gauntlets: for generations published from now on (not the one resumed from); the time
        // of earlier sessions counts up to their last gauntlet.
        let every = cfg.gauntlet.every;
        let elo_csv = vzero_arena::gauntlet::arena_dir(run).join("elo.csv");
        let minutes_before = if start_step == 0 { 0.0 } else { read_elo_csv(&elo_csv).unwrap_or_default().iter().map(|r| r.minutes).fold(0.0, f64::max) };
        let mut gauntlet_done = learner.generation();
        let mut latest_gauntlet: Option<GauntletSummary> = None;
        // Switch checks: for generations published from now on, while a part of the blend is on.
        let mut switch_done = learner.generation();
        loop {
            let step_limit = limits.steps.is_some_and(|s| learner.step() >= s);
            if !time_left() || games_done() || step_limit || workers.iter().all(|w| w.is_finished()) {
                break;
            }
            let (done, checked) = (gauntlet_done, switch_done);
            let blend_on = switch::next_part(&learner.knowledge()).is_some();
            let gauntlet_due = |g: u64| every > 0 && g > done && g % every == 0;
            let switch_due = |g: u64| blend_on && cfg.switch.due(g, checked);
            let due = |g: u64| gauntlet_due(g) || switch_due(g);
            let step = Cell::new(learner.step());
            let generation = Cell::new(learner.generation());
            // Stops right after publishing a generation that is due for a gauntlet (the learner
            // then has nothing unpublished, so stopping adds no generation).
            let keep_going = || {
                time_left()
                    && !games_done()
                    && limits.steps.is_none_or(|s| step.get() < s)
                    && !workers.iter().any(|w| w.is_finished())
                    && !due(generation.get())
            };
            let mut progress = |s: &LearnStatus| {
                step.set(s.step);
                generation.set(s.generation);
                counters.set(s.step, s.generation);
                last_learn = learn_line(s);
                warnings(&mut *on);
                on(Event::Progress(&format!("{} | {}", played(), last_learn)));
            };
            // a chunk written from here on is news to the learner's next look at the data
            stats.chunk_written.clear();
            let summary = match learner.run(&keep_going, &mut progress) {
                Ok(s) => s,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            if switch_due(learner.generation()) {
                // Self-play goes on in its threads meanwhile; the learner waits.
                switch_done = learner.generation();
                on(Event::Progress(&format!("{} | {} (switch check of {})", played(), last_learn, learner.network())));
                self.switch_check(&mut learner, on);
            }
            if gauntlet_due(learner.generation()) {
                // Self-play goes on in its threads meanwhile; the learner waits.
                gauntlet_done = learner.generation();
                let ckpt = run.checkpoints_dir().join(format!("{}.json", learner.network()));
                on(Event::Progress(&format!("{} | {} (gauntlet of {})", played(), last_learn, learner.network())));
                let minutes = minutes_before + start.elapsed().as_secs_f64() / 60.0;
                match run_gauntlet(run, variant, &ckpt, &cfg.gauntlet, minutes) {
                    Ok(g) => {
                        learner.log_elo(g.row.step, &g.elo_vs_opponents());
                        on(Event::Gauntlet(&g));
                        latest_gauntlet = Some(g);
                    }
                    Err(e) => on(Event::Note(&format!("warning: gauntlet of {} failed: {e:#}", learner.network()))),
                }
            } else if summary.stop == StopReason::NeedData && !switch_due(learner.generation()) {
                warnings(&mut *on);
                on(Event::Progress(&format!("{} | {} (waiting for data)", played(), last_learn)));
                // Until a worker here writes a chunk or ends; at most 500 ms, as chunks also come
                // from the teachers and from self-play in other processes (files, no signal).
                wait_for_workers(&stats, &finished, Duration::from_millis(500));
            }
        }
        stop.store(true, Ordering::Relaxed);
        let joined = join(workers);
        let teacher = teachers.map(|mut t| {
            if failure.is_none() && joined.is_ok() && games_done() {
                // the game limit bounds self-play: the teachers label what it produced first
                let deadline = limits.minutes.map_or(Instant::now() + Duration::from_secs(3600), |m| start + Duration::from_secs_f64(m * 60.0));
                t.drain(deadline);
            }
            t.stop(Duration::from_secs(5))
        });
        if failure.is_none() && joined.is_ok() && games_done() {
            // The game limit bounds self-play; train on what it produced (within the reuse cap).
            let step = Cell::new(learner.step());
            let keep_going = || time_left() && limits.steps.is_none_or(|s| step.get() < s);
            if let Err(e) = learner.run(&keep_going, &mut |s: &LearnStatus| {
                step.set(s.step);
                counters.set(s.step, s.generation);
                on(Event::Progress(&format!("{} | {}", selfplay_line(&stats), learn_line(s))));
            }) {
                failure = Some(e);
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        joined?;
        learner.publish()?;
        counters.set(learner.step(), learner.generation());
        Ok(TrainSummary {
            selfplay: selfplay_line(&stats),
            steps: learner.step() - start_step,
            step: learner.step(),
            generation: learner.generation(),
            minutes: start.elapsed().as_secs_f64() / 60.0,
            latest_gauntlet,
            elo_csv,
            teacher,
        })
    }

    /// Self-play alone, against the run's newest checkpoint (waiting for one if there is none),
    /// until the time or game limit (or forever).
    pub fn selfplay(&self, limits: &Limits, on: &mut dyn FnMut(Event<'_>)) -> Result<SelfplaySummary> {
        if self.run.latest_checkpoint()?.is_none() {
            on(Event::Note(&format!("no checkpoint in {} yet: waiting for `vzero learn` to publish one", self.run.location())));
        }
        let start = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let (finished_tx, finished) = unbounded();
        let workers = self.spawn_workers(self.cfg.selfplay.workers, &stop, &stats, limits.games, &finished_tx)?;
        drop(finished_tx);
        self.store_config()?;
        let _heartbeat = heartbeat(&self.run, "selfplay", Some(stats.clone()), None, on);
        let time_left = || limits.minutes.map(|m| Duration::from_secs_f64(m * 60.0).saturating_sub(start.elapsed()));
        let mut running = workers.len();
        while running > 0 && time_left() != Some(Duration::ZERO) {
            on(Event::Progress(&selfplay_line(&stats)));
            // The progress line every 250 ms; woken early by a worker's end or the time limit.
            let wait = time_left().map_or(Duration::from_millis(250), |t| t.min(Duration::from_millis(250)));
            if finished.recv_timeout(wait).is_ok() {
                running -= 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        join(workers)?;
        Ok(SelfplaySummary { selfplay: selfplay_line(&stats) })
    }

    /// Plays the switch check of the learner's newest checkpoint (the next part of its blend
    /// against the network alone), releases the part when the network wins it, and reports it
    /// as a note (a failed check is a warning: training goes on with the blend).
    fn switch_check(&self, learner: &mut Learner, on: &mut dyn FnMut(Event<'_>)) {
        let Some(part) = switch::next_part(&learner.knowledge()) else { return };
        let ckpt = self.run.checkpoints_dir().join(format!("{}.json", learner.network()));
        match switch::run_check(&self.run, self.variant, &ckpt, learner.step(), part, &self.cfg.switch, learner.generation()) {
            Ok(c) => {
                if c.released {
                    learner.release(part);
                }
                on(Event::Note(&c.line()));
            }
            Err(e) => on(Event::Note(&format!("warning: switch check of {} failed: {e:#}", learner.network()))),
        }
    }

    /// Training alone, on the data that self-play processes (and `vzero import` / `vzero
    /// label`) write into the run, polling for more, until the time or step limit (or
    /// forever). Publishes a final checkpoint.
    pub fn learn(&self, limits: &Limits, on: &mut dyn FnMut(Event<'_>)) -> Result<LearnOutcome> {
        let start = Instant::now();
        let mut learner = self.open_learner(on)?;
        self.store_config()?;
        let start_step = learner.step();
        let counters = Arc::new(LearnerCounters::default());
        counters.set(learner.step(), learner.generation());
        let _heartbeat = heartbeat(&self.run, "learner", None, Some(counters.clone()), on);
        on(Event::Progress("waiting for data"));
        let step = Cell::new(learner.step());
        let keep_going = || limits.minutes.is_none_or(|m| start.elapsed().as_secs_f64() < m * 60.0) && limits.steps.is_none_or(|s| step.get() < s);
        // Switch checks, as in `train`: for generations published from now on.
        let mut switch_done = learner.generation();
        let mut published = Vec::new();
        let summary = loop {
            let checked = switch_done;
            let blend_on = switch::next_part(&learner.knowledge()).is_some();
            let generation = Cell::new(learner.generation());
            let switch_due = |g: u64| blend_on && self.cfg.switch.due(g, checked);
            let mut summary = learner.run_polling(&|| keep_going() && !switch_due(generation.get()), Duration::from_millis(500), &mut |s: &LearnStatus| {
                step.set(s.step);
                generation.set(s.generation);
                counters.set(s.step, s.generation);
                on(Event::Progress(&learn_line(s)));
            })?;
            published.append(&mut summary.published);
            if keep_going() && switch_due(learner.generation()) {
                switch_done = learner.generation();
                self.switch_check(&mut learner, on);
                continue;
            }
            summary.published = published;
            break summary;
        };
        learner.publish()?;
        counters.set(learner.step(), learner.generation());
        Ok(LearnOutcome { steps: learner.step() - start_step, step: learner.step(), generation: learner.generation(), summary })
    }
}

/// The learner's position for a heartbeat: step and generation, set from its progress.
#[derive(Default)]
struct LearnerCounters {
    step: AtomicU64,
    generation: AtomicU64,
}

impl LearnerCounters {
    fn set(&self, step: u64, generation: u64) {
        self.step.store(step, Ordering::Relaxed);
        self.generation.store(generation, Ordering::Relaxed);
    }
}

/// Starts this process's heartbeat in `run`: self-play counters from `stats`, the learner's
/// from `learner` (either may be absent). A heartbeat that cannot start is a warning, not an
/// error: it only serves `vzero status`.
fn heartbeat(run: &RunDir, role: &str, stats: Option<Arc<Stats>>, learner: Option<Arc<LearnerCounters>>, on: &mut dyn FnMut(Event<'_>)) -> Option<Heartbeat> {
    let source = move || {
        let mut p = Progress::default();
        if let Some(s) = &stats {
            p.games = s.games.load(Ordering::Relaxed);
            p.rows = s.rows.load(Ordering::Relaxed);
            let net = s.network.lock().unwrap_or_else(|e| e.into_inner()).clone();
            p.generation = parse_checkpoint_name(&net).map_or(0, |(g, _)| g);
            p.resigns = s.resigns();
        }
        if let Some(l) = &learner {
            p.step = l.step.load(Ordering::Relaxed);
            p.generation = l.generation.load(Ordering::Relaxed);
        }
        p
    };
    match Heartbeat::start(run, role, BEAT_PERIOD, Box::new(source)) {
        Ok(h) => Some(h),
        Err(e) => {
            on(Event::Note(&format!("warning: no heartbeat for `vzero status`: {e}")));
            None
        }
    }
}

fn rand_seed(i: usize) -> u64 {
    let t = vzero_base::clock::unix_ns() as u64;
    t ^ (std::process::id() as u64) << 32 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Sends on its channel when dropped: each self-play thread holds one, so the session hears of
/// its end (returned, failed or panicked) at once instead of polling `is_finished`.
struct Finished(Sender<()>);

impl Drop for Finished {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Waits until a self-play worker of `stats` writes a chunk or one ends (`finished`), or
/// `timeout` passes.
fn wait_for_workers(stats: &Stats, finished: &Receiver<()>, timeout: Duration) {
    select! {
        recv(stats.chunk_written.receiver()) -> _ => {}
        recv(finished) -> _ => {}
        default(timeout) => {}
    }
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

/// One line of self-play figures: games (results for White), moves, rows, mean leaves per
/// forward pass, the network playing, and resignations once there are any (with the
/// playthrough games' false resignations).
pub fn selfplay_line(stats: &Stats) -> String {
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let resigns = stats.resigns().line();
    let resigns = if resigns.is_empty() { resigns } else { format!(" | {resigns}") };
    format!(
        "games {} (+{} ={} -{}) moves {} rows {} | batch {:.1} | net {}{resigns}",
        l(&stats.games),
        l(&stats.results[0]),
        l(&stats.results[1]),
        l(&stats.results[2]),
        l(&stats.moves),
        l(&stats.rows),
        stats.positions_per_forward(),
        stats.network.lock().unwrap_or_else(|e| e.into_inner())
    )
}

/// One line of learner figures.
pub fn learn_line(s: &LearnStatus) -> String {
    format!(
        "step {} gen {} loss {:.3} (policy {:.3} value {:.3}) window {} rows",
        s.step, s.generation, s.losses.total, s.losses.policy, s.losses.value, s.window_rows
    )
}
