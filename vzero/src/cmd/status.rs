//! `vzero status` and `vzero check`: what a run holds, who works on it, and whether its
//! invariants hold.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use vzero_pipeline::{RunCheck, RunStatus};

/// Arguments of `vzero status` and `vzero check`.
#[derive(Args, Debug, Clone)]
pub struct StatusArgs {
    /// Run directory or `s3://bucket/prefix`.
    #[arg(long)]
    pub run: PathBuf,
}

/// Prints the run's newest network, data, recent rates, last gauntlet, learner and processes.
pub fn status(a: StatusArgs) -> Result<()> {
    for line in RunStatus::read(&a.run)?.lines() {
        println!("{line}");
    }
    Ok(())
}

/// Checks the run's invariants; prints the counts, then each problem; fails if there is one.
pub fn check(a: StatusArgs) -> Result<()> {
    let c = RunCheck::run(&a.run)?;
    for p in &c.problems {
        println!("problem: {p}");
    }
    if !c.ok() {
        bail!("run {}: {} problems ({})", c.location, c.problems.len(), c.counts());
    }
    println!("ok: {}: {}", c.location, c.counts());
    Ok(())
}
