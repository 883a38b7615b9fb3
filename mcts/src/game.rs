//! The game interface the search is generic over.

/// A two-player, zero-sum, turn-based game as the search sees it.
/// Turns need not alternate: the same player may move twice in a row (a "Dictator" double move, a pass).
pub trait Game: Clone + Send {
    /// A move; cheap to copy and compare.
    type Move: Copy + Eq + std::hash::Hash + std::fmt::Debug + Send + Sync;
    /// Player to move: 0 or 1.
    fn to_move(&self) -> usize;
    /// Appends the legal moves (in a deterministic order) to `out`.
    fn legal_moves(&self, out: &mut Vec<Self::Move>);
    /// Plays `mv`, which must be legal.
    fn play(&mut self, mv: Self::Move);
    /// `Some(v)` if the game is over: v = outcome for the player to move in [-1, 1] (1 win, 0 draw, -1 loss).
    fn terminal_value(&self) -> Option<f32>;

    /// What the search asks of a new node: the terminal value if the game is over, otherwise
    /// `None` with the legal moves appended to `out` (nothing is appended for a terminal position).
    /// The default calls [`Game::terminal_value`] then [`Game::legal_moves`]; override it when the
    /// two share work (a chess rules core must generate the moves to detect mate).
    fn expand(&self, out: &mut Vec<Self::Move>) -> Option<f32> {
        let t = self.terminal_value();
        if t.is_none() {
            self.legal_moves(out);
        }
        t
    }

    /// Index of the first of `moves` (legal moves of this position, in [`Game::expand`]'s order)
    /// that ends the game at once with a win for the player making it, if any. The search asks
    /// this of every new node so that a win in one ply is proven without simulations.
    ///
    /// The default plays each move on a clone and asks [`Game::terminal_value`]; override it with
    /// cheap filters when that is costly (a chess rules core needs only look at checking moves).
    fn winning_move(&self, moves: &[Self::Move]) -> Option<usize> {
        let me = self.to_move();
        moves.iter().position(|&m| {
            let mut next = self.clone();
            next.play(m);
            next.terminal_value().is_some_and(|v| if next.to_move() == me { v > 0.0 } else { v < 0.0 })
        })
    }
}
