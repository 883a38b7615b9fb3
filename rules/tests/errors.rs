//! Bad input of every kind gives a typed error naming what and where, and never panics.

use proptest::prelude::*;
use vzero_rules::{Error, Position, Variant};

fn fen_field(variant: &str, fen: &str) -> &'static str {
    match Position::from_fen(Variant::builtin(variant).unwrap(), fen) {
        Err(Error::Fen { field, .. }) => field,
        Err(e) => panic!("unexpected error kind for {fen}: {e}"),
        Ok(p) => panic!("accepted malformed FEN {fen} as {}", p.fen()),
    }
}

#[test]
fn malformed_fens_name_the_field() {
    let cases = [
        ("empire", "", "board"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8 w kq - 0 1", "board"),
        ("empire", "rnbqkbnr/pppppppp/9/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1", "board"),
        ("empire", "rnbqkbnr/ppppxppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1", "board"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECD1CET w kq - 0 1", "board"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET x kq - 0 1", "side to move"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w KQ - 0 1", "castling"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kz - 0 1", "castling"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq z9 0 1", "en passant"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - x 1", "halfmove clock"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 -1", "fullmove number"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET[] w kq - 0 1", "holdings"),
        ("empire", "rnbqkbnr/pppppppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1 extra", "end"),
        ("empire", "4k3/8/8/8/8/8/4T3/4K3 w - - 0 1", "board"),
        ("shogun", "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[K] w KQkq - 0 1", "holdings"),
        ("shogun", "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[ w KQkq - 0 1", "holdings"),
        ("shogun", "rnb+xkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[] w KQkq - 0 1", "board"),
        ("shogun", "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBN+[] w KQkq - 0 1", "board"),
    ];
    for (variant, fen, field) in cases {
        assert_eq!(fen_field(variant, fen), field, "{fen}");
    }
}

#[test]
fn errors_say_what_is_wrong() {
    let v = Variant::builtin("empire").unwrap();
    let e = Position::from_fen(v, "rnbqkbnr/ppppxppp/8/8/8/PPPSSPPP/8/TECDKCET w kq - 0 1").unwrap_err().to_string();
    assert!(e.contains("unknown piece 'x'") && e.contains("rank 7"), "{e}");
    let pos = Position::startpos(v);
    match pos.parse_uci("e2e4") {
        Err(Error::IllegalMove { fen, .. }) => assert_eq!(fen, pos.fen()),
        other => panic!("{other:?}"),
    }
    for bad in ["", "e2", "e2e", "z2e4", "e2e4qq", "e9e4", "@e4", "PP@e4", "e2e4!", "é2e4"] {
        assert!(matches!(pos.parse_uci(bad), Err(Error::MoveSyntax { .. })), "{bad}");
    }
    assert!(matches!(Variant::builtin("nope"), Err(Error::UnknownVariant { .. })));
    assert!(matches!(Variant::from_toml("name = 1", "x.toml"), Err(Error::Variant { .. })));
}

#[test]
fn broken_variant_definitions_are_reported() {
    let base = vzero_rules::variant::BUILTIN[0].1;
    let cases = [
        (base.replace("betza = \"mQcN\"", "betza = \"mQcX\""), "betza"),
        (base.replace("files = 8", "files = 13"), "files and ranks"),
        (base.replace("pieces = \"q\"", "pieces = \"z\""), "unknown piece 'z'"),
        (base.replace("stalemate = \"loss\"", "stalemate = \"maybe\""), "win, draw or loss"),
        (base.replace("start_fen = \"rnbqkbnr", "start_fen = \"rnbqkbxr"), "start_fen"),
        (base.replace("royal = true", "royal = false"), "royal"),
        (base.replace("name = \"eagle\"", "name = \"eagle\"\nsan = \"e\""), "one uppercase letter"),
        (base.replace("name = \"eagle\"", "name = \"eagle\"\nsan = \"Q\""), "used twice"),
    ];
    for (text, needle) in cases {
        let e = Variant::from_toml(&text, "broken.toml").unwrap_err().to_string();
        assert!(e.contains("broken.toml") && e.contains(needle), "{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn fen_reader_never_panics(s in "[rnbqkpKQRBNPTECDS+12345678/\\[\\] wb-]{0,80}") {
        for v in ["empire", "shogun"] {
            let _ = Position::from_fen(Variant::builtin(v).unwrap(), &s);
        }
    }

    #[test]
    fn move_reader_never_panics(s in "[a-lA-Z0-9@+=]{0,8}") {
        for v in ["empire", "shogun"] {
            let pos = Position::startpos(Variant::builtin(v).unwrap());
            let _ = pos.parse_uci(&s);
        }
    }

    #[test]
    fn perturbed_fens_never_panic(i in 0usize..60, c in "[ -~]") {
        let start = "rnb+fkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB+FKBNR[Pp] w KQkq - 0 1";
        let mut s: Vec<char> = start.chars().collect();
        let i = i % s.len();
        s[i] = c.chars().next().unwrap();
        let s: String = s.into_iter().collect();
        if let Ok(p) = Position::from_fen(Variant::builtin("shogun").unwrap(), &s) {
            let back = Position::from_fen(p.variant(), &p.fen()).unwrap();
            prop_assert_eq!(back.fen(), p.fen());
            let _ = p.legal_moves();
        }
    }
}
