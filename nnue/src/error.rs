//! The one error type of the crate: every refusal names the file or variant and what is wrong.

use thiserror::Error;

/// Why a net, a file, a variant or a position was refused.
#[derive(Debug, Error)]
pub enum NnueError {
    /// Reading or writing a file failed.
    #[error("{path}: {io}")]
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        io: std::io::Error,
    },
    /// The first four bytes are not Fairy-Stockfish's NNUE version.
    #[error("{source_name}: not a Fairy-Stockfish NNUE file: version 0x{found:08x}, expected 0x{expected:08x}")]
    Version {
        /// The file.
        source_name: String,
        /// The version found.
        found: u32,
        /// [`crate::format::VERSION`].
        expected: u32,
    },
    /// A hash (whole net, feature transformer, or a layer stack) is not the HalfKAv2Variants one.
    #[error("{source_name}: {part} hash is 0x{found:08x}, expected 0x{expected:08x}: not a HalfKAv2Variants 512x2-16-32-1 net")]
    Hash {
        /// The file.
        source_name: String,
        /// Which hash (`network`, `feature transformer`, `layer stack 3`).
        part: String,
        /// The hash found.
        found: u32,
        /// The hash expected.
        expected: u32,
    },
    /// The file ends inside a part of the net.
    #[error("{source_name}: truncated: the file has {len} bytes and ends inside {part} (a net for {variant} has {expected} bytes){hint}")]
    Truncated {
        /// The file.
        source_name: String,
        /// The part the file ends in.
        part: String,
        /// The file's length.
        len: u64,
        /// The variant the net was read for.
        variant: String,
        /// The length a net for that variant has with this description.
        expected: u64,
        /// What the file's length fits (another variant's net), or empty.
        hint: String,
    },
    /// Bytes follow the last layer stack: the net has more features than the variant's.
    #[error("{source_name}: {extra} bytes after the last layer stack: not a net for {variant} ({dims} features, {expected} bytes){hint}")]
    TrailingBytes {
        /// The file.
        source_name: String,
        /// Bytes past the end of the net.
        extra: u64,
        /// The variant the net was read for.
        variant: String,
        /// Its number of features.
        dims: usize,
        /// The length a net for that variant has with this description.
        expected: u64,
        /// What the file's length fits (another variant's net), or empty.
        hint: String,
    },
    /// The variant cannot have a Fairy-Stockfish net (board too large, a piece with no
    /// Fairy-Stockfish type, too many features, ...).
    #[error("variant '{variant}' cannot have a Fairy-Stockfish net: {reason}")]
    Unsupported {
        /// The variant.
        variant: String,
        /// Why, in one line.
        reason: String,
    },
    /// Fairy-Stockfish does not use its NNUE in this position (`Position::nnue_applicable`).
    #[error("Fairy-Stockfish does not use NNUE in {fen}: {reason}")]
    NotApplicable {
        /// The position.
        fen: String,
        /// Why.
        reason: String,
    },
    /// A position, feature list or net of one variant was used with another's.
    #[error("{what} is for variant '{found}' but this is for '{expected}'")]
    WrongVariant {
        /// What was passed (`position`, `network`).
        what: String,
        /// The variant it is for.
        found: String,
        /// The variant expected.
        expected: String,
    },
    /// A net and a mapping (or feature list) disagree on the number of features.
    #[error("the network has {network} features but variant '{variant}' has {mapping}")]
    Dimensions {
        /// The net's feature count.
        network: usize,
        /// The variant.
        variant: String,
        /// The variant's feature count.
        mapping: usize,
    },
    /// A game record that cannot be replayed (bad FEN, illegal move).
    #[error("game {game}: {reason}")]
    Game {
        /// Which game (its index or name).
        game: String,
        /// What is wrong.
        reason: String,
    },
    /// A training checkpoint that cannot be read (truncated, damaged, another format).
    #[error("{path}: {reason}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Building a network from parts of the wrong length.
    #[error("bad network part: {0}")]
    Shape(String),
}

impl From<vzero_base::FileError> for NnueError {
    fn from(e: vzero_base::FileError) -> NnueError {
        NnueError::Io { path: e.path.display().to_string(), io: e.source }
    }
}

/// Result with [`NnueError`].
pub type Result<T> = std::result::Result<T, NnueError>;
