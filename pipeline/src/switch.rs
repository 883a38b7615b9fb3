//! The measured switch of the knowledge blend (`[switch]` of a run's config).
//!
//! The blend (capture prior, material value; [`vzero_mcts::Knowledge`]) carries a young
//! network, and the config anneals it away over `anneal_steps`, which on a 2-core machine is a
//! day: for the first hours the learned policy is not used in play even when it has become the
//! better one. The switch measures instead of waiting: every `every` generations, `vzero train`
//! plays a small match of the newest checkpoint with one part of its blend switched off (the
//! prior first, then the value) against the same checkpoint with its recorded blend, and when
//! the network alone scores at least `min_score` (default 55%), that part is released: every later
//! checkpoint records its weight as 0 ([`vzero_mcts::BlendRelease`]), so self-play and every
//! player of those checkpoints use the learned policy (or value) from then on. Each check is a
//! row of `arena/switch.csv`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use vzero_arena::{run_match, MatchStats, NetOptions, PairedGames, PlayerSpec};
use vzero_data::RunDir;
use vzero_mcts::{BlendPart, Knowledge};
use vzero_base::write_atomic;
use vzero_rules::Variant;

/// `[switch]`: when and how the blend's parts are tested against the network alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Generations between checks (0: never; the blend only anneals).
    #[serde(default)]
    pub every: u64,
    /// Games per check (colour-swapped pairs from random openings).
    #[serde(default = "default_games")]
    pub games: u32,
    /// Score (points / games) of the network alone that releases the part.
    #[serde(default = "default_min_score")]
    pub min_score: f64,
    /// Simulations per move of both sides.
    #[serde(default = "default_sims")]
    pub sims: u32,
    /// Games longer than this (opening included) are adjudicated draws.
    #[serde(default = "default_max_plies")]
    pub max_plies: u32,
    /// Random plies of each pair's opening.
    #[serde(default = "default_opening_plies")]
    pub opening_plies: u32,
    /// Games played at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
}

fn default_games() -> u32 {
    20
}
fn default_min_score() -> f64 {
    0.55
}
fn default_sims() -> u32 {
    32
}
fn default_max_plies() -> u32 {
    200
}
fn default_opening_plies() -> u32 {
    8
}
fn default_concurrency() -> usize {
    1
}

impl Default for SwitchConfig {
    /// Off (`every = 0`), with the other fields at their defaults.
    fn default() -> Self {
        SwitchConfig {
            every: 0,
            games: default_games(),
            min_score: default_min_score(),
            sims: default_sims(),
            max_plies: default_max_plies(),
            opening_plies: default_opening_plies(),
            concurrency: default_concurrency(),
        }
    }
}

impl SwitchConfig {
    /// Checks the fields, naming the first one that is wrong.
    pub fn validate(&self) -> Result<()> {
        self.paired().validate("switch", 2)?;
        if !(0.0..=1.0).contains(&self.min_score) {
            bail!("switch.min_score must be in [0, 1], not {}", self.min_score);
        }
        Ok(())
    }

    /// The match settings of a check.
    pub fn paired(&self) -> PairedGames {
        PairedGames { games: self.games, sims: self.sims, max_plies: self.max_plies, opening_plies: self.opening_plies, concurrency: self.concurrency }
    }

    /// Whether a check is due at `generation` (`done`: the generation of the last check).
    pub fn due(&self, generation: u64, done: u64) -> bool {
        self.every > 0 && generation > done && generation % self.every == 0
    }
}

/// The part a check tests next: the capture prior while it has weight (a mixed one: a product
/// prior is part of the network's policy), then the material value; `None` when the blend is off.
pub fn next_part(k: &Knowledge) -> Option<BlendPart> {
    if k.prior_weight > 0.0 && k.prior_mode.is_mix() {
        Some(BlendPart::Prior)
    } else if k.value_weight > 0.0 {
        Some(BlendPart::Value)
    } else {
        None
    }
}

/// Whether the network alone, scoring `stats` against the blend, takes over: a score of at
/// least `min_score`.
pub fn releases(stats: &MatchStats, min_score: f64) -> bool {
    stats.games() > 0 && stats.points() >= min_score * stats.games() as f64 - 1e-9
}

/// One check: the part tested, the checkpoint, the network alone's results against the blend.
#[derive(Clone, Debug)]
pub struct SwitchCheck {
    pub part: BlendPart,
    pub checkpoint: String,
    pub step: u64,
    /// The first player is the checkpoint with the part switched off.
    pub stats: MatchStats,
    pub released: bool,
}

impl SwitchCheck {
    /// One line for the session's notes.
    pub fn line(&self) -> String {
        let s = &self.stats;
        format!(
            "switch check of {} (step {}): the network's own {} scored {}/{}/{} ({:.1}/{}) against the blend: {}",
            self.checkpoint,
            self.step,
            self.part.name(),
            s.wins,
            s.draws,
            s.losses,
            s.points(),
            s.games(),
            if self.released { "released, the network takes over" } else { "the blend stays" }
        )
    }
}

/// `arena/switch.csv` of a run: one row per check.
pub fn switch_csv(run: &RunDir) -> PathBuf {
    vzero_arena::gauntlet::arena_dir(run).join("switch.csv")
}

/// Plays the check of `part` on checkpoint `ckpt` (its `.json`), records it in `arena/switch.csv`
/// (rewritten atomically, published on object storage) and returns it; the caller releases the
/// part when [`SwitchCheck::released`].
pub fn run_check(run: &RunDir, variant: Variant, ckpt: &Path, step: u64, part: BlendPart, cfg: &SwitchConfig, seed: u64) -> Result<SwitchCheck> {
    let off = match part {
        BlendPart::Prior => NetOptions { knowledge_prior: Some(0.0), ..NetOptions::default() },
        BlendPart::Value => NetOptions { knowledge_value: Some(0.0), ..NetOptions::default() },
    };
    let alone = PlayerSpec::Net { path: ckpt.to_path_buf(), sims: cfg.sims, gumbel: false, options: off };
    let blend = PlayerSpec::Net { path: ckpt.to_path_buf(), sims: cfg.sims, gumbel: false, options: NetOptions::default() };
    let mc = cfg.paired().config(variant, seed, "vzero switch check");
    let report = run_match(&alone, &blend, &mc).with_context(|| format!("switch check of {}", ckpt.display()))?;
    let checkpoint = ckpt.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let check = SwitchCheck { part, checkpoint, step, released: releases(&report.stats, cfg.min_score), stats: report.stats };
    let csv = switch_csv(run);
    if let Some(dir) = csv.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut text = match std::fs::read_to_string(&csv) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "checkpoint,step,part,wins,draws,losses,released\n".to_string(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", csv.display())),
    };
    let s = &check.stats;
    text += &format!("{},{},{},{},{},{},{}\n", check.checkpoint, step, part.name(), s.wins, s.draws, s.losses, check.released);
    write_atomic(&csv, text.as_bytes())?;
    run.publish(&csv)?;
    Ok(check)
}

/// The parts released by checks of the checkpoint at `step` or later (rows of
/// `arena/switch.csv`). A release is recorded in every checkpoint published after it, so a run
/// that stopped right after a check released a part (its step's checkpoint already out) holds
/// that release only here: the learner resumed from that checkpoint takes it back from these.
pub fn releases_since(run: &RunDir, step: u64) -> Result<Vec<BlendPart>> {
    let csv = switch_csv(run);
    let Some(text) = vzero_base::read_if_exists(&csv)? else { return Ok(Vec::new()) };
    let mut parts = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let row_step = f.get(1).and_then(|s| s.parse::<u64>().ok());
        let part = f.get(2).and_then(|p| [BlendPart::Prior, BlendPart::Value].into_iter().find(|b| b.name() == *p));
        let (Some(row_step), Some(part), Some(released)) = (row_step, part, f.get(6)) else {
            bail!("{} line {}: not a switch check row: '{line}'", csv.display(), i + 1);
        };
        if row_step >= step && *released == "true" && !parts.contains(&part) {
            parts.push(part);
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(wins: u32, draws: u32, losses: u32) -> MatchStats {
        MatchStats { wins, draws, losses, penta: [0; 5] }
    }

    #[test]
    fn the_network_takes_over_only_with_the_score_it_needs() {
        let min = SwitchConfig::default().min_score;
        assert!(releases(&stats(11, 0, 9), min));
        assert!(releases(&stats(5, 12, 3), min));
        assert!(!releases(&stats(10, 0, 10), min), "a tie keeps the blend");
        assert!(!releases(&stats(5, 11, 4), min), "52.5% is not enough");
        assert!(!releases(&stats(2, 0, 18), min));
        assert!(!releases(&stats(0, 0, 0), min));
        assert!(releases(&stats(0, 0, 2), 0.0));
    }

    #[test]
    fn the_prior_is_tested_first_then_the_value() {
        let k = Knowledge { value_weight: 0.5, prior_weight: 1.0, ..Knowledge::default() };
        assert_eq!(next_part(&k), Some(BlendPart::Prior));
        assert_eq!(next_part(&Knowledge { prior_weight: 0.0, ..k }), Some(BlendPart::Value));
        let product = Knowledge { prior_mode: vzero_mcts::PriorMode::Product, ..k };
        assert_eq!(next_part(&product), Some(BlendPart::Value));
        assert_eq!(next_part(&Knowledge::default()), None);
    }

    #[test]
    fn releases_at_or_after_a_step_are_read_back_and_bad_rows_named() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create_or_open(dir.path()).unwrap();
        assert_eq!(releases_since(&run, 0).unwrap(), vec![], "no checks yet");
        let csv = switch_csv(&run);
        std::fs::create_dir_all(csv.parent().unwrap()).unwrap();
        let rows = "checkpoint,step,part,wins,draws,losses,released\n\
                    gen-000001-step-000000003,3,prior,2,0,0,true\n\
                    gen-000002-step-000000006,6,value,0,2,0,false\n\
                    gen-000003-step-000000009,9,value,2,0,0,true\n";
        std::fs::write(&csv, rows).unwrap();
        assert_eq!(releases_since(&run, 3).unwrap(), vec![BlendPart::Prior, BlendPart::Value]);
        assert_eq!(releases_since(&run, 6).unwrap(), vec![BlendPart::Value]);
        assert_eq!(releases_since(&run, 10).unwrap(), vec![]);
        std::fs::write(&csv, format!("{rows}gen-4,x,prior\n")).unwrap();
        let e = format!("{:#}", releases_since(&run, 0).unwrap_err());
        assert!(e.contains("switch.csv line 5"), "{e}");
    }

    #[test]
    fn checks_fall_on_every_nth_new_generation() {
        let c = SwitchConfig { every: 5, ..SwitchConfig::default() };
        assert!(c.due(5, 0) && c.due(10, 5));
        assert!(!c.due(5, 5) && !c.due(7, 5));
        assert!(!SwitchConfig::default().due(10, 0), "off by default");
    }
}
