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

struct Entry {
    path: PathBuf,
    rows: usize,
}

/// Indexes a run's chunks (row counts read once per file from its metadata) and samples rows
/// uniformly from the newest chunks that cover the window.
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
        })
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
                    self.total += c.rows;
                    self.index.push(Entry { path, rows: c.rows });
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
        let keep: std::collections::HashSet<&PathBuf> = self.index[first..].iter().map(|e| &e.path).collect();
        self.cache.retain(|p, _| keep.contains(p));
    }

    /// Rows in all indexed chunks.
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
    /// first; random order). Errors if the window is empty. A chunk that turns out to be
    /// unreadable is skipped (warning) and the sample is drawn again without it.
    pub fn sample_into(&mut self, n: usize, out: &mut RowBlock) -> Result<()> {
        loop {
            match self.try_sample(n, out)? {
                Ok(()) => return Ok(()),
                Err((i, e)) => {
                    eprintln!("warning: skipping unreadable chunk: {e}");
                    let entry = self.index.remove(i);
                    self.known.remove(&entry.path);
                    self.total -= entry.rows;
                    self.skipped.push((entry.path, e.to_string()));
                    self.recompute();
                }
            }
        }
    }

    #[allow(clippy::type_complexity)]
    fn try_sample(&mut self, n: usize, out: &mut RowBlock) -> Result<Result<(), (usize, DataError)>> {
        let w = self.window_rows();
        if w == 0 {
            return Err(DataError::Config("replay window is empty: no training data yet".into()));
        }
        let mut picks: Vec<(usize, usize)> = (0..n)
            .map(|_| {
                let r = self.rng.gen_range(0..w);
                let k = self.prefix.partition_point(|&p| p <= r) - 1;
                (k, r - self.prefix[k])
            })
            .collect();
        // Load each needed chunk once.
        picks.sort_unstable_by_key(|&(k, _)| k);
        let mut blocks: Vec<(usize, Arc<RowBlock>)> = Vec::new();
        for &(k, _) in &picks {
            if blocks.last().map(|b| b.0) != Some(k) {
                match self.block(self.first + k) {
                    Ok(b) => blocks.push((k, b)),
                    Err(e @ DataError::Mismatch { .. }) => return Err(e),
                    Err(e) => return Ok(Err((self.first + k, e))),
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
        for (k, r) in picks {
            let b = &blocks[blocks.binary_search_by_key(&k, |b| b.0).unwrap_or(0)].1;
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

    fn block(&mut self, i: usize) -> Result<Arc<RowBlock>> {
        let path = &self.index[i].path;
        if let Some(b) = self.cache.get(path) {
            return Ok(b.clone());
        }
        let c = Chunk::open(path)?;
        let mut b = c.read_block()?;
        if let Some(h) = &self.short_term_horizons {
            b.project_short_term(h);
        }
        let b = Arc::new(b);
        if b.len() != self.index[i].rows {
            return Err(DataError::Corrupt { path: path.clone(), msg: "row count changed since it was indexed".into() });
        }
        self.cache.insert(path.clone(), b.clone());
        Ok(b)
    }
}
