//! The run directory: the only thing self-play and training processes share.
//!
//! ```text
//! <run>/data/<unix_ms>-<worker>-<seq>-<counts>.h5  finished chunks (written atomically;
//!                                             names: [`crate::ChunkName`])
//! <run>/data/.<name>.<host>.<pid>-<n>.tmp     chunk being written (ignored by readers)
//! <run>/checkpoints/gen-<G>-step-<S>.json     checkpoint metadata (vzero-model; written last)
//! <run>/checkpoints/gen-<G>-step-<S>.safetensors
//! <run>/plots/                                loss curves
//! <run>/metrics.csv                           training metrics
//! ```
//!
//! A run may also live on object storage (`s3://bucket/prefix`, see [`crate::remote`]): the
//! same layout as keys under the prefix, worked on through a local cache. [`RunDir`]'s paths
//! then point into that cache, and its methods upload what is written ([`RunDir::write_chunk`],
//! [`RunDir::publish`], [`RunDir::publish_new`]) and download what is read
//! ([`RunDir::list_chunks`], [`RunDir::latest_checkpoint`], [`RunDir::fetch_checkpoint`]). On a
//! local run those are plain file operations (the uploads are no-ops).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::error::{io_err, DataError, Result};
use vzero_base::clock::unix_ms;
use vzero_base::host::{hostname, process_gone};
use crate::remote::{is_remote_spec, Remote, StorageOptions};
use crate::chunk::write_chunk_scored;
use crate::name::{ChunkCounts, ChunkName};
use crate::rows::{ChunkMeta, GameRecord, Row, ScoredPosition};

/// A temporary file older than this is removed by [`RunDir::clean_tmp`] even if its writer
/// may be alive on another host.
pub const TMP_MAX_AGE: Duration = Duration::from_secs(3600);

static CHUNK_SEQ: AtomicU64 = AtomicU64::new(0);

/// A run: the directory (or object-storage prefix) that self-play, training and the arena
/// share. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
    remote: Option<Arc<Remote>>,
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
    Some((crate::name::decimal(g)?, crate::name::decimal(s)?))
}

fn sanitize(s: &str) -> String {
    let s: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() {
        "w".into()
    } else {
        s
    }
}

impl RunDir {
    /// Opens the run at `path`, a local directory (created with its sub-directories if
    /// needed) or an `s3://bucket/prefix` URL (settings from the environment; see
    /// [`RunDir::open_with`]).
    pub fn create_or_open(path: impl AsRef<Path>) -> Result<RunDir> {
        RunDir::open_with(path, &StorageOptions::default())
    }

    /// [`RunDir::create_or_open`] with object-storage settings (endpoint, region, cache) that
    /// take precedence over the environment's.
    pub fn open_with(path: impl AsRef<Path>, opts: &StorageOptions) -> Result<RunDir> {
        let path = path.as_ref();
        let run = if is_remote_spec(path) {
            let url = path.to_str().unwrap_or_default();
            let remote = Remote::open(url, opts)?;
            RunDir { root: remote.private_root().to_path_buf(), remote: Some(remote) }
        } else {
            RunDir { root: path.to_path_buf(), remote: None }
        };
        for d in [run.root.clone(), run.data_dir(), run.checkpoints_dir(), run.plots_dir()] {
            fs::create_dir_all(&d).map_err(io_err(&d))?;
        }
        Ok(run)
    }

    /// Opens an existing run to read it, creating nothing in it (what `vzero status`, `check`
    /// and `openings` use): a local directory must exist (an error names it otherwise); an
    /// `s3://` run is opened as by [`RunDir::create_or_open`] (only this process's local
    /// working copy is written, outside the run).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<RunDir> {
        let path = path.as_ref();
        if is_remote_spec(path) {
            return RunDir::create_or_open(path);
        }
        if !path.is_dir() {
            return Err(DataError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "run directory does not exist"),
            });
        }
        Ok(RunDir { root: path.to_path_buf(), remote: None })
    }

    /// The local directory of the run (for an object-storage run: this process's working copy
    /// of its small files; use [`RunDir::location`] to name the run).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run as users name it: its directory, or its `s3://` URL.
    pub fn location(&self) -> String {
        match &self.remote {
            Some(r) => r.url().to_string(),
            None => self.root.display().to_string(),
        }
    }

    /// Names of the run's files that a reader must never see as data: temporary files (a
    /// partial upload, a rename that did not happen). On object storage every object of the
    /// run is listed; on disk `data/` and `checkpoints/`, where the hidden `.*.tmp` files of
    /// live or killed writers are expected (readers ignore them), so only visible ones count.
    pub fn stray_files(&self) -> Result<Vec<String>> {
        let bad = |name: &str| {
            let base = name.rsplit('/').next().unwrap_or(name);
            base.ends_with(".tmp") || base.ends_with(".part")
        };
        if let Some(r) = &self.remote {
            return Ok(r.list_all()?.into_iter().filter(|n| bad(n)).map(|n| format!("{}/{n}", r.url())).collect());
        }
        let mut out = Vec::new();
        for dir in [self.data_dir(), self.checkpoints_dir()] {
            let Ok(rd) = fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if !name.starts_with('.') && bad(&name) {
                    out.push(self.describe(&e.path()));
                }
            }
        }
        Ok(out)
    }

    /// The object-storage side of the run, if it is on object storage.
    pub(crate) fn remote(&self) -> Option<&Arc<Remote>> {
        self.remote.as_ref()
    }

    /// True for a run on object storage.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// How a file of the run is named to users: its path, or its URL on object storage.
    pub fn describe(&self, local: &Path) -> String {
        match self.remote.as_ref().and_then(|r| r.relative(local)) {
            Some(rel) => format!("{}/{rel}", self.location()),
            None => local.display().to_string(),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        match &self.remote {
            Some(r) => r.local_dir("data"),
            None => self.root.join("data"),
        }
    }

    pub fn checkpoints_dir(&self) -> PathBuf {
        match &self.remote {
            Some(r) => r.local_dir("checkpoints"),
            None => self.root.join("checkpoints"),
        }
    }

    /// Where retired chunks are archived (`[learn] retention = "archive"`).
    pub fn archive_dir(&self) -> PathBuf {
        match &self.remote {
            Some(r) => r.local_dir("archive").join("data"),
            None => self.root.join("archive").join("data"),
        }
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
        self.new_chunk_path_counted(worker, None)
    }

    /// [`RunDir::new_chunk_path`] whose name also says what the chunk holds ([`ChunkCounts`]),
    /// so that it can be counted from a listing ([`RunDir::list_chunk_names`]).
    pub fn new_chunk_path_counted(&self, worker: &str, counts: Option<ChunkCounts>) -> PathBuf {
        let worker = sanitize(worker);
        loop {
            let seq = CHUNK_SEQ.fetch_add(1, Ordering::Relaxed);
            let p = self.data_dir().join(ChunkName { unix_ms: unix_ms() as u64, worker: worker.clone(), seq, counts }.file_name());
            if !p.exists() {
                return p;
            }
        }
    }

    /// The variant of the run's stored config (`config.toml`), if it has one.
    pub fn stored_variant(&self) -> Result<Option<String>> {
        let stored = self.root.join("config.toml");
        let text = match fs::read_to_string(&stored) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(DataError::Io { path: stored, source: e }),
        };
        let value: toml::Value = toml::from_str(&text).map_err(|e| DataError::Config(format!("{}: {}", self.describe(&stored), vzero_rules::toml_error::describe_toml_error(&text, &e))))?;
        Ok(value.get("variant").and_then(|v| v.as_str()).map(str::to_string))
    }

    /// Names (not hidden, sorted) of the files ending in `suffix` in the run's sub-directory
    /// `rel` (e.g. `nnue`): listed on the store for an object-storage run; none when missing.
    pub fn list_files(&self, rel: &str, suffix: &str) -> Result<Vec<String>> {
        self.list_names(rel, &self.root.join(rel), suffix)
    }

    /// Names (not hidden) of the files ending in `suffix` in the run's sub-directory `rel`,
    /// whose local directory is `local`, sorted: listed on the store for an object-storage
    /// run. A missing directory has none.
    pub(crate) fn list_names(&self, rel: &str, local: &Path, suffix: &str) -> Result<Vec<String>> {
        if let Some(r) = &self.remote {
            return Ok(r.list(rel)?.into_iter().filter(|n| n.ends_with(suffix)).collect());
        }
        let rd = match fs::read_dir(local) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(local)(e)),
        };
        let mut v: Vec<String> = rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(suffix) && !n.starts_with('.')).collect();
        v.sort();
        Ok(v)
    }

    /// The variant of the run's data: that of its oldest readable chunk (self-play, imported
    /// or labelled rows), with that chunk's name; `None` for a run without chunks. On object
    /// storage only that chunk is downloaded.
    pub fn data_variant(&self) -> Result<Option<(String, String)>> {
        for name in self.list_names("data", &self.data_dir(), ".h5")? {
            let p = self.data_dir().join(&name);
            if let Some(r) = &self.remote {
                if !r.fetch(&p, false)? {
                    continue;
                }
            }
            if let Ok(c) = crate::Chunk::open(&p) {
                return Ok(Some((c.meta.variant.clone(), self.describe(&p))));
            }
        }
        Ok(None)
    }

    /// Fails when the run's stored config names another variant than `config_variant` (the
    /// config's `variant` entry, a name or a definition file), or when the run's data
    /// ([`RunDir::data_variant`]) is of another variant than `name` (that variant's name):
    /// rows or networks of another variant would be refused later anyway, after the command
    /// had changed the run.
    pub fn check_variant_of(&self, config_variant: &str, name: &str) -> Result<()> {
        if let Some(v) = self.stored_variant()? {
            if v != config_variant {
                return Err(DataError::Config(format!("run {} holds variant '{v}' (its config.toml), not '{config_variant}'", self.location())));
            }
        }
        if let Some((v, chunk)) = self.data_variant()? {
            if v != name {
                return Err(DataError::Config(format!("run {} holds variant '{v}' (its data, e.g. {chunk}), not '{name}'", self.location())));
            }
        }
        Ok(())
    }

    /// [`RunDir::check_variant_of`] for a built-in variant (its name is its config entry).
    pub fn check_variant(&self, variant: &str) -> Result<()> {
        self.check_variant_of(variant, variant)
    }

    /// Writes one chunk ([`write_chunk`]) under a new name ([`RunDir::new_chunk_path`]) and
    /// publishes it: renamed into `data/` on disk, or uploaded with a single create-only PUT on
    /// object storage. Returns the local path.
    pub fn write_chunk(&self, worker: &str, meta: &ChunkMeta, rows: &[Row], games: &[GameRecord]) -> Result<PathBuf> {
        self.write_chunk_scored(worker, meta, rows, games, &[])
    }

    /// [`RunDir::write_chunk`] with positions' raw teacher scores ([`crate::write_chunk_scored`]).
    pub fn write_chunk_scored(&self, worker: &str, meta: &ChunkMeta, rows: &[Row], games: &[GameRecord], scored: &[ScoredPosition]) -> Result<PathBuf> {
        let counts = ChunkCounts { source: meta.source, games: games.len() as u64, rows: rows.len() as u64 };
        let path = self.new_chunk_path_counted(worker, Some(counts));
        write_chunk_scored(&path, meta, rows, games, scored)?;
        if let Err(e) = self.publish_new(&path) {
            let _ = fs::remove_file(&path);
            return Err(e);
        }
        Ok(path)
    }

    /// Publishes a finished file of the run that never changes (chunk, checkpoint file): on
    /// object storage, one PUT that fails if the object exists already. No-op on disk (files
    /// there are published by their atomic rename).
    pub fn publish_new(&self, local: &Path) -> Result<()> {
        match &self.remote {
            Some(r) => r.publish(local, true),
            None => Ok(()),
        }
    }

    /// Publishes the new content of a file of the run that changes (metrics, plots, config,
    /// arena files): on object storage, one PUT replacing the object. No-op on disk.
    pub fn publish(&self, local: &Path) -> Result<()> {
        match &self.remote {
            Some(r) => r.publish(local, false),
            None => Ok(()),
        }
    }

    /// Publishes a checkpoint saved locally as `<stem>.safetensors` + `<stem>.json`: the weights
    /// first, the metadata (which makes it a checkpoint) last. On disk the files are already
    /// published by their atomic renames. On object storage both are created once; a weights
    /// object left without metadata by a process killed between the two PUTs is an orphan,
    /// not a checkpoint, and is replaced (only the run's one learner, which holds the run's
    /// lease, publishes checkpoints). A published checkpoint (its metadata exists) is never
    /// overwritten: publishing it again fails with "already published".
    pub fn publish_checkpoint(&self, stem: &Path) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        let (weights, meta) = (stem.with_extension("safetensors"), stem.with_extension("json"));
        match r.publish(&weights, true) {
            Ok(()) => {}
            Err(DataError::Store { msg }) if msg.contains("already published") => {
                if r.exists(&meta)? {
                    return Err(DataError::Store { msg });
                }
                r.publish(&weights, false)?;
            }
            Err(e) => return Err(e),
        }
        r.publish(&meta, true)
    }

    /// Removes a file of the run that is no longer wanted (an old NNUE checkpoint): the local
    /// file and, on object storage, its object. Missing: fine.
    pub fn remove_file(&self, local: &Path) -> Result<()> {
        if let Some(r) = &self.remote {
            r.delete(local)?;
        }
        match fs::remove_file(local) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(local)(e)),
        }
    }

    /// Makes a file of the run present at `local` (a path under [`RunDir::root`]): on object
    /// storage, downloads the object into the cache (`refresh`: even when a copy is there).
    /// Returns whether the file exists. On disk: whether it exists.
    pub fn fetch(&self, local: &Path, refresh: bool) -> Result<bool> {
        match &self.remote {
            Some(r) => r.fetch(local, refresh),
            None => Ok(local.exists()),
        }
    }

    /// Makes a listed checkpoint's files (metadata and weights) present locally: downloads them
    /// into the cache on object storage. Fails naming the checkpoint if they do not exist.
    pub fn fetch_checkpoint(&self, meta_json: &Path) -> Result<()> {
        let Some(r) = &self.remote else { return Ok(()) };
        for p in [meta_json.with_extension("safetensors"), meta_json.to_path_buf()] {
            if !r.fetch(&p, false)? {
                return Err(DataError::Store { msg: format!("{}: no such object", self.describe(&p)) });
            }
        }
        Ok(())
    }

    /// Retires a chunk that left the window: moved to [`RunDir::archive_dir`] (`archive`) or
    /// deleted. Returns false if it was gone already (another learner retired it).
    pub fn retire_chunk(&self, path: &Path, archive: bool) -> Result<bool> {
        let to = self.archive_dir().join(path.file_name().unwrap_or_default());
        if archive {
            fs::create_dir_all(self.archive_dir()).map_err(io_err(self.archive_dir()))?;
        }
        if let Some(r) = &self.remote {
            if !r.fetch(path, false)? {
                return Ok(false);
            }
            if archive {
                fs::rename(path, &to).map_err(io_err(path))?;
                match r.publish(&to, true) {
                    Ok(()) => {}
                    Err(DataError::Store { msg }) if msg.contains("already published") => {}
                    Err(e) => return Err(e),
                }
            } else {
                let _ = fs::remove_file(path);
            }
            r.delete(path)?;
            return Ok(true);
        }
        let r = if archive { fs::rename(path, &to) } else { fs::remove_file(path) };
        match r {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(DataError::Io { path: path.to_path_buf(), source: err }),
        }
    }

    /// The file names of the finished chunks (`*.h5`, not hidden), oldest first, from a
    /// listing alone: nothing is downloaded from object storage. [`ChunkName::parse`] reads
    /// what the names say.
    pub fn list_chunk_names(&self) -> Result<Vec<String>> {
        self.list_names("data", &self.data_dir(), ".h5")
    }

    /// Finished chunks (`*.h5`, not hidden), oldest first (by name = creation time). On object
    /// storage, the chunks not cached yet are downloaded first.
    pub fn list_chunks(&self) -> Result<Vec<PathBuf>> {
        let dir = self.data_dir();
        if let Some(r) = &self.remote {
            let mut out = Vec::new();
            for name in r.list("data")?.into_iter().filter(|n| n.ends_with(".h5")) {
                let p = dir.join(name);
                // gone between the listing and the download: retired by the learner
                if r.fetch(&p, false)? {
                    out.push(p);
                }
            }
            return Ok(out);
        }
        let mut out = Vec::new();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            // a run opened read-only before its first chunk
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(io_err(&dir)(e)),
        };
        for e in rd {
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
                    Some(p) => p != me && process_gone(&hostname(), p),
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
    /// On object storage the entries' files are not downloaded ([`RunDir::fetch_checkpoint`]).
    pub fn list_checkpoints(&self) -> Result<Vec<CheckpointEntry>> {
        let dir = self.checkpoints_dir();
        let mut out = Vec::new();
        for name in self.list_names("checkpoints", &dir, ".json")? {
            let Some(stem) = name.strip_suffix(".json") else { continue };
            let Some((generation, step)) = parse_checkpoint_name(stem) else { continue };
            out.push(CheckpointEntry { generation, step, path: dir.join(&name) });
        }
        out.sort_by_key(|c| (c.step, c.generation));
        Ok(out)
    }

    /// The newest checkpoint by training step (then generation): its metadata `.json` path.
    /// Entries whose metadata does not parse as JSON with a `step` are skipped.
    pub fn latest_checkpoint(&self) -> Result<Option<PathBuf>> {
        Ok(self.latest_checkpoint_entry()?.map(|c| c.path))
    }

    /// The newest checkpoint ([`RunDir::latest_checkpoint`]); on object storage its files are
    /// downloaded.
    pub fn latest_checkpoint_entry(&self) -> Result<Option<CheckpointEntry>> {
        for c in self.list_checkpoints()?.into_iter().rev() {
            if self.remote.is_some() && self.fetch_checkpoint(&c.path).is_err() {
                continue;
            }
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
