//! Exporting a network for other tools: a traced TorchScript module (`vzero export --format
//! torchscript`) that Python loads with `torch.jit.load` and can turn into ONNX.
//!
//! The module is traced from the reference (unfused, f32, eval-mode) forward pass, so it matches
//! [`Model::evaluate`] in f32 up to rounding. Input: `planes` [B, C, H, W] f32 (the encoding of
//! `vzero_encoding::InputEncoder`, side to move's frame). Output: one tensor [B, policy_size + 3
//! (+ 1)] (a traced method returns one value), the concatenation of the policy logits over the
//! whole policy index space (mask to the legal moves' indices, then softmax), the win/draw/loss
//! logits for the side to move (softmax), and — when the network has the head — the expected
//! remaining plies (at least 0, as `Model::evaluate` gives them). `<out>.json` ([`ExportInfo`]) gives the column ranges. Networks with global
//! inputs are not exported (none of vzero's variants uses them).

use std::path::Path;

use serde::Serialize;
use tch::{CModule, Kind, Tensor};

use vzero_base::write_atomic;

use crate::checkpoint::CheckpointMeta;
use crate::error::{ModelError, Result};
use crate::model::Model;
use crate::net::MOVES_LEFT_SCALE;

/// What an exported module computes and was made from: written beside it as `<out>.json`.
#[derive(Clone, Debug, Serialize)]
pub struct ExportInfo {
    /// `"torchscript"`.
    pub format: &'static str,
    /// Variant the network plays.
    pub variant: String,
    /// Encoding version and fingerprint of the input planes and policy indices.
    pub encoding_version: u32,
    pub encoding_fingerprint: Option<u64>,
    /// Input shape without the batch dimension: [planes, height, width].
    pub input: [usize; 3],
    /// Policy index space size (the `policy` output's second dimension).
    pub policy_size: usize,
    /// The output's column ranges: (name, first column, end column), in order.
    pub outputs: Vec<(&'static str, usize, usize)>,
    /// Training step of the source checkpoint.
    pub step: u64,
}

/// Traces `model`'s forward pass (eval mode, f32, on the CPU) and saves it as a TorchScript
/// module at `out` (atomically), plus `<out>.json` describing inputs and outputs.
pub fn export_torchscript(model: &Model, meta: &CheckpointMeta, out: &Path) -> Result<ExportInfo> {
    let cfg = model.config();
    if cfg.global_inputs > 0 {
        return Err(ModelError::Config("networks with global inputs cannot be exported yet".into()));
    }
    if model.device() != tch::Device::Cpu {
        return Err(ModelError::Config("export runs on the CPU: load the checkpoint with --device cpu".into()));
    }
    let dims = [2i64, cfg.input_planes as i64, cfg.board_height as i64, cfg.board_width as i64];
    let example = Tensor::zeros(dims, (Kind::Float, tch::Device::Cpu));
    let has_ml = cfg.moves_left_head;
    // The tracer records the weights as constants, which must not require gradients: switch
    // them off for the trace and back on afterwards (the variables share their tensors).
    let mut vars: Vec<Tensor> = model.var_store().variables().into_values().collect();
    let trained: Vec<bool> = vars.iter().map(Tensor::requires_grad).collect();
    for v in &mut vars {
        let _ = v.set_requires_grad(false);
    }
    let module = tch::no_grad(|| {
        CModule::create_by_tracing("VzeroNet", "forward", &[example], &mut |inputs| {
            let o = model.forward_t(&inputs[0], None, false);
            let mut outs = vec![o.policy, o.wdl];
            if let Some(ml) = o.moves_left {
                if has_ml {
                    outs.push((ml * MOVES_LEFT_SCALE).clamp_min(0.0).unsqueeze(1));
                }
            }
            vec![Tensor::cat(&outs, 1)]
        })
    })
    .map_err(|e| ModelError::Config(format!("tracing the network: {e}")));
    // The module holds the weights themselves: save it before they require gradients again.
    let tmp = vzero_base::file::tmp_path_for(out);
    let saved = module.and_then(|m| m.save(&tmp).map_err(|e| ModelError::Config(format!("saving {}: {e}", tmp.display()))));
    for (v, t) in vars.iter_mut().zip(trained) {
        let _ = v.set_requires_grad(t);
    }
    if let Err(e) = saved {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let info = ExportInfo {
        format: "torchscript",
        variant: meta.variant.clone(),
        encoding_version: meta.encoding_version,
        encoding_fingerprint: meta.encoding_fingerprint,
        input: [cfg.input_planes, cfg.board_height, cfg.board_width],
        policy_size: cfg.policy_size,
        outputs: {
            let p = cfg.policy_size;
            let mut o = vec![("policy", 0, p), ("wdl", p, p + 3)];
            if has_ml {
                o.push(("moves_left", p + 3, p + 4));
            }
            o
        },
        step: meta.step,
    };
    // The module went to a temporary file beside `out`: fsync and rename it into place.
    if let Err(e) = vzero_base::file::commit(&tmp, out) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    let mut json = serde_json::to_vec_pretty(&info).map_err(|e| ModelError::Config(e.to_string()))?;
    json.push(b'\n');
    let mut side = out.as_os_str().to_owned();
    side.push(".json");
    write_atomic(Path::new(&side), &json)?;
    Ok(info)
}
