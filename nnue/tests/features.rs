//! Feature indices against lists worked out by hand from the layout rules.

mod common;

use common::mapping;
use vzero_rules::{Color, Position};

/// Shogun: NSQ = 64, T = 11 (slots P0 N1 B2 R3 Q4 F5 A6 M7 C8 G9 K10), shared king plane 20,
/// non-drop = 21·64 = 1344, pockets = 16, hand slot i own at 1344 + 2i·16, opponent's at
/// 1344 + (2i+1)·16, per king block 1344 + 2·10·16 = 1664.
#[test]
fn shogun_position_with_pieces_in_hand() {
    let (v, m) = mapping("shogun");
    let pos = Position::from_fen(v, "5k2/8/8/3+n4/8/8/4P3/R3K3[PPn] w - - 0 1").unwrap();
    let f = m.features(&pos).unwrap();
    // White: no flip; own king e1 = 4, block 4·1664 = 6656.
    let white = [
        384 + 6656,       // a1 (0) own rook: plane 2·3 → 384
        4 + 1280 + 6656,  // e1 (4) king plane 20 → 1280
        12 + 6656,        // e2 (12) own pawn: plane 0
        35 + 1216 + 6656, // d5 (35) opponent's centaur: plane 2·9+1 = 19 → 1216
        61 + 1280 + 6656, // f8 (61) black king: shared plane
        1344 + 6656,      // own pawns in hand: slots 0 and 1
        1344 + 1 + 6656,
        1344 + 48 + 6656, // opponent's knight in hand: (2·1+1)·16 = 48
    ];
    assert_eq!(f.perspective(Color::White), &white);
    // Black: ranks flipped; own king f8 → f1 = 5, block 5·1664 = 8320.
    let black = [
        56 + 448 + 8320,  // a1 → a8 (56), opponent's rook: plane 7 → 448
        60 + 1280 + 8320, // e1 → e8 (60), king plane
        52 + 64 + 8320,   // e2 → e7 (52), opponent's pawn: plane 1 → 64
        27 + 1152 + 8320, // d5 → d4 (27), own centaur: plane 18 → 1152
        5 + 1280 + 8320,  // f8 → f1 (5), own king
        1344 + 16 + 8320, // opponent's (White's) pawns in hand: (2·0+1)·16
        1344 + 17 + 8320,
        1344 + 32 + 8320, // own knight in hand: 2·1·16 = 32
    ];
    assert_eq!(f.perspective(Color::Black), &black);
    assert_eq!(f.side_to_move(), Color::White);
    // 5 pieces on the board: (5 − 1)·8 / 32 = 1.
    assert_eq!(f.bucket().index(), 1);
}

/// Empire: no hands; the eagle is custom piece 1 (slot 6), the soldier slot 5.
#[test]
fn empire_position() {
    let (v, m) = mapping("empire");
    let pos = Position::from_fen(v, "4k3/8/8/8/8/8/3S4/3EK3 b - - 0 1").unwrap();
    let f = m.features(&pos).unwrap();
    // White's own king e1 = 4, block 4·(21·64) = 5376.
    assert_eq!(f.perspective(Color::White), &[3 + 768 + 5376, 4 + 1280 + 5376, 11 + 640 + 5376, 60 + 1280 + 5376]);
    // Black's own king e8 → e1 = 4: same block; the eagle is the opponent's (plane 13 → 832).
    assert_eq!(f.perspective(Color::Black), &[59 + 832 + 5376, 60 + 1280 + 5376, 51 + 704 + 5376, 4 + 1280 + 5376]);
    assert_eq!(f.bucket().index(), 0);
}

#[test]
fn features_of_random_positions_are_in_range_and_mirror_the_side() {
    for name in ["empire", "shogun"] {
        let (v, m) = mapping(name);
        for pos in common::random_positions(v, 300, 7) {
            let Ok(f) = m.features(&pos) else { continue };
            for c in Color::ALL {
                assert!(f.perspective(c).iter().all(|&i| (i as usize) < m.dimensions()));
                let mut s = f.perspective(c).to_vec();
                s.sort();
                s.dedup();
                assert_eq!(s.len(), f.perspective(c).len(), "distinct features");
            }
            assert_eq!(f.bucket(), m.bucket(&pos));
        }
    }
}

/// `fen`'s board mirrored across the middle file (hands and side to move kept; no castling or
/// en passant, which the features do not hold).
fn mirrored_fen(fen: &str) -> String {
    let mut fields = fen.split(' ');
    let board = fields.next().unwrap();
    let (squares, hand) = board.split_at(board.find('[').unwrap_or(board.len()));
    let ranks: Vec<String> = squares
        .split('/')
        .map(|rank| {
            let mut tokens: Vec<String> = Vec::new();
            let mut chars = rank.chars().peekable();
            while let Some(c) = chars.next() {
                let mut t = c.to_string();
                if c == '+' {
                    t.push(chars.next().unwrap());
                } else if c.is_ascii_digit() {
                    while let Some(d) = chars.next_if(|d| d.is_ascii_digit()) {
                        t.push(d);
                    }
                }
                tokens.push(t);
            }
            tokens.reverse();
            tokens.concat()
        })
        .collect();
    let side = fields.next().unwrap();
    format!("{}{hand} {side} - - 0 1", ranks.join("/"))
}

/// The mirror permutes the features, is its own inverse, and takes each random position's
/// features (both perspectives) to those of the same position set up mirrored from its FEN.
#[test]
fn the_mirror_of_a_positions_features_is_the_mirrored_positions() {
    for name in ["empire", "shogun"] {
        let (v, m) = mapping(name);
        let mirror = vzero_nnue::features::FeatureMirror::of(&m).expect("symmetric pieces");
        let mut seen = vec![false; m.dimensions()];
        for f in 0..m.dimensions() as u32 {
            let g = mirror.feature(f);
            assert!(!std::mem::replace(&mut seen[g as usize], true), "{name}: {g} twice");
            assert_eq!(mirror.feature(g), f, "{name}: an involution");
        }
        let mut moved = 0;
        for pos in common::random_positions(v, 300, 11) {
            let Ok(f) = m.features(&pos) else { continue };
            let fen = mirrored_fen(&pos.fen());
            let twin = Position::from_fen(v, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            let g = m.features(&twin).unwrap();
            assert_eq!(g.bucket(), f.bucket());
            for c in Color::ALL {
                let mut want: Vec<u32> = g.perspective(c).to_vec();
                let mut got: Vec<u32> = f.perspective(c).iter().map(|&i| mirror.feature(i)).collect();
                want.sort();
                got.sort();
                assert_eq!(got, want, "{name} {} from {}", c.index(), pos.fen());
                moved += (got != { let mut o = f.perspective(c).to_vec(); o.sort(); o }) as usize;
            }
        }
        assert!(moved > 500, "{name}: the mirror changed only {moved} feature lists");
    }
}
