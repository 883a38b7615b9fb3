//! Rules of spqr, empire-faceoff and shogun-auto, each case written from the rules text in
//! `../shared/rules/` (the sentence it checks is quoted above it), plus start-position perft.

use vzero_rules::{Game, Position, Variant};

fn moves(variant: &str, fen: &str, played: &[&str]) -> Vec<String> {
    let mut g = Game::from_fen(Variant::builtin(variant).unwrap(), fen).unwrap_or_else(|e| panic!("{e}"));
    for m in played {
        g.play_uci(m).unwrap_or_else(|e| panic!("{e}"));
    }
    let pos = g.position();
    let mut v: Vec<String> = pos.legal_moves().into_iter().map(|m| pos.uci(m)).collect();
    v.sort();
    v
}

fn set(list: &str) -> Vec<String> {
    let mut v: Vec<String> = list.split_whitespace().map(str::to_string).collect();
    v.sort();
    v
}

fn after(variant: &str, fen: &str, played: &[&str]) -> Game {
    let mut g = Game::from_fen(Variant::builtin(variant).unwrap(), fen).unwrap();
    for m in played {
        g.play_uci(m).unwrap_or_else(|e| panic!("{e}"));
    }
    g
}

#[test]
fn start_position_perft_is_recorded() {
    // Depth 3 from each start position; a change here is a change of the rules.
    for (variant, counts) in [
        ("spqr", [54u64, 2916, 160772]),
        ("empire-faceoff", [20, 320, 7122]),
        ("shogun-auto", [20, 400, 8902]),
    ] {
        let pos = Position::startpos(Variant::builtin(variant).unwrap());
        for (d, &n) in counts.iter().enumerate() {
            assert_eq!(pos.perft(d as u32 + 1), n, "{variant} depth {}", d + 1);
        }
    }
}

// ---------------------------------------------------------------- spqr

const SPQR_KINGS: &str = "5k6/12/12/12/12/12/12/12/12/12/12/6K5";

#[test]
fn spqr_double_step_only_from_the_pawn_rank() {
    // "a pawn standing on its side's pawn rank (rank 4 for White, rank 9 for Black) may move two
    // squares forward ... A pawn on rank 3 (10) has no double step from there."
    let fen = "5k6/12/12/4p7/12/12/12/12/5P6/4P7/12/6K5 w - - 0 1";
    let m = moves("spqr", fen, &[]);
    assert!(m.contains(&"f4f6".into()) && m.contains(&"f4f5".into()));
    assert!(m.contains(&"e3e4".into()) && !m.contains(&"e3e5".into()));
    let m = moves("spqr", fen, &["e3e4"]);
    assert!(m.contains(&"e9e7".into()), "Black double-steps from rank 9");
}

#[test]
fn spqr_en_passant_after_a_double_step() {
    // "En passant applies after any double step, as in chess."
    let fen = "5k6/12/12/4p7/12/3P8/12/12/12/12/12/6K5 b - - 0 1";
    let m = moves("spqr", fen, &["e9e7"]);
    assert!(m.contains(&"d7e8".into()), "{m:?}");
    let g = after("spqr", fen, &["e9e7", "d7e8"]);
    assert!(g.position().fen().starts_with("5k6/12/12/12/4P7/12/12/12/12/12/12/6K5 b"), "{}", g.position().fen());
}

#[test]
fn spqr_promotion_lines() {
    // "reaching rank 9 (4): may promote to a Knight, or stay a pawn; ... rank 10 ... Bishop;
    // rank 11 ... Rook; rank 12 (1): must promote to a Centurion."
    let pawn_on = |rank: usize| {
        let mut rows = vec!["12"; 12];
        rows[0] = "5k6";
        rows[11] = "6K5";
        let r = 12 - rank;
        rows[r] = "P11";
        format!("{} w - - 0 1", rows.join("/"))
    };
    let promos = |rank: usize| -> Vec<String> {
        moves("spqr", &pawn_on(rank), &[]).into_iter().filter(|m| m.starts_with('a')).collect()
    };
    assert_eq!(promos(8), set("a8a9 a8a9n"));
    assert_eq!(promos(9), set("a9a10 a9a10b"));
    assert_eq!(promos(10), set("a10a11 a10a11r"));
    assert_eq!(promos(11), set("a11a12c"));
    // Black's lines are ranks 4, 3, 2, 1.
    let black = "5k6/12/12/12/12/12/12/12/p11/12/12/6K5 b - - 0 1";
    assert!(moves("spqr", black, &[]).contains(&"a4a3b".into()));
}

#[test]
fn spqr_dictator_status_is_gained_in_enemy_territory_and_kept() {
    // "A King that ends a move in enemy territory becomes a Dictator for the rest of the game
    // ... the powers can be used from the side's next turn on."
    let fen = "5k6/12/12/12/12/12/6K5/12/12/12/12/12 w - - 0 1";
    let g = after("spqr", fen, &["g6g7"]);
    let pos = g.position();
    assert!(pos.is_dictator(vzero_rules::Color::White));
    assert_eq!(pos.side_to_move(), vzero_rules::Color::Black, "no double move on the move that gains the status");
    assert!(pos.fen().ends_with(" K"), "{}", pos.fen());
    // Back across the border the status stays, and the next turn may be a double move.
    let g = after("spqr", fen, &["g6g7", "f12f11", "g7g6"]);
    assert!(g.position().is_dictator(vzero_rules::Color::White));
    assert_eq!(g.position().side_to_move(), vzero_rules::Color::White);
    assert_eq!(g.position().pending_second_step().map(|s| s.name(12)), Some("g7".into()));
}

#[test]
fn spqr_second_step_or_pass() {
    // "after a Dictator king move ... the same side may make a second Dictator king move ... or
    // skip it (a pass) ... The second move may return the king to the square it came from."
    let fen = format!("{SPQR_KINGS} w - - 0 1 K");
    let m = moves("spqr", &fen, &["g1g2"]);
    assert_eq!(m, set("0000 g2f1 g2g1 g2h1 g2f2 g2h2 g2f3 g2g3 g2h3"));
    let g = after("spqr", &fen, &["g1g2"]);
    assert_eq!(g.position().fen(), "5k6/12/12/12/12/12/12/12/12/12/6K5/12 w - - 1 1 K:g1");
    let back = Position::from_fen(g.position().variant(), &g.position().fen()).unwrap();
    assert_eq!(back.key(), g.position().key(), "FEN extension round-trips");
    let g = after("spqr", &fen, &["g1g2", "0000"]);
    assert_eq!(g.position().side_to_move(), vzero_rules::Color::Black);
    // "A non-king move is always a single move."
    let fen = format!("5k6/12/12/12/12/12/12/12/12/12/P11/6K5 w - - 0 1 K");
    let g = after("spqr", &fen, &["a2a3"]);
    assert_eq!(g.position().side_to_move(), vzero_rules::Color::Black);
}

#[test]
fn spqr_no_double_move_out_of_check() {
    // "the double move is only available when the side was not in check at the start of the turn."
    let fen = "5k6/12/12/12/12/12/12/12/12/12/12/r5K5 w - - 0 1 K";
    let g = after("spqr", fen, &["g1g2"]);
    assert_eq!(g.position().side_to_move(), vzero_rules::Color::Black);
}

#[test]
fn spqr_dictator_power_never_gives_check() {
    // "if the first king move gives check, the turn ends there (no second move); a second move
    // that would give check is illegal."
    let fen = "12/12/12/12/12/12/12/R2K7k/12/12/12/12 w - - 0 1 K";
    let g = after("spqr", fen, &["d5d6"]);
    assert!(g.position().is_check());
    assert_eq!(g.position().side_to_move(), vzero_rules::Color::Black);
    let fen = "12/12/12/12/12/12/R2K7k/12/12/12/12/12 w - - 0 1 K";
    assert_eq!(moves("spqr", fen, &["d6e6"]), set("0000 e6d6 e6f6"));
}

#[test]
fn spqr_last_rank_wins_and_stalemate_draws() {
    // "A King that reaches the last rank of the enemy territory ... and is not in check there wins at once."
    let fen = "12/K11/12/12/12/12/12/12/12/12/12/11k b - - 0 1";
    let g = after("spqr", fen, &["l1l2", "a11a12"]);
    assert_eq!(g.result().to_string(), "loss campmate");
    // The game ends there: no second step even for a Dictator.
    assert!(g.position().legal_moves().is_empty());
    // "Stalemate is a draw."
    let g = after("spqr", "k11/1R10/2K9/12/12/12/12/12/12/12/12/12 b - - 0 1", &[]);
    assert_eq!(g.result().to_string(), "draw stalemate");
}

// ---------------------------------------------------------------- empire-faceoff

#[test]
fn faceoff_officers_move_as_queens_and_capture_their_own_way() {
    // "Tower ... slides like a Queen ... captures only by sliding orthogonally (Rook)"
    let m = moves("empire-faceoff", "7e/8/3P1P2/8/3t4/8/8/K7 b - - 0 1", &[]);
    assert!(m.contains(&"d4d6".into()) && m.contains(&"d4e5".into()) && !m.contains(&"d4f6".into()));
    // "Siege Tower ... captures only one step orthogonally (Wazir)"
    let m = moves("empire-faceoff", "7e/8/3P1P2/4P3/3s4/3P4/8/K7 b - - 0 1", &[]);
    assert!(m.contains(&"d4d3".into()) && !m.contains(&"d4d6".into()) && !m.contains(&"d4e5".into()));
    // "Cardinal ... captures only by a Knight leap"
    let m = moves("empire-faceoff", "7e/8/2P1PP2/8/3c4/8/8/K7 b - - 0 1", &[]);
    assert!(m.contains(&"d4c6".into()) && m.contains(&"d4e6".into()) && !m.contains(&"d4f6".into()));
    // "Duke ... captures only by sliding diagonally (Bishop)"
    let m = moves("empire-faceoff", "7e/8/3P1P2/8/3d4/8/8/1K6 b - - 0 1", &[]);
    assert!(m.contains(&"d4f6".into()) && !m.contains(&"d4d6".into()) && m.contains(&"d4d5".into()));
    // "A piece attacks (gives check, guards squares) exactly where it could capture."
    let g = after("empire-faceoff", "4K3/8/8/8/8/8/8/t6e w - - 0 1", &[]);
    assert!(!g.position().is_check(), "a tower on a1 does not attack e8 along its quiet diagonal");
    let m = moves("empire-faceoff", "7K/8/8/8/8/8/8/t6e w - - 0 1", &[]);
    assert!(!m.contains(&"h8h1".into()) && m.contains(&"h8g7".into()));
}

#[test]
fn faceoff_royals_may_not_face_on_a_file() {
    // "a move after which the King and the Emperor stand on the same file with no piece between
    // them is illegal ... This includes moving a piece out from between them and either royal
    // stepping onto the open file. Ranks are not affected."
    assert_eq!(moves("empire-faceoff", "4e3/8/8/8/4N3/8/8/4K3 w - - 0 1", &[]), set("e1d1 e1f1 e1d2 e1e2 e1f2"));
    let m = moves("empire-faceoff", "4e3/8/8/8/8/8/8/3K4 w - - 0 1", &[]);
    assert!(!m.contains(&"d1e1".into()) && !m.contains(&"d1e2".into()) && m.contains(&"d1c2".into()));
    assert!(moves("empire-faceoff", "8/8/8/K6e/8/8/8/8 w - - 0 1", &[]).contains(&"a5b5".into()));
    // En passant gets no exemption: it may not open the file between them.
    let m = moves("empire-faceoff", "4e3/3p4/8/4P3/8/8/8/4K3 b - - 0 1", &["d7d5"]);
    assert!(!m.contains(&"e5d6".into()) && m.contains(&"e5e6".into()));
}

#[test]
fn faceoff_pawns_castling_and_promotion() {
    // "Soldiers are chess pawns for Black: double step from rank 7, en passant both ways, and they
    // promote on rank 1 to Tower, Duke, Cardinal or Siege Tower (not Emperor)."
    let m = moves("empire-faceoff", "7e/8/8/8/8/8/1p6/6K1 b - - 0 1", &[]);
    assert_eq!(m.iter().filter(|m| m.starts_with("b2")).cloned().collect::<Vec<_>>(), set("b2b1t b2b1d b2b1c b2b1s"));
    let m = moves("empire-faceoff", "4e3/8/8/8/3p4/8/4P3/7K w - - 0 1", &["e2e4"]);
    assert!(m.contains(&"d4e3".into()));
    // "Kingdom: castling, en passant, promotion on rank 8 to Q, R, B or N"
    let m = moves("empire-faceoff", "e7/2P5/8/8/8/8/P7/R3K2R w KQ - 0 1", &[]);
    for mv in ["c7c8q", "c7c8r", "c7c8b", "c7c8n", "e1g1", "e1c1"] {
        assert!(m.contains(&mv.to_string()), "{mv}");
    }
    // "Empire: no castling."
    let e = Position::from_fen(Variant::builtin("empire-faceoff").unwrap(), "t3e2t/8/8/8/8/8/8/4K3 w k - 0 1");
    assert!(e.is_err());
    // "stalemate is a draw"
    let g = after("empire-faceoff", "e7/2K5/1Q6/8/8/8/8/8 b - - 0 1", &[]);
    assert_eq!(g.result().to_string(), "draw stalemate");
}

// ---------------------------------------------------------------- shogun-auto

#[test]
fn auto_promotion_is_forced_in_the_zone() {
    // "A piece other than the King that ends its move on a zone square ... is promoted at once;
    // promotion is mandatory and automatic"
    let m = moves("shogun-auto", "4k3/8/8/4P3/8/8/8/4K3[] w - - 0 1", &[]);
    assert!(m.contains(&"e5e6+".into()) && !m.contains(&"e5e6".into()));
    let m = moves("shogun-auto", "4k3/8/8/8/3N4/8/8/4K3[] w - - 0 1", &[]);
    assert!(m.contains(&"d4c6+".into()) && !m.contains(&"d4c6".into()) && m.contains(&"d4f5".into()));
    assert!(!m.contains(&"e1e2+".into()), "never the King");
    // Gold General [WfF]: one step orthogonally or diagonally forward.
    let m = moves("shogun-auto", "4k3/8/8/4+P3/8/8/8/K7[] w - - 0 1", &[]);
    assert_eq!(m.into_iter().filter(|m| m.starts_with("e5")).collect::<Vec<_>>(), set("e5e4 e5d5 e5f5 e5d6 e5e6 e5f6"));
    // "A captured promoted piece goes to the captor's hand as its base piece."
    let g = after("shogun-auto", "4k3/8/8/8/8/3+r4/4K3/8[] w - - 0 1", &["e2d3"]);
    assert!(g.position().fen().starts_with("4k3/8/8/8/8/3K4/8/8[R]"), "{}", g.position().fen());
}

#[test]
fn auto_drop_rules() {
    // "drop ... on any empty square outside the player's own promotion zone" and "A pawn may not be
    // dropped on a file that already holds an unpromoted pawn of the same colour"
    let drops: Vec<String> = moves("shogun-auto", "4k3/8/8/8/8/8/4P3/K7[P] w - - 0 1", &[]).into_iter().filter(|m| m.contains('@')).collect();
    assert_eq!(drops.len(), 7 * 5 - 1, "{drops:?}");
    assert!(!drops.iter().any(|m| m.starts_with("P@e")) && !drops.iter().any(|m| m.ends_with('6')));
    // A Gold General does not count.
    let drops = moves("shogun-auto", "4k3/8/8/8/8/8/4+P3/K7[P] w - - 0 1", &[]);
    assert!(drops.contains(&"P@e3".into()));
    // "A pawn drop that checkmates at once is illegal; a pawn drop that gives check without mate is legal."
    let mate = "8/7R/k1K5/8/2N5/8/8/8[P] w - - 0 1";
    let m = moves("shogun-auto", mate, &[]);
    assert!(!m.contains(&"P@b5".into()) && m.contains(&"P@b4".into()));
    let check = "8/7R/k1K5/8/8/8/8/8[P] w - - 0 1";
    assert!(moves("shogun-auto", check, &[]).contains(&"P@b5".into()));
    // "Dropping a piece between a checking piece and the King is a legal answer to check."
    let g = after("shogun-auto", "4k3/8/8/8/8/8/8/r3K3[R] w - - 0 1", &[]);
    assert!(g.position().is_check());
    let m = moves("shogun-auto", "4k3/8/8/8/8/8/8/r3K3[R] w - - 0 1", &[]);
    assert!(m.contains(&"R@b1".into()) && m.contains(&"R@d1".into()) && !m.contains(&"R@e2".into()));
    // "a pawn on its second rank ... may double-step whether or not it was dropped there."
    let g = after("shogun-auto", "4k3/8/8/8/8/8/8/4K3[P] w - - 0 1", &["P@a2", "e8d8"]);
    assert!(g.position().legal_moves().iter().any(|&m| g.position().uci(m) == "a2a4"));
}

#[test]
fn property_tests_cover_the_new_variants() {
    // FEN round trip, undo and key invariants under random play (the same checks as the core's).
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    for (i, variant) in ["spqr", "empire-faceoff", "shogun-auto"].iter().enumerate() {
        let v = Variant::builtin(variant).unwrap();
        let mut rng = StdRng::seed_from_u64(i as u64 + 10);
        let mut positions = 0;
        for _ in 0..25 {
            let mut g = Game::startpos(v);
            for _ in 0..200 {
                let pos = *g.position();
                positions += 1;
                let fen = pos.fen();
                let back = Position::from_fen(v, &fen).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(back.fen(), fen);
                assert_eq!(back.key(), pos.key(), "{fen}");
                assert_eq!(pos.compute_key(), pos.key(), "{fen}");
                if g.result().is_over() {
                    break;
                }
                let ms = pos.legal_moves();
                let m = ms[rng.gen_range(0..ms.len())];
                assert_eq!(pos.parse_uci(&pos.uci(m)).unwrap(), m);
                g.play(m);
                assert!(!g.position().is_royal_attacked(pos.side_to_move()), "{} in {fen}", pos.uci(m));
                let mut u = g.clone();
                u.undo();
                assert_eq!(u.position().fen(), fen);
            }
        }
        assert!(positions > 1000, "{variant}: {positions}");
    }
}

/// Every built-in variant's pieces move as their mirror images; a definition with one piece that
/// only steps to its left does not.
#[test]
fn mirror_symmetry_is_read_from_the_pieces() {
    for name in vzero_rules::variant::builtin_names() {
        assert!(Variant::builtin(name).unwrap().moves_mirror_symmetric(), "{name}");
    }
    let text = std::fs::read_to_string("../configs/variants/empire.toml").unwrap();
    assert!(text.contains("betza = \"fsW\""));
    let lopsided = text.replacen("betza = \"fsW\"", "betza = \"flW\"", 1);
    let v = Variant::from_toml(&lopsided, "lopsided.toml").unwrap();
    assert!(!v.moves_mirror_symmetric());
}
