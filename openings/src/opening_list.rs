//! Opening lists: files of starting positions, one per line (FEN, EPD, or UCI moves) or one per
//! game of a PGN file. Matches play their pairs from them (`vzero match --book`), and self-play
//! starts games inside their lines (`[selfplay] start_book`).

use std::path::Path;

use anyhow::{bail, Context, Result};
use vzero_rules::pgn::read_pgn_file;
use vzero_rules::{Game, Variant};

/// Reads a book: one opening per line, blank lines and `#` comments skipped. A line is a FEN
/// or an EPD line (it contains `/`; EPD operations are ignored, so Fairy-Stockfish's
/// `books/<variant>.epd` and `vzero book export --format epd` files are books), optionally
/// followed by `moves m1 m2 …`, or UCI moves from the start position. A `.pgn` file is read as
/// PGN instead (each game's FEN tag and moves). Each returned [`Game`] keeps its start position
/// and moves, so a caller may start anywhere along the line.
pub fn read_book(path: &Path, variant: Variant) -> Result<Vec<Game>> {
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pgn")) {
        for (i, g) in read_pgn_file(path)?.iter().enumerate() {
            out.push(g.replay(variant).with_context(|| format!("{}: game {}", path.display(), i + 1))?);
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
            out.push(g);
        }
    }
    if out.is_empty() {
        bail!("book {} has no openings", path.display());
    }
    Ok(out)
}
