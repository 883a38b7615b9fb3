//! The run's `nnue/` folder: the trainer lease (one NNUE trainer per run), training checkpoints
//! (`ckpt-<step>.vzck`, the two newest kept), `metrics.csv` with its plot `loss.svg`, each
//! published to the store of an object-storage run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use vzero_data::lease::{DEFAULT_TTL, NNUE_LEASE_NAME};
use vzero_data::{Lease, RunDir};
use vzero_nnue::checkpoint;

/// Training checkpoints kept in `nnue/`.
pub(crate) const KEEP_CHECKPOINTS: usize = 2;

/// The columns of `nnue/metrics.csv`.
pub const METRICS_HEADER: &str = "step,positions,train_loss,validation_loss,lr,positions_per_s";

/// Takes the run's NNUE trainer lease for `command`: one NNUE trainer per run (beside the run's
/// one learner), refused naming the holder, taken over when stale.
pub fn nnue_lease(run: &RunDir, command: &str) -> Result<Lease> {
    Ok(Lease::acquire_named(run, NNUE_LEASE_NAME, "NNUE trainer", command, DEFAULT_TTL)?)
}

/// The newest training checkpoint of the run (on object storage: listed on the store and
/// downloaded into the cache), if any.
pub(crate) fn latest_checkpoint(run: &RunDir) -> Result<Option<PathBuf>> {
    let dir = nnue_dir(run);
    if run.is_remote() {
        let names = run.list_files("nnue", ".vzck")?;
        if let Some(newest) = names.iter().filter(|n| n.starts_with("ckpt-")).max() {
            run.fetch(&dir.join(newest), false)?;
        }
    }
    Ok(checkpoint::latest(&dir)?)
}

/// Keeps the metrics rows up to `step` (a resumed trainer writes the later steps again, so
/// that the steps of `metrics.csv` strictly increase); on object storage the run's copy is
/// read first.
pub(crate) fn trim_metrics(run: &RunDir, path: &Path, step: u64) -> Result<()> {
    run.fetch(path, true)?;
    trim_metrics_local(path, step)
}

/// [`trim_metrics`] of the local file alone.
pub(crate) fn trim_metrics_local(path: &Path, step: u64) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
    let keep: Vec<&str> = text.lines().enumerate().filter(|(i, l)| *i == 0 || l.split(',').next().and_then(|s| s.parse::<u64>().ok()).is_some_and(|s| s <= step)).map(|(_, l)| l).collect();
    if keep.len() < text.lines().count() {
        vzero_base::write_atomic(path, (keep.join("\n") + "\n").as_bytes())?;
    }
    Ok(())
}

/// Draws `nnue/loss.svg` (training and validation loss against the step) from `metrics.csv`.
pub(crate) fn draw_loss_plot(metrics: &Path, plot: &Path) -> Result<()> {
    let text = std::fs::read_to_string(metrics).with_context(|| format!("reading {}", metrics.display()))?;
    let (mut train, mut val) = (Vec::new(), Vec::new());
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (Some(step), Some(t)) = (f.first().and_then(|s| s.parse::<f64>().ok()), f.get(2).and_then(|s| s.parse::<f64>().ok())) else { continue };
        train.push((step, t));
        if let Some(v) = f.get(3).and_then(|s| s.parse::<f64>().ok()) {
            val.push((step, v));
        }
    }
    Ok(vzero_data::metrics::draw_lines(plot, "NNUE training loss", "step", "loss", &[("training", train), ("validation", val)])?)
}

/// The `nnue/` directory of a run.
pub fn nnue_dir(run: &RunDir) -> PathBuf {
    run.root().join("nnue")
}

/// Saves a checkpoint (atomically), publishes it once, then removes all but the newest
/// [`KEEP_CHECKPOINTS`] (files and objects).
pub(crate) fn save_checkpoint(run: &RunDir, dir: &Path, c: &checkpoint::CheckpointRef<'_>) -> Result<PathBuf> {
    let path = dir.join(checkpoint::file_name(c.trainer.step));
    checkpoint::save_ref(&path, c)?;
    run.publish_new(&path)?;
    let all = checkpoint::list(dir)?;
    for (_, old) in all.iter().rev().skip(KEEP_CHECKPOINTS) {
        run.remove_file(old)?;
    }
    Ok(path)
}

