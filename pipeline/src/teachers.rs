//! Teacher workers inside `vzero train` (the `[teacher]` section of a run's config).
//!
//! Threads beside self-play take positions from the run's newest self-play games, have a
//! teacher label them (a UCI engine such as Fairy-Stockfish, `alphabeta:3`, any player that
//! reports a score: its move becomes the policy target, its score the value target) and write
//! the labels into the run as [`vzero_data::Source::Label`] chunks, which the learner mixes
//! into its batches by `[learn.external]`. This is an expert-iteration mix: the window keeps
//! fresh teacher rows on the positions the network now plays, while the network improves.
//!
//! A teacher never stops the run: the labeller restarts a teacher that crashes, hangs (past its
//! spec's timeout) or answers an illegal move, and a batch that fails as a whole is a warning,
//! after which the worker pauses and goes on with the next games. Each batch is one atomic
//! chunk named after its source chunk, so a run killed and resumed labels no position twice.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError};
use serde::{Deserialize, Serialize};
use vzero_arena::PlayerSpec;
use vzero_data::{Chunk, RunDir, Source};
use vzero_rules::Variant;
use vzero_teacher::{label_positions, positions_from_records, LabelOptions, DEFAULT_CP_SCALE};

/// `[teacher]`: teacher workers of `vzero train`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeacherConfig {
    /// The teacher's player spec: `fsf:nodes=1000` (Fairy-Stockfish from `$VZERO_FSF` or the
    /// `PATH`), `uci:/path/to/engine:variantpath=…:nodes=1000`, `alphabeta:3`, or any player that
    /// reports a score.
    pub spec: String,
    /// What to do when `spec` cannot start at the beginning of the run (its program is missing,
    /// say): `"off"` runs self-play alone, another spec teaches instead; unset keeps `spec`
    /// (each failed batch is a warning, and the worker tries again after a pause).
    #[serde(default)]
    pub fallback: Option<String>,
    /// Teacher threads (one engine process each for `uci:`); they share the cores with the
    /// self-play workers and the learner, so `[selfplay] workers` is usually lowered by as many.
    #[serde(default = "default_workers")]
    pub workers: usize,
    /// Self-play workers while a teacher teaches, in place of `[selfplay] workers` (unset: that
    /// value). A run whose teacher cannot start and falls back to `"off"` keeps
    /// `[selfplay] workers`, so one config serves machines with and without the engine; a
    /// `--workers` on the command line overrides both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selfplay_workers: Option<usize>,
    /// Positions labelled per batch: drawn from one self-play chunk (the newest one no teacher
    /// has taken), written as one chunk.
    #[serde(default = "default_batch")]
    pub batch: usize,
    /// Centipawns of the score logistic `p(win) = 1 / (1 + exp(-cp / scale))`.
    #[serde(default = "default_cp_scale")]
    pub cp_scale: f64,
    /// Seconds a worker waits when no new self-play chunk is there (and after a failed batch).
    #[serde(default = "default_poll")]
    pub poll_seconds: f64,
}

fn default_workers() -> usize {
    1
}
fn default_batch() -> usize {
    128
}
fn default_cp_scale() -> f64 {
    DEFAULT_CP_SCALE
}
fn default_poll() -> f64 {
    2.0
}

impl TeacherConfig {
    /// `spec` with the defaults of the other fields (no fallback).
    pub fn new(spec: &str) -> TeacherConfig {
        TeacherConfig {
            spec: spec.to_string(),
            fallback: None,
            workers: default_workers(),
            selfplay_workers: None,
            batch: default_batch(),
            cp_scale: default_cp_scale(),
            poll_seconds: default_poll(),
        }
    }

    /// Checks the fields, naming the first one that is wrong.
    pub fn validate(&self) -> Result<()> {
        PlayerSpec::parse(&self.spec).with_context(|| format!("teacher.spec '{}'", self.spec))?;
        if let Some(f) = self.fallback.as_deref().filter(|f| *f != "off") {
            PlayerSpec::parse(f).with_context(|| format!("teacher.fallback '{f}' (a player spec, or \"off\")"))?;
        }
        if self.workers == 0 || self.batch == 0 || self.selfplay_workers == Some(0) {
            bail!("teacher.workers, teacher.selfplay_workers and teacher.batch must be at least 1");
        }
        if !(self.cp_scale.is_finite() && self.cp_scale > 0.0) {
            bail!("teacher.cp_scale must be > 0, not {}", self.cp_scale);
        }
        if !(self.poll_seconds.is_finite() && self.poll_seconds > 0.0) {
            bail!("teacher.poll_seconds must be > 0, not {}", self.poll_seconds);
        }
        Ok(())
    }

    /// The teacher of a run on `variant`, and notes for the run's start: an engine (`fsf`,
    /// `uci:`) is started once (and stopped) to name it (`teacher fsf:nodes=1000:
    /// Fairy-Stockfish … (PROGRAM, where it came from)`); a `spec` that cannot start gives way to
    /// the fallback, with a note saying why (without a fallback it is kept, with a warning:
    /// each batch tries again). Other players are tried only when there is a fallback.
    pub fn choose(&self, variant: Variant) -> Chosen {
        let parsed = PlayerSpec::parse(&self.spec);
        let engine = matches!(parsed, Ok(PlayerSpec::Uci(_)));
        if self.fallback.is_none() && !engine {
            return Chosen { choice: Choice::Teach(self.spec.clone()), notes: Vec::new(), engine: None };
        }
        let trial = parsed.and_then(|p| match p.identify(variant)? {
            Some(info) => Ok(Some(info)),
            None => p.build(variant, 0).map(|_| None),
        });
        match (trial, &self.fallback) {
            (Ok(info), _) => Chosen {
                choice: Choice::Teach(self.spec.clone()),
                notes: info.iter().map(|i| format!("note: teacher {i}")).collect(),
                engine: info.and_then(|i| i.id_name),
            },
            (Err(e), None) => Chosen {
                choice: Choice::Teach(self.spec.clone()),
                notes: vec![format!("warning: teacher '{}' cannot start ({e:#}); each batch tries again", self.spec)],
                engine: None,
            },
            (Err(e), Some(fallback)) => {
                let choice = if fallback == "off" { Choice::Off } else { Choice::Teach(fallback.clone()) };
                let then = match &choice {
                    Choice::Off => "self-play alone".to_string(),
                    Choice::Teach(f) => format!("teacher '{f}' instead"),
                };
                Chosen { choice, notes: vec![format!("note: teacher '{}' cannot start ({e:#}): {then}", self.spec)], engine: None }
            }
        }
    }
}

/// What [`TeacherConfig::choose`] decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    /// The teacher.
    pub choice: Choice,
    /// Lines for the run's start (`note: …`, `warning: …`).
    pub notes: Vec<String>,
    /// The engine's `id name`, when the teacher is an engine that started.
    pub engine: Option<String>,
}

/// The teacher a run uses, decided once at its start ([`TeacherConfig::fallback`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// This spec teaches.
    Teach(String),
    /// No teacher: `spec` could not start and the fallback is `"off"`.
    Off,
}

/// Self-play workers of a run: the `[teacher]` section's `selfplay_workers` when `teacher` (the
/// section and the choice made at the start) teaches, else `selfplay_workers`
/// (`[selfplay] workers`; also when `teacher` is None: no `[teacher]` section).
pub fn selfplay_workers(selfplay_workers: usize, teacher: Option<(&TeacherConfig, &Choice)>) -> usize {
    match teacher {
        Some((cfg, Choice::Teach(_))) => cfg.selfplay_workers.unwrap_or(selfplay_workers),
        _ => selfplay_workers,
    }
}

/// What the teacher workers did (counters shared with the session's progress line).
#[derive(Debug)]
pub struct TeacherStats {
    /// The teacher in use.
    pub teacher: Choice,
    /// Its engine's `id name`, when it is an engine.
    pub engine: Option<String>,
    /// Positions labelled and written.
    pub positions: AtomicU64,
    /// Chunks written.
    pub chunks: AtomicU64,
    /// Teacher restarts (crash, hang, illegal move).
    pub restarts: AtomicU64,
    /// Batches that failed as a whole (the worker paused and went on).
    pub failures: AtomicU64,
    warnings: Mutex<Vec<String>>,
}

impl TeacherStats {
    /// The warnings since the last call (for the session to print).
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn warn(&self, w: String) {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(w);
    }

    /// One line: the teacher, positions labelled, restarts and failed batches.
    pub fn line(&self) -> String {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        match &self.teacher {
            Choice::Off => "teacher off".to_string(),
            Choice::Teach(t) => {
                let engine = self.engine.as_deref().map(|e| format!(" = {e}")).unwrap_or_default();
                format!("teacher {} labelled by {t}{engine} ({} restarts, {} failed batches)", l(&self.positions), l(&self.restarts), l(&self.failures))
            }
        }
    }
}

/// Running teacher workers; stopped (and joined, briefly) by [`Teachers::stop`] or on drop.
///
/// Two channels that carry no message, only their closing: dropping `stop` (the only sender)
/// tells every worker to stop, waking one that is pausing; each worker holds a sender of
/// `done`, dropped when its thread ends, so [`Teachers::stop`] waits on `done` until all have
/// ended (or its time is up) instead of polling the threads.
pub struct Teachers {
    stop: Option<Sender<()>>,
    /// Dropped by [`Teachers::drain`] (nothing is ever sent): each worker labels the newest
    /// chunk once more, then ends.
    wake: Option<Sender<()>>,
    done: Receiver<()>,
    handles: Vec<JoinHandle<()>>,
    /// The workers' counters.
    pub stats: Arc<TeacherStats>,
}

impl Teachers {
    /// Starts `cfg.workers` teacher threads on `run` (the config is validated first, the
    /// teacher chosen by [`TeacherConfig::choose`]; none when it is [`Choice::Off`]).
    pub fn start(run: &RunDir, variant: Variant, cfg: &TeacherConfig) -> Result<Teachers> {
        cfg.validate()?;
        let Chosen { choice: teacher, notes, engine } = cfg.choose(variant);
        let (stop, stopped) = bounded::<()>(0);
        let (done_tx, done) = bounded::<()>(0);
        let stats = Arc::new(TeacherStats {
            teacher: teacher.clone(),
            engine,
            positions: AtomicU64::new(0),
            chunks: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            warnings: Mutex::new(notes),
        });
        let taken = Arc::new(Mutex::new(HashSet::new()));
        let (wake, woken) = bounded::<()>(0);
        let Choice::Teach(spec) = teacher else { return Ok(Teachers { stop: Some(stop), wake: Some(wake), done, handles: Vec::new(), stats }) };
        let cfg = TeacherConfig { spec, fallback: None, ..cfg.clone() };
        let handles = (0..cfg.workers)
            .map(|i| {
                let w = Worker {
                    run: run.clone(),
                    variant,
                    cfg: cfg.clone(),
                    stop: stopped.clone(),
                    _done: done_tx.clone(),
                    stats: stats.clone(),
                    taken: taken.clone(),
                    drain: woken.clone(),
                    index: i,
                };
                std::thread::Builder::new().name(format!("teacher-{i}")).spawn(move || w.run()).context("starting a teacher thread")
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Teachers { stop: Some(stop), wake: Some(wake), done, handles, stats })
    }

    /// Has each worker label the newest self-play chunk none has taken yet once more (waking it
    /// from a pause), then end: when a game limit has ended self-play, the teachers label the
    /// last games before the learner trains on them, however the threads were scheduled while
    /// the games ran (a slow teacher's start could leave a short run with no label at all).
    /// Waits until `deadline` at most.
    pub fn drain(&mut self, deadline: Instant) {
        self.wake = None;
        if !self.handles.is_empty() {
            // Err(Disconnected): every worker has ended; Err(Timeout): the time is up
            let _ = self.done.recv_deadline(deadline);
        }
    }

    /// Asks the workers to stop and waits for them up to `wait` (a worker inside a slow teacher
    /// call is left to finish on its own: its chunk is written atomically or not at all);
    /// returns their figures ([`TeacherStats::line`]).
    pub fn stop(mut self, wait: Duration) -> String {
        self.halt(wait);
        self.stats.line()
    }

    fn halt(&mut self, wait: Duration) {
        self.stop = None;
        if self.handles.is_empty() {
            return;
        }
        // Err(Disconnected): every worker has ended; Err(Timeout): the time is up (no worker
        // ever sends, so Ok does not happen).
        let _ = self.done.recv_deadline(Instant::now() + wait);
        for h in self.handles.drain(..) {
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

impl Drop for Teachers {
    fn drop(&mut self) {
        self.halt(Duration::from_secs(5));
    }
}

/// One teacher thread.
struct Worker {
    run: RunDir,
    variant: Variant,
    cfg: TeacherConfig,
    /// Closed when the workers are to stop (nothing is ever sent).
    stop: Receiver<()>,
    /// Dropped with the worker when its thread ends (see [`Teachers`]).
    _done: Sender<()>,
    stats: Arc<TeacherStats>,
    /// Chunks a worker has looked at (self-play chunks it took, and the others).
    taken: Arc<Mutex<HashSet<PathBuf>>>,
    /// Closed by [`Teachers::drain`] (nothing is ever sent).
    drain: Receiver<()>,
    index: usize,
}

impl Worker {
    fn run(self) {
        // failed batches in a row: the pause doubles with each (up to a minute), so a teacher
        // that cannot start costs a warning a minute, not a busy loop
        let mut failed = 0u32;
        while !self.stopped() {
            // a drain asked before this pass makes it the last
            let last = self.drain.try_recv() == Err(TryRecvError::Disconnected);
            let outcome = self.next_chunk().context("listing the run's chunks").and_then(|c| match c {
                Some((path, chunk)) => self.label(&path, &chunk).map(|()| true),
                None => Ok(false),
            });
            match outcome {
                Ok(true) => failed = 0,
                Ok(false) if last => {}
                Ok(false) => self.pause(1.0),
                Err(e) => {
                    self.stats.failures.fetch_add(1, Ordering::Relaxed);
                    let wait = (self.cfg.poll_seconds * 2f64.powi(failed.min(10) as i32)).min(60.0);
                    self.stats.warn(format!("warning: teacher {}: {e:#}; trying again in {wait:.0} s", self.index));
                    failed += 1;
                    if !last {
                        self.pause(wait / self.cfg.poll_seconds);
                    }
                }
            }
            if last {
                break;
            }
        }
    }

    /// Whether the workers are asked to stop.
    fn stopped(&self) -> bool {
        self.stop.try_recv() == Err(TryRecvError::Disconnected)
    }

    /// Sleeps `factor · poll_seconds`, waking at once when asked to stop or to drain. (The pause itself is a
    /// timed poll: new self-play chunks are files, written by other threads and processes alike.)
    fn pause(&self, factor: f64) {
        // the timeout: the pause is over; a channel disconnected: stop, or a drain (nothing is
        // ever sent on either)
        crossbeam_channel::select! {
            recv(self.stop) -> _ => {},
            recv(self.drain) -> _ => {},
            default(Duration::from_secs_f64(self.cfg.poll_seconds * factor)) => {},
        }
    }

    /// The newest self-play chunk no worker has taken yet (taking it), opened.
    fn next_chunk(&self) -> Result<Option<(PathBuf, Chunk)>> {
        let chunks = self.run.list_chunks()?;
        for path in chunks.into_iter().rev() {
            let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
            if !taken.insert(path.clone()) {
                continue;
            }
            drop(taken);
            // unreadable chunks are the learner's and `vzero check`'s business: skipped here
            if let Ok(c) = Chunk::open(&path) {
                if c.meta.source == Source::SelfPlay {
                    return Ok(Some((path, c)));
                }
            }
        }
        Ok(None)
    }

    /// Labels up to `batch` positions of the games of `chunk` into one label chunk.
    fn label(&self, path: &std::path::Path, chunk: &Chunk) -> Result<()> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let records = chunk.games().with_context(|| format!("reading the games of {name}"))?;
        let seed = vzero_base::fnv1a64(name.as_bytes());
        let (positions, _) = positions_from_records(self.variant, records, self.cfg.batch, seed);
        if positions.is_empty() {
            return Ok(());
        }
        let opts = LabelOptions {
            teacher: self.cfg.spec.clone(),
            concurrency: 1,
            cp_scale: self.cfg.cp_scale,
            rows_per_chunk: self.cfg.batch,
            seed,
            job: format!("train-teacher:{name}"),
            progress: false,
        };
        let s = label_positions(&self.run, self.variant, &positions, &opts).with_context(|| format!("labelling positions of {name}"))?;
        self.stats.positions.fetch_add(s.labelled as u64, Ordering::Relaxed);
        self.stats.chunks.fetch_add(s.chunks as u64, Ordering::Relaxed);
        self.stats.restarts.fetch_add(s.restarts as u64, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(spec: &str, fallback: Option<&str>) -> TeacherConfig {
        TeacherConfig { fallback: fallback.map(str::to_string), ..TeacherConfig::new(spec) }
    }

    #[test]
    fn a_teacher_that_cannot_start_gives_way_to_its_fallback() {
        let v = Variant::builtin("empire").unwrap();
        let missing = "uci:/nonexistent/vzero-teacher-engine:nodes=10";
        // the fallback teaches, and the note names the teacher that could not start
        let Chosen { choice: c, notes: why, .. } = cfg(missing, Some("alphabeta:1")).choose(v);
        assert_eq!(c, Choice::Teach("alphabeta:1".into()));
        assert!(why.len() == 1 && why[0].contains("/nonexistent/vzero-teacher-engine") && why[0].contains("alphabeta:1"), "{why:?}");
        // "off": no teacher
        let Chosen { choice: c, notes: why, .. } = cfg(missing, Some("off")).choose(v);
        assert_eq!(c, Choice::Off);
        assert!(why.len() == 1 && why[0].contains("self-play alone"), "{why:?}");
        // a teacher that starts is kept; without a fallback a player is kept untried, an engine
        // that cannot start is kept with a warning
        let kept = Chosen { choice: Choice::Teach("alphabeta:2".into()), notes: Vec::new(), engine: None };
        assert_eq!(cfg("alphabeta:2", Some("off")).choose(v), kept);
        assert_eq!(cfg("alphabeta:2", None).choose(v), kept);
        let Chosen { choice: c, notes: why, .. } = cfg(missing, None).choose(v);
        assert_eq!(c, Choice::Teach(missing.into()));
        assert!(why.len() == 1 && why[0].starts_with("warning: ") && why[0].contains("each batch tries again"), "{why:?}");
        // a fallback is a player spec or "off"
        assert!(cfg("alphabeta:2", Some("nonsense")).validate().is_err());
        assert!(cfg("alphabeta:2", Some("off")).validate().is_ok());
    }

    #[test]
    fn selfplay_workers_follow_the_teacher_that_teaches() {
        let v = Variant::builtin("empire").unwrap();
        let missing = "uci:/nonexistent/vzero-teacher-engine:nodes=10";
        let one = |spec: &str, fallback: &str| TeacherConfig { selfplay_workers: Some(1), ..cfg(spec, Some(fallback)) };
        // a teacher teaches: its selfplay_workers
        let c = one("alphabeta:1", "off");
        assert_eq!(selfplay_workers(2, Some((&c, &c.choose(v).choice))), 1);
        // its fallback teaches: the same
        let c = one(missing, "alphabeta:1");
        assert_eq!(selfplay_workers(2, Some((&c, &c.choose(v).choice))), 1);
        // no teacher after all (fallback "off"), no [teacher] section, or the key unset: [selfplay] workers
        let c = one(missing, "off");
        assert_eq!(selfplay_workers(2, Some((&c, &c.choose(v).choice))), 2);
        assert_eq!(selfplay_workers(2, None), 2);
        let c = cfg("alphabeta:1", Some("off"));
        assert_eq!(selfplay_workers(2, Some((&c, &c.choose(v).choice))), 2);
        assert!(TeacherConfig { selfplay_workers: Some(0), ..c }.validate().is_err());
    }

    #[test]
    fn an_off_teacher_starts_no_worker() {
        let dir = std::env::temp_dir().join(format!("vzero-teachers-off-{}", std::process::id()));
        let run = RunDir::create_or_open(&dir).unwrap();
        let v = Variant::builtin("empire").unwrap();
        let t = Teachers::start(&run, v, &cfg("uci:/nonexistent/vzero-teacher-engine", Some("off"))).unwrap();
        assert!(t.handles.is_empty());
        assert!(t.stats.take_warnings().iter().any(|w| w.contains("cannot start")));
        assert_eq!(t.stop(Duration::from_millis(10)), "teacher off");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
