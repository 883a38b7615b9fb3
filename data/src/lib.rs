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
pub mod pgn;
mod rundir;
mod window;

pub use chunk::{write_block, write_chunk, Chunk, ChunkExpect};
pub use error::{DataError, Result};
pub use rundir::{checkpoint_name, parse_checkpoint_name, CheckpointEntry, RunDir};
pub use window::{ReplayWindow, WindowConfig};

use serde::{Deserialize, Serialize};

/// Version of the chunk file schema (this crate), stored as the `schema_version` attribute.
pub const SCHEMA_VERSION: u32 = 1;

/// One training example (a position where a search was run).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// C*H*W input planes (`vzero_encoding::InputEncoder` output).
    pub planes: Vec<f32>,
    /// Sparse search policy target (move index, probability); may be empty.
    pub policy: Vec<(u32, f32)>,
    /// Final game result for this row's side to move: win, draw, loss (for a game stopped at
    /// max plies, which has no result: the search's W/D/L at this row).
    pub wdl: [f32; 3],
    /// Root value of the search for the side to move, in [-1, 1].
    pub search_value: f32,
    /// Plies from this position to the end of the game.
    pub moves_left: f32,
    pub ply: u32,
    /// Row weight (value/all losses).
    pub weight: f32,
    /// 1 for a full search (policy recorded), 0 for a cheap one.
    pub policy_weight: f32,
}

/// One finished game, for opening statistics and PGN export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub variant: String,
    pub start_fen: String,
    /// UCI moves.
    pub moves: Vec<String>,
    /// "1-0", "0-1" or "1/2-1/2".
    pub result: String,
    /// checkmate, stalemate, campmate, repetition, fifty-move, resign, adjudication, max-plies.
    pub reason: String,
    /// Network id (checkpoint name) that played it.
    pub network: String,
    pub white: String,
    pub black: String,
    /// Per move: prior of the played move.
    pub priors: Vec<f32>,
    /// Per move: search value for the mover.
    pub values: Vec<f32>,
}

/// File-level metadata of a chunk (HDF5 attributes; `planes` and `policy_size` too).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkMeta {
    pub variant: String,
    pub encoding_version: u32,
    /// [C, H, W] of one row's input planes.
    pub planes: [usize; 3],
    /// Size of the move-index space (every policy index is below it).
    pub policy_size: usize,
    pub network: String,
    pub worker: String,
    pub created_unix: u64,
}

impl ChunkMeta {
    /// C*H*W.
    pub fn plane_len(&self) -> usize {
        self.planes.iter().product()
    }
}

/// Rows in column form (what a chunk stores, what the window caches and what a sampled batch
/// is). `policy_offsets` has `len() + 1` entries; row `i`'s policy is
/// `policy_index/policy_prob[policy_offsets[i]..policy_offsets[i+1]]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowBlock {
    /// C*H*W of one row.
    pub plane_len: usize,
    pub planes: Vec<f32>,
    pub policy_offsets: Vec<u64>,
    pub policy_index: Vec<u32>,
    pub policy_prob: Vec<f32>,
    pub wdl: Vec<[f32; 3]>,
    pub search_value: Vec<f32>,
    pub moves_left: Vec<f32>,
    pub ply: Vec<u32>,
    pub weight: Vec<f32>,
    pub policy_weight: Vec<f32>,
}

impl RowBlock {
    pub fn new(plane_len: usize) -> Self {
        RowBlock { plane_len, policy_offsets: vec![0], ..Default::default() }
    }

    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    pub fn is_empty(&self) -> bool {
        self.wdl.is_empty()
    }

    /// Empties the block, keeping its allocations and `plane_len`.
    pub fn clear(&mut self) {
        self.planes.clear();
        self.policy_offsets.clear();
        self.policy_offsets.push(0);
        self.policy_index.clear();
        self.policy_prob.clear();
        self.wdl.clear();
        self.search_value.clear();
        self.moves_left.clear();
        self.ply.clear();
        self.weight.clear();
        self.policy_weight.clear();
    }

    /// Row `i`'s policy target as (indices, probabilities).
    pub fn policy(&self, i: usize) -> (&[u32], &[f32]) {
        let r = self.policy_offsets[i] as usize..self.policy_offsets[i + 1] as usize;
        (&self.policy_index[r.clone()], &self.policy_prob[r])
    }

    pub fn row_planes(&self, i: usize) -> &[f32] {
        &self.planes[i * self.plane_len..(i + 1) * self.plane_len]
    }

    /// Appends one row. Panics if `row.planes.len() != plane_len` (use [`write_chunk`]'s checks
    /// for untrusted data).
    pub fn push(&mut self, row: &Row) {
        assert_eq!(row.planes.len(), self.plane_len, "row planes length");
        self.planes.extend_from_slice(&row.planes);
        for &(i, p) in &row.policy {
            self.policy_index.push(i);
            self.policy_prob.push(p);
        }
        self.policy_offsets.push(self.policy_index.len() as u64);
        self.wdl.push(row.wdl);
        self.search_value.push(row.search_value);
        self.moves_left.push(row.moves_left);
        self.ply.push(row.ply);
        self.weight.push(row.weight);
        self.policy_weight.push(row.policy_weight);
    }

    /// Appends row `i` of `other` (same `plane_len`).
    pub fn push_from(&mut self, other: &RowBlock, i: usize) {
        self.planes.extend_from_slice(other.row_planes(i));
        let (idx, prob) = other.policy(i);
        self.policy_index.extend_from_slice(idx);
        self.policy_prob.extend_from_slice(prob);
        self.policy_offsets.push(self.policy_index.len() as u64);
        self.wdl.push(other.wdl[i]);
        self.search_value.push(other.search_value[i]);
        self.moves_left.push(other.moves_left[i]);
        self.ply.push(other.ply[i]);
        self.weight.push(other.weight[i]);
        self.policy_weight.push(other.policy_weight[i]);
    }

    pub fn row(&self, i: usize) -> Row {
        let (idx, prob) = self.policy(i);
        Row {
            planes: self.row_planes(i).to_vec(),
            policy: idx.iter().copied().zip(prob.iter().copied()).collect(),
            wdl: self.wdl[i],
            search_value: self.search_value[i],
            moves_left: self.moves_left[i],
            ply: self.ply[i],
            weight: self.weight[i],
            policy_weight: self.policy_weight[i],
        }
    }

    pub fn to_rows(&self) -> Vec<Row> {
        (0..self.len()).map(|i| self.row(i)).collect()
    }

    pub fn from_rows(plane_len: usize, rows: &[Row]) -> Self {
        let mut b = RowBlock::new(plane_len);
        for r in rows {
            b.push(r);
        }
        b
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.planes.len() * 4 + self.policy_offsets.len() * 8 + self.policy_index.len() * 8 + self.len() * (12 + 4 * 5)
    }
}
