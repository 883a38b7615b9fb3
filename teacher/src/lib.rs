//! Training rows from outside self-play, written as ordinary chunks into a run directory so
//! that the learner trains on them like on any others (marked by their chunk's
//! [`vzero_data::Source`], mixed in by `[learn.external]`):
//!
//! * [`import_games`]: games from PGN files replayed into rows — the move played as the policy
//!   target, the game's result as the value target (`vzero import`);
//! * [`label_positions`]: positions (from games, run directories or random play:
//!   [`collect_positions`]) given to a teacher — any player that reports a score, such as
//!   `alphabeta:D` or an external UCI engine — whose best move becomes the policy target and
//!   whose score, through a logistic ([`score_to_wdl`]), the value target (`vzero label`).
//!
//! * [`play_games`]: games a teacher plays against itself (random moves early), every searched
//!   position kept with its raw score (the data step of `vzero nnue loop`).
//!
//! Import and labelling are resumable: rows are written in fixed batches, each batch one atomic chunk whose
//! name carries the job and the batch number, so a rerun of a killed job writes only the
//! batches that are missing.

mod import;
mod jobs;
mod label;
mod play;
mod positions;
mod rows;
mod wdl;

pub use import::{import_games, ImportOptions, ImportSummary};
pub use label::{label_positions, scored_position, LabelOptions, LabelSummary};
pub use play::{play_games, PlayOptions, PlaySummary};
pub use positions::{collect_positions, positions_from_records, LabelPosition, PositionSource};
pub use wdl::{score_to_wdl, DEFAULT_CP_SCALE};
