//! What a search reports: per-move statistics, the policy target, the chosen move and proofs.

use crate::proof::Proof;

/// Statistics of one move at a node.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveStats<M> {
    /// The move.
    pub mv: M,
    /// Completed visits of the move (including visits kept by tree reuse).
    pub visits: u32,
    /// Prior of the move as given by the evaluator (before root noise in a [`SearchResult`]).
    pub prior: f32,
    /// Mean value of the move from the mover's perspective; `None` if unvisited.
    pub q: Option<f32>,
    /// Mean draw probability below the move; `None` if unvisited.
    pub draw: Option<f32>,
    /// Proven value of the move for the player making it (solver), if any.
    pub proof: Option<Proof>,
}

/// Result of one search (one move of a game).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult<M> {
    /// Player to move at the root.
    pub to_move: usize,
    /// One entry per legal move, in `legal_moves` order.
    pub moves: Vec<MoveStats<M>>,
    /// Policy training target over `moves` (same order, sums to 1): the visit distribution
    /// (PUCT root) or the completed-Q improved policy (Gumbel root), with no mass on moves proven
    /// lost; at a proven root, equal shares for the proven-best moves (the shortest wins, the
    /// draws, or the longest losses) and nothing elsewhere.
    pub policy_target: Vec<f32>,
    /// The move to play: at a proven root the proven-best move, never a move proven lost when
    /// another is not.
    pub chosen: M,
    /// Search value of the root for the player to move (mean of all backups), in [-1, 1]; the
    /// exact value (1, 0, -1) when the root is proven.
    pub root_value: f32,
    /// Search draw probability at the root (exactly 1 or 0 when proven).
    pub root_draw: f32,
    /// Proven value of the root for the player to move (solver), e.g. `Win(3)`: a win within
    /// three plies.
    pub proven: Option<Proof>,
    /// The evaluator's own value of the root for the player to move.
    pub raw_value: f32,
    /// Completed visits of the root (including reused ones).
    pub root_visits: u32,
    /// Simulations run by this search (not counting the root evaluation).
    pub simulations: u32,
    /// Whether this was a full search (playout cap randomization): only then should the
    /// policy target be recorded for training.
    pub full_search: bool,
}

impl<M> SearchResult<M> {
    /// Whether this move's policy target should be written to the training data.
    pub fn record_policy(&self) -> bool {
        self.full_search
    }
}

/// Statistics of one node of the tree, for inspection and debugging.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStats<M> {
    /// Player to move at the node.
    pub to_move: usize,
    /// Completed visits of the node (its evaluation plus all backups through it).
    pub visits: u32,
    /// Mean value for `to_move`; `None` if never visited.
    pub value: Option<f32>,
    /// Mean draw probability; `None` if never visited.
    pub draw: Option<f32>,
    /// Whether the node is a terminal position.
    pub terminal: bool,
    /// Whether the node has been evaluated (priors known).
    pub expanded: bool,
    /// Proven value for `to_move` (solver), if any.
    pub proof: Option<Proof>,
    /// Children in `legal_moves` order (priors as currently stored, i.e. with root noise if applied).
    pub children: Vec<MoveStats<M>>,
}
