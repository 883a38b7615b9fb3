//! `vzero uci`: the UCI engine (protocol, search and time management live in
//! `vzero_engine::uci_server`; this module parses the command line).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use vzero_engine::uci_server::{serve, ServerOptions};
use vzero_rules::Variant;

/// Arguments of `vzero uci`.
#[derive(Args, Debug)]
pub struct UciArgs {
    /// Initial variant: a built-in name or a definition file (the GUI can change it with
    /// `setoption name UCI_Variant`).
    #[arg(long, default_value = "empire")]
    pub variant: String,
    /// Checkpoint evaluating the search's leaves, with the knowledge blend it records (default:
    /// uniform priors + material value); also the `ModelPath` option.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Simulations of a `go` without limits (`Simulations` option).
    #[arg(long, default_value_t = 800)]
    pub sims: u32,
    /// Opening book (`vzero book build`), also settable as the `Book` option.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Book moves are played below this ply (`BookPlies` option).
    #[arg(long, default_value_t = 16)]
    pub book_plies: usize,
}

/// Runs the engine on stdin/stdout until `quit`.
pub fn uci(a: UciArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    // A network that cannot be used stops the engine at its start, naming why (not at the
    // first `go`, where a GUI would only see a weaker engine).
    if let Some(m) = &a.model {
        vzero_model::NetEvaluator::load(m, variant, vzero_model::Device::Cpu).map_err(|e| anyhow::anyhow!("--model {}: {e:#}", m.display()))?;
    }
    let opts = ServerOptions {
        variant,
        model: a.model,
        sims: a.sims.max(1),
        book: a.book.as_deref().map(vzero_openings::Book::load).transpose()?,
        book_plies: a.book_plies,
    };
    serve(opts, std::io::stdin().lock(), std::io::stdout())
}
