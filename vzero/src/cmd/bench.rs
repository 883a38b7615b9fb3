//! `vzero bench`: speed measurements printed as medians and ratios.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::time::Instant;
use vzero_rules::{Position, Variant};

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft nodes per second, single thread, with and without bulk counting.
    Perft(PerftBench),
}

/// Options of `vzero bench perft`.
#[derive(Args, Debug)]
pub struct PerftBench {
    /// Timed runs per case; the median is reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Directory of the Fairy-Stockfish oracle (perft positions).
    #[arg(long, default_value = "../shared/oracle")]
    oracle: PathBuf,
    /// Depth for the start positions.
    #[arg(long, default_value_t = 5)]
    depth: u32,
}

/// Fairy-Stockfish's single-core perft speed on this machine kind, as quoted in issue 2 (M nodes/s).
const FSF_MNPS: f64 = 14.0;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs `f` `runs` times; returns (nodes, median nodes per second).
fn measure(runs: usize, mut f: impl FnMut() -> u64) -> (u64, f64) {
    let mut rates = Vec::new();
    let mut nodes = 0;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        nodes = f();
        rates.push(nodes as f64 / t.elapsed().as_secs_f64().max(1e-9));
    }
    (nodes, median(rates))
}

/// Oracle positions of `variant` with the largest depth of at most `max_nodes` nodes.
fn oracle_positions(dir: &Path, variant: &str, max_nodes: u64) -> Result<Vec<(String, u32)>> {
    let path = dir.join(format!("{variant}-perft.csv"));
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut best: Vec<(String, u32)> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 3 {
            continue;
        }
        let (depth, nodes): (u32, u64) = (f[1].parse()?, f[2].parse()?);
        if nodes > max_nodes {
            continue;
        }
        match best.iter_mut().find(|(fen, _)| fen == f[0]) {
            Some(e) => e.1 = e.1.max(depth),
            None => best.push((f[0].to_string(), depth)),
        }
    }
    Ok(best)
}

fn perft(b: PerftBench) -> Result<()> {
    println!("perft, single thread, median of {} runs; reference: Fairy-Stockfish {FSF_MNPS} M nodes/s (bulk counting)", b.runs);
    println!("{:<28} {:>12} {:>10} {:>10} {:>8} {:>8}", "case", "nodes", "bulk Mn/s", "full Mn/s", "bulk/ful", "vs FSF");
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name)?;
        let mut cases: Vec<(String, Vec<(String, u32)>)> = vec![(format!("{name} start d{}", b.depth), vec![(v.start_fen().to_string(), b.depth)])];
        if let Ok(list) = oracle_positions(&b.oracle, name, 2_000_000) {
            cases.push((format!("{name} oracle ({})", list.len()), list));
        }
        for (label, positions) in cases {
            let positions: Vec<(Position, u32)> =
                positions.iter().map(|(fen, d)| Ok((Position::from_fen(v, fen)?, *d))).collect::<Result<_>>()?;
            let (nodes, bulk) = measure(b.runs, || positions.iter().map(|(p, d)| p.perft(*d)).sum());
            let (_, full) = measure(b.runs, || positions.iter().map(|(p, d)| p.perft_unbulked(*d)).sum());
            println!(
                "{label:<28} {nodes:>12} {:>10.2} {:>10.2} {:>8.2} {:>8.2}",
                bulk / 1e6,
                full / 1e6,
                bulk / full,
                bulk / 1e6 / FSF_MNPS
            );
        }
    }
    Ok(())
}

pub fn run(b: BenchCommand) -> Result<()> {
    match b {
        BenchCommand::Perft(p) => perft(p),
    }
}
