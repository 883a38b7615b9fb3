//! One module per subcommand family.

pub mod bench;
pub mod net;
pub mod rules;
pub mod search;
