//! EPD: positions with operations, one per line, as Fairy-Stockfish's match tools use for
//! opening books (`books/<variant>.epd`: variantfishtest plays each game from
//! `position fen <line>`, ignoring what follows the FEN).
//!
//! [`book_to_epd`] writes one line per book position: the FEN as vzero and Fairy-Stockfish write
//! it (with the move counters, and SPQR's Dictator field when set), then `bm` with the book moves
//! best first in UCI notation, and `c0` with their weights:
//!
//! ```text
//! rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 bm e7e5 c7c5; c0 "weights e7e5:5.50 c7c5:3.00";
//! ```
//!
//! [`parse_epd`] reads such lines back, and plain FENs, EPD with only the four position fields,
//! and lines whose last `;` was stripped.

use anyhow::{bail, Result};
use vzero_rules::{Game, Variant};

use crate::book::Book;

/// An EPD operation: opcode and operands (as written, quotes kept).
pub type EpdOp = (String, String);

/// Reads one EPD or FEN line: the position is the longest run of leading fields (4 to 7) that
/// the variant's FEN reader accepts, the rest is operations separated by `;`.
pub fn parse_epd(variant: Variant, line: &str) -> Result<(Game, Vec<EpdOp>)> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.is_empty() {
        bail!("empty EPD line");
    }
    let mut first_err = None;
    for n in (1..=tokens.len().min(7)).rev() {
        match Game::from_fen(variant, &tokens[..n].join(" ")) {
            Ok(g) => {
                let rest = tokens[n..].join(" ");
                let ops = rest
                    .split(';')
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .map(|o| match o.split_once(' ') {
                        Some((c, a)) => (c.to_string(), a.trim().to_string()),
                        None => (o.to_string(), String::new()),
                    })
                    .collect::<Vec<_>>();
                if let Some((c, _)) = ops.iter().find(|(c, _)| !is_opcode(c)) {
                    bail!("'{c}' is not an EPD opcode (after the FEN '{}')", tokens[..n].join(" "));
                }
                return Ok((g, ops));
            }
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    bail!("no FEN at the start of the line: {}", first_err.map_or_else(String::new, |e| e.to_string()))
}

/// An EPD opcode: a letter, then up to 14 letters, digits or underscores.
fn is_opcode(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic()) && s.len() <= 15 && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// The book as EPD text (see the module documentation), positions in the book's order, skipping
/// finished games; returns the text and the number of lines.
pub fn book_to_epd(book: &Book, variant: Variant) -> Result<(String, usize)> {
    let mut out = String::new();
    let mut n = 0;
    for p in book.positions() {
        let g = Game::from_fen(variant, &p.fen).map_err(|e| anyhow::anyhow!("book position {}: {e}", p.key))?;
        if g.result().is_over() || p.moves.is_empty() {
            continue;
        }
        let bm: Vec<&str> = p.moves.iter().map(|m| m.uci.as_str()).collect();
        let w: Vec<String> = p.moves.iter().map(|m| format!("{}:{:.2}", m.uci, m.weight)).collect();
        out += &format!("{} bm {}; c0 \"weights {}\";\n", g.position().fen(), bm.join(" "), w.join(" "));
        n += 1;
    }
    Ok((out, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fens_epd_and_stripped_lines() {
        let v = Variant::builtin("empire").unwrap();
        let start = Game::startpos(v).position().fen();
        let (g, ops) = parse_epd(v, &start).unwrap();
        assert_eq!((g.position().fen(), ops.len()), (start.clone(), 0));
        let four: Vec<&str> = start.split_whitespace().take(4).collect();
        let line = format!("{} bm e3e4 d3d4; c0 \"weights e3e4:5.50 d3d4:1.00\"", four.join(" "));
        let (g, ops) = parse_epd(v, &line).unwrap();
        assert_eq!(g.position().key(), Game::startpos(v).position().key());
        assert_eq!(ops[0], ("bm".to_string(), "e3e4 d3d4".to_string()));
        assert_eq!(ops[1].0, "c0");
        assert!(parse_epd(v, "not a fen").is_err());
        let e = parse_epd(v, &format!("{start} 1x; bm e3e4")).unwrap_err().to_string();
        assert!(e.contains("'1x'"), "{e}");
    }
}
