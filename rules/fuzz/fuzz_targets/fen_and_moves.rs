//! Feeds arbitrary bytes to the FEN and move readers of every built-in variant: nothing may
//! panic, and whatever FEN is accepted must round-trip and generate moves that parse back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vzero_rules::{Position, Variant};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (fen, moves) = text.split_once('|').unwrap_or((text, ""));
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name).unwrap();
        let Ok(mut pos) = Position::from_fen(v, fen) else { continue };
        let again = Position::from_fen(v, &pos.fen()).expect("own FEN readable");
        assert_eq!(again.fen(), pos.fen());
        for m in moves.split_whitespace().take(8) {
            match pos.parse_uci(m) {
                Ok(mv) => pos.play(mv),
                Err(_) => break,
            }
        }
        for m in pos.legal_moves() {
            assert_eq!(pos.parse_uci(&pos.uci(m)).unwrap(), m);
        }
    }
});
