//! Opening lists: files of starting positions, one per line (FEN, EPD, or UCI moves) or one per
//! game of a PGN file. Matches play their pairs from them (`vzero match --book`), and self-play
//! starts games inside their lines (`[selfplay] start_book`).

use std::path::Path;

use anyhow::{bail, Context, Result};
use vzero_rules::pgn::read_pgn_file;
use vzero_rules::{Game, Move, Position, Variant};

/// One line of an opening list: where it starts and the moves played from there (no
/// positions along the way: a long list of long games stays small).
#[derive(Clone, Debug)]
pub struct OpeningLine {
    /// The line's first position (the variant's start, or the line's FEN).
    pub start: Position,
    /// The moves of the line, legal from `start` on.
    pub moves: Vec<Move>,
}

impl OpeningLine {
    /// The line played out: a game from `start` with every move of the line.
    pub fn game(&self) -> Game {
        let mut g = Game::new(self.start);
        for &m in &self.moves {
            g.play(m);
        }
        g
    }

    fn of(g: &Game) -> OpeningLine {
        OpeningLine { start: *g.start(), moves: g.moves().to_vec() }
    }
}

/// Reads an opening list as its lines (start and moves, for callers that start along them):
/// one opening per line, blank lines and `#` comments skipped. A line is a FEN or an EPD line (it contains `/`; EPD operations are ignored, so Fairy-Stockfish's
/// `books/<variant>.epd` and `vzero book export --format epd` files are books), optionally
/// followed by `moves m1 m2 …`, or UCI moves from the start position. A `.pgn` file is read as
/// PGN instead (each game's FEN tag and moves).
pub fn read_lines(path: &Path, variant: Variant) -> Result<Vec<OpeningLine>> {
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pgn")) {
        for (i, g) in read_pgn_file(path)?.iter().enumerate() {
            out.push(OpeningLine::of(&g.replay(variant).with_context(|| format!("{}: game {}", path.display(), i + 1))?));
        }
    } else {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading book {}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = || format!("{}:{}", path.display(), i + 1);
            let (fen, moves) = if line.contains('/') {
                match line.split_once(" moves ") {
                    Some((f, m)) => (Some(f.trim()), m),
                    None => (Some(line), ""),
                }
            } else {
                (None, line.strip_prefix("moves ").unwrap_or(line))
            };
            let mut g = match fen {
                Some(f) => crate::epd::parse_epd(variant, f).map(|(g, _)| g).with_context(at)?,
                None => Game::startpos(variant),
            };
            for m in moves.split_whitespace() {
                g.play_uci(m).with_context(at)?;
            }
            if g.result().is_over() {
                bail!("{}: the opening ends the game", at());
            }
            out.push(OpeningLine::of(&g));
        }
    }
    if out.is_empty() {
        bail!("book {} has no openings", path.display());
    }
    Ok(out)
}

/// Reads a book as the positions its lines end in, each a [`Game`] with the line's moves (so
/// repetitions count); the formats are those of [`read_lines`].
pub fn read_book(path: &Path, variant: Variant) -> Result<Vec<Game>> {
    Ok(read_lines(path, variant)?.iter().map(OpeningLine::game).collect())
}
