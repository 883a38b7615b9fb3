//! Writing output files: atomically (a temporary file in the same directory, then a rename), so a
//! reader never sees half a file and an interrupted run leaves the old one.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `text` to `path` atomically, creating its parent directory first (as `init` does).
/// Errors name the path once.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    create_parent(path)?;
    Ok(vzero_model::checkpoint::write_atomic(path, text.as_bytes())?)
}

/// Creates the directory that will hold `path`, if it has one and it is missing.
pub fn create_parent(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating the directory {}", dir.display()))?;
    }
    Ok(())
}
