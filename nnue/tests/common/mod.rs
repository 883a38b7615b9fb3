//! Shared test helpers: variants, mappings and positions from random play.

#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_nnue::FsfMapping;
use vzero_rules::{Position, Variant};

/// A built-in variant and its mapping.
pub fn mapping(name: &str) -> (Variant, FsfMapping) {
    let v = Variant::builtin(name).expect("built-in variant");
    (v, FsfMapping::for_variant(v).expect("mapping"))
}

/// `n` positions from random play (games restarted after 120 plies or when they end), with
/// exactly one king per side.
pub fn random_positions(v: Variant, n: usize, seed: u64) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    let mut pos = Position::startpos(v);
    let mut ply = 0;
    while out.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() || ply >= 120 || pos.flag_reached() {
            pos = Position::startpos(v);
            ply = 0;
            continue;
        }
        pos.play(moves[rng.gen_range(0..moves.len())]);
        ply += 1;
        if pos.king_square(vzero_rules::Color::White).is_some() && pos.king_square(vzero_rules::Color::Black).is_some()
        {
            out.push(pos);
        }
    }
    out
}
