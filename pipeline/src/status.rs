//! The state of a run, read from the run alone (disk or `s3://`): newest checkpoint, games and
//! rows, recent rates, the last gauntlet, the learner's lease and the processes that wrote to
//! it recently (their heartbeats). What `vzero status` prints.

use std::path::Path;

use anyhow::{Context, Result};
use vzero_arena::gauntlet::{arena_dir, read_elo_csv, EloRow};
use vzero_data::heartbeat::read_heartbeats;
use vzero_data::lease::read_holder;
use vzero_data::{Beat, Chunk, Holder, RunDir, Source};

/// How far back the rates look.
pub const RATE_MINUTES: f64 = 10.0;

/// A heartbeat older than this (seconds) belongs to a process that is no longer working.
pub const ALIVE_S: u64 = 60;

/// The newest published checkpoint.
#[derive(Clone, Debug)]
pub struct CheckpointStatus {
    pub name: String,
    pub generation: u64,
    pub step: u64,
    /// Unix seconds of its creation.
    pub created_unix: u64,
}

/// What [`RunStatus::read`] found.
#[derive(Clone, Debug)]
pub struct RunStatus {
    /// The run as users name it.
    pub location: String,
    /// The variant of its stored config, else of its data.
    pub variant: Option<String>,
    pub checkpoint: Option<CheckpointStatus>,
    /// Published checkpoints.
    pub checkpoints: usize,
    /// Chunks, games and rows of self-play in the run's data.
    pub chunks: usize,
    pub games: u64,
    pub rows: u64,
    /// Rows imported or labelled.
    pub external_rows: u64,
    /// Minutes the rates are measured over: [`RATE_MINUTES`], or the run's age if it is younger.
    pub rate_minutes: f64,
    /// Self-play games and rows of the chunks written in the last `rate_minutes`, per minute.
    pub games_per_min: f64,
    pub rows_per_min: f64,
    /// Learner steps per minute over the last [`RATE_MINUTES`] (from metrics.csv).
    pub steps_per_min: f64,
    /// Samples per second of the newest metrics row.
    pub samples_per_s: Option<f64>,
    /// The last gauntlet's row of arena/elo.csv.
    pub gauntlet: Option<EloRow>,
    /// The learner lease's record, if one is held (or left by a killed learner).
    pub lease: Option<Holder>,
    /// What could not be read, one line each naming the file (unreadable chunks, whose games
    /// are not counted above; a config.toml that does not parse).
    pub warnings: Vec<String>,
    /// Heartbeat records, newest first.
    pub processes: Vec<Beat>,
    /// Unix seconds when this was read.
    pub now: u64,
}

/// Creation time (unix ms) of a chunk from its name (`<unix_ms>-<worker>-<seq>.h5`).
fn chunk_unix_ms(path: &Path) -> Option<u64> {
    path.file_name()?.to_str()?.split('-').next()?.parse().ok()
}

impl RunStatus {
    /// Reads the state of the run at `run` (a directory that must exist, or an `s3://` URL;
    /// on object storage the chunks not cached yet are downloaded to count their games).
    pub fn read(run: &Path) -> Result<RunStatus> {
        if !vzero_data::remote::is_remote_spec(run) && !run.is_dir() {
            anyhow::bail!("run directory {} does not exist", run.display());
        }
        let run = RunDir::open_existing(run).with_context(|| format!("opening run {}", run.display()))?;
        let now = vzero_base::now_unix();
        let mut warnings = Vec::new();
        let stored = run.stored_variant().unwrap_or_else(|e| {
            warnings.push(format!("{e} (`vzero check` flags it; the variant below is the data's)"));
            None
        });
        let variant = match stored {
            Some(v) => Some(v),
            None => run.data_variant()?.map(|(v, _)| v),
        };
        let list = run.list_checkpoints()?;
        let checkpoint = match list.last() {
            Some(c) => {
                run.fetch_checkpoint(&c.path)?;
                let meta = vzero_model::checkpoint::read_meta(&c.path)?;
                Some(CheckpointStatus { name: c.name(), generation: c.generation, step: c.step, created_unix: meta.created_unix })
            }
            None => None,
        };
        let since_ms = (now as f64 - RATE_MINUTES * 60.0) * 1000.0;
        let (mut chunks, mut games, mut rows, mut external_rows, mut recent_games, mut recent_rows) = (0, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut first_ms: Option<u64> = None;
        for p in run.list_chunks()? {
            let c = match Chunk::open(&p) {
                Ok(c) => c,
                Err(e) if p.exists() => {
                    warnings.push(format!("{}: unreadable chunk, its games are not counted: {e}", run.describe(&p)));
                    continue;
                }
                Err(_) => continue, // retired by the learner since the listing
            };
            if c.meta.source != Source::SelfPlay {
                external_rows += c.rows as u64;
                continue;
            }
            chunks += 1;
            if let Some(t) = chunk_unix_ms(&p) {
                first_ms = Some(first_ms.map_or(t, |f| f.min(t)));
            }
            games += c.games as u64;
            rows += c.rows as u64;
            if chunk_unix_ms(&p).is_some_and(|t| t as f64 >= since_ms) {
                recent_games += c.games as u64;
                recent_rows += c.rows as u64;
            }
        }
        let metrics = vzero_trainer::read_metrics(&run.metrics_csv())?;
        let recent: Vec<_> = metrics.iter().filter(|r| r.unix as f64 >= now as f64 - RATE_MINUTES * 60.0).collect();
        let steps_per_min = match (recent.first(), recent.last()) {
            (Some(a), Some(b)) if b.unix > a.unix => (b.step - a.step) as f64 / ((b.unix - a.unix) as f64 / 60.0),
            _ => 0.0,
        };
        let gauntlet = read_elo_csv(&arena_dir(&run).join("elo.csv"))?.pop();
        let age_min = first_ms.map_or(RATE_MINUTES, |t| (now as f64 - t as f64 / 1000.0).max(1.0) / 60.0);
        let rate_minutes = RATE_MINUTES.min(age_min);
        Ok(RunStatus {
            location: run.location(),
            variant,
            checkpoint,
            checkpoints: list.len(),
            chunks,
            games,
            rows,
            external_rows,
            rate_minutes,
            games_per_min: recent_games as f64 / rate_minutes,
            rows_per_min: recent_rows as f64 / rate_minutes,
            steps_per_min,
            samples_per_s: metrics.last().map(|r| r.samples_per_s),
            gauntlet,
            lease: read_holder(&run)?,
            processes: read_heartbeats(&run)?,
            now,
            warnings,
        })
    }

    /// The report as lines of text.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("run          {}", self.location)];
        out.push(format!("variant      {}", self.variant.as_deref().unwrap_or("(none yet)")));
        out.push(match &self.checkpoint {
            Some(c) => format!(
                "network      {} (generation {}, step {}), published {} ago; {} checkpoints",
                c.name,
                c.generation,
                c.step,
                ago(self.now.saturating_sub(c.created_unix)),
                self.checkpoints
            ),
            None => "network      none published yet".into(),
        });
        out.push(format!("data         {} games, {} rows in {} self-play chunks; {} imported or labelled rows", self.games, self.rows, self.chunks, self.external_rows));
        let sps = self.samples_per_s.map_or(String::new(), |s| format!(", {s:.0} samples/s"));
        out.push(format!(
            "{:<13}{:.1} games/min, {:.0} rows/min, {:.1} steps/min{sps}",
            format!("last {} min", if self.rate_minutes >= 2.0 { format!("{:.0}", self.rate_minutes) } else { format!("{:.1}", self.rate_minutes) }),
            self.games_per_min, self.rows_per_min, self.steps_per_min
        ));
        out.push(match &self.gauntlet {
            Some(g) => format!("gauntlet     {}: elo {:.0} [{:.0}, {:.0}] after {:.1} min", g.checkpoint, g.elo, g.lo, g.hi, g.minutes),
            None => "gauntlet     none yet".into(),
        });
        out.push(match &self.lease {
            Some(h) => match h.stale_reason(self.now) {
                None => format!("learner      {}", h.describe(self.now)),
                Some(why) => format!("learner      none (a stale lease: {}; {why})", h.describe(self.now)),
            },
            None => "learner      none".into(),
        });
        let working = |b: &Beat| b.state == "running" && b.age(self.now) <= ALIVE_S && !b.is_gone();
        let alive = self.processes.iter().filter(|b| working(b)).count();
        out.push(format!("processes    {alive} working now, {} records", self.processes.len()));
        for b in &self.processes {
            let state = match b.state.as_str() {
                "running" if b.is_gone() => "gone (killed)",
                "running" if b.age(self.now) > ALIVE_S => "silent",
                s => s,
            };
            let mut line = format!("  {:<8} {}:{} {state}, updated {} ago", b.role, b.host, b.pid, ago(b.age(self.now)));
            if b.role != "learner" {
                line += &format!(", {} games ({:.1}/min), {} rows", b.games, b.games_per_min, b.rows);
            }
            if b.role != "selfplay" {
                line += &format!(", step {} ({:.1}/min)", b.step, b.steps_per_min);
            }
            line += &format!(", generation {}", b.generation);
            out.push(line);
        }
        out.extend(self.warnings.iter().map(|w| format!("warning: {w}")));
        out
    }
}

/// `42 s`, `5 min`, `3.2 h`.
fn ago(s: u64) -> String {
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}
