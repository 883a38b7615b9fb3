//! A run on object storage: `s3://bucket/prefix` (AWS S3 or any S3-compatible server, through
//! the `object_store` crate), worked on through a local cache.
//!
//! The keys are the run directory's relative paths under the prefix (`data/<chunk>.h5`,
//! `checkpoints/gen-…json`, `metrics.csv`, …), so a run can be copied between a disk and a
//! bucket as it is. Two kinds of object:
//! - **immutable** ones (chunks, checkpoints, archived chunks): created once with
//!   `If-None-Match: *` ([`PutMode::Create`]); a second publication of the same name fails, so
//!   a checkpoint is published at most once. They are cached by name in a directory that the
//!   processes of a host share (`<cache>/s3/<bucket>/<prefix>/`), downloaded on first use.
//! - **mutable** ones (config.toml, metrics.csv, data/retired-rows, plots, arena files), small
//!   and each written by one process: downloaded into a private directory of the process when
//!   the run is opened and uploaded whole after every change.
//!
//! Every object is written with a single PUT of the finished file, so a reader never sees a
//! partial object, and a process killed mid-upload leaves nothing behind.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};

use crate::error::{io_err, DataError, Result};

/// Where an object-storage run's settings come from besides the URL. Each field left `None`
/// falls back to the environment that the AWS tools use (`AWS_ENDPOINT` or
/// `AWS_ENDPOINT_URL_S3`, `AWS_REGION`, `AWS_ALLOW_HTTP`, `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`). Credentials are read from the environment
/// only, never from a config file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageOptions {
    /// Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:9000` (default: AWS).
    pub endpoint: Option<String>,
    /// Region (default: `AWS_REGION`, else `us-east-1`).
    pub region: Option<String>,
    /// Allow plain `http://` endpoints (default: `AWS_ALLOW_HTTP`, else false).
    pub allow_http: Option<bool>,
    /// Local cache directory (default: `VZERO_CACHE`, else `$XDG_CACHE_HOME/vzero`, else
    /// `~/.cache/vzero`).
    pub cache_dir: Option<PathBuf>,
    /// Seconds after which a request that got no answer is abandoned and retried (default:
    /// `VZERO_S3_TIMEOUT_S`, else 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

/// True when `spec` names an object-storage run (`s3://…`) rather than a local directory.
pub fn is_remote_spec(spec: &Path) -> bool {
    spec.to_str().is_some_and(|s| s.contains("://"))
}

/// The object-storage side of a run; shared (behind an `Arc`) by the clones of a
/// [`crate::RunDir`]. Dropping the last one removes this process's private directory.
pub struct Remote {
    url: String,
    store: AmazonS3,
    prefix: String,
    rt: tokio::runtime::Runtime,
    shared: PathBuf,
    private: PathBuf,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).field("shared", &self.shared).field("private", &self.private).finish()
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.private);
    }
}

static PRIVATE_SEQ: AtomicU64 = AtomicU64::new(0);

/// Sub-directories of a run whose objects never change once published (cached by name, shared).
const IMMUTABLE_DIRS: [&str; 3] = ["data", "checkpoints", "archive"];

/// How long a create-if-absent upload is retried after errors that the client does not retry
/// itself (a timeout: the PUT may or may not have happened).
const CREATE_RETRY_FOR: Duration = Duration::from_secs(240);

/// Objects that processes read and write directly on the store, never through the cache:
/// the learner's lease and the processes' heartbeats (see `crate::lease`, `crate::heartbeat`).
const COORDINATION: [&str; 2] = ["learner.lock", "heartbeats"];

/// Files of the immutable directories that do change (each written by one process).
const MUTABLE_IN_DATA: [&str; 1] = ["data/retired-rows"];

fn store_err(url: &str, what: &str) -> impl FnOnce(object_store::Error) -> DataError {
    let msg = format!("{url}: {what}");
    move |e| DataError::Store { msg: format!("{msg}: {e}") }
}

fn default_cache() -> PathBuf {
    if let Some(d) = std::env::var_os("VZERO_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("vzero");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("vzero"),
        None => std::env::temp_dir().join("vzero-cache"),
    }
}

impl Remote {
    /// Connects to the run at `url` (`s3://bucket[/prefix]`), prepares the cache and downloads
    /// the run's mutable files into a new private directory. Fails with the URL named if the
    /// URL is malformed or the server cannot be listed.
    pub fn open(url: &str, opts: &StorageOptions) -> Result<Arc<Remote>> {
        let bad = |why: &str| DataError::Store { msg: format!("{url}: {why}") };
        let rest = url.strip_prefix("s3://").ok_or_else(|| bad("unsupported URL scheme (runs live in a local directory or at s3://bucket/prefix)"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_matches('/').to_string();
        if bucket.is_empty() || !bucket.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_') {
            return Err(bad("no valid bucket name after s3://"));
        }
        if prefix.split('/').any(|p| p == "." || p == "..") || prefix.contains("//") {
            return Err(bad("the prefix may not contain empty, '.' or '..' parts"));
        }
        // A run lasts hours: ride out a store that answers errors (503 Slow Down, a restart)
        // for a minute or two instead of stopping after the client's default ~10 s of retries.
        let retry = object_store::RetryConfig {
            backoff: object_store::BackoffConfig { init_backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(15), base: 2.0 },
            max_retries: 40,
            retry_timeout: Duration::from_secs(240),
        };
        let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket).with_conditional_put(S3ConditionalPut::ETagMatch).with_retry(retry);
        if let Some(e) = &opts.endpoint {
            b = b.with_endpoint(e);
        }
        if let Some(r) = &opts.region {
            b = b.with_region(r);
        }
        if let Some(h) = opts.allow_http {
            b = b.with_allow_http(h);
        }
        let timeout = match opts.timeout_s {
            Some(t) => Some(t),
            None => match std::env::var("VZERO_S3_TIMEOUT_S") {
                Ok(v) => Some(v.trim().parse::<u64>().map_err(|_| bad(&format!("VZERO_S3_TIMEOUT_S={v:?} is not a whole number of seconds")))?),
                Err(_) => None,
            },
        };
        if let Some(t) = timeout {
            if t == 0 {
                return Err(bad("the request timeout must be at least 1 second"));
            }
            b = b.with_config(object_store::aws::AmazonS3ConfigKey::Client(object_store::ClientConfigKey::Timeout), format!("{t}s"));
        }
        let store = b.build().map_err(store_err(url, "configuring the object store"))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| DataError::Store { msg: format!("{url}: starting the I/O runtime: {e}") })?;
        let cache = opts.cache_dir.clone().unwrap_or_else(default_cache);
        let mut shared = cache.join("s3").join(bucket);
        if !prefix.is_empty() {
            shared = shared.join(&prefix);
        }
        let procs = cache.join("proc");
        clean_dead_private_dirs(&procs);
        let private = procs.join(format!("{}-{}-{}", vzero_base::hostname(), std::process::id(), PRIVATE_SEQ.fetch_add(1, Ordering::Relaxed)));
        for d in [&shared, &private] {
            fs::create_dir_all(d).map_err(io_err(d))?;
        }
        let remote = Remote { url: url.trim_end_matches('/').to_string(), store, prefix, rt, shared, private };
        remote.pull_mutable()?;
        Ok(Arc::new(remote))
    }

    /// The run's URL (`s3://bucket/prefix`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The local directory standing for the run: the private directory, with `data/`,
    /// `checkpoints/` and `archive/` in the shared cache ([`Remote::local_dir`]).
    pub fn private_root(&self) -> &Path {
        &self.private
    }

    /// Local directory of the run's sub-directory `dir` (shared cache for immutable ones).
    pub fn local_dir(&self, dir: &str) -> PathBuf {
        if IMMUTABLE_DIRS.contains(&dir) {
            self.shared.join(dir)
        } else {
            self.private.join(dir)
        }
    }

    fn key(&self, rel: &str) -> Key {
        if self.prefix.is_empty() {
            Key::from(rel)
        } else {
            Key::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// The run-relative name (`data/x.h5`) of a local path of this run, if it is one.
    pub fn relative(&self, local: &Path) -> Option<String> {
        let top_is_immutable = |r: &Path| r.components().next().and_then(|c| c.as_os_str().to_str()).is_some_and(|c| IMMUTABLE_DIRS.contains(&c));
        let rel = local.strip_prefix(&self.shared).ok().filter(|r| top_is_immutable(r));
        let rel = rel.or_else(|| local.strip_prefix(&self.private).ok())?;
        let s = rel.to_str()?.replace('\\', "/");
        (!s.is_empty()).then_some(s)
    }

    fn local_of(&self, rel: &str) -> PathBuf {
        let top = rel.split('/').next().unwrap_or("");
        if IMMUTABLE_DIRS.contains(&top) {
            self.shared.join(rel)
        } else {
            self.private.join(rel)
        }
    }

    fn rel_of_local(&self, local: &Path) -> Result<String> {
        self.relative(local).ok_or_else(|| DataError::Store { msg: format!("{}: {} is not a file of this run's cache", self.url, local.display()) })
    }

    /// Uploads the finished local file `local` (a path of this run) with one PUT. `create`:
    /// only if no object of that name exists yet (a second publication fails, naming it).
    pub fn publish(&self, local: &Path, create: bool) -> Result<()> {
        let rel = self.rel_of_local(local)?;
        let bytes = fs::read(local).map_err(io_err(local))?;
        let key = self.key(&rel);
        if !create {
            // (the client retries an overwrite itself, also after a timeout)
            let res = self.rt.block_on(self.store.put_opts(&key, PutPayload::from(bytes), PutOptions { mode: PutMode::Overwrite, ..Default::default() }));
            return res.map(|_| ()).map_err(store_err(&self.url, &format!("uploading {rel}")));
        }
        let already = || DataError::Store { msg: format!("{}/{rel}: already published (objects of this kind are written once)", self.url) };
        // A create-if-absent PUT that times out (a paused or overloaded store) may or may not
        // have happened, so the client does not retry it: retry it here, and when the retry
        // finds the object, it is ours if it holds exactly these bytes.
        let deadline = std::time::Instant::now() + CREATE_RETRY_FOR;
        let mut wait = Duration::from_millis(500);
        let mut tried = false;
        loop {
            let res = self.rt.block_on(self.store.put_opts(&key, PutPayload::from(bytes.clone()), PutOptions { mode: PutMode::Create, ..Default::default() }));
            match res {
                Ok(_) => return Ok(()),
                Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => {
                    let ours = tried && self.read_object(&rel).ok().flatten().is_some_and(|(b, _)| b == bytes);
                    return if ours { Ok(()) } else { Err(already()) };
                }
                Err(e @ (object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } | object_store::Error::NotFound { .. })) => {
                    return Err(store_err(&self.url, &format!("uploading {rel}"))(e))
                }
                Err(e) if std::time::Instant::now() + wait > deadline => return Err(store_err(&self.url, &format!("uploading {rel}"))(e)),
                Err(_) => {
                    tried = true;
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(15));
                }
            }
        }
    }

    /// Whether the object of local path `local` exists on the store (one HEAD request).
    pub fn exists(&self, local: &Path) -> Result<bool> {
        let rel = self.rel_of_local(local)?;
        match self.rt.block_on(self.store.head(&self.key(&rel))) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(store_err(&self.url, &format!("looking up {rel}"))(e)),
        }
    }

    /// Reads the object `rel` (a run-relative name such as `learner.lock`): its bytes and ETag,
    /// or `None` when there is no such object. For small coordination objects (leases,
    /// heartbeats) that are not cached.
    pub fn read_object(&self, rel: &str) -> Result<Option<(Vec<u8>, Option<String>)>> {
        let key = self.key(rel);
        let got = self.rt.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => {
                    let etag = r.meta.e_tag.clone();
                    r.bytes().await.map(|b| Some((b.to_vec(), etag)))
                }
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map_err(store_err(&self.url, &format!("reading {rel}")))
    }

    /// Writes the object `rel` with one PUT: `Write::Create` only if it does not exist,
    /// `Write::Replace(etag)` only if it is still the version with that ETag, `Write::Overwrite`
    /// unconditionally. Returns the new ETag, or `None` when the condition failed.
    pub fn write_object(&self, rel: &str, bytes: Vec<u8>, how: Write) -> Result<Option<Option<String>>> {
        let mode = match how {
            Write::Create => PutMode::Create,
            Write::Replace(e_tag) => PutMode::Update(object_store::UpdateVersion { e_tag: Some(e_tag), version: None }),
            Write::Overwrite => PutMode::Overwrite,
        };
        let res = self.rt.block_on(self.store.put_opts(&self.key(rel), PutPayload::from(bytes), PutOptions { mode, ..Default::default() }));
        match res {
            Ok(r) => Ok(Some(r.e_tag)),
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) | Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(store_err(&self.url, &format!("writing {rel}"))(e)),
        }
    }

    /// Removes the object `rel` (missing: fine).
    pub fn delete_object(&self, rel: &str) -> Result<()> {
        match self.rt.block_on(self.store.delete(&self.key(rel))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_err(&self.url, &format!("deleting {rel}"))(e)),
        }
    }

    /// Removes the object of local path `local` (missing: fine).
    pub fn delete(&self, local: &Path) -> Result<()> {
        let rel = self.rel_of_local(local)?;
        match self.rt.block_on(self.store.delete(&self.key(&rel))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_err(&self.url, &format!("deleting {rel}"))(e)),
        }
    }

    /// Downloads the object of local path `local` into it, atomically, unless it is cached
    /// already (`refresh`: download anyway). Returns false when there is no such object.
    pub fn fetch(&self, local: &Path, refresh: bool) -> Result<bool> {
        if !refresh && local.exists() {
            return Ok(true);
        }
        let rel = self.rel_of_local(local)?;
        self.download(&rel, local)
    }

    fn download(&self, rel: &str, local: &Path) -> Result<bool> {
        let key = self.key(rel);
        let bytes = self.rt.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let Some(bytes) = bytes.map_err(store_err(&self.url, &format!("downloading {rel}")))? else { return Ok(false) };
        if let Some(dir) = local.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        vzero_base::write_atomic(local, &bytes)?;
        Ok(true)
    }

    /// Names (file names, not hidden) of the objects directly in the run's sub-directory `dir`.
    pub fn list(&self, dir: &str) -> Result<Vec<String>> {
        let prefix = self.key(dir);
        let metas: Vec<object_store::ObjectMeta> =
            self.rt.block_on(self.store.list(Some(&prefix)).try_collect()).map_err(store_err(&self.url, &format!("listing {dir}/")))?;
        let pfx: &str = prefix.as_ref();
        let mut out: Vec<String> = metas
            .iter()
            .filter_map(|m| {
                let full: &str = m.location.as_ref();
                let rest = full.strip_prefix(pfx)?.strip_prefix('/')?;
                (!rest.contains('/') && !rest.starts_with('.')).then(|| rest.to_string())
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Every object of the run, as run-relative names (for run checks).
    pub fn list_all(&self) -> Result<Vec<String>> {
        let root = if self.prefix.is_empty() { None } else { Some(Key::from(self.prefix.as_str())) };
        let metas: Vec<object_store::ObjectMeta> =
            self.rt.block_on(self.store.list(root.as_ref()).try_collect()).map_err(store_err(&self.url, "listing the run"))?;
        let pfx = root.as_ref().map(|r| format!("{}/", AsRef::<str>::as_ref(r))).unwrap_or_default();
        let mut out: Vec<String> = metas.iter().filter_map(|m| AsRef::<str>::as_ref(&m.location).strip_prefix(pfx.as_str()).map(str::to_string)).collect();
        out.sort();
        Ok(out)
    }

    /// Downloads every mutable file of the run into the private directory (and
    /// `data/retired-rows` into the shared one).
    fn pull_mutable(&self) -> Result<()> {
        let root = if self.prefix.is_empty() { None } else { Some(Key::from(self.prefix.as_str())) };
        let metas: Vec<object_store::ObjectMeta> =
            self.rt.block_on(self.store.list(root.as_ref()).try_collect()).map_err(store_err(&self.url, "listing the run"))?;
        for m in metas {
            let full: &str = m.location.as_ref();
            let rel = match &root {
                Some(r) => match full.strip_prefix(AsRef::<str>::as_ref(r)).and_then(|s| s.strip_prefix('/')) {
                    Some(s) => s,
                    None => continue,
                },
                None => full,
            };
            let top = rel.split('/').next().unwrap_or("");
            if (IMMUTABLE_DIRS.contains(&top) && !MUTABLE_IN_DATA.contains(&rel)) || COORDINATION.contains(&top) {
                continue;
            }
            let local = self.local_of(rel);
            self.download(rel, &local)?;
        }
        Ok(())
    }
}

/// How [`Remote::write_object`] writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// Only if no object of that name exists (`If-None-Match: *`).
    Create,
    /// Only if the object is still the version with this ETag (`If-Match`).
    Replace(String),
    /// Unconditionally.
    Overwrite,
}

/// Removes the private directories of processes of this host that no longer run.
fn clean_dead_private_dirs(procs: &Path) {
    let Ok(rd) = fs::read_dir(procs) else { return };
    let host = vzero_base::hostname();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&format!("{host}-")) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && vzero_base::host::process_gone(&host, pid) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_before_any_connection() {
        let o = StorageOptions::default();
        for (url, why) in [
            ("gs://b/p", "unsupported URL scheme"),
            ("s3://", "no valid bucket"),
            ("s3://b c/p", "no valid bucket"),
            ("s3://b/x/../y", "'..'"),
        ] {
            let e = Remote::open(url, &o).unwrap_err().to_string();
            assert!(e.contains(url) && e.contains(why), "{url}: {e}");
        }
        assert!(is_remote_spec(Path::new("s3://b/p")) && !is_remote_spec(Path::new("runs/x")));
    }
}
