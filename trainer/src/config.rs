//! Learner configuration (serde, validated).

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use vzero_mcts::Knowledge;
use vzero_model::{LossWeights, TrainPrecision};

/// Learning-rate schedule after warm-up (`lr` is the base rate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LrSchedule {
    /// `lr` forever.
    Constant,
    /// `lr * factor^(step / every)`.
    Step { every: u64, factor: f64 },
    /// Cosine from `lr` down to `lr * min_factor` over `period` steps, then restarts
    /// (SGDR-style, so that an open-ended run never ends at a tiny rate).
    Cosine { period: u64, min_factor: f64 },
}

/// Trainer configuration. Loaded from the `[learn]` table of a run config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnConfig {
    /// Rows per optimizer step.
    pub batch_size: usize,
    /// "sgd" (momentum 0.9, Nesterov, L2 decay) or "adamw" (decoupled decay).
    pub optimizer: String,
    /// Base learning rate.
    pub lr: f64,
    /// Linear warm-up from 0 to the scheduled rate over this many steps.
    pub lr_warmup_steps: u64,
    pub lr_schedule: LrSchedule,
    /// Weight decay (conv/linear weights only).
    pub weight_decay: f64,
    /// At most this many training samples per generated row (KataGo: 4); the learner waits
    /// (returns from `run`) when the cap is reached.
    pub max_reuse: f64,
    /// Do not train before the run has this many rows.
    pub min_rows: usize,
    /// Replay window: `min(total, max(window_min, window_scale * total^window_exponent))` rows.
    pub window_min: usize,
    pub window_exponent: f64,
    pub window_scale: f64,
    /// Publish a checkpoint every this many steps (and at the end of `run`).
    pub publish_every: u64,
    /// Torch intra-op threads of the learner process.
    pub threads: usize,
    /// Precision of the training passes: "f32" (default), "bf16" (BF16 convolutions and linear
    /// layers, f32 weights, optimizer and losses) or "auto" (BF16 on a CPU with AMX-BF16).
    /// docs/strength.md has the measurement that keeps f32 the default.
    #[serde(default)]
    pub precision: TrainPrecision,
    /// Append a metrics.csv row every this many steps (default 10).
    #[serde(default = "default_log_every")]
    pub log_every: u64,
    /// Weight of the moves-left loss (default 0.1; ignored without a moves-left head).
    #[serde(default = "default_moves_left_weight")]
    pub moves_left_weight: f64,
    /// Share of the search's root value in the value target (0 = game result only; default
    /// 0.5): `target = (1 - r) * result + r * [(1 + q) / 2, 0, (1 - q) / 2]`. Averaging the noisy
    /// game result with the search's own estimate cuts the variance of the target, which is
    /// what a small run needs most (the "z + q" target of the Oracle AlphaZero study and lc0's
    /// q-ratio).
    #[serde(default = "default_value_q_ratio")]
    pub value_q_ratio: f64,
    /// Weight of the opponent-reply policy loss, used when `[net] opponent_policy` is on
    /// (default 0.15, KataGo's: both policy losses are per-row mean cross-entropies).
    #[serde(default = "default_opponent_policy_weight")]
    pub opponent_policy_weight: f64,
    /// Weight of the soft policy loss, used when `[net] soft_policy` is on (default 8, KataGo's
    /// soft policy weight on the same per-row mean cross-entropy as the main policy loss).
    #[serde(default = "default_soft_policy_weight")]
    pub soft_policy_weight: f64,
    /// Weight of the short-term value loss (squared errors summed over the horizons), used when
    /// `[net] short_term_value` is on (default 0.25: KataGo weights each horizon like its W/D/L
    /// value loss, and a squared error on a tanh output has ~4x that gradient near 0).
    #[serde(default = "default_short_term_value_weight")]
    pub short_term_value_weight: f64,
    /// Weight of the material loss (squared error), used when `[net] material` is on (default
    /// 0.75: the gradient of KataGo's ownership loss, 1.5 x a cross-entropy on tanh targets).
    #[serde(default = "default_material_weight")]
    pub material_weight: f64,
    /// Seed of the sampler and of generation 0's weights (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Heuristic knowledge from the variant definition blended into the leaf evaluations of
    /// searches with this run's networks, annealed to 0 over `anneal_steps` (`[learn.knowledge]`;
    /// off by default). Each checkpoint records the blend at its step.
    #[serde(default, skip_serializing_if = "knowledge_off")]
    pub knowledge: Knowledge,
    /// Stream the replay window through a shuffle buffer of this many rows instead of holding
    /// every chunk of it in memory (for windows larger than memory; see
    /// [`vzero_data::ReplayWindow::set_stream`] for the trade-off). Default: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_buffer_rows: Option<usize>,
    /// What to do with self-play chunks older than the window: `"keep"` (default), `"archive"`
    /// (move to `archive/data/` in the run) or `"delete"`. Never a chunk in the window.
    #[serde(default = "default_retention", skip_serializing_if = "is_keep")]
    pub retention: String,
    /// Rows of other sources than self-play (`vzero import`, `vzero label`): their share of
    /// each batch, how it decays as self-play data arrives, their loss weight and reuse
    /// (`[learn.external]`).
    #[serde(default)]
    pub external: ExternalConfig,
}

/// `[learn.external]`: how imported and labelled rows are trained on (see
/// [`vzero_data::ExternalMix`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalConfig {
    /// Share of each batch drawn from external rows once self-play rows exist (0 excludes them;
    /// before any self-play row, batches are all external). Default 0.5.
    pub share: f64,
    /// Self-play rows after which that share has halved (0: never decays). Default 200,000.
    pub half_life_rows: usize,
    /// Factor on the loss weight of external rows. Default 1.
    pub weight: f64,
    /// Training samples allowed per external row by the reuse cap (self-play rows: `max_reuse`).
    /// Default 16: a supervised phase may take several passes over a fixed set.
    pub max_reuse: f64,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        let m = vzero_data::ExternalMix::default();
        ExternalConfig { share: m.share, half_life_rows: m.half_life_rows, weight: m.weight as f64, max_reuse: 16.0 }
    }
}

impl ExternalConfig {
    /// The window's mixing rule.
    pub fn mix(&self) -> vzero_data::ExternalMix {
        vzero_data::ExternalMix { share: self.share, half_life_rows: self.half_life_rows, weight: self.weight as f32 }
    }
}

fn default_retention() -> String {
    "keep".into()
}

fn is_keep(s: &String) -> bool {
    s == "keep"
}

fn knowledge_off(k: &Knowledge) -> bool {
    *k == Knowledge::default()
}

fn default_log_every() -> u64 {
    10
}

fn default_moves_left_weight() -> f64 {
    LossWeights::default().moves_left
}

fn default_value_q_ratio() -> f64 {
    0.5
}

fn default_opponent_policy_weight() -> f64 {
    LossWeights::default().opponent_policy
}

fn default_soft_policy_weight() -> f64 {
    LossWeights::default().soft_policy
}

fn default_short_term_value_weight() -> f64 {
    LossWeights::default().short_term_value
}

fn default_material_weight() -> f64 {
    LossWeights::default().material
}

impl LearnConfig {
    /// A small CPU default (tiny nets on 2 cores).
    pub fn cpu_default() -> Self {
        LearnConfig {
            batch_size: 256,
            optimizer: "sgd".into(),
            lr: 0.02,
            lr_warmup_steps: 100,
            lr_schedule: LrSchedule::Constant,
            weight_decay: 1e-4,
            max_reuse: 4.0,
            min_rows: 5_000,
            window_min: 200_000,
            window_exponent: 0.65,
            window_scale: 8.0,
            publish_every: 100,
            threads: 2,
            precision: TrainPrecision::F32,
            log_every: 10,
            moves_left_weight: default_moves_left_weight(),
            value_q_ratio: default_value_q_ratio(),
            opponent_policy_weight: default_opponent_policy_weight(),
            soft_policy_weight: default_soft_policy_weight(),
            short_term_value_weight: default_short_term_value_weight(),
            material_weight: default_material_weight(),
            seed: 0,
            knowledge: Knowledge::default(),
            stream_buffer_rows: None,
            retention: default_retention(),
            external: ExternalConfig::default(),
        }
    }

    /// The loss weights these settings give the optimizer (policy and value at 1; the rest as
    /// set: the `*_weight` keys are [`LossWeights`]' fields under their TOML names).
    pub fn loss_weights(&self) -> LossWeights {
        LossWeights {
            moves_left: self.moves_left_weight,
            opponent_policy: self.opponent_policy_weight,
            soft_policy: self.soft_policy_weight,
            short_term_value: self.short_term_value_weight,
            material: self.material_weight,
            ..LossWeights::default()
        }
    }

    /// Checks every field; the error names the field.
    pub fn validate(&self) -> Result<()> {
        let pos = |name: &str, v: f64| -> Result<()> {
            if !(v.is_finite() && v > 0.0) {
                bail!("learn.{name} must be a finite number > 0, got {v}");
            }
            Ok(())
        };
        let unit = |name: &str, v: f64| -> Result<()> {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                bail!("learn.{name} must be in [0, 1], got {v}");
            }
            Ok(())
        };
        if self.batch_size == 0 {
            bail!("learn.batch_size must be > 0");
        }
        if !matches!(self.optimizer.as_str(), "sgd" | "adamw") {
            bail!("learn.optimizer must be \"sgd\" or \"adamw\", got {:?}", self.optimizer);
        }
        pos("lr", self.lr)?;
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            bail!("learn.weight_decay must be >= 0, got {}", self.weight_decay);
        }
        pos("max_reuse", self.max_reuse)?;
        pos("window_scale", self.window_scale)?;
        unit("window_exponent", self.window_exponent)?;
        if self.window_min == 0 {
            bail!("learn.window_min must be > 0");
        }
        if self.publish_every == 0 {
            bail!("learn.publish_every must be > 0");
        }
        if self.log_every == 0 {
            bail!("learn.log_every must be > 0");
        }
        if self.threads == 0 {
            bail!("learn.threads must be > 0");
        }
        for (name, v) in [
            ("moves_left_weight", self.moves_left_weight),
            ("opponent_policy_weight", self.opponent_policy_weight),
            ("soft_policy_weight", self.soft_policy_weight),
            ("short_term_value_weight", self.short_term_value_weight),
            ("material_weight", self.material_weight),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                bail!("learn.{name} must be a finite number >= 0, got {v}");
            }
        }
        unit("value_q_ratio", self.value_q_ratio)?;
        self.knowledge.validate().map_err(|e| anyhow::anyhow!("learn.knowledge.{e}"))?;
        unit("external.share", self.external.share)?;
        if vzero_data::Retention::parse(&self.retention).is_none() {
            bail!("learn.retention must be \"keep\", \"archive\" or \"delete\", got {:?}", self.retention);
        }
        if self.stream_buffer_rows == Some(0) {
            bail!("learn.stream_buffer_rows must be > 0");
        }
        if !(self.external.weight.is_finite() && self.external.weight >= 0.0) {
            bail!("learn.external.weight must be a finite number >= 0, got {}", self.external.weight);
        }
        pos("external.max_reuse", self.external.max_reuse)?;
        match self.lr_schedule {
            LrSchedule::Constant => {}
            LrSchedule::Step { every, factor } => {
                if every == 0 {
                    bail!("learn.lr_schedule.every must be > 0");
                }
                pos("lr_schedule.factor", factor)?;
            }
            LrSchedule::Cosine { period, min_factor } => {
                if period == 0 {
                    bail!("learn.lr_schedule.period must be > 0");
                }
                unit("lr_schedule.min_factor", min_factor)?;
            }
        }
        Ok(())
    }

    /// Learning rate for optimizer step `step` (0-based): warm-up times schedule.
    pub fn lr_at(&self, step: u64) -> f64 {
        let sched = match self.lr_schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Step { every, factor } => self.lr * factor.powf((step / every) as f64),
            LrSchedule::Cosine { period, min_factor } => {
                let t = (step % period) as f64 / period as f64;
                self.lr * (min_factor + (1.0 - min_factor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()))
            }
        };
        if step < self.lr_warmup_steps {
            sched * (step + 1) as f64 / self.lr_warmup_steps as f64
        } else {
            sched
        }
    }
}
