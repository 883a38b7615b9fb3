//! Input features of `HalfKAv2Variants` (Fairy-Stockfish's `half_ka_v2_variants.cpp`): the
//! active feature indices of a position from each side's perspective, and its bucket.
//!
//! For perspective `p` with its own NNUE king on `k`, a piece of slot `i` on square `s` is
//! `orient(s) + plane + block(orient(k))`, where `orient` flips ranks for Black, the plane is
//! `2i · squares` for `p`'s pieces and `(2i + 1) · squares` for the opponent's (both kings share
//! the king's plane), and `block(k) = k · piece_indices`. The `n`-th piece (from 0) of slot `i`
//! in a hand is `n + non_drop + (2i or 2i + 1) · pockets + block(orient(k))`. Castling, en passant,
//! the move counters and promoted flags are not features.

use crate::error::{NnueError, Result};
use crate::variant::FsfMapping;
use vzero_rules::{Color, Piece, Position, Square};

/// Most active features per perspective (Fairy-Stockfish's `MaxActiveDimensions`).
pub const MAX_ACTIVE: usize = 128;

/// One of the 8 piece-count buckets: selects the PSQT column and the layer stack.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Bucket(u8);

impl Bucket {
    /// Number of buckets.
    pub const COUNT: usize = 8;

    /// `min((pieces on board − 1) · 8 / max_pieces, 7)` (integer division, as Fairy-Stockfish).
    pub fn of(pieces_on_board: usize, max_pieces: usize) -> Bucket {
        let b = (pieces_on_board as i64 - 1) * 8 / max_pieces.max(1) as i64;
        Bucket(b.clamp(0, 7) as u8)
    }

    /// Bucket `i` (0..8; larger values are taken as 7).
    pub fn new(i: usize) -> Bucket {
        Bucket(i.min(7) as u8)
    }

    /// The bucket's index, 0..8.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The active features of one perspective: a fixed-capacity list (no allocation).
#[derive(Clone, Debug)]
pub struct FeatureList {
    len: usize,
    idx: [u32; MAX_ACTIVE],
}

impl Default for FeatureList {
    fn default() -> Self {
        FeatureList { len: 0, idx: [0; MAX_ACTIVE] }
    }
}

impl FeatureList {
    /// The indices, board pieces first (square order), then hands (White's, then Black's, by
    /// slot), as Fairy-Stockfish appends them.
    pub fn as_slice(&self) -> &[u32] {
        &self.idx[..self.len]
    }

    /// Number of active features.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no feature is active.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn push(&mut self, i: u32) -> bool {
        if self.len == MAX_ACTIVE {
            return false;
        }
        self.idx[self.len] = i;
        self.len += 1;
        true
    }
}

/// A position's features from both perspectives, with its side to move and bucket: everything
/// the networks read.
#[derive(Clone, Debug)]
pub struct PositionFeatures {
    side_to_move: Color,
    bucket: Bucket,
    dimensions: usize,
    lists: [FeatureList; 2],
}

impl Default for PositionFeatures {
    fn default() -> Self {
        PositionFeatures {
            side_to_move: Color::White,
            bucket: Bucket(0),
            dimensions: 0,
            lists: [FeatureList::default(), FeatureList::default()],
        }
    }
}

impl PositionFeatures {
    /// Side to move (its perspective comes first in the network's input).
    pub fn side_to_move(&self) -> Color {
        self.side_to_move
    }

    /// The piece-count bucket.
    pub fn bucket(&self) -> Bucket {
        self.bucket
    }

    /// Feature count of the mapping that made these (rows the indices point into).
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Active feature indices from `perspective`'s point of view.
    pub fn perspective(&self, perspective: Color) -> &[u32] {
        self.lists[perspective.index()].as_slice()
    }
}

impl FsfMapping {
    /// The features of `pos` from both perspectives.
    pub fn features(&self, pos: &Position) -> Result<PositionFeatures> {
        let mut out = PositionFeatures::default();
        self.features_into(pos, &mut out)?;
        Ok(out)
    }

    /// Active feature indices of `pos` from `perspective`, in Fairy-Stockfish's order.
    pub fn active_features(&self, pos: &Position, perspective: Color) -> Result<Vec<u32>> {
        Ok(self.features(pos)?.perspective(perspective).to_vec())
    }

    /// The bucket of `pos`.
    pub fn bucket(&self, pos: &Position) -> Bucket {
        let n = (0..self.squares()).filter(|&s| pos.piece_at(Square(s as u8)).is_some()).count();
        Bucket::of(n, self.max_pieces())
    }

    /// Fills `out` with the features of `pos` (reusing its storage: no allocation). Refuses a
    /// position of another variant, one where Fairy-Stockfish would not use NNUE (not exactly
    /// one king per side), and one with more than [`MAX_ACTIVE`] features. Hand counts above the
    /// `2 · files` slots of a type are taken as full.
    pub fn features_into(&self, pos: &Position, out: &mut PositionFeatures) -> Result<()> {
        let variant = pos.variant();
        if !self.is_for(variant) {
            return Err(NnueError::WrongVariant {
                what: "position".into(),
                found: variant.name().into(),
                expected: self.name().into(),
            });
        }
        // One scan of the board: occupied squares, their pieces, the NNUE kings.
        let nsq = self.squares();
        let mut squares = [0u8; 120];
        let mut pieces = [Piece { color: Color::White, kind: vzero_rules::PieceType(0) }; 120];
        let mut n = 0;
        let mut king_sq = [0u16; 2];
        let mut kings = [0u8; 2];
        let king_slot = self.king_slot();
        for s in 0..nsq {
            if let Some(p) = pos.piece_at(Square(s as u8)) {
                if king_slot.is_some() && self.slot(p.kind) == king_slot {
                    king_sq[p.color.index()] = s as u16;
                    kings[p.color.index()] += 1;
                }
                squares[n] = s as u8;
                pieces[n] = p;
                n += 1;
            }
        }
        if king_slot.is_some() && kings != [1, 1] {
            return Err(NnueError::NotApplicable {
                fen: pos.fen(),
                reason: format!(
                    "White has {} kings and Black {} (Fairy-Stockfish needs exactly one each)",
                    kings[0], kings[1]
                ),
            });
        }
        out.side_to_move = pos.side_to_move();
        out.bucket = Bucket::of(n, self.max_pieces());
        out.dimensions = self.dimensions();
        for persp in Color::ALL {
            let p = persp.index();
            let orient = &self.orient[p];
            // Without an NNUE king, Fairy-Stockfish takes the king square as a1: block 0.
            let block = if king_slot.is_some() { self.king_block[orient[king_sq[p] as usize] as usize] } else { 0 };
            let list = &mut out.lists[p];
            list.len = 0;
            let mut full = false;
            for (&s, pc) in squares[..n].iter().zip(&pieces[..n]) {
                let pt = pc.kind.index();
                let plane = if pc.color == persp { self.plane_own[pt] } else { self.plane_opp[pt] };
                full |= !list.push(orient[s as usize] as u32 + plane + block);
            }
            if self.uses_hands() {
                for c in Color::ALL {
                    for &pt in &self.by_slot {
                        let count = (pos.hand_count(c, pt) as usize).min(self.pockets());
                        let base =
                            if c == persp { self.hand_own[pt.index()] } else { self.hand_opp[pt.index()] } + block;
                        for i in 0..count {
                            full |= !list.push(base + i as u32);
                        }
                    }
                }
            }
            if full {
                return Err(NnueError::NotApplicable {
                    fen: pos.fen(),
                    reason: format!("more than {MAX_ACTIVE} active features (Fairy-Stockfish's limit)"),
                });
            }
        }
        Ok(())
    }
}

/// The features' left-right mirror: the permutation that takes every feature of a position to
/// the same feature of the position mirrored across the middle file (a piece's and its king's
/// squares mirrored, hand slots unchanged). Where the pieces move as their mirror images (see
/// [`vzero_rules::Variant::moves_mirror_symmetric`]) the mirrored position is worth what the
/// original is (castling rights are no feature), so a trainer may show either: Fairy-Stockfish's
/// `HalfKAv2Variants` has a block for every king square, where Stockfish's chess features fold
/// the mirror into the input instead.
#[derive(Clone, Debug)]
pub struct FeatureMirror {
    map: Vec<u32>,
}

impl FeatureMirror {
    /// The mirror of `m`'s features; `None` when a piece moves asymmetrically (a mirrored
    /// position would not be worth the original's).
    pub fn of(m: &FsfMapping) -> Option<FeatureMirror> {
        if !m.variant().moves_mirror_symmetric() {
            return None;
        }
        let (files, nsq, per_block, non_drop) = (m.files(), m.squares(), m.piece_indices(), m.non_drop_indices());
        let mirror_sq = |s: usize| s - s % files + (files - 1 - s % files);
        let with_king = m.king_slot().is_some();
        let map = (0..m.dimensions())
            .map(|f| {
                let (block, rest) = (f / per_block, f % per_block);
                // blocks are numbered by the (oriented) king square; orienting flips ranks only,
                // so mirroring files commutes with it
                let block = if with_king { mirror_sq(block) } else { block };
                let rest = if rest < non_drop { rest - rest % nsq + mirror_sq(rest % nsq) } else { rest };
                (block * per_block + rest) as u32
            })
            .collect();
        Some(FeatureMirror { map })
    }

    /// The mirrored feature of `f`.
    #[inline]
    pub fn feature(&self, f: u32) -> u32 {
        self.map[f as usize]
    }
}
