//! Writing output files: atomically (a temporary file in the same directory, then a rename), so a
//! reader never sees half a file and an interrupted run leaves the old one.

use std::path::Path;

use anyhow::Result;

/// Writes `text` to `path` atomically ([`vzero_base::write_atomic`]), creating its parent
/// directory first (as `init` does). Errors name the path once.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    create_parent(path)?;
    Ok(vzero_base::write_atomic(path, text.as_bytes())?)
}

/// Creates the directory that will hold `path`, if it has one and it is missing.
pub fn create_parent(path: &Path) -> Result<()> {
    vzero_base::file::create_parent(path).map_err(|e| anyhow::anyhow!("creating the directory {}: {}", e.path.display(), e.source))
}
