//! One module per subcommand family.

pub mod analyse;
pub mod arena;
pub mod bench;
pub mod net;
pub mod nnue;
pub mod nnue_loop;
pub mod nnue_play;
pub mod openings;
pub mod out;
pub mod train;
pub mod rules;
pub mod search;
pub mod serve;
pub mod status;
pub mod teacher;
pub mod uci;
