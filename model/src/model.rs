//! [`Model`]: a network plus its variables on one device, and the batched inference API.

use tch::{nn, Device, Kind, Tensor};

use crate::config::NetConfig;
use crate::error::{ModelError, Result};
use crate::net::{Net, NetOutput, MOVES_LEFT_SCALE};

/// Legal moves of a batch of positions in CSR form: position `i`'s move indices are
/// `moves[offsets[i]..offsets[i+1]]`. Reuse one instance across batches (`clear` keeps the
/// allocations).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LegalMoves {
    offsets: Vec<usize>,
    moves: Vec<u32>,
}

impl LegalMoves {
    pub fn new() -> Self {
        LegalMoves {
            offsets: vec![0],
            moves: Vec::new(),
        }
    }

    pub fn with_capacity(positions: usize, moves: usize) -> Self {
        let mut offsets = Vec::with_capacity(positions + 1);
        offsets.push(0);
        LegalMoves {
            offsets,
            moves: Vec::with_capacity(moves),
        }
    }

    pub fn from_lists<V: AsRef<[u32]>>(lists: &[V]) -> Self {
        let mut lm = Self::with_capacity(lists.len(), lists.iter().map(|l| l.as_ref().len()).sum());
        for l in lists {
            lm.push(l.as_ref());
        }
        lm
    }

    /// Appends one position's legal move indices.
    pub fn push(&mut self, moves: &[u32]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.moves.extend_from_slice(moves);
        self.offsets.push(self.moves.len());
    }

    /// Appends one position's legal move indices from an iterator.
    pub fn push_iter(&mut self, moves: impl IntoIterator<Item = u32>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.moves.extend(moves);
        self.offsets.push(self.moves.len());
    }

    pub fn clear(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.moves.clear();
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> &[u32] {
        &self.moves[self.offsets[i]..self.offsets[i + 1]]
    }

    pub fn offsets(&self) -> &[usize] {
        if self.offsets.is_empty() {
            &[0]
        } else {
            &self.offsets
        }
    }

    /// All move indices, position after position.
    pub fn flat(&self) -> &[u32] {
        &self.moves
    }
}

/// Result of [`Model::evaluate`]: for position `i`, `policy(i)[k]` is the probability of
/// its `k`-th legal move (same order as in the [`LegalMoves`]), `wdl[i]` = [win, draw, loss]
/// probabilities for the side to move, `moves_left[i]` = expected remaining plies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    pub offsets: Vec<usize>,
    /// Probabilities of all legal moves, position after position (CSR with `offsets`).
    pub policy: Vec<f32>,
    pub wdl: Vec<[f32; 3]>,
    /// Empty when the network has no moves-left head.
    pub moves_left: Vec<f32>,
}

impl Evaluation {
    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    pub fn is_empty(&self) -> bool {
        self.wdl.is_empty()
    }

    pub fn policy(&self, i: usize) -> &[f32] {
        &self.policy[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Win minus loss probability, in [-1, 1], side to move's point of view.
    pub fn value(&self, i: usize) -> f32 {
        self.wdl[i][0] - self.wdl[i][2]
    }
}

/// A network with its variables on one device. `Send` but not `Sync` (tch tensors): give each
/// inference worker thread its own `Model` (e.g. load the same checkpoint once per worker).
pub struct Model {
    vs: nn::VarStore,
    net: Net,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("config", self.config())
            .field("device", &self.device())
            .finish()
    }
}

impl Model {
    /// A freshly initialised network (random weights from torch's global RNG). For
    /// `PolicyHead::Mapped` use [`Model::with_policy_map`].
    pub fn new(config: &NetConfig, device: Device) -> Result<Self> {
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), config, None)?;
        Ok(Model { vs, net })
    }

    /// A fresh network with a `PolicyHead::Mapped` policy head: `policy_map[i]` is the cell
    /// (plane * H*W + square) of the head's `planes x H x W` output that gives move `i`'s logit.
    pub fn with_policy_map(config: &NetConfig, device: Device, policy_map: &[u32]) -> Result<Self> {
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), config, Some(policy_map))?;
        Ok(Model { vs, net })
    }

    /// The policy map of a `PolicyHead::Mapped` network (None for other heads).
    pub fn policy_map(&self) -> Option<Vec<u32>> {
        self.net.policy_map()
    }

    /// Like [`Model::new`] but seeds torch's (process-global) RNG first, for reproducible
    /// initial weights.
    pub fn new_seeded(config: &NetConfig, device: Device, seed: u64) -> Result<Self> {
        tch::manual_seed(seed as i64);
        Self::new(config, device)
    }

    pub fn config(&self) -> &NetConfig {
        self.net.config()
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        &mut self.vs
    }

    /// Number of trainable parameters.
    pub fn num_parameters(&self) -> usize {
        self.vs
            .trainable_variables()
            .iter()
            .map(|t| t.numel())
            .sum()
    }

    /// Raw forward pass on tensors already on this model's device: `planes` [B, C, H, W],
    /// `globals` [B, G]. `train` selects batch-statistics BN (true) or running-statistics BN.
    /// Does not disable autograd; wrap in `tch::no_grad` for inference.
    pub fn forward_t(&self, planes: &Tensor, globals: Option<&Tensor>, train: bool) -> NetOutput {
        self.net.forward_t(planes, globals, train)
    }

    /// Copies a batch of host inputs to tensors on this model's device, after checking sizes.
    pub fn input_tensors(
        &self,
        batch: usize,
        planes: &[f32],
        globals: Option<&[f32]>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let cfg = self.config();
        let per = cfg.input_len();
        if planes.len() != batch * per {
            return Err(ModelError::Input(format!(
                "planes has {} values, expected {batch} positions x {} planes x {}x{} = {}",
                planes.len(),
                cfg.input_planes,
                cfg.board_height,
                cfg.board_width,
                batch * per
            )));
        }
        let dims = [
            batch as i64,
            cfg.input_planes as i64,
            cfg.board_height as i64,
            cfg.board_width as i64,
        ];
        let x = Tensor::from_slice(planes)
            .view(dims)
            .to_device(self.device());
        let g = match (cfg.global_inputs, globals) {
            (0, None) => None,
            (0, Some([])) => None,
            (0, Some(_)) => {
                return Err(ModelError::Input(
                    "global inputs given but the network has none".into(),
                ))
            }
            (n, None) => {
                return Err(ModelError::Input(format!(
                    "the network needs {n} global inputs per position"
                )))
            }
            (n, Some(g)) if g.len() != batch * n => {
                return Err(ModelError::Input(format!(
                    "globals has {} values, expected {batch} positions x {n} = {}",
                    g.len(),
                    batch * n
                )))
            }
            (n, Some(g)) => Some(
                Tensor::from_slice(g)
                    .view([batch as i64, n as i64])
                    .to_device(self.device()),
            ),
        };
        Ok((x, g))
    }

    /// Batched inference: `planes` is B x C x H x W (row-major, B = `legal.len()`), `globals`
    /// B x G when the network has global inputs. Returns, for each position, the softmax of the
    /// policy logits restricted to its legal moves (illegal moves get no probability mass) and
    /// the W/D/L probabilities. Runs under `no_grad` with eval-mode BN; only the legal moves'
    /// logits are copied back from the device (one transfer per call).
    pub fn evaluate(
        &self,
        planes: &[f32],
        globals: Option<&[f32]>,
        legal: &LegalMoves,
    ) -> Result<Evaluation> {
        let mut out = Evaluation::default();
        self.evaluate_into(planes, globals, legal, &mut out)?;
        Ok(out)
    }

    /// [`Model::evaluate`] with `&[Vec<u32>]` legal-move lists.
    pub fn evaluate_lists<V: AsRef<[u32]>>(
        &self,
        planes: &[f32],
        globals: Option<&[f32]>,
        legal: &[V],
    ) -> Result<Evaluation> {
        self.evaluate(planes, globals, &LegalMoves::from_lists(legal))
    }

    /// [`Model::evaluate`] writing into `out`, reusing its allocations.
    pub fn evaluate_into(
        &self,
        planes: &[f32],
        globals: Option<&[f32]>,
        legal: &LegalMoves,
        out: &mut Evaluation,
    ) -> Result<()> {
        let b = legal.len();
        let p = self.config().policy_size;
        out.offsets.clear();
        out.offsets.extend_from_slice(legal.offsets());
        out.policy.clear();
        out.wdl.clear();
        out.moves_left.clear();
        if b == 0 {
            return Ok(());
        }
        let mut flat_idx = Vec::with_capacity(legal.flat().len());
        for i in 0..b {
            for &m in legal.get(i) {
                if m as usize >= p {
                    return Err(ModelError::Input(format!(
                        "position {i}: move index {m} out of range (policy_size {p})"
                    )));
                }
                flat_idx.push((i * p) as i64 + m as i64);
            }
        }
        let (x, g) = self.input_tensors(b, planes, globals)?;
        let host: Vec<f32> = tch::no_grad(|| -> Result<Vec<f32>> {
            let o = self.forward_t(&x, g.as_ref(), false);
            let idx = Tensor::from_slice(&flat_idx).to_device(self.device());
            let legal_logits = o
                .policy
                .reshape([-1])
                .index_select(0, &idx)
                .to_kind(Kind::Float);
            let wdl = o.wdl.softmax(-1, Kind::Float).reshape([-1]);
            let mut parts = vec![legal_logits, wdl];
            if let Some(ml) = o.moves_left {
                parts.push((ml.to_kind(Kind::Float) * MOVES_LEFT_SCALE).clamp_min(0.0));
            }
            let all = Tensor::cat(&parts, 0).to_device(Device::Cpu);
            Ok(Vec::<f32>::try_from(&all)?)
        })?;
        let n = flat_idx.len();
        let (logits, rest) = host.split_at(n);
        out.policy.extend_from_slice(logits);
        for i in 0..b {
            softmax_in_place(&mut out.policy[out.offsets[i]..out.offsets[i + 1]]);
        }
        let (wdl, ml) = rest.split_at(3 * b);
        out.wdl
            .extend(wdl.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
        out.moves_left.extend_from_slice(ml);
        Ok(())
    }
}

fn softmax_in_place(v: &mut [f32]) {
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f64;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        sum += *x as f64;
    }
    if sum.is_finite() && sum > 0.0 {
        let inv = (1.0 / sum) as f32;
        v.iter_mut().for_each(|x| *x *= inv);
    } else {
        // NaN/inf logits (diverged net): uniform rather than propagating NaN into the search.
        let u = 1.0 / v.len() as f32;
        v.iter_mut().for_each(|x| *x = u);
    }
}
