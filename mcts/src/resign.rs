//! Resignation with playthrough games that measure the false-resign rate (lc0 `ResignPlaythrough`).
//!
//! A player resigns when the root value of its own searches stays below `threshold` for
//! `consecutive` of its moves in a row (counted per player, so double moves need no special care).
//! In a fraction `playthrough_fraction` of games resignation is disabled: the tracker notes the
//! first player that would have resigned, and [`FalseResignStats`] records whether that player
//! went on to win (a false resignation), draw, or lose.

use rand::Rng;

/// Resignation parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResignConfig {
    /// Resign when the root value for the player to move is below this (e.g. -0.9).
    pub threshold: f32,
    /// ...for this many consecutive moves of that player.
    pub consecutive: u32,
    /// Fraction of games in which resignation is disabled (played through to measure false resigns).
    pub playthrough_fraction: f32,
    /// No resignation before this ply.
    pub min_ply: u32,
}

impl Default for ResignConfig {
    fn default() -> Self {
        ResignConfig { threshold: -0.9, consecutive: 3, playthrough_fraction: 0.1, min_ply: 0 }
    }
}

/// Per-game resignation state.
#[derive(Clone, Debug)]
pub struct ResignTracker {
    config: ResignConfig,
    playthrough: bool,
    streak: [u32; 2],
    would_resign: Option<(usize, u32)>,
}

impl ResignTracker {
    /// A tracker for a new game; draws whether it is a playthrough game from `rng`.
    pub fn new<R: Rng + ?Sized>(config: ResignConfig, rng: &mut R) -> Self {
        let playthrough = rng.gen::<f32>() < config.playthrough_fraction;
        Self::with_playthrough(config, playthrough)
    }

    /// A tracker with an explicit playthrough decision.
    pub fn with_playthrough(config: ResignConfig, playthrough: bool) -> Self {
        ResignTracker { config, playthrough, streak: [0; 2], would_resign: None }
    }

    /// Whether resignation is disabled in this game.
    pub fn is_playthrough(&self) -> bool {
        self.playthrough
    }

    /// Records the root value (for `player`, the player to move) of the search at `ply`.
    /// Returns `Some(player)` if that player resigns now (never in a playthrough game).
    pub fn observe(&mut self, ply: u32, player: usize, root_value: f32) -> Option<usize> {
        if root_value < self.config.threshold {
            self.streak[player] += 1;
        } else {
            self.streak[player] = 0;
        }
        if ply < self.config.min_ply || self.streak[player] < self.config.consecutive.max(1) {
            return None;
        }
        if self.playthrough {
            if self.would_resign.is_none() {
                self.would_resign = Some((player, ply));
            }
            None
        } else {
            Some(player)
        }
    }

    /// The first player that would have resigned in this playthrough game, and at which ply.
    pub fn would_have_resigned(&self) -> Option<(usize, u32)> {
        self.would_resign
    }

    /// For a finished playthrough game with `winner` (`None`: draw), what happened to the player
    /// that would have resigned; `None` if not a playthrough game or nobody would have resigned.
    pub fn outcome(&self, winner: Option<usize>) -> Option<PlaythroughOutcome> {
        let (p, _) = self.would_resign?;
        Some(match winner {
            Some(w) if w == p => PlaythroughOutcome::ResignerWon,
            Some(_) => PlaythroughOutcome::ResignerLost,
            None => PlaythroughOutcome::Draw,
        })
    }
}

/// Result of a playthrough game for the player that would have resigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaythroughOutcome {
    /// It won: resigning would have been a false resignation.
    ResignerWon,
    /// Draw: resigning would have turned a draw into a loss.
    Draw,
    /// It lost: resigning would have been correct.
    ResignerLost,
}

/// Running false-resign statistics over many games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FalseResignStats {
    /// Playthrough games finished.
    pub playthrough_games: u64,
    /// Playthrough games in which some player would have resigned.
    pub would_resign: u64,
    /// ...and that player won.
    pub resigner_won: u64,
    /// ...and the game was drawn.
    pub resigner_drew: u64,
}

impl FalseResignStats {
    /// Adds a finished game (ignored unless it was a playthrough game); `winner` `None` is a draw.
    pub fn record(&mut self, tracker: &ResignTracker, winner: Option<usize>) {
        if !tracker.is_playthrough() {
            return;
        }
        self.playthrough_games += 1;
        match tracker.outcome(winner) {
            None => {}
            Some(o) => {
                self.would_resign += 1;
                match o {
                    PlaythroughOutcome::ResignerWon => self.resigner_won += 1,
                    PlaythroughOutcome::Draw => self.resigner_drew += 1,
                    PlaythroughOutcome::ResignerLost => {}
                }
            }
        }
    }

    /// Fraction of would-be resignations where the resigner went on to win; `None` before any.
    pub fn false_resign_rate(&self) -> Option<f64> {
        (self.would_resign > 0).then(|| self.resigner_won as f64 / self.would_resign as f64)
    }

    /// Fraction of would-be resignations where the resigner did not lose (won or drew).
    pub fn not_lost_rate(&self) -> Option<f64> {
        (self.would_resign > 0).then(|| (self.resigner_won + self.resigner_drew) as f64 / self.would_resign as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cfg() -> ResignConfig {
        ResignConfig { threshold: -0.8, consecutive: 2, playthrough_fraction: 0.0, min_ply: 0 }
    }

    #[test]
    fn resigns_after_consecutive_low_values_of_the_same_player() {
        let mut t = ResignTracker::with_playthrough(cfg(), false);
        assert_eq!(t.observe(0, 0, -0.9), None);
        // The opponent's values do not break player 0's streak; a double move of player 1 is fine.
        assert_eq!(t.observe(1, 1, 0.9), None);
        assert_eq!(t.observe(2, 1, 0.9), None);
        assert_eq!(t.observe(3, 0, -0.95), Some(0));
        // A value above the threshold resets the streak.
        let mut t = ResignTracker::with_playthrough(cfg(), false);
        t.observe(0, 0, -0.9);
        t.observe(2, 0, -0.5);
        assert_eq!(t.observe(4, 0, -0.9), None);
        assert_eq!(t.observe(6, 0, -0.9), Some(0));
    }

    #[test]
    fn playthrough_never_resigns_and_counts_false_resigns() {
        let mut stats = FalseResignStats::default();
        for (winner, expect) in [(Some(1), PlaythroughOutcome::ResignerWon), (None, PlaythroughOutcome::Draw), (Some(0), PlaythroughOutcome::ResignerLost), (Some(0), PlaythroughOutcome::ResignerLost)] {
            let mut t = ResignTracker::with_playthrough(cfg(), true);
            for ply in 0..6 {
                assert_eq!(t.observe(ply, 1, -0.99), None);
            }
            assert_eq!(t.would_have_resigned(), Some((1, 1)));
            // winner is player 1 in the first game: the would-be resigner won.
            assert_eq!(t.outcome(winner), Some(expect));
            stats.record(&t, winner);
        }
        // A playthrough game without would-be resignation and a normal game.
        let t = ResignTracker::with_playthrough(cfg(), true);
        stats.record(&t, Some(0));
        let t = ResignTracker::with_playthrough(cfg(), false);
        stats.record(&t, Some(0));
        assert_eq!(stats.playthrough_games, 5);
        assert_eq!(stats.would_resign, 4);
        assert_eq!(stats.false_resign_rate(), Some(0.25));
        assert_eq!(stats.not_lost_rate(), Some(0.5));
    }

    #[test]
    fn playthrough_fraction_is_respected() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let c = ResignConfig { playthrough_fraction: 0.2, ..cfg() };
        let n = (0..5000).filter(|_| ResignTracker::new(c, &mut rng).is_playthrough()).count();
        assert!((800..1200).contains(&n), "{n}");
    }
}
