//! Quiescence: the material balance of a position once the captures that are pending have been
//! played out, by a small capture-only alpha-beta search (stand pat on material, MVV-LVA order,
//! check evasions searched in full).
//!
//! A plain material count is blind to a piece that hangs: after a move that leaves a rook
//! en prise, the count still says "even". The quiescent balance resolves the exchanges first,
//! so a search that uses it as a leaf value stops blundering material at its leaves. It knows
//! only what the variant's definition says (piece values, hands, royal pieces), so it works for
//! every variant, user-defined ones included.

use vzero_rules::{MoveKind, MoveList, Position};

use crate::variant_game::material_balance;

/// Balance (in pawns) given to the side to move when it has been mated or campmated: far beyond
/// any material difference, so `tanh` saturates.
pub const MATED: f32 = -1000.0;

/// Limits of the capture search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quiescence {
    /// Plies of captures searched at most (check evasions count too).
    pub max_depth: u32,
    /// Nodes searched at most; past it every node stands pat.
    pub max_nodes: u32,
}

/// Material balance (pawns) that maps to `tanh(1)` in the material target.
pub const MATERIAL_SCALE: f32 = 4.0;

/// The material target of `pos`, the `material` column of training rows: its quiescent
/// material balance for the side to move, `tanh(balance / MATERIAL_SCALE)` (self-play,
/// `vzero import` and `vzero label` all write it through here).
pub fn material_target(pos: &vzero_rules::Position) -> f32 {
    (Quiescence::default().balance(pos) / MATERIAL_SCALE).tanh()
}

impl Default for Quiescence {
    fn default() -> Self {
        Quiescence { max_depth: 8, max_nodes: 256 }
    }
}

/// Whether `m` changes material: a capture (en passant included) or a chess-style promotion.
#[inline]
fn is_tactical(pos: &Position, m: vzero_rules::Move) -> bool {
    match m.kind() {
        MoveKind::EnPassant | MoveKind::Promotion => true,
        MoveKind::Drop | MoveKind::Pass | MoveKind::Castle => false,
        MoveKind::Normal | MoveKind::PiecePromotion => {
            pos.piece_at(vzero_rules::Square(m.to() as u8)).is_some_and(|p| p.color != pos.side_to_move())
        }
    }
}

/// MVV-LVA key: most valuable victim first, then least valuable attacker.
#[inline]
fn order_key(pos: &Position, m: vzero_rules::Move) -> f32 {
    let pieces = pos.variant().pieces();
    let victim = match m.kind() {
        MoveKind::EnPassant => 1.0,
        _ => pos.piece_at(vzero_rules::Square(m.to() as u8)).map_or(0.0, |p| pieces[p.kind.index()].value),
    };
    let attacker = pos.piece_at(vzero_rules::Square(m.from() as u8)).map_or(0.0, |p| pieces[p.kind.index()].value);
    let promo = if m.kind() == MoveKind::Promotion { pieces[m.piece().index()].value } else { 0.0 };
    victim * 16.0 + promo * 8.0 - attacker
}

/// Moves of one node with their ordering keys (reused across nodes at the same depth).
#[derive(Default)]
struct Ply {
    list: MoveList,
    scored: Vec<(f32, vzero_rules::Move)>,
}

struct Searcher<'a> {
    cfg: Quiescence,
    nodes: u32,
    plies: &'a mut Vec<Ply>,
}

impl Searcher<'_> {
    fn search(&mut self, pos: &Position, mut alpha: f32, beta: f32, depth: u32) -> f32 {
        self.nodes += 1;
        if pos.flag_reached() {
            return MATED;
        }
        let d = depth as usize;
        if self.plies.len() <= d {
            self.plies.resize_with(d + 1, Ply::default);
        }
        let mut ply = std::mem::take(&mut self.plies[d]);
        let v = self.search_with(pos, &mut alpha, beta, depth, &mut ply);
        self.plies[d] = ply;
        v
    }

    fn search_with(&mut self, pos: &Position, alpha: &mut f32, beta: f32, depth: u32, ply: &mut Ply) -> f32 {
        ply.list.clear();
        pos.legal_moves_into(&mut ply.list);
        let in_check = pos.is_check();
        if ply.list.is_empty() {
            // Mate; a stalemate is scored as the material it leaves (the search scores it exactly).
            return if in_check { MATED } else { material_balance(pos) };
        }
        let stand = material_balance(pos);
        let exhausted = depth >= self.cfg.max_depth || self.nodes >= self.cfg.max_nodes;
        if !in_check || exhausted {
            if stand >= beta || exhausted {
                return stand;
            }
            *alpha = alpha.max(stand);
        }
        let pieces = pos.variant().pieces();
        ply.scored.clear();
        for &m in ply.list.as_slice() {
            if in_check || is_tactical(pos, m) {
                let key = order_key(pos, m);
                if !in_check {
                    // Delta pruning: even winning the victim (and a promotion) cannot reach alpha.
                    let victim = pos.piece_at(vzero_rules::Square(m.to() as u8)).map_or(1.0, |p| pieces[p.kind.index()].value);
                    let promo = if m.kind() == MoveKind::Promotion { pieces[m.piece().index()].value } else { 0.0 };
                    if stand + 2.0 * victim + promo + DELTA_MARGIN <= *alpha {
                        continue;
                    }
                }
                ply.scored.push((key, m));
            }
        }
        if ply.scored.is_empty() {
            return if in_check { MATED.max(stand) } else { stand };
        }
        ply.scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let me = pos.side_to_move();
        let mut best = if in_check { f32::NEG_INFINITY } else { stand };
        for i in 0..ply.scored.len() {
            if self.nodes >= self.cfg.max_nodes && best > f32::NEG_INFINITY {
                break;
            }
            let m = ply.scored[i].1;
            let mut child = *pos;
            child.play(m);
            // Turns need not alternate (a Dictator's first step): negate only when the side changes.
            let v = if child.side_to_move() == me {
                self.search(&child, *alpha, beta, depth + 1)
            } else {
                -self.search(&child, -beta, -*alpha, depth + 1)
            };
            if v > best {
                best = v;
                if v > *alpha {
                    *alpha = v;
                    if *alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// Margin (pawns) of delta pruning. A capture's gain is bounded by twice the victim's value
/// (in drop variants the capturer also gains it in hand) plus a promotion.
const DELTA_MARGIN: f32 = 0.5;

thread_local! {
    static PLIES: std::cell::RefCell<Vec<Ply>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Quiescence {
    /// The quiescent material balance of `pos` for its side to move, in pawns ([`MATED`] when
    /// the side to move is mated or campmated within the capture sequence).
    pub fn balance(&self, pos: &Position) -> f32 {
        self.balance_with_nodes(pos).0
    }

    /// [`Quiescence::balance`] and the number of nodes it searched.
    pub fn balance_with_nodes(&self, pos: &Position) -> (f32, u32) {
        PLIES.with(|p| {
            let mut plies = p.borrow_mut();
            let mut s = Searcher { cfg: *self, nodes: 0, plies: &mut plies };
            let v = s.search(pos, f32::NEG_INFINITY, f32::INFINITY, 0);
            (v, s.nodes)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vzero_rules::Variant;

    fn pos(variant: &str, fen: &str) -> Position {
        Position::from_fen(Variant::builtin(variant).unwrap(), fen).unwrap()
    }

    #[test]
    fn hanging_piece_is_taken() {
        // White to move can take an undefended black rook on d5 with the knight.
        let p = pos("empire", "7k/8/8/3r4/8/4N3/8/K7 w - - 0 1");
        assert_eq!(material_balance(&p), -material_balance(&pos("empire", "7k/8/8/3r4/8/4N3/8/K7 b - - 0 1")));
        let q = Quiescence::default().balance(&p);
        assert!(q > material_balance(&p) + 1.0, "the rook is won: static {}, quiescent {q}", material_balance(&p));
    }

    #[test]
    fn defended_piece_is_not_taken_for_free() {
        // The d5 rook is defended by the e6 pawn: Nxd5 exd5 trades a knight for a rook.
        let p = pos("empire", "7k/8/4p3/3r4/8/4N3/8/K7 w - - 0 1");
        let static_ = material_balance(&p);
        let q = Quiescence::default().balance(&p);
        let pieces = p.variant().pieces();
        let value = |l: char| pieces.iter().find(|i| i.letter == l && !i.promoted).unwrap().value;
        let gain = value('r') - value('n');
        assert!((q - (static_ + gain.max(0.0))).abs() < 1e-4, "static {static_}, quiescent {q}, trade {gain}");
    }

    #[test]
    fn quiet_position_equals_material() {
        for v in vzero_rules::variant::builtin_names() {
            let p = Position::startpos(Variant::builtin(v).unwrap());
            assert_eq!(Quiescence::default().balance(&p), material_balance(&p), "{v}");
        }
    }

    #[test]
    fn bounded_by_node_limit_in_random_positions() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let q = Quiescence { max_depth: 8, max_nodes: 64 };
        for v in vzero_rules::variant::builtin_names() {
            let variant = Variant::builtin(v).unwrap();
            for _ in 0..20 {
                let mut p = Position::startpos(variant);
                for _ in 0..rng.gen_range(10..80) {
                    let ms = p.legal_moves();
                    if ms.is_empty() || p.flag_reached() {
                        break;
                    }
                    p.play(ms[rng.gen_range(0..ms.len())]);
                }
                let (v, nodes) = q.balance_with_nodes(&p);
                assert!(v.is_finite());
                // one node past the limit per ply on the path back at most
                assert!(nodes <= 64 + q.max_depth + 1, "{nodes} nodes");
            }
        }
    }
}
