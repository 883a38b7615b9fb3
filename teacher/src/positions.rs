//! Positions to label: from games (PGN files, run directories) or by random play.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use vzero_data::GameRecord;
use vzero_openings::{for_each_game, replay, Input, RawGame, Skipped};
use vzero_rules::{Game, Move, Position, Variant};

/// Where positions come from.
#[derive(Clone, Debug, PartialEq)]
pub enum PositionSource {
    /// Every position before a move of the games of these inputs: PGN files, or run
    /// directories (the game records of their self-play chunks).
    Games(Vec<PathBuf>),
    /// Random play from the variant's start position: each position after a number of
    /// uniformly random legal moves drawn uniformly from `0..=plies`.
    Random { plies: u32 },
}

impl PositionSource {
    /// A one-line description (part of a labelling job's identity).
    pub fn describe(&self) -> String {
        match self {
            PositionSource::Games(files) => {
                format!("games:{}", files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(","))
            }
            PositionSource::Random { plies } => format!("random:{plies}"),
        }
    }
}

/// A position to label: the game that leads to it (its history gives the repetition count)
/// and, for positions from a finished game, the plies that game still had to go and its result.
#[derive(Clone, Debug)]
pub struct LabelPosition {
    pub game: Game,
    pub moves_left: Option<u32>,
    /// The source game's result for White (1, 0, -1), when the position comes from one.
    pub white_result: Option<f32>,
}

/// Up to `n` distinct positions (all of them when `n` is None; by position key) from
/// `source`, in an order fixed by `seed` (the same arguments give the same list, which is what
/// makes a labelling job resumable), with the games that were skipped (`file:line: why`).
/// Positions where the game is over are never returned.
pub fn collect_positions(variant: Variant, source: &PositionSource, n: Option<usize>, seed: u64) -> Result<(Vec<LabelPosition>, Vec<Skipped>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    match source {
        PositionSource::Games(files) => {
            let mut games: Vec<(Position, Vec<Move>, f32)> = Vec::new();
            let mut skipped = Vec::new();
            let inputs: Vec<Input> = files.iter().map(|f| Input::detect(f)).collect();
            for f in files {
                if !f.exists() {
                    bail!("{}: no such file or run directory", f.display());
                }
            }
            for_each_game(&inputs, |raw| {
                match raw.and_then(|r| replay(r, variant)) {
                    Ok(g) => games.push((g.start, g.moves, (2.0 * g.white_score - 1.0) as f32)),
                    Err(s) => skipped.push(s),
                }
                true
            })?;
            Ok((positions_of_games(&games, n, &mut rng), skipped))
        }
        PositionSource::Random { plies } => {
            let Some(n) = n else { bail!("random positions need a count (--positions N)") };
            let mut seen = HashSet::new();
            let mut out = Vec::with_capacity(n);
            let mut attempts = 0usize;
            while out.len() < n {
                attempts += 1;
                if attempts > 50 * n + 1000 {
                    bail!("found only {} distinct positions within {plies} random plies of the start ({n} asked)", out.len());
                }
                let k = rng.gen_range(0..=*plies);
                let mut game = Game::startpos(variant);
                for _ in 0..k {
                    let moves = game.position().legal_moves();
                    let Some(&m) = moves.choose(&mut rng) else { break };
                    game.play(m);
                    if game.result().is_over() {
                        break;
                    }
                }
                if game.result().is_over() || !seen.insert(game.position().key()) {
                    continue;
                }
                out.push(LabelPosition { game, moves_left: None, white_result: None });
            }
            Ok((out, Vec::new()))
        }
    }
}

/// Up to `n` distinct positions (by key; in an order fixed by `seed`) before the moves of
/// self-play game records (a chunk's games: [`vzero_data::Chunk::games`]), with the games that
/// could not be replayed. What `vzero train`'s teacher workers label: positions of the run's
/// newest games.
pub fn positions_from_records(variant: Variant, records: Vec<GameRecord>, n: usize, seed: u64) -> (Vec<LabelPosition>, Vec<Skipped>) {
    let mut games = Vec::new();
    let mut skipped = Vec::new();
    for (i, g) in records.into_iter().enumerate() {
        match replay(RawGame::from_record(format!("game {i}"), g), variant) {
            Ok(g) => games.push((g.start, g.moves, (2.0 * g.white_score - 1.0) as f32)),
            Err(s) => skipped.push(s),
        }
    }
    (positions_of_games(&games, Some(n), &mut StdRng::seed_from_u64(seed)), skipped)
}

/// Up to `n` distinct positions before the moves of `games` (start, moves, White's result),
/// shuffled by `rng`, each with its plies to the end and the game's result.
fn positions_of_games(games: &[(Position, Vec<Move>, f32)], n: Option<usize>, rng: &mut StdRng) -> Vec<LabelPosition> {
    // (game, ply) of every position before a move, distinct by key
    let mut seen = HashSet::new();
    let mut spots = Vec::new();
    for (gi, (start, moves, _)) in games.iter().enumerate() {
        let mut pos = *start;
        for (ply, &m) in moves.iter().enumerate() {
            if seen.insert(pos.key()) {
                spots.push((gi, ply));
            }
            pos.play(m);
        }
    }
    spots.shuffle(rng);
    spots.truncate(n.unwrap_or(usize::MAX));
    spots
        .into_iter()
        .map(|(gi, ply)| {
            let (start, moves, result) = &games[gi];
            let mut game = Game::new(*start);
            for &m in &moves[..ply] {
                game.play(m);
            }
            LabelPosition { game, moves_left: Some((moves.len() - ply) as u32), white_result: Some(*result) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_positions_are_distinct_live_and_reproducible() {
        let v = Variant::load("empire").unwrap();
        let (a, _) = collect_positions(v, &PositionSource::Random { plies: 12 }, Some(40), 7).unwrap();
        let (b, _) = collect_positions(v, &PositionSource::Random { plies: 12 }, Some(40), 7).unwrap();
        assert_eq!(a.len(), 40);
        let keys: HashSet<u64> = a.iter().map(|p| p.game.position().key()).collect();
        assert_eq!(keys.len(), 40);
        assert!(a.iter().all(|p| !p.game.result().is_over() && p.game.moves().len() <= 12));
        let fa: Vec<String> = a.iter().map(|p| p.game.position().fen()).collect();
        let fb: Vec<String> = b.iter().map(|p| p.game.position().fen()).collect();
        assert_eq!(fa, fb);
    }

    #[test]
    fn game_positions_come_with_moves_left_and_skips() {
        let dir = tempfile::tempdir().unwrap();
        let pgn = dir.path().join("g.pgn");
        std::fs::write(
            &pgn,
            "[Variant \"empire\"]\n[Result \"1-0\"]\n\n1. a3a4 a7a6 2. h3h4 1-0\n\n[Variant \"empire\"]\n[Result \"0-1\"]\n\n1. a3a4 zz99 0-1\n",
        )
        .unwrap();
        let v = Variant::load("empire").unwrap();
        let (p, skipped) = collect_positions(v, &PositionSource::Games(vec![pgn]), None, 1).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].to_string().contains("g.pgn:"), "{}", skipped[0]);
        let mut left: Vec<u32> = p.iter().map(|x| x.moves_left.unwrap()).collect();
        left.sort();
        assert_eq!(left, vec![1, 2, 3]);
    }
}
