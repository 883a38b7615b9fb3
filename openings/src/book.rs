//! Opening books keyed by the rules core's Zobrist key (transpositions merge).
//!
//! File format (JSON, written atomically: temporary file + rename):
//!
//! ```json
//! {
//!   "format": "vzero-book", "version": 1, "variant": "empire", "plies": 12, "min_games": 1,
//!   "positions": [
//!     { "key": "0123456789abcdef", "fen": "…",
//!       "moves": [ { "uci": "e3e4", "san": "Pe4", "games": 10, "score": 0.55, "weight": 5.5 } ] }
//!   ]
//! }
//! ```
//!
//! `key` is `Position::key()` in 16 hex digits; `fen` is the first position seen with that key
//! (for people; lookups use the key). `score` is the mover's mean score after the move and
//! `weight = games * (score + 0.1) / 1.1` (positive, at most `games`). Positions are sorted by
//! key, moves by decreasing weight.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};
use vzero_rules::{Move, Position, Variant};

use crate::san::san;
use crate::source::ReplayedGame;

/// Version of the book file format.
pub const BOOK_VERSION: u32 = 1;

/// One book move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookMove {
    pub uci: String,
    pub san: String,
    pub games: u64,
    /// Mover's mean score.
    pub score: f64,
    pub weight: f64,
}

/// One book position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookPosition {
    /// Zobrist key, 16 hex digits.
    pub key: String,
    pub fen: String,
    pub moves: Vec<BookMove>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct BookFile {
    format: String,
    version: u32,
    variant: String,
    plies: usize,
    min_games: u64,
    positions: Vec<BookPosition>,
}

/// The weight of a move from its games and the mover's mean score.
pub fn move_weight(games: u64, score: f64) -> f64 {
    games as f64 * (score + 0.1) / 1.1
}

/// uci -> (san, games, mover score sum).
type MoveCounts = HashMap<String, (String, u64, f64)>;

/// Accumulates games into a book.
#[derive(Clone, Debug)]
pub struct BookBuilder {
    variant: String,
    plies: usize,
    /// key -> (first FEN, uci -> (san, games, mover score sum)).
    positions: HashMap<u64, (String, MoveCounts)>,
}

impl BookBuilder {
    pub fn new(variant: Variant, plies: usize) -> BookBuilder {
        BookBuilder { variant: variant.name().to_string(), plies, positions: HashMap::new() }
    }

    /// Adds the first `plies` moves of a game.
    pub fn add(&mut self, g: &ReplayedGame) {
        let mut pos = g.start;
        for &m in g.moves.iter().take(self.plies) {
            let mover_white = pos.side_to_move() == vzero_rules::Color::White;
            let score = if mover_white { g.white_score } else { 1.0 - g.white_score };
            let entry = self.positions.entry(pos.key()).or_insert_with(|| (pos.fen(), HashMap::new()));
            let uci = pos.uci(m);
            let e = entry.1.entry(uci).or_insert_with(|| (san(&pos, m), 0, 0.0));
            e.1 += 1;
            e.2 += score;
            pos.play(m);
        }
    }

    /// Positions in the builder.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The book, keeping moves played in at least `min_games` games.
    pub fn finish(self, min_games: u64) -> Book {
        let mut positions: Vec<BookPosition> = self
            .positions
            .into_iter()
            .filter_map(|(key, (fen, moves))| {
                let mut moves: Vec<BookMove> = moves
                    .into_iter()
                    .filter(|(_, (_, n, _))| *n >= min_games.max(1))
                    .map(|(uci, (san, n, sum))| {
                        let score = sum / n as f64;
                        BookMove { uci, san, games: n, score, weight: move_weight(n, score) }
                    })
                    .collect();
                if moves.is_empty() {
                    return None;
                }
                moves.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.uci.cmp(&b.uci)));
                Some(BookPosition { key: format!("{key:016x}"), fen, moves })
            })
            .collect();
        positions.sort_by(|a, b| a.key.cmp(&b.key));
        Book::from_parts(self.variant, self.plies, min_games, positions)
    }
}

/// An opening book: lookups by Zobrist key, weighted random choice, a ply limit.
#[derive(Clone, Debug)]
pub struct Book {
    variant: String,
    plies: usize,
    min_games: u64,
    positions: Vec<BookPosition>,
    index: HashMap<u64, usize>,
    /// `pick` answers only below this ply (default: the plies the book was built with).
    max_plies: usize,
}

impl Book {
    fn from_parts(variant: String, plies: usize, min_games: u64, positions: Vec<BookPosition>) -> Book {
        let index = positions
            .iter()
            .enumerate()
            .filter_map(|(i, p)| u64::from_str_radix(&p.key, 16).ok().map(|k| (k, i)))
            .collect();
        Book { variant, plies, min_games, positions, index, max_plies: plies }
    }

    /// Reads a book file.
    pub fn load(path: &Path) -> Result<Book> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading book {}", path.display()))?;
        let f: BookFile = serde_json::from_str(&text).with_context(|| format!("{}: not a vzero book", path.display()))?;
        if f.format != "vzero-book" {
            bail!("{}: format '{}', expected 'vzero-book'", path.display(), f.format);
        }
        if f.version != BOOK_VERSION {
            bail!("{}: book version {}, this vzero reads version {BOOK_VERSION}", path.display(), f.version);
        }
        for p in &f.positions {
            if u64::from_str_radix(&p.key, 16).is_err() {
                bail!("{}: bad position key '{}'", path.display(), p.key);
            }
        }
        Ok(Book::from_parts(f.variant, f.plies, f.min_games, f.positions))
    }

    /// Writes the book atomically (temporary file in the same directory, then rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        let f = BookFile {
            format: "vzero-book".into(),
            version: BOOK_VERSION,
            variant: self.variant.clone(),
            plies: self.plies,
            min_games: self.min_games,
            positions: self.positions.clone(),
        };
        let text = serde_json::to_string_pretty(&f)? + "\n";
        vzero_base::write_atomic(path, text.as_bytes()).map_err(|e| anyhow::anyhow!("writing book {}: {}", path.display(), e.source))
    }

    /// Variant name the book was built for.
    pub fn variant(&self) -> &str {
        &self.variant
    }

    /// Plies the book was built from.
    pub fn plies(&self) -> usize {
        self.plies
    }

    /// Sets the ply limit of [`Book::pick`].
    pub fn set_max_plies(&mut self, n: usize) {
        self.max_plies = n;
    }

    pub fn max_plies(&self) -> usize {
        self.max_plies
    }

    /// All positions, sorted by key.
    pub fn positions(&self) -> &[BookPosition] {
        &self.positions
    }

    /// The book moves of `pos` (by its Zobrist key), best weight first.
    pub fn moves(&self, pos: &Position) -> &[BookMove] {
        self.index.get(&pos.key()).map_or(&[], |&i| &self.positions[i].moves)
    }

    /// A weighted random book move for `pos` at game ply `ply` (0 = first move); `None` past
    /// the ply limit, for positions not in the book, or when no book move is legal here.
    pub fn pick(&self, pos: &Position, ply: usize, rng: &mut impl Rng) -> Option<Move> {
        if ply >= self.max_plies {
            return None;
        }
        let cands: Vec<(Move, f64)> = self
            .moves(pos)
            .iter()
            .filter_map(|m| pos.parse_uci(&m.uci).ok().map(|mv| (mv, m.weight.max(0.0))))
            .filter(|(_, w)| *w > 0.0)
            .collect();
        let total: f64 = cands.iter().map(|c| c.1).sum();
        if cands.is_empty() || total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let mut x = rng.gen::<f64>() * total;
        for (m, w) in &cands {
            if x < *w {
                return Some(*m);
            }
            x -= w;
        }
        cands.last().map(|c| c.0)
    }
}
