//! Batched Monte Carlo tree search over any two-player, zero-sum, turn-based [`Game`].
//!
//! * PUCT search with a gather/apply step API ([`Search::gather`], [`gather_batch`], [`Search::apply`])
//!   so many trees share one batched evaluation, plus [`Search::run`] for single-tree use.
//! * Per-player backups (turns need not alternate), virtual loss, FPU reduction, Dirichlet noise as
//!   a total concentration, move temperature schedule, tree reuse ([`Search::advance`]).
//! * Gumbel root search with sequential halving and the completed-Q policy target ([`RootMode::Gumbel`]).
//! * Playout cap randomization ([`PlayoutCap`]) and resignation with playthrough statistics ([`resign`]).
//! * An MCTS-solver ([`proof`], on by default: [`SearchConfig::solver`]): every node can be proven a
//!   win, loss or draw for its player to move, with the distance in plies ([`Proof`]). Terminal
//!   positions are proven by their value; a new node with a move that ends the game at once in the
//!   mover's favour ([`Game::winning_move`]) is a proven win without an evaluation; proofs go up on
//!   backup per player (a Dictator's double move keeps the side), and backups through a proven node
//!   carry its exact value. Selection never enters a move proven lost while another is left; the
//!   roots play the shortest proven win and never a proven loss when something else is left; a
//!   search whose root is settled stops early, and [`SearchResult::proven`] reports the proof.
//! * [`VariantGame`]: the rules core's variants as a [`Game`], with cheap no-network evaluators
//!   ([`MaterialEvaluator`], [`RolloutEvaluator`]).
//!
//! All randomness comes from the seed given to [`Search::new`].
//!
//! Batched self-play loop over many games (one evaluator call per batch):
//!
//! ```
//! use vzero_mcts::{gather_batch, uniform_evaluator, Game, Search, SearchConfig};
//!
//! # #[derive(Clone)] struct Nim(u32, usize);
//! # impl Game for Nim {
//! #     type Move = u32;
//! #     fn to_move(&self) -> usize { self.1 }
//! #     fn legal_moves(&self, out: &mut Vec<u32>) { out.extend((1..=3).filter(|&k| k <= self.0)) }
//! #     fn play(&mut self, k: u32) { self.0 -= k; self.1 ^= 1 }
//! #     fn terminal_value(&self) -> Option<f32> { (self.0 == 0).then_some(-1.0) }
//! # }
//! let mut games: Vec<_> = (0..4).map(|i| Search::new(Nim(10 + i, 0), SearchConfig::default(), i as u64)).collect();
//! for g in &mut games {
//!     g.start(); // playout cap randomization picks the budget
//! }
//! let mut batch = Vec::new();
//! let mut priors = Vec::new();
//! while games.iter().any(|g| !g.is_done()) {
//!     batch.clear();
//!     gather_batch(&mut games, 8, 256, &mut batch);
//!     // ... encode every `leaf.state` and run the network once on the whole batch ...
//!     for leaf in &batch {
//!         let g = &mut games[leaf.handle.tree()];
//!         let moves = g.leaf_moves(leaf.handle);
//!         priors.resize(moves.len(), 0.0);
//!         let value = uniform_evaluator(&leaf.state, moves, &mut priors);
//!         g.apply(leaf.handle, &priors, value);
//!     }
//! }
//! for g in &mut games {
//!     let result = g.finish().unwrap();
//!     g.advance(result.chosen); // keeps the chosen move's subtree
//! }
//! ```
#![warn(missing_docs)]

pub mod config;
pub mod eval;
pub mod game;
pub mod knowledge;
pub mod gumbel;
pub mod noise;
pub mod proof;
pub mod quiescence;
pub mod resign;
pub mod result;
pub mod search;
mod tree;
pub mod variant_game;

pub use config::{DirichletNoise, GumbelConfig, PlayoutCap, RootMode, SearchConfig, TemperatureSchedule};
pub use eval::{uniform_evaluator, LeafValue};
pub use game::Game;
pub use proof::Proof;
pub use resign::{FalseResignStats, PlaythroughOutcome, ResignConfig, ResignTracker};
pub use knowledge::{BlendPart, BlendRelease, Knowledge, PriorMode, CAPTURE_PRIOR_GAIN};
pub use quiescence::{material_target, Quiescence, MATERIAL_SCALE};
pub use result::{MoveStats, NodeStats, SearchResult};
pub use search::{gather_batch, Leaf, LeafHandle, Search};
pub use variant_game::{material_balance, material_evaluator, MaterialEvaluator, RolloutEvaluator, VariantGame};
