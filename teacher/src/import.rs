//! Importing games: PGN games replayed into training rows.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use vzero_data::{RunDir, Row, Source};
use vzero_openings::{for_each_game, replay, Input, ReplayedGame, Skipped};
use vzero_rules::{Color, Game, Variant};

use crate::jobs::{done_batches, fnv1a, worker_name};
use crate::rows::RowMaker;

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Policy target smoothing ε: the move played gets `1 − ε`, every other legal move
    /// `ε / (n − 1)`. 0 (the default) is one-hot on the move played.
    pub label_smoothing: f32,
    /// Rows per chunk.
    pub rows_per_chunk: usize,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { label_smoothing: 0.0, rows_per_chunk: 2000, progress: false }
    }
}

/// What an import did.
#[derive(Clone, Debug, Default)]
pub struct ImportSummary {
    /// Games read (imported or skipped) in files imported by this call.
    pub games: usize,
    /// Games whose rows were written (or were already there from an earlier run).
    pub imported: usize,
    /// Rows written by this call.
    pub rows: usize,
    /// Rows of batches an earlier (killed) run had already written.
    pub rows_already_there: usize,
    /// Chunks written.
    pub chunks: usize,
    /// Games skipped, each with `file:line: why`.
    pub skipped: Vec<Skipped>,
    /// Files whose every batch was already in the run (imported before).
    pub already_imported: Vec<PathBuf>,
    pub seconds: f64,
}

/// Replays the games of the PGN `files` and writes their positions into `run` as
/// [`Source::Import`] chunks: for each position before a move, the move played as the policy
/// target (one-hot, or smoothed by `label_smoothing`), the game's result for the side to move
/// as the value target, the plies to the end as the moves-left target, the next move played as
/// the opponent-reply target, and the quiescent material target. Games that do not parse, do
/// not replay (illegal move, bad FEN, another variant) or have no result are skipped and
/// reported with their `file:line`. Nothing else of the run is touched.
///
/// Each file is a job of its own (identified by its contents): rerunning an import after a
/// kill writes only the missing batches, and importing the same file twice writes nothing the
/// second time.
pub fn import_games(run: &RunDir, variant: Variant, files: &[PathBuf], opts: &ImportOptions) -> Result<ImportSummary> {
    let start = Instant::now();
    run.check_variant(variant.name())?;
    if opts.rows_per_chunk == 0 {
        bail!("rows per chunk must be at least 1");
    }
    if !(0.0..1.0).contains(&opts.label_smoothing) {
        bail!("label smoothing must be in [0, 1), not {}", opts.label_smoothing);
    }
    let maker = RowMaker::new(variant);
    let mut summary = ImportSummary::default();
    for file in files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let id = fnv1a(&[
            variant.name().as_bytes(),
            &bytes,
            &opts.label_smoothing.to_bits().to_le_bytes(),
            &(opts.rows_per_chunk as u64).to_le_bytes(),
        ]);
        let done = done_batches(run, "import", id)?;
        let pb = if opts.progress { ProgressBar::new(bytes.len() as u64) } else { ProgressBar::hidden() };
        pb.set_style(
            ProgressStyle::with_template("{bar:40} {msg} [{elapsed_precise}, eta {eta}]").expect("valid template"),
        );
        let name = file.display().to_string();
        let mut buffer: Vec<Row> = Vec::new();
        let mut batch = 0usize;
        let mut written = 0usize;
        let mut error: Option<anyhow::Error> = None;
        let mut flush = |rows: Vec<Row>, batch: usize, summary: &mut ImportSummary| -> Result<()> {
            if done.contains(&batch) {
                summary.rows_already_there += rows.len();
                return Ok(());
            }
            let worker = worker_name("import", id, batch);
            let meta = maker.meta(Source::Import, &worker, &format!("import:{name}"));
            run.write_chunk(&worker, &meta, &rows, &[]).with_context(|| format!("writing a chunk into {}", run.location()))?;
            summary.rows += rows.len();
            summary.chunks += 1;
            written += 1;
            Ok(())
        };
        for_each_game(&[Input::Pgn(file.clone())], |raw| {
            summary.games += 1;
            match raw.and_then(|r| replay(r, variant)) {
                Ok(g) => {
                    if g.moves.is_empty() {
                        summary.skipped.push(Skipped { origin: g.raw.origin.clone(), reason: "no moves".into(), chunk: false });
                    } else {
                        summary.imported += 1;
                        buffer.extend(game_rows(&maker, &g, opts.label_smoothing));
                    }
                }
                Err(s) => summary.skipped.push(s),
            }
            while buffer.len() >= opts.rows_per_chunk {
                let rest = buffer.split_off(opts.rows_per_chunk);
                let rows = std::mem::replace(&mut buffer, rest);
                if let Err(e) = flush(rows, batch, &mut summary) {
                    error = Some(e);
                    return false;
                }
                batch += 1;
            }
            pb.set_message(format!("{name}: {} games, {} skipped", summary.imported, summary.skipped.len()));
            true
        })?;
        if let Some(e) = error {
            return Err(e);
        }
        if !buffer.is_empty() {
            flush(std::mem::take(&mut buffer), batch, &mut summary)?;
        }
        pb.finish_and_clear();
        if written == 0 && !done.is_empty() {
            summary.already_imported.push(file.clone());
        }
    }
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// The rows of one replayed game.
fn game_rows(maker: &RowMaker, g: &ReplayedGame, smoothing: f32) -> Vec<Row> {
    let n = g.moves.len();
    let mut game = Game::new(g.start);
    let mut rows = Vec::with_capacity(n);
    for (t, &m) in g.moves.iter().enumerate() {
        let side = game.position().side_to_move();
        let wdl = if g.white_score == 0.5 {
            [0.0, 1.0, 0.0]
        } else if (g.white_score == 1.0) == (side == Color::White) {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 0.0, 1.0]
        };
        let policy = policy_target(maker, &game, m, smoothing);
        let mut row = maker.row(&game, policy, wdl, (n - t) as f32);
        game.play(m);
        if let Some(&reply) = g.moves.get(t + 1) {
            if let Some(i) = maker.index(&game, reply) {
                row.opponent_policy = vec![(i, 1.0)];
                row.opponent_weight = 1.0;
            }
        }
        rows.push(row);
    }
    rows
}

/// One-hot on `played`, or smoothed over the legal moves.
fn policy_target(maker: &RowMaker, game: &Game, played: vzero_rules::Move, smoothing: f32) -> Vec<(u32, f32)> {
    let Some(idx) = maker.index(game, played) else { return Vec::new() };
    if smoothing <= 0.0 {
        return vec![(idx, 1.0)];
    }
    let legal = maker.legal(game);
    if legal.len() < 2 {
        return vec![(idx, 1.0)];
    }
    let other = smoothing / (legal.len() - 1) as f32;
    legal.into_iter().map(|(i, _)| (i as u32, if i as u32 == idx { 1.0 - smoothing } else { other })).collect()
}
