//! Opening statistics and opening books from vzero self-play (run directories) and arena games
//! (PGN files).
//!
//! * [`source`]: streaming readers (chunk by chunk, PGN game by game) and replay with the rules
//!   core; malformed games are reported as [`Skipped`] with file and line (or chunk file and
//!   game index).
//! * [`OpeningTree`]: per line up to N plies, games, frequency, W/D/L from White's and from the
//!   mover's side, score, Elo performance, mean length, mean prior and search value.
//! * [`Book`] / [`BookBuilder`]: Zobrist-keyed opening books (transpositions merge) with a ply
//!   limit and weighted random choice.
//! * [`tree_svg`]: the top lines as stacked W/D/L bars.
//! * [`epd`]: books as EPD lines for Fairy-Stockfish's match tools, and the EPD reader.
//! * [`read_book`]: opening lists (FEN, EPD, UCI moves or PGN) for matches and self-play starts.
//!
//! See `openings/README.md`.

pub mod book;
pub mod epd;
pub mod opening_list;
pub mod san;
pub mod source;
pub mod svg;
pub mod tree;

pub use epd::{book_to_epd, parse_epd, EpdOp};
pub use opening_list::{read_book, read_lines, OpeningLine};
pub use book::{move_weight, Book, BookBuilder, BookMove, BookPosition, BOOK_VERSION};
pub use san::san;
pub use source::{for_each_game, parse_generation, replay, Input, PgnReader, RawGame, ReplayedGame, Skipped};
pub use svg::tree_svg;
pub use tree::{elo_performance, numbered_line, to_csv, to_json, to_markdown, OpeningTree, TreeRow};

use anyhow::{bail, Result};
use vzero_rules::Variant;

/// Which games count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Inclusive generation range (`gen-NNNNNN` of the network, see [`RawGame::generation`]);
    /// games without a generation are excluded when set.
    pub generations: Option<(Option<u64>, Option<u64>)>,
    /// Only games between these two players (either colour).
    pub players: Option<(String, String)>,
    /// Only decisive games.
    pub decisive: bool,
}

impl Filter {
    /// Parses `A..B`, `A..`, `..B` or `A` (one generation).
    pub fn parse_generations(s: &str) -> Result<(Option<u64>, Option<u64>)> {
        let num = |x: &str| -> Result<Option<u64>> {
            let x = x.trim();
            let x = x.strip_prefix("gen-").unwrap_or(x);
            if x.is_empty() {
                Ok(None)
            } else {
                x.parse::<u64>().map(Some).map_err(|_| anyhow::anyhow!("--generations: '{x}' is not a number (expected A..B)"))
            }
        };
        match s.split_once("..") {
            Some((a, b)) => Ok((num(a)?, num(b)?)),
            None => {
                let g = num(s)?;
                if g.is_none() {
                    bail!("--generations: empty range");
                }
                Ok((g, g))
            }
        }
    }

    /// Parses `A,B`.
    pub fn parse_players(s: &str) -> Result<(String, String)> {
        match s.split_once(',') {
            Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() => Ok((a.trim().to_string(), b.trim().to_string())),
            _ => bail!("--players: expected two names separated by a comma (A,B)"),
        }
    }

    /// Whether a (well-formed) game passes.
    pub fn accepts(&self, g: &RawGame) -> bool {
        if self.decisive && !matches!(g.result.as_str(), "1-0" | "0-1") {
            return false;
        }
        if let Some((a, b)) = &self.players {
            let ok = (g.white == *a && g.black == *b) || (g.white == *b && g.black == *a);
            if !ok {
                return false;
            }
        }
        if let Some((lo, hi)) = self.generations {
            let Some(gen) = g.generation() else { return false };
            if lo.is_some_and(|lo| gen < lo) || hi.is_some_and(|hi| gen > hi) {
                return false;
            }
        }
        true
    }
}

/// What a pass over the inputs counted.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Games read (counted, filtered out and skipped).
    pub read: u64,
    /// Games counted.
    pub counted: u64,
    /// Well-formed games the filters left out.
    pub filtered: u64,
    /// Malformed or unfinished games (and unreadable chunks), with where and why.
    pub skipped: Vec<Skipped>,
}

impl Summary {
    /// Games skipped one by one (malformed or unfinished).
    pub fn games_skipped(&self) -> usize {
        self.skipped.iter().filter(|s| !s.chunk).count()
    }

    /// Unreadable chunks skipped whole: their games are lost, however many there were.
    pub fn chunks_lost(&self) -> usize {
        self.skipped.iter().filter(|s| s.chunk).count()
    }

    /// `N games counted, F filtered out, S games skipped` and, when there are any,
    /// `; C unreadable chunks: their games are lost (vzero check names them)`.
    pub fn line(&self) -> String {
        let mut line = format!("{} games counted, {} filtered out, {} games skipped", self.counted, self.filtered, self.games_skipped());
        let lost = self.chunks_lost();
        if lost > 0 {
            line += &format!("; {lost} unreadable chunk{}: {} games are lost (`vzero check --run` names the damage)", if lost == 1 { "" } else { "s" }, if lost == 1 { "its" } else { "their" });
        }
        line
    }
}

/// Streams the games of `inputs`: filters, replays (checking every move) and hands each good
/// game to `f`. Malformed games are collected in the summary (and never reach `f`). `progress`
/// shows a bar of the games read on stderr.
pub fn scan(inputs: &[Input], variant: Variant, filter: &Filter, progress: bool, mut f: impl FnMut(&ReplayedGame)) -> Result<Summary> {
    let bar = if progress { indicatif::ProgressBar::new_spinner() } else { indicatif::ProgressBar::hidden() };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} games read  {msg}  [{elapsed_precise}, {per_sec}]").expect("valid template"),
    );
    let mut sum = Summary::default();
    for_each_game(inputs, |g| {
        sum.read += 1;
        bar.inc(1);
        match g {
            Err(s) => sum.skipped.push(s),
            Ok(raw) => {
                // Malformed games are reported even when a filter would leave them out, unless
                // the filter can tell from the tags alone (then they are simply not counted).
                if !filter.accepts(&raw) {
                    sum.filtered += 1;
                } else {
                    match replay(raw, variant) {
                        Ok(g) => {
                            sum.counted += 1;
                            f(&g);
                        }
                        Err(s) => sum.skipped.push(s),
                    }
                }
            }
        }
        if sum.read % 1024 == 0 {
            bar.set_message(format!("{} counted, {} skipped", sum.counted, sum.games_skipped()));
        }
        true
    })?;
    bar.finish_and_clear();
    Ok(sum)
}
