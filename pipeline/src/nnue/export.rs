//! `vzero nnue export`: a training checkpoint quantised into Fairy-Stockfish's `.nnue` format.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use vzero_data::RunDir;
use vzero_nnue::{checkpoint, format, FsfMapping};
use vzero_rules::Variant;

use super::files::{latest_checkpoint, nnue_dir};

/// Quantises the newest checkpoint of `run` (or the checkpoint file `net`) into a .nnue file at
/// `out` (a directory: `<variant>-<first 12 hex of its sha256>.nnue` in it). Returns the path
/// written and the net's description.
pub fn export_nnue(run: Option<&RunDir>, net: Option<&Path>, out: &Path) -> Result<(PathBuf, String)> {
    let path = match (net, run) {
        (Some(p), _) => p.to_path_buf(),
        (None, Some(run)) => {
            latest_checkpoint(run)?.with_context(|| format!("{}: no checkpoint in {} (run vzero nnue train first)", run.location(), run.describe(&nnue_dir(run))))?
        }
        (None, None) => bail!("pass a run or a checkpoint"),
    };
    let c = checkpoint::load(&path)?;
    let m = FsfMapping::for_variant(Variant::load(&c.variant)?)?;
    if c.trainer.net.dimensions() != m.dimensions() {
        bail!("{}: {} features, but variant '{}' has {}", path.display(), c.trainer.net.dimensions(), m.name(), m.dimensions());
    }
    let description = format!("vzero nnue: {}, {} positions seen, {} steps; targets {}", m.name(), c.trainer.positions, c.trainer.step, c.targets);
    let quantised = c.trainer.net.quantize(&description)?;
    let bytes = format::encode(&quantised);
    let file = if out.is_dir() || out.to_string_lossy().ends_with('/') {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        out.join(checkpoint::net_file_name(m.name(), &bytes))
    } else {
        out.to_path_buf()
    };
    format::write_file(&file, &quantised)?;
    Ok((file, description))
}

