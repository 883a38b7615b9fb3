//! Reduced-army starts: the variant's start position with some of each side's non-royal pieces
//! taken off, so that self-play reaches endings, where a material lead must be turned into the
//! result the rules count (mate, campmate), within plies instead of after a long middlegame
//! that the cap cuts short. A removed piece of White takes the mirrored piece of Black with it
//! when the start holds the same kind there (the start stays balanced), else a random piece of
//! Black goes. Variant-agnostic: the rules take the pieces off ([`Position::without_pieces`],
//! castling rights dropped) and refuse a start with the side not to move in check; such a start,
//! or one already over, is drawn again.

use rand::seq::SliceRandom;
use rand::Rng;
use vzero_rules::{Color, Game, Position, Square, Variant};

/// Draws at a reduced-army start before giving up.
const TRIES: usize = 16;

/// The start of `variant` with a uniformly random number from 1 to `share` of each side's
/// non-royal pieces removed (at least one piece when `share > 0`), or `None` when no legal
/// such start was drawn (e.g. a start with nothing but royal pieces).
pub fn reduced_army(variant: Variant, share: f32, rng: &mut impl Rng) -> Option<Game> {
    let start = Position::startpos(variant);
    let (files, ranks) = (variant.files(), variant.ranks());
    let (white, black) = (army(&start, Color::White), army(&start, Color::Black));
    if white.is_empty() || black.is_empty() || share <= 0.0 {
        return None;
    }
    let most = ((white.len().min(black.len()) as f32 * share.min(1.0)).floor() as usize).max(1);
    for _ in 0..TRIES {
        let k = rng.gen_range(1..=most);
        let mut gone = Vec::with_capacity(2 * k);
        let mut black_left = black.clone();
        for &sq in white.choose_multiple(rng, k) {
            let (file, rank) = (sq.index() % files, sq.index() / files);
            let mirror = Square::new(file, ranks - 1 - rank, files);
            let same = start.piece_at(mirror).is_some_and(|p| p.color == Color::Black && Some(p.kind) == start.piece_at(sq).map(|w| w.kind));
            let i = match black_left.iter().position(|&b| b == mirror) {
                Some(i) if same => i,
                _ => rng.gen_range(0..black_left.len()),
            };
            gone.push(sq);
            gone.push(black_left.swap_remove(i));
        }
        let Some(pos) = start.without_pieces(&gone) else { continue };
        let game = Game::new(pos);
        if !game.result().is_over() {
            return Some(game);
        }
    }
    None
}

/// The squares of `color`'s non-royal pieces in `p`.
fn army(p: &Position, color: Color) -> Vec<Square> {
    let v = p.variant();
    let king = p.king_square(color);
    (0..v.files() * v.ranks())
        .map(|i| Square(i as u8))
        .filter(|&sq| Some(sq) != king && p.piece_at(sq).is_some_and(|pc| pc.color == color))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn reduced_starts_are_legal_balanced_and_smaller_in_every_builtin_variant() {
        let mut rng = StdRng::seed_from_u64(3);
        for name in ["empire", "shogun", "spqr", "empire-faceoff", "shogun-auto"] {
            let v = Variant::builtin(name).unwrap();
            let full = Position::startpos(v);
            let (fw, fb) = (army(&full, Color::White).len(), army(&full, Color::Black).len());
            let mut sizes = std::collections::BTreeSet::new();
            for _ in 0..200 {
                let g = reduced_army(v, 0.5, &mut rng).unwrap_or_else(|| panic!("{name}: no start"));
                let p = g.position();
                assert!(g.moves().is_empty() && !g.result().is_over(), "{name}: {}", p.fen());
                assert!(!p.is_royal_attacked(p.side_to_move().flip()), "{name}: {}", p.fen());
                // the FEN reads back to the same position (the rules accepted it)
                assert_eq!(Position::from_fen(v, &p.fen()).unwrap().fen(), p.fen());
                let (w, b) = (army(p, Color::White).len(), army(p, Color::Black).len());
                assert_eq!(fw - w, fb - b, "{name}: as many taken from each side: {}", p.fen());
                assert!(w < fw && fw - w <= fw / 2, "{name}: {w} of {fw} left: {}", p.fen());
                assert!(p.king_square(Color::White).is_some() && p.king_square(Color::Black).is_some());
                sizes.insert(w);
            }
            assert!(sizes.len() > 2, "{name}: the number removed varies: {sizes:?}");
        }
    }

    #[test]
    fn symmetric_starts_lose_mirrored_pieces() {
        // empire's start is not symmetric (its armies differ); shogun-auto's (FIDE's) is: each
        // removed white piece takes the black piece of the same kind on the mirrored square
        let v = Variant::builtin("shogun-auto").unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..50 {
            let g = reduced_army(v, 1.0, &mut rng).unwrap();
            let p = g.position();
            for file in 0..8 {
                for rank in 0..8 {
                    let a = p.piece_at(Square::new(file, rank, 8)).map(|pc| pc.kind);
                    let b = p.piece_at(Square::new(file, 7 - rank, 8)).map(|pc| pc.kind);
                    assert_eq!(a, b, "{}", p.fen());
                }
            }
            assert!(p.castling_rights() == 0, "{}", p.fen());
        }
    }

    #[test]
    fn nothing_to_take_or_no_share_is_no_start() {
        let mut rng = StdRng::seed_from_u64(1);
        assert!(reduced_army(Variant::builtin("empire").unwrap(), 0.0, &mut rng).is_none());
        // the rules refuse to take a royal piece or an empty square
        let p = Position::startpos(Variant::builtin("empire").unwrap());
        assert!(p.without_pieces(&[p.king_square(Color::White).unwrap()]).is_none());
        assert!(p.without_pieces(&[Square::new(4, 4, 8)]).is_none());
        let pawn = (0..64).map(|i| Square(i as u8)).find(|&sq| p.piece_at(sq).is_some_and(|x| x.color == Color::White) && Some(sq) != p.king_square(Color::White)).unwrap();
        let q = p.without_pieces(&[pawn]).unwrap();
        assert!(q.piece_at(pawn).is_none() && q.key() != p.key());
        assert_eq!(q.key(), q.compute_key());
    }
}
