//! Helpers for the search tests on the rules core's variants.

use rand::Rng;
use vzero_mcts::{Game, GumbelConfig, RootMode, SearchConfig, VariantGame};
use vzero_rules::{Color, Game as RulesGame, Move, Variant};

/// A mate in two (three plies) of the side to move in each 8x8 variant.
pub const MATES_IN_TWO: [(&str, &str); 4] = [
    ("empire", "4k3/8/8/8/7r/6r1/8/K7 b - - 0 1"),
    // Queen sacrifice then smothered mate: Qg8+ Rxg8 Nf7# (the captured queen cannot block a knight).
    ("shogun", "5r1k/6pp/8/3+F2N1/2B5/8/8/4K3[] w - - 0 1"),
    ("empire-faceoff", "k7/8/6R1/7R/8/8/8/4K3 w - - 0 1"),
    ("shogun-auto", "5r1k/6pp/8/3Q2N1/2B5/8/8/4K3[] w - - 0 1"),
];

pub fn variant(name: &str) -> Variant {
    Variant::builtin(name).unwrap()
}

/// Whether a built-in variant is present in this build (the later ones are tested when so).
pub fn present(name: &str) -> bool {
    vzero_rules::variant::builtin_names().contains(&name)
}

pub fn rules_game(v: &str, fen: &str, moves: &str) -> RulesGame {
    let mut g = RulesGame::from_fen(variant(v), fen).unwrap();
    for m in moves.split_whitespace() {
        g.play_uci(m).unwrap();
    }
    g
}

pub fn state(v: &str, fen: &str, moves: &str) -> VariantGame {
    VariantGame::from_game(&rules_game(v, fen, moves))
}

pub fn uci(g: &RulesGame, m: Move) -> String {
    g.position().uci(m)
}

/// Whether `me` wins by force within `plies` plies (by the rules core's results).
pub fn forced_win(g: &mut RulesGame, me: Color, plies: u32) -> bool {
    let r = g.result();
    let side = g.position().side_to_move();
    if r.is_over() {
        let v = if side == me { r.value() } else { -r.value() };
        return v > 0.0;
    }
    if plies == 0 {
        return false;
    }
    let moves = g.position().legal_moves();
    let mut check = |m: Move| {
        g.play(m);
        let w = forced_win(g, me, plies - 1);
        g.undo();
        w
    };
    if side == me {
        moves.into_iter().any(&mut check)
    } else {
        moves.into_iter().all(&mut check)
    }
}

/// A Gumbel root without noise that considers every legal move (with uniform priors and m = 16,
/// only the first 16 moves in generation order would be looked at).
pub fn gumbel_greedy() -> SearchConfig {
    SearchConfig {
        root_mode: RootMode::Gumbel(GumbelConfig { gumbel_scale: 0.0, max_considered: 1024, ..GumbelConfig::default() }),
        ..SearchConfig::default()
    }
}

/// The positions of a game of uniformly random moves from the start of `v`, the finished one
/// last (or the one after `max_plies` plies).
pub fn random_game(v: vzero_rules::Variant, rng: &mut impl Rng, max_plies: usize) -> Vec<VariantGame> {
    let mut line = vec![VariantGame::startpos(v)];
    let mut moves = Vec::new();
    loop {
        let st = line.last().unwrap();
        moves.clear();
        if st.expand(&mut moves).is_some() || line.len() > max_plies {
            return line;
        }
        let mut next = st.clone();
        next.play(moves[rng.gen_range(0..moves.len())]);
        line.push(next);
    }
}
