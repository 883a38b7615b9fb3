//! Replay window over the newest chunks (KataGo-style growing window) and uniform sampling.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::chunk::{Chunk, ChunkExpect};
use crate::error::{DataError, Result};
use crate::rundir::RunDir;
use crate::RowBlock;

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
/// Chunks in the window are read whole and cached in memory (column form) until they leave
/// the window, so sampling costs one copy per row. Memory: about `window rows x C*H*W x 4`
/// bytes.
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
}

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
        })
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

    /// Rows in the external pool (imported and labelled chunks).
    pub fn external_rows(&self) -> usize {
        *self.external_prefix.last().unwrap_or(&0)
    }

    /// The share of external rows in the next sample ([`ExternalMix::share_at`]).
    pub fn external_share(&self) -> f64 {
        self.mix.share_at(self.total, self.external_rows())
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
        let want = self.cfg.window_size(self.total);
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
        self.total
    }

    /// Target window size for the current total.
    pub fn window_target(&self) -> usize {
        self.cfg.window_size(self.total)
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
        // (pool, chunk, row): pool 0 is the self-play window (chunk counted from `first`),
        // pool 1 the external chunks.
        let mut picks: Vec<(usize, usize, usize)> = (0..n)
            .map(|_| {
                let external = w == 0 || (share > 0.0 && self.rng.gen_bool(share.min(1.0)));
                let (pool, prefix, len) = if external { (1, &self.external_prefix, x) } else { (0, &self.prefix, w) };
                let r = self.rng.gen_range(0..len);
                let k = prefix.partition_point(|&p| p <= r) - 1;
                (pool, k, r - prefix[k])
            })
            .collect();
        // Load each needed chunk once.
        picks.sort_unstable_by_key(|&(pool, k, _)| (pool, k));
        let mut blocks: Vec<((usize, usize), Arc<RowBlock>)> = Vec::new();
        for &(pool, k, _) in &picks {
            if blocks.last().map(|b| b.0) != Some((pool, k)) {
                let (path, rows, weight) = match pool {
                    0 => (self.index[self.first + k].path.clone(), self.index[self.first + k].rows, 1.0),
                    _ => (self.external[k].path.clone(), self.external[k].rows, self.mix.weight),
                };
                match self.block(&path, rows, weight) {
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
        let mut b = c.read_block()?;
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
