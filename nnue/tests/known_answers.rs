//! The material net gives Fairy-Stockfish's measured `eval` answers (../shared/notes/nnue.md),
//! and the mappings have Fairy-Stockfish's layout.

mod common;

use common::mapping;
use vzero_nnue::{Evaluator, FsfMapping, FsfPieceType as T, Network};
use vzero_rules::{Position, Variant};

fn eval_line(name: &str, fen: &str) -> (String, i32) {
    let (v, m) = mapping(name);
    let e = Evaluator::new(m.clone(), Network::material(&m)).unwrap();
    let pos = Position::from_fen(v, fen).unwrap();
    let r = e.evaluate(&pos).unwrap();
    (r.fsf_line(), r.white_value())
}

#[test]
fn empire_start_is_plus_6_64() {
    let (v, _) = mapping("empire");
    let (line, value) = eval_line("empire", v.start_fen());
    assert_eq!(line, "NNUE evaluation        +6.64 (white side)");
    assert_eq!(value, 1381);
}

#[test]
fn shogun_positions_with_rooks_and_a_knight_in_hand() {
    let start = "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR";
    let (v, _) = mapping("shogun");
    assert!(v.start_fen().starts_with(&format!("{start}[]")), "vzero's shogun start FEN is FSF's");
    let cases = [
        (format!("{start}[R] w KQkq - 0 1"), "+6.13", 1276),
        (format!("{start}[RRn] b KQkq - 0 1"), "+8.51", 1771),
        ("1nb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[R] w Kk - 0 1".to_string(), "+12.27", 2552),
        ("1nb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[RR] b Kk - 0 1".to_string(), "+18.40", 3828),
    ];
    for (fen, text, value) in cases {
        let (line, v) = eval_line("shogun", &fen);
        assert_eq!(line, format!("NNUE evaluation        {text} (white side)"), "{fen}");
        assert_eq!(v, value, "{fen}");
    }
}

#[test]
fn mappings_have_fairy_stockfish_layout() {
    let (_, e) = mapping("empire");
    use T::*;
    assert_eq!(
        e.piece_types(),
        &[Pawn, Knight, Bishop, Rook, Queen, Soldier, Custom1, Custom2, Custom3, Custom4, King]
    );
    assert_eq!((e.squares(), e.uses_hands(), e.max_pieces(), e.king_blocks()), (64, false, 32, 64));
    assert_eq!(e.dimensions(), 86_016);
    assert!(e.flips_black());
    assert!(!e.fits_standard_build());
    let (_, s) = mapping("shogun");
    assert_eq!(
        s.piece_types(),
        &[Pawn, Knight, Bishop, Rook, Queen, Fers, Archbishop, Chancellor, Commoner, Centaur, King]
    );
    assert_eq!(
        (s.squares(), s.pockets(), s.max_pieces(), s.non_drop_indices(), s.piece_indices()),
        (64, 16, 32, 1344, 1664)
    );
    assert_eq!(s.dimensions(), 106_496);
    assert_eq!(type_names(&s), "pawn knight bishop rook queen fers archbishop chancellor commoner centaur king");
}

fn type_names(m: &FsfMapping) -> String {
    m.piece_types().iter().map(|t| t.name()).collect::<Vec<_>>().join(" ")
}

#[test]
fn variants_fairy_stockfish_cannot_hold_are_refused_in_one_line() {
    let spqr = Variant::builtin("spqr").unwrap();
    let e = FsfMapping::for_variant(spqr).unwrap_err().to_string();
    assert_eq!(e, "variant 'spqr' cannot have a Fairy-Stockfish net: its board has 12 ranks; Fairy-Stockfish holds at most 12 files and 10 ranks");
    let faceoff = Variant::builtin("empire-faceoff").unwrap();
    let e = FsfMapping::for_variant(faceoff).unwrap_err().to_string();
    assert!(
        e.starts_with("variant 'empire-faceoff' cannot have a Fairy-Stockfish net: no Fairy-Stockfish piece types"),
        "{e}"
    );
    // A table missing a piece, or giving two pieces one type.
    let shogun = Variant::builtin("shogun").unwrap();
    let e = FsfMapping::from_types(shogun, &[("k", T::King)]).unwrap_err().to_string();
    assert!(e.contains("piece 'p' (pawn) has no Fairy-Stockfish type"), "{e}");
    let mut table: Vec<(&str, T)> =
        vec![("k", T::King), ("p", T::Pawn), ("n", T::Knight), ("b", T::Bishop), ("r", T::Rook), ("f", T::Fers)];
    table.extend([
        ("+p", T::Commoner),
        ("+n", T::Centaur),
        ("+b", T::Archbishop),
        ("+r", T::Chancellor),
        ("+f", T::Fers),
    ]);
    let e = FsfMapping::from_types(shogun, &table).unwrap_err().to_string();
    assert!(e.contains("pieces 'f' and '+f' are both Fairy-Stockfish's fers"), "{e}");
    assert!(!e.contains('\n'));
    // By name, as a definition file would give them: the same mapping as the built-in table.
    let names = [("k", "king"), ("p", "pawn"), ("n", "knight"), ("b", "bishop"), ("r", "rook"), ("f", "fers")];
    let promoted = [("+p", "commoner"), ("+n", "centaur"), ("+b", "archbishop"), ("+r", "chancellor"), ("+f", "queen")];
    let all: Vec<(&str, &str)> = names.iter().chain(&promoted).copied().collect();
    let by_name = FsfMapping::from_names(shogun, &all).unwrap();
    assert_eq!(by_name.piece_types(), FsfMapping::for_variant(shogun).unwrap().piece_types());
    let mut bad = all.clone();
    bad[0] = ("k", "emperor");
    let e = FsfMapping::from_names(shogun, &bad).unwrap_err().to_string();
    assert!(e.contains("piece 'k': 'emperor' is not a Fairy-Stockfish piece type (one of pawn, knight,"), "{e}");
}

#[test]
fn positions_of_another_variant_are_refused() {
    let (_, m) = mapping("empire");
    let (s, _) = mapping("shogun");
    let pos = Position::startpos(s);
    let e = m.features(&pos).unwrap_err().to_string();
    assert_eq!(e, "position is for variant 'shogun' but this is for 'empire'");
}

#[test]
fn pawns_are_formatted_as_fairy_stockfish_prints_them() {
    use vzero_nnue::format_pawns as f;
    assert_eq!(f(0), "+0.00");
    assert_eq!(f(-1), "-0.00");
    assert_eq!(f(208), "+1.00");
    assert_eq!(f(-1381), "-6.64");
    // Exact ties (26 / 208 = 0.125) round half to even, as printf does.
    assert_eq!(f(26), "+0.12");
    assert_eq!(f(78), "+0.38");
    assert_eq!(f(130), "+0.62");
    assert_eq!(f(208 * 150 + 1), "+150.00");
}
