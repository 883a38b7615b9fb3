//! `vzero match` and `vzero ratings`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use vzero_arena::{
    compute_ratings, format_table, read_book, run_match, GameRecord, MatchConfig, Openings, PlayerSpec,
    SprtConfig,
};
use vzero_rules::pgn::read_pgn_file;
use vzero_rules::Variant;

/// Arguments of `vzero match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// First player (spec: random, greedy, alphabeta[:D], mcts[:N], net:PATH[:N], net:PATH:gumbel[:N], uci:CMD[:opts], fsf[:opts]).
    pub a: String,
    /// Second player (same grammar).
    pub b: String,
    /// Games to play (colours swapped in pairs from the same opening).
    #[arg(long, default_value_t = 10)]
    pub games: u32,
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long, default_value = "empire")]
    pub variant: String,
    /// Random plies from the start position for each pair's opening (ignored with --book).
    #[arg(long, default_value_t = 8)]
    pub openings_plies: u32,
    /// Opening book: one FEN (optionally `moves …`) or UCI move list per line, or a .pgn file.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Opening book built by `vzero book build`: each pair's opening is a weighted random
    /// walk through it (seeded by --seed and the pair), up to --book-plies plies.
    #[arg(long, conflicts_with = "book")]
    pub opening_book: Option<PathBuf>,
    /// Plies played from --opening-book (at most).
    #[arg(long, default_value_t = 8)]
    pub book_plies: usize,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Stop early by SPRT: elo0,elo1,alpha,beta (e.g. 0,10,0.05,0.05).
    #[arg(long)]
    pub sprt: Option<String>,
    /// Append every game to this PGN file.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
    /// A game longer than this many plies (opening included) is adjudicated a draw.
    #[arg(long, default_value_t = 500)]
    pub max_plies: u32,
    /// Seed of openings and players' randomness.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// Says on standard error which engine a spec runs (`engine fsf:nodes=1: Fairy-Stockfish …
/// (PROGRAM, where it came from)`), from starting it once; an engine that cannot start is the
/// error. Nothing for vzero's own players.
pub fn say_engine(spec: &PlayerSpec, variant: Variant) -> Result<()> {
    if let Some(info) = spec.identify(variant)? {
        eprintln!("engine {info}");
    }
    Ok(())
}

pub fn match_(a: MatchArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    let pa = PlayerSpec::parse(&a.a)?;
    let pb = PlayerSpec::parse(&a.b)?;
    let sprt = a.sprt.as_deref().map(SprtConfig::parse).transpose().map_err(anyhow::Error::msg)?;
    if a.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let mut cfg = MatchConfig::new(variant);
    cfg.games = a.games;
    cfg.openings = match (&a.book, &a.opening_book) {
        (Some(p), _) => Openings::Book(read_book(p, variant)?),
        (None, Some(p)) => Openings::Book(book_openings(p, variant, a.book_plies, a.games.div_ceil(2), a.seed)?),
        (None, None) => Openings::Random { plies: a.openings_plies },
    };
    cfg.concurrency = a.concurrency;
    cfg.max_plies = a.max_plies;
    cfg.seed = a.seed;
    cfg.sprt = sprt;
    cfg.pgn = a.pgn.clone();
    cfg.progress = !a.no_progress;
    cfg.event = format!("vzero match {} vs {}", pa.name(), pb.name());
    say_engine(&pa, variant)?;
    say_engine(&pb, variant)?;
    // Parallelism comes from the games (`--concurrency`): one intra-op thread per forward pass,
    // as in self-play. Torch's default (a thread per core) makes OpenMP barriers spin whenever
    // anything else shares the cores: two spqr matches beside each other ran several times slower.
    vzero_model::set_threads(1);
    let report = run_match(&pa, &pb, &cfg)?;
    let mut out = std::io::stdout().lock();
    let forfeits: Vec<_> = report.games.iter().filter(|g| g.termination == "forfeit").collect();
    for g in &forfeits {
        writeln!(
            out,
            "game {}: forfeit: {}",
            g.index + 1,
            g.pgn.tag("TerminationDetails").unwrap_or("?")
        )?;
    }
    write!(out, "{}", report.summary(sprt.as_ref()))?;
    if let Some(p) = &a.pgn {
        writeln!(out, "pgn {}", p.display())?;
    }
    Ok(())
}

/// One opening per pair: a weighted random walk through a vzero book from the start position,
/// at most `plies` plies, stopping before a move that would end the game.
fn book_openings(path: &std::path::Path, variant: Variant, plies: usize, pairs: u32, seed: u64) -> Result<Vec<vzero_rules::Game>> {
    use rand::SeedableRng;
    let mut book = vzero_openings::Book::load(path)?;
    if book.variant() != variant.name() {
        bail!("{}: a book for {}, not {}", path.display(), book.variant(), variant.name());
    }
    book.set_max_plies(plies);
    let mut out = Vec::new();
    for pair in 0..pairs.max(1) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (pair as u64 + 1));
        let mut g = vzero_rules::Game::startpos(variant);
        while let Some(m) = book.pick(g.position(), g.moves().len(), &mut rng) {
            g.play(m);
            if g.result().is_over() {
                g.undo();
                break;
            }
        }
        out.push(g);
    }
    Ok(out)
}

/// Arguments of `vzero ratings`.
#[derive(Args, Debug)]
pub struct RatingsArgs {
    /// PGN files (games with result `*` are skipped).
    #[arg(required = true)]
    pub pgn: Vec<PathBuf>,
    /// Player fixed at Elo 0.
    #[arg(long, default_value = "random")]
    pub anchor: String,
    /// Virtual draws added to every pair of players who met (keeps 100%/0% scores finite; 0 = plain maximum likelihood).
    #[arg(long, default_value_t = 1.0)]
    pub prior_draws: f64,
}

pub fn ratings(a: RatingsArgs) -> Result<()> {
    let mut games = Vec::new();
    for p in &a.pgn {
        games.extend(read_pgn_file(p)?.iter().filter_map(GameRecord::from_pgn));
    }
    if games.is_empty() {
        bail!("no finished games in {} file(s)", a.pgn.len());
    }
    if !(a.prior_draws >= 0.0) {
        bail!("--prior-draws must be 0 or more");
    }
    let rows = compute_ratings(&games, &a.anchor, a.prior_draws).map_err(anyhow::Error::msg)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{} games, anchor {} = 0, 95% intervals relative to the anchor", games.len(), a.anchor)?;
    write!(out, "{}", format_table(&rows))?;
    Ok(())
}
