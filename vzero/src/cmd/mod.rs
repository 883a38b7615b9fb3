//! One module per subcommand family.

pub mod arena;
pub mod bench;
pub mod net;
pub mod openings;
pub mod train;
pub mod rules;
pub mod search;
pub mod uci;
