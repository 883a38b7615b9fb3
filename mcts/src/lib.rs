//! Batched Monte Carlo tree search over any two-player, zero-sum, turn-based [`Game`].
//!
//! * PUCT search with a gather/apply step API ([`Search::gather`], [`gather_batch`], [`Search::apply`])
//!   so many trees share one batched evaluation, plus [`Search::run`] for single-tree use.
//! * Per-player backups (turns need not alternate), virtual loss, FPU reduction, Dirichlet noise as
//!   a total concentration, move temperature schedule, tree reuse ([`Search::advance`]).
//! * Gumbel root search with sequential halving and the completed-Q policy target ([`RootMode::Gumbel`]).
//! * Playout cap randomization ([`PlayoutCap`]) and resignation with playthrough statistics ([`resign`]).
//!
//! All randomness comes from the seed given to [`Search::new`].
#![warn(missing_docs)]

pub mod config;
pub mod eval;
pub mod game;
pub mod gumbel;
pub mod noise;
pub mod resign;
pub mod result;
pub mod search;
mod tree;

pub use config::{DirichletNoise, GumbelConfig, PlayoutCap, RootMode, SearchConfig, TemperatureSchedule};
pub use eval::{uniform_evaluator, LeafValue};
pub use game::Game;
pub use resign::{FalseResignStats, PlaythroughOutcome, ResignConfig, ResignTracker};
pub use result::{MoveStats, NodeStats, SearchResult};
pub use search::{gather_batch, Leaf, LeafHandle, Search};
