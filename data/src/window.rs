//! Replay window over the newest chunks (KataGo-style growing window) and uniform sampling.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::chunk::{Chunk, ChunkExpect};
use crate::error::{DataError, Result};
use crate::rundir::RunDir;
use crate::rows::RowBlock;

/// `window(total) = min(total, max(min_rows, scale * total^exponent))`.
/// KataGo's defaults are min 250k, exponent 0.65, scale chosen so that the window grows
/// sublinearly; small CPU runs use a few thousand rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowConfig {
    pub min_rows: usize,
    pub scale: f64,
    pub exponent: f64,
}

impl WindowConfig {
    pub fn window_size(&self, total: usize) -> usize {
        let grown = self.scale * (total as f64).powf(self.exponent);
        let w = if grown.is_finite() { (grown as usize).max(self.min_rows) } else { total };
        w.min(total)
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(DataError::Config(format!("window scale must be > 0, got {}", self.scale)));
        }
        if !(self.exponent.is_finite() && (0.0..=1.0).contains(&self.exponent)) {
            return Err(DataError::Config(format!("window exponent must be in [0, 1], got {}", self.exponent)));
        }
        Ok(())
    }
}

/// How rows of other sources than self-play (imported games, teacher labels: see
/// [`crate::Source`]) are mixed into the samples. They form a pool of their own, outside the
/// self-play window: every external chunk stays in it however much self-play data arrives,
/// and its share of each sample decays instead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExternalMix {
    /// Share of each sample drawn from the external pool once self-play rows exist (0 excludes
    /// external rows; with no self-play rows yet, every row is external).
    pub share: f64,
    /// Self-play rows after which that share has halved (0: it never decays).
    pub half_life_rows: usize,
    /// Factor on the loss weight (`weight` column) of external rows.
    pub weight: f32,
}

impl Default for ExternalMix {
    fn default() -> Self {
        ExternalMix { share: 0.5, half_life_rows: 200_000, weight: 1.0 }
    }
}

impl ExternalMix {
    /// The share of external rows in a sample when the run has `selfplay_rows` self-play rows
    /// and `external_rows` external ones: `share · 2^(−selfplay_rows / half_life_rows)`, 1 with
    /// no self-play rows, 0 with no external rows.
    pub fn share_at(&self, selfplay_rows: usize, external_rows: usize) -> f64 {
        if external_rows == 0 {
            return 0.0;
        }
        if selfplay_rows == 0 {
            return 1.0;
        }
        if self.half_life_rows == 0 {
            return self.share;
        }
        self.share * 0.5f64.powf(selfplay_rows as f64 / self.half_life_rows as f64)
    }

    pub fn validate(&self) -> Result<()> {
        if !(self.share.is_finite() && (0.0..=1.0).contains(&self.share)) {
            return Err(DataError::Config(format!("external share must be in [0, 1], got {}", self.share)));
        }
        if !(self.weight.is_finite() && self.weight >= 0.0) {
            return Err(DataError::Config(format!("external weight must be >= 0, got {}", self.weight)));
        }
        Ok(())
    }
}

struct Entry {
    path: PathBuf,
    rows: usize,
}

/// Indexes a run's chunks (row counts read once per file from its metadata) and samples rows
/// uniformly from the newest self-play chunks that cover the window, mixed with rows of the
/// external pool (imported and labelled chunks, [`ExternalMix`]).
///
/// Chunks in the window are read whole and cached in memory (column form, input planes packed:
/// [`crate::PackedPlanes`]) until they leave the window; sampling unpacks the drawn rows into the
/// batch. Memory: the packed planes (for vzero's encodings, a bit per square of each piece plane
/// and 4 bytes per constant plane) plus the sparse policy targets, per row.
///
/// Bad files: a chunk that cannot be read (corrupt, truncated) is **skipped with a warning**
/// (printed once to stderr and kept in [`ReplayWindow::skipped`]); a readable chunk of another
/// variant, encoding version, plane shape or policy size is an **error** naming the file,
/// since it means two different runs share the directory.
pub struct ReplayWindow {
    run: RunDir,
    expect: ChunkExpect,
    cfg: WindowConfig,
    /// All good chunks, oldest first.
    index: Vec<Entry>,
    known: HashMap<PathBuf, usize>,
    skipped: Vec<(PathBuf, String)>,
    total: usize,
    /// First index into `index` of the window, and prefix sums of rows from there.
    first: usize,
    prefix: Vec<usize>,
    cache: HashMap<PathBuf, Arc<RowBlock>>,
    rng: StdRng,
    /// Short-term horizons every block is projected to (None = as stored).
    short_term_horizons: Option<Vec<u32>>,
    /// External chunks (imported, labelled), oldest first, and prefix sums of their rows.
    external: Vec<Entry>,
    external_prefix: Vec<usize>,
    mix: ExternalMix,
    /// Streaming: the most self-play rows held in memory (None: the whole window is cached).
    stream: Option<usize>,
    /// Self-play rows of chunks retired from `data/` (by this or an earlier process).
    retired: usize,
    /// Streaming: the window chunks in the shuffle buffer.
    buffer: Vec<PathBuf>,
}

/// What happens to self-play chunks that have left the window (`[learn] retention`): they are
/// never read again by the learner, but the opening statistics and PGN exports may want them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Retention {
    /// Leave them in `data/` (the default).
    #[default]
    Keep,
    /// Move them to `archive/data/` in the run directory (`vzero openings --from <run>/archive`
    /// still reads them).
    Archive,
    /// Delete them.
    Delete,
}

impl Retention {
    /// Parses `keep`, `archive` or `delete`.
    pub fn parse(s: &str) -> Option<Retention> {
        match s {
            "keep" => Some(Retention::Keep),
            "archive" => Some(Retention::Archive),
            "delete" => Some(Retention::Delete),
            _ => None,
        }
    }
}

/// File in `data/` with the rows of the chunks retired from it (so that the window's growth,
/// which follows the total number of rows ever generated, survives a restart).
const RETIRED_FILE: &str = "retired-rows";

impl ReplayWindow {
    pub fn new(run: &RunDir, expect: ChunkExpect, cfg: WindowConfig, seed: u64) -> Result<Self> {
        cfg.validate()?;
        Ok(ReplayWindow {
            run: run.clone(),
            expect,
            cfg,
            index: Vec::new(),
            known: HashMap::new(),
            skipped: Vec::new(),
            total: 0,
            first: 0,
            prefix: vec![0],
            cache: HashMap::new(),
            rng: StdRng::seed_from_u64(seed),
            short_term_horizons: None,
            external: Vec::new(),
            external_prefix: vec![0],
            mix: ExternalMix::default(),
            stream: None,
            buffer: Vec::new(),
            retired: std::fs::read_to_string(run.data_dir().join(RETIRED_FILE)).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0),
        })
    }

    /// Streams the window through a shuffle buffer of about `rows` rows instead of caching every
    /// chunk of it (None, the default): for windows larger than memory. Each sample draws from
    /// the whole chunks in the buffer; before each sample, about a sixteenth of them are
    /// replaced by other chunks of the window drawn at random, so the buffer wanders over the
    /// window. The trade-off (lc0's): memory bounded by the buffer, at the cost of rows of one
    /// batch coming from fewer chunks (more correlated) and of reading each chunk file several
    /// times over the run.
    pub fn set_stream(&mut self, rows: Option<usize>) {
        self.stream = rows.map(|r| r.max(1));
        self.buffer.clear();
        self.recompute();
    }

    /// Streaming: drops buffered chunks that left the window, replaces a sixteenth of the rest
    /// by random window chunks and fills the buffer up to its size; returns the buffered chunks
    /// (relative to `first`).
    fn turn_buffer(&mut self) -> Vec<usize> {
        let Some(cap) = self.stream else { return Vec::new() };
        let n = self.index.len() - self.first;
        let pos: HashMap<PathBuf, usize> = self.index[self.first..].iter().enumerate().map(|(k, e)| (e.path.clone(), k)).collect();
        let mut buffer: Vec<usize> = self.buffer.iter().filter_map(|p| pos.get(p).copied()).collect();
        let turn = (buffer.len() / 16).max(1);
        if buffer.len() < n {
            for _ in 0..turn.min(buffer.len()) {
                let i = self.rng.gen_range(0..buffer.len());
                buffer.swap_remove(i);
            }
        }
        let mut held: usize = buffer.iter().map(|&k| self.index[self.first + k].rows).sum();
        let mut tries = 0;
        while (buffer.is_empty() || held < cap) && buffer.len() < n && tries < 4 * n + 16 {
            tries += 1;
            let k = self.rng.gen_range(0..n);
            if !buffer.contains(&k) {
                buffer.push(k);
                held += self.index[self.first + k].rows;
            }
        }
        self.buffer = buffer.iter().map(|&k| self.index[self.first + k].path.clone()).collect();
        let keep: std::collections::HashSet<&PathBuf> = self.buffer.iter().chain(self.external.iter().map(|e| &e.path)).collect();
        self.cache.retain(|p, _| keep.contains(p));
        buffer
    }

    /// Sets how external rows are mixed in (default [`ExternalMix::default`]).
    pub fn set_external_mix(&mut self, mix: ExternalMix) -> Result<()> {
        mix.validate()?;
        if mix.weight != self.mix.weight {
            let ext: std::collections::HashSet<&PathBuf> = self.external.iter().map(|e| &e.path).collect();
            self.cache.retain(|p, _| !ext.contains(p));
        }
        self.mix = mix;
        Ok(())
    }

    /// Rows of the chunks held in memory now (the whole window, or the shuffle buffer, and the
    /// external chunks sampled so far).
    pub fn cached_rows(&self) -> usize {
        self.cache.values().map(|b| b.len()).sum()
    }

    /// Rows in the external pool (imported and labelled chunks).
    pub fn external_rows(&self) -> usize {
        *self.external_prefix.last().unwrap_or(&0)
    }

    /// The share of external rows in the next sample ([`ExternalMix::share_at`]).
    pub fn external_share(&self) -> f64 {
        self.mix.share_at(self.total + self.retired, self.external_rows())
    }

    /// Lays every sampled row's short-term targets out for `horizons` (the reader's, e.g. the
    /// network's; empty = none), whatever the chunk stores: chunks that lack one of them (or
    /// schema-1 chunks) give those rows absent targets (weight 0). See
    /// [`RowBlock::project_short_term`]. Default: as stored.
    pub fn set_short_term_horizons(&mut self, horizons: &[u32]) {
        self.short_term_horizons = Some(horizons.to_vec());
        self.cache.clear();
    }

    /// Looks for new chunk files and recomputes the window. Returns the number of rows added.
    pub fn refresh(&mut self) -> Result<usize> {
        let mut added = 0;
        let mut new_entries = false;
        for path in self.run.list_chunks()? {
            if self.known.contains_key(&path) || self.skipped.iter().any(|(p, _)| *p == path) {
                continue;
            }
            match Chunk::open(&path) {
                Ok(c) => {
                    c.check(&self.expect)?;
                    self.known.insert(path.clone(), c.rows);
                    added += c.rows;
                    if c.meta.source.is_external() {
                        self.external.push(Entry { path, rows: c.rows });
                    } else {
                        self.total += c.rows;
                        self.index.push(Entry { path, rows: c.rows });
                    }
                    new_entries = true;
                }
                Err(e @ DataError::Mismatch { .. }) => return Err(e),
                Err(e) => {
                    eprintln!("warning: skipping unreadable chunk: {e}");
                    self.skipped.push((path, e.to_string()));
                }
            }
        }
        if new_entries {
            // Keep the index sorted by name (= creation time) even if files appear late.
            self.index.sort_by(|a, b| a.path.cmp(&b.path));
            self.external.sort_by(|a, b| a.path.cmp(&b.path));
            self.recompute();
        }
        Ok(added)
    }

    fn recompute(&mut self) {
        let want = self.cfg.window_size(self.total + self.retired).min(self.total);
        let mut rows = 0;
        let mut first = self.index.len();
        while first > 0 && rows < want {
            first -= 1;
            rows += self.index[first].rows;
        }
        self.first = first;
        self.prefix.clear();
        self.prefix.push(0);
        for e in &self.index[first..] {
            let last = *self.prefix.last().unwrap_or(&0);
            self.prefix.push(last + e.rows);
        }
        self.external_prefix.clear();
        self.external_prefix.push(0);
        for e in &self.external {
            let last = *self.external_prefix.last().unwrap_or(&0);
            self.external_prefix.push(last + e.rows);
        }
        let keep: std::collections::HashSet<&PathBuf> = self.index[first..].iter().chain(&self.external).map(|e| &e.path).collect();
        self.cache.retain(|p, _| keep.contains(p));
    }

    /// Rows in all indexed self-play chunks (external rows: [`ReplayWindow::external_rows`]).
    pub fn total_rows(&self) -> usize {
        self.total + self.retired
    }

    /// Archives or deletes the self-play chunks older than the window (never one in it, never
    /// an external one); returns how many. Their rows still count in [`total_rows`]
    /// (`data/retired-rows`), so the window does not shrink.
    ///
    /// [`total_rows`]: ReplayWindow::total_rows
    pub fn retire(&mut self, retention: Retention) -> Result<usize> {
        if retention == Retention::Keep || self.first == 0 {
            return Ok(0);
        }
        let old: Vec<Entry> = self.index.drain(..self.first).collect();
        let mut done = 0;
        for e in &old {
            if self.run.retire_chunk(&e.path, retention == Retention::Archive)? {
                done += 1;
            }
            self.total -= e.rows;
            self.retired += e.rows;
        }
        let file = self.run.data_dir().join(RETIRED_FILE);
        vzero_base::write_atomic(&file, self.retired.to_string().as_bytes())?;
        self.run.publish(&file)?;
        self.recompute();
        Ok(done)
    }

    /// Target window size for the current total.
    pub fn window_target(&self) -> usize {
        self.cfg.window_size(self.total + self.retired).min(self.total)
    }

    /// Rows in the chunks chosen for the window (>= target, by at most one chunk).
    pub fn window_rows(&self) -> usize {
        *self.prefix.last().unwrap_or(&0)
    }

    /// The chunks in the window, oldest first.
    pub fn window_chunks(&self) -> Vec<PathBuf> {
        self.index[self.first..].iter().map(|e| e.path.clone()).collect()
    }

    pub fn num_chunks(&self) -> usize {
        self.index.len()
    }

    /// Unreadable chunks that were skipped, with the reason.
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.skipped
    }

    /// Samples `n` rows uniformly (with replacement) from the window into `out` (cleared
    /// first; random order), each row from the external pool with probability
    /// [`ReplayWindow::external_share`]. Errors if the window and the pool are empty. A chunk
    /// that turns out to be unreadable is skipped (warning) and the sample is drawn again
    /// without it.
    pub fn sample_into(&mut self, n: usize, out: &mut RowBlock) -> Result<()> {
        loop {
            match self.try_sample(n, out)? {
                Ok(()) => return Ok(()),
                Err((path, e)) => {
                    eprintln!("warning: skipping unreadable chunk: {e}");
                    if let Some(i) = self.index.iter().position(|x| x.path == path) {
                        let entry = self.index.remove(i);
                        self.total -= entry.rows;
                    } else if let Some(i) = self.external.iter().position(|x| x.path == path) {
                        self.external.remove(i);
                    }
                    self.known.remove(&path);
                    self.skipped.push((path, e.to_string()));
                    self.recompute();
                }
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn try_sample(&mut self, n: usize, out: &mut RowBlock) -> Result<Result<(), (PathBuf, DataError)>> {
        let w = self.window_rows();
        let x = self.external_rows();
        if w == 0 && x == 0 {
            return Err(DataError::Config("replay window is empty: no training data yet".into()));
        }
        let share = self.external_share();
        // The self-play rows to draw from: the whole window, or (streaming) the chunks in the
        // shuffle buffer (chunk indices relative to `first`, with prefix sums of their rows).
        let buffered = match self.stream {
            Some(_) if w > 0 => Some(self.turn_buffer()),
            _ => None,
        };
        let buffered_prefix: Option<Vec<usize>> = buffered.as_ref().map(|chunks| {
            let mut prefix = vec![0];
            for &k in chunks {
                prefix.push(prefix[prefix.len() - 1] + self.index[self.first + k].rows);
            }
            prefix
        });
        let prefix: &[usize] = buffered_prefix.as_deref().unwrap_or(&self.prefix);
        let rows = *prefix.last().unwrap_or(&0);
        // (pool, chunk, row): pool 0 is the self-play window (chunk counted from `first`),
        // pool 1 the external chunks.
        let mut picks: Vec<(usize, usize, usize)> = (0..n)
            .map(|_| {
                let external = rows == 0 || (share > 0.0 && self.rng.gen_bool(share.min(1.0)));
                if external {
                    let r = self.rng.gen_range(0..x);
                    let k = self.external_prefix.partition_point(|&p| p <= r) - 1;
                    (1, k, r - self.external_prefix[k])
                } else {
                    let r = self.rng.gen_range(0..rows);
                    let j = prefix.partition_point(|&p| p <= r) - 1;
                    (0, buffered.as_ref().map_or(j, |c| c[j]), r - prefix[j])
                }
            })
            .collect();
        // Load each needed chunk once.
        picks.sort_unstable_by_key(|&(pool, k, _)| (pool, k));
        let mut blocks: Vec<((usize, usize), Arc<RowBlock>)> = Vec::new();
        for &(pool, k, _) in &picks {
            if blocks.last().map(|b| b.0) != Some((pool, k)) {
                let (path, chunk_rows, weight) = match pool {
                    0 => (self.index[self.first + k].path.clone(), self.index[self.first + k].rows, 1.0),
                    _ => (self.external[k].path.clone(), self.external[k].rows, self.mix.weight),
                };
                match self.block(&path, chunk_rows, weight) {
                    Ok(b) => blocks.push(((pool, k), b)),
                    Err(e @ DataError::Mismatch { .. }) => return Err(e),
                    Err(e) => return Ok(Err((path, e))),
                }
            }
        }
        // Output in random order (picks were sorted by chunk).
        for i in (1..picks.len()).rev() {
            let j = self.rng.gen_range(0..=i);
            picks.swap(i, j);
        }
        out.clear();
        if let Some(first) = blocks.first() {
            out.plane_len = first.1.plane_len;
            if out.short_term_horizons != first.1.short_term_horizons {
                out.short_term_horizons = first.1.short_term_horizons.clone();
            }
        }
        for (pool, k, r) in picks {
            let b = &blocks[blocks.binary_search_by_key(&(pool, k), |b| b.0).unwrap_or(0)].1;
            out.push_from(b, r);
        }
        Ok(Ok(()))
    }

    /// Convenience: a freshly allocated sample.
    pub fn sample(&mut self, n: usize) -> Result<RowBlock> {
        let mut out = RowBlock::default();
        self.sample_into(n, &mut out)?;
        Ok(out)
    }

    /// The rows of the chunk at `path` (indexed with `rows` rows), cached, with their loss
    /// weights multiplied by `weight`.
    fn block(&mut self, path: &PathBuf, rows: usize, weight: f32) -> Result<Arc<RowBlock>> {
        if let Some(b) = self.cache.get(path) {
            return Ok(b.clone());
        }
        let c = Chunk::open(path)?;
        let mut b = c.read_packed_block()?;
        if let Some(h) = &self.short_term_horizons {
            b.project_short_term(h);
        }
        if weight != 1.0 {
            b.weight.iter_mut().for_each(|w| *w *= weight);
        }
        let b = Arc::new(b);
        if b.len() != rows {
            return Err(DataError::Corrupt { path: path.clone(), msg: "row count changed since it was indexed".into() });
        }
        self.cache.insert(path.clone(), b.clone());
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_share_is_all_before_self_play_and_halves_every_half_life() {
        let m = ExternalMix { share: 0.5, half_life_rows: 1000, weight: 1.0 };
        assert_eq!(m.share_at(0, 10), 1.0);
        assert_eq!(m.share_at(10, 0), 0.0);
        assert!((m.share_at(1, 10) - 0.5).abs() < 1e-3);
        assert!((m.share_at(1000, 10) - 0.25).abs() < 1e-12);
        assert!((m.share_at(3000, 10) - 0.0625).abs() < 1e-12);
        assert_eq!(ExternalMix { half_life_rows: 0, ..m }.share_at(1_000_000, 10), 0.5);
        assert_eq!(ExternalMix { share: 0.0, ..m }.share_at(5, 10), 0.0);
        assert!(ExternalMix { share: 1.5, ..m }.validate().is_err());
        assert!(ExternalMix { weight: -1.0, ..m }.validate().is_err());
    }
}
