//! Resumable jobs: a job writes its rows in numbered batches, one chunk per batch, whose file
//! name carries the job's id and the batch number (`…-<kind>_<id>_b<batch>-….h5`, through
//! [`RunDir::new_chunk_path`]'s worker field). Chunks are written atomically, so a batch is
//! either there whole or not at all, and a rerun skips the batches that are there.

use std::collections::HashSet;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use anyhow::Result;
use vzero_data::{decimal, ChunkName, RunDir};

/// A stable 64-bit hash of `parts` for job ids ([`vzero_base::hash::fnv1a64_parts`]: the same in
/// every build, unlike `std`'s hasher).
pub(crate) use vzero_base::hash::fnv1a64_parts as fnv1a;

/// The worker name of batch `batch` of job `id` of `kind` (`import`, `label`).
pub(crate) fn worker_name(kind: &str, id: u64, batch: usize) -> String {
    format!("{kind}_{id:016x}_b{batch:06}")
}

/// The batches of job `id` of `kind` whose chunks are in `run`: read from each chunk name's
/// worker field ([`ChunkName::parse`]), which must be exactly a [`worker_name`] of this job.
pub(crate) fn done_batches(run: &RunDir, kind: &str, id: u64) -> Result<HashSet<usize>> {
    let prefix = format!("{kind}_{id:016x}_b");
    let mut done = HashSet::new();
    for name in run.list_chunk_names()? {
        let Some(chunk) = ChunkName::parse(&name) else { continue };
        if let Some(b) = chunk.worker.strip_prefix(&prefix).and_then(decimal) {
            done.insert(b as usize);
        }
    }
    Ok(done)
}

/// Runs `work(t, failed)` on `threads` scoped threads (`t` = 0..threads). The first error is
/// returned once all have stopped; the others see `failed` set and should stop early.
pub(crate) fn run_workers(threads: usize, work: impl Fn(usize, &AtomicBool) -> Result<()> + Sync) -> Result<()> {
    let failed = AtomicBool::new(false);
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (work, failed, error) = (&work, &failed, &error);
            scope.spawn(move || {
                if let Err(e) = work(t, failed) {
                    failed.store(true, Ordering::Relaxed);
                    error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                }
            });
        }
    });
    match error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable_and_separates_parts() {
        assert_eq!(fnv1a(&[b"a"]), fnv1a(&[b"a"]));
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(worker_name("label", 0xab, 7), "label_00000000000000ab_b000007");
    }

    #[test]
    fn done_batches_come_from_chunk_names() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(dir.path()).unwrap();
        for b in [0, 3] {
            let p = run.new_chunk_path(&worker_name("label", 42, b));
            std::fs::write(&p, b"x").unwrap();
        }
        std::fs::write(run.new_chunk_path(&worker_name("label", 43, 1)), b"x").unwrap();
        std::fs::write(run.new_chunk_path(&worker_name("import", 42, 2)), b"x").unwrap();
        // a worker that only starts like this job's, and a name that is not a chunk name
        std::fs::write(run.new_chunk_path(&format!("{}x", worker_name("label", 42, 5))), b"x").unwrap();
        std::fs::write(run.new_chunk_path(&format!("x{}", worker_name("label", 42, 6))), b"x").unwrap();
        let done = done_batches(&run, "label", 42).unwrap();
        assert_eq!(done, HashSet::from([0, 3]));
    }
}
