//! vzero's arena, the rating side: players (random, greedy, alpha-beta, MCTS with material or a
//! network, external UCI engines through `uci_client`) named by spec strings (`spec`), matches
//! with colour-swapped pairs, Elo with 95% intervals and SPRT, the gauntlet that rates a run's
//! checkpoints, learning curves against generation 0 (`curve`), and Bradley–Terry ratings over PGN files.
//!
//! vzero's own engine (its search, `vzero uci`, analysis) is the `vzero-engine` crate. See
//! `arena/README.md` for the player spec grammar and the statistics used.

pub mod curve;
pub mod elo;
pub mod gauntlet;
pub mod matches;
pub mod player;
pub mod ratings;
pub mod spec;
pub mod uci_client;

pub use elo::{elo_from_score, score_from_elo, EloEstimate, MatchStats, SprtConfig, SprtDecision};
pub use curve::{run_curve, CurveConfig, CurvePoint};
pub use gauntlet::{run_gauntlet, GauntletConfig, GauntletSummary};
pub use matches::{play_game, run_match, GameOutcome, MatchConfig, MatchReport, Openings, PairedGames};
pub use player::{Player, PvLine};
pub use vzero_openings::read_book;
pub use vzero_engine::Score;
pub use ratings::{compute_ratings, format_table, GameRecord, Rating};
pub use spec::{NetOptions, PlayerSpec};
pub use uci_client::{find_fsf, fsf_command, fsf_launcher, EngineInfo, FsfSource, TimeControl, UciEngine, UciEngineSpec, VariantIni, VZERO_VARIANTS_INI};
