//! Proven game values: the MCTS-solver (Winands, Björnsson and Saito, "Monte-Carlo Tree Search
//! Solver", 2008) with distances in plies.
//!
//! A [`Proof`] belongs to one player: at a node, the player to move; on a move, the player making
//! it. Moving a proof one ply up ([`Proof::before_move`]) keeps the outcome when the same player
//! is to move after the move (a Dictator's first step) and flips it otherwise — never a sign flip
//! per ply.
//!
//! A node is proven from its moves' proofs: a win if any move is a proven win (the
//! shortest), otherwise, once every move is proven, a draw if any move draws, else a loss (the
//! longest). Distances are bounds: `Win(k)` wins within `k` plies whatever the opponent does,
//! `Loss(k)` cannot be made to last longer than `k` plies, and `Draw(k)` settles every line of
//! the proof within `k` plies.

use std::fmt;

/// A game value proven by the search, for one player, with its distance in plies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proof {
    /// The player wins within this many plies, whatever the opponent does.
    Win(u16),
    /// The player loses, at the latest after this many plies, whatever it does.
    Loss(u16),
    /// The game is a draw with best play; every line of the proof ends within this many plies.
    Draw(u16),
}

impl Proof {
    /// The proof of a finished game from its value for the player to move (1 win, 0 draw, -1 loss).
    pub fn terminal(value: f32) -> Proof {
        if value > 0.0 {
            Proof::Win(0)
        } else if value < 0.0 {
            Proof::Loss(0)
        } else {
            Proof::Draw(0)
        }
    }

    /// The exact value: 1 for a win, 0 for a draw, -1 for a loss.
    pub fn value(self) -> f32 {
        match self {
            Proof::Win(_) => 1.0,
            Proof::Draw(_) => 0.0,
            Proof::Loss(_) => -1.0,
        }
    }

    /// The draw probability: 1 for a draw, otherwise 0.
    pub fn draw(self) -> f32 {
        if matches!(self, Proof::Draw(_)) {
            1.0
        } else {
            0.0
        }
    }

    /// Plies to the end of the game.
    pub fn plies(self) -> u16 {
        match self {
            Proof::Win(k) | Proof::Loss(k) | Proof::Draw(k) => k,
        }
    }

    /// `"win"`, `"loss"` or `"draw"`.
    pub fn outcome(self) -> &'static str {
        match self {
            Proof::Win(_) => "win",
            Proof::Loss(_) => "loss",
            Proof::Draw(_) => "draw",
        }
    }

    /// Whether this is a proven loss.
    pub fn is_loss(self) -> bool {
        matches!(self, Proof::Loss(_))
    }

    /// This proof (of the position after a move) for the player who made the move: one ply
    /// longer, the same outcome when that player is to move again (`same_player`), else flipped.
    pub fn before_move(self, same_player: bool) -> Proof {
        let k = self.plies().saturating_add(1);
        match (self, same_player) {
            (Proof::Draw(_), _) => Proof::Draw(k),
            (Proof::Win(_), true) | (Proof::Loss(_), false) => Proof::Win(k),
            (Proof::Loss(_), true) | (Proof::Win(_), false) => Proof::Loss(k),
        }
    }

    /// How much the player likes it: shorter wins, then longer wins, then draws (whatever their
    /// length), then longer losses, then shorter ones.
    pub fn preference(self) -> i32 {
        match self {
            Proof::Win(k) => 0x20000 - k as i32,
            Proof::Draw(_) => 0,
            Proof::Loss(k) => -0x20000 + k as i32,
        }
    }
}

impl fmt::Display for Proof {
    /// `win in 3 plies`, `draw in 1 ply`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.plies();
        write!(f, "{} in {k} {}", self.outcome(), if k == 1 { "ply" } else { "plies" })
    }
}

/// The proof of a node from the proofs of its moves (each for the player to move at the node):
/// the shortest proven win, else — when every move is proven — a draw if one draws, else a loss,
/// with the longest distance. `None` while unproven (or without moves).
pub(crate) fn combine(moves: impl IntoIterator<Item = Option<Proof>>) -> Option<Proof> {
    let mut win: Option<u16> = None;
    let (mut all, mut any, mut draw, mut longest) = (true, false, false, 0u16);
    for p in moves {
        any = true;
        match p {
            Some(Proof::Win(k)) => win = Some(win.map_or(k, |w| w.min(k))),
            Some(Proof::Draw(k)) => {
                draw = true;
                longest = longest.max(k);
            }
            Some(Proof::Loss(k)) => longest = longest.max(k),
            None => all = false,
        }
    }
    match win {
        Some(k) => Some(Proof::Win(k)),
        None if all && any => Some(if draw { Proof::Draw(longest) } else { Proof::Loss(longest) }),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_ply_up_keeps_the_outcome_only_for_the_same_player() {
        assert_eq!(Proof::Loss(0).before_move(false), Proof::Win(1));
        assert_eq!(Proof::Win(0).before_move(false), Proof::Loss(1));
        assert_eq!(Proof::Win(1).before_move(true), Proof::Win(2));
        assert_eq!(Proof::Loss(2).before_move(true), Proof::Loss(3));
        assert_eq!(Proof::Draw(0).before_move(false), Proof::Draw(1));
        assert_eq!(Proof::Win(u16::MAX).before_move(true), Proof::Win(u16::MAX));
    }

    #[test]
    fn combine_prefers_the_shortest_win_and_the_longest_loss() {
        use Proof::*;
        assert_eq!(combine([None, Some(Win(5)), Some(Win(3)), Some(Loss(1))]), Some(Win(3)));
        assert_eq!(combine([None, Some(Loss(1))]), None);
        assert_eq!(combine([Some(Loss(1)), Some(Loss(4)), Some(Loss(2))]), Some(Loss(4)));
        assert_eq!(combine([Some(Loss(5)), Some(Draw(1))]), Some(Draw(5)));
        assert_eq!(combine(std::iter::empty()), None);
    }

    #[test]
    fn preference_orders_outcomes_then_distances() {
        use Proof::*;
        let mut v = vec![Loss(1), Win(7), Draw(2), Loss(9), Win(1)];
        v.sort_by_key(|p| -p.preference());
        assert_eq!(v, vec![Win(1), Win(7), Draw(2), Loss(9), Loss(1)]);
        assert_eq!(Win(3).to_string(), "win in 3 plies");
        assert_eq!(Draw(1).to_string(), "draw in 1 ply");
        assert_eq!((Proof::terminal(-1.0), Proof::terminal(0.0), Proof::terminal(1.0)), (Loss(0), Draw(0), Win(0)));
    }
}
