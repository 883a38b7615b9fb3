//! SAN as Fairy-Stockfish writes it: cases whose expected text is what pyffish 0.0.90 answered
//! (`get_san` with NOTATION_SAN, the variants of scripts/fsf/variants.ini). scripts/fsf_diff.py
//! compares every move of thousands of positions the same way.

use vzero_rules::{Position, Variant};

/// (variant, FEN, UCI move, FSF's SAN); the comment says what the case shows.
const CASES: &[(&str, &str, &str, &str)] = &[
    ("empire", "1q4n1/rbP2Pk1/3S1r2/2E1S1pp/pDp3TP/PE1C2p1/1b2K1C1/T7 w - - 2 41", "c7c8q", "c8=Q"), // =Q
    ("empire", "r2qk2r/p1p4p/3b1ppn/Pp1pp1P1/8/1PPS1P1b/TED1C2T/4KCE1 b kq - 5 16", "e8g8", "O-O"), // O-O
    ("empire", "rnbqkbnr/1p3ppp/p2p4/1Pp1p3/3S2P1/P1P1SP1P/8/TECDKCET w kq c6 0 5", "b5c6", "bxc6"), // ep
    ("empire", "Cbbk3r/p2p2pp/1p6/4ppPn/5P2/2Pp2SP/1T1K1ED1/n6T w - - 4 36", "h1c1", "Thc1"), // file dis
    ("empire", "8/2r5/1P2k2p/3p4/3K4/3S2p1/8/8 b - - 0 48", "c7c4", "Rc4#"), // mate
    ("empire", "Cbb2k1r/p2p2pp/1p6/4ppPn/2p2P2/2PS2SP/1T1KD3/n4E1T b - - 0 33", "c4d3", "cxd3"), // pawn capture
    ("empire", "r1bqkb1r/pppp1ppp/2n1pn2/8/8/PPPSSPPP/1E3K2/T1C1DCET w kq - 2 4", "c1c2", "Cc2"), // an imperial officer
    ("empire", "rnbqkb2/p2ppp1p/1pp3rn/6p1/8/PPPSSPPP/1C3EC1/T2DKE1T w q - 0 7", "f2g1", "E2g1"), // rank dis
    ("shogun", "r1b+fkb1r/pppp1p1p/2n2np1/4p3/4P3/3B3P/PPPPKPPN/RNB+F3R[] b kq - 1 6", "f8a3+", "Ba3=A"), // =A
    ("shogun", "rnbp1N2/pprn1ppr/p1k3p1/F2ppPpp/5P1B/P2P2N1/1BP1K3/R3+F2+b[] w - - 6 42", "f5f6+", "f6=C"), // =C
    ("shogun", "rnbp2p1/pp2rp1r/p2kN1p1/F2ppPpp/1N3P1B/P5N1/1BPPK1+b1/R1+F5[] w - - 2 35", "b4c6+", "Nc6=G+"), // =G
    ("shogun", "2k2p1r/1p1n1p1b/2+B4b/2pP4/4RP2/+p3K3/2PPP1P1/RN+n+FFBN1[PPPrpp] w - - 0 32", "e4e7+", "Re7=M+"), // =M
    ("shogun", "2b2bnr/3pppn1/4k3/p1b1FR2/4npPF/3P1K1P/P1PPP3/R1PP1B1R[NPp] w - - 1 43", "e5f6+", "Ff6=Q+"), // =Q
    ("shogun", "rn2k2r/ppp3pp/pp3p1n/F2pP2f/P1N4P/+b7/1PP1NBP1/R1B1KBR1[p] b kq - 2 22", "e8g8", "O-O"), // O-O
    ("shogun", "r3kb1r/1p3p1+P/n4n2/p1p1+bb2/P2+f3P/1P1P3R/2P1PPP1/RNP+FKBN1[Pp] b Qkq - 0 13", "e8c8", "O-O-O"), // O-O-O
    ("shogun", "r1N2rk1/ppp4p/p1n2p1p/F3p2f/P2p3P/P3B3/1NP1N1P1/R3KBR1[BBPp] w - - 2 29", "B@a2", "B@a2+"), // drop check
    ("shogun", "rnb+fkbnr/1ppppp2/p7/7p/2P2PpP/6PN/PP1PP3/RNB+FKB1R[] b KQkq f3 0 5", "g4f3", "gxf3"), // ep
    ("shogun", "r1b+fk2r/pppp1p1p/2n3p1/3np3/2B1P3/+b6P/PPPPKPP1/RNB+F1N1R[] b kq - 3 8", "d5b4", "Ndb4"), // file dis
    ("shogun", "5r2/1ppp3p/+B1n2P1p/F2P1k1f/PP2n2P/b2Np1+b1/R1P3P1/3K2R1[RPPbnp] b - - 3 48", "e4c3", "Nc3#"), // mate
    ("shogun", "r1b+fk1pr/pppp1p2/+B1n3p1/4p2p/1n2PP2/2N4P/P+bPPK1P1/R1B+F1NR1[] b kq - 0 12", "b7a6", "bxa6"), // pawn capture
    ("shogun", "r1b+fk2r/pppp1p1p/+B1n3p1/4p3/1n2P3/+b6P/PPPPKPP1/RNB+F1N1R[] b kq - 0 9", "a3b2", "Axb2"), // a promoted piece (archbishop)
    ("shogun", "2Rnprr1/p2N2bp/1p4kp/1P1p4/pP3P1P/1PR5/2FKP1p1/1N+F2BNB[PPb] w - - 0 35", "c3c4", "R3c4"), // rank dis
    ("shogun", "rnn3nr/+f1k4p/+P+R2b1n1/3P1p2/2p1pP1P/B5PP/P1PPP+bKP/4+F1PR[b] b - - 0 29", "g8e7", "Ng8e7"), // square dis
];

#[test]
fn san_matches_fairy_stockfish() {
    for &(variant, fen, uci, want) in CASES {
        let pos = Position::from_fen(Variant::builtin(variant).unwrap(), fen).unwrap();
        let m = pos.parse_uci(uci).unwrap();
        assert_eq!(pos.san(m), want, "{variant} {fen} {uci}");
    }
}

#[test]
fn san_of_every_start_move_is_unique() {
    for variant in ["empire", "shogun", "spqr", "empire-faceoff", "shogun-auto"] {
        let pos = Position::startpos(Variant::builtin(variant).unwrap());
        let mut sans: Vec<String> = pos.legal_moves().into_iter().map(|m| pos.san(m)).collect();
        let n = sans.len();
        sans.sort();
        sans.dedup();
        assert_eq!(sans.len(), n, "{variant}: {sans:?}");
    }
}
