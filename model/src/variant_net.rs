//! A variant's network: what its checkpoints must match, its policy map and shape, a fresh or a
//! loaded network, and random encoded positions for benchmarks. Used by [`crate::evaluator`]
//! and [`crate::eval_server`] alike.

use std::path::Path;

use tch::Device;
use vzero_encoding::{fingerprint, InputEncoder, MoveEncoder, MoveEntry, ENCODING_VERSION};
use vzero_rules::{Game, Variant};

use crate::checkpoint::{self, CheckpointInfo, CheckpointMeta, Expected};
use crate::config::{policy_map_from_keys, NetConfig, PolicyHead};
use crate::error::Result;
use crate::model::{LegalMoves, Model};

/// What a checkpoint of `variant` must match: variant, encoding version and fingerprint.
pub fn expected(variant: Variant) -> Expected<'static> {
    Expected { encoding_fingerprint: Some(fingerprint(variant)), ..Expected::new(variant.name(), ENCODING_VERSION) }
}

/// The checkpoint description of a network of `variant` at a training step.
pub fn checkpoint_info(variant: Variant, step: u64, samples_seen: u64, parent: Option<String>) -> CheckpointInfo {
    CheckpointInfo {
        variant: variant.name().to_string(),
        encoding_version: ENCODING_VERSION,
        encoding_fingerprint: Some(fingerprint(variant)),
        step,
        samples_seen,
        parent,
        knowledge: None,
        release: Default::default(),
    }
}

/// `n` positions of uniformly random games of `variant` (every ply; a new game after the end or
/// `max_plies` plies), encoded: input planes (n x C x H x W) and legal move indices, for
/// benchmarks and accuracy checks. Deterministic for a given `seed`.
pub fn random_positions(variant: Variant, n: usize, max_plies: usize, seed: u64) -> (Vec<f32>, LegalMoves) {
    let input = InputEncoder::new(variant);
    let moves = MoveEncoder::new(variant);
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let (mut planes, mut legal) = (Vec::with_capacity(n * input.size()), LegalMoves::with_capacity(n, n * 32));
    let mut game = Game::startpos(variant);
    while legal.len() < n {
        if game.result().is_over() || game.moves().len() >= max_plies {
            game = Game::startpos(variant);
        }
        let pos = *game.position();
        planes.extend(input.encode(&pos, game.repetitions()));
        legal.push_iter(moves.legal_indices(&pos).into_iter().map(|(i, _)| i as u32));
        let ms = pos.legal_moves();
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        game.play(ms[(state >> 33) as usize % ms.len()]);
    }
    (planes, legal)
}

/// The policy map of `variant`'s move encoding: each move index goes to a cell
/// (plane = move kind and displacement in the mover's frame, square = from-square, or the target
/// for drops). Returns the number of planes and the map.
pub fn policy_map(variant: Variant) -> Result<(usize, Vec<u32>)> {
    let moves = MoveEncoder::new(variant);
    let files = variant.files() as i32;
    let delta = |from: usize, to: usize| (to as i32 / files - from as i32 / files, to as i32 % files - from as i32 % files);
    let keys: Vec<(usize, (u8, i32, i32, u8))> = (0..moves.len())
        .map(|i| match moves.entry(i).expect("index in range") {
            MoveEntry::Board { from, to } => (from, (0, delta(from, to).0, delta(from, to).1, 0)),
            MoveEntry::Promotion { from, to, piece } => (from, (1, delta(from, to).0, delta(from, to).1, piece.0)),
            MoveEntry::PiecePromotion { from, to } => (from, (2, delta(from, to).0, delta(from, to).1, 0)),
            MoveEntry::Drop { piece, to } => (to, (3, 0, 0, piece.0)),
            MoveEntry::Pass => (0, (4, 0, 0, 0)),
        })
        .collect();
    policy_map_from_keys(variant.files() * variant.ranks(), &keys)
}

/// The network shape for `variant` with `blocks` x `channels`, a mapped policy head (see
/// [`policy_map`]) and the default value and moves-left heads.
pub fn net_config(variant: Variant, blocks: usize, channels: usize) -> Result<NetConfig> {
    let input = InputEncoder::new(variant);
    let moves = MoveEncoder::new(variant);
    let (planes, _) = policy_map(variant)?;
    Ok(NetConfig {
        policy_head: PolicyHead::Mapped { planes },
        ..NetConfig::with_size(input.num_planes(), input.height(), input.width(), moves.len(), blocks, channels)
    })
}

/// A freshly initialised network for `variant` (seeded), with the variant's policy map when the
/// head is mapped.
pub fn fresh_model(variant: Variant, cfg: &NetConfig, device: Device, seed: u64) -> Result<Model> {
    let map = match cfg.policy_head {
        PolicyHead::Mapped { .. } => Some(policy_map(variant)?.1),
        _ => None,
    };
    Model::seeded(cfg, device, map.as_deref(), seed)
}

/// The file stem of a checkpoint path: the network's name.
pub(crate) fn checkpoint_stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Loads a checkpoint of `variant` onto `device`, refusing one of another variant, encoding
/// version or policy map.
pub fn load_model(path: &Path, variant: Variant, device: Device) -> Result<(Model, CheckpointMeta)> {
    let map = policy_map(variant)?.1;
    let expected = Expected { policy_map: None, ..expected(variant) };
    let meta = checkpoint::read_meta(path)?;
    let expected = match meta.net.policy_head {
        PolicyHead::Mapped { .. } => Expected { policy_map: Some(&map), ..expected },
        _ => expected,
    };
    checkpoint::load(path, &expected, device)
}
