//! Standard algebraic notation as Fairy-Stockfish writes it (its `NOTATION_SAN`, what pyffish's
//! `get_san` returns with that notation), so that vzero's move texts compare equal to FSF's.

use crate::position::Position;
use crate::types::{Move, MoveKind, Square};

impl Position {
    /// The SAN of the legal move `m`, in Fairy-Stockfish's form:
    ///
    /// * the piece's SAN letter ([`crate::PieceInfo::san`]; none for a pawn), then the origin's
    ///   file, rank or square when another piece of the same type can make the same kind of move
    ///   to the same square (file if that tells them apart, else rank, else square; a pawn
    ///   capture always gives the file), `x` for a capture (en passant included), the target;
    /// * `=Q` for a promotion (chess-style or shogi-style, the letter of the new type: `e8=C`,
    ///   `Bxf7=A` in shogun);
    /// * drops `N@f3` (`P@e4` for pawns too), castling `O-O` / `O-O-O`, the pass `0000`;
    /// * `+` when the move gives check, `#` when it also leaves the opponent without a legal move
    ///   (as FSF's legal move list is also empty after a campmate, a checking campmate gets `#`).
    pub fn san(&self, m: Move) -> String {
        let v = self.variant();
        let files = v.files();
        let pieces = v.pieces();
        let name = |s: usize| Square(s as u8).name(files);
        let mut s = match m.kind() {
            MoveKind::Pass => return "0000".into(),
            MoveKind::Castle => {
                let (f, t) = (Square(m.from() as u8).file(files), Square(m.to() as u8).file(files));
                if t > f { "O-O".to_string() } else { "O-O-O".to_string() }
            }
            MoveKind::Drop => format!("{}@{}", pieces[m.piece().index()].san, name(m.to())),
            _ => {
                let from = Square(m.from() as u8);
                let Some(moving) = self.piece_at(from) else {
                    return self.uci(m);
                };
                let info = &pieces[moving.kind.index()];
                let capture = m.kind() == MoveKind::EnPassant
                    || self.piece_at(Square(m.to() as u8)).is_some_and(|p| p.color != moving.color);
                let mut s = String::new();
                if !info.pawn {
                    s.push_str(&info.san);
                }
                let (ff, fr) = (from.file(files), from.rank(files));
                if info.pawn && capture {
                    s.push((b'a' + ff as u8) as char);
                } else {
                    // Other pieces of the type that can make the same kind of move to the square.
                    let others: Vec<Square> = self
                        .legal_moves()
                        .into_iter()
                        .filter(|&o| {
                            o.to() == m.to()
                                && o.from() != m.from()
                                && o.kind() == m.kind()
                                && o.piece() == m.piece()
                                && self.piece_at(Square(o.from() as u8)).is_some_and(|p| p.kind == moving.kind)
                        })
                        .map(|o| Square(o.from() as u8))
                        .collect();
                    if !others.is_empty() {
                        if others.iter().all(|o| o.file(files) != ff) {
                            s.push((b'a' + ff as u8) as char);
                        } else if others.iter().all(|o| o.rank(files) != fr) {
                            s.push_str(&(fr + 1).to_string());
                        } else {
                            s.push_str(&from.name(files));
                        }
                    }
                }
                if capture {
                    s.push('x');
                }
                s.push_str(&name(m.to()));
                if matches!(m.kind(), MoveKind::Promotion | MoveKind::PiecePromotion) {
                    s.push('=');
                    s.push_str(&pieces[m.piece().index()].san);
                }
                s
            }
        };
        let mut next = *self;
        next.play(m);
        if next.is_check() {
            s.push(if next.has_legal_move() { '+' } else { '#' });
        }
        s
    }
}
