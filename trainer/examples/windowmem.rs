//! Replay-window memory on a large synthetic run (issue 14: at most 1/8 of the unpacked bytes
//! per row).
//!
//! `cargo run --release -p vzero-trainer --example windowmem -- [rows=1000000] [variant=empire] [run dir]`
//!
//! Writes `rows` synthetic rows (chunks of 1000) into the run directory (kept when given, so
//! `vzero learn` can be measured on it too), opens a replay window that covers them all,
//! samples until every chunk is cached, and prints the process's resident memory before and
//! after, per row, against the unpacked f32 size of a row's planes.

use vzero_data::{write_chunk, ChunkExpect, ReplayWindow, RunDir, WindowConfig};
use vzero_rules::Variant;
use vzero_trainer::synth::{synth_meta, synth_rows};

/// Resident memory of this process in bytes (Linux `/proc/self/status`).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(0, |kb| kb * 1024)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(1_000_000);
    let variant = Variant::builtin(args.get(1).map(|s| s.as_str()).unwrap_or("empire"))?;
    let tmp = tempfile::tempdir()?;
    let path = args.get(2).map(std::path::PathBuf::from).unwrap_or_else(|| tmp.path().to_path_buf());
    let run = RunDir::create_or_open(&path)?;
    let meta = synth_meta(variant, "synth");
    let existing: usize = run.list_chunks()?.len() * 1000;
    let t = std::time::Instant::now();
    for k in existing / 1000..rows.div_ceil(1000) {
        write_chunk(&run.new_chunk_path("synth"), &meta, &synth_rows(variant, 1000, k as u64), &[])?;
    }
    eprintln!("chunks ready in {:.0} s: {}", t.elapsed().as_secs_f64(), path.display());
    let expect = ChunkExpect { variant: variant.name().into(), encoding_version: meta.encoding_version, planes: Some(meta.planes), policy_size: Some(meta.policy_size) };
    let mut w = ReplayWindow::new(&run, expect, WindowConfig { min_rows: rows, scale: 1.0, exponent: 1.0 }, 1)?;
    w.refresh()?;
    let before = rss();
    // batches of 4096 rows touch every chunk of a 1M-row window within a few hundred samples
    let mut out = vzero_data::RowBlock::default();
    for _ in 0..(rows / 1000 * 4).max(8) {
        w.sample_into(4096, &mut out)?;
    }
    let after = rss();
    let n = w.window_rows() as f64;
    let unpacked = (meta.plane_len() * 4) as f64;
    let per_row = (after.saturating_sub(before)) as f64 / n;
    println!(
        "{}: window {} rows in {} chunks; resident {:.0} MiB -> {:.0} MiB: {:.0} bytes per row held (planes unpacked would be {:.0} bytes alone: {:.1}x)",
        variant.name(),
        w.window_rows(),
        w.num_chunks(),
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        per_row,
        unpacked,
        unpacked / per_row.max(1.0)
    );
    Ok(())
}
