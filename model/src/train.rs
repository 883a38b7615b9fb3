//! Training step: losses, optimizers (SGD with momentum / AdamW), learning rate.

use serde::{Deserialize, Serialize};
use tch::{nn, nn::OptimizerConfig, Device, Kind, Reduction, Tensor};

use crate::error::{ModelError, Result};
use crate::model::Model;
use crate::net::{MOVES_LEFT_SCALE, NO_DECAY_GROUP};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Optimizer {
    /// SGD with momentum (Nesterov optional) and L2 weight decay.
    Sgd { momentum: f64, nesterov: bool },
    /// AdamW (decoupled weight decay).
    AdamW { beta1: f64, beta2: f64, eps: f64 },
}

/// Optimizer and loss weights. Weight decay applies to conv/linear weights only, not to BN
/// parameters and biases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    pub optimizer: Optimizer,
    pub lr: f64,
    pub weight_decay: f64,
    pub policy_weight: f64,
    pub value_weight: f64,
    pub moves_left_weight: f64,
    /// Clip the global gradient norm to this value (None = no clipping).
    #[serde(default)]
    pub grad_clip_norm: Option<f64>,
}

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
            policy_weight: 1.0,
            value_weight: 1.0,
            moves_left_weight: 0.1,
            grad_clip_norm: None,
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
    /// Remaining plies per row (used only if the network has a moves-left head).
    pub moves_left: Option<&'a [f32]>,
    /// Per-row sample weights (None = all 1).
    pub weights: Option<&'a [f32]>,
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
    /// `policy_weight*policy + value_weight*value + moves_left_weight*moves_left`.
    pub total: f64,
}

/// Owns the optimizer state for one [`Model`]. Build it after the model's weights are final
/// (i.e. after loading a checkpoint); the optimizer state itself is not checkpointed.
pub struct Trainer {
    opt: nn::Optimizer,
    cfg: TrainConfig,
    lr: f64,
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
        Ok(Trainer { opt, cfg, lr })
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

    /// Losses on `batch` without updating anything (eval-mode BN, no_grad): validation.
    pub fn evaluate(&self, model: &Model, batch: &TrainBatch) -> Result<Losses> {
        let parts = tch::no_grad(|| self.losses(model, batch, false).map(|(_, p)| p))?;
        losses_to_host(&parts)
    }

    /// Builds the loss graph; returns (total, [policy, value, moves_left, total]) tensors.
    fn losses(
        &self,
        model: &Model,
        batch: &TrainBatch,
        train: bool,
    ) -> Result<(Tensor, [Tensor; 4])> {
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
        let p = cfg.policy_size;
        let mut rows = Vec::with_capacity(batch.policy.indices.len());
        let mut flat = Vec::with_capacity(batch.policy.indices.len());
        let mut has_policy = vec![0f32; b];
        for (i, has) in has_policy.iter_mut().enumerate() {
            let (idx, _) = batch.policy.row(i);
            if !idx.is_empty() {
                *has = 1.0;
            }
            for &m in idx {
                if m as usize >= p {
                    return Err(ModelError::Input(format!(
                        "row {i}: policy target index {m} >= policy_size {p}"
                    )));
                }
                rows.push(i as i64);
                flat.push((i * p) as i64 + m as i64);
            }
        }
        let (x, g) = model.input_tensors(b, batch.planes, batch.globals)?;
        let out = model.forward_t(&x, g.as_ref(), train);

        let to_dev = |v: &[f32]| Tensor::from_slice(v).to_device(dev);
        let w = match batch.weights {
            Some(w) => to_dev(w),
            None => Tensor::ones([b as i64], (Kind::Float, dev)),
        };
        let w_sum = w.sum(Kind::Float).clamp_min(1e-12);

        // Policy CE with sparse targets: -sum_k p_k * log_softmax(logits)[idx_k], per row.
        let logp = out.policy.log_softmax(-1, Kind::Float).reshape([-1]);
        let sel = logp.index_select(0, &Tensor::from_slice(&flat).to_device(dev));
        let per_row = Tensor::zeros([b as i64], (Kind::Float, dev)).index_add(
            0,
            &Tensor::from_slice(&rows).to_device(dev),
            &(-sel * to_dev(&batch.policy.probs)),
        );
        let wp = &w * to_dev(&has_policy);
        let policy = (&per_row * &wp).sum(Kind::Float) / wp.sum(Kind::Float).clamp_min(1e-12);

        // W/D/L CE.
        let wdl_t: Vec<f32> = batch.wdl.iter().flatten().copied().collect();
        let wdl_t = to_dev(&wdl_t).view([b as i64, 3]);
        let v_row =
            -(wdl_t * out.wdl.log_softmax(-1, Kind::Float)).sum_dim_intlist(1, false, Kind::Float);
        let value = (&v_row * &w).sum(Kind::Float) / &w_sum;

        let moves_left = match (&out.moves_left, batch.moves_left) {
            (Some(pred), Some(t)) => {
                let t = to_dev(t) / MOVES_LEFT_SCALE;
                let l = pred.huber_loss(&t, Reduction::None, 1.0);
                (&l * &w).sum(Kind::Float) / &w_sum
            }
            _ => Tensor::zeros([], (Kind::Float, dev)),
        };
        let total = &policy * self.cfg.policy_weight
            + &value * self.cfg.value_weight
            + &moves_left * self.cfg.moves_left_weight;
        let parts = [
            policy.detach(),
            value.detach(),
            moves_left.detach(),
            total.detach(),
        ];
        Ok((total, parts))
    }
}

fn losses_to_host(parts: &[Tensor; 4]) -> Result<Losses> {
    let v = Vec::<f32>::try_from(Tensor::stack(parts, 0).to_device(Device::Cpu))?;
    Ok(Losses {
        policy: v[0] as f64,
        value: v[1] as f64,
        moves_left: v[2] as f64,
        total: v[3] as f64,
    })
}
