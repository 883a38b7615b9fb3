//! Labelling positions with a teacher: its move becomes the policy target, its score the
//! value target.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use vzero_arena::{Player, PlayerSpec};
use vzero_data::{RunDir, Row, Source};
use vzero_rules::Variant;

use crate::jobs::{done_batches, fnv1a, worker_name};
use crate::positions::LabelPosition;
use crate::rows::RowMaker;
use crate::wdl::score_to_wdl;

/// How to label.
#[derive(Clone, Debug)]
pub struct LabelOptions {
    /// The teacher: any player spec whose player reports a score (`alphabeta:D`, `mcts:N`,
    /// `net:…`, `uci:CMD…`; see [`vzero_arena::player`]).
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
    let failed = AtomicBool::new(false);
    let summary = Mutex::new(LabelSummary { positions: positions.len(), already_done, job_id: id, ..LabelSummary::default() });
    let maker = RowMaker::new(variant);
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let threads = opts.concurrency.min(pending.len()).max(1);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (spec, pending, batches, next, failed, summary, maker, error, pb) =
                (&spec, &pending, &batches, &next, &failed, &summary, &maker, &error, &pb);
            scope.spawn(move || {
                let r = (|| -> Result<()> {
                    let seed = opts.seed.wrapping_add(t as u64 * 0x9e37_79b9);
                    let mut teacher: Option<Box<dyn Player>> = None;
                    loop {
                        if failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&b) = pending.get(k) else { return Ok(()) };
                        let mut rows: Vec<Row> = Vec::with_capacity(batches[b].len());
                        for p in batches[b] {
                            match label_one(spec, variant, seed, &mut teacher, maker, p, opts.cp_scale, summary, pb) {
                                Ok(Some(row)) => rows.push(row),
                                Ok(None) => {}
                                Err(e) => return Err(e),
                            }
                            pb.inc(1);
                        }
                        let worker = worker_name("label", id, b);
                        let meta = maker.meta(Source::Label, &worker, &opts.teacher);
                        run.write_chunk(&worker, &meta, &rows, &[]).with_context(|| format!("writing a chunk into {}", run.location()))?;
                        let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
                        s.labelled += rows.len();
                        s.chunks += 1;
                    }
                })();
                if let Err(e) = r {
                    failed.store(true, Ordering::Relaxed);
                    error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                }
            });
        }
    });
    pb.finish_and_clear();
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut s = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    s.seconds = start.elapsed().as_secs_f64();
    Ok(s)
}

/// Labels one position: the row, or None when it is skipped (counted in `summary`).
#[allow(clippy::too_many_arguments)]
fn label_one(
    spec: &PlayerSpec,
    variant: Variant,
    seed: u64,
    teacher: &mut Option<Box<dyn Player>>,
    maker: &RowMaker,
    p: &LabelPosition,
    cp_scale: f64,
    summary: &Mutex<LabelSummary>,
    pb: &ProgressBar,
) -> Result<Option<Row>> {
    let skip = |why: String| {
        *summary.lock().unwrap_or_else(|e| e.into_inner()).skipped.entry(why).or_insert(0) += 1;
    };
    if p.game.result().is_over() {
        skip("game already over".into());
        return Ok(None);
    }
    let mut last_error = None;
    for attempt in 0..2 {
        if teacher.is_none() {
            match spec.build(variant, seed.wrapping_add(attempt)) {
                Ok(t) => *teacher = Some(t),
                Err(e) if attempt == 0 => {
                    return Err(e.context(format!("starting teacher '{}'", spec.name())));
                }
                Err(e) => {
                    last_error = Some(e);
                    break;
                }
            }
        }
        let t = teacher.as_mut().expect("built above");
        match t.judge(&p.game) {
            Ok((m, Some(score))) => {
                if !p.game.position().legal_moves().contains(&m) {
                    last_error = Some(anyhow!("illegal move"));
                } else {
                    let Some(index) = maker.index(&p.game, m) else {
                        skip("move outside the policy encoding".into());
                        return Ok(None);
                    };
                    let wdl = score_to_wdl(score, cp_scale);
                    let moves_left = p.moves_left.map_or(-1.0, |n| n as f32);
                    return Ok(Some(maker.row(&p.game, vec![(index, 1.0)], wdl, moves_left)));
                }
            }
            Ok((_, None)) => bail!("teacher '{}' gives no score (use alphabeta:D, mcts:N, net:… or a uci: engine that prints `info … score`)", spec.name()),
            Err(e) => last_error = Some(e),
        }
        // restart the teacher (a crashed or confused process) and try once more
        pb.println(format!(
            "warning: teacher failed on {}: {}; restarting it",
            p.game.position().fen(),
            last_error.as_ref().map_or(String::new(), |e| format!("{e:#}"))
        ));
        *teacher = None;
        summary.lock().unwrap_or_else(|e| e.into_inner()).restarts += 1;
    }
    let why = last_error.map_or("teacher failed".to_string(), |e| format!("teacher failed twice: {}", first_line(&format!("{e:#}"))));
    skip(why);
    Ok(None)
}

/// The first line of `s`, without the position-specific details after the engine's name.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(120).collect()
}
