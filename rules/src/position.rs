//! [`Position`]: the one position type callers use, whatever the board size, with moves in
//! Fairy-Stockfish's UCI notation.

use crate::bitboard::{Bb192, Bitboard};
use crate::board::{Pos, NO_SQ};
use crate::error::{Error, Result};
use crate::movegen::MoveList;
use crate::types::{Color, Move, MoveKind, Piece, PieceType, Square};
use crate::variant::{Rules, Variant};

/// A position of any variant. Cheap to copy (copy-make: keep the old value to undo a move).
/// Not boxed: copy-make wants positions inline, and a 12×12 position is only ~1 KB.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum Position {
    /// A board of at most 64 squares.
    Small(Pos<u64>),
    /// A board of up to 144 squares.
    Large(Pos<Bb192>),
}

/// Runs `$e` with `$p` bound to the inner position, whatever its size.
macro_rules! each {
    ($s:expr, $p:ident => $e:expr) => {
        match $s {
            Position::Small($p) => $e,
            Position::Large($p) => $e,
        }
    };
}

/// UCI text of a move in a position of rules `r`.
fn uci_of<B: Bitboard>(r: &Rules<B>, m: Move) -> String {
    let name = |s: usize| Square(s as u8).name(r.files);
    match m.kind() {
        MoveKind::Pass => "0000".into(),
        MoveKind::Drop => format!("{}@{}", r.pieces[m.piece().index()].letter.to_ascii_uppercase(), name(m.to())),
        MoveKind::Promotion => format!("{}{}{}", name(m.from()), name(m.to()), r.pieces[m.piece().index()].letter),
        MoveKind::PiecePromotion => format!("{}{}+", name(m.from()), name(m.to())),
        _ => format!("{}{}", name(m.from()), name(m.to())),
    }
}

/// Checks the shape of a UCI move string without a position.
fn check_syntax(text: &str, files: usize, ranks: usize) -> Result<()> {
    let bad = |message: &str| Err(Error::MoveSyntax { text: crate::echo(text), message: message.to_string() });
    if text == "0000" {
        return Ok(());
    }
    if !text.is_ascii() {
        return bad("not ASCII");
    }
    if let Some((piece, sq)) = text.split_once('@') {
        if piece.len() != 1 || !piece.chars().all(|c| c.is_ascii_alphabetic()) {
            return bad("a drop is a piece letter, '@' and a square, as in P@e4");
        }
        if crate::fen::parse_square(sq, files, ranks).is_none() {
            return bad("drop square is not on the board");
        }
        return Ok(());
    }
    // from-square, to-square, optional suffix.
    let b = text.as_bytes();
    let mut i = 0;
    let mut squares = Vec::new();
    for _ in 0..2 {
        let start = i;
        if i >= b.len() || !b[i].is_ascii_lowercase() {
            return bad("expected a square such as e2");
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        match crate::fen::parse_square(&text[start..i], files, ranks) {
            Some(s) => squares.push(s),
            None => return bad(&format!("'{}' is not a square of this board", &text[start..i])),
        }
    }
    let suffix = &text[i..];
    if suffix.len() > 1 || suffix.chars().any(|c| !(c.is_ascii_lowercase() || c == '+' || c == '=')) {
        return bad(&format!("unexpected suffix '{suffix}'"));
    }
    Ok(())
}

impl Position {
    /// The start position of `variant`.
    pub fn startpos(variant: Variant) -> Position {
        Position::from_fen(variant, variant.start_fen()).expect("start FEN checked when the variant was compiled")
    }

    /// Reads a FEN of `variant`.
    pub fn from_fen(variant: Variant, fen: &str) -> Result<Position> {
        Ok(match variant {
            Variant::Small(r) => Position::Small(Pos::from_fen(r, fen)?),
            Variant::Large(r) => Position::Large(Pos::from_fen(r, fen)?),
        })
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        match self {
            Position::Small(p) => Variant::Small(p.r),
            Position::Large(p) => Variant::Large(p.r),
        }
    }

    /// The FEN, as Fairy-Stockfish writes it.
    pub fn fen(&self) -> String {
        each!(self, p => p.fen())
    }

    /// Side to move.
    pub fn side_to_move(&self) -> Color {
        each!(self, p => p.side)
    }

    /// Zobrist key: pieces, hands, side, castling, en passant, Dictator state.
    pub fn key(&self) -> u64 {
        each!(self, p => p.key)
    }

    /// The key recomputed from scratch (equals [`Position::key`]; for tests).
    pub fn compute_key(&self) -> u64 {
        each!(self, p => p.compute_key())
    }

    /// This position with the pieces on `squares` taken off (a setup, e.g. a reduced-army start:
    /// castling rights and the en-passant square dropped); `None` when a square is empty or
    /// royal, or the side not to move would be in check.
    pub fn without_pieces(&self, squares: &[Square]) -> Option<Position> {
        let sq: Vec<usize> = squares.iter().map(|s| s.index()).collect();
        Some(match self {
            Position::Small(p) => Position::Small(p.without_pieces(&sq)?),
            Position::Large(p) => Position::Large(p.without_pieces(&sq)?),
        })
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        each!(self, p => p.in_check())
    }

    /// Whether `color`'s royal piece is attacked (for the side to move: in check).
    pub fn is_royal_attacked(&self, color: Color) -> bool {
        each!(self, p => !p.checkers_of(color).is_empty())
    }

    /// Legal moves into a reusable list.
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        each!(self, p => p.legal_moves(list))
    }

    /// Legal moves.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list.as_slice().to_vec()
    }

    /// Whether the side to move has a legal move (stops at the first one: cheaper than
    /// generating them all).
    pub fn has_legal_move(&self) -> bool {
        each!(self, p => p.has_legal_move())
    }

    /// Whether the legal move `m` attacks the opponent's royal piece (cheaper than playing it).
    pub fn gives_check(&self, m: Move) -> bool {
        each!(self, p => p.gives_check(m))
    }

    /// Indices into `moves` (legal moves here) of the moves after which the opponent may have no
    /// legal move: exactly the checking moves, plus, with `stalemates`, a cheap superset of the
    /// moves that could leave it stalemated (see [`Pos::mate_candidates`]). Appended to `out` in
    /// increasing order.
    pub fn mate_candidates(&self, moves: &[Move], stalemates: bool, out: &mut Vec<u32>) {
        each!(self, p => p.mate_candidates(moves, stalemates, out))
    }

    /// Plays a move that must be legal here (see [`Position::play_uci`] for checked input).
    pub fn play(&mut self, m: Move) {
        each!(self, p => p.play(m))
    }

    /// Number of leaves of the legal move tree at `depth`.
    pub fn perft(&self, depth: u32) -> u64 {
        each!(self, p => p.perft(depth))
    }

    /// Leaf count without bulk counting: every leaf move is played (for benchmarks).
    pub fn perft_unbulked(&self, depth: u32) -> u64 {
        each!(self, p => p.perft_with(depth, false))
    }

    /// Piece on a square.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        each!(self, p => p.piece_at(sq.index()))
    }

    /// Pieces of `color` and type `pt` in hand.
    pub fn hand_count(&self, color: Color, pt: PieceType) -> u8 {
        each!(self, p => p.hand_count(color, pt))
    }

    /// Square of `color`'s royal piece.
    pub fn king_square(&self, color: Color) -> Option<Square> {
        let k = each!(self, p => p.king[color.index()]);
        (k != NO_SQ).then_some(Square(k))
    }

    /// Ranks between `color`'s royal piece and the nearest rank on which it would win by
    /// campmate (`None` when the variant has no campmate rule or `color` no royal piece): how
    /// far a king walk is from winning.
    pub fn flag_distance(&self, color: Color) -> Option<u32> {
        each!(self, p => p.flag_distance(color))
    }

    /// Castling rights as bits: 1 = White h-side, 2 = White a-side, 4 = Black h-side, 8 = Black a-side.
    pub fn castling_rights(&self) -> u8 {
        each!(self, p => p.castling)
    }

    /// En-passant target square, when a pawn can take there.
    pub fn ep_square(&self) -> Option<Square> {
        let e = each!(self, p => p.ep);
        (e != NO_SQ).then_some(Square(e))
    }

    /// Plies since the last capture, pawn move, promotion or drop.
    pub fn halfmove_clock(&self) -> u32 {
        each!(self, p => p.rule50 as u32)
    }

    /// Fullmove number.
    pub fn fullmove_number(&self) -> u32 {
        each!(self, p => p.fullmove as u32)
    }

    /// Whether `color`'s royal piece is a Dictator.
    pub fn is_dictator(&self, color: Color) -> bool {
        each!(self, p => p.dictator >> color.index() & 1 != 0)
    }

    /// When a Dictator's second step is pending: the square the king came from.
    pub fn pending_second_step(&self) -> Option<Square> {
        let s = each!(self, p => p.pending);
        (s != NO_SQ).then_some(Square(s))
    }

    /// Whether the royal piece of the side that just moved stands on its flag region (the side
    /// to move has lost).
    pub fn flag_reached(&self) -> bool {
        each!(self, p => p.flag_reached())
    }

    /// UCI text of a move (`e2e4`, `a7a8q`, `c8h3+`, `P@e4`, `0000`).
    pub fn uci(&self, m: Move) -> String {
        each!(self, p => uci_of(p.r, m))
    }

    /// Parses a UCI move and checks that it is legal here.
    pub fn parse_uci(&self, text: &str) -> Result<Move> {
        let v = self.variant();
        check_syntax(text, v.files(), v.ranks())?;
        let wanted = text.strip_suffix('=').unwrap_or(text);
        self.legal_moves()
            .into_iter()
            .find(|&m| self.uci(m) == wanted)
            .ok_or_else(|| Error::IllegalMove { text: crate::echo(text), fen: self.fen() })
    }

    /// Parses and plays a UCI move.
    pub fn play_uci(&mut self, text: &str) -> Result<Move> {
        let m = self.parse_uci(text)?;
        self.play(m);
        Ok(m)
    }
}
