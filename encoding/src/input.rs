//! Input planes: a position as `C × H × W` floats from the side to move's point of view.

use crate::{frame_square, lookup};
use vzero_rules::{Color, Game, PieceType, Position, Square, Variant};

/// What one input plane holds. "Own" is the side to move, "opp" the other side. Board planes
/// are in the mover's frame: row 0 is the mover's back rank, column 0 the a-file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plane {
    /// 1 where a piece of this type stands (own pieces if `own`, else the opponent's).
    Piece { own: bool, piece: PieceType },
    /// Constant: pieces of this type in hand divided by `max` (the number of pieces in the
    /// start position that demote to this type, at least 1).
    Hand { own: bool, piece: PieceType, max: u32 },
    /// Constant: 1 when White is to move (armies may differ; never assume colour symmetry).
    WhiteToMove,
    /// Constant: 1 while the castling right holds (`kingside` = towards the h-side).
    Castling { own: bool, kingside: bool },
    /// 1 on the en-passant target square.
    EnPassant,
    /// Constant: 1 when the position occurred at least `n` times before (n = 1, 2).
    Repetition { n: u32 },
    /// Constant: half-move clock / `scale` (twice the n-move rule), capped at 1.
    Rule50 { scale: u32 },
    /// Constant: promotions left to this promoted type under the variant's limit, / `limit`.
    PromotionAllowance { own: bool, piece: PieceType, limit: u32 },
    /// Constant: 1 when this side's royal piece is a Dictator.
    Dictator { own: bool },
    /// Constant: 1 when a Dictator's second step is pending.
    SecondStepPending,
    /// 1 on the square the king came from when a second step is pending.
    KingOrigin,
    /// Constant 1 (marks the board, for padding-aware convolutions).
    Ones,
}

/// Encodes positions of one variant as input planes. Build once per variant; cheap to share.
#[derive(Clone, Debug)]
pub struct InputEncoder {
    variant: Variant,
    files: usize,
    ranks: usize,
    planes: Vec<Plane>,
    /// Plane index of own / opponent pieces of each type.
    piece_plane: [Vec<usize>; 2],
}

impl InputEncoder {
    /// Derives the plane layout from the variant definition.
    pub fn new(variant: Variant) -> InputEncoder {
        let def = variant.def();
        let pieces = variant.pieces();
        let ntypes = pieces.len();
        let mut planes = Vec::new();
        for own in [true, false] {
            for pt in 0..ntypes {
                planes.push(Plane::Piece { own, piece: PieceType(pt as u8) });
            }
        }
        if variant.has_drops() {
            // Normaliser: pieces in the start position that demote to the type (both colours).
            let start = Position::startpos(variant);
            let base = |pt: usize| pieces[pt].base.map_or(pt, |b| b.index());
            let mut max = vec![0u32; ntypes];
            for s in 0..variant.files() * variant.ranks() {
                if let Some(p) = start.piece_at(Square(s as u8)) {
                    max[base(p.kind.index())] += 1;
                }
            }
            for c in Color::ALL {
                for pt in 0..ntypes {
                    max[base(pt)] += start.hand_count(c, PieceType(pt as u8)) as u32;
                }
            }
            for own in [true, false] {
                for &pt in variant.hand_types() {
                    planes.push(Plane::Hand { own, piece: pt, max: max[pt.index()].max(1) });
                }
            }
        }
        planes.push(Plane::WhiteToMove);
        if def.castling.is_some() {
            for own in [true, false] {
                for kingside in [true, false] {
                    planes.push(Plane::Castling { own, kingside });
                }
            }
        }
        if !def.pawns.en_passant_types.trim().is_empty() {
            planes.push(Plane::EnPassant);
        }
        if def.end.nfold > 1 {
            planes.push(Plane::Repetition { n: 1 });
            planes.push(Plane::Repetition { n: 2 });
        }
        if def.end.nmove > 0 {
            planes.push(Plane::Rule50 { scale: 2 * def.end.nmove });
        }
        if let Some(sp) = &def.shogi_promotion {
            for own in [true, false] {
                for (t, &limit) in &sp.limits {
                    if let Some(pt) = lookup(variant, t) {
                        if limit > 0 {
                            planes.push(Plane::PromotionAllowance { own, piece: pt, limit });
                        }
                    }
                }
            }
        }
        if variant.has_dictator() {
            planes.push(Plane::Dictator { own: true });
            planes.push(Plane::Dictator { own: false });
            planes.push(Plane::SecondStepPending);
            planes.push(Plane::KingOrigin);
        }
        planes.push(Plane::Ones);
        let piece_plane = [(0..ntypes).collect(), (ntypes..2 * ntypes).collect()];
        InputEncoder { variant, files: variant.files(), ranks: variant.ranks(), planes, piece_plane }
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Number of planes C.
    pub fn num_planes(&self) -> usize {
        self.planes.len()
    }

    /// Board height H (ranks).
    pub fn height(&self) -> usize {
        self.ranks
    }

    /// Board width W (files).
    pub fn width(&self) -> usize {
        self.files
    }

    /// `[C, H, W]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.planes.len(), self.ranks, self.files]
    }

    /// Floats per position, C·H·W.
    pub fn size(&self) -> usize {
        self.planes.len() * self.ranks * self.files
    }

    /// The planes in order.
    pub fn planes(&self) -> &[Plane] {
        &self.planes
    }

    /// Human-readable plane names in order (for the README and checkpoint metadata).
    pub fn plane_names(&self) -> Vec<String> {
        let pieces = self.variant.pieces();
        let who = |own: bool| if own { "own" } else { "opp" };
        let pname = |pt: PieceType| {
            let p = &pieces[pt.index()];
            format!("{} ({}{})", p.name, if p.promoted { "+" } else { "" }, p.letter)
        };
        self.planes
            .iter()
            .map(|p| match *p {
                Plane::Piece { own, piece } => format!("{} {}", who(own), pname(piece)),
                Plane::Hand { own, piece, max } => format!("{} hand {} /{}", who(own), pname(piece), max),
                Plane::WhiteToMove => "white to move".into(),
                Plane::Castling { own, kingside } => {
                    format!("{} castling {}", who(own), if kingside { "h-side" } else { "a-side" })
                }
                Plane::EnPassant => "en-passant square".into(),
                Plane::Repetition { n } => format!("repetition >= {n}"),
                Plane::Rule50 { scale } => format!("half-move clock /{scale}"),
                Plane::PromotionAllowance { own, piece, limit } => {
                    format!("{} promotions left to {} /{}", who(own), pname(piece), limit)
                }
                Plane::Dictator { own } => format!("{} dictator", who(own)),
                Plane::SecondStepPending => "second step pending".into(),
                Plane::KingOrigin => "king origin square".into(),
                Plane::Ones => "ones".into(),
            })
            .collect()
    }

    /// Encodes the current position of `game` with its repetition count.
    pub fn encode_game(&self, game: &Game) -> Vec<f32> {
        self.encode(game.position(), game.repetitions())
    }

    /// Encodes `pos`, which occurred `repetitions` times before (see [`Game::repetitions`]).
    pub fn encode(&self, pos: &Position, repetitions: usize) -> Vec<f32> {
        let mut out = vec![0.0; self.size()];
        self.encode_into(pos, repetitions, &mut out);
        out
    }

    /// Writes the planes of `pos` into `out` (length [`InputEncoder::size`], overwritten).
    ///
    /// # Panics
    /// If `out` has the wrong length.
    pub fn encode_into(&self, pos: &Position, repetitions: usize, out: &mut [f32]) {
        assert_eq!(out.len(), self.size(), "input buffer length");
        out.fill(0.0);
        let (files, ranks) = (self.files, self.ranks);
        let area = files * ranks;
        let us = pos.side_to_move();
        let them = us.flip();
        let f = |s: usize| frame_square(s, us, files, ranks);
        for s in 0..area {
            if let Some(p) = pos.piece_at(Square(s as u8)) {
                let side = if p.color == us { 0 } else { 1 };
                out[self.piece_plane[side][p.kind.index()] * area + f(s)] = 1.0;
            }
        }
        let fill = |out: &mut [f32], i: usize, v: f32| {
            if v != 0.0 {
                out[i * area..(i + 1) * area].fill(v);
            }
        };
        let color = |own: bool| if own { us } else { them };
        for (i, plane) in self.planes.iter().enumerate() {
            match *plane {
                Plane::Piece { .. } => {}
                Plane::Hand { own, piece, max } => fill(out, i, pos.hand_count(color(own), piece) as f32 / max as f32),
                Plane::WhiteToMove => fill(out, i, (us == Color::White) as u8 as f32),
                Plane::Castling { own, kingside } => {
                    let bit = color(own).index() * 2 + if kingside { 0 } else { 1 };
                    fill(out, i, (pos.castling_rights() >> bit & 1) as f32);
                }
                Plane::EnPassant => {
                    if let Some(e) = pos.ep_square() {
                        out[i * area + f(e.index())] = 1.0;
                    }
                }
                Plane::Repetition { n } => fill(out, i, (repetitions >= n as usize) as u8 as f32),
                Plane::Rule50 { scale } => fill(out, i, (pos.halfmove_clock() as f32 / scale as f32).min(1.0)),
                Plane::PromotionAllowance { own, piece, limit } => {
                    let c = color(own);
                    let on_board = (0..area)
                        .filter(|&s| pos.piece_at(Square(s as u8)).is_some_and(|p| p.color == c && p.kind == piece))
                        .count() as u32;
                    fill(out, i, limit.saturating_sub(on_board) as f32 / limit as f32);
                }
                Plane::Dictator { own } => fill(out, i, pos.is_dictator(color(own)) as u8 as f32),
                Plane::SecondStepPending => fill(out, i, pos.pending_second_step().is_some() as u8 as f32),
                Plane::KingOrigin => {
                    if let Some(o) = pos.pending_second_step() {
                        out[i * area + f(o.index())] = 1.0;
                    }
                }
                Plane::Ones => fill(out, i, 1.0),
            }
        }
    }
}
