//! Which opponent piece each policy index takes, read off the input planes: the victims behind
//! the capture prior (`vzero_mcts::Knowledge::capture_logit`) for a whole batch of encoded
//! positions at once, so a learner can train a policy as a residual over that prior without
//! decoding positions.

use crate::{InputEncoder, MoveEncoder, MoveEntry, Plane};
use vzero_rules::Variant;

/// Per variant: the value each input plane marks on its squares (an opponent piece's value,
/// else 0) and the square each policy index lands on. `victims = landing ∘ Σ_planes value · plane`.
/// En passant (the victim is not on the landing square) counts as a quiet move here.
#[derive(Clone, Debug)]
pub struct CaptureMap {
    plane_values: Vec<f32>,
    landing: Vec<u32>,
    area: usize,
}

impl CaptureMap {
    /// Builds the map from the variant's plane layout, move index space and piece values.
    pub fn new(variant: Variant) -> CaptureMap {
        let inputs = InputEncoder::new(variant);
        let moves = MoveEncoder::new(variant);
        let pieces = variant.pieces();
        let area = variant.files() * variant.ranks();
        let plane_values = inputs
            .planes()
            .iter()
            .map(|p| match *p {
                Plane::Piece { own: false, piece } => pieces[piece.index()].value,
                _ => 0.0,
            })
            .collect();
        let landing = (0..moves.len())
            .map(|i| match moves.entry(i) {
                Some(MoveEntry::Board { to, .. } | MoveEntry::Promotion { to, .. } | MoveEntry::PiecePromotion { to, .. }) => to as u32,
                _ => area as u32,
            })
            .collect();
        CaptureMap { plane_values, landing, area }
    }

    /// Per input plane, the value of the opponent piece it marks (0 for every other plane).
    pub fn plane_values(&self) -> &[f32] {
        &self.plane_values
    }

    /// Per policy index, the mover's-frame square whose piece the move takes; [`CaptureMap::area`]
    /// where it takes none (drops, pass).
    pub fn landing(&self) -> &[u32] {
        &self.landing
    }

    /// Squares of the board (the "no square" value of [`CaptureMap::landing`]).
    pub fn area(&self) -> usize {
        self.area
    }

    /// The value of the opponent piece each policy index takes in the position whose planes are
    /// `planes` (one position, `C × H × W`), 0 for a quiet move.
    pub fn victims(&self, planes: &[f32]) -> Vec<f32> {
        let mut board = vec![0.0f32; self.area + 1];
        for (c, &v) in self.plane_values.iter().enumerate() {
            if v != 0.0 {
                for (b, &x) in board.iter_mut().zip(&planes[c * self.area..(c + 1) * self.area]) {
                    *b += v * x;
                }
            }
        }
        self.landing.iter().map(|&s| board[s as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::prelude::*;
    use vzero_rules::{Game, MoveKind, Square};

    /// Over random games of every built-in variant, each legal move's victim read off the planes
    /// is the value of the opponent piece on its landing square (0 for en passant, drops, pass).
    #[test]
    fn victims_from_planes_match_the_position() {
        let mut rng = StdRng::seed_from_u64(7);
        for name in vzero_rules::variant::builtin_names() {
            let v = Variant::builtin(name).unwrap();
            let (inp, mv, map) = (InputEncoder::new(v), MoveEncoder::new(v), CaptureMap::new(v));
            assert_eq!(map.plane_values().len(), inp.num_planes());
            assert_eq!(map.landing().len(), mv.len());
            let mut captures = 0;
            for _ in 0..4 {
                let mut game = Game::startpos(v);
                for _ in 0..120 {
                    let pos = game.position();
                    let legal = mv.legal_indices(pos);
                    if legal.is_empty() || game.result().is_over() {
                        break;
                    }
                    let victims = map.victims(&inp.encode_game(&game));
                    let us = pos.side_to_move();
                    for &(i, m) in &legal {
                        let want = match m.kind() {
                            MoveKind::Drop | MoveKind::Pass | MoveKind::Castle | MoveKind::EnPassant => 0.0,
                            _ => pos.piece_at(Square(m.to() as u8)).filter(|p| p.color != us).map_or(0.0, |p| v.pieces()[p.kind.index()].value),
                        };
                        captures += usize::from(want > 0.0);
                        assert_eq!(victims[i], want, "{name}: {} in {}", pos.uci(m), pos.fen());
                    }
                    let &(_, m) = legal.choose(&mut rng).unwrap();
                    game.play(m);
                }
            }
            assert!(captures > 0, "{name}: random games made no capture to check");
        }
    }
}
