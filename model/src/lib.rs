//! Policy/value network for vzero (tch / LibTorch).
//!
//! * [`NetConfig`]: network shape (serde); [`Model`]: a network on one device with the batched,
//!   legal-move-masked inference API ([`Model::evaluate`], [`LegalMoves`], [`Evaluation`]),
//!   served by a folded inference copy of the network (BN folded into the convs, channels-last,
//!   f32 or BF16: [`InferencePrecision`], [`PRECISION_ENV`]; see `model/README.md`).
//! * [`Trainer`]: one optimisation step on a [`TrainBatch`] (sparse policy targets, W/D/L targets,
//!   per-row weights, [`AuxTargets`] of the optional auxiliary heads, [`AuxHeads`]) with
//!   SGD-momentum or AdamW; returns [`Losses`].
//! * [`checkpoint`]: atomic save/load of weights (`.safetensors`) + metadata (`.json`), with
//!   variant / encoding-version / config checks and clear errors for corrupt files.
//! * [`export`]: the network as a traced TorchScript module for Python (and ONNX from there).
//! * [`device`]: `--device auto|cpu|cuda[:N]` ([`DeviceChoice`]), thread settings and the malloc
//!   tuning every [`Model`] applies ([`device::tune_malloc`]).
//!
//! The position/move encoding is not here: the caller hands in input planes
//! (B x C x H x W f32, row-major, side to move's point of view), optional global scalars
//! (B x G) and legal move indices in `0..policy_size`.

pub mod checkpoint;
mod config;
pub mod device;
mod error;
pub mod eval_server;
pub mod evaluator;
pub mod variant_net;
pub mod export;
mod infer;
mod model;
mod net;
mod train;

pub use checkpoint::{CheckpointInfo, CheckpointMeta, Expected};
pub use config::{
    policy_map_from_keys, validate_horizons, AuxHeads, NetConfig, PolicyHead,
    MAX_SHORT_TERM_HORIZONS,
};
pub use device::{set_threads, DeviceChoice};
pub use error::{ModelError, Result};
pub use evaluator::{leaf_value, NetEvaluator};
pub use variant_net::{
    checkpoint_info, expected, fresh_model, load_model, net_config, policy_map, random_positions,
};
pub use eval_server::{EvalClient, EvalServer, NetKey, ServerConfig, ServerStats};
pub use export::{export_torchscript, ExportInfo};
pub use infer::{cpu_has_amx_bf16, InferencePrecision, AUTO_BF16_MIN_BATCH, PRECISION_ENV};
pub use model::{Evaluation, LegalMoves, Model};
pub use net::{NetOutput, Pass, MOVES_LEFT_SCALE};
pub use tch::Device;
pub use train::{
    soft_probs, AuxTargets, LossWeights, Losses, Optimizer, PolicyBias, PolicyTargets, TrainBatch, TrainConfig, TrainPrecision,
    Trainer,
    DEFAULT_MATERIAL_WEIGHT, DEFAULT_OPPONENT_POLICY_WEIGHT, DEFAULT_SHORT_TERM_VALUE_WEIGHT,
    DEFAULT_SOFT_POLICY_WEIGHT, SOFT_POLICY_TEMPERATURE,
};
