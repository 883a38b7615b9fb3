//! Writing output files: atomically (a temporary file in the same directory, then a rename), so a
//! reader never sees half a file and an interrupted run leaves the old one.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `text` to `path` atomically.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    vzero_model::checkpoint::write_atomic(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}
