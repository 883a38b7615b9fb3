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
    /// Replace a checkpoint already at --out (refused without it: it may be a trained network).
    #[arg(long)]
    force: bool,
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
    /// Print JSON instead: the input planes, every legal move with its policy index and prior,
    /// and W/D/L and moves left, both from the network alone (`net`) and with the checkpoint's
    /// knowledge blend as searches use them (`search`), at full precision.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetRunArgs,
}

/// Formats of `vzero export`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ExportFormat {
    /// A traced TorchScript module (`torch.jit.load` in Python; ONNX from there).
    Torchscript,
}

/// Arguments of `vzero export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Checkpoint to export.
    #[arg(long)]
    model: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "torchscript")]
    format: ExportFormat,
    /// File to write, e.g. net.pt (its description goes to net.pt.json).
    #[arg(long)]
    out: PathBuf,
    /// Replace an export already at --out (refused without it).
    #[arg(long)]
    force: bool,
}

pub fn init(a: InitArgs) -> Result<()> {
    if a.blocks == 0 || a.blocks > 64 || a.channels == 0 || a.channels > 1024 {
        bail!("--blocks must be 1..=64 and --channels 1..=1024 (got {} x {})", a.blocks, a.channels);
    }
    let variant = Variant::load(&a.variant)?;
    let (json, weights) = checkpoint::checkpoint_paths(&a.out);
    if !a.force {
        if let Some(p) = [&json, &weights].into_iter().find(|p| p.exists()) {
            let what = checkpoint::read_meta(&json).map_or_else(|_| "a file".to_string(), |m| format!("a checkpoint of {} at step {}", m.variant, m.step));
            bail!("{} exists ({what}): not overwritten; pass --force to replace it with a random network", p.display());
        }
    }
    crate::cmd::out::create_parent(&a.out)?;
    let cfg = net_config(variant, a.blocks, a.channels)?;
    let model = fresh_model(variant, &cfg, vzero_model::Device::Cpu, a.seed)?;
    let meta = checkpoint::save(&model, &a.out, &checkpoint_info(variant, 0, 0, None))?;
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
    if game.result().is_over() {
        bail!("the game is over ({}): nothing to evaluate", game.result());
    }
    let device = a.net.device()?;
    let (mut net, meta) = NetEvaluator::load(&a.model, pos.variant(), device)?;
    let state = vzero_mcts::VariantGame::from_game(&game);
    let moves = pos.legal_moves();
    if a.json {
        return eval_json(&mut net, &game, &state, &moves);
    }
    let blend = net.knowledge();
    let [net_reading, search_reading] = readings(&mut net, &state, &moves)?;
    let ((net_priors, net_wdl, _), (search_priors, search_wdl, _)) = (net_reading, search_reading);
    let mut out = std::io::stdout().lock();
    writeln!(out, "model {} (step {}, {} samples)", a.model.display(), meta.step, meta.samples_seen)?;
    writeln!(out, "fen {}", pos.fen())?;
    let wdl = |[w, d, l]: [f32; 3]| format!("{w:.4} {d:.4} {l:.4} value {:+.4}", w - l);
    writeln!(out, "wdl network {}", wdl(net_wdl))?;
    writeln!(out, "wdl search  {}  (with the knowledge blend searches use: {})", wdl(search_wdl), describe_blend(&blend))?;
    writeln!(out, "{:<10} {:>8} {:>8}", "move", "network", "search")?;
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by(|&i, &j| net_priors[j].total_cmp(&net_priors[i]));
    for &i in order.iter().take(a.top) {
        writeln!(out, "{:<10} {:>8.4} {:>8.4}", pos.uci(moves[i]), net_priors[i], search_priors[i])?;
    }
    Ok(())
}

/// One reading of the position: priors over `moves`, W/D/L and moves left (if the net has the head).
type Reading = (Vec<f32>, [f32; 3], Option<f32>);

/// `vzero eval`'s two readings: the network alone, and with the checkpoint's knowledge blend
/// (capture prior and material value) as searches use them; while the blend is on they differ.
/// The evaluator's blend is left as it was.
fn readings(net: &mut NetEvaluator, state: &vzero_mcts::VariantGame, moves: &[vzero_rules::Move]) -> Result<[Reading; 2]> {
    let blend = net.knowledge();
    let mut read = |knowledge| -> Result<Reading> {
        net.set_knowledge(knowledge);
        let e = net.evaluate_batch(&[state], &[moves])?;
        Ok((e.policy(0).to_vec(), e.wdl[0], e.moves_left.first().copied()))
    };
    let both = [read(vzero_mcts::Knowledge::default()), read(blend)];
    net.set_knowledge(blend);
    let [a, b] = both;
    Ok([a?, b?])
}

/// The knowledge blend's weights, for `vzero eval`'s second reading.
fn describe_blend(k: &vzero_mcts::Knowledge) -> String {
    format!("capture prior weight {:.2}, material value weight {:.2}", k.prior_weight, k.value_weight)
}

/// `vzero eval --json`: everything a Python user needs to feed the position to an exported
/// network and compare: planes, policy indices, and the outputs with and without the blend.
fn eval_json(net: &mut NetEvaluator, game: &vzero_rules::Game, state: &vzero_mcts::VariantGame, moves: &[vzero_rules::Move]) -> Result<()> {
    let pos = game.position();
    let planes = net.input().encode(pos, state.repetitions());
    let indices: Vec<usize> = moves.iter().map(|&m| net.moves().encode(pos, m).context("a legal move without a policy index")).collect::<Result<_>>()?;
    let outputs = readings(net, state, moves)?.map(|(priors, wdl, moves_left)| serde_json::json!({ "priors": priors, "wdl": wdl, "moves_left": moves_left }));
    let doc = serde_json::json!({
        "variant": pos.variant().name(),
        "fen": pos.fen(),
        "shape": net.input().shape(),
        "planes": planes,
        "moves": moves.iter().map(|&m| pos.uci(m)).collect::<Vec<_>>(),
        "indices": indices,
        "net": outputs[0],
        "search": outputs[1],
    });
    println!("{doc}");
    Ok(())
}

/// `vzero export`: the network for other tools.
pub fn export(a: ExportArgs) -> Result<()> {
    let meta = checkpoint::read_meta(&a.model)?;
    if !a.force && a.out.exists() {
        bail!("{} exists: not overwritten; pass --force to replace it", a.out.display());
    }
    crate::cmd::out::create_parent(&a.out)?;
    let variant = vzero_rules::Variant::load(&meta.variant).with_context(|| format!("{}: variant", a.model.display()))?;
    let (model, meta) = vzero_model::load_model(&a.model, variant, vzero_model::Device::Cpu)?;
    let info = match a.format {
        ExportFormat::Torchscript => vzero_model::export_torchscript(&model, &meta, &a.out)?,
    };
    println!(
        "wrote {} and {}.json: TorchScript, input [B, {}, {}, {}] -> [B, {}] = {}, {} step {}",
        a.out.display(),
        a.out.display(),
        info.input[0],
        info.input[1],
        info.input[2],
        info.outputs.last().map_or(0, |o| o.2),
        info.outputs.iter().map(|(n, a, b)| format!("{n} {a}..{b}")).collect::<Vec<_>>().join(" | "),
        info.variant,
        info.step
    );
    Ok(())
}
