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
}

/// Result alias of the rules core.
pub type Result<T> = std::result::Result<T, Error>;
