//! The run directory: the only thing self-play and training processes share.
//!
//! ```text
//! <run>/data/<unix_ms>-<worker>-<seq>.h5      finished chunks (written atomically)
//! <run>/data/.<name>.<host>.<pid>-<n>.tmp     chunk being written (ignored by readers)
//! <run>/checkpoints/gen-<G>-step-<S>.json     checkpoint metadata (vzero-model; written last)
//! <run>/checkpoints/gen-<G>-step-<S>.safetensors
//! <run>/plots/                                loss curves
//! <run>/metrics.csv                           training metrics
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{io_err, Result};

/// A temporary file older than this is removed by [`RunDir::clean_tmp`] even if its writer
/// may be alive on another host.
pub const TMP_MAX_AGE: Duration = Duration::from_secs(3600);

static CHUNK_SEQ: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

/// A published checkpoint found in `checkpoints/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointEntry {
    pub generation: u64,
    pub step: u64,
    /// The metadata file (`<stem>.json`); `vzero_model::checkpoint::load` accepts it.
    pub path: PathBuf,
}

impl CheckpointEntry {
    /// The checkpoint name (file stem), e.g. `gen-000003-step-000000300`; the network id.
    pub fn name(&self) -> String {
        checkpoint_name(self.generation, self.step)
    }
}

/// Sortable checkpoint stem for generation `gen` at optimizer step `step`.
pub fn checkpoint_name(generation: u64, step: u64) -> String {
    format!("gen-{generation:06}-step-{step:09}")
}

/// Inverse of [`checkpoint_name`] (accepts any number of digits).
pub fn parse_checkpoint_name(stem: &str) -> Option<(u64, u64)> {
    let rest = stem.strip_prefix("gen-")?;
    let (g, s) = rest.split_once("-step-")?;
    if g.is_empty() || s.is_empty() || !g.bytes().all(|b| b.is_ascii_digit()) || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((g.parse().ok()?, s.parse().ok()?))
}

pub(crate) fn hostname() -> String {
    let h = fs::read_to_string("/proc/sys/kernel/hostname").or_else(|_| fs::read_to_string("/etc/hostname")).unwrap_or_default();
    let h: String = h.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if h.is_empty() {
        "host".into()
    } else {
        h
    }
}

fn sanitize(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() {
        "w".into()
    } else {
        s
    }
}

fn unix_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0)
}

impl RunDir {
    /// Creates `path` and its sub-directories if needed.
    pub fn create_or_open(path: impl AsRef<Path>) -> Result<RunDir> {
        let run = RunDir { root: path.as_ref().to_path_buf() };
        for d in [run.root.clone(), run.data_dir(), run.checkpoints_dir(), run.plots_dir()] {
            fs::create_dir_all(&d).map_err(io_err(&d))?;
        }
        Ok(run)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    pub fn checkpoints_dir(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    pub fn plots_dir(&self) -> PathBuf {
        self.root.join("plots")
    }

    pub fn metrics_csv(&self) -> PathBuf {
        self.root.join("metrics.csv")
    }

    /// A new, unique chunk path `data/<unix_ms, 13 digits>-<worker>-<seq, 6 digits>.h5`; names
    /// sort by creation time. `worker` (sanitised to `[A-Za-z0-9_]`) must be unique per
    /// writing process (e.g. host + pid); the sequence number makes names unique within one.
    pub fn new_chunk_path(&self, worker: &str) -> PathBuf {
        let worker = sanitize(worker);
        loop {
            let seq = CHUNK_SEQ.fetch_add(1, Ordering::Relaxed);
            let p = self.data_dir().join(format!("{:013}-{worker}-{seq:06}.h5", unix_ms()));
            if !p.exists() {
                return p;
            }
        }
    }

    /// Finished chunks (`*.h5`, not hidden), oldest first (by name = creation time).
    pub fn list_chunks(&self) -> Result<Vec<PathBuf>> {
        let dir = self.data_dir();
        let mut out = Vec::new();
        for e in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let e = e.map_err(io_err(&dir))?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".h5") && !name.starts_with('.') {
                out.push(e.path());
            }
        }
        out.sort();
        Ok(out)
    }

    /// Removes temporary files (`.*.tmp` in `data/` and `checkpoints/`) left by killed
    /// writers: those whose writer process no longer exists on this host, and any older than
    /// [`TMP_MAX_AGE`] (writers on other hosts). Files being written by live local processes
    /// are kept. Returns the number removed.
    pub fn clean_tmp(&self) -> Result<usize> {
        let me = std::process::id();
        let mut removed = 0;
        for dir in [self.data_dir(), self.checkpoints_dir()] {
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !(name.starts_with('.') && name.ends_with(".tmp")) {
                    continue;
                }
                let old = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > TMP_MAX_AGE);
                let pid = name
                    .trim_end_matches(".tmp")
                    .rsplit_once('.')
                    .and_then(|(_, p)| p.split_once('-'))
                    .and_then(|(p, _)| p.parse::<u32>().ok());
                let dead_writer = match pid {
                    Some(p) => p != me && !Path::new(&format!("/proc/{p}")).exists(),
                    None => true,
                };
                // Chunk tmp names carry the host; a dead pid only counts for this host.
                let other_host = dir == self.data_dir() && !name.contains(&format!(".{}.", hostname()));
                if old || (dead_writer && !other_host) {
                    if fs::remove_file(e.path()).is_ok() {
                        removed += 1;
                    }
                }
            }
        }
        Ok(removed)
    }

    /// Published checkpoints (those whose metadata file exists and parses), oldest first by
    /// (step, generation). The model crate writes the weights first and the metadata last,
    /// both atomically, so a listed checkpoint is complete.
    pub fn list_checkpoints(&self) -> Result<Vec<CheckpointEntry>> {
        let dir = self.checkpoints_dir();
        let mut out = Vec::new();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".json") else { continue };
            let Some((generation, step)) = parse_checkpoint_name(stem) else { continue };
            out.push(CheckpointEntry { generation, step, path: e.path() });
        }
        out.sort_by_key(|c| (c.step, c.generation));
        Ok(out)
    }

    /// The newest checkpoint by training step (then generation): its metadata `.json` path.
    /// Entries whose metadata does not parse as JSON with a `step` are skipped.
    pub fn latest_checkpoint(&self) -> Result<Option<PathBuf>> {
        Ok(self.latest_checkpoint_entry()?.map(|c| c.path))
    }

    pub fn latest_checkpoint_entry(&self) -> Result<Option<CheckpointEntry>> {
        for c in self.list_checkpoints()?.into_iter().rev() {
            let ok = fs::read(&c.path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v.get("step").and_then(|s| s.as_u64()).is_some());
            if ok {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }
}
