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
}
