//! `vzero openings` (opening tree export) and `vzero book build` (opening book).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::cmd::out::write_atomic;
use clap::{Args, Subcommand, ValueEnum};
use vzero_openings::{scan, to_csv, to_json, to_markdown, tree_svg, BookBuilder, Filter, Input, OpeningTree, Summary};
use vzero_rules::Variant;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Csv,
    Json,
    Md,
}

/// Where games come from and which count (shared by `openings` and `book build`).
#[derive(Args, Debug)]
pub struct GameArgs {
    /// Variant name, or a path to a variant definition (.toml); default: the variant the run
    /// directories among --from record.
    #[arg(long)]
    pub variant: Option<String>,
    /// Run directories (their data/*.h5 chunks) and/or PGN files.
    #[arg(long, required = true, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Plies of each game that count (depth of the tree / book).
    #[arg(long, default_value_t = 8)]
    pub plies: usize,
    /// Keep only lines (book: moves) reached by at least this many games.
    #[arg(long, default_value_t = 1)]
    pub min_games: u64,
    /// Network generation range A..B (inclusive; A.. or ..B open), from `gen-NNNNNN` in the
    /// network name (PGN: the Network tag, else the player names).
    #[arg(long)]
    pub generations: Option<String>,
    /// Only games between these two players, either colour: A,B.
    #[arg(long)]
    pub players: Option<String>,
    /// Only decisive games.
    #[arg(long)]
    pub decisive: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Print every skipped game (default: the first 10).
    #[arg(long)]
    pub show_skipped: bool,
}

impl GameArgs {
    fn filter(&self) -> Result<Filter> {
        Ok(Filter {
            generations: self.generations.as_deref().map(Filter::parse_generations).transpose()?,
            players: self.players.as_deref().map(Filter::parse_players).transpose()?,
            decisive: self.decisive,
        })
    }

    /// The variant of the games: `--variant`, else the one the run directories record. Every
    /// run among the inputs must be of it (one error naming the run, not a skip per game).
    fn variant(&self, inputs: &[Input]) -> Result<Variant> {
        let mut runs = Vec::new();
        for i in inputs {
            if let Input::RunDir(p) = i {
                let run = vzero_data::RunDir::open_existing(p)?;
                let recorded = match run.stored_variant() {
                    Ok(Some(v)) => Some(v),
                    _ => run.data_variant()?.map(|(v, _)| v),
                };
                if let Some(v) = recorded {
                    let name = Variant::load(&v).map(|v| v.name().to_string()).unwrap_or(v);
                    runs.push((p.display().to_string(), name));
                }
            }
        }
        let variant = match (&self.variant, runs.first()) {
            (Some(v), _) => Variant::load(v)?,
            (None, Some((_, v))) => Variant::load(v)?,
            (None, None) => bail!("--variant is needed: no run directory among --from records one (PGN files name none)"),
        };
        if let Some((run, v)) = runs.iter().find(|(_, v)| v != variant.name()) {
            bail!("--from {run} is a run of {v}, not of {}", variant.name());
        }
        Ok(variant)
    }

    fn inputs(&self) -> Result<Vec<Input>> {
        self.from
            .iter()
            .map(|p| {
                if !p.exists() && !vzero_data::remote::is_remote_spec(p) {
                    bail!("--from {}: no such file or directory", p.display());
                }
                Ok(Input::detect(p))
            })
            .collect()
    }
}

fn report(sum: &Summary, show_all: bool) {
    let shown = if show_all { sum.skipped.len() } else { sum.skipped.len().min(10) };
    for s in &sum.skipped[..shown] {
        eprintln!("skipped {s}");
    }
    if shown < sum.skipped.len() {
        eprintln!("… and {} more skipped (--show-skipped lists them all)", sum.skipped.len() - shown);
    }
    eprintln!("{}", sum.line());
}

/// Arguments of `vzero openings`.
#[derive(Args, Debug)]
pub struct OpeningsArgs {
    #[command(flatten)]
    pub games: GameArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: Format,
    /// Write here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also draw the top lines as an SVG (stacked W/D/L bars).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Rows in the SVG.
    #[arg(long, default_value_t = 40)]
    pub svg_rows: usize,
}

pub fn openings(a: OpeningsArgs) -> Result<()> {
    let inputs = a.games.inputs()?;
    let variant = a.games.variant(&inputs)?;
    let filter = a.games.filter()?;
    let mut tree = OpeningTree::new(a.games.plies);
    let sum = scan(&inputs, variant, &filter, !a.games.no_progress, |g| tree.add(g))?;
    report(&sum, a.games.show_skipped);
    let rows = tree.rows(a.games.min_games);
    let roots = tree.roots();
    let text = match a.format {
        Format::Csv => to_csv(&rows),
        Format::Json => to_json(&rows, &roots, sum.skipped.len(), variant.name()),
        Format::Md => to_markdown(&rows, &roots, sum.skipped.len(), variant.name()),
    };
    match &a.out {
        Some(p) => write_atomic(p, &text)?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    if let Some(p) = &a.svg {
        let title = format!("{} opening tree: {} games, {} plies, lines with ≥ {} games", variant.name(), sum.counted, a.games.plies, a.games.min_games);
        write_atomic(p, &tree_svg(&rows, &title, a.svg_rows))?;
    }
    Ok(())
}

/// `vzero book …`.
#[derive(Subcommand, Debug)]
pub enum BookCommand {
    /// Build an opening book (Zobrist-keyed JSON, see openings/README.md) from games.
    Build(BookBuildArgs),
    /// Write a book's positions for other tools (EPD, as Fairy-Stockfish's match tools read).
    Export(BookExportArgs),
}

/// Formats of `vzero book export`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormat {
    /// One line per position: FEN, `bm` with the book moves, `c0` with their weights.
    Epd,
}

/// Arguments of `vzero book export`.
#[derive(Args, Debug)]
pub struct BookExportArgs {
    /// Book file (`vzero book build`).
    #[arg(long)]
    pub book: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "epd")]
    pub format: ExportFormat,
    /// File to write (atomically), e.g. books/empire.epd for variantfishtest.
    #[arg(long)]
    pub out: PathBuf,
    /// Variant definition file, for a book of a variant that is not built in (default: the
    /// variant named in the book).
    #[arg(long)]
    pub variant: Option<String>,
}

/// Arguments of `vzero book build`.
#[derive(Args, Debug)]
pub struct BookBuildArgs {
    #[command(flatten)]
    pub games: GameArgs,
    /// Book file to write (atomically).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn book(c: BookCommand) -> Result<()> {
    match c {
        BookCommand::Build(a) => {
            let inputs = a.games.inputs()?;
            let variant = a.games.variant(&inputs)?;
            let filter = a.games.filter()?;
            let mut b = BookBuilder::new(variant, a.games.plies);
            let sum = scan(&inputs, variant, &filter, !a.games.no_progress, |g| b.add(g))?;
            report(&sum, a.games.show_skipped);
            let book = b.finish(a.games.min_games);
            crate::cmd::out::create_parent(&a.out)?;
            book.save(&a.out)?;
            let moves: usize = book.positions().iter().map(|p| p.moves.len()).sum();
            println!("book {}: {} positions, {} moves, {} plies, from {} games", a.out.display(), book.positions().len(), moves, book.plies(), sum.counted);
            Ok(())
        }
        BookCommand::Export(a) => {
            let book = vzero_openings::Book::load(&a.book)?;
            let variant = Variant::load(a.variant.as_deref().unwrap_or(book.variant()))
                .map_err(|e| anyhow::anyhow!("{}: variant of the book: {e}", a.book.display()))?;
            if variant.name() != book.variant() {
                bail!("{} is a book of {}, not of {}", a.book.display(), book.variant(), variant.name());
            }
            let (text, lines) = match a.format {
                ExportFormat::Epd => vzero_openings::book_to_epd(&book, variant)?,
            };
            write_atomic(&a.out, &text)?;
            println!("wrote {} ({lines} positions of {} from {})", a.out.display(), variant.name(), a.book.display());
            Ok(())
        }
    }
}
