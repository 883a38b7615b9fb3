//! Small typed values: colours, squares, piece types, pieces and moves.

use std::fmt;

/// A side.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Color {
    /// Moves first; uppercase FEN letters.
    White = 0,
    /// Lowercase FEN letters.
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The other side.
    #[inline]
    pub fn flip(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// FEN side-to-move letter.
    pub fn letter(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// Colour from an index (0 White, anything else Black).
    #[inline]
    pub fn from_index(i: usize) -> Color {
        if i == 0 {
            Color::White
        } else {
            Color::Black
        }
    }
}

/// A square index, `rank * files + file`, counted from White's left corner.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Square {
    /// The square at `file`, `rank` (both from 0) on a board `files` wide.
    #[inline]
    pub fn new(file: usize, rank: usize, files: usize) -> Square {
        Square((rank * files + file) as u8)
    }
    /// The raw index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// File from 0 on a board `files` wide.
    #[inline]
    pub fn file(self, files: usize) -> usize {
        self.index() % files
    }
    /// Rank from 0 on a board `files` wide.
    #[inline]
    pub fn rank(self, files: usize) -> usize {
        self.index() / files
    }
    /// Algebraic name (`e4`, `l12`) on a board `files` wide.
    pub fn name(self, files: usize) -> String {
        format!("{}{}", (b'a' + self.file(files) as u8) as char, self.rank(files) + 1)
    }
}

/// A piece type: an index into the variant's piece table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct PieceType(pub u8);

impl PieceType {
    /// The raw index.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A coloured piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    /// Owner.
    pub color: Color,
    /// Type, as defined by the variant.
    pub kind: PieceType,
}

impl Piece {
    /// Mailbox code of an empty square.
    pub(crate) const NONE: u8 = 0xff;

    #[inline]
    pub(crate) fn code(self) -> u8 {
        ((self.color as u8) << 5) | self.kind.0
    }

    #[inline]
    pub(crate) fn from_code(code: u8) -> Option<Piece> {
        if code == Self::NONE {
            None
        } else {
            Some(Piece { color: Color::from_index((code >> 5) as usize), kind: PieceType(code & 31) })
        }
    }
}

/// What a move does besides moving a piece from one square to another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MoveKind {
    /// A plain move or capture.
    Normal = 0,
    /// A pawn promotion by choice of piece (`a7a8q`); the move's piece is the new type.
    Promotion = 1,
    /// A shogi-style promotion (`c8h3+`); the move's piece is the promoted type.
    PiecePromotion = 2,
    /// A drop from hand (`P@e4`); `from == to`.
    Drop = 3,
    /// Castling, written as the king's move.
    Castle = 4,
    /// An en-passant capture.
    EnPassant = 5,
    /// Skipping a pending Dictator second step (`0000`).
    Pass = 6,
}

/// A move, packed into 32 bits: from, to, kind and a piece type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u32);

impl Move {
    /// Builds a move.
    #[inline]
    pub fn new(kind: MoveKind, from: usize, to: usize, piece: PieceType) -> Move {
        Move(from as u32 | (to as u32) << 8 | (kind as u32) << 16 | (piece.0 as u32) << 19)
    }
    /// A plain move.
    #[inline]
    pub fn normal(from: usize, to: usize) -> Move {
        Move::new(MoveKind::Normal, from, to, PieceType(0))
    }
    /// The pass move (`0000`).
    pub const PASS: Move = Move((MoveKind::Pass as u32) << 16);
    /// Origin square (the target square for drops).
    #[inline]
    pub fn from(self) -> usize {
        (self.0 & 0xff) as usize
    }
    /// Target square.
    #[inline]
    pub fn to(self) -> usize {
        (self.0 >> 8 & 0xff) as usize
    }
    /// The kind of move.
    #[inline]
    pub fn kind(self) -> MoveKind {
        match self.0 >> 16 & 7 {
            0 => MoveKind::Normal,
            1 => MoveKind::Promotion,
            2 => MoveKind::PiecePromotion,
            3 => MoveKind::Drop,
            4 => MoveKind::Castle,
            5 => MoveKind::EnPassant,
            _ => MoveKind::Pass,
        }
    }
    /// Promotion or drop piece type.
    #[inline]
    pub fn piece(self) -> PieceType {
        PieceType((self.0 >> 19 & 31) as u8)
    }
    /// The raw 32-bit code (stable; useful as a hash key).
    #[inline]
    pub fn raw(self) -> u32 {
        self.0
    }
    /// Whether the move is a drop.
    #[inline]
    pub fn is_drop(self) -> bool {
        self.kind() == MoveKind::Drop
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({:?} {}->{} p{})", self.kind(), self.from(), self.to(), self.piece().0)
    }
}
