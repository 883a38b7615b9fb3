//! The bridge from game states to the network and back: encodes search leaves with the
//! variant's input and move encodings, runs one batched forward pass and returns priors over
//! each leaf's legal moves (in the search's order) with a W/D/L value.

use std::path::Path;
use std::sync::Arc;

use tch::Device;
use vzero_encoding::{InputEncoder, MoveEncoder};
use vzero_mcts::{Knowledge, LeafValue, Search, SearchResult, VariantGame};
use vzero_rules::{Move, Variant};

use crate::checkpoint::{self, CheckpointMeta};
use crate::config::NetConfig;
use crate::error::{ModelError, Result};
use crate::eval_server::{EvalClient, NetKey};
use crate::model::{Evaluation, LegalMoves, Model};
use crate::variant_net::{checkpoint_stem, load_model};

/// The search value of position `i` of an evaluation (from its W/D/L probabilities).
pub fn leaf_value(eval: &Evaluation, i: usize) -> LeafValue {
    let [w, d, l] = eval.wdl[i];
    LeafValue::from_wdl(w, d, l)
}

/// Where a [`NetEvaluator`]'s forward passes run.
enum Backend {
    /// Its own network, in the calling thread.
    Local(Model),
    /// A process's evaluation server, batched with other threads' leaves.
    Shared { client: EvalClient, key: Arc<NetKey> },
}

/// A network together with the encodings of its variant.
pub struct NetEvaluator {
    backend: Backend,
    input: InputEncoder,
    moves: MoveEncoder,
    name: String,
    planes: Vec<f32>,
    legal: LegalMoves,
    idx: Vec<u32>,
    eval: Evaluation,
    knowledge: Knowledge,
}

/// The encoders of `variant`, checked against the shape of a network config `cfg`.
fn encoders_for(variant: Variant, cfg: &NetConfig) -> Result<(InputEncoder, MoveEncoder)> {
    let input = InputEncoder::new(variant);
    let moves = MoveEncoder::new(variant);
    let want = (input.num_planes(), input.height(), input.width(), moves.len());
    let got = (cfg.input_planes, cfg.board_height, cfg.board_width, cfg.policy_size);
    if want != got {
        return Err(ModelError::Config(format!(
            "network (planes, height, width, policy) = {got:?} does not fit {} whose encoding needs {want:?}",
            variant.name()
        )));
    }
    Ok((input, moves))
}

impl NetEvaluator {
    /// Wraps a model; checks that its shape fits the variant's encodings.
    pub fn new(model: Model, variant: Variant, name: impl Into<String>) -> Result<NetEvaluator> {
        let (input, moves) = encoders_for(variant, model.config())?;
        Ok(NetEvaluator {
            backend: Backend::Local(model),
            input,
            moves,
            name: name.into(),
            planes: Vec::new(),
            legal: LegalMoves::new(),
            idx: Vec::new(),
            eval: Evaluation::default(),
            knowledge: Knowledge::default(),
        })
    }

    /// Loads a checkpoint of `variant`, refusing one of another variant or encoding version.
    pub fn load(path: &Path, variant: Variant, device: Device) -> Result<(NetEvaluator, CheckpointMeta)> {
        let (model, meta) = load_model(path, variant, device)?;
        let mut net = NetEvaluator::new(model, variant, checkpoint_stem(path))?;
        net.knowledge = meta.knowledge.unwrap_or_default();
        Ok((net, meta))
    }

    /// Like [`NetEvaluator::load`], with the forward passes run by a process's evaluation
    /// server through `client` (the server loads and checks the checkpoint before this returns).
    pub fn load_shared(path: &Path, variant: Variant, device: Device, mut client: EvalClient) -> Result<(NetEvaluator, CheckpointMeta)> {
        let meta = checkpoint::read_meta(path)?;
        let key = Arc::new(NetKey { path: path.to_path_buf(), variant, device });
        // no positions: the server loads the network (and reports what is wrong with it)
        client.evaluate(&key, &mut Vec::new(), &mut LegalMoves::new(), &mut Evaluation::default())?;
        let (input, moves) = encoders_for(variant, &meta.net)?;
        let net = NetEvaluator {
            backend: Backend::Shared { client, key },
            input,
            moves,
            name: checkpoint_stem(path),
            planes: Vec::new(),
            legal: LegalMoves::new(),
            idx: Vec::new(),
            eval: Evaluation::default(),
            knowledge: meta.knowledge.unwrap_or_default(),
        };
        Ok((net, meta))
    }

    /// The heuristic knowledge blended into every evaluation (inactive unless the checkpoint
    /// recorded one or [`NetEvaluator::set_knowledge`] set it).
    pub fn knowledge(&self) -> Knowledge {
        self.knowledge
    }

    /// Sets the knowledge blend (e.g. `Knowledge::default()` to evaluate with the network alone).
    pub fn set_knowledge(&mut self, knowledge: Knowledge) {
        self.knowledge = knowledge;
    }

    /// Checkpoint name (file stem) or the name given to [`NetEvaluator::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The network, when it runs in this thread (not through an evaluation server).
    pub fn model(&self) -> Option<&Model> {
        match &self.backend {
            Backend::Local(m) => Some(m),
            Backend::Shared { .. } => None,
        }
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
        let eval = self.evaluate_batch(states, moves)?;
        Ok((0..eval.len()).map(|i| (eval.policy(i).to_vec(), leaf_value(eval, i))).collect())
    }

    /// Like [`NetEvaluator::evaluate`] without allocating: encodes the leaves into reused
    /// buffers, runs one batched forward pass and returns the evaluation, valid until the next
    /// call. `policy(i)` are the priors of `moves[i]` (same order); [`leaf_value`] gives the
    /// value of leaf `i`.
    pub fn evaluate_batch(&mut self, states: &[&VariantGame], moves: &[&[Move]]) -> Result<&Evaluation> {
        let n = states.len();
        if moves.len() != n {
            return Err(ModelError::Input(format!("{n} states but {} move lists", moves.len())));
        }
        let size = self.input.size();
        self.planes.resize(n * size, 0.0);
        self.legal.clear();
        for (i, (state, ms)) in states.iter().zip(moves).enumerate() {
            let pos = state.position();
            self.input.encode_into(pos, state.repetitions(), &mut self.planes[i * size..(i + 1) * size]);
            self.idx.clear();
            for &m in ms.iter() {
                let k = self.moves.encode(pos, m).ok_or_else(|| {
                    ModelError::Config(format!("move {} of {} has no policy index", pos.uci(m), pos.fen()))
                })?;
                self.idx.push(k as u32);
            }
            self.legal.push(&self.idx);
        }
        match &mut self.backend {
            Backend::Local(model) => model.evaluate_into(&self.planes, None, &self.legal, &mut self.eval)?,
            Backend::Shared { client, key } => client.evaluate(key, &mut self.planes, &mut self.legal, &mut self.eval)?,
        }
        let k = self.knowledge;
        if k.is_active() {
            // Blend the heuristics into the evaluation in place, so every caller (self-play,
            // players, `run_search`) sees the blended priors and W/D/L.
            for i in 0..n {
                let [w, d, l] = self.eval.wdl[i];
                let range = self.eval.offsets[i]..self.eval.offsets[i + 1];
                let v = k.apply(states[i], moves[i], &mut self.eval.policy[range], LeafValue::from_wdl(w, d, l));
                self.eval.wdl[i] = v.wdl();
            }
        }
        Ok(&self.eval)
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
            let eval = self.evaluate_batch(&states, &moves)?;
            for (i, leaf) in leaves.iter().enumerate() {
                search.apply(leaf.handle, eval.policy(i), leaf_value(eval, i));
            }
        }
        Ok(search.finish())
    }
}
