//! Training samples from game records: each game is replayed with `vzero_rules`, and every
//! quiet position becomes a [`Sample`] whose targets are the mover's search value (as a score)
//! and the game's result.
//!
//! Targets (both from the side to move): `score = 410 · logit((v + 1) / 2)` clamped to
//! ±[`DataOptions::max_score`], from the search value `v` ∈ [−1, 1] the self-play search gave
//! the mover at that position (the inverse of the loss's `p = sigmoid(score / 410)`, so the
//! score term teaches exactly the search's expected result); `result` = the game's result
//! (1 win, 0 draw, −1 loss). A game that stopped without a result (`max-plies`) uses the search
//! value as its result target too. The loss mixes them with `lambda` (see [`crate::train`]).
//!
//! Quiet filtering as Fairy-Stockfish's generator does: no position where the side to move is
//! in check; optionally (`skip_captures`) none whose played move captures. Positions where
//! Fairy-Stockfish would not use NNUE (not exactly one king each) are skipped too.

use crate::error::{NnueError, Result};
use crate::features::PositionFeatures;
use crate::train::{value_to_score, Sample};
use crate::variant::FsfMapping;
use vzero_rules::{Color, Position, Square};

/// Which positions of a game become samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataOptions {
    /// Skip positions whose played move captures.
    pub skip_captures: bool,
    /// Skip the first plies of each game (openings repeat across games).
    pub skip_plies: usize,
    /// Largest |score| a search value turns into (internal units).
    pub max_score: f32,
}

impl Default for DataOptions {
    fn default() -> Self {
        DataOptions { skip_captures: false, skip_plies: 0, max_score: 4000.0 }
    }
}

/// What [`game_samples`] kept and skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleCounts {
    /// Samples made.
    pub kept: usize,
    /// Positions in check.
    pub in_check: usize,
    /// Positions whose played move captures (with `skip_captures`).
    pub captures: usize,
    /// Other positions skipped (opening plies, no search value, no NNUE).
    pub other: usize,
}

impl SampleCounts {
    /// Adds another game's counts.
    pub fn add(&mut self, o: SampleCounts) {
        self.kept += o.kept;
        self.in_check += o.in_check;
        self.captures += o.captures;
        self.other += o.other;
    }
}

fn board_count(pos: &Position, squares: usize) -> usize {
    (0..squares).filter(|&s| pos.piece_at(Square(s as u8)).is_some()).count()
}

/// The game's result for White: `"1-0"` 1, `"0-1"` −1, `"1/2-1/2"` 0, else `None`; `None` too
/// when the game stopped without a result (`reason` `max-plies`).
pub fn white_result(result: &str, reason: &str) -> Option<f32> {
    if reason == "max-plies" {
        return None;
    }
    match result {
        "1-0" => Some(1.0),
        "0-1" => Some(-1.0),
        "1/2-1/2" => Some(0.0),
        _ => None,
    }
}

/// Replays one game (`start_fen`, UCI `moves`, `values[i]` = the search value for the mover
/// before move `i`) and appends its samples to `out`. `white_result` from [`white_result`].
#[allow(clippy::too_many_arguments)]
pub fn game_samples(
    mapping: &FsfMapping,
    game: &str,
    start_fen: &str,
    moves: &[String],
    white_result: Option<f32>,
    values: &[f32],
    opts: &DataOptions,
    out: &mut Vec<Sample>,
) -> Result<SampleCounts> {
    let bad = |reason: String| NnueError::Game { game: game.to_string(), reason };
    let mut pos = Position::from_fen(mapping.variant(), start_fen).map_err(|e| bad(format!("start FEN: {e}")))?;
    let mut counts = SampleCounts::default();
    let mut f = PositionFeatures::default();
    let squares = mapping.squares();
    for (ply, mv) in moves.iter().enumerate() {
        let before = board_count(&pos, squares);
        let here = pos;
        pos.play_uci(mv).map_err(|e| bad(format!("move {} ({mv}): {e}", ply + 1)))?;
        let capture = board_count(&pos, squares) < before;
        if ply < opts.skip_plies {
            counts.other += 1;
        } else if here.is_check() {
            counts.in_check += 1;
        } else if opts.skip_captures && capture {
            counts.captures += 1;
        } else if let (Some(&v), true) = (values.get(ply).filter(|v| v.is_finite()), mapping.features_into(&here, &mut f).is_ok()) {
            let v = v.clamp(-1.0, 1.0);
            let sign = if here.side_to_move() == Color::White { 1.0 } else { -1.0 };
            let result = white_result.map_or(v, |r| r * sign);
            out.push(Sample::new(&f, value_to_score(v, opts.max_score), result));
            counts.kept += 1;
        } else {
            counts.other += 1;
        }
    }
    Ok(counts)
}

/// A teacher's score as a UCI engine prints it, from the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UciScore {
    /// `score cp N`: Fairy-Stockfish's centipawns, internal units × 100 / 208.
    Cp(i32),
    /// `score mate N` (negative: the side to move is mated).
    Mate(i32),
}

/// Fairy-Stockfish's endgame pawn in internal units (`PawnValueEg`): its UCI `cp` is
/// `internal * 100 / PAWN_VALUE_EG`.
pub const PAWN_VALUE_EG: f32 = 208.0;

/// A UCI score in internal units, clamped to ±`max` (mates are ±`max`).
pub fn uci_score_to_internal(s: UciScore, max: f32) -> f32 {
    match s {
        UciScore::Cp(c) => (c as f32 * PAWN_VALUE_EG / 100.0).clamp(-max, max),
        UciScore::Mate(m) if m > 0 => max,
        UciScore::Mate(_) => -max,
    }
}

/// One position a teacher scored (`pos`, reached in the source game `what`; `best` is the
/// teacher's move; `white_result` the source game's result for White, when known) as a sample
/// appended to `out`: score target = the teacher's score in internal units, result target =
/// the game's result from the side to move, or the score's own expectation when there is no
/// result. Skipped (and counted) as [`game_samples`] skips: in check, `best` captures (with
/// `skip_captures`), no NNUE. The caller replays the game (see [`ScoredReplay`]).
#[allow(clippy::too_many_arguments)]
pub fn scored_sample(
    mapping: &FsfMapping,
    what: &str,
    pos: &Position,
    score: UciScore,
    best: &str,
    white_result: Option<f32>,
    opts: &DataOptions,
    out: &mut Vec<Sample>,
) -> Result<SampleCounts> {
    let bad = |reason: String| NnueError::Game { game: what.to_string(), reason };
    let mut counts = SampleCounts::default();
    if pos.is_check() {
        counts.in_check += 1;
        return Ok(counts);
    }
    if opts.skip_captures {
        let before = board_count(pos, mapping.squares());
        let mut after = *pos;
        after.play_uci(best).map_err(|e| bad(format!("best move ({best}): {e}")))?;
        if board_count(&after, mapping.squares()) < before {
            counts.captures += 1;
            return Ok(counts);
        }
    }
    let mut f = PositionFeatures::default();
    if mapping.features_into(pos, &mut f).is_err() {
        counts.other += 1;
        return Ok(counts);
    }
    let s = uci_score_to_internal(score, opts.max_score);
    let sign = if pos.side_to_move() == Color::White { 1.0 } else { -1.0 };
    let result = match white_result {
        Some(r) => r * sign,
        None => 2.0 / (1.0 + (-s / crate::train::OUT_SCALING).exp()) - 1.0,
    };
    out.push(Sample::new(&f, s, result));
    counts.kept += 1;
    Ok(counts)
}

/// Replays the positions of scored records one after another: a record that shares moves with
/// the previous record (the same game, later; or a multi-PV line off its path) goes back to the
/// longest shared prefix and plays only the rest, so a game of n scored plies costs n moves
/// instead of n²/2, its side lines one move each.
#[derive(Default)]
pub struct ScoredReplay {
    start_fen: String,
    moves: Vec<String>,
    /// The start position and the position after each of `moves` (empty: nothing replayed yet).
    line: Vec<Position>,
}

impl ScoredReplay {
    /// The position after `moves` from `start_fen` (`what` names the record in errors).
    pub fn position(&mut self, mapping: &FsfMapping, what: &str, start_fen: &str, moves: &[String]) -> Result<&Position> {
        let bad = |reason: String| NnueError::Game { game: what.to_string(), reason };
        if self.line.is_empty() || self.start_fen != start_fen {
            self.line.clear();
            self.moves.clear();
            self.start_fen.clear();
            self.start_fen.push_str(start_fen);
            self.line.push(Position::from_fen(mapping.variant(), start_fen).map_err(|e| bad(format!("start FEN: {e}")))?);
        }
        let shared = self.moves.iter().zip(moves).take_while(|(a, b)| a == b).count();
        self.moves.truncate(shared);
        self.line.truncate(shared + 1);
        for (i, mv) in moves.iter().enumerate().skip(shared) {
            let mut next = *self.line.last().expect("never empty here");
            if let Err(e) = next.play_uci(mv) {
                // forget the start: the next record replays from its own
                self.line.clear();
                self.moves.clear();
                return Err(bad(format!("move {} ({mv}): {e}", i + 1)));
            }
            self.line.push(next);
            self.moves.push(mv.clone());
        }
        Ok(self.line.last().expect("never empty here"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Incremental replay gives the positions a replay from the start gives, across games and
    /// after a bad record.
    #[test]
    fn scored_replay_equals_replay_from_the_start() {
        let m = FsfMapping::for_variant(vzero_rules::Variant::builtin("empire").unwrap()).unwrap();
        let start = m.variant().start_fen().to_string();
        let line: Vec<String> = ["a3a4", "a7a6", "h3h4", "h7h6", "b3b4"].iter().map(|s| s.to_string()).collect();
        let other: Vec<String> = ["h3h4", "h7h6"].iter().map(|s| s.to_string()).collect();
        let records: Vec<(String, Vec<String>)> = vec![
            (start.clone(), line[..1].to_vec()),
            (start.clone(), line[..3].to_vec()),
            // a side line (a multi-PV line off the game's path), then the game again
            (start.clone(), vec![line[0].clone(), line[1].clone(), "b3b4".into()]),
            (start.clone(), line[..2].to_vec()),
            (start.clone(), line[..5].to_vec()),
            (start.clone(), other.clone()), // a new game
            (start.clone(), vec!["zz".into()]), // bad
            (start.clone(), other[..1].to_vec()), // shorter: replayed afresh
            (start.clone(), line.clone()),
        ];
        let mut r = ScoredReplay::default();
        for (fen, moves) in &records {
            let mut want = Position::from_fen(m.variant(), fen).unwrap();
            let ok = moves.iter().all(|mv| want.play_uci(mv).is_ok());
            match r.position(&m, "t", fen, moves) {
                Ok(p) => {
                    assert!(ok);
                    assert_eq!(p.fen(), want.fen(), "{moves:?}");
                }
                Err(e) => {
                    assert!(!ok);
                    assert!(e.to_string().contains("zz"), "{e}");
                }
            }
        }
    }

    /// Plies without a search value (a self-play game's random opening: NaN) make no sample.
    #[test]
    fn plies_without_a_search_value_make_no_sample() {
        let m = FsfMapping::for_variant(vzero_rules::Variant::builtin("empire").unwrap()).unwrap();
        let start = m.variant().start_fen().to_string();
        let moves: Vec<String> = ["a3a4", "a7a6", "h3h4", "h7h6"].iter().map(|s| s.to_string()).collect();
        let values = [f32::NAN, f32::NAN, 0.1, -0.2];
        let mut out = Vec::new();
        let c = game_samples(&m, "g", &start, &moves, None, &values, &DataOptions::default(), &mut out).unwrap();
        assert_eq!((c.kept, c.other, out.len()), (2, 2, 2));
        assert!(out.iter().all(|s| s.score.is_finite() && s.result.is_finite()));
    }
}
