//! vzero's arena: players (random, greedy, alpha-beta, MCTS with material or a network, external
//! UCI engines), matches with colour-swapped pairs, Elo with 95% intervals and SPRT, PGN files in
//! the form pychess and Fairy-Stockfish use for variants, Bradley–Terry ratings, the UCI engine
//! (`uci_server`, with its searcher `think` and time manager `timeman`) and game analysis
//! (`analysis`).
//!
//! See `arena/README.md` for the player spec grammar and the statistics used.

pub mod elo;
pub mod engine;
pub mod gauntlet;
pub mod matches;
pub mod pgn;
pub mod player;
pub mod ratings;
pub mod analysis;
pub mod think;
pub mod timeman;
pub mod uci_engine;
pub mod uci_server;

pub use elo::{elo_from_score, score_from_elo, EloEstimate, MatchStats, SprtConfig, SprtDecision};
pub use engine::{search_move, value_to_cp, Evaluator, Limits, NetEvaluator, Progress};
pub use think::{GoLimits, Line, Report, Score, ThinkConfig, Thinker};
pub use timeman::{Clock, TimePlan};
pub use gauntlet::{run_gauntlet, GauntletConfig, GauntletSummary};
pub use matches::{play_game, read_book, run_match, GameOutcome, MatchConfig, MatchReport, Openings};
pub use pgn::{parse_pgn, read_pgn_file, PgnError, PgnGame};
pub use player::{NetOptions, Player, PlayerSpec};
pub use ratings::{compute_ratings, format_table, GameRecord, Rating};
pub use uci_engine::{find_fsf, fsf_command, fsf_launcher, EngineInfo, FsfSource, UciEngine, UciEngineSpec, VariantIni, VZERO_VARIANTS_INI};
