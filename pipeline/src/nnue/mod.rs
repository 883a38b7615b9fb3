//! The NNUE half of the pipeline: Fairy-Stockfish NNUE nets made from a run's positions, apart
//! from the AlphaZero session (it shares the run directory and its data, nothing else, and no
//! LibTorch crate):
//!
//! - [`train`]: `vzero nnue train`, a net trained on the run's games and teacher-scored positions;
//! - [`export`]: `vzero nnue export`, a checkpoint quantised into a `.nnue` file;
//! - [`rounds`]: `vzero nnue loop`, nets improved in rounds (play with the teacher, train,
//!   publish, gate);
//! - `samples` (what the trainer reads) and `files` (the run's `nnue/` folder: lease,
//!   checkpoints, metrics, plot) serve them.

pub mod export;
mod files;
pub mod rounds;
mod samples;
pub mod train;

pub use export::export_nnue;
pub use files::{nnue_dir, nnue_lease, METRICS_HEADER};
pub use rounds::{published_nets, run_loop, teacher_with_net, teachers_net, LoopEvent, LoopOptions, LoopSummary, NetRow};
pub use train::{train_nnue, train_nnue_held, NnueTrainOptions, NnueTrainSummary};
