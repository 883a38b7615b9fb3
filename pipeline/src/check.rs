//! Run checks: the invariants a run keeps through kills, store outages and full disks, checked
//! from the run alone (`vzero check`; `scripts/chaos.sh` runs it after every fault).
//!
//! - every listed chunk opens, its game records parse, and a self-play chunk's rows are its
//!   games' moves;
//! - no game is counted twice: no self-play game appears twice among one writer's chunks, and
//!   no imported or labelled batch (its writer name) twice;
//! - every published checkpoint is complete (weights of the size and checksum its metadata
//!   names), and ordered by step their generations and steps both strictly increase (one
//!   learner at a time published them);
//! - metrics.csv's steps strictly increase;
//! - no temporary or partial file or object is visible.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Context, Result};
use vzero_data::{Chunk, RunDir, Source};

/// What [`RunCheck::run`] counted and found.
#[derive(Clone, Debug, Default)]
pub struct RunCheck {
    pub location: String,
    pub chunks: usize,
    pub games: usize,
    pub rows: usize,
    pub checkpoints: usize,
    pub metrics_rows: usize,
    /// Every broken invariant, one line each, naming the file.
    pub problems: Vec<String>,
}

impl RunCheck {
    /// Checks the run at `run` (a directory that must exist, or an `s3://` URL).
    pub fn run(run: &Path) -> Result<RunCheck> {
        if !vzero_data::remote::is_remote_spec(run) && !run.is_dir() {
            anyhow::bail!("run directory {} does not exist", run.display());
        }
        let run = RunDir::open_existing(run).with_context(|| format!("opening run {}", run.display()))?;
        let mut c = RunCheck { location: run.location(), ..Default::default() };
        c.check_config(&run);
        c.check_chunks(&run)?;
        c.check_checkpoints(&run)?;
        c.check_metrics(&run);
        for f in run.stray_files()? {
            c.problems.push(format!("{f}: a temporary file is visible"));
        }
        Ok(c)
    }

    /// True when no invariant is broken.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// `N chunks (G games, R rows), C checkpoints, M metrics rows`.
    pub fn counts(&self) -> String {
        format!("{} chunks ({} games, {} rows), {} checkpoints, {} metrics rows", self.chunks, self.games, self.rows, self.checkpoints, self.metrics_rows)
    }

    /// The stored `config.toml`, if the run has one, must parse as a run config.
    fn check_config(&mut self, run: &RunDir) {
        let path = run.root().join("config.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                if let Err(e) = crate::config::RunConfig::parse(&text, &run.describe(&path)) {
                    self.problems.push(format!("{e:#}"));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => self.problems.push(format!("{}: unreadable: {e}", run.describe(&path))),
        }
    }

    fn check_chunks(&mut self, run: &RunDir) -> Result<()> {
        let mut seen_games: HashMap<String, HashSet<String>> = HashMap::new();
        let mut external_writers = HashSet::new();
        for p in run.list_chunks()? {
            let name = run.describe(&p);
            if !p.exists() {
                continue; // retired by the learner since the listing
            }
            let chunk = match Chunk::open(&p) {
                Ok(c) => c,
                Err(e) => {
                    self.problems.push(format!("{name}: unreadable chunk: {e}"));
                    continue;
                }
            };
            let games = match chunk.games() {
                Ok(g) => g,
                Err(e) => {
                    self.problems.push(format!("{name}: unreadable game records: {e}"));
                    continue;
                }
            };
            self.chunks += 1;
            self.games += games.len();
            self.rows += chunk.rows;
            if chunk.meta.source != Source::SelfPlay {
                if !external_writers.insert(chunk.meta.worker.clone()) {
                    self.problems.push(format!("{name}: batch {} written twice", chunk.meta.worker));
                }
                continue;
            }
            let moves: usize = games.iter().map(|g| g.moves.len()).sum();
            if moves != chunk.rows {
                self.problems.push(format!("{name}: {} rows for {moves} moves of its {} games", chunk.rows, games.len()));
            }
            let seen = seen_games.entry(chunk.meta.worker.clone()).or_default();
            for g in &games {
                let key = serde_json::to_string(g).unwrap_or_default();
                if !seen.insert(key) {
                    self.problems.push(format!("{name}: a game of writer {} counted twice", chunk.meta.worker));
                }
            }
        }
        Ok(())
    }

    fn check_checkpoints(&mut self, run: &RunDir) -> Result<()> {
        let list = run.list_checkpoints()?;
        self.checkpoints = list.len();
        for e in &list {
            if let Err(err) = run.fetch_checkpoint(&e.path) {
                self.problems.push(format!("checkpoint {}: {err}", e.name()));
                continue;
            }
            if let Err(err) = vzero_model::checkpoint::verify(&e.path) {
                self.problems.push(format!("checkpoint {}: incomplete: {err}", e.name()));
            }
        }
        for w in list.windows(2) {
            if !(w[1].step > w[0].step && w[1].generation > w[0].generation) {
                self.problems.push(format!("checkpoints {} and {}: generations and steps do not both increase (two learners?)", w[0].name(), w[1].name()));
            }
        }
        Ok(())
    }

    fn check_metrics(&mut self, run: &RunDir) {
        let path = run.metrics_csv();
        match vzero_trainer::read_metrics(&path) {
            Ok(rows) => {
                self.metrics_rows = rows.len();
                for w in rows.windows(2) {
                    if w[1].step <= w[0].step {
                        self.problems.push(format!("{}: step {} follows step {}", run.describe(&path), w[1].step, w[0].step));
                    }
                }
            }
            Err(e) => self.problems.push(format!("{}: {e:#}", run.describe(&path))),
        }
    }
}
