//! Synthetic training data for tests and benchmarks: learnable targets of the variant's shape.

use rand::{rngs::StdRng, Rng, SeedableRng};
use vzero_data::{ChunkMeta, Row};
use vzero_encoding::{InputEncoder, MoveEncoder, ENCODING_VERSION};
use vzero_rules::Variant;

/// Short-term horizons of the synthetic rows.
pub const SYNTH_HORIZONS: [u32; 2] = [6, 16];

/// Chunk metadata for `variant`'s encoding.
pub fn synth_meta(variant: Variant, network: &str) -> ChunkMeta {
    let inp = InputEncoder::new(variant);
    ChunkMeta {
        variant: variant.name().to_string(),
        encoding_version: ENCODING_VERSION,
        planes: inp.shape(),
        policy_size: MoveEncoder::new(variant).len(),
        network: network.into(),
        worker: "synth".into(),
        created_unix: 0,
        short_term_horizons: SYNTH_HORIZONS.to_vec(),
        source: vzero_data::Source::SelfPlay,
    }
}

/// `n` rows with random 0/1 planes; the policy target is concentrated (0.9) on move 1 or 2
/// depending on the first cell of plane 0, and the result is a win or a loss depending on the
/// first cell of plane 1. Every 4th row is a "cheap search" row (no policy, policy_weight 0).
/// Auxiliary targets, learnable the same way: the opponent's reply is move 3 or 4 (by plane 0;
/// none at every 80th row, a game's end), the short-term values are +-0.5 (plane 0) and +-0.3
/// (plane 1), the material `tanh((ones in plane 2 - H*W/4) / 4)` (a count, like material).
pub fn synth_rows(variant: Variant, n: usize, seed: u64) -> Vec<Row> {
    let inp = InputEncoder::new(variant);
    let [c, h, w] = inp.shape();
    let area = h * w;
    let policy_size = MoveEncoder::new(variant).len() as u32;
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let planes: Vec<f32> = (0..c * area).map(|_| if rng.gen_bool(0.25) { 1.0 } else { 0.0 }).collect();
            let a = planes[0] > 0.5;
            let win = c > 1 && planes[area] > 0.5;
            let material = if c > 2 { ((planes[2 * area..3 * area].iter().sum::<f32>() - area as f32 / 4.0) / 4.0).tanh() } else { 0.0 };
            let full = i % 4 != 3;
            let policy = if full {
                let (hit, other) = if a { (1, 2) } else { (2, 1) };
                vec![(hit, 0.9), (other, 0.05), (rng.gen_range(3..policy_size), 0.05)]
            } else {
                Vec::new()
            };
            Row {
                planes,
                policy,
                wdl: if win { [1.0, 0.0, 0.0] } else { [0.0, 0.0, 1.0] },
                search_value: if win { 0.5 } else { -0.5 },
                moves_left: rng.gen_range(0.0..100.0f32).round(),
                ply: (i % 80) as u32,
                weight: 1.0,
                policy_weight: if full { 1.0 } else { 0.0 },
                opponent_policy: if i % 80 == 79 { Vec::new() } else { vec![(if a { 3 } else { 4 }, 1.0)] },
                opponent_weight: if i % 80 == 79 { 0.0 } else { 1.0 },
                short_term: vec![if a { 0.5 } else { -0.5 }, if win { 0.3 } else { -0.3 }],
                short_term_weight: 1.0,
                material,
                material_weight: 1.0,
            }
        })
        .collect()
}
