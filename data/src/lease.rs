//! The learner lease of a run: at most one learner trains and publishes checkpoints in a run
//! at a time, on disk and on object storage. Self-play processes take no lease.
//!
//! The lease is a small JSON record ([`Holder`]: host, pid, command, since when, last renewal)
//! at `<run>/learner.lock`:
//! - **on disk** a file created exclusively (`O_EXCL`); renewed by an atomic rewrite;
//! - **on object storage** an object created with create-if-absent (`If-None-Match: *`) and
//!   renewed with a conditional PUT on its ETag (`If-Match`), so a holder that lost its lease
//!   finds out at its next renewal instead of overwriting the new holder's record.
//!
//! A holder renews every [`Lease::ttl`]`/ 4` from a thread of its own and removes the record when
//! dropped. A record is **stale**, and taken over by the next learner, when its process is gone
//! (same host, no such pid: a SIGKILLed learner is replaced at once) or when it was last renewed
//! more than its TTL ago (a holder on another machine that died or lost the network; this
//! compares the holder's clock with the taker's, so hosts' clocks must agree to well within the
//! TTL). Takeover is atomic: on disk it is serialised by a second exclusive file
//! (`learner.lock.takeover`), on object storage by the conditional PUT on the stale record's
//! ETag — of two takers, one wins and the other is refused naming the winner.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{io_err, DataError, Result};
use crate::remote::{Remote, Write};
use crate::periodic::Periodic;
use vzero_base::clock::now_unix;
use vzero_base::host::{hostname, process_gone};

use crate::rundir::RunDir;

/// Name of the lease record in the run (a file, or an object under the run's prefix).
pub const LEASE_NAME: &str = "learner.lock";

/// Name of the NNUE trainer's lease record (`vzero nnue train` / `loop`): one NNUE trainer per
/// run, beside the run's one learner.
pub const NNUE_LEASE_NAME: &str = "nnue/trainer.lock";

/// Default time after its last renewal at which a lease is stale.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

/// How long an unfinished takeover (its file) blocks other takers before it counts as abandoned.
const TAKEOVER_TIMEOUT: Duration = Duration::from_secs(30);

/// Who holds a lease: what the lease record says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Host name of the holding process.
    pub host: String,
    /// Its process id on that host.
    pub pid: u32,
    /// What it runs (e.g. `vzero learn`).
    pub command: String,
    /// Unix seconds when it took the lease.
    pub since: u64,
    /// Unix seconds of its last renewal.
    pub renewed: u64,
    /// Seconds after `renewed` at which the lease is stale.
    pub ttl_s: u64,
    /// Unique per acquisition (tells two holders with the same host and pid apart).
    pub token: String,
}

/// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339, UTC) of unix seconds `t` (for messages).
pub fn utc_time(t: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(t)).to_string()
}

impl Holder {
    /// Why this record no longer holds the run, if it does not: its process is gone (same
    /// host) or its last renewal is older than its TTL.
    pub fn stale_reason(&self, now: u64) -> Option<String> {
        if process_gone(&self.host, self.pid) {
            return Some(format!("process {} on {} is gone", self.pid, self.host));
        }
        let age = now.saturating_sub(self.renewed);
        (age > self.ttl_s).then(|| format!("last renewed {age} s ago, over its {} s lease", self.ttl_s))
    }

    /// `host H, pid P (command), since T, renewed N s ago`.
    pub fn describe(&self, now: u64) -> String {
        format!(
            "host {}, pid {} ({}), since {}, renewed {} s ago",
            self.host,
            self.pid,
            self.command,
            utc_time(self.since),
            now.saturating_sub(self.renewed)
        )
    }
}

/// Where the record lives.
enum Store {
    Disk(PathBuf),
    Object(Arc<Remote>),
}

struct Shared {
    store: Store,
    /// The record's run-relative name ([`LEASE_NAME`], [`NNUE_LEASE_NAME`]).
    name: &'static str,
    /// What holds it, in messages ("learner", "NNUE trainer").
    role: &'static str,
    location: String,
    holder: Mutex<Holder>,
    /// ETag of our record on object storage.
    etag: Mutex<Option<String>>,
    /// Set when a renewal found the record gone or another holder's.
    lost: Mutex<Option<String>>,
    released: AtomicBool,
}

/// A held lease; renewed in the background, released when dropped.
pub struct Lease {
    shared: Arc<Shared>,
    renewer: Option<Periodic>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("run", &self.shared.location).field("holder", &self.holder()).finish()
    }
}

/// A refusal: the run is held by a live holder.
fn held_err(location: &str, role: &str, h: &Holder) -> DataError {
    let now = now_unix();
    DataError::Busy {
        msg: format!(
            "run {location} has {} {role} already: {}; stop it first, or wait until its lease expires ({} s after its last renewal)",
            if role.starts_with(['a', 'e', 'i', 'o', 'u', 'N']) { "an" } else { "a" },
            h.describe(now),
            h.ttl_s
        ),
    }
}

fn parse_holder(bytes: &[u8], what: &str) -> Result<Holder> {
    serde_json::from_slice(bytes).map_err(|e| DataError::Store { msg: format!("{what}: not a lease record: {e}") })
}

fn token() -> String {
    let t = vzero_base::clock::unix_ns();
    format!("{:x}-{:x}", t, std::process::id())
}

impl Lease {
    /// Takes the run's learner lease for `command`, taking over a stale one; fails with
    /// [`DataError::Busy`] naming the holder (host, pid, command, since when) when a live
    /// process holds it. `ttl`: how long after its last renewal the lease counts as abandoned.
    pub fn acquire(run: &RunDir, command: &str, ttl: Duration) -> Result<Lease> {
        Lease::acquire_named(run, LEASE_NAME, "learner", command, ttl)
    }

    /// [`Lease::acquire`] of the record `name` (run-relative, e.g. [`NNUE_LEASE_NAME`]) for a
    /// `role` named in refusals: one holder of that role per run.
    pub fn acquire_named(run: &RunDir, name: &'static str, role: &'static str, command: &str, ttl: Duration) -> Result<Lease> {
        let ttl_s = ttl.as_secs().max(2);
        let now = now_unix();
        let holder = Holder { host: hostname(), pid: std::process::id(), command: command.to_string(), since: now, renewed: now, ttl_s, token: token() };
        let store = match run.remote() {
            Some(r) => Store::Object(r.clone()),
            None => {
                let path = run.root().join(name);
                if let Some(dir) = path.parent() {
                    fs::create_dir_all(dir).map_err(io_err(dir))?;
                }
                Store::Disk(path)
            }
        };
        let shared = Arc::new(Shared {
            store,
            name,
            role,
            location: run.location(),
            holder: Mutex::new(holder),
            etag: Mutex::new(None),
            lost: Mutex::new(None),
            released: AtomicBool::new(false),
        });
        match &shared.store {
            Store::Disk(path) => acquire_disk(&shared, path)?,
            Store::Object(r) => acquire_object(&shared, r)?,
        }
        let s = shared.clone();
        let period = Duration::from_secs(ttl_s).div_f64(4.0);
        // A failed renewal (store unreachable for a moment) is retried at the next period; the
        // lease only goes to another learner once it is older than its TTL.
        let renewer = Periodic::start("lease", period, move || {
            let _ = renew_once(&s);
        })
        .map_err(|e| DataError::Store { msg: format!("starting the lease renewal thread: {e}") })?;
        Ok(Lease { shared, renewer: Some(renewer) })
    }

    /// The record of this lease.
    pub fn holder(&self) -> Holder {
        self.shared.holder.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The lease's TTL.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.holder().ttl_s)
    }

    /// Ok while this process holds the lease; an error naming the new holder once a renewal
    /// found that another process took the run over (e.g. after this one was paused for longer
    /// than the TTL). A learner calls it before each publication.
    pub fn check(&self) -> Result<()> {
        match &*self.shared.lost.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(why) => Err(DataError::Busy { msg: format!("lost the {} lease of run {}: {why}", self.shared.role, self.shared.location) }),
            None => Ok(()),
        }
    }

    /// Renews the lease now (the background thread does so every TTL / 4).
    pub fn renew(&self) -> Result<()> {
        renew_once(&self.shared)?;
        self.check()
    }

    /// Releases the lease now (also done on drop).
    pub fn release(mut self) -> Result<()> {
        self.stop_renewer();
        release(&self.shared)
    }

    fn stop_renewer(&mut self) {
        if let Some(mut r) = self.renewer.take() {
            r.stop();
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop_renewer();
        let _ = release(&self.shared);
    }
}

/// The current learner lease record of `run`, if any (for `vzero status`).
pub fn read_holder(run: &RunDir) -> Result<Option<Holder>> {
    read_holder_named(run, LEASE_NAME)
}

/// The current record of the lease `name` of `run`, if any.
pub fn read_holder_named(run: &RunDir, name: &str) -> Result<Option<Holder>> {
    match run.remote() {
        Some(r) => match r.read_object(name)? {
            Some((bytes, _)) => parse_holder(&bytes, &format!("{}/{name}", r.url())).map(Some),
            None => Ok(None),
        },
        None => {
            let path = run.root().join(name);
            match fs::read(&path) {
                Ok(b) => parse_holder(&b, &path.display().to_string()).map(Some),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_err(&path)(e)),
            }
        }
    }
}

fn holder_json(h: &Holder) -> Vec<u8> {
    serde_json::to_vec_pretty(h).unwrap_or_default()
}

fn create_exclusive(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    let res = f.write_all(bytes).and_then(|_| f.sync_all());
    if res.is_err() {
        let _ = fs::remove_file(path);
    }
    res
}

/// Reads the disk record; an unreadable or half-written one (a holder killed while creating
/// it) counts as stale with a fake holder of age "forever".
fn read_disk(path: &Path) -> Result<Option<Holder>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(parse_holder(&b, &path.display().to_string()).unwrap_or(Holder {
            host: "?".into(),
            pid: 0,
            command: "unreadable lease record".into(),
            since: 0,
            renewed: 0,
            ttl_s: 0,
            token: String::new(),
        }))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(path)(e)),
    }
}

fn acquire_disk(shared: &Shared, path: &Path) -> Result<()> {
    let held_err = |loc: &str, h: &Holder| held_err(loc, shared.role, h);
    let mine = shared.holder.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let bytes = holder_json(&mine);
    for _ in 0..50 {
        match create_exclusive(path, &bytes) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_err(path)(e)),
        }
        let Some(theirs) = read_disk(path)? else { continue };
        if theirs.stale_reason(now_unix()).is_none() {
            return Err(held_err(&shared.location, &theirs));
        }
        // Stale: take it over, one taker at a time.
        let takeover = path.with_extension("lock.takeover");
        match create_exclusive(&takeover, &bytes) {
            Ok(()) => {
                let res = (|| -> Result<bool> {
                    // Still the same stale record? (Another taker may have finished meanwhile.)
                    match read_disk(path)? {
                        Some(now) if now == theirs => {
                            vzero_base::write_atomic(path, &bytes)?;
                            Ok(true)
                        }
                        _ => Ok(false),
                    }
                })();
                let _ = fs::remove_file(&takeover);
                if res? {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let abandoned = fs::metadata(&takeover)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > TAKEOVER_TIMEOUT);
                if abandoned {
                    let _ = fs::remove_file(&takeover);
                } else {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            Err(e) => return Err(io_err(&takeover)(e)),
        }
    }
    Err(DataError::Busy { msg: format!("run {}: could not take the {} lease {} (it keeps changing hands)", shared.location, shared.role, path.display()) })
}

fn acquire_object(shared: &Shared, r: &Remote) -> Result<()> {
    let held_err = |loc: &str, h: &Holder| held_err(loc, shared.role, h);
    let mine = shared.holder.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let bytes = holder_json(&mine);
    for _ in 0..20 {
        if let Some(etag) = r.write_object(shared.name, bytes.clone(), Write::Create)? {
            *shared.etag.lock().unwrap_or_else(|e| e.into_inner()) = etag;
            return Ok(());
        }
        let Some((theirs_bytes, etag)) = r.read_object(shared.name)? else { continue };
        let theirs = parse_holder(&theirs_bytes, &format!("{}/{}", r.url(), shared.name)).ok();
        if let Some(t) = &theirs {
            if t.stale_reason(now_unix()).is_none() {
                return Err(held_err(&shared.location, t));
            }
        }
        let how = match etag {
            Some(e) => Write::Replace(e),
            None => return Err(DataError::Store { msg: format!("{}/{}: the store gives no ETag, so a stale lease cannot be taken over safely", r.url(), shared.name) }),
        };
        if let Some(etag) = r.write_object(shared.name, bytes.clone(), how)? {
            *shared.etag.lock().unwrap_or_else(|e| e.into_inner()) = etag;
            return Ok(());
        }
        // Another taker won the race: look again (it is live now, so the next round refuses).
    }
    Err(DataError::Busy { msg: format!("run {}: could not take the {} lease (it keeps changing hands)", shared.location, shared.role) })
}

fn set_lost(shared: &Shared, why: String) {
    *shared.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
}

fn renew_once(shared: &Shared) -> Result<()> {
    if shared.lost.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
        return Ok(());
    }
    let mut h = shared.holder.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let now = now_unix();
    match &shared.store {
        Store::Disk(path) => match read_disk(path)? {
            Some(cur) if cur.token == h.token => {
                h.renewed = now;
                vzero_base::write_atomic(path, &holder_json(&h))?;
            }
            Some(cur) => return Ok(set_lost(shared, format!("the lease is now held by {}", cur.describe(now)))),
            None => return Ok(set_lost(shared, format!("{} was removed", path.display()))),
        },
        Store::Object(r) => {
            let etag = shared.etag.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let Some(etag) = etag else { return Ok(()) };
            h.renewed = now;
            match r.write_object(shared.name, holder_json(&h), Write::Replace(etag))? {
                Some(new) => *shared.etag.lock().unwrap_or_else(|e| e.into_inner()) = new,
                None => {
                    let who = match r.read_object(shared.name)? {
                        Some((b, _)) => match parse_holder(&b, shared.name) {
                            Ok(cur) => format!("the lease is now held by {}", cur.describe(now)),
                            Err(e) => e.to_string(),
                        },
                        None => format!("{}/{} was removed", r.url(), shared.name),
                    };
                    return Ok(set_lost(shared, who));
                }
            }
        }
    }
    *shared.holder.lock().unwrap_or_else(|e| e.into_inner()) = h;
    Ok(())
}

/// Removes the record if it is still ours.
fn release(shared: &Shared) -> Result<()> {
    if shared.released.swap(true, Ordering::SeqCst) || shared.lost.lock().unwrap_or_else(|e| e.into_inner()).is_some() {
        return Ok(());
    }
    let token = shared.holder.lock().unwrap_or_else(|e| e.into_inner()).token.clone();
    match &shared.store {
        Store::Disk(path) => {
            if read_disk(path)?.is_some_and(|h| h.token == token) {
                fs::remove_file(path).map_err(io_err(path))?;
            }
        }
        Store::Object(r) => {
            if let Some((b, _)) = r.read_object(shared.name)? {
                if parse_holder(&b, shared.name).is_ok_and(|h| h.token == token) {
                    r.delete_object(shared.name)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> (tempfile::TempDir, RunDir) {
        let d = tempfile::tempdir().unwrap();
        let r = RunDir::create_or_open(d.path().join("run")).unwrap();
        (d, r)
    }

    #[test]
    fn a_second_learner_is_refused_naming_the_holder() {
        let (_d, run) = run();
        let a = Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
        let e = Lease::acquire(&run, "vzero train", DEFAULT_TTL).unwrap_err();
        assert!(matches!(e, DataError::Busy { .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("pid {}", std::process::id())) && msg.contains("vzero learn") && msg.contains("since") && msg.contains(&hostname()), "{msg}");
        assert_eq!(read_holder(&run).unwrap().unwrap(), a.holder());
        drop(a);
        assert!(read_holder(&run).unwrap().is_none(), "released on drop");
        let b = Lease::acquire(&run, "vzero train", DEFAULT_TTL).unwrap();
        b.check().unwrap();
    }

    #[test]
    fn stale_records_are_taken_over() {
        let (_d, run) = run();
        let path = run.root().join(LEASE_NAME);
        let now = now_unix();
        // A process of this host that is gone (pid far above pid_max), renewed just now.
        let gone = Holder { host: hostname(), pid: 4_000_000_000, command: "vzero learn".into(), since: now, renewed: now, ttl_s: 60, token: "x".into() };
        assert!(gone.stale_reason(now).unwrap().contains("gone"));
        fs::write(&path, holder_json(&gone)).unwrap();
        let l = Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
        assert_eq!(read_holder(&run).unwrap().unwrap().pid, std::process::id());
        drop(l);
        // Another host's record, renewed long ago: expired.
        let old = Holder { host: "elsewhere".into(), pid: 1, command: "vzero learn".into(), since: now - 500, renewed: now - 300, ttl_s: 60, token: "y".into() };
        assert!(old.stale_reason(now).unwrap().contains("300 s ago"));
        fs::write(&path, holder_json(&old)).unwrap();
        Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
        // Another host's live record: refused.
        let live = Holder { renewed: now, token: "z".into(), ..old };
        fs::write(&path, holder_json(&live)).unwrap();
        let e = Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap_err().to_string();
        assert!(e.contains("host elsewhere, pid 1"), "{e}");
        // A half-written record (killed while creating it) counts as stale.
        fs::write(&path, b"{\"host\": \"ab").unwrap();
        Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
    }

    #[test]
    fn a_holder_that_was_taken_over_finds_out() {
        let (_d, run) = run();
        let a = Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
        a.renew().unwrap();
        let mut h = a.holder();
        h.token = "someone else".into();
        h.host = "elsewhere".into();
        vzero_base::write_atomic(&run.root().join(LEASE_NAME), &holder_json(&h)).unwrap();
        let e = a.renew().unwrap_err().to_string();
        assert!(e.contains("lost the learner lease") && e.contains("host elsewhere"), "{e}");
        drop(a);
        assert_eq!(read_holder(&run).unwrap().unwrap().host, "elsewhere", "a lost lease is not removed on drop");
    }

    #[test]
    fn the_nnue_trainer_s_lease_is_its_own() {
        let (_d, run) = run();
        let learner = Lease::acquire(&run, "vzero learn", DEFAULT_TTL).unwrap();
        let a = Lease::acquire_named(&run, NNUE_LEASE_NAME, "NNUE trainer", "vzero nnue train", DEFAULT_TTL).unwrap();
        let e = Lease::acquire_named(&run, NNUE_LEASE_NAME, "NNUE trainer", "vzero nnue loop", DEFAULT_TTL).unwrap_err().to_string();
        assert!(e.contains("has an NNUE trainer already") && e.contains("vzero nnue train"), "{e}");
        assert_eq!(read_holder_named(&run, NNUE_LEASE_NAME).unwrap().unwrap(), a.holder());
        assert_eq!(read_holder(&run).unwrap().unwrap(), learner.holder());
        drop(a);
        assert!(read_holder_named(&run, NNUE_LEASE_NAME).unwrap().is_none());
        assert!(read_holder(&run).unwrap().is_some());
    }

    #[test]
    fn times_print_as_utc() {
        assert_eq!(utc_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_time(1_796_190_462), "2026-12-02T05:47:42Z");
    }
}
