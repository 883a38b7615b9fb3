//! [`Model`]: a network plus its variables on one device, and the batched inference API.

use std::cell::{Cell, RefCell};

use tch::{nn, Device, Kind, Tensor};

use crate::config::NetConfig;
use crate::error::{ModelError, Result};
use crate::infer::{InferNet, InferencePrecision, InputBuf};
use crate::net::{Net, NetOutput, Pass, MOVES_LEFT_SCALE};

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
///
/// [`Model::evaluate`] runs a folded inference copy of the network (see `crate::infer`: BN
/// folded into the convs, channels-last, f32 or BF16 per [`InferencePrecision`]), built on first
/// use and rebuilt after the weights change: after checkpoint loads, [`Trainer::step`](crate::Trainer::step),
/// a train-mode [`Model::forward_t`], [`Model::var_store_mut`] and [`Model::refold`].
pub struct Model {
    vs: nn::VarStore,
    net: Net,
    precision: Cell<InferencePrecision>,
    /// Bumped whenever the weights may have changed; folded nets of older generations are stale.
    generation: Cell<u64>,
    infer: RefCell<InferCache>,
}

/// Folded nets (one per element kind) and reusable host buffers of the inference path.
#[derive(Default)]
struct InferCache {
    nets: Vec<(u64, InferNet)>,
    input: InputBuf,
    rows: Vec<i64>,
    cols: Vec<i64>,
    host: Vec<f32>,
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
    ///
    /// The inference precision comes from [`crate::PRECISION_ENV`] (default `auto`); an unknown
    /// value is an error.
    pub fn new(config: &NetConfig, device: Device) -> Result<Self> {
        Self::build(config, device, None)
    }

    /// Builds the network holding torch's global generator while its weights are drawn, so a
    /// seeded build elsewhere in the process is not disturbed ([`crate::device::with_torch_seed`]).
    fn build(config: &NetConfig, device: Device, policy_map: Option<&[u32]>) -> Result<Self> {
        crate::device::holding_torch_rng(|| {
            let vs = nn::VarStore::new(device);
            let net = Net::new(&vs.root(), config, policy_map)?;
            Self::wrap(vs, net)
        })
    }

    /// A fresh network whose initial weights depend on `seed` alone, with a policy map for a
    /// `PolicyHead::Mapped` head (see [`Model::with_policy_map`]).
    pub fn seeded(config: &NetConfig, device: Device, policy_map: Option<&[u32]>, seed: u64) -> Result<Self> {
        crate::device::with_torch_seed(seed, || Self::build(config, device, policy_map))
    }

    fn wrap(vs: nn::VarStore, net: Net) -> Result<Self> {
        crate::device::tune_malloc();
        Ok(Model {
            vs,
            net,
            precision: Cell::new(InferencePrecision::from_env()?),
            generation: Cell::new(0),
            infer: RefCell::new(InferCache::default()),
        })
    }

    /// A fresh network with a `PolicyHead::Mapped` policy head: `policy_map[i]` is the cell
    /// (plane * H*W + square) of the head's `planes x H x W` output that gives move `i`'s logit.
    pub fn with_policy_map(config: &NetConfig, device: Device, policy_map: &[u32]) -> Result<Self> {
        Self::build(config, device, Some(policy_map))
    }

    /// The policy map of a `PolicyHead::Mapped` network (None for other heads).
    pub fn policy_map(&self) -> Option<Vec<u32>> {
        self.net.policy_map()
    }

    /// Like [`Model::new`] with initial weights that depend on `seed` alone (torch's global RNG,
    /// seeded and held for the construction: [`crate::device::with_torch_seed`]).
    pub fn new_seeded(config: &NetConfig, device: Device, seed: u64) -> Result<Self> {
        Self::seeded(config, device, None, seed)
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

    /// Mutable access to the variables; marks the inference fold stale (see [`Model::refold`]).
    pub fn var_store_mut(&mut self) -> &mut nn::VarStore {
        self.refold();
        &mut self.vs
    }

    /// Marks the folded inference network stale, so the next [`Model::evaluate`] rebuilds it
    /// from the current weights. Checkpoint loading, [`crate::Trainer::step`], train-mode
    /// [`Model::forward_t`] and [`Model::var_store_mut`] do this themselves; call it after
    /// changing weights in place through [`Model::var_store`].
    pub fn refold(&self) {
        self.generation.set(self.generation.get().wrapping_add(1));
    }

    /// The precision setting of [`Model::evaluate`].
    pub fn inference_precision(&self) -> InferencePrecision {
        self.precision.get()
    }

    /// Sets the precision of [`Model::evaluate`] (overrides [`crate::PRECISION_ENV`]).
    pub fn set_inference_precision(&self, precision: InferencePrecision) {
        self.precision.set(precision);
    }

    /// The precision (`F32` or `Bf16`, never `Auto`) that [`Model::evaluate`] uses for a batch
    /// of `batch` positions with the current setting.
    pub fn resolved_precision(&self, batch: usize) -> InferencePrecision {
        match self.precision.get().kind_for(self.device(), batch) {
            Kind::BFloat16 => InferencePrecision::Bf16,
            _ => InferencePrecision::F32,
        }
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
    /// Does not disable autograd; wrap in `tch::no_grad` for inference. This is the reference
    /// (unfused, f32) network; a train-mode pass updates the BN statistics and so marks the
    /// inference fold stale.
    pub fn forward_t(&self, planes: &Tensor, globals: Option<&Tensor>, train: bool) -> NetOutput {
        self.forward_pass(planes, globals, Pass::f32(train))
    }

    /// [`Model::forward_t`] with the precision chosen too: a [`Pass`] with `bf16` runs the
    /// convolutions and linear layers in BF16 (mixed-precision training, [`crate::TrainPrecision`]).
    pub fn forward_pass(&self, planes: &Tensor, globals: Option<&Tensor>, pass: Pass) -> NetOutput {
        if pass.train {
            self.refold();
        }
        self.net.forward_t(planes, globals, pass)
    }

    /// Copies a batch of host inputs to tensors on this model's device, after checking sizes.
    pub fn input_tensors(
        &self,
        batch: usize,
        planes: &[f32],
        globals: Option<&[f32]>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        self.check_inputs(batch, planes, globals)?;
        let cfg = self.config();
        let dims = [
            batch as i64,
            cfg.input_planes as i64,
            cfg.board_height as i64,
            cfg.board_width as i64,
        ];
        let x = Tensor::from_slice(planes)
            .view(dims)
            .to_device(self.device());
        Ok((x, self.globals_tensor(batch, globals)))
    }

    /// [B, G] f32 tensor of checked global inputs (None when the net has none).
    fn globals_tensor(&self, batch: usize, globals: Option<&[f32]>) -> Option<Tensor> {
        let n = self.config().global_inputs;
        match globals {
            Some(g) if n > 0 => Some(
                Tensor::from_slice(g)
                    .view([batch as i64, n as i64])
                    .to_device(self.device()),
            ),
            _ => None,
        }
    }

    /// Checks the sizes of a batch of host inputs.
    fn check_inputs(&self, batch: usize, planes: &[f32], globals: Option<&[f32]>) -> Result<()> {
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
        match (cfg.global_inputs, globals) {
            (0, None) | (0, Some([])) => Ok(()),
            (0, Some(_)) => Err(ModelError::Input(
                "global inputs given but the network has none".into(),
            )),
            (n, None) => Err(ModelError::Input(format!(
                "the network needs {n} global inputs per position"
            ))),
            (n, Some(g)) if g.len() != batch * n => Err(ModelError::Input(format!(
                "globals has {} values, expected {batch} positions x {n} = {}",
                g.len(),
                batch * n
            ))),
            _ => Ok(()),
        }
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
        clear_eval(out, legal);
        if b == 0 {
            return Ok(());
        }
        self.check_inputs(b, planes, globals)?;
        let kind = self.precision.get().kind_for(self.device(), b);
        let mut cache = self.infer.borrow_mut();
        let InferCache {
            nets,
            input,
            rows,
            cols,
            host,
        } = &mut *cache;
        let gen = self.generation.get();
        nets.retain(|(g, _)| *g == gen);
        let pos = match nets.iter().position(|(_, n)| n.kind() == kind) {
            Some(pos) => pos,
            None => {
                nets.push((gen, InferNet::fold(&self.net, kind, self.device())?));
                nets.len() - 1
            }
        };
        let net = &nets[pos].1;
        let p = self.config().policy_size;
        rows.clear();
        cols.clear();
        for i in 0..b {
            for &m in legal.get(i) {
                if m as usize >= p {
                    return Err(ModelError::Input(format!(
                        "position {i}: move index {m} out of range (policy_size {p})"
                    )));
                }
                net.push_readout(i, m, rows, cols);
            }
        }
        let x = net.input_tensor(planes, b, input);
        let g = self.globals_tensor(b, globals);
        tch::no_grad(|| -> Result<()> {
            let dev = self.device();
            let rows_t = Tensor::from_slice(rows).to_device(dev);
            let cols_t = Tensor::from_slice(cols).to_device(dev);
            let o = net.forward(&x, g.as_ref(), &rows_t, &cols_t);
            let mut parts = vec![o.legal_logits];
            let mut values = o.values.into_iter();
            if let Some(wdl) = values.next() {
                parts.push(wdl.softmax(-1, Kind::Float).reshape([-1]));
            }
            if let Some(ml) = values.next() {
                parts.push((ml.reshape([-1]) * MOVES_LEFT_SCALE).clamp_min(0.0));
            }
            let all = Tensor::cat(&parts, 0).to_device(Device::Cpu);
            let n = all.numel();
            host.clear();
            host.resize(n, 0.0);
            all.f_copy_data(host, n)?;
            Ok(())
        })?;
        let n = cols.len();
        for (l, &c) in host[..n].iter_mut().zip(cols.iter()) {
            *l += net.policy_bias(c);
        }
        finish_eval(out, host, n, b);
        Ok(())
    }

    /// [`Model::evaluate_into`] through the reference network ([`Model::forward_t`] in eval
    /// mode: unfused BN, f32, full policy output): the oracle the fast path is tested against,
    /// and a baseline for benchmarks.
    pub fn evaluate_reference_into(
        &self,
        planes: &[f32],
        globals: Option<&[f32]>,
        legal: &LegalMoves,
        out: &mut Evaluation,
    ) -> Result<()> {
        let b = legal.len();
        let p = self.config().policy_size;
        clear_eval(out, legal);
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
        finish_eval(out, &host, flat_idx.len(), b);
        Ok(())
    }
}

/// Empties `out` and copies the CSR offsets of `legal`.
fn clear_eval(out: &mut Evaluation, legal: &LegalMoves) {
    out.offsets.clear();
    out.offsets.extend_from_slice(legal.offsets());
    out.policy.clear();
    out.wdl.clear();
    out.moves_left.clear();
}

/// Fills `out` from `host` = `n` legal-move logits, then 3 x `b` W/D/L probabilities, then the
/// moves-left values (if any): softmax of the logits per position.
fn finish_eval(out: &mut Evaluation, host: &[f32], n: usize, b: usize) {
    let (logits, rest) = host.split_at(n);
    out.policy.extend_from_slice(logits);
    for i in 0..b {
        softmax_in_place(&mut out.policy[out.offsets[i]..out.offsets[i + 1]]);
    }
    let (wdl, ml) = rest.split_at(3 * b);
    out.wdl
        .extend(wdl.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
    out.moves_left.extend_from_slice(ml);
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
