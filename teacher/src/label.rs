//! Labelling positions with a teacher: its move becomes the policy target, its score the
//! value target.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use vzero_arena::{Player, PlayerSpec, PvLine};
use vzero_data::{RunDir, Row, ScoredPosition, Source};
use vzero_arena::Score;
use vzero_rules::{Game, Move, Variant};

use crate::jobs::{done_batches, fnv1a, run_workers, worker_name};
use crate::positions::LabelPosition;
use crate::rows::RowMaker;
use crate::wdl::score_to_wdl;

/// How to label.
#[derive(Clone, Debug)]
pub struct LabelOptions {
    /// The teacher: any player spec whose player reports a score (`alphabeta:D`, `mcts:N`,
    /// `net:…`, `uci:CMD…`; see [`vzero_arena::spec`]).
    pub teacher: String,
    /// Teacher processes (or threads) labelling at once.
    pub concurrency: usize,
    /// Scale of the score logistic ([`crate::score_to_wdl`]).
    pub cp_scale: f64,
    /// Positions per chunk (the unit that a killed job loses at most, per teacher).
    pub rows_per_chunk: usize,
    /// Seed of the teachers' own randomness (tie breaks).
    pub seed: u64,
    /// What the positions are (their source, count and seed): with the teacher and the
    /// variant, the identity of the job, which a rerun must repeat to resume it.
    pub job: String,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// What a labelling job did.
#[derive(Clone, Debug, Default)]
pub struct LabelSummary {
    /// Positions given.
    pub positions: usize,
    /// Positions labelled and written by this call.
    pub labelled: usize,
    /// Positions in batches that an earlier run of the same job had written.
    pub already_done: usize,
    /// Positions skipped, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Teacher restarts after a crash, a hang or an illegal answer.
    pub restarts: usize,
    /// Chunks written by this call.
    pub chunks: usize,
    pub seconds: f64,
    /// The job's id (in its chunks' names).
    pub job_id: u64,
}

impl LabelSummary {
    /// Positions labelled per second of this call.
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.labelled as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Labels `positions` with the teacher of `opts` and writes them into `run` as
/// [`Source::Label`] chunks of `rows_per_chunk` rows: the teacher's move one-hot as the policy
/// target, its score through the logistic as the value target, the plies to the end of the
/// source game (when known) as the moves-left target.
///
/// `concurrency` teachers work at once, each on whole batches. A teacher that fails (crash,
/// timeout, illegal move) is restarted and the position tried once more, then skipped with a
/// warning; a teacher that gives no score at all is an error. Batches that a previous run of
/// the same job wrote are skipped, and every chunk is written atomically, so a killed job
/// resumes where it stopped without duplicates.
pub fn label_positions(run: &RunDir, variant: Variant, positions: &[LabelPosition], opts: &LabelOptions) -> Result<LabelSummary> {
    let start = Instant::now();
    run.check_variant(variant.name())?;
    let spec = PlayerSpec::parse(&opts.teacher).with_context(|| format!("teacher '{}'", opts.teacher))?;
    if opts.concurrency == 0 || opts.rows_per_chunk == 0 {
        bail!("concurrency and rows per chunk must be at least 1");
    }
    if !(opts.cp_scale.is_finite() && opts.cp_scale > 0.0) {
        bail!("the score scale must be > 0, not {}", opts.cp_scale);
    }
    let id = fnv1a(&[
        variant.name().as_bytes(),
        opts.teacher.as_bytes(),
        opts.job.as_bytes(),
        &opts.cp_scale.to_bits().to_le_bytes(),
        &(opts.rows_per_chunk as u64).to_le_bytes(),
        &(positions.len() as u64).to_le_bytes(),
    ]);
    let batches: Vec<&[LabelPosition]> = positions.chunks(opts.rows_per_chunk).collect();
    let done = done_batches(run, "label", id)?;
    let pending: Vec<usize> = (0..batches.len()).filter(|b| !done.contains(b)).collect();
    let already_done: usize = done.iter().filter_map(|&b| batches.get(b)).map(|b| b.len()).sum();
    let todo: usize = pending.iter().map(|&b| batches[b].len()).sum();

    let pb = if opts.progress { ProgressBar::new(todo as u64) } else { ProgressBar::hidden() };
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} positions [{elapsed_precise}, {per_sec}, eta {eta}] {msg}")
            .expect("valid template"),
    );
    let next = AtomicUsize::new(0);
    let summary = Mutex::new(LabelSummary { positions: positions.len(), already_done, job_id: id, ..LabelSummary::default() });
    let maker = RowMaker::new(variant);
    let threads = opts.concurrency.min(pending.len()).max(1);
    let result = run_workers(threads, |t, failed| -> Result<()> {
        let (spec, pending, batches, next, summary, maker, pb) = (&spec, &pending, &batches, &next, &summary, &maker, &pb);
        let seed = opts.seed.wrapping_add(t as u64 * 0x9e37_79b9);
        let mut teacher = Teacher::new(spec, variant, seed);
        loop {
            if failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&b) = pending.get(k) else { return Ok(()) };
            let mut rows: Vec<Row> = Vec::with_capacity(batches[b].len());
            let mut scored: Vec<ScoredPosition> = Vec::with_capacity(batches[b].len());
            for p in batches[b] {
                match label_one(&mut teacher, maker, p, opts.cp_scale, summary, pb) {
                    Ok(Some((row, s))) => {
                        rows.push(row);
                        scored.push(s);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(e),
                }
                pb.inc(1);
            }
            let worker = worker_name("label", id, b);
            let meta = maker.meta(Source::Label, &worker, &opts.teacher);
            run.write_chunk_scored(&worker, &meta, &rows, &[], &scored).with_context(|| format!("writing a chunk into {}", run.location()))?;
            let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
            s.labelled += rows.len();
            s.chunks += 1;
        }
    });
    pb.finish_and_clear();
    result?;
    let mut s = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    s.seconds = start.elapsed().as_secs_f64();
    Ok(s)
}

/// Labels one position: the row and the teacher's raw score, or None when it is skipped
/// (counted in `summary`).
#[allow(clippy::too_many_arguments)]
fn label_one(
    teacher: &mut Teacher,
    maker: &RowMaker,
    p: &LabelPosition,
    cp_scale: f64,
    summary: &Mutex<LabelSummary>,
    pb: &ProgressBar,
) -> Result<Option<(Row, ScoredPosition)>> {
    let skip = |why: String| {
        *summary.lock().unwrap_or_else(|e| e.into_inner()).skipped.entry(why).or_insert(0) += 1;
    };
    if p.game.result().is_over() {
        skip("game already over".into());
        return Ok(None);
    }
    let verdict = teacher.judge(&p.game, &|w| pb.println(w))?;
    summary.lock().unwrap_or_else(|e| e.into_inner()).restarts += std::mem::take(&mut teacher.restarts);
    let (m, score) = match verdict {
        Ok(v) => v,
        Err(why) => {
            skip(why);
            return Ok(None);
        }
    };
    let Some(index) = maker.index(&p.game, m) else {
        skip("move outside the policy encoding".into());
        return Ok(None);
    };
    let wdl = score_to_wdl(score, cp_scale);
    let moves_left = p.moves_left.map_or(-1.0, |n| n as f32);
    let row = maker.row(&p.game, vec![(index, 1.0)], wdl, moves_left);
    Ok(Some((row, scored_position(&p.game, m, score, p.white_result))))
}

/// Plies of history a teacher is given with each position: enough for every repetition a
/// shallow search can reach, and constant work per search for a UCI engine, which replays (and
/// checks against its legal moves) every move of a `position … moves` command.
pub(crate) const TEACHER_HISTORY: usize = 16;

/// A teacher process (or in-process player) that is started on first use and restarted after
/// a failure: a crash, a hang or an illegal move.
pub(crate) struct Teacher<'a> {
    spec: &'a PlayerSpec,
    variant: Variant,
    seed: u64,
    player: Option<Box<dyn Player>>,
    started: bool,
    /// Restarts since the caller last took this count.
    pub restarts: usize,
}

impl<'a> Teacher<'a> {
    /// A teacher of `spec` for `variant` (not started yet).
    pub fn new(spec: &'a PlayerSpec, variant: Variant, seed: u64) -> Teacher<'a> {
        Teacher { spec, variant, seed, player: None, started: false, restarts: 0 }
    }

    /// The teacher's name.
    pub fn name(&self) -> String {
        self.spec.name()
    }

    /// The teacher's legal move and score for the current position of `game`, trying twice
    /// (restarting the teacher in between, with a warning through `warn`); `Ok(Err(why))` when
    /// both tries failed. `Err` when the teacher cannot start the first time or gives no score
    /// at all: the job cannot go on.
    pub fn judge(&mut self, game: &Game, warn: &dyn Fn(String)) -> Result<std::result::Result<(Move, Score), String>> {
        Ok(self.judge_lines(game, warn)?.map(|(m, s, _)| (m, s)))
    }

    /// [`Teacher::judge`] with the other lines of a multi-PV search (see
    /// [`Player::judge_lines`]).
    pub fn judge_lines(&mut self, game: &Game, warn: &dyn Fn(String)) -> Result<std::result::Result<(Move, Score, Vec<PvLine>), String>> {
        let mut last_error = None;
        for attempt in 0..2 {
            if self.player.is_none() {
                match self.spec.build(self.variant, self.seed.wrapping_add(attempt)) {
                    Ok(t) => self.player = Some(t),
                    Err(e) if !self.started => return Err(e.context(format!("starting teacher '{}'", self.spec.name()))),
                    Err(e) => {
                        last_error = Some(e);
                        break;
                    }
                }
                self.started = true;
            }
            let t = self.player.as_mut().expect("built above");
            match t.judge_lines(&game.tail(TEACHER_HISTORY)) {
                Ok((m, Some(score), lines)) => {
                    if game.position().legal_moves().contains(&m) {
                        return Ok(Ok((m, score, lines)));
                    }
                    last_error = Some(anyhow!("illegal move"));
                }
                Ok((_, None, _)) => bail!("teacher '{}' gives no score (use alphabeta:D, mcts:N, net:… or a uci: engine that prints `info … score`)", self.spec.name()),
                Err(e) => last_error = Some(e),
            }
            // restart the teacher (a crashed or confused process) and try once more
            warn(format!(
                "warning: teacher failed on {}: {}; restarting it",
                game.position().fen(),
                last_error.as_ref().map_or(String::new(), |e| format!("{e:#}"))
            ));
            self.player = None;
            self.restarts += 1;
        }
        Ok(Err(last_error.map_or("teacher failed".to_string(), |e| format!("teacher failed twice: {}", first_line(&format!("{e:#}"))))))
    }
}

/// The teacher's verdict on the current position of `game` as a [`ScoredPosition`]
/// (`white_result`: the source game's result for White, when known).
pub fn scored_position(game: &vzero_rules::Game, best: vzero_rules::Move, score: vzero_arena::Score, white_result: Option<f32>) -> ScoredPosition {
    ScoredPosition {
        start_fen: game.start().fen(),
        moves: game.uci_moves(),
        score: match score {
            vzero_arena::Score::Cp(c) => vzero_data::TeacherScore::Cp(c),
            vzero_arena::Score::Mate(m) => vzero_data::TeacherScore::Mate(m),
        },
        best: game.position().uci(best),
        result: white_result,
        game: None,
    }
}

/// The first line of `s`, without the position-specific details after the engine's name.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(120).collect()
}
