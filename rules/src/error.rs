//! Typed errors of the rules core. Each one says what is wrong and where.

use thiserror::Error;

/// Everything that can go wrong when reading variants, positions and moves.
#[derive(Error, Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No built-in variant of that name.
    #[error("unknown variant '{name}' (known: {known})")]
    UnknownVariant {
        /// The name asked for.
        name: String,
        /// Comma-separated list of the built-in variants.
        known: String,
    },
    /// A variant definition that cannot be used.
    #[error("variant definition {source_name}: {message}")]
    Variant {
        /// File name or built-in name of the definition.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// A FEN that cannot be read.
    #[error("malformed FEN '{fen}': {field} field: {message}")]
    Fen {
        /// The FEN as given.
        fen: String,
        /// Which field (board, holdings, side, castling, en passant, halfmove clock, ...).
        field: &'static str,
        /// What is wrong, naming the offending character where there is one.
        message: String,
    },
    /// A move string that is not a move in this variant's notation.
    #[error("malformed move '{text}': {message}")]
    MoveSyntax {
        /// The move as given.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// A well-formed move that is not legal in the position.
    #[error("illegal move '{text}' in position {fen}")]
    IllegalMove {
        /// The move as given.
        text: String,
        /// The position it was tried in.
        fen: String,
    },
    /// A move given after the game ended.
    #[error("the game is over ({result}): '{text}' cannot be played")]
    GameOver {
        /// The move as given.
        text: String,
        /// How the game ended (`loss checkmate`, `draw repetition`, ...).
        result: String,
    },
}

/// Result alias of the rules core.
pub type Result<T> = std::result::Result<T, Error>;

/// Longest part of an input that an error message repeats (a 10 KB FEN or a 100 KB UCI line is
/// not echoed whole).
pub const ECHO_MAX: usize = 80;

/// Longest error message printed whole (a safety net under [`echo`]: vzero's `error:` lines,
/// clap's, and the engine's `info string error:`).
pub const MESSAGE_MAX: usize = 1000;

/// `text` for an error message: whole up to [`ECHO_MAX`] characters, else its first
/// [`ECHO_MAX`] with `…` and its length.
pub fn echo(text: &str) -> String {
    echo_within(text, ECHO_MAX)
}

/// `text` whole up to `max` characters, else its first `max` with `…` and its length.
pub fn echo_within(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        text.to_string()
    } else {
        format!("{}… ({n} characters)", text.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn echo_bounds_long_inputs_and_keeps_short_ones() {
        assert_eq!(super::echo("e2e4"), "e2e4");
        let long = "x".repeat(10_000);
        let e = super::echo(&long);
        assert!(e.len() < 120 && e.ends_with("(10000 characters)"), "{e}");
    }
}
