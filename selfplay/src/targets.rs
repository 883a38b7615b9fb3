//! The training targets that need the whole game: filled in when a game ends, from its rows in
//! order (result, moves left, opponent-reply policy, short-term values).

use vzero_data::Row;
use vzero_rules::Color;


/// A searched position of a game in progress. `row` has everything known at the time of the
/// search (planes, policy, search value, ply, material...); the rest waits for the game's end.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRow {
    /// The row so far.
    pub row: Row,
    /// Side to move at this position.
    pub side: Color,
    /// The search's own W/D/L at this position (side to move), the value target of a game that
    /// has no result.
    pub search_wdl: [f32; 3],
    /// Move index of the move played from this position.
    pub played: u32,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameEnd {
    /// A result: the winner, None for a draw.
    Result(Option<Color>),
    /// Stopped at `max_plies` without a result.
    Truncated,
}

/// What a game stopped at `max_plies` teaches (`[selfplay] cap_outcome`): it has no result of
/// its own, and in variants whose games often run long (spqr: ~350 plies, 72% drawn) a flat
/// draw teaches the value head "draw" everywhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapOutcome {
    /// Each row keeps its own search's W/D/L as its value target (no result is invented).
    #[default]
    Search,
    /// Adjudicated by the quiescent material balance of the last position: the side ahead by at
    /// least `cap_material_margin` pawns wins, otherwise a draw; the rows learn that result.
    Material,
    /// A plain draw.
    Draw,
}

/// The end of a game stopped at `max_plies` in `pos` under `outcome`: how its rows are scored,
/// the winner written in its record, and the reason (`max-plies`, `max-plies-material`,
/// `max-plies-draw`). Under `material`, `advance_pawns` pawns per rank are added to the side to
/// move's balance for each rank its royal piece is nearer its campmate ranks than the
/// opponent's ([`king_advance`]; nothing in variants without campmate).
pub fn capped_end(outcome: CapOutcome, margin: f32, advance_pawns: f32, pos: &vzero_rules::Position) -> (GameEnd, Option<Color>, &'static str) {
    match outcome {
        CapOutcome::Search => (GameEnd::Truncated, None, "max-plies"),
        CapOutcome::Draw => (GameEnd::Result(None), None, "max-plies-draw"),
        CapOutcome::Material => {
            let us = pos.side_to_move();
            let mut balance = vzero_mcts::Quiescence::default().balance(pos);
            if advance_pawns != 0.0 {
                balance += advance_pawns * king_advance(pos, us);
            }
            let winner = if balance >= margin {
                Some(us)
            } else if balance <= -margin {
                Some(us.flip())
            } else {
                None
            };
            (GameEnd::Result(winner), winner, "max-plies-material")
        }
    }
}

/// Ranks by which `side`'s royal piece is nearer its campmate ranks than the opponent's is to
/// theirs (0 in a variant without campmate, or when either side has no royal piece).
pub fn king_advance(pos: &vzero_rules::Position, side: Color) -> f32 {
    match (pos.flag_distance(side), pos.flag_distance(side.flip())) {
        (Some(ours), Some(theirs)) => theirs as f32 - ours as f32,
        _ => 0.0,
    }
}

/// W/D/L target for `side` given the winner.
fn wdl_for(side: Color, winner: Option<Color>) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// +1 for White, -1 for Black: values are averaged in White's frame and turned back into each
/// row's own side afterwards (sides come from the rows, never from the ply's parity).
fn sign(side: Color) -> f32 {
    match side {
        Color::White => 1.0,
        Color::Black => -1.0,
    }
}

/// The finished rows of a game of `plies` plies, in order, with their end-of-game targets:
///
/// * `wdl`: the result for the row's side to move; for a truncated game, the search's own W/D/L;
/// * `moves_left`: plies from the row to the end;
/// * opponent policy: the next row's search policy when that was a full search, else one-hot on
///   the move played there; none (weight 0) at the last row;
/// * short-term values, one per horizon `h` of `horizons`: `(1 - λ) Σ λ^(t'-t) v_t'` over this
///   and the following rows (each search value seen from this row's side), `λ = 1 - 1/h`, with
///   the remaining weight `λ^(T-t)` on the final result (a truncated game: on the last row's
///   search value) — see `data/README.md`.
pub fn finish_game(rows: Vec<GameRow>, end: GameEnd, plies: u32, horizons: &[u32]) -> Vec<Row> {
    let n = rows.len();
    // Final value in White's frame.
    let terminal = match end {
        GameEnd::Result(winner) => winner.map_or(0.0, sign),
        GameEnd::Truncated => rows.last().map_or(0.0, |r| sign(r.side) * r.row.search_value),
    };
    // short_term[t * k + j]: horizon j at row t, White's frame (backwards recursion).
    let k = horizons.len();
    let mut short_term = vec![0f32; n * k];
    for (j, &h) in horizons.iter().enumerate() {
        let f = 1.0 / h.max(1) as f64;
        let mut acc = terminal as f64;
        for t in (0..n).rev() {
            let v = (sign(rows[t].side) * rows[t].row.search_value) as f64;
            acc = f * v + (1.0 - f) * acc;
            short_term[t * k + j] = acc as f32;
        }
    }
    let opponent: Vec<(Vec<(u32, f32)>, f32)> = (0..n)
        .map(|t| match rows.get(t + 1) {
            Some(next) if next.row.policy_weight > 0.0 && !next.row.policy.is_empty() => (next.row.policy.clone(), 1.0),
            Some(next) => (vec![(next.played, 1.0)], 1.0),
            None => (Vec::new(), 0.0),
        })
        .collect();
    rows.into_iter()
        .zip(opponent)
        .enumerate()
        .map(|(t, (g, (opponent_policy, opponent_weight)))| {
            let s = sign(g.side);
            Row {
                wdl: match end {
                    GameEnd::Result(winner) => wdl_for(g.side, winner),
                    GameEnd::Truncated => g.search_wdl,
                },
                moves_left: plies as f32 - g.row.ply as f32,
                opponent_policy,
                opponent_weight,
                short_term: short_term[t * k..(t + 1) * k].iter().map(|&v| s * v).collect(),
                short_term_weight: 1.0,
                ..g.row
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Color::{Black, White};

    fn row(side: Color, ply: u32, value: f32, full: bool, played: u32) -> GameRow {
        GameRow {
            row: Row {
                planes: vec![ply as f32],
                policy: if full { vec![(100 + ply, 0.75), (200 + ply, 0.25)] } else { vec![] },
                search_value: value,
                ply,
                weight: 1.0,
                policy_weight: if full { 1.0 } else { 0.0 },
                material: 0.5,
                material_weight: 1.0,
                ..Row::default()
            },
            side,
            search_wdl: [0.5 + value / 2.0, 0.0, 0.5 - value / 2.0],
            played,
        }
    }

    /// A game where Black moves twice in a row (plies 1 and 2): sides come from the rows.
    fn game() -> Vec<GameRow> {
        vec![
            row(White, 0, 0.2, true, 10),
            row(Black, 1, -0.1, false, 11),
            row(Black, 2, 0.4, true, 12),
            row(White, 3, -0.6, false, 13),
        ]
    }

    #[test]
    fn a_capped_game_is_scored_as_the_configuration_says() {
        let v = vzero_rules::Variant::builtin("empire").unwrap();
        // White (to move) a rook up, nothing hanging
        let up = vzero_rules::Position::from_fen(v, "4k3/8/8/8/8/8/8/T3K3 w - - 0 1").unwrap();
        let level = vzero_rules::Position::from_fen(v, "4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.0, &up), (GameEnd::Result(Some(White)), Some(White), "max-plies-material"));
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.0, &level), (GameEnd::Result(None), None, "max-plies-material"));
        // the same seen with Black to move: White still wins
        let up_b = vzero_rules::Position::from_fen(v, "4k3/8/8/8/8/8/8/T3K3 b - - 0 1").unwrap();
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.0, &up_b).1, Some(White));
        assert_eq!(capped_end(CapOutcome::Search, 3.0, 0.0, &up).0, GameEnd::Truncated);
        assert_eq!(capped_end(CapOutcome::Draw, 3.0, 0.0, &up).0, GameEnd::Result(None));
        // the rows: a material adjudication is a win for White's rows, never a plain draw, and
        // the default keeps each row's own search
        let rows = || vec![row(White, 0, 0.1, true, 1), row(Black, 1, -0.2, true, 2)];
        let won = finish_game(rows(), capped_end(CapOutcome::Material, 3.0, 0.0, &up).0, 2, &[2]);
        assert_eq!((won[0].wdl, won[1].wdl), ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]));
        let kept = finish_game(rows(), capped_end(CapOutcome::Search, 3.0, 0.0, &up).0, 2, &[2]);
        assert_eq!(kept[0].wdl, rows()[0].search_wdl);
        assert_ne!(kept[0].wdl, [0.0, 1.0, 0.0]);
    }

    #[test]
    fn a_king_walk_toward_the_campmate_ranks_counts_at_the_cap_when_asked() {
        let spqr = vzero_rules::Variant::builtin("spqr").unwrap();
        // Material level; White's king on f8 is 4 ranks from rank 12, Black's on f12 is 11 from rank 1.
        let walk = vzero_rules::Position::from_fen(spqr, "5k6/12/12/12/5K6/12/12/12/12/12/12/12 w - - 0 1").unwrap();
        assert_eq!((walk.flag_distance(White), walk.flag_distance(Black)), (Some(4), Some(11)));
        assert_eq!(king_advance(&walk, White), 7.0);
        assert_eq!(king_advance(&walk, Black), -7.0);
        // Off (the default): material alone, a draw; half a pawn a rank: 3.5 pawns, White wins,
        // whoever is to move.
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.0, &walk).1, None);
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.5, &walk), (GameEnd::Result(Some(White)), Some(White), "max-plies-material"));
        let walk_b = vzero_rules::Position::from_fen(spqr, "5k6/12/12/12/5K6/12/12/12/12/12/12/12 b - - 0 1").unwrap();
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.5, &walk_b).1, Some(White));
        // Not enough: 7 ranks at 0.4 pawns is 2.8 < 3.
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 0.4, &walk).1, None);
        // A variant without campmate has no such term.
        let shogun = vzero_rules::Variant::builtin("shogun").unwrap();
        let level = vzero_rules::Position::from_fen(shogun, "8/4k3/8/8/4K3/8/8/8[] w - - 0 1").unwrap();
        assert_eq!(level.flag_distance(White), None);
        assert_eq!(capped_end(CapOutcome::Material, 3.0, 10.0, &level).1, None);
    }

    #[test]
    fn targets_of_a_won_game_match_a_hand_computation() {
        let rows = finish_game(game(), GameEnd::Result(Some(Black)), 4, &[1, 2, 4]);
        assert_eq!(rows.len(), 4);
        // Results and moves left.
        let wdl: Vec<[f32; 3]> = rows.iter().map(|r| r.wdl).collect();
        assert_eq!(wdl, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(rows.iter().map(|r| r.moves_left).collect::<Vec<_>>(), [4.0, 3.0, 2.0, 1.0]);
        // Opponent policy: the next row's policy if full, else its played move; none at the end.
        assert_eq!(rows[0].opponent_policy, vec![(11, 1.0)]);
        assert_eq!(rows[1].opponent_policy, vec![(102, 0.75), (202, 0.25)]);
        assert_eq!(rows[2].opponent_policy, vec![(13, 1.0)]);
        assert!(rows[3].opponent_policy.is_empty());
        assert_eq!(rows.iter().map(|r| r.opponent_weight).collect::<Vec<_>>(), [1.0, 1.0, 1.0, 0.0]);
        // Short-term values by hand. Values in White's frame: 0.2, +0.1, -0.4, -0.6; the final
        // result (Black wins) is -1 for White.
        let white = [0.2f64, 0.1, -0.4, -0.6];
        let hand = |t: usize, h: f64| {
            let l = 1.0 - 1.0 / h;
            let mut s = 0.0;
            for (u, v) in white.iter().enumerate().skip(t) {
                s += (1.0 - l) * l.powi((u - t) as i32) * v;
            }
            s + l.powi((4 - t) as i32) * -1.0
        };
        let side = [1.0, -1.0, -1.0, 1.0];
        for t in 0..4 {
            for (j, h) in [1.0, 2.0, 4.0].into_iter().enumerate() {
                let want = side[t] * hand(t, h);
                assert!((rows[t].short_term[j] as f64 - want).abs() < 1e-6, "row {t} horizon {h}: {} vs {want}", rows[t].short_term[j]);
            }
            assert_eq!(rows[t].short_term_weight, 1.0);
        }
        // Horizon 1 is the row's own search value.
        assert_eq!(rows.iter().map(|r| r.short_term[0]).collect::<Vec<_>>(), [0.2, -0.1, 0.4, -0.6]);
        // Explicit check of one entry: row 1 (Black), horizon 2: 0.5*(-0.1) + 0.25*0.4
        // + 0.125*(0.6) + 0.125*(+1).
        assert!((rows[1].short_term[1] - (-0.05 + 0.1 + 0.075 + 0.125)).abs() < 1e-6);
        // Everything known at search time is kept.
        assert!(rows.iter().all(|r| r.material == 0.5 && r.material_weight == 1.0));
        assert_eq!(rows[2].policy, vec![(102, 0.75), (202, 0.25)]);
    }

    #[test]
    fn truncated_and_drawn_games_use_the_search_and_zero() {
        let rows = finish_game(game(), GameEnd::Truncated, 4, &[2]);
        // The value targets are each row's own search W/D/L.
        assert_eq!(rows[1].wdl, [0.45, 0.0, 0.55]);
        // The remaining weight goes to the last row's value (-0.6 for White = +0.6 for Black).
        let last = &rows[3];
        assert!((last.short_term[0] - (0.5 * -0.6 + 0.5 * -0.6)).abs() < 1e-6);
        assert!((rows[2].short_term[0] - (0.5 * 0.4 + 0.25 * 0.6 + 0.25 * 0.6)).abs() < 1e-6);
        let drawn = finish_game(game(), GameEnd::Result(None), 4, &[2]);
        assert_eq!(drawn[0].wdl, [0.0, 1.0, 0.0]);
        assert!((drawn[3].short_term[0] - 0.5 * -0.6).abs() < 1e-6);
        // No horizons: no short-term values; an empty game: no rows.
        assert!(finish_game(game(), GameEnd::Truncated, 4, &[]).iter().all(|r| r.short_term.is_empty()));
        assert!(finish_game(Vec::new(), GameEnd::Result(None), 0, &[6]).is_empty());
    }
}
