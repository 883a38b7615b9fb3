//! Training step: losses, optimizers (SGD with momentum / AdamW), learning rate.

use serde::{Deserialize, Serialize};
use tch::{nn, nn::OptimizerConfig, Device, Kind, Reduction, Tensor};

use crate::error::{ModelError, Result};
use crate::infer::cpu_has_amx_bf16;
use crate::model::Model;
use crate::net::{Pass, MOVES_LEFT_SCALE, NO_DECAY_GROUP};

/// Numeric precision of the training passes ([`Trainer::step`], [`Trainer::evaluate`]). The
/// weights, the optimizer state and the losses are always f32; `Bf16` runs the convolutions and
/// linear layers in BF16 (mixed precision with f32 master weights, [`Pass::bf16`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrainPrecision {
    /// Everything in f32 (the default: the only precision measured to train as well).
    #[default]
    F32,
    /// BF16 convolutions and linear layers on any device (slow without hardware BF16).
    Bf16,
    /// BF16 on a CPU with AMX-BF16 ([`cpu_has_amx_bf16`]), f32 elsewhere.
    Auto,
}

impl TrainPrecision {
    /// Whether a training pass on `device` runs in BF16.
    pub fn bf16_on(self, device: Device) -> bool {
        match self {
            TrainPrecision::F32 => false,
            TrainPrecision::Bf16 => true,
            TrainPrecision::Auto => device == Device::Cpu && cpu_has_amx_bf16(),
        }
    }
}

impl std::str::FromStr for TrainPrecision {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "fp32" => Ok(TrainPrecision::F32),
            "bf16" | "bfloat16" => Ok(TrainPrecision::Bf16),
            "auto" => Ok(TrainPrecision::Auto),
            other => Err(ModelError::Config(format!(
                "unknown training precision '{other}' (expected f32, bf16 or auto)"
            ))),
        }
    }
}

impl std::fmt::Display for TrainPrecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TrainPrecision::F32 => "f32",
            TrainPrecision::Bf16 => "bf16",
            TrainPrecision::Auto => "auto",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Optimizer {
    /// SGD with momentum (Nesterov optional) and L2 weight decay.
    Sgd { momentum: f64, nesterov: bool },
    /// AdamW (decoupled weight decay).
    AdamW { beta1: f64, beta2: f64, eps: f64 },
}

/// Optimizer, learning rate and loss weights. Weight decay applies to conv/linear weights only,
/// not to BN parameters and biases.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    pub optimizer: Optimizer,
    pub lr: f64,
    pub weight_decay: f64,
    /// What each loss counts in the total.
    pub loss: LossWeights,
    /// Clip the global gradient norm to this value (None = no clipping).
    pub grad_clip_norm: Option<f64>,
    /// Precision of the training passes (default f32).
    pub precision: TrainPrecision,
    /// A fixed bias added to the policy logits before the main policy loss (None: none).
    pub policy_bias: Option<PolicyBias>,
}

/// A fixed bias on the policy logits in training: `gain` times the value of the opponent piece
/// each policy index takes, read off the input planes ([`vzero_encoding::CaptureMap`]). The
/// network then learns its policy as a residual over the capture prior, which searches multiply
/// back in (`vzero_mcts::PriorMode::Product`, gain `prior_weight · CAPTURE_PRIOR_GAIN`).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyBias {
    /// Per input plane, the value it marks on its squares.
    pub plane_values: Vec<f32>,
    /// Per policy index, the square whose value it gets (`area`: none).
    pub landing: Vec<u32>,
    /// Logits per unit of value.
    pub gain: f32,
}

impl PolicyBias {
    /// The capture prior's bias for `variant` at `gain` logits per pawn of victim.
    pub fn capture(variant: vzero_rules::Variant, gain: f32) -> PolicyBias {
        let map = vzero_encoding::CaptureMap::new(variant);
        PolicyBias { plane_values: map.plane_values().to_vec(), landing: map.landing().to_vec(), gain }
    }
}

/// [`PolicyBias`] as tensors on the model's device.
struct BiasTensors {
    /// [1, C, 1, 1].
    plane_values: Tensor,
    /// [P] indices into the board squares plus one zero square.
    landing: Tensor,
    gain: f64,
}

impl BiasTensors {
    fn new(b: &PolicyBias, cfg: &crate::NetConfig, dev: Device) -> Result<BiasTensors> {
        let area = cfg.board_height * cfg.board_width;
        if b.plane_values.len() != cfg.input_planes {
            return Err(ModelError::Config(format!("policy bias: {} plane values for {} input planes", b.plane_values.len(), cfg.input_planes)));
        }
        if b.landing.len() != cfg.policy_size {
            return Err(ModelError::Config(format!("policy bias: {} landing squares for policy size {}", b.landing.len(), cfg.policy_size)));
        }
        if let Some(&s) = b.landing.iter().find(|&&s| s as usize > area) {
            return Err(ModelError::Config(format!("policy bias: landing square {s} beyond the board's {area}")));
        }
        if !b.gain.is_finite() {
            return Err(ModelError::Config(format!("policy bias: gain {} is not finite", b.gain)));
        }
        let landing: Vec<i64> = b.landing.iter().map(|&s| s as i64).collect();
        Ok(BiasTensors {
            plane_values: Tensor::from_slice(&b.plane_values).view([1, -1, 1, 1]).to_device(dev),
            landing: Tensor::from_slice(&landing).to_device(dev),
            gain: b.gain as f64,
        })
    }

    /// [B, P] bias for the input planes `x` [B, C, H, W].
    fn of(&self, x: &Tensor) -> Tensor {
        let b = x.size()[0];
        let board = (x.to_kind(Kind::Float) * &self.plane_values).sum_dim_intlist(1, false, Kind::Float).view([b, -1]);
        let board = Tensor::cat(&[board, Tensor::zeros([b, 1], (Kind::Float, x.device()))], 1);
        board.index_select(1, &self.landing) * self.gain
    }
}

/// The weight of each loss in the total the optimizer minimises; an auxiliary head's weight is
/// ignored when the net has no such head. The one declaration of the weights and their defaults
/// (`[learn]` of a run config sets them by the same names with `_weight` appended).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossWeights {
    /// Policy cross-entropy (1).
    pub policy: f64,
    /// W/D/L value cross-entropy (1).
    pub value: f64,
    /// Moves-left loss (0.1).
    pub moves_left: f64,
    /// Opponent-reply policy ([`DEFAULT_OPPONENT_POLICY_WEIGHT`]).
    pub opponent_policy: f64,
    /// Soft policy ([`DEFAULT_SOFT_POLICY_WEIGHT`]).
    pub soft_policy: f64,
    /// Short-term values ([`DEFAULT_SHORT_TERM_VALUE_WEIGHT`]).
    pub short_term_value: f64,
    /// Material ([`DEFAULT_MATERIAL_WEIGHT`]).
    pub material: f64,
}

impl Default for LossWeights {
    fn default() -> Self {
        LossWeights {
            policy: 1.0,
            value: 1.0,
            moves_left: 0.1,
            opponent_policy: DEFAULT_OPPONENT_POLICY_WEIGHT,
            soft_policy: DEFAULT_SOFT_POLICY_WEIGHT,
            short_term_value: DEFAULT_SHORT_TERM_VALUE_WEIGHT,
            material: DEFAULT_MATERIAL_WEIGHT,
        }
    }
}

/// Temperature `T` of the soft policy target: `p^(1/T)`, renormalised (KataGo: 4).
pub const SOFT_POLICY_TEMPERATURE: f64 = 4.0;

/// Default weight of the opponent-reply policy loss: KataGo's 0.15. Both policy losses are
/// per-row mean cross-entropies (here and in KataGo), so the ratio carries over unchanged.
pub const DEFAULT_OPPONENT_POLICY_WEIGHT: f64 = 0.15;
/// Default weight of the soft policy loss: KataGo's 8 (its `soft_policy_weight_scale`, on the
/// same per-row mean cross-entropy as its main policy loss, whose weight is about 1 like ours).
pub const DEFAULT_SOFT_POLICY_WEIGHT: f64 = 8.0;
/// Default weight of the short-term value loss (squared errors summed over the horizons). KataGo
/// weights each horizon like its main value loss, a W/D/L cross-entropy; near 0 the gradient of
/// a squared error on a tanh output is 4 times that of the cross-entropy on the same value, so
/// 0.25 x the value weight (1) is the equivalent.
pub const DEFAULT_SHORT_TERM_VALUE_WEIGHT: f64 = 0.25;
/// Default weight of the material loss (squared error on a tanh output): the analogue of KataGo's
/// ownership loss, 1.5 x a cross-entropy on tanh targets whose gradient is `1.5 (pred - t)`;
/// the squared error's is `2 (pred - t)` near 0, so 0.75.
pub const DEFAULT_MATERIAL_WEIGHT: f64 = 0.75;

impl TrainConfig {
    /// SGD, momentum 0.9 Nesterov, lr 0.02, weight decay 1e-4 (AlphaZero/KataGo-like).
    pub fn sgd() -> Self {
        TrainConfig {
            optimizer: Optimizer::Sgd {
                momentum: 0.9,
                nesterov: true,
            },
            lr: 0.02,
            weight_decay: 1e-4,
            loss: LossWeights::default(),
            grad_clip_norm: None,
            precision: TrainPrecision::F32,
            policy_bias: None,
        }
    }

    /// AdamW, lr 1e-3, weight decay 1e-2 (decoupled).
    pub fn adamw() -> Self {
        TrainConfig {
            optimizer: Optimizer::AdamW {
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
            },
            lr: 1e-3,
            weight_decay: 1e-2,
            ..Self::sgd()
        }
    }
}

/// Sparse policy targets in CSR form: row `i`'s targets are
/// `(indices[k], probs[k])` for `k in offsets[i]..offsets[i+1]`. Probabilities of a row should
/// sum to 1; a row with no entries has no policy target (e.g. a cheap-search row under playout
/// cap randomisation) and is left out of the policy loss.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyTargets {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    probs: Vec<f32>,
}

impl PolicyTargets {
    pub fn new() -> Self {
        PolicyTargets {
            offsets: vec![0],
            indices: Vec::new(),
            probs: Vec::new(),
        }
    }

    /// Appends one row from (move index, probability) pairs.
    pub fn push(&mut self, pairs: impl IntoIterator<Item = (u32, f32)>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        for (i, p) in pairs {
            self.indices.push(i);
            self.probs.push(p);
        }
        self.offsets.push(self.indices.len());
    }

    pub fn from_rows<R: AsRef<[(u32, f32)]>>(rows: &[R]) -> Self {
        let mut t = Self::new();
        for r in rows {
            t.push(r.as_ref().iter().copied());
        }
        t
    }

    pub fn clear(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.indices.clear();
        self.probs.clear();
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn row(&self, i: usize) -> (&[u32], &[f32]) {
        let r = self.offsets[i]..self.offsets[i + 1];
        (&self.indices[r.clone()], &self.probs[r])
    }
}

/// One training batch of B rows, host memory.
#[derive(Clone, Copy, Debug)]
pub struct TrainBatch<'a> {
    /// B x C x H x W input planes.
    pub planes: &'a [f32],
    /// B x G global inputs (when the network has them).
    pub globals: Option<&'a [f32]>,
    pub policy: &'a PolicyTargets,
    /// W/D/L target probabilities per row (side to move's point of view).
    pub wdl: &'a [[f32; 3]],
    /// Remaining plies per row (used only if the network has a moves-left head; a negative
    /// value means unknown: that row has no moves-left loss).
    pub moves_left: Option<&'a [f32]>,
    /// Per-row sample weights (None = all 1).
    pub weights: Option<&'a [f32]>,
    /// Targets of the auxiliary heads (used only for the heads the network has).
    pub aux: AuxTargets<'a>,
}

/// Targets of the auxiliary heads of one batch of B rows ([`crate::AuxHeads`]); None = no
/// targets (that head's loss is 0). The soft policy head needs none: its target is derived from
/// the main policy target.
#[derive(Clone, Copy, Debug, Default)]
pub struct AuxTargets<'a> {
    /// Policy targets of the next searched position; a row with no entries has none.
    pub opponent_policy: Option<&'a PolicyTargets>,
    /// (B x K short-term value targets in [-1, 1], row-major, K = the network's horizons;
    /// B per-row weights, 0 = no target).
    pub short_term: Option<(&'a [f32], &'a [f32])>,
    /// (B material targets in [-1, 1]; B per-row weights, 0 = no target).
    pub material: Option<(&'a [f32], &'a [f32])>,
}

/// Loss components (weighted means over the batch) of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Losses {
    /// Policy cross-entropy, mean over rows that have a policy target.
    pub policy: f64,
    /// W/D/L cross-entropy.
    pub value: f64,
    /// Huber loss of moves-left / 100 (0 without the head or targets).
    pub moves_left: f64,
    /// Opponent-reply policy cross-entropy, mean over rows with a target (0 without the head).
    pub opponent_policy: f64,
    /// Soft policy cross-entropy, mean over rows with a policy target (0 without the head).
    pub soft_policy: f64,
    /// Short-term value squared errors summed over the horizons, mean over rows with targets
    /// (0 without the head).
    pub short_term_value: f64,
    /// Material squared error, mean over rows with a target (0 without the head).
    pub material: f64,
    /// The sum of each loss times its weight in [`TrainConfig`].
    pub total: f64,
}

/// Owns the optimizer state for one [`Model`]. Build it after the model's weights are final
/// (i.e. after loading a checkpoint); the optimizer state itself is not checkpointed.
pub struct Trainer {
    opt: nn::Optimizer,
    cfg: TrainConfig,
    lr: f64,
    /// [`TrainConfig::precision`] resolved for the model's device.
    bf16: bool,
    /// [`TrainConfig::policy_bias`] on the device.
    bias: Option<BiasTensors>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("cfg", &self.cfg)
            .field("lr", &self.lr)
            .finish()
    }
}

impl Trainer {
    pub fn new(model: &Model, cfg: TrainConfig) -> Result<Self> {
        let vs = model.var_store();
        let mut opt = match cfg.optimizer {
            Optimizer::Sgd { momentum, nesterov } => nn::Sgd {
                momentum,
                dampening: 0.0,
                wd: cfg.weight_decay,
                nesterov,
            }
            .build(vs, cfg.lr)?,
            Optimizer::AdamW { beta1, beta2, eps } => nn::AdamW {
                beta1,
                beta2,
                wd: cfg.weight_decay,
                eps,
                amsgrad: false,
            }
            .build(vs, cfg.lr)?,
        };
        opt.set_weight_decay_group(NO_DECAY_GROUP, 0.0);
        let lr = cfg.lr;
        let bf16 = cfg.precision.bf16_on(model.device());
        let bias = cfg.policy_bias.as_ref().map(|b| BiasTensors::new(b, model.config(), model.device())).transpose()?;
        Ok(Trainer { opt, cfg, lr, bf16, bias })
    }

    /// Whether this trainer's passes run in BF16 ([`TrainConfig::precision`] on its device).
    pub fn bf16(&self) -> bool {
        self.bf16
    }

    pub fn config(&self) -> &TrainConfig {
        &self.cfg
    }

    pub fn lr(&self) -> f64 {
        self.lr
    }

    /// Sets the learning rate for the following steps (schedules live in the caller).
    pub fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
        self.opt.set_lr(lr);
    }

    /// One optimisation step on `batch` (train-mode BN). Returns the losses before the update.
    pub fn step(&mut self, model: &Model, batch: &TrainBatch) -> Result<Losses> {
        let (total, parts) = self.losses(model, batch, true)?;
        self.opt.zero_grad();
        total.backward();
        if let Some(max) = self.cfg.grad_clip_norm {
            self.opt.clip_grad_norm(max);
        }
        self.opt.step();
        model.refold();
        losses_to_host(&parts)
    }

    /// Losses on `batch` without updating anything (eval-mode BN, no_grad, the trainer's
    /// precision): validation.
    pub fn evaluate(&self, model: &Model, batch: &TrainBatch) -> Result<Losses> {
        let parts = tch::no_grad(|| self.losses(model, batch, false).map(|(_, p)| p))?;
        losses_to_host(&parts)
    }

    /// Builds the loss graph; returns (total, [`LOSS_PARTS`] detached loss tensors).
    fn losses(
        &self,
        model: &Model,
        batch: &TrainBatch,
        train: bool,
    ) -> Result<(Tensor, [Tensor; LOSS_PARTS])> {
        let cfg = model.config();
        let dev = model.device();
        let b = batch.wdl.len();
        if b == 0 {
            return Err(ModelError::Input("empty training batch".into()));
        }
        if batch.policy.len() != b {
            return Err(ModelError::Input(format!(
                "{} policy target rows for {b} W/D/L rows",
                batch.policy.len()
            )));
        }
        if let Some(w) = batch.weights {
            if w.len() != b {
                return Err(ModelError::Input(format!(
                    "{} weights for {b} rows",
                    w.len()
                )));
            }
        }
        if let Some(m) = batch.moves_left {
            if m.len() != b {
                return Err(ModelError::Input(format!(
                    "{} moves-left targets for {b} rows",
                    m.len()
                )));
            }
        }
        let aux = &batch.aux;
        let check_len = |what: &str, n: usize, want: usize| -> Result<()> {
            if n == want {
                Ok(())
            } else {
                Err(ModelError::Input(format!("{n} {what} for {b} rows")))
            }
        };
        if let Some(t) = aux.opponent_policy {
            check_len("opponent policy target rows", t.len(), b)?;
        }
        let k = cfg.aux.short_term_horizons.len();
        if let (Some((v, w)), true) = (aux.short_term, k > 0) {
            check_len("short-term value targets", v.len(), b * k)?;
            check_len("short-term value weights", w.len(), b)?;
        }
        if let Some((v, w)) = aux.material {
            check_len("material targets", v.len(), b)?;
            check_len("material weights", w.len(), b)?;
        }
        let p = cfg.policy_size;
        let main = SparseTargets::new(batch.policy, p, "policy")?;
        let (x, g) = model.input_tensors(b, batch.planes, batch.globals)?;
        let out = model.forward_pass(&x, g.as_ref(), Pass { train, bf16: self.bf16 });

        let to_dev = |v: &[f32]| Tensor::from_slice(v).to_device(dev);
        let zero = || Tensor::zeros([], (Kind::Float, dev));
        let w = match batch.weights {
            Some(w) => to_dev(w),
            None => Tensor::ones([b as i64], (Kind::Float, dev)),
        };
        let w_sum = w.sum(Kind::Float).clamp_min(1e-12);
        // Weighted mean of a per-row loss over the rows with `mask` 1 (all rows when None).
        let mean = |per_row: &Tensor, mask: Option<&Tensor>| match mask {
            Some(m) => {
                let wm = &w * m;
                (per_row * &wm).sum(Kind::Float) / wm.sum(Kind::Float).clamp_min(1e-12)
            }
            None => (per_row * &w).sum(Kind::Float) / &w_sum,
        };

        let policy = match &self.bias {
            Some(bias) => main.mean_ce(&(&out.policy + bias.of(&x)), &batch.policy.probs, &mean, dev),
            None => main.mean_ce(&out.policy, &batch.policy.probs, &mean, dev),
        };

        // W/D/L CE.
        let wdl_t: Vec<f32> = batch.wdl.iter().flatten().copied().collect();
        let wdl_t = to_dev(&wdl_t).view([b as i64, 3]);
        let v_row =
            -(wdl_t * out.wdl.log_softmax(-1, Kind::Float)).sum_dim_intlist(1, false, Kind::Float);
        let value = mean(&v_row, None);

        let moves_left = match (&out.moves_left, batch.moves_left) {
            (Some(pred), Some(t)) => {
                // a negative target means "unknown" (e.g. a teacher-labelled position): no loss
                let t = to_dev(t);
                let known = t.ge(0.0).to_kind(Kind::Float);
                let t = t.clamp_min(0.0) / MOVES_LEFT_SCALE;
                mean(&pred.huber_loss(&t, Reduction::None, 1.0), Some(&known))
            }
            _ => zero(),
        };
        let opponent_policy = match (&out.opponent_policy, aux.opponent_policy) {
            (Some(logits), Some(t)) => {
                SparseTargets::new(t, p, "opponent policy")?.mean_ce(logits, &t.probs, &mean, dev)
            }
            _ => zero(),
        };
        let soft_policy = match &out.soft_policy {
            Some(logits) => {
                main.mean_ce(logits, &soft_probs(batch.policy, SOFT_POLICY_TEMPERATURE), &mean, dev)
            }
            None => zero(),
        };
        let short_term_value = match (&out.short_term, aux.short_term) {
            (Some(pred), Some((t, tw))) => {
                let t = to_dev(t).view([b as i64, k as i64]);
                let se = (pred - t).square().sum_dim_intlist(1, false, Kind::Float);
                mean(&se, Some(&to_dev(tw)))
            }
            _ => zero(),
        };
        let material = match (&out.material, aux.material) {
            (Some(pred), Some((t, tw))) => mean(&(pred - to_dev(t)).square(), Some(&to_dev(tw))),
            _ => zero(),
        };
        let c = &self.cfg;
        let w = &c.loss;
        let total = &policy * w.policy
            + &value * w.value
            + &moves_left * w.moves_left
            + &opponent_policy * w.opponent_policy
            + &soft_policy * w.soft_policy
            + &short_term_value * w.short_term_value
            + &material * w.material;
        let parts = [
            policy,
            value,
            moves_left,
            opponent_policy,
            soft_policy,
            short_term_value,
            material,
            total.shallow_clone(),
        ]
        .map(|t| t.detach());
        Ok((total, parts))
    }
}

/// Number of loss tensors [`Trainer::losses`] returns (the fields of [`Losses`]).
const LOSS_PARTS: usize = 8;

/// The gather indices of a batch of sparse policy targets: row of each entry, and its flat
/// index into the [B, policy_size] logits; `has[i]` = 1 when row i has a target.
struct SparseTargets {
    rows: Vec<i64>,
    flat: Vec<i64>,
    has: Vec<f32>,
}

impl SparseTargets {
    fn new(t: &PolicyTargets, policy_size: usize, what: &str) -> Result<Self> {
        let b = t.len();
        let mut s = SparseTargets {
            rows: Vec::with_capacity(t.indices.len()),
            flat: Vec::with_capacity(t.indices.len()),
            has: vec![0f32; b],
        };
        for i in 0..b {
            let (idx, _) = t.row(i);
            if !idx.is_empty() {
                s.has[i] = 1.0;
            }
            for &m in idx {
                if m as usize >= policy_size {
                    return Err(ModelError::Input(format!(
                        "row {i}: {what} target index {m} >= policy_size {policy_size}"
                    )));
                }
                s.rows.push(i as i64);
                s.flat.push((i * policy_size) as i64 + m as i64);
            }
        }
        Ok(s)
    }

    /// Cross-entropy of `logits` [B, P] against the sparse targets with probabilities `probs`
    /// (one per entry): `-sum_k p_k * log_softmax(logits)[idx_k]` per row, then `mean` over the
    /// rows that have a target.
    fn mean_ce(
        &self,
        logits: &Tensor,
        probs: &[f32],
        mean: &dyn Fn(&Tensor, Option<&Tensor>) -> Tensor,
        dev: Device,
    ) -> Tensor {
        let b = self.has.len() as i64;
        let logp = logits.log_softmax(-1, Kind::Float).reshape([-1]);
        let sel = logp.index_select(0, &Tensor::from_slice(&self.flat).to_device(dev));
        let per_row = Tensor::zeros([b], (Kind::Float, dev)).index_add(
            0,
            &Tensor::from_slice(&self.rows).to_device(dev),
            &(-sel * Tensor::from_slice(probs).to_device(dev)),
        );
        mean(&per_row, Some(&Tensor::from_slice(&self.has).to_device(dev)))
    }
}

/// The soft policy target of every entry of `t`: each row's probabilities raised to `1/T` and
/// renormalised over the row's own entries (rows summing to 0 stay 0).
pub fn soft_probs(t: &PolicyTargets, temperature: f64) -> Vec<f32> {
    let e = (1.0 / temperature) as f32;
    let mut out: Vec<f32> = t.probs.iter().map(|&p| p.max(0.0).powf(e)).collect();
    for w in t.offsets.windows(2) {
        let row = &mut out[w[0]..w[1]];
        let s: f32 = row.iter().sum();
        if s > 0.0 {
            row.iter_mut().for_each(|x| *x /= s);
        }
    }
    out
}

fn losses_to_host(parts: &[Tensor; LOSS_PARTS]) -> Result<Losses> {
    let v = Vec::<f32>::try_from(Tensor::stack(parts, 0).to_device(Device::Cpu))?;
    Ok(Losses {
        policy: v[0] as f64,
        value: v[1] as f64,
        moves_left: v[2] as f64,
        opponent_policy: v[3] as f64,
        soft_policy: v[4] as f64,
        short_term_value: v[5] as f64,
        material: v[6] as f64,
        total: v[7] as f64,
    })
}
