//! Batched MCTS (work in progress).
