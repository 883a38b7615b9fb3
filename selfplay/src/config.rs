//! Self-play settings, as read from the `[selfplay]` section of a training config.

use serde::{Deserialize, Serialize};
use vzero_mcts::{
    DirichletNoise, GumbelConfig, PlayoutCap, ResignConfig, RootMode, SearchConfig, TemperatureSchedule,
};

/// How self-play games are played and written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Worker threads, each with its own copy of the network (1 torch thread each).
    pub workers: usize,
    /// Games each worker plays at once; their leaves share one forward pass.
    pub games_per_worker: usize,
    /// Leaves gathered from one game's tree per forward pass (virtual loss spreads them).
    pub leaves_per_game: usize,
    /// Simulations of a full search (its policy is a training target).
    pub full_sims: u32,
    /// Simulations of a cheap search (only moves the game on).
    pub cheap_sims: u32,
    /// Probability that a move gets a full search (playout cap randomisation).
    pub full_prob: f32,
    /// Gumbel root (sequential halving, completed-Q targets) instead of PUCT with noise.
    pub gumbel: bool,
    /// Moves the Gumbel root considers.
    pub considered: usize,
    /// Dirichlet noise at the root, total concentration spread over the legal moves (PUCT).
    pub dirichlet_total: f32,
    /// Share of the noise in the root prior (PUCT).
    pub dirichlet_fraction: f32,
    /// Move temperature at ply 0, decaying towards `temperature_final` (PUCT).
    pub temperature_initial: f32,
    /// Temperature reached late in the game.
    pub temperature_final: f32,
    /// Plies for the temperature to go half the way.
    pub temperature_half_life: f32,
    /// Resign below this root value for the side to move (-1 disables).
    pub resign_threshold: f32,
    /// ...held for this many consecutive own moves.
    pub resign_consecutive: u32,
    /// Share of games never resigned, to measure the false-resign rate.
    pub resign_playthrough: f32,
    /// Games longer than this are adjudicated a draw.
    pub max_plies: u32,
    /// Rows per HDF5 chunk file.
    pub rows_per_chunk: usize,
    /// Seconds between checks for a newer checkpoint.
    pub poll_seconds: f64,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            workers: 2,
            games_per_worker: 16,
            leaves_per_game: 2,
            full_sims: 64,
            cheap_sims: 16,
            full_prob: 0.25,
            gumbel: true,
            considered: 16,
            dirichlet_total: 10.83,
            dirichlet_fraction: 0.25,
            temperature_initial: 0.75,
            temperature_final: 0.15,
            temperature_half_life: 19.0,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            resign_playthrough: 0.1,
            max_plies: 300,
            rows_per_chunk: 2000,
            poll_seconds: 2.0,
        }
    }
}

impl SelfplayConfig {
    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, field: &str, want: &str| if ok { Ok(()) } else { Err(format!("selfplay.{field} must be {want}")) };
        check((1..=256).contains(&self.workers), "workers", "1..=256")?;
        check((1..=4096).contains(&self.games_per_worker), "games_per_worker", "1..=4096")?;
        check((1..=64).contains(&self.leaves_per_game), "leaves_per_game", "1..=64")?;
        check(self.full_sims >= 1, "full_sims", "at least 1")?;
        check(self.cheap_sims >= 1 && self.cheap_sims <= self.full_sims, "cheap_sims", "1..=full_sims")?;
        check((0.0..=1.0).contains(&self.full_prob) && self.full_prob > 0.0, "full_prob", "in (0, 1]")?;
        check(self.considered >= 2, "considered", "at least 2")?;
        check(self.dirichlet_total > 0.0, "dirichlet_total", "positive")?;
        check((0.0..=1.0).contains(&self.dirichlet_fraction), "dirichlet_fraction", "in [0, 1]")?;
        check(self.temperature_initial >= 0.0 && self.temperature_final >= 0.0, "temperature_*", "non-negative")?;
        check((-1.0..=0.0).contains(&self.resign_threshold), "resign_threshold", "in [-1, 0]")?;
        check((0.0..=1.0).contains(&self.resign_playthrough), "resign_playthrough", "in [0, 1]")?;
        check(self.max_plies >= 2, "max_plies", "at least 2")?;
        check(self.rows_per_chunk >= 1, "rows_per_chunk", "at least 1")?;
        check(self.poll_seconds > 0.0, "poll_seconds", "positive")?;
        Ok(())
    }

    /// The search settings these options describe.
    pub fn search_config(&self) -> SearchConfig {
        let playout_cap =
            PlayoutCap { full_prob: self.full_prob, full_sims: self.full_sims, cheap_sims: self.cheap_sims, noise_in_cheap: false };
        if self.gumbel {
            SearchConfig {
                root_mode: RootMode::Gumbel(GumbelConfig { max_considered: self.considered, ..GumbelConfig::default() }),
                playout_cap,
                ..SearchConfig::default()
            }
        } else {
            SearchConfig {
                noise: Some(DirichletNoise { total_alpha: self.dirichlet_total, fraction: self.dirichlet_fraction }),
                temperature: TemperatureSchedule {
                    initial: self.temperature_initial,
                    final_: self.temperature_final,
                    half_life: self.temperature_half_life,
                },
                playout_cap,
                ..SearchConfig::default()
            }
        }
    }

    /// The resignation settings.
    pub fn resign_config(&self) -> ResignConfig {
        ResignConfig {
            threshold: self.resign_threshold,
            consecutive: self.resign_consecutive,
            playthrough_fraction: self.resign_playthrough,
            min_ply: 0,
        }
    }
}
