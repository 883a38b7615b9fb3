//! vzero's rules core: one data-driven engine for chess variants.
//!
//! A variant is a definition (`configs/variants/*.toml`, embedded as defaults) compiled into
//! attack tables ([`Variant`]); a [`Position`] holds the board, hands and state, generates legal
//! moves and plays them; a [`Game`] adds the history needed for repetition and reports the result
//! with Fairy-Stockfish's precedence.
//!
//! ```
//! use vzero_rules::{Position, Variant};
//! let empire = Variant::builtin("empire").unwrap();
//! let pos = Position::startpos(empire);
//! assert_eq!(pos.legal_moves().len(), 30);
//! assert_eq!(pos.perft(2), 600);
//! ```

pub mod betza;
pub mod bitboard;
mod board;
pub mod definition;
mod error;
mod fen;
mod game;
mod movegen;
pub mod pgn;
mod position;
mod san;
pub mod toml_error;
mod types;
pub mod variant;

pub use board::Pos;
pub use error::{echo, echo_within, Error, Result, MESSAGE_MAX};
pub use game::{Game, GameResult, Outcome, Reason};
pub use movegen::{MoveList, MAX_MOVES};
pub use position::Position;
pub use types::{Color, Move, MoveKind, Piece, PieceType, Square};
pub use variant::{PieceInfo, Value, Variant};
