//! The search's [`Game`] for the rules core's variants, and cheap evaluators that need no network.
//!
//! [`VariantGame`] is a [`Position`] plus the Zobrist keys of the earlier positions inside the
//! repetition window: everything [`vzero_rules::Game::result`] looks at, without the rules
//! `Game`'s history of whole positions (cloning that on every simulation costs far more; see
//! `docs/search.md`). Its result is exactly `Game::result()`'s: campmate, then the n-move rule,
//! then repetition, then checkmate or stalemate, each scored as the variant defines it (empire
//! stalemate and repetition lose for the side to move, shogun's draw).
//!
//! Players: 0 = White, 1 = Black. Turns need not alternate: after a Dictator's first step the
//! same side moves again (a second step or the pass `0000`).
//!
//! Moves that win at once ([`Game::winning_move`], asked of every new search node) are found
//! without playing most moves: only checking moves can mate, only royal moves onto a flag rank
//! can campmate, only moves that touch every one of the opponent's witness moves can stalemate
//! it (looked at only where stalemate loses), and only when an earlier position already occurred
//! `nfold - 1` times can a repetition end the game (looked at only where it is not a draw). The
//! few candidates are played and judged exactly as [`VariantGame::result`] would.
//!
//! Evaluators: [`MaterialEvaluator`] (uniform priors, tanh of the material difference) and
//! [`RolloutEvaluator`] (uniform priors, a short deterministic random playout).

use std::cell::RefCell;

use vzero_rules::definition::VariantDef;
use vzero_rules::{Color, GameResult, Move, MoveKind, MoveList, Outcome, Position, Reason, Variant};

use crate::eval::LeafValue;
use crate::game::Game;

/// The game-end rules of a variant, read once from its definition.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EndRules {
    /// n-move rule in moves (0: none); drawn when the halfmove clock reaches 2n.
    nmove: u32,
    /// Repetitions that end the game (0 or 1: none).
    nfold: u32,
    /// Outcome of the n-fold repetition for the side to move.
    nfold_outcome: Outcome,
    /// Outcome of stalemate for the side to move.
    stalemate_outcome: Outcome,
    /// Repetitions count over the whole game (not only since the last irreversible move).
    whole_game: bool,
    /// Per colour, the ranks (bit = absolute rank) where its royal piece campmates (0: none).
    flag_ranks: [u16; 2],
}

fn outcome_named(s: &str) -> Outcome {
    match s {
        "win" => Outcome::Win,
        "loss" => Outcome::Loss,
        _ => Outcome::Draw,
    }
}

impl EndRules {
    fn of(def: &VariantDef) -> EndRules {
        let e = &def.end;
        let mut flag_ranks = [0u16; 2];
        for &r in def.flag.iter().flat_map(|f| &f.ranks) {
            if (1..=def.ranks.min(16)).contains(&r) {
                flag_ranks[0] |= 1 << (r - 1);
                flag_ranks[1] |= 1 << (def.ranks - r);
            }
        }
        EndRules {
            nmove: e.nmove,
            nfold: e.nfold,
            nfold_outcome: outcome_named(&e.nfold_value),
            stalemate_outcome: outcome_named(&e.stalemate),
            whole_game: e.repetition_window == "game",
            flag_ranks,
        }
    }

    /// The result of `pos` exactly as [`vzero_rules::Game::result`]: campmate, then the n-move
    /// rule, then repetition, then checkmate or stalemate. `earlier` (then `last`) are the keys of
    /// the earlier positions in its repetition window; `no_moves` tells whether the side to move
    /// has no legal move (asked only when needed).
    fn judge(&self, pos: &Position, earlier: &[u64], last: Option<u64>, no_moves: impl FnOnce() -> bool) -> GameResult {
        if pos.flag_reached() {
            return GameResult { outcome: Outcome::Loss, reason: Reason::Campmate };
        }
        let no_moves = no_moves();
        if self.nmove > 0 && pos.halfmove_clock() >= 2 * self.nmove && (!no_moves || !pos.is_check()) {
            return GameResult { outcome: Outcome::Draw, reason: Reason::FiftyMove };
        }
        // Fewer earlier positions than needed: skip the scan.
        let n = earlier.len() + last.is_some() as usize;
        if self.nfold > 1 && n + 1 >= self.nfold as usize {
            let k = pos.key();
            let reps = earlier.iter().filter(|&&x| x == k).count() + (last == Some(k)) as usize;
            if reps + 1 >= self.nfold as usize {
                return GameResult { outcome: self.nfold_outcome, reason: Reason::Repetition };
            }
        }
        if no_moves {
            if pos.is_check() {
                return GameResult { outcome: Outcome::Loss, reason: Reason::Checkmate };
            }
            return GameResult { outcome: self.stalemate_outcome, reason: Reason::Stalemate };
        }
        GameResult { outcome: Outcome::Ongoing, reason: Reason::None }
    }
}

/// Whether some key occurs at least `times` times in `keys` (a sorted copy for long lists).
fn has_repeated_key(keys: &[u64], times: usize) -> bool {
    match times {
        0 => true,
        1 => !keys.is_empty(),
        _ if keys.len() <= 32 => keys.iter().enumerate().any(|(i, &k)| keys[i + 1..].iter().filter(|&&x| x == k).count() + 1 >= times),
        _ => SORTED.with(|c| {
            let mut sorted = c.borrow_mut();
            sorted.clear();
            sorted.extend_from_slice(keys);
            sorted.sort_unstable();
            sorted.chunk_by(|a, b| a == b).any(|run| run.len() >= times)
        }),
    }
}

thread_local! {
    /// Scratch move list (4 KiB) so the hot path neither allocates nor clears one per node.
    static SCRATCH: RefCell<MoveList> = RefCell::new(MoveList::new());
    /// Scratch list of candidate move indices for [`Game::winning_move`].
    static CANDIDATES: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// Scratch copy of the repetition keys, sorted.
    static SORTED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// A position of a rules-core variant with what repetition needs; implements the search's [`Game`].
#[derive(Clone, Debug)]
pub struct VariantGame {
    pos: Position,
    /// Keys of the earlier positions in the repetition window, oldest first.
    keys: Vec<u64>,
    end: EndRules,
}

impl VariantGame {
    /// A game starting at `pos` (no earlier positions).
    pub fn new(pos: Position) -> VariantGame {
        let end = EndRules::of(pos.variant().def());
        VariantGame { pos, keys: Vec::new(), end }
    }

    /// A game from the variant's start position.
    pub fn startpos(variant: Variant) -> VariantGame {
        VariantGame::new(Position::startpos(variant))
    }

    /// The same game as a rules-core [`vzero_rules::Game`] (its start position and moves).
    pub fn from_game(game: &vzero_rules::Game) -> VariantGame {
        let mut g = VariantGame::new(*game.start());
        for &m in game.moves() {
            g.play_move(m);
        }
        g
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.pos.variant()
    }

    /// How many times the current position occurred before, within the repetition window
    /// (as [`vzero_rules::Game::repetitions`]).
    pub fn repetitions(&self) -> usize {
        let k = self.pos.key();
        self.keys.iter().filter(|&&x| x == k).count()
    }

    /// Plays a legal move.
    #[inline]
    pub fn play_move(&mut self, m: Move) {
        let before = self.pos.key();
        self.pos.play(m);
        if !self.end.whole_game && self.pos.halfmove_clock() == 0 {
            self.keys.clear();
        } else {
            self.keys.push(before);
        }
    }

    /// Parses, checks and plays a UCI move.
    pub fn play_uci(&mut self, text: &str) -> vzero_rules::Result<Move> {
        let m = self.pos.parse_uci(text)?;
        self.play_move(m);
        Ok(m)
    }

    /// The game state for the side to move, exactly as [`vzero_rules::Game::result`].
    pub fn result(&self) -> GameResult {
        SCRATCH.with(|l| {
            let mut list = l.borrow_mut();
            self.result_with(&mut list)
        })
    }

    /// The result, with the legal moves left in `list` (cleared when the side to move has just
    /// lost by campmate, where move generation is skipped).
    fn result_with(&self, list: &mut MoveList) -> GameResult {
        list.clear();
        self.end.judge(&self.pos, &self.keys, None, || {
            self.pos.legal_moves_into(list);
            list.is_empty()
        })
    }

    /// The result after the legal move `m`, as `result()` of the game with `m` played, without
    /// copying the keys or generating more than one legal move.
    pub fn result_after(&self, m: Move) -> GameResult {
        self.judge_after(m).1
    }

    /// The side to move after the legal move `m`, and the result there.
    fn judge_after(&self, m: Move) -> (Color, GameResult) {
        let mut next = self.pos;
        next.play(m);
        let (earlier, last) = self.window_after(&next);
        (next.side_to_move(), self.end.judge(&next, earlier, last, || !next.has_legal_move()))
    }

    /// The earlier positions of the repetition window of `next`, a position one move on.
    fn window_after(&self, next: &Position) -> (&[u64], Option<u64>) {
        if !self.end.whole_game && next.halfmove_clock() == 0 {
            (&[], None)
        } else {
            (&self.keys, Some(self.pos.key()))
        }
    }

    /// Whether the position after `m` occurred `nfold - 1` times before (a repetition ends the
    /// game there unless an earlier rule does).
    fn repeats_after(&self, m: Move) -> bool {
        let mut next = self.pos;
        next.play(m);
        let k = next.key();
        let (earlier, last) = self.window_after(&next);
        earlier.iter().filter(|&&x| x == k).count() + (last == Some(k)) as usize + 1 >= self.end.nfold as usize
    }

    /// Whether `m` wins at once for the side to move, judged exactly.
    fn wins_at_once(&self, m: Move) -> bool {
        let (side, r) = self.judge_after(m);
        r.outcome == if side == self.pos.side_to_move() { Outcome::Win } else { Outcome::Loss }
    }
}

fn terminal(r: GameResult) -> Option<f32> {
    r.is_over().then(|| r.value())
}

impl Game for VariantGame {
    type Move = Move;

    #[inline]
    fn to_move(&self) -> usize {
        self.pos.side_to_move().index()
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        SCRATCH.with(|l| {
            let mut list = l.borrow_mut();
            list.clear();
            self.pos.legal_moves_into(&mut list);
            out.extend_from_slice(list.as_slice());
        })
    }

    #[inline]
    fn play(&mut self, mv: Move) {
        self.play_move(mv)
    }

    fn terminal_value(&self) -> Option<f32> {
        terminal(self.result())
    }

    /// Plays only the candidates: checking moves (mate), non-checking moves that touch every
    /// witness of the opponent's mobility (stalemate, where it loses), royal moves onto a flag
    /// rank (campmate), and — where repetition is decisive and an earlier position already
    /// occurred `nfold - 1` times — every move.
    fn winning_move(&self, moves: &[Move]) -> Option<usize> {
        let end = &self.end;
        let pos = &self.pos;
        let us = pos.side_to_move();
        let flags = end.flag_ranks[us.index()];
        let king = pos.king_square(us).map(|k| k.index());
        let files = pos.variant().files();
        let campmate = |m: Move| {
            flags != 0
                && (m.kind() == MoveKind::Castle || (Some(m.from()) == king && m.kind() == MoveKind::Normal && flags >> (m.to() / files) & 1 != 0))
        };
        let repetition = end.nfold > 1 && end.nfold_outcome != Outcome::Draw && has_repeated_key(&self.keys, end.nfold as usize - 1);
        CANDIDATES.with(|c| {
            let mut mates = c.borrow_mut();
            mates.clear();
            pos.mate_candidates(moves, end.stalemate_outcome == Outcome::Loss, &mut mates);
            let mut next_mate = mates.iter().copied().peekable();
            (0..moves.len()).find(|&i| {
                let mate = next_mate.next_if_eq(&(i as u32)).is_some();
                let m = moves[i];
                (mate || campmate(m) || (repetition && self.repeats_after(m))) && self.wins_at_once(m)
            })
        })
    }

    /// Generates the legal moves once for both the result and the node's edges.
    fn expand(&self, out: &mut Vec<Move>) -> Option<f32> {
        SCRATCH.with(|l| {
            let mut list = l.borrow_mut();
            let r = self.result_with(&mut list);
            if !r.is_over() {
                out.extend_from_slice(list.as_slice());
            }
            terminal(r)
        })
    }
}

/// Material of the side to move minus the opponent's, in pawns (`PieceInfo::value`), counting
/// pieces on the board and in hand; royal pieces are not counted.
pub fn material_balance(pos: &Position) -> f32 {
    let v = pos.variant();
    let pieces = v.pieces();
    let us = pos.side_to_move();
    // Each side summed on its own so that equal armies give exactly 0.
    let mut sum = [0.0f32; 2];
    for sq in 0..v.files() * v.ranks() {
        if let Some(p) = pos.piece_at(vzero_rules::Square(sq as u8)) {
            let info = &pieces[p.kind.index()];
            if !info.royal {
                sum[p.color.index()] += info.value;
            }
        }
    }
    for &pt in v.hand_types() {
        for c in [us, us.flip()] {
            sum[c.index()] += pos.hand_count(c, pt) as f32 * pieces[pt.index()].value;
        }
    }
    sum[us.index()] - sum[us.flip().index()]
}

fn uniform(priors: &mut [f32]) {
    let p = 1.0 / priors.len().max(1) as f32;
    priors.iter_mut().for_each(|x| *x = p);
}

/// Uniform priors and value `tanh(material difference / scale)` for the side to move.
/// Deterministic; usable before any network exists.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaterialEvaluator {
    /// Material difference (in pawns) that gives a value of tanh(1) ≈ 0.76. Large enough that
    /// being a rook or two up does not saturate the value: a mate (1.0) must still stand out.
    pub scale: f32,
}

impl Default for MaterialEvaluator {
    fn default() -> Self {
        MaterialEvaluator { scale: 10.0 }
    }
}

impl MaterialEvaluator {
    /// Evaluates a leaf: fills `priors` (uniform over `moves`) and returns the value.
    pub fn evaluate(&self, state: &VariantGame, _moves: &[Move], priors: &mut [f32]) -> LeafValue {
        uniform(priors);
        LeafValue::scalar((material_balance(&state.pos) / self.scale.max(1e-3)).tanh())
    }
}

/// [`MaterialEvaluator::evaluate`] with the default scale, in the shape [`crate::Search::run`] takes.
pub fn material_evaluator(state: &VariantGame, moves: &[Move], priors: &mut [f32]) -> LeafValue {
    MaterialEvaluator::default().evaluate(state, moves, priors)
}

/// Uniform priors and the value of a short random playout: the game result if the playout ends
/// the game, otherwise the material value where it stops. The playout's moves are drawn from a
/// generator seeded by the leaf's key and `seed`, so the same leaf always gets the same value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RolloutEvaluator {
    /// Most plies played from the leaf.
    pub plies: u32,
    /// Seed mixed with the leaf's key.
    pub seed: u64,
    /// Material scale at the playout's end (see [`MaterialEvaluator`]).
    pub material: MaterialEvaluator,
}

impl Default for RolloutEvaluator {
    fn default() -> Self {
        RolloutEvaluator { plies: 16, seed: 0, material: MaterialEvaluator::default() }
    }
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl RolloutEvaluator {
    /// Evaluates a leaf: fills `priors` (uniform over `moves`) and returns the playout's value
    /// for the leaf's side to move.
    pub fn evaluate(&self, state: &VariantGame, _moves: &[Move], priors: &mut [f32]) -> LeafValue {
        uniform(priors);
        let me = state.to_move();
        let mut g = state.clone();
        let mut rng = state.pos.key() ^ self.seed.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut list = MoveList::new();
        let mut ply = 0;
        loop {
            let r = g.result_with(&mut list);
            let (v, draw) = if r.is_over() {
                (r.value(), if r.outcome == Outcome::Draw { 1.0 } else { 0.0 })
            } else if ply >= self.plies {
                ((material_balance(&g.pos) / self.material.scale.max(1e-3)).tanh(), 0.0)
            } else {
                let n = list.len() as u64;
                let m = list.as_slice()[(((splitmix(&mut rng) >> 32) * n) >> 32) as usize];
                g.play_move(m);
                ply += 1;
                continue;
            };
            let v = if g.to_move() == me { v } else { -v };
            return LeafValue { value: v, draw };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_found_in_short_and_long_lists() {
        for n in [0usize, 1, 5, 32, 33, 200] {
            let distinct: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
            assert!(!has_repeated_key(&distinct, 2), "{n}");
            assert_eq!(has_repeated_key(&distinct, 1), n > 0);
            if n >= 3 {
                let mut twice = distinct.clone();
                twice[n - 1] = twice[n / 2];
                assert!(has_repeated_key(&twice, 2) && !has_repeated_key(&twice, 3), "{n}");
                twice[0] = twice[n / 2];
                assert!(has_repeated_key(&twice, 3), "{n}");
            }
        }
    }
}
