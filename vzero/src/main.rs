//! `vzero-torch`: the whole command line of vzero, linked with LibTorch. Users run `vzero`
//! (`src/front.rs`), which runs the rules commands itself and hands every other command to
//! this binary.

mod cmd;

use clap::{Parser, Subcommand};


/// Self-play reinforcement learning for chess variants.
#[derive(Parser)]
#[command(name = "vzero", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Rules(cmd::rules::RulesCommand),
    /// Search one position; prints the root's moves, then `bestmove <uci>` on the last line.
    Search(cmd::search::SearchArgs),
    /// Write a fresh, randomly initialised network for a variant.
    Init(cmd::net::InitArgs),
    /// Print a network's policy (top moves) and W/D/L for a position.
    Eval(cmd::net::EvalArgs),
    /// Play a match between two players; prints W/D/L, score, Elo with a 95% interval (and SPRT).
    Match(cmd::arena::MatchArgs),
    /// Bradley-Terry ratings with 95% intervals over the games of PGN files.
    Ratings(cmd::arena::RatingsArgs),
    /// Run as a UCI engine on stdin/stdout (Fairy-Stockfish conventions).
    Uci(cmd::uci::UciArgs),
    /// Annotate the games of a PGN file with evaluations, best lines and mistakes.
    Analyse(cmd::analyse::AnalyseArgs),
    /// Export a network for other tools (TorchScript for Python and ONNX).
    Export(cmd::net::ExportArgs),
    /// Self-play and training together on one machine (resumes a run directory).
    Train(cmd::train::RunArgs),
    /// Self-play alone, writing games into a (possibly shared) run directory.
    Selfplay(cmd::train::RunArgs),
    /// Training alone, on the games that self-play processes write into the run directory
    /// (and on imported and labelled rows).
    Learn(cmd::train::RunArgs),
    /// Import PGN games as training rows (the move played, the result) into a run directory.
    Import(cmd::teacher::ImportArgs),
    /// Label positions with a teacher engine (its move and score) into a run directory.
    Label(cmd::teacher::LabelArgs),
    /// Opening tree of self-play (run directories) or arena (PGN) games: counts, W/D/L, Elo.
    Openings(cmd::openings::OpeningsArgs),
    /// Opening books (`vzero book build`, `vzero book export`).
    #[command(subcommand)]
    Book(cmd::openings::BookCommand),
    /// Rate a run's checkpoint against the baselines and earlier gauntlet checkpoints (arena/ in the run).
    Gauntlet(cmd::train::GauntletArgs),
    /// A run's learning curve: checkpoints at evenly spaced training times against its generation 0 (arena/curve.csv, plots/curve.svg).
    Curve(cmd::train::CurveArgs),
    /// What a run holds and who works on it: newest network, games and rows, rates, last gauntlet, learner, processes.
    Status(cmd::status::StatusArgs),
    /// Check a run's invariants: chunks readable, no game twice, checkpoints complete and in order, no partial file.
    Check(cmd::status::StatusArgs),
    /// Web pages on this machine: play the bots on a board of any variant, analyse positions,
    /// explore a run's openings and watch it train.
    Serve(cmd::serve::ServeArgs),
    /// Benchmarks printing medians and ratios.
    #[command(subcommand)]
    Bench(cmd::bench::BenchCommand),
    /// Fairy-Stockfish NNUE nets (`vzero nnue eval`, `vzero nnue material`, `vzero nnue info`).
    #[command(subcommand)]
    Nnue(cmd::nnue::NnueCommand),
}

fn main() {
    let cli: Cli = cmd::rules::parse_args();
    let result = match cli.command {
        Command::Rules(c) => c.run(),
        Command::Search(a) => cmd::search::search(a),
        Command::Init(a) => cmd::net::init(a),
        Command::Eval(a) => cmd::net::eval(a),
        Command::Bench(b) => cmd::bench::run(b),
        Command::Train(a) => cmd::train::train(a),
        Command::Selfplay(a) => cmd::train::selfplay(a),
        Command::Learn(a) => cmd::train::learn(a),
        Command::Import(a) => cmd::teacher::import(a),
        Command::Label(a) => cmd::teacher::label(a),
        Command::Gauntlet(a) => cmd::train::gauntlet(a),
        Command::Curve(a) => cmd::train::curve(a),
        Command::Status(a) => cmd::status::status(a),
        Command::Check(a) => cmd::status::check(a),
        Command::Match(a) => cmd::arena::match_(a),
        Command::Ratings(a) => cmd::arena::ratings(a),
        Command::Uci(a) => cmd::uci::uci(a),
        Command::Analyse(a) => cmd::analyse::analyse(a),
        Command::Export(a) => cmd::net::export(a),
        Command::Openings(a) => cmd::openings::openings(a),
        Command::Book(c) => cmd::openings::book(c),
        Command::Nnue(c) => cmd::nnue::run(c),
        Command::Serve(a) => cmd::serve::serve(a),
    };
    cmd::rules::exit_on_error(result);
}
