//! vzero as an engine: one MCTS move search with a leaf evaluator (`search`: material, the
//! variant's knowledge or a network), the engine's thinking on top of it (`think`: threads,
//! MultiPV, `stop`/`ponderhit`, proven results) with its clock time manager (`timeman`), the UCI
//! server that pychess's tools drive (`uci_server`, `vzero uci`) and game analysis (`analysis`,
//! `vzero analyse`).
//!
//! The rating side (players, matches, Elo) is the `vzero-arena` crate, which plays vzero's
//! networks through [`search_move`]. See `engine/README.md`.

pub mod analysis;
pub mod search;
pub mod think;
pub mod timeman;
pub mod uci_server;

pub use search::{search_move, value_to_cp, Evaluator, Limits, NetEvaluator, Progress};
pub use think::{GoLimits, Line, Report, Score, ThinkConfig, Thinker};
pub use timeman::{Clock, TimePlan};
