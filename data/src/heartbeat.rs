//! Heartbeats: every process that writes to a run (self-play, learner, `vzero train`, a
//! teacher's labelling games) keeps a
//! small record of itself at `<run>/heartbeats/<host>-<pid>.json`, rewritten every few seconds
//! by a thread of its own, so that `vzero status` can list who works on a run, with their
//! rates, from the run alone (on disk or on object storage, across machines).
//!
//! A record is written whole each time (a temporary file renamed over it, or one PUT), so a
//! reader never sees a partial one; the last write of a process that stops says `stopped`.
//! A process killed without warning leaves a `running` record that stops being renewed: the
//! reader judges it by its age ([`Beat::age`]).

use std::collections::VecDeque;
use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{io_err, DataError, Result};
use crate::remote::{Remote, Write};
use crate::periodic::Periodic;
use vzero_base::clock::now_unix;
use vzero_base::host::{hostname, process_gone};

use crate::rundir::RunDir;

/// The run's sub-directory (or key prefix) of heartbeat records.
pub const HEARTBEAT_DIR: &str = "heartbeats";

/// How often a process rewrites its record.
pub const BEAT_PERIOD: Duration = Duration::from_secs(10);

/// Over how long the rates of a record are measured.
const RATE_WINDOW: Duration = Duration::from_secs(300);

/// A process's counters at one moment (what its heartbeat reports).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Self-play games finished by this process.
    pub games: u64,
    /// Training rows written by this process.
    pub rows: u64,
    /// The learner's step (0 for self-play).
    pub step: u64,
    /// The newest generation it published or plays.
    pub generation: u64,
    /// Its resignations and playthrough games (self-play only).
    pub resigns: Resigns,
}

/// A self-play process's resignations: the games it resigned, and, in its playthrough games
/// (a share never resigned, played out to check the threshold), how often the side that would
/// have resigned went on to win or draw. The false-resign rate says whether
/// `selfplay.resign_threshold` throws away games that were not lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resigns {
    /// Games ended by resignation.
    pub resigned: u64,
    /// Playthrough games finished.
    pub playthrough_games: u64,
    /// Playthrough games in which a side would have resigned.
    pub would_resign: u64,
    /// ...and that side won (a false resignation).
    pub resigner_won: u64,
    /// ...and the game was drawn.
    pub resigner_drew: u64,
}

impl Resigns {
    /// The sum of two processes' counts.
    pub fn add(&mut self, o: &Resigns) {
        let Resigns { resigned, playthrough_games, would_resign, resigner_won, resigner_drew } = *o;
        self.resigned += resigned;
        self.playthrough_games += playthrough_games;
        self.would_resign += would_resign;
        self.resigner_won += resigner_won;
        self.resigner_drew += resigner_drew;
    }

    /// Share of would-be resigners that won; `None` before the first.
    pub fn false_resign_rate(&self) -> Option<f64> {
        (self.would_resign > 0).then(|| self.resigner_won as f64 / self.would_resign as f64)
    }

    /// One line for progress and status: `resigned 12; false resigns 1 of 4 (25.0%), 1 drawn,
    /// in 9 playthrough games`. Empty when nothing resigned and no playthrough game finished.
    pub fn line(&self) -> String {
        if self.resigned == 0 && self.playthrough_games == 0 {
            return String::new();
        }
        let mut line = format!("resigned {}", self.resigned);
        match self.false_resign_rate() {
            Some(r) => {
                line += &format!(
                    "; false resigns {} of {} ({:.1}%), {} drawn, in {} playthrough games",
                    self.resigner_won,
                    self.would_resign,
                    100.0 * r,
                    self.resigner_drew,
                    self.playthrough_games
                )
            }
            None => line += &format!("; no would-be resigner yet in {} playthrough games", self.playthrough_games),
        }
        line
    }
}

/// One heartbeat record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Beat {
    pub host: String,
    pub pid: u32,
    /// `selfplay`, `learner`, `train` (both in one process) or `label` (a teacher's games,
    /// `vzero nnue play`: `games`, and `rows` = positions kept).
    pub role: String,
    /// Unix seconds when the process started working on the run.
    pub started: u64,
    /// Unix seconds of this record.
    pub updated: u64,
    /// `running`, or `stopped` (its last record, written on a clean exit).
    pub state: String,
    pub games: u64,
    pub rows: u64,
    pub step: u64,
    pub generation: u64,
    /// Games per minute over the last five minutes (or since the start, if shorter).
    pub games_per_min: f64,
    /// Learner steps per minute, likewise.
    pub steps_per_min: f64,
    /// Rows (labelled positions, for a `label` process) per minute, likewise (0 in records
    /// written before it was added).
    #[serde(default)]
    pub rows_per_min: f64,
    /// Resignations and false resignations so far (zero in records written before it was
    /// added, and for processes that play no self-play games).
    #[serde(default)]
    pub resigns: Resigns,
}

impl Beat {
    /// Seconds since the record was written, at unix time `now`.
    pub fn age(&self, now: u64) -> u64 {
        now.saturating_sub(self.updated)
    }

    /// True when the record's process is known to be gone: it ran on this host and no such
    /// process exists (killed without its last record). Records of other hosts: false.
    pub fn is_gone(&self) -> bool {
        process_gone(&self.host, self.pid)
    }

    /// The record's name in the run: `<host>-<pid>.json`.
    pub fn file_name(&self) -> String {
        format!("{}-{}.json", self.host, self.pid)
    }
}

/// Where records are written.
enum Target {
    Disk(PathBuf),
    Object(Arc<Remote>),
}

impl Target {
    fn of(run: &RunDir) -> Target {
        match run.remote() {
            Some(r) => Target::Object(r.clone()),
            None => Target::Disk(run.root().join(HEARTBEAT_DIR)),
        }
    }

    fn write(&self, beat: &Beat) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(beat).unwrap_or_default();
        match self {
            Target::Disk(dir) => {
                fs::create_dir_all(dir).map_err(io_err(dir))?;
                Ok(vzero_base::write_atomic(&dir.join(beat.file_name()), &bytes)?)
            }
            Target::Object(r) => r.write_object(&format!("{HEARTBEAT_DIR}/{}", beat.file_name()), bytes, Write::Overwrite).map(|_| ()),
        }
    }
}

struct Sampler {
    source: Box<dyn Fn() -> Progress + Send>,
    history: VecDeque<(Instant, Progress)>,
}

impl Sampler {
    /// The counters now, with their rates per minute over [`RATE_WINDOW`] (games, steps, rows).
    fn sample(&mut self) -> (Progress, f64, f64, f64) {
        let now = Instant::now();
        let p = (self.source)();
        self.history.push_back((now, p));
        while self.history.len() > 2 && self.history.front().is_some_and(|(t, _)| now.duration_since(*t) > RATE_WINDOW) {
            self.history.pop_front();
        }
        let (t0, p0) = self.history.front().copied().unwrap_or((now, p));
        let minutes = now.duration_since(t0).as_secs_f64() / 60.0;
        let rate = |a: u64, b: u64| if minutes > 0.0 { a.saturating_sub(b) as f64 / minutes } else { 0.0 };
        (p, rate(p.games, p0.games), rate(p.step, p0.step), rate(p.rows, p0.rows))
    }
}

struct Shared {
    target: Target,
    base: Beat,
    sampler: Mutex<Sampler>,
}

impl Shared {
    fn beat(&self, state: &str) -> Result<()> {
        let (p, games_per_min, steps_per_min, rows_per_min) = self.sampler.lock().unwrap_or_else(|e| e.into_inner()).sample();
        let beat = Beat {
            updated: now_unix(),
            state: state.to_string(),
            games: p.games,
            rows: p.rows,
            step: p.step,
            generation: p.generation,
            games_per_min,
            steps_per_min,
            rows_per_min,
            resigns: p.resigns,
            ..self.base.clone()
        };
        self.target.write(&beat)
    }
}

/// A process's heartbeat: rewrites its record every `period` until dropped, then writes a
/// last one marked `stopped`. Failed writes (a store that is down for a while) are retried at
/// the next period and never stop the process.
pub struct Heartbeat {
    shared: Arc<Shared>,
    thread: Option<Periodic>,
}

impl Heartbeat {
    /// Starts the heartbeat of this process in `run` as `role`, reporting what `source` returns.
    pub fn start(run: &RunDir, role: &str, period: Duration, source: Box<dyn Fn() -> Progress + Send>) -> Result<Heartbeat> {
        let now = now_unix();
        let base = Beat {
            host: hostname(),
            pid: std::process::id(),
            role: role.to_string(),
            started: now,
            updated: now,
            state: "running".into(),
            games: 0,
            rows: 0,
            step: 0,
            generation: 0,
            games_per_min: 0.0,
            steps_per_min: 0.0,
            rows_per_min: 0.0,
            resigns: Resigns::default(),
        };
        let shared = Arc::new(Shared {
            target: Target::of(run),
            base,
            sampler: Mutex::new(Sampler { source, history: VecDeque::new() }),
        });
        shared.beat("running")?;
        let s = shared.clone();
        let thread = Periodic::start("heartbeat", period, move || {
            let _ = s.beat("running");
        })
        .map_err(|e| DataError::Store { msg: format!("starting the heartbeat thread: {e}") })?;
        Ok(Heartbeat { shared, thread: Some(thread) })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        if let Some(mut t) = self.thread.take() {
            t.stop();
        }
        let _ = self.shared.beat("stopped");
    }
}

/// Every heartbeat record of the run, newest first. Records that do not parse are skipped.
pub fn read_heartbeats(run: &RunDir) -> Result<Vec<Beat>> {
    let mut out: Vec<Beat> = Vec::new();
    let dir = run.root().join(HEARTBEAT_DIR);
    for name in run.list_names(HEARTBEAT_DIR, &dir, ".json")? {
        let bytes = match run.remote() {
            Some(r) => r.read_object(&format!("{HEARTBEAT_DIR}/{name}"))?.map(|(b, _)| b),
            None => fs::read(dir.join(&name)).ok(),
        };
        out.extend(bytes.and_then(|b| serde_json::from_slice::<Beat>(&b).ok()));
    }
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.file_name().cmp(&b.file_name())));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn resign_counts_add_up_read_back_and_older_records_have_none() {
        let a = Resigns { resigned: 10, playthrough_games: 4, would_resign: 3, resigner_won: 1, resigner_drew: 1 };
        let mut t = Resigns::default();
        assert_eq!((t.line(), t.false_resign_rate()), (String::new(), None));
        t.add(&a);
        t.add(&Resigns { resigned: 2, playthrough_games: 1, would_resign: 1, ..Default::default() });
        assert_eq!(t, Resigns { resigned: 12, playthrough_games: 5, would_resign: 4, resigner_won: 1, resigner_drew: 1 });
        assert_eq!(t.false_resign_rate(), Some(0.25));
        assert_eq!(t.line(), "resigned 12; false resigns 1 of 4 (25.0%), 1 drawn, in 5 playthrough games");
        let only_playthrough = Resigns { playthrough_games: 3, ..Default::default() };
        assert_eq!(only_playthrough.line(), "resigned 0; no would-be resigner yet in 3 playthrough games");
        // a record written before resignations were reported reads as none
        let old = r#"{"host":"h","pid":1,"role":"selfplay","started":1,"updated":2,"state":"stopped","games":5,"rows":9,"step":0,"generation":0,"games_per_min":1.0,"steps_per_min":0.0}"#;
        let b: Beat = serde_json::from_str(old).unwrap();
        assert_eq!((b.games, b.resigns), (5, Resigns::default()));
        let back: Beat = serde_json::from_slice(&serde_json::to_vec(&Beat { resigns: a, ..b }).unwrap()).unwrap();
        assert_eq!(back.resigns, a);
    }

    #[test]
    fn a_heartbeat_reports_counters_and_says_when_it_stopped() {
        let d = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(d.path().join("run")).unwrap();
        let games = Arc::new(AtomicU64::new(3));
        let g = games.clone();
        let hb = Heartbeat::start(&run, "selfplay", Duration::from_millis(50), Box::new(move || Progress { games: g.load(Ordering::Relaxed), rows: 30, ..Default::default() })).unwrap();
        let first = read_heartbeats(&run).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!((first[0].games, first[0].rows, first[0].state.as_str(), first[0].pid), (3, 30, "running", std::process::id()));
        games.store(10, Ordering::Relaxed);
        // the next beat carries the new count: wait for it (a starved thread beats late, not
        // wrong), within a minute
        let t = std::time::Instant::now();
        let b = loop {
            let b = read_heartbeats(&run).unwrap().remove(0);
            if b.games == 10 || t.elapsed() > Duration::from_secs(60) {
                break b;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(b.games, 10);
        assert!(b.games_per_min > 0.0, "{b:?}");
        drop(hb);
        let last = &read_heartbeats(&run).unwrap()[0];
        assert_eq!(last.state, "stopped");
        assert!(!run.root().join(HEARTBEAT_DIR).read_dir().unwrap().flatten().any(|e| e.file_name().to_string_lossy().ends_with(".tmp")));
    }
}
