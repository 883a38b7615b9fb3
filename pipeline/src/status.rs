//! The state of a run, read from the run alone (disk or `s3://`): newest checkpoint, games and
//! rows, recent rates, the last gauntlet, the learner's lease and the processes that wrote to
//! it recently (their heartbeats). What `vzero status` prints.

use std::path::Path;

use anyhow::{Context, Result};
use vzero_arena::gauntlet::{arena_dir, read_elo_csv, EloRow};
use vzero_data::heartbeat::read_heartbeats;
use vzero_data::lease::read_holder;
use vzero_data::{Beat, Chunk, ChunkCounts, ChunkName, Holder, Resigns, RunDir, Source};

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
    /// Imported or labelled rows of the chunks written in the last `rate_minutes`, per minute.
    pub external_rows_per_min: f64,
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

/// The run's data as counted so far.
#[derive(Default)]
struct DataCount {
    chunks: usize,
    games: u64,
    rows: u64,
    external_rows: u64,
    recent_games: u64,
    recent_rows: u64,
    recent_external_rows: u64,
    /// Creation time of the oldest chunk whose name says it (unix ms): the run's age.
    first_ms: Option<u64>,
}

impl DataCount {
    /// Counts one chunk created at `unix_ms` (when its name says), recent if at `since_ms` or later.
    fn add(&mut self, unix_ms: Option<u64>, c: ChunkCounts, since_ms: f64) {
        let recent = unix_ms.is_some_and(|t| t as f64 >= since_ms);
        if let Some(t) = unix_ms {
            self.first_ms = Some(self.first_ms.map_or(t, |f| f.min(t)));
        }
        if c.source != Source::SelfPlay {
            self.external_rows += c.rows;
            if recent {
                self.recent_external_rows += c.rows;
            }
            return;
        }
        self.chunks += 1;
        self.games += c.games;
        self.rows += c.rows;
        if recent {
            self.recent_games += c.games;
            self.recent_rows += c.rows;
        }
    }
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
        let mut data = DataCount::default();
        // Counted from the listing's names; only chunks written before names carried their
        // counts are opened (and, on object storage, downloaded).
        for name in run.list_chunk_names()? {
            let parsed = ChunkName::parse(&name);
            let counts = match parsed.as_ref().and_then(|n| n.counts) {
                Some(c) => c,
                None => {
                    let p = run.data_dir().join(&name);
                    match run.fetch(&p, false).map_err(anyhow::Error::from).and_then(|_| Ok(Chunk::open(&p)?)) {
                        Ok(c) => ChunkCounts { source: c.meta.source, games: c.games as u64, rows: c.rows as u64 },
                        Err(e) if p.exists() => {
                            warnings.push(format!("{}: unreadable chunk, its games are not counted: {e}", run.describe(&p)));
                            continue;
                        }
                        Err(_) => continue, // retired by the learner since the listing
                    }
                }
            };
            data.add(parsed.map(|n| n.unix_ms), counts, since_ms);
        }
        let metrics = vzero_trainer::read_metrics(&run.metrics_csv())?;
        let recent: Vec<_> = metrics.iter().filter(|r| r.unix as f64 >= now as f64 - RATE_MINUTES * 60.0).collect();
        let steps_per_min = match (recent.first(), recent.last()) {
            (Some(a), Some(b)) if b.unix > a.unix => (b.step - a.step) as f64 / ((b.unix - a.unix) as f64 / 60.0),
            _ => 0.0,
        };
        let gauntlet = read_elo_csv(&arena_dir(&run).join("elo.csv"))?.pop();
        let age_min = data.first_ms.map_or(RATE_MINUTES, |t| (now as f64 - t as f64 / 1000.0).max(1.0) / 60.0);
        let rate_minutes = RATE_MINUTES.min(age_min);
        Ok(RunStatus {
            location: run.location(),
            variant,
            checkpoint,
            checkpoints: list.len(),
            chunks: data.chunks,
            games: data.games,
            rows: data.rows,
            external_rows: data.external_rows,
            rate_minutes,
            games_per_min: data.recent_games as f64 / rate_minutes,
            rows_per_min: data.recent_rows as f64 / rate_minutes,
            external_rows_per_min: data.recent_external_rows as f64 / rate_minutes,
            steps_per_min,
            samples_per_s: metrics.last().map(|r| r.samples_per_s),
            gauntlet,
            lease: read_holder(&run)?,
            processes: read_heartbeats(&run)?,
            now,
            warnings,
        })
    }

    /// Resignations and false resignations summed over every self-play process that left a
    /// heartbeat record in the run (stopped ones too: together they are the run's).
    pub fn resigns(&self) -> Resigns {
        let mut total = Resigns::default();
        for b in self.processes.iter().filter(|b| b.role != "label" && b.role != "learner") {
            total.add(&b.resigns);
        }
        total
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
        let external = if self.external_rows > 0 { format!("; {:.0} imported or labelled rows/min", self.external_rows_per_min) } else { String::new() };
        out.push(format!(
            "{:<13}{:.1} games/min, {:.0} rows/min, {:.1} steps/min{sps}{external}",
            format!("last {} min", if self.rate_minutes >= 2.0 { format!("{:.0}", self.rate_minutes) } else { format!("{:.1}", self.rate_minutes) }),
            self.games_per_min, self.rows_per_min, self.steps_per_min
        ));
        let resigns = self.resigns().line();
        if !resigns.is_empty() {
            out.push(format!("resigns      {resigns} (every process of the run)"));
        }
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
            if b.role == "label" {
                line += &format!(", {} games ({:.1}/min), {} positions ({:.0}/min)", b.games, b.games_per_min, b.rows, b.rows_per_min);
                out.push(line);
                continue;
            }
            if b.role != "learner" {
                line += &format!(", {} games ({:.1}/min), {} rows", b.games, b.games_per_min, b.rows);
                if b.resigns.resigned > 0 || b.resigns.would_resign > 0 {
                    line += &format!(", {} resigned", b.resigns.resigned);
                    if let Some(r) = b.resigns.false_resign_rate() {
                        line += &format!(" ({:.1}% false of {})", 100.0 * r, b.resigns.would_resign);
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use vzero_data::{write_chunk, ChunkMeta, GameRecord};
    use vzero_trainer::synth::{synth_meta, synth_rows};

    fn game(n: usize) -> GameRecord {
        GameRecord {
            variant: "empire".into(),
            start_fen: String::new(),
            moves: vec!["a1a2".into(); n],
            result: "1/2-1/2".into(),
            reason: "max-plies".into(),
            network: String::new(),
            white: String::new(),
            black: String::new(),
            priors: vec![0.5; n],
            values: vec![0.0; n],
        }
    }

    #[test]
    fn status_counts_chunks_from_their_names_and_opens_only_the_older_ones() {
        let v = vzero_rules::Variant::builtin("empire").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(dir.path()).unwrap();
        let meta = synth_meta(v, "x");
        // self-play chunks with counts in their names, a labelled one, and one of the older
        // kind (no counts in its name: opened)
        let a = run.write_chunk("w", &meta, &synth_rows(v, 30, 1), &[game(3), game(4)]).unwrap();
        run.write_chunk("w", &meta, &synth_rows(v, 20, 2), &[game(5)]).unwrap();
        run.write_chunk("l", &ChunkMeta { source: Source::Label, ..meta.clone() }, &synth_rows(v, 7, 3), &[game(2)]).unwrap();
        let old = run.new_chunk_path("old");
        write_chunk(&old, &meta, &synth_rows(v, 11, 4), &[game(6), game(1), game(1)]).unwrap();
        assert!(ChunkName::parse(&a.file_name().unwrap().to_string_lossy()).unwrap().counts.is_some());
        assert!(ChunkName::parse(&old.file_name().unwrap().to_string_lossy()).unwrap().counts.is_none());
        let s = RunStatus::read(dir.path()).unwrap();
        assert_eq!((s.chunks, s.games, s.rows, s.external_rows), (3, 6, 61, 7), "{:?}", s.warnings);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert!(s.external_rows_per_min > 0.0 && s.rows_per_min > 0.0);
        assert!(s.lines().iter().any(|l| l.contains("imported or labelled rows/min")), "{:?}", s.lines());
        // a counted chunk is not opened: its name is enough (were it opened, it would be
        // reported unreadable and not counted) ...
        std::fs::write(&a, b"not hdf5").unwrap();
        let s = RunStatus::read(dir.path()).unwrap();
        assert_eq!((s.chunks, s.games, s.rows), (3, 6, 61));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        // ... while a broken chunk of the older kind is named in a warning and not counted
        std::fs::write(&old, b"not hdf5").unwrap();
        let s = RunStatus::read(dir.path()).unwrap();
        assert_eq!((s.chunks, s.games, s.rows), (2, 3, 50));
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("old"), "{:?}", s.warnings);
    }

    #[test]
    fn label_processes_are_listed_with_their_positions_per_minute() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(dir.path()).unwrap();
        let hb = vzero_data::Heartbeat::start(&run, "label", std::time::Duration::from_secs(60), Box::new(|| vzero_data::Progress { games: 12, rows: 345, ..Default::default() })).unwrap();
        let s = RunStatus::read(dir.path()).unwrap();
        let lines = s.lines();
        assert!(lines.iter().any(|l| l.starts_with("processes    1 working now")), "{lines:?}");
        let label = lines.iter().find(|l| l.trim_start().starts_with("label")).unwrap_or_else(|| panic!("{lines:?}"));
        assert!(label.contains("12 games") && label.contains("345 positions") && label.contains("/min)"), "{label}");
        assert!(!label.contains("generation"), "{label}");
        drop(hb);
    }
}
