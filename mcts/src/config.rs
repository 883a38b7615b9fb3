//! Search configuration: PUCT constants, FPU, virtual loss, root noise, Gumbel root,
//! playout cap randomization and the move-temperature schedule.

/// Dirichlet noise mixed into the root priors (PUCT root only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirichletNoise {
    /// Total concentration spread over the legal moves: alpha_i = total / n_legal (KataGo 10.83).
    pub total_alpha: f32,
    /// Mixing fraction: prior' = (1 - fraction) * prior + fraction * noise.
    pub fraction: f32,
}

impl Default for DirichletNoise {
    fn default() -> Self {
        DirichletNoise { total_alpha: 10.83, fraction: 0.25 }
    }
}

/// Gumbel root search parameters (Danihelka et al. 2022; mctx `gumbel_muzero_policy` defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GumbelConfig {
    /// m: number of root actions sampled by Gumbel-top-k and then halved (mctx 16).
    pub max_considered: usize,
    /// Scale of the Gumbel noise (1 for self-play; 0 gives a deterministic search).
    pub gumbel_scale: f32,
    /// c_visit in sigma(q) = (c_visit + max N) * c_scale * q (mctx `maxvisit_init` 50).
    pub c_visit: f32,
    /// c_scale in sigma(q) (mctx `value_scale` 0.1).
    pub c_scale: f32,
    /// Min-max rescale the completed Q values to [0, 1] before sigma (mctx default: true).
    pub rescale_q: bool,
}

impl Default for GumbelConfig {
    fn default() -> Self {
        GumbelConfig { max_considered: 16, gumbel_scale: 1.0, c_visit: 50.0, c_scale: 0.1, rescale_q: true }
    }
}

/// How the root action of each simulation is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RootMode {
    /// PUCT at the root (with optional Dirichlet noise); policy target = visit distribution;
    /// the move is sampled from visits with the temperature schedule.
    Puct,
    /// Gumbel-top-k + sequential halving at the root; policy target = completed-Q improved policy;
    /// the move is the sequential-halving winner (temperature is not used). Interior nodes use PUCT.
    Gumbel(GumbelConfig),
}

/// KataGo playout cap randomization: a fraction of moves get a full search whose policy target
/// is recorded, the rest a cheap search that only moves the game along.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayoutCap {
    /// Probability of a full search.
    pub full_prob: f32,
    /// Simulations of a full search.
    pub full_sims: u32,
    /// Simulations of a cheap search.
    pub cheap_sims: u32,
    /// Apply root exploration noise (Dirichlet) in cheap searches too (KataGo: no).
    pub noise_in_cheap: bool,
}

impl Default for PlayoutCap {
    fn default() -> Self {
        PlayoutCap { full_prob: 0.25, full_sims: 600, cheap_sims: 100, noise_in_cheap: false }
    }
}

impl PlayoutCap {
    /// Every move gets a full search of `sims` simulations.
    pub fn always(sims: u32) -> Self {
        PlayoutCap { full_prob: 1.0, full_sims: sims, cheap_sims: sims, noise_in_cheap: false }
    }
}

/// Move-selection temperature by ply: `T(ply) = final + (initial - final) * 0.5^(ply / half_life)`
/// (KataGo 0.75 -> 0.15, half-life 19). T below 0.01 means "pick the most visited move".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemperatureSchedule {
    /// Temperature at ply 0.
    pub initial: f32,
    /// Asymptotic temperature.
    pub final_: f32,
    /// Plies for the excess over `final_` to halve (0 or less: always `final_`).
    pub half_life: f32,
}

impl Default for TemperatureSchedule {
    fn default() -> Self {
        TemperatureSchedule { initial: 0.75, final_: 0.15, half_life: 19.0 }
    }
}

impl TemperatureSchedule {
    /// Always pick the most visited move.
    pub fn greedy() -> Self {
        TemperatureSchedule { initial: 0.0, final_: 0.0, half_life: 0.0 }
    }

    /// Temperature at `ply`.
    pub fn at(&self, ply: u32) -> f32 {
        if self.half_life <= 0.0 {
            return self.final_;
        }
        self.final_ + (self.initial - self.final_) * 0.5f32.powf(ply as f32 / self.half_life)
    }
}

/// All search parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// c_init in c(N) = c_init + c_factor * ln((N + c_base + 1) / c_base).
    pub c_puct: f32,
    /// c_base of the PUCT growth term.
    pub c_puct_base: f32,
    /// c_factor of the PUCT growth term (0 disables it).
    pub c_puct_factor: f32,
    /// FPU reduction at interior nodes: unvisited Q = parent Q - r * sqrt(visited prior mass).
    pub fpu_reduction: f32,
    /// FPU reduction at the root.
    pub root_fpu_reduction: f32,
    /// Value counted for each in-flight visit (1 = a loss for the mover), so one tree yields distinct leaves.
    pub virtual_loss: f32,
    /// Collisions (descents ending at a leaf already awaiting evaluation) tolerated per `gather` call.
    pub max_collisions: usize,
    /// Root action selection.
    pub root_mode: RootMode,
    /// Dirichlet noise at the root (PUCT mode only).
    pub noise: Option<DirichletNoise>,
    /// Playout cap randomization (used by [`crate::Search::start`]).
    pub playout_cap: PlayoutCap,
    /// Move temperature schedule (PUCT mode).
    pub temperature: TemperatureSchedule,
    /// Keep the played move's subtree between moves.
    pub reuse_tree: bool,
    /// MCTS-solver: prove wins, losses and draws (terminal positions, moves that win at once,
    /// backed-up proofs), steer selection by them and stop a search whose root is proven. Off, the
    /// search is plain MCTS (terminal values are still exact).
    pub solver: bool,
    /// Contempt (a self-play draw score): while choosing moves, a draw counts `-contempt` for the
    /// root's player and `+contempt` for the other (a move's Q is shifted by its draw share, so
    /// the tree stays zero-sum and reusable); values, targets and proofs stay unbiased. Both sides
    /// of a self-play game dislike draws on their own move, so fewer games shuffle to a draw (0: off).
    pub contempt: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            c_puct: 1.25,
            c_puct_base: 19652.0,
            c_puct_factor: 0.0,
            fpu_reduction: 0.2,
            root_fpu_reduction: 0.0,
            virtual_loss: 1.0,
            max_collisions: 8,
            root_mode: RootMode::Puct,
            noise: None,
            playout_cap: PlayoutCap::always(800),
            temperature: TemperatureSchedule::greedy(),
            reuse_tree: true,
            solver: true,
            contempt: 0.0,
        }
    }
}

impl SearchConfig {
    /// Self-play defaults with PUCT: Dirichlet noise (total 10.83, 25%), KataGo temperature decay,
    /// playout cap 25% x 600 / 75% x 100.
    pub fn selfplay_puct() -> Self {
        SearchConfig {
            noise: Some(DirichletNoise::default()),
            playout_cap: PlayoutCap::default(),
            temperature: TemperatureSchedule::default(),
            ..SearchConfig::default()
        }
    }

    /// Self-play defaults with a Gumbel root (16 considered actions), playout cap 25% x 200 / 75% x 32.
    pub fn selfplay_gumbel() -> Self {
        SearchConfig {
            root_mode: RootMode::Gumbel(GumbelConfig::default()),
            playout_cap: PlayoutCap { full_prob: 0.25, full_sims: 200, cheap_sims: 32, noise_in_cheap: false },
            ..SearchConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperature_decays_by_half_life() {
        let t = TemperatureSchedule { initial: 1.0, final_: 0.2, half_life: 10.0 };
        assert!((t.at(0) - 1.0).abs() < 1e-6);
        assert!((t.at(10) - 0.6).abs() < 1e-6);
        assert!((t.at(20) - 0.4).abs() < 1e-6);
        assert!(t.at(200) < 0.201);
        assert_eq!(TemperatureSchedule::greedy().at(5), 0.0);
    }
}
