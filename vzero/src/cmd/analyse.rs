//! `vzero analyse`: annotates the games of a PGN file with the engine's evaluations (the
//! analysis itself is `vzero_engine::analysis`; this module reads, prints and writes).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use vzero_engine::analysis::{analyse_game, annotated_pgn, csv_rows, eval_svg, GameAnalysis, CSV_HEADER};
use vzero_engine::{Evaluator, GoLimits, NetEvaluator, ThinkConfig, Thinker};
use vzero_model::DeviceChoice;
use vzero_openings::{replay, PgnReader, RawGame, ReplayedGame, Skipped};
use vzero_rules::{Color, Variant};

use crate::cmd::out::write_atomic;

/// Arguments of `vzero analyse`.
#[derive(Args, Debug)]
pub struct AnalyseArgs {
    /// PGN file with the games (UCI moves in Fairy-Stockfish notation, or SAN as vzero writes it).
    pub games: PathBuf,
    /// Variant name, or a path to a variant definition (.toml).
    #[arg(long)]
    pub variant: String,
    /// Checkpoint evaluating the positions, with its recorded knowledge blend (default: no
    /// network: uniform priors and material value).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Simulations per position (default 400 unless --movetime is given).
    #[arg(long, conflicts_with = "movetime")]
    pub nodes: Option<u64>,
    /// Milliseconds per position.
    #[arg(long)]
    pub movetime: Option<u64>,
    /// Annotated PGN to write (default: printed on stdout when no other output is asked for).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// CSV with one row per move.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// SVG evaluation graph, one panel per game.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Search threads (root-parallel workers, one network each).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Device of the network: auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// A game read from the file: its result token as written and the replayed game (with the
/// file's tags in `game.raw.tags`).
struct ReadGame {
    result: String,
    game: ReplayedGame,
}

fn read_games(path: &std::path::Path, variant: Variant) -> Result<(Vec<ReadGame>, Vec<Skipped>)> {
    let file = std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut reader = PgnReader::new(std::io::BufReader::new(file), path.display().to_string());
    let (mut games, mut skipped) = (Vec::new(), Vec::new());
    while let Some(g) = reader.next_game()? {
        match g {
            Err(s) => skipped.push(s),
            Ok(raw) => {
                let result = raw.result.clone();
                // Unfinished games are analysed too: replay checks results, so give it one.
                let raw = if result == "*" { RawGame { result: "1/2-1/2".into(), ..raw } } else { raw };
                match replay(raw, variant) {
                    Ok(game) => games.push(ReadGame { result, game }),
                    Err(s) => skipped.push(s),
                }
            }
        }
    }
    Ok((games, skipped))
}

/// Runs `vzero analyse`.
pub fn analyse(a: AnalyseArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    if a.threads == 0 || a.threads > 64 {
        bail!("--threads must be 1 to 64, not {}", a.threads);
    }
    if a.nodes == Some(0) || a.movetime == Some(0) {
        bail!("--nodes and --movetime must be positive");
    }
    let (games, skipped) = read_games(&a.games, variant)?;
    for s in &skipped {
        eprintln!("skipped {s}");
    }
    if games.is_empty() {
        bail!("{}: no game to analyse ({} skipped)", a.games.display(), skipped.len());
    }
    vzero_model::set_threads(1);
    let device = a.device.resolve()?;
    let mut evals = Vec::with_capacity(a.threads);
    for _ in 0..a.threads {
        evals.push(match &a.model {
            None => Evaluator::Material(vzero_mcts::MaterialEvaluator::default()),
            Some(p) => Evaluator::Net(Box::new(NetEvaluator::load(p, variant, device).with_context(|| format!("loading {}", p.display()))?.0)),
        });
    }
    let mut thinker = Thinker::new(evals, ThinkConfig::default(), 0);
    let limits = GoLimits {
        nodes: a.movetime.is_none().then_some(a.nodes.unwrap_or(400)),
        movetime: a.movetime.map(Duration::from_millis),
        ..GoLimits::default()
    };
    let positions: u64 = games.iter().map(|g| g.game.moves.len() as u64 + 1).sum();
    let bar = if a.no_progress { ProgressBar::hidden() } else { ProgressBar::new(positions) };
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} positions  {msg}  [{elapsed_precise}, eta {eta}]").expect("valid template"));
    let t0 = Instant::now();
    let mut analyses: Vec<GameAnalysis> = Vec::with_capacity(games.len());
    for (i, g) in games.iter().enumerate() {
        bar.set_message(format!("game {} of {}", i + 1, games.len()));
        thinker.clear();
        analyses.push(analyse_game(&mut thinker, &g.game.start, &g.game.moves, &limits, &mut || bar.inc(1))?);
    }
    bar.finish_and_clear();

    let annotator = format!(
        "vzero {} {} {}",
        env!("CARGO_PKG_VERSION"),
        a.model.as_ref().map_or("(no network)".to_string(), |p| p.display().to_string()),
        a.movetime.map_or_else(|| format!("nodes {}", limits.nodes.unwrap_or(0)), |m| format!("movetime {m}"))
    );
    let mut pgn = String::new();
    let mut csv = String::from(CSV_HEADER);
    for (i, (g, an)) in games.iter().zip(&analyses).enumerate() {
        let mut tags = g.game.raw.tags.clone();
        match tags.iter_mut().find(|(k, _)| k == "Annotator") {
            Some(t) => t.1 = annotator.clone(),
            None => tags.push(("Annotator".into(), annotator.clone())),
        }
        pgn += &annotated_pgn(&tags, &g.game.start, an, &g.result);
        csv += &csv_rows(i + 1, an);
    }
    if let Some(p) = &a.out {
        write_atomic(p, &pgn)?;
    }
    if let Some(p) = &a.csv {
        write_atomic(p, &csv)?;
    }
    if let Some(p) = &a.svg {
        let titled: Vec<(String, &GameAnalysis)> = games
            .iter()
            .zip(&analyses)
            .enumerate()
            .map(|(i, (g, an))| (format!("{}. {} – {} ({})", i + 1, g.game.raw.white, g.game.raw.black, g.result), an))
            .collect();
        write_atomic(p, &eval_svg(&titled))?;
    }
    if a.out.is_none() && a.csv.is_none() && a.svg.is_none() {
        print!("{pgn}");
    }
    // Summary on stderr: per game, each side's inaccuracies/mistakes/blunders and mean loss.
    for (i, (g, an)) in games.iter().zip(&analyses).enumerate() {
        let side = |c: Color| {
            let (i, m, b) = an.counts(c);
            format!("{i}/{m}/{b}, mean loss {:.3}", an.mean_loss(c))
        };
        eprintln!(
            "game {} ({} – {}, {}, {} plies): White {}; Black {}",
            i + 1,
            g.game.raw.white,
            g.game.raw.black,
            g.result,
            an.moves.len(),
            side(Color::White),
            side(Color::Black)
        );
    }
    eprintln!(
        "analysed {} games ({} positions) in {:.1} s, {} skipped; inaccuracies/mistakes/blunders per side above",
        games.len(),
        positions,
        t0.elapsed().as_secs_f64(),
        skipped.len()
    );
    Ok(())
}
