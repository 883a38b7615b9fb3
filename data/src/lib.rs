//! HDF5 training chunks, game records, the run-directory layout and the replay window of vzero.
//!
//! Shared by self-play (writer: [`write_chunk`], [`RunDir::new_chunk_path`]) and the trainer
//! (reader: [`Chunk`], [`ReplayWindow`], [`RunDir::latest_checkpoint`]). No tch here. The file
//! schema is documented in `data/README.md` and readable from Python's h5py.
//!
//! Every bad file (truncated, corrupt, wrong schema version, another variant) is reported as a
//! [`DataError`] naming the file; nothing in the public API panics on bad data.

mod chunk;
mod error;
pub mod heartbeat;
pub mod lease;
pub mod metrics;
mod name;
mod packed;
mod periodic;
pub mod remote;
mod rows;
mod rundir;
mod window;

pub use chunk::{write_block, write_chunk, write_chunk_scored, Chunk, ChunkExpect};
pub use error::{DataError, Result};
pub use heartbeat::{Beat, Heartbeat, Progress, Resigns};
pub use lease::{Holder, Lease};
pub use name::{decimal, ChunkCounts, ChunkName};
pub use packed::{PackedPlanes, PlaneKind};
pub use remote::StorageOptions;
pub use rows::{ChunkMeta, GameRecord, Row, RowBlock, ScoredPosition, Source, TeacherScore, MIN_SCHEMA_VERSION, SCHEMA_VERSION};
pub use rundir::{checkpoint_name, parse_checkpoint_name, CheckpointEntry, RunDir};
pub use window::{ExternalMix, ReplayWindow, Retention, WindowConfig};
