//! Self-play: worker threads that each play many games at once, evaluate the leaves of all
//! their searches in one batched forward pass, write finished games as HDF5 chunks into the
//! run directory, and switch to the newest published checkpoint between moves.

mod config;
mod targets;
mod worker;

pub use config::SelfplayConfig;
pub use targets::{finish_game, GameEnd, GameRow};
pub use worker::{run_worker, Doorbell, Stats, WorkerContext};
