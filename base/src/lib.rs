//! The one implementation of each low-level habit that every vzero crate calls, below all of
//! them (it depends on no other vzero crate):
//!
//! - [`file`]: atomic writes (temporary file beside the target, fsync, rename, fsync of the
//!   directory), so a run killed at any moment leaves the old file or the new one;
//! - [`host`]: this host's name and whether a process of it is gone (leases, heartbeats and
//!   temporary-file names carry both);
//! - [`clock`]: Unix time in seconds and milliseconds, and calendar dates;
//! - [`hash`]: FNV-1a, a hash that is the same in every build (checksums, job ids).

pub mod clock;
pub mod file;
pub mod hash;
pub mod host;

pub use clock::{now_unix, unix_ms};
pub use file::{read_if_exists, write_atomic, FileError};
pub use hash::fnv1a64;
pub use host::hostname;
