//! Encoding tests on random playouts of every built-in variant.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use vzero_encoding::{fingerprint, frame_square, InputEncoder, MoveEncoder, MoveEntry, Plane, ENCODING_VERSION};
use vzero_rules::variant::builtin_names;
use vzero_rules::{Color, Game, MoveKind, Position, Variant};

/// Positions (with repetition counts) from seeded random playouts.
fn playouts(v: Variant, games: usize, max_plies: usize, seed: u64) -> Vec<(Position, usize)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = Game::startpos(v);
        for _ in 0..max_plies {
            out.push((*g.position(), g.repetitions()));
            if g.result().is_over() {
                break;
            }
            let moves = g.position().legal_moves();
            let m = moves[rng.gen_range(0..moves.len())];
            g.play(m);
        }
    }
    out
}

#[test]
fn every_legal_move_has_a_unique_index_that_decodes_back() {
    for name in builtin_names() {
        let v = Variant::builtin(name).unwrap();
        let enc = MoveEncoder::new(v);
        let positions = playouts(v, 30, 250, 0xC0FFEE ^ name.len() as u64);
        assert!(positions.len() >= 1000, "{name}: only {} positions", positions.len());
        let mut kinds: HashMap<String, usize> = HashMap::new();
        let mut used = vec![false; enc.len()];
        for (pos, _) in &positions {
            let legal = enc.legal_indices(pos);
            let mut seen = HashMap::new();
            for &(i, m) in &legal {
                assert!(i < enc.len(), "{name}: index {i} out of range");
                if let Some(prev) = seen.insert(i, m) {
                    panic!("{name}: {} and {} share index {i} in {}", pos.uci(prev), pos.uci(m), pos.fen());
                }
                assert_eq!(enc.decode(pos, i), Some(m), "{name}: decode(encode({})) in {}", pos.uci(m), pos.fen());
                // The index names the move as White would write it in the mover's frame.
                if pos.side_to_move() == Color::White && m.kind() != MoveKind::Castle {
                    assert_eq!(enc.describe(i).trim_end_matches('+').to_lowercase(), pos.uci(m).trim_end_matches('+').to_lowercase());
                }
                used[i] = true;
                *kinds.entry(format!("{:?}", m.kind())).or_default() += 1;
            }
        }
        // An index that no legal move has decodes to nothing.
        let (pos, _) = &positions[positions.len() / 2];
        let legal: Vec<usize> = enc.legal_indices(pos).into_iter().map(|(i, _)| i).collect();
        let missing = (0..enc.len()).find(|i| !legal.contains(i)).unwrap();
        assert_eq!(enc.decode(pos, missing), None);
        assert_eq!(enc.decode(pos, enc.len()), None);
        let coverage = used.iter().filter(|&&u| u).count();
        println!(
            "{name}: {} positions, policy size {} (sections {:?}), {} indices used, move kinds {:?}",
            positions.len(),
            enc.len(),
            enc.section_sizes(),
            coverage,
            kinds
        );
    }
}

#[test]
fn policy_sizes_are_reasonable() {
    for name in builtin_names() {
        let v = Variant::builtin(name).unwrap();
        let enc = MoveEncoder::new(v);
        let area = v.files() * v.ranks();
        println!("{name}: policy size {} sections {:?}", enc.len(), enc.section_sizes());
        assert!(enc.len() < area * area + 2000, "{name}: {}", enc.len());
        if area == 144 {
            assert!(enc.len() < 20_000, "{name}: {}", enc.len());
        }
        // Sections match the variant's features.
        let [_, promo, shogi, drops, pass] = enc.section_sizes();
        assert_eq!(promo > 0, !v.def().promotion.is_empty(), "{name}");
        assert_eq!(shogi > 0, v.def().shogi_promotion.is_some(), "{name}");
        assert_eq!(drops > 0, v.has_drops(), "{name}");
        assert_eq!(pass == 1, v.has_dictator(), "{name}");
        for i in 0..enc.len() {
            if let Some(MoveEntry::Pass) = enc.entry(i) {
                assert_eq!(enc.describe(i), "0000");
            }
        }
    }
}

#[test]
fn input_planes_have_the_documented_shape() {
    for name in builtin_names() {
        let v = Variant::builtin(name).unwrap();
        let enc = InputEncoder::new(v);
        let names = enc.plane_names();
        assert_eq!(names.len(), enc.num_planes());
        assert_eq!(enc.shape(), [enc.num_planes(), v.ranks(), v.files()]);
        assert_eq!(enc.size(), enc.num_planes() * v.ranks() * v.files());
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{name}: duplicate plane names");
        let area = v.ranks() * v.files();
        for (pos, reps) in playouts(v, 4, 120, 7) {
            let x = enc.encode(&pos, reps);
            assert_eq!(x.len(), enc.size());
            assert!(x.iter().all(|a| a.is_finite() && *a >= 0.0));
            // Every piece lands on exactly one piece plane.
            let pieces = (0..area).filter(|&s| pos.piece_at(vzero_rules::Square(s as u8)).is_some()).count();
            let ones: f32 = enc
                .planes()
                .iter()
                .enumerate()
                .filter(|(_, p)| matches!(p, Plane::Piece { .. }))
                .map(|(i, _)| x[i * area..(i + 1) * area].iter().sum::<f32>())
                .sum();
            assert_eq!(ones as usize, pieces);
            let ones_plane = enc.planes().iter().position(|p| *p == Plane::Ones).unwrap();
            assert!(x[ones_plane * area..(ones_plane + 1) * area].iter().all(|&a| a == 1.0));
        }
        println!("{name}: {} planes ({}x{}), fingerprint {:016x}", enc.num_planes(), v.ranks(), v.files(), fingerprint(v));
    }
    println!("encoding version {ENCODING_VERSION}");
}

fn plane_of(enc: &InputEncoder, want: Plane) -> usize {
    enc.planes().iter().position(|&p| p == want).unwrap_or_else(|| panic!("no plane {want:?}"))
}

#[test]
fn black_to_move_sees_its_pieces_on_own_planes_from_below() {
    for name in builtin_names() {
        let v = Variant::builtin(name).unwrap();
        let enc = InputEncoder::new(v);
        let mut g = Game::startpos(v);
        let m = g.position().legal_moves()[0];
        g.play(m);
        let pos = *g.position();
        assert_eq!(pos.side_to_move(), Color::Black);
        let x = enc.encode_game(&g);
        let (files, ranks) = (v.files(), v.ranks());
        let area = files * ranks;
        for s in 0..area {
            if let Some(p) = pos.piece_at(vzero_rules::Square(s as u8)) {
                let own = p.color == Color::Black;
                let plane = plane_of(&enc, Plane::Piece { own, piece: p.kind });
                let fs = frame_square(s, Color::Black, files, ranks);
                assert_eq!(x[plane * area + fs], 1.0, "{name}: {s}");
                // Black's pieces start on its back ranks, i.e. the bottom rows of its frame.
                if own {
                    assert!(fs / files < ranks / 2, "{name}: own piece at frame row {}", fs / files);
                }
            }
        }
        assert_eq!(x[plane_of(&enc, Plane::WhiteToMove) * area], 0.0);
        let x0 = enc.encode(g.start(), 0);
        assert_eq!(x0[plane_of(&enc, Plane::WhiteToMove) * area], 1.0);
        // The own royal piece is on the mover's back rank (frame row 0) for both sides.
        for (x, p, c) in [(&x0, g.start(), Color::White), (&x, &pos, Color::Black)] {
            let k = p.king_square(c).unwrap();
            let kind = p.piece_at(k).unwrap().kind;
            let plane = plane_of(&enc, Plane::Piece { own: true, piece: kind });
            let fk = frame_square(k.index(), c, files, ranks);
            assert!(fk < files, "{name}: {c:?} royal not on its frame's row 0");
            assert_eq!(x[plane * area + fk], 1.0);
        }
    }
}

#[test]
fn hand_counts_and_dictator_state_appear() {
    // Shogun: play until a side has something in hand.
    let v = Variant::builtin("shogun").unwrap();
    let enc = InputEncoder::new(v);
    let area = 64;
    let mut seen_hand = 0;
    for (pos, reps) in playouts(v, 10, 150, 3) {
        let x = enc.encode(&pos, reps);
        for &pt in v.hand_types() {
            for own in [true, false] {
                let c = if own { pos.side_to_move() } else { pos.side_to_move().flip() };
                let n = pos.hand_count(c, pt);
                let Plane::Hand { max, .. } = enc.planes()[enc.planes().iter().position(|p| matches!(p, Plane::Hand { own: o, piece, .. } if *o == own && *piece == pt)).unwrap()] else { unreachable!() };
                let i = plane_of(&enc, Plane::Hand { own, piece: pt, max });
                assert!(x[i * area..(i + 1) * area].iter().all(|&a| a == n as f32 / max as f32));
                if n > 0 {
                    seen_hand += 1;
                }
            }
        }
    }
    assert!(seen_hand > 0, "no position with pieces in hand");

    // SPQR: Dictator planes follow the position.
    let v = Variant::builtin("spqr").unwrap();
    let enc = InputEncoder::new(v);
    let area = 144;
    let mut pending = 0;
    let mut dictators = 0;
    for (pos, reps) in playouts(v, 20, 400, 11) {
        let x = enc.encode(&pos, reps);
        let us = pos.side_to_move();
        let p = plane_of(&enc, Plane::SecondStepPending);
        assert_eq!(x[p * area], pos.pending_second_step().is_some() as u8 as f32);
        let d = plane_of(&enc, Plane::Dictator { own: true });
        assert_eq!(x[d * area], pos.is_dictator(us) as u8 as f32);
        let d = plane_of(&enc, Plane::Dictator { own: false });
        assert_eq!(x[d * area], pos.is_dictator(us.flip()) as u8 as f32);
        let k = plane_of(&enc, Plane::KingOrigin);
        let marked: f32 = x[k * area..(k + 1) * area].iter().sum();
        if let Some(o) = pos.pending_second_step() {
            pending += 1;
            assert_eq!(marked, 1.0);
            assert_eq!(x[k * area + frame_square(o.index(), us, 12, 12)], 1.0);
        } else {
            assert_eq!(marked, 0.0);
        }
        dictators += pos.is_dictator(us) as usize;
    }
    println!("spqr: {pending} positions with a pending second step, {dictators} with a Dictator to move");
}

#[test]
fn repetition_planes_follow_the_game() {
    let v = Variant::builtin("spqr").unwrap();
    let enc = InputEncoder::new(v);
    let mut g = Game::startpos(v);
    for uci in ["b1c3", "b12c10", "c3b1", "c10b12", "b1c3", "b12c10", "c3b1", "c10b12"] {
        g.play_uci(uci).unwrap();
    }
    assert_eq!(g.repetitions(), 2);
    let x = enc.encode_game(&g);
    let area = 144;
    assert_eq!(x[plane_of(&enc, Plane::Repetition { n: 1 }) * area], 1.0);
    assert_eq!(x[plane_of(&enc, Plane::Repetition { n: 2 }) * area], 1.0);
    let x = enc.encode(g.position(), 1);
    assert_eq!(x[plane_of(&enc, Plane::Repetition { n: 2 }) * area], 0.0);
    let r50 = plane_of(&enc, Plane::Rule50 { scale: 100 });
    assert!((x[r50 * area] - 8.0 / 100.0).abs() < 1e-6);
}

#[test]
fn same_index_means_the_same_move_for_both_sides() {
    // 1. e4 in FIDE-like shogun-auto and 1... e5 map to the same index.
    let v = Variant::builtin("shogun-auto").unwrap();
    let enc = MoveEncoder::new(v);
    let mut pos = Position::startpos(v);
    let e4 = pos.parse_uci("e2e4").unwrap();
    let i = enc.encode(&pos, e4).unwrap();
    pos.play(e4);
    let e5 = pos.parse_uci("e7e5").unwrap();
    assert_eq!(enc.encode(&pos, e5), Some(i));
    assert_eq!(enc.describe(i), "e2e4");
}

#[test]
fn dictator_moves_and_pass_round_trip() {
    // Random playouts that favour king moves, so that kings reach the territory and the
    // Dictator's second step (and pass) come up often.
    let v = Variant::builtin("spqr").unwrap();
    let enc = MoveEncoder::new(v);
    let mut rng = StdRng::seed_from_u64(99);
    let (mut pending, mut passes) = (0, 0);
    for _ in 0..40 {
        let mut g = Game::startpos(v);
        for _ in 0..300 {
            if g.result().is_over() {
                break;
            }
            let pos = *g.position();
            let legal = enc.legal_indices(&pos);
            let mut seen = std::collections::HashSet::new();
            for &(i, m) in &legal {
                assert!(seen.insert(i), "shared index in {}", pos.fen());
                assert_eq!(enc.decode(&pos, i), Some(m));
                passes += (m.kind() == MoveKind::Pass) as usize;
            }
            pending += pos.pending_second_step().is_some() as usize;
            let ksq = pos.king_square(pos.side_to_move()).map(|s| s.index());
            let kingish: Vec<_> = legal.iter().filter(|(_, m)| Some(m.from()) == ksq || m.kind() == MoveKind::Pass).collect();
            let m = if !kingish.is_empty() && rng.gen_bool(0.6) {
                kingish[rng.gen_range(0..kingish.len())].1
            } else {
                legal[rng.gen_range(0..legal.len())].1
            };
            g.play(m);
        }
    }
    println!("spqr: {pending} positions with a pending second step, {passes} legal passes");
    assert!(pending > 20 && passes > 20, "pending {pending}, passes {passes}");
}

#[test]
fn readme_layout_is_up_to_date() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains(&vzero_encoding::layout_markdown()),
        "encoding/README.md is stale: regenerate with `cargo run -p vzero-encoding --example layout`"
    );
}
