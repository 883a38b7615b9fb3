//! `vzero serve`: the web pages (play the bots, analyse, openings, a run's progress).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

/// Arguments of `vzero serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A run directory (or `s3://` run) whose openings and progress the pages show; its newest
    /// checkpoint is a bot too. Repeatable.
    #[arg(long = "run")]
    runs: Vec<PathBuf>,
    /// A checkpoint to play against and analyse with (`gen-*.json`). Repeatable.
    #[arg(long = "model")]
    models: Vec<PathBuf>,
    /// A variant besides the built-in ones: a definition file (TOML). Repeatable.
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Address to bind: 127.0.0.1 serves this machine only; 0.0.0.0 every network it is on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port (0: any free port; the address printed names it).
    #[arg(long, default_value_t = 8080)]
    port: u16,
}

/// Serves until the process is stopped.
pub fn serve(a: ServeArgs) -> Result<()> {
    vzero_model::set_threads(1);
    let opts = vzero_serve::ServeOptions { runs: a.runs, models: a.models, variants: a.variants };
    vzero_serve::run(&opts, &a.host, a.port, |addr| {
        println!("vzero serve: listening on http://{addr}/ (play, analyse, openings, run; Ctrl-C stops)");
        let _ = std::io::stdout().flush();
    })
}
