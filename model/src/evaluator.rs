//! The bridge from game states to the network and back: encodes search leaves with the
//! variant's input and move encodings, runs one batched forward pass and returns priors over
//! each leaf's legal moves (in the search's order) with a W/D/L value.

use std::path::Path;

use tch::Device;
use vzero_encoding::{InputEncoder, MoveEncoder, ENCODING_VERSION};
use vzero_mcts::{LeafValue, Search, SearchResult, VariantGame};
use vzero_rules::{Move, Variant};

use crate::checkpoint::{self, CheckpointMeta, Expected};
use crate::config::NetConfig;
use crate::error::{ModelError, Result};
use crate::model::{LegalMoves, Model};

/// A network together with the encodings of its variant.
pub struct NetEvaluator {
    model: Model,
    input: InputEncoder,
    moves: MoveEncoder,
    name: String,
    planes: Vec<f32>,
    legal: LegalMoves,
}

/// The network shape for `variant` with `blocks` x `channels` and the default heads.
pub fn net_config(variant: Variant, blocks: usize, channels: usize) -> NetConfig {
    let input = InputEncoder::new(variant);
    let moves = MoveEncoder::new(variant);
    NetConfig::with_size(input.num_planes(), input.height(), input.width(), moves.len(), blocks, channels)
}

impl NetEvaluator {
    /// Wraps a model; checks that its shape fits the variant's encodings.
    pub fn new(model: Model, variant: Variant, name: impl Into<String>) -> Result<NetEvaluator> {
        let input = InputEncoder::new(variant);
        let moves = MoveEncoder::new(variant);
        let cfg = model.config();
        let want = (input.num_planes(), input.height(), input.width(), moves.len());
        let got = (cfg.input_planes, cfg.board_height, cfg.board_width, cfg.policy_size);
        if want != got {
            return Err(ModelError::Config(format!(
                "network (planes, height, width, policy) = {got:?} does not fit {} whose encoding needs {want:?}",
                variant.name()
            )));
        }
        Ok(NetEvaluator { model, input, moves, name: name.into(), planes: Vec::new(), legal: LegalMoves::new() })
    }

    /// Loads a checkpoint of `variant`, refusing one of another variant or encoding version.
    pub fn load(path: &Path, variant: Variant, device: Device) -> Result<(NetEvaluator, CheckpointMeta)> {
        let (model, meta) = checkpoint::load(path, &Expected::new(variant.name(), ENCODING_VERSION), device)?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok((NetEvaluator::new(model, variant, name)?, meta))
    }

    /// Checkpoint name (file stem) or the name given to [`NetEvaluator::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The network.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The input encoder.
    pub fn input(&self) -> &InputEncoder {
        &self.input
    }

    /// The move encoder.
    pub fn moves(&self) -> &MoveEncoder {
        &self.moves
    }

    /// Evaluates leaves: for each state, priors over `moves[i]` (same order) and its value.
    pub fn evaluate(&mut self, states: &[&VariantGame], moves: &[&[Move]]) -> Result<Vec<(Vec<f32>, LeafValue)>> {
        let n = states.len();
        let size = self.input.size();
        self.planes.resize(n * size, 0.0);
        self.legal.clear();
        for (i, (state, ms)) in states.iter().zip(moves).enumerate() {
            let pos = state.position();
            self.input.encode_into(pos, state.repetitions(), &mut self.planes[i * size..(i + 1) * size]);
            let mut idx = Vec::with_capacity(ms.len());
            for &m in ms.iter() {
                let k = self.moves.encode(pos, m).ok_or_else(|| {
                    ModelError::Config(format!("move {} of {} has no policy index", pos.uci(m), pos.fen()))
                })?;
                idx.push(k as u32);
            }
            self.legal.push(&idx);
        }
        let eval = self.model.evaluate(&self.planes, None, &self.legal)?;
        Ok((0..n)
            .map(|i| {
                let [w, d, l] = eval.wdl[i];
                (eval.policy(i).to_vec(), LeafValue::from_wdl(w, d, l))
            })
            .collect())
    }

    /// Runs one search to its budget (already started with `start`/`start_with`), evaluating
    /// up to `batch` leaves per forward pass.
    pub fn run_search(&mut self, search: &mut Search<VariantGame>, batch: usize) -> Result<Option<SearchResult<Move>>> {
        let mut leaves = Vec::new();
        while !search.is_done() {
            leaves.clear();
            search.gather(batch.max(1), &mut leaves);
            if leaves.is_empty() {
                continue;
            }
            let states: Vec<&VariantGame> = leaves.iter().map(|l| &l.state).collect();
            let moves: Vec<&[Move]> = leaves.iter().map(|l| search.leaf_moves(l.handle)).collect();
            let evals = self.evaluate(&states, &moves)?;
            for (leaf, (priors, value)) in leaves.iter().zip(evals) {
                search.apply(leaf.handle, &priors, value);
            }
        }
        Ok(search.finish())
    }
}
