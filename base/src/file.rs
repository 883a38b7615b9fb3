//! Atomic file writes: the data goes to a temporary file beside the target
//! (`.<name>.<host>.<pid>-<n>.tmp`, never listed by readers of `*.h5`, `*.json`, `*.csv`), which
//! is fsynced and renamed over the target; then the directory is fsynced so the rename survives
//! a crash. A reader sees the old file or the new one, never a mix; a writer killed at any moment
//! leaves at most a temporary file, which `RunDir::clean_tmp` recognises by its host and pid.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::host::hostname;

/// An I/O failure on a named file (the target of a write, its temporary file or directory).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", .path.display())]
pub struct FileError {
    /// The file the operation was on.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: io::Error,
}

fn at(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
    move |source| FileError { path: path.to_path_buf(), source }
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary file to write `path` through: `.<name>.<host>.<pid>-<n>.tmp` in the same
/// directory (so the rename stays on one filesystem), unique within this process.
pub fn tmp_path_for(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.{}.{}-{n}.tmp", hostname(), std::process::id()))
}

/// Makes the finished temporary file `tmp` durable and renames it to `path`, then makes the
/// rename durable (a filesystem that refuses to fsync a directory is tolerated). For writers
/// that must write the temporary file themselves (HDF5); others call [`write_atomic`].
pub fn commit(tmp: &Path, path: &Path) -> Result<(), FileError> {
    fs::File::open(tmp).and_then(|f| f.sync_all()).map_err(at(tmp))?;
    fs::rename(tmp, path).map_err(at(path))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (see the module documentation). The parent directory
/// must exist ([`create_parent`] makes it).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// Like [`write_atomic`] for a writer that streams: `write` fills the temporary file.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut io::BufWriter<fs::File>) -> io::Result<()>) -> Result<(), FileError> {
    let tmp = tmp_path_for(path);
    let res = (|| {
        let mut w = io::BufWriter::new(fs::File::create(&tmp).map_err(at(&tmp))?);
        write(&mut w).and_then(|_| w.flush()).map_err(at(&tmp))?;
        drop(w);
        commit(&tmp, path)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// The text of a file that may not exist yet (a run's CSV before its first row): `None` when it
/// is missing, an error naming it when it cannot be read.
pub fn read_if_exists(path: &Path) -> Result<Option<String>, FileError> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(at(path)(e)),
    }
}

/// Creates the directory that will hold `path`, if it has one and it is missing.
pub fn create_parent(path: &Path) -> Result<(), FileError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => fs::create_dir_all(dir).map_err(at(dir)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("vzero-base-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_whole_files_and_leaves_no_temporary() {
        let d = scratch("replace");
        let p = d.join("a.json");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second, longer").unwrap();
        write_atomic_with(&p, |w| w.write_all(b"third")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"third");
        assert_eq!(names(&d), ["a.json"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_cleans_up() {
        let d = scratch("fail");
        let p = d.join("metrics.csv");
        write_atomic(&p, b"old").unwrap();
        let e = write_atomic_with(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full") && e.to_string().contains(".tmp"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(names(&d), ["metrics.csv"]);
        let missing = d.join("no/such/dir/x");
        let e = write_atomic(&missing, b"x").unwrap_err();
        assert!(e.to_string().contains("no/such/dir"), "{e}");
        create_parent(&missing).unwrap();
        write_atomic(&missing, b"x").unwrap();
    }

    #[test]
    fn temporary_names_carry_host_and_pid_and_are_unique() {
        let p = Path::new("/r/data/x.h5");
        let (a, b) = (tmp_path_for(p), tmp_path_for(p));
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".x.h5.") && name.ends_with(".tmp"), "{name}");
        assert!(name.contains(&format!(".{}.{}-", hostname(), std::process::id())), "{name}");
        assert_eq!(a.parent(), p.parent());
    }
}
