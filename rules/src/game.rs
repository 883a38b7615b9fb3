//! [`Game`]: a position with its history, and the game result with Fairy-Stockfish's precedence
//! (campmate, then the n-move rule, then repetition, then checkmate or stalemate).

use crate::error::Result;
use crate::position::Position;
use crate::types::Move;
use crate::variant::{Value, Variant};
use std::fmt;

/// The game's state from the side to move's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Outcome {
    /// Not over.
    Ongoing,
    /// The side to move has won.
    Win,
    /// The side to move has lost.
    Loss,
    /// Drawn.
    Draw,
}

/// Why the game ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Reason {
    /// Not over.
    None,
    /// No legal move while in check.
    Checkmate,
    /// No legal move while not in check.
    Stalemate,
    /// The opponent's royal piece reached its flag region.
    Campmate,
    /// The position occurred the n-th time.
    Repetition,
    /// The n-move rule.
    FiftyMove,
}

/// Outcome and reason.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct GameResult {
    /// For the side to move.
    pub outcome: Outcome,
    /// Why.
    pub reason: Reason,
}

impl GameResult {
    const ONGOING: GameResult = GameResult { outcome: Outcome::Ongoing, reason: Reason::None };

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome != Outcome::Ongoing
    }

    /// Value for the side to move: 1 win, 0 draw, -1 loss (0 while ongoing).
    pub fn value(&self) -> f32 {
        match self.outcome {
            Outcome::Win => 1.0,
            Outcome::Loss => -1.0,
            _ => 0.0,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Ongoing => "ongoing",
            Outcome::Win => "win",
            Outcome::Loss => "loss",
            Outcome::Draw => "draw",
        })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::None => "none",
            Reason::Checkmate => "checkmate",
            Reason::Stalemate => "stalemate",
            Reason::Campmate => "campmate",
            Reason::Repetition => "repetition",
            Reason::FiftyMove => "fifty-move",
        })
    }
}

impl fmt::Display for GameResult {
    /// `<ongoing|win|loss|draw> <reason>`, the format of `vzero result`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.outcome, self.reason)
    }
}

fn outcome_of(v: Value) -> Outcome {
    match v {
        Value::Win => Outcome::Win,
        Value::Draw => Outcome::Draw,
        Value::Loss => Outcome::Loss,
    }
}

/// A game: the positions played through, for repetition, undo and records.
#[derive(Clone, Debug)]
pub struct Game {
    positions: Vec<Position>,
    moves: Vec<Move>,
    /// Index into `positions` of the last position after an irreversible move.
    last_reset: Vec<usize>,
}

impl Game {
    /// A game starting at `pos`.
    pub fn new(pos: Position) -> Game {
        Game { positions: vec![pos], moves: Vec::new(), last_reset: vec![0] }
    }

    /// A game from the variant's start position.
    pub fn startpos(variant: Variant) -> Game {
        Game::new(Position::startpos(variant))
    }

    /// A game from a FEN.
    pub fn from_fen(variant: Variant, fen: &str) -> Result<Game> {
        Ok(Game::new(Position::from_fen(variant, fen)?))
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions.last().expect("never empty")
    }

    /// The position the game started from.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// Moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Moves played so far in UCI notation (each in the position it was played in).
    pub fn uci_moves(&self) -> Vec<String> {
        self.positions.iter().zip(&self.moves).map(|(p, &m)| p.uci(m)).collect()
    }

    /// Plays a legal move.
    pub fn play(&mut self, m: Move) {
        let mut next = *self.position();
        next.play(m);
        let reset = if next.halfmove_clock() == 0 { self.positions.len() } else { *self.last_reset.last().expect("never empty") };
        self.positions.push(next);
        self.moves.push(m);
        self.last_reset.push(reset);
    }

    /// Parses, checks and plays a UCI move. A move the position does not allow, after the
    /// game's end, is [`crate::Error::GameOver`] (naming the result), not an illegal move; a
    /// legal move after a result (a repetition, a move limit) is played, as Fairy-Stockfish does.
    pub fn play_uci(&mut self, text: &str) -> Result<Move> {
        let m = self.position().parse_uci(text).map_err(|e| self.over_or(e, text))?;
        self.play(m);
        Ok(m)
    }

    /// `e`, or [`crate::Error::GameOver`] when the game is over: why a move cannot be played.
    pub fn over_or(&self, e: crate::Error, text: &str) -> crate::Error {
        let r = self.result();
        if r.is_over() {
            crate::Error::GameOver { text: crate::echo(text), result: r.to_string() }
        } else {
            e
        }
    }

    /// The same current position with at most the last `plies` moves of history: a game that
    /// starts at the later of the position `plies` moves back and the last irreversible move
    /// (before which no position can repeat, unless the variant counts repetitions over the
    /// whole game). An engine that replays every move of a `position … moves` command (checking
    /// each against its legal moves) then does constant work per search, not work that grows
    /// with the game; the repetitions a shallow search can see are kept.
    pub fn tail(&self, plies: usize) -> Game {
        let n = self.moves.len();
        let from = n.saturating_sub(plies).max(*self.last_reset.last().expect("never empty"));
        if from == 0 {
            return self.clone();
        }
        let mut g = Game::new(self.positions[from]);
        for &m in &self.moves[from..] {
            g.play(m);
        }
        g
    }

    /// Plays up to `plies` moves, each picked by `pick` from the legal ones (never an empty
    /// list), stopping before a move that would end the game: the random openings of matches
    /// and self-play when `pick` draws at random. True when all `plies` were played.
    pub fn play_opening(&mut self, plies: u32, mut pick: impl FnMut(&[Move]) -> Move) -> bool {
        for _ in 0..plies {
            let moves = self.position().legal_moves();
            if moves.is_empty() {
                return false;
            }
            self.play(pick(&moves));
            if self.result().is_over() {
                self.undo();
                return false;
            }
        }
        true
    }

    /// Takes back the last move, if any.
    pub fn undo(&mut self) -> Option<Move> {
        let m = self.moves.pop()?;
        self.positions.pop();
        self.last_reset.pop();
        Some(m)
    }

    /// How many times the current position occurred before, within the repetition window.
    pub fn repetitions(&self) -> usize {
        let pos = self.position();
        let whole = match pos.variant() {
            Variant::Small(r) => r.repetition_whole_game,
            Variant::Large(r) => r.repetition_whole_game,
        };
        let n = self.positions.len() - 1;
        let first = if whole { 0 } else { *self.last_reset.last().expect("never empty") };
        let key = pos.key();
        self.positions[first..n].iter().filter(|p| p.key() == key).count()
    }

    /// The game state for the side to move.
    pub fn result(&self) -> GameResult {
        let pos = self.position();
        let (nmove, nfold, nfold_value, stalemate) = match pos.variant() {
            Variant::Small(r) => (r.nmove, r.nfold, r.nfold_value, r.stalemate),
            Variant::Large(r) => (r.nmove, r.nfold, r.nfold_value, r.stalemate),
        };
        if pos.flag_reached() {
            return GameResult { outcome: Outcome::Loss, reason: Reason::Campmate };
        }
        let no_moves = pos.legal_moves().is_empty();
        if nmove > 0 && pos.halfmove_clock() >= 2 * nmove && (!pos.is_check() || !no_moves) {
            return GameResult { outcome: Outcome::Draw, reason: Reason::FiftyMove };
        }
        if nfold > 1 && self.repetitions() + 1 >= nfold as usize {
            return GameResult { outcome: outcome_of(nfold_value), reason: Reason::Repetition };
        }
        if no_moves {
            if pos.is_check() {
                return GameResult { outcome: Outcome::Loss, reason: Reason::Checkmate };
            }
            return GameResult { outcome: outcome_of(stalemate), reason: Reason::Stalemate };
        }
        GameResult::ONGOING
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// `Game::tail` keeps the current position, at most the asked history, and every repetition
    /// the full game sees (for variants that count repetitions since the last irreversible move).
    #[test]
    fn a_games_tail_keeps_its_position_and_repetitions() {
        let mut shortened = 0;
        for name in crate::variant::builtin_names() {
            let v = Variant::builtin(name).unwrap();
            let whole = match v {
                Variant::Small(r) => r.repetition_whole_game,
                Variant::Large(r) => r.repetition_whole_game,
            };
            let mut rng = StdRng::seed_from_u64(7);
            for _ in 0..20 {
                let mut game = Game::startpos(v);
                for _ in 0..160 {
                    if game.result().is_over() {
                        break;
                    }
                    let moves = game.position().legal_moves();
                    game.play(moves[rng.gen_range(0..moves.len())]);
                    for k in [0usize, 1, 8, 1000] {
                        let t = game.tail(k);
                        assert_eq!(t.position().fen(), game.position().fen(), "{name}: tail({k}) keeps the position");
                        assert_eq!(t.position().key(), game.position().key());
                        assert!(t.moves().len() <= k.min(game.moves().len()), "{name}: tail({k}) has {} moves", t.moves().len());
                        // the tail's moves are the game's last moves, replayed from its start
                        let n = t.moves().len();
                        assert_eq!(t.uci_moves(), game.uci_moves()[game.moves().len() - n..].to_vec());
                        if k >= 1000 && !whole {
                            assert_eq!(t.repetitions(), game.repetitions(), "{name}: a long tail sees every repetition");
                            assert_eq!(t.result().is_over(), game.result().is_over());
                        }
                        shortened += usize::from(n < game.moves().len());
                    }
                }
            }
        }
        assert!(shortened > 1000, "tails shorter than their games were checked ({shortened})");
    }

    /// An opening picked at random is legal, replays from the start by its UCI text and is as
    /// long as asked; a pick that would end the game is taken back and reported.
    #[test]
    fn an_opening_stops_before_a_move_that_ends_the_game() {
        use rand::seq::SliceRandom;
        let mut rng = StdRng::seed_from_u64(7);
        for name in crate::variant::builtin_names() {
            let v = Variant::builtin(name).unwrap();
            for plies in [0u32, 1, 12] {
                let mut game = Game::startpos(v);
                // no game of a built-in variant ends within 12 plies of its start
                assert!(game.play_opening(plies, |ms| *ms.choose(&mut rng).unwrap()), "{name}");
                assert_eq!(game.moves().len(), plies as usize, "{name}");
                let mut replay = Game::startpos(v);
                for m in game.uci_moves() {
                    replay.play_uci(&m).unwrap_or_else(|e| panic!("{name}: {m}: {e}"));
                }
                assert_eq!(replay.position().fen(), game.position().fen());
            }
            // random games until a position with a move that ends the game: picking it stops the
            // opening there, with the position as it was
            let mut found = false;
            'games: for _ in 0..200 {
                let mut game = Game::startpos(v);
                while !game.result().is_over() && game.moves().len() < 400 {
                    let ending = game.position().legal_moves().into_iter().find(|&m| {
                        let mut g = game.clone();
                        g.play(m);
                        g.result().is_over()
                    });
                    if let Some(end) = ending {
                        let before = game.position().fen();
                        let n = game.moves().len();
                        let mut picks = 0;
                        assert!(!game.play_opening(3, |_| {
                            picks += 1;
                            end
                        }));
                        assert_eq!((picks, game.moves().len(), game.position().fen()), (1, n, before), "{name}");
                        found = true;
                        break 'games;
                    }
                    let m = *game.position().legal_moves().choose(&mut rng).unwrap();
                    game.play(m);
                }
            }
            assert!(found, "{name}: no game-ending move in 200 random games");
        }
    }
}
