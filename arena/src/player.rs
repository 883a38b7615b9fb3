//! Players: anything that picks a move for a [`vzero_rules::Game`] (the [`Player`] trait), and
//! vzero's built-in players (random, greedy, alpha-beta, MCTS); [`crate::spec`] names and builds
//! them all, external engines included.

use anyhow::{Context, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use vzero_engine::{search_move, Evaluator, Limits, Score};
use vzero_mcts::{material_balance, SearchConfig, VariantGame};
use vzero_rules::{Game, Move, MoveKind, Outcome};

/// Something that plays moves.
pub trait Player: Send {
    /// Name used in results and PGN tags.
    fn name(&self) -> &str;
    /// Called before each game.
    fn new_game(&mut self) -> Result<()> {
        Ok(())
    }
    /// Seeds the player's own random choices for the next game, so that a match's games do not
    /// depend on which of its threads plays them. Players without randomness of their own (an
    /// external engine) ignore it.
    fn reseed(&mut self, _seed: u64) {}
    /// A legal move for the side to move in `game` (which is not over). An error forfeits the game.
    fn choose(&mut self, game: &Game) -> Result<Move>;
    /// A move, as [`Player::choose`], with the player's score of the position for the side to
    /// move when it has one: what a teacher gives `vzero label`. Players without a score
    /// (random, greedy) answer `None`.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        Ok((self.choose(game)?, None))
    }
    /// [`Player::judge`] with the other lines of a multi-PV search (an engine with `MultiPV`
    /// above 1): each of their first moves with its score and the reply the search expects,
    /// best first, without the best line. Players that search one line answer none.
    fn judge_lines(&mut self, game: &Game) -> Result<(Move, Option<Score>, Vec<PvLine>)> {
        let (m, s) = self.judge(game)?;
        Ok((m, s, Vec::new()))
    }
}

/// A line of a multi-PV search other than the best: the first move, its score for the side to
/// move at the root, and the opponent's reply in the line (the search's best move in the
/// position after `first`), when the line has one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PvLine {
    pub first: Move,
    pub score: Score,
    pub reply: Option<Move>,
}


/// Plays a uniformly random legal move.
pub struct RandomPlayer {
    pub(crate) name: String,
    pub(crate) rng: StdRng,
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        game.position().legal_moves().choose(&mut self.rng).copied().context("no legal move")
    }
}

/// A score for the side that just moved in `g` (after one of its moves): terminal results
/// dominate, then material. Positive is good for that side.
fn score_after(g: &VariantGame, mover: usize) -> f32 {
    use vzero_mcts::Game as _;
    let r = g.result();
    let stm = g.to_move();
    let sign = if stm == mover { 1.0 } else { -1.0 };
    if r.is_over() {
        let v = match r.outcome {
            Outcome::Win => 1.0,
            Outcome::Loss => -1.0,
            _ => 0.0,
        };
        return sign * v * 1e6;
    }
    sign * material_balance(g.position())
}

/// One ply: wins at once if it can, else maximizes material; ties at random.
pub struct GreedyPlayer {
    pub(crate) name: String,
    pub(crate) rng: StdRng,
}

impl Player for GreedyPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        use vzero_mcts::Game as _;
        let state = VariantGame::from_game(game);
        let mover = state.to_move();
        let mut best: Vec<Move> = Vec::new();
        let mut best_score = f32::NEG_INFINITY;
        for m in game.position().legal_moves() {
            let mut g = state.clone();
            g.play_move(m);
            let s = score_after(&g, mover);
            if s > best_score + 1e-4 {
                best_score = s;
                best.clear();
                best.push(m);
            } else if (s - best_score).abs() <= 1e-4 {
                best.push(m);
            }
        }
        best.choose(&mut self.rng).copied().context("no legal move")
    }
}

/// Fixed-depth alpha-beta on material with MVV-LVA move ordering.
pub struct AlphaBetaPlayer {
    pub(crate) name: String,
    pub(crate) rng: StdRng,
    pub(crate) depth: u32,
    /// Nodes searched by the last move (for tests and curiosity).
    pub nodes: u64,
}

const MATE: f32 = 1e6;

impl AlphaBetaPlayer {
    /// Ordering key: captures by victim value minus a tenth of the attacker's, promotions, then the rest.
    fn order_key(pos: &vzero_rules::Position, m: Move) -> f32 {
        let pieces = pos.variant().pieces();
        let mut k = 0.0;
        if m.kind() != MoveKind::Drop && m.kind() != MoveKind::Pass {
            if let Some(victim) = pos.piece_at(vzero_rules::Square(m.to() as u8)) {
                if victim.color != pos.side_to_move() {
                    let attacker = pos.piece_at(vzero_rules::Square(m.from() as u8)).map_or(0.0, |p| pieces[p.kind.index()].value);
                    k += 100.0 + pieces[victim.kind.index()].value * 10.0 - attacker;
                }
            }
        }
        if matches!(m.kind(), MoveKind::Promotion | MoveKind::PiecePromotion) {
            k += 50.0;
        }
        k
    }

    /// Negamax value for the side to move in `g`.
    fn negamax(&mut self, g: &VariantGame, depth: u32, ply: u32, mut alpha: f32, beta: f32) -> f32 {
        use vzero_mcts::Game as _;
        self.nodes += 1;
        let mut moves = Vec::new();
        if let Some(v) = g.expand(&mut moves) {
            // terminal: v for the side to move; prefer quick wins and slow losses
            return if v > 0.0 { MATE - ply as f32 } else if v < 0.0 { -MATE + ply as f32 } else { 0.0 };
        }
        if depth == 0 {
            return material_balance(g.position());
        }
        let pos = *g.position();
        moves.sort_by_cached_key(|&m| std::cmp::Reverse((Self::order_key(&pos, m) * 16.0) as i64));
        let me = g.to_move();
        let mut best = f32::NEG_INFINITY;
        for m in moves {
            let mut c = g.clone();
            c.play_move(m);
            // turns need not alternate (SPQR Dictator): negate only when the side changes
            let v = if c.to_move() == me {
                self.negamax(&c, depth - 1, ply + 1, alpha, beta)
            } else {
                -self.negamax(&c, depth - 1, ply + 1, -beta, -alpha)
            };
            if v > best {
                best = v;
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        Ok(self.judge(game)?.0)
    }

    /// The move and its negamax score: material in centipawns (piece values × 100), or a mate
    /// in moves when one is found within the depth.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        use vzero_mcts::Game as _;
        self.nodes = 0;
        let state = VariantGame::from_game(game);
        let me = state.to_move();
        let pos = *game.position();
        let mut moves = pos.legal_moves();
        moves.shuffle(&mut self.rng);
        moves.sort_by_cached_key(|&m| std::cmp::Reverse((Self::order_key(&pos, m) * 16.0) as i64));
        let mut best = Vec::new();
        let mut best_v = f32::NEG_INFINITY;
        for m in moves {
            let mut c = state.clone();
            c.play_move(m);
            // full window below the best so far minus a hair, so equal moves are kept for ties
            let alpha = best_v - 1e-3;
            let v = if c.to_move() == me {
                self.negamax(&c, self.depth - 1, 1, alpha, f32::INFINITY)
            } else {
                -self.negamax(&c, self.depth - 1, 1, f32::NEG_INFINITY, -alpha)
            };
            if v > best_v + 1e-3 {
                best_v = v;
                best.clear();
                best.push(m);
            } else if (v - best_v).abs() <= 1e-3 {
                best.push(m);
            }
        }
        let m = best.choose(&mut self.rng).copied().context("no legal move")?;
        let score = if best_v.abs() >= MATE - 1000.0 {
            let plies = (MATE - best_v.abs()).round() as i32;
            Score::Mate(if best_v > 0.0 { (plies + 1) / 2 } else { -(plies + 1) / 2 })
        } else {
            Score::Cp((best_v * 100.0).round() as i32)
        };
        Ok((m, Some(score)))
    }
}

/// MCTS with an evaluator (material or network), a fresh tree per move.
pub struct MctsPlayer {
    pub(crate) name: String,
    pub(crate) rng: StdRng,
    pub(crate) sims: u32,
    pub(crate) batch: Option<usize>,
    pub(crate) config: SearchConfig,
    pub(crate) eval: Evaluator,
}

impl Player for MctsPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn reseed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        Ok(self.judge(game)?.0)
    }

    /// The chosen move and the root's value as centipawns ([`crate::engine::value_to_cp`]), or
    /// a mate when the solver proved one.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        let limits = Limits { sims: Some(self.sims as u64), time: None, batch: self.batch };
        let seed = self.rng.gen();
        let r = search_move(VariantGame::from_game(game), self.config.clone(), seed, &mut self.eval, limits, None, None, &mut |_| {})?;
        let r = r.context("search from a finished game")?.0;
        Ok((r.chosen, Some(vzero_engine::think::score(r.root_value, r.proven))))
    }
}
