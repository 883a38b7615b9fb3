//! One module per subcommand family.

pub mod bench;
pub mod rules;
pub mod search;
