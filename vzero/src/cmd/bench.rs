//! `vzero bench`: speed measurements printed as medians and ratios.

use anyhow::Result;
use clap::Subcommand;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Perft nodes per second, single thread.
    Perft,
}

pub fn run(b: BenchCommand) -> Result<()> {
    match b {
        BenchCommand::Perft => Ok(()),
    }
}
