//! Network commands: `vzero init` (a fresh random network) and `vzero eval` (policy and W/D/L
//! of a position), plus the device options shared by every command that runs a network.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use vzero_model::{checkpoint, checkpoint_info, fresh_model, net_config, DeviceChoice, NetEvaluator};
use vzero_rules::Variant;

use crate::cmd::rules::PositionArgs;

/// Where and how a network runs.
#[derive(Args, Debug, Clone)]
pub struct NetRunArgs {
    /// Device: auto (CUDA when available), cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// Torch intra-op threads (1 is best for search on a small machine).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Most leaves evaluated per forward pass.
    #[arg(long, default_value_t = 16)]
    pub batch: usize,
}

impl NetRunArgs {
    /// Applies the thread setting and resolves the device.
    pub fn device(&self) -> Result<vzero_model::Device> {
        vzero_model::set_threads(self.threads.max(1));
        Ok(self.device.resolve()?)
    }
}

/// Arguments of `vzero init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Variant name or definition file.
    #[arg(long, default_value = "empire")]
    variant: String,
    /// Checkpoint path (stem; `.json` and `.safetensors` are written beside it).
    #[arg(long)]
    out: PathBuf,
    /// Residual blocks.
    #[arg(long, default_value_t = 4)]
    blocks: usize,
    /// Channels of the trunk.
    #[arg(long, default_value_t = 32)]
    channels: usize,
    /// Seed of the random weights.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Arguments of `vzero eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(flatten)]
    pos: PositionArgs,
    /// Network checkpoint.
    #[arg(long)]
    model: PathBuf,
    /// Moves to list, most probable first.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[command(flatten)]
    net: NetRunArgs,
}

pub fn init(a: InitArgs) -> Result<()> {
    if a.blocks == 0 || a.blocks > 64 || a.channels == 0 || a.channels > 1024 {
        bail!("--blocks must be 1..=64 and --channels 1..=1024 (got {} x {})", a.blocks, a.channels);
    }
    let variant = Variant::load(&a.variant)?;
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let cfg = net_config(variant, a.blocks, a.channels)?;
    let model = fresh_model(variant, &cfg, vzero_model::Device::Cpu, a.seed)?;
    let meta = checkpoint::save(&model, &a.out, &checkpoint_info(variant, 0, 0, None))?;
    let (json, weights) = checkpoint::checkpoint_paths(&a.out);
    println!(
        "wrote {} and {} ({} parameters, {} x {}, {} input planes, {} policy indices)",
        json.display(),
        weights.display(),
        model.num_parameters(),
        a.blocks,
        a.channels,
        meta.net.input_planes,
        meta.net.policy_size
    );
    Ok(())
}

pub fn eval(a: EvalArgs) -> Result<()> {
    let game = a.pos.game()?;
    let pos = *game.position();
    let device = a.net.device()?;
    let (mut net, meta) = NetEvaluator::load(&a.model, pos.variant(), device)?;
    let state = vzero_mcts::VariantGame::from_game(&game);
    let moves = pos.legal_moves();
    let evals = net.evaluate(&[&state], &[&moves])?;
    let (priors, value) = &evals[0];
    let [w, d, l] = value.wdl();
    let mut out = std::io::stdout().lock();
    writeln!(out, "model {} (step {}, {} samples)", a.model.display(), meta.step, meta.samples_seen)?;
    writeln!(out, "fen {}", pos.fen())?;
    writeln!(out, "wdl {w:.4} {d:.4} {l:.4} value {:+.4}", w - l)?;
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by(|&i, &j| priors[j].total_cmp(&priors[i]));
    for &i in order.iter().take(a.top) {
        writeln!(out, "{:<10} {:.4}", pos.uci(moves[i]), priors[i])?;
    }
    Ok(())
}
