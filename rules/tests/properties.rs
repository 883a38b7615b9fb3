//! Invariants under seeded random play, for every built-in variant: FEN round trip, UCI round
//! trip, undo restores FEN and key, incremental key equals the key from scratch, and legal moves
//! never leave the mover's royal piece attacked.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use vzero_rules::{Game, Position, Variant};

/// Plays `games` random games of at most `max_plies` and checks every position reached.
fn random_play(variant: &str, games: usize, max_plies: usize, seed: u64) -> usize {
    let v = Variant::builtin(variant).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut checked = 0;
    for _ in 0..games {
        let mut game = Game::startpos(v);
        for _ in 0..max_plies {
            let pos = *game.position();
            check_position(&pos, &mut rng);
            checked += 1;
            if game.result().is_over() {
                break;
            }
            let moves = pos.legal_moves();
            let m = moves[rng.gen_range(0..moves.len())];
            let before = pos.fen();
            game.play(m);
            assert_eq!(game.position().compute_key(), game.position().key(), "incremental key after {} in {before}", pos.uci(m));
            let mut copy = game.clone();
            copy.undo();
            assert_eq!(copy.position().fen(), before, "undo restores the FEN");
            assert_eq!(copy.position().key(), pos.key(), "undo restores the key");
        }
    }
    checked
}

fn check_position(pos: &Position, rng: &mut StdRng) {
    let v = pos.variant();
    let fen = pos.fen();
    let back = Position::from_fen(v, &fen).unwrap_or_else(|e| panic!("own FEN unreadable: {e}"));
    assert_eq!(back.fen(), fen, "FEN round trip");
    assert_eq!(back.key(), pos.key(), "key after FEN round trip of {fen}");
    let moves = pos.legal_moves();
    let mut seen = HashMap::new();
    for &m in &moves {
        let text = pos.uci(m);
        assert!(seen.insert(text.clone(), m).is_none(), "two legal moves written {text} in {fen}");
        // The mover's royal piece is never left attacked.
        let mut next = *pos;
        next.play(m);
        let mover = pos.side_to_move();
        assert!(!next.is_royal_attacked(mover), "{text} leaves the royal piece attacked in {fen}");
        assert_eq!(pos.gives_check(m), next.is_royal_attacked(mover.flip()), "gives_check of {text} in {fen}");
    }
    assert_eq!(pos.has_legal_move(), !moves.is_empty(), "has_legal_move in {fen}");
    // Mate candidates: exactly the checking moves; with stalemates, a superset of every move
    // that leaves the opponent (to move) without a legal move.
    let checks: Vec<u32> = (0..moves.len() as u32).filter(|&i| pos.gives_check(moves[i as usize])).collect();
    let mut cands = Vec::new();
    pos.mate_candidates(&moves, false, &mut cands);
    assert_eq!(cands, checks, "mate candidates in {fen}");
    cands.clear();
    pos.mate_candidates(&moves, true, &mut cands);
    assert!(checks.iter().all(|i| cands.contains(i)), "stalemate candidates miss a check in {fen}");
    for (i, &m) in moves.iter().enumerate() {
        let mut next = *pos;
        next.play(m);
        if next.side_to_move() != pos.side_to_move() && !next.has_legal_move() {
            assert!(cands.contains(&(i as u32)), "{} leaves no move but is no candidate in {fen}", pos.uci(m));
        }
    }
    // Parse back a few moves by their UCI text.
    for _ in 0..3.min(moves.len()) {
        let m = moves[rng.gen_range(0..moves.len())];
        assert_eq!(pos.parse_uci(&pos.uci(m)).unwrap(), m);
    }
}

#[test]
fn empire_invariants() {
    assert!(random_play("empire", 40, 160, 1) > 3000);
}

/// The other built-in variants (Dictator double moves, campmate, flying general) under the same checks.
#[test]
fn other_variant_invariants() {
    for (i, name) in vzero_rules::variant::builtin_names().into_iter().filter(|n| !["empire", "shogun"].contains(n)).enumerate() {
        assert!(random_play(name, 15, 160, 10 + i as u64) > 1000, "{name}");
    }
}

#[test]
fn shogun_invariants() {
    assert!(random_play("shogun", 40, 160, 2) > 3000);
}
