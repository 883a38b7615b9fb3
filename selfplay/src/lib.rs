//! Self-play: worker threads that each play many games at once, evaluate the leaves of all
//! their searches in one batched forward pass, write finished games as HDF5 chunks into the
//! run directory, and switch to the newest published checkpoint between moves. With
//! `evaluator = "shared"` the workers of a process send their leaves to one evaluation server
//! (`vzero_model::EvalServer`) that batches across workers.

mod config;
mod reduced_army;
mod targets;
mod worker;

pub use config::{EvaluatorMode, SelfplayConfig};
pub use reduced_army::reduced_army;
pub use targets::{capped_end, finish_game, CapOutcome, GameEnd, GameRow};
pub use worker::{run_worker, Doorbell, Stats, WorkerContext};
