//! A readable SAN-like move form: piece letter, optional disambiguation (file, rank or square),
//! `x` for captures, target square, `=Q` for a promotion by choice, `+` for a shogi-style
//! promotion; drops `P@e4`; castling `O-O` / `O-O-O`; the pass `0000`. No check suffix.

use vzero_rules::{Move, MoveKind, Position, Square};

/// The SAN-like text of legal move `m` in `pos`.
pub fn san(pos: &Position, m: Move) -> String {
    let v = pos.variant();
    let files = v.files();
    let letter = |pt: vzero_rules::PieceType| -> String {
        v.pieces().get(pt.index()).map_or("?".to_string(), |p| p.fen(vzero_rules::Color::White))
    };
    let sq = |i: usize| Square(i as u8).name(files);
    match m.kind() {
        MoveKind::Pass => return "0000".into(),
        MoveKind::Drop => return format!("{}@{}", letter(m.piece()), sq(m.to())),
        MoveKind::Castle => {
            let (f, t) = (Square(m.from() as u8).file(files), Square(m.to() as u8).file(files));
            return if t > f { "O-O".into() } else { "O-O-O".into() };
        }
        _ => {}
    }
    let Some(moving) = pos.piece_at(Square(m.from() as u8)) else {
        return pos.uci(m);
    };
    let capture = m.kind() == MoveKind::EnPassant || pos.piece_at(Square(m.to() as u8)).is_some_and(|p| p.color != moving.color);
    // Disambiguation among other legal moves of the same piece type to the same square with
    // the same kind and promotion piece.
    let others: Vec<usize> = pos
        .legal_moves()
        .into_iter()
        .filter(|&o| {
            o != m
                && o.to() == m.to()
                && o.kind() == m.kind()
                && o.piece() == m.piece()
                && o.from() != m.from()
                && pos.piece_at(Square(o.from() as u8)).is_some_and(|p| p.kind == moving.kind)
        })
        .map(|o| o.from())
        .collect();
    let from = Square(m.from() as u8);
    let mut dis = String::new();
    if !others.is_empty() {
        let (ff, fr) = (from.file(files), from.rank(files));
        if others.iter().all(|&o| Square(o as u8).file(files) != ff) {
            dis.push((b'a' + ff as u8) as char);
        } else if others.iter().all(|&o| Square(o as u8).rank(files) != fr) {
            dis.push_str(&(fr + 1).to_string());
        } else {
            dis = from.name(files);
        }
    }
    let mut s = format!("{}{dis}{}{}", letter(moving.kind), if capture { "x" } else { "" }, sq(m.to()));
    match m.kind() {
        MoveKind::Promotion => {
            s.push('=');
            s.push_str(&letter(m.piece()));
        }
        MoveKind::PiecePromotion => s.push('+'),
        _ => {}
    }
    s
}
