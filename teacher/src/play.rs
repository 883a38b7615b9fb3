//! Games a teacher plays against itself, the way Fairy-Stockfish's training-data generator
//! plays them: a few uniformly random moves early (so that games differ), the teacher's move at
//! every other ply, and every position the teacher searched kept with its raw score
//! ([`ScoredPosition`]), its move as a policy row and, once the game is over, the game's result.
//!
//! This is the data step of `vzero nnue loop`: the teacher is a UCI engine (Fairy-Stockfish at a
//! node count) whose `EvalFile` is the newest published net, so each round's games are played
//! and scored by the previous round's net.
//!
//! Each worker thread drives one teacher process and writes its games in chunks of
//! `positions_per_chunk` kept positions or `games_per_chunk` games, whichever comes first
//! ([`Source::Label`], with the games' records), each chunk atomically: a killed job loses at
//! most the unwritten games of each worker, and what was written is whole. While it plays, the
//! job keeps a heartbeat (role `label`: games and positions with their rates) for `vzero status`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::seq::{IteratorRandom, SliceRandom};
use rand::SeedableRng;
use vzero_arena::{PlayerSpec, Score};
use vzero_data::heartbeat::BEAT_PERIOD;
use vzero_data::{ChunkName, GameRecord, Heartbeat, Progress, RunDir, Row, ScoredPosition, Source};
use vzero_rules::{Color, Game, Outcome, Variant};

use crate::jobs::{fnv1a, run_workers};
use crate::label::{scored_position, Teacher};
use crate::rows::RowMaker;
use crate::wdl::score_to_wdl;

/// How the teacher's games are played.
#[derive(Clone, Debug)]
pub struct PlayOptions {
    /// The teacher: a player spec that reports scores (`uci:…`, `alphabeta:D`, …).
    pub teacher: String,
    /// Teachers playing at once (one game each).
    pub concurrency: usize,
    /// Games to play in all.
    pub games: usize,
    /// Stop starting games after this instant (games under way are finished); each worker
    /// plays at least one game whatever the deadline.
    pub deadline: Option<Instant>,
    /// Random moves per game (Fairy-Stockfish's generator: 5) ...
    pub random_moves: u32,
    /// ... played at plies drawn from `0..random_until` (its default: 24).
    pub random_until: u32,
    /// Positions before this ply are not kept (the start repeats in every game).
    pub write_from: u32,
    /// A game that reaches this many plies stops without a result.
    pub max_plies: u32,
    /// The game is adjudicated as won by the side whose score (the teacher's, from the mover's
    /// view) is at least this many centipawns, or that has a mate (Fairy-Stockfish's
    /// generator's `eval_limit`, 3000 internal units ≈ 1,440 cp); 0: never.
    pub adjudicate_cp: i32,
    /// Scale of the score logistic for the rows' value targets ([`crate::score_to_wdl`]).
    pub cp_scale: f64,
    /// Games per chunk at most.
    pub games_per_chunk: usize,
    /// A chunk is written once its games hold this many kept positions (big chunks: a day's
    /// labels in hundreds of files, not a hundred thousand, read back many times faster).
    pub positions_per_chunk: usize,
    /// Seed of the random moves and of the teachers.
    pub seed: u64,
    /// A name for this job in chunk names (e.g. the loop's round).
    pub job: String,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

impl Default for PlayOptions {
    fn default() -> Self {
        PlayOptions {
            teacher: String::new(),
            concurrency: 1,
            games: 1,
            deadline: None,
            random_moves: 5,
            random_until: 24,
            write_from: 8,
            max_plies: 400,
            adjudicate_cp: 1500,
            cp_scale: crate::DEFAULT_CP_SCALE,
            games_per_chunk: 1024,
            positions_per_chunk: 16_384,
            seed: 1,
            job: "play".into(),
            progress: false,
        }
    }
}

/// What [`play_games`] did.
#[derive(Clone, Debug, Default)]
pub struct PlaySummary {
    /// Games finished and written.
    pub games: usize,
    /// Positions kept (searched by the teacher, from `write_from` on, and with a multi-PV
    /// teacher the positions its other lines lead to).
    pub positions: usize,
    /// Of them, positions a multi-PV line leads to (off the games' paths).
    pub siblings: usize,
    /// Teacher searches in all (kept or not).
    pub searches: usize,
    /// Chunks written.
    pub chunks: usize,
    /// White wins, draws, Black wins.
    pub results: [usize; 3],
    /// Games ended by a rule, by adjudication, at `max_plies`.
    pub reasons: BTreeMap<String, usize>,
    /// Games abandoned (the teacher failed twice in a row), by reason.
    pub abandoned: BTreeMap<String, usize>,
    /// Teacher restarts.
    pub restarts: usize,
    pub seconds: f64,
    /// What went wrong without stopping the games (e.g. no heartbeat for `vzero status`).
    pub warnings: Vec<String>,
}

impl PlaySummary {
    /// Positions kept per second.
    pub fn per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.positions as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Adds `other` (a later segment of the same job) to this summary: counts and seconds
    /// summed, results and reasons merged, warnings kept. Destructured, so that a field added
    /// to the summary cannot be left out of the sum unnoticed.
    pub fn add(&mut self, other: PlaySummary) {
        let PlaySummary { games, positions, siblings, searches, chunks, results, reasons, abandoned, restarts, seconds, warnings } = other;
        self.games += games;
        self.positions += positions;
        self.siblings += siblings;
        self.searches += searches;
        self.chunks += chunks;
        for (t, n) in self.results.iter_mut().zip(results) {
            *t += n;
        }
        for (k, v) in reasons {
            *self.reasons.entry(k).or_insert(0) += v;
        }
        for (k, v) in abandoned {
            *self.abandoned.entry(k).or_insert(0) += v;
        }
        self.restarts += restarts;
        self.seconds += seconds;
        self.warnings.extend(warnings);
    }
}

/// One finished game: its record, its kept positions and their rows.
struct PlayedGame {
    record: GameRecord,
    scored: Vec<ScoredPosition>,
    rows: Vec<Row>,
    searches: usize,
    /// Positions kept (`scored.len()` before a flush takes them).
    kept: usize,
    /// Of them, positions off the game's path (multi-PV lines).
    siblings: usize,
}

/// Plays `opts.games` teacher games (or until `opts.deadline`) and writes them into `run`.
pub fn play_games(run: &RunDir, variant: Variant, opts: &PlayOptions) -> Result<PlaySummary> {
    let start = Instant::now();
    run.check_variant(variant.name())?;
    let spec = PlayerSpec::parse(&opts.teacher).with_context(|| format!("teacher '{}'", opts.teacher))?;
    if opts.concurrency == 0 || opts.games_per_chunk == 0 || opts.positions_per_chunk == 0 {
        bail!("concurrency, games per chunk and positions per chunk must be at least 1");
    }
    if opts.random_moves > opts.random_until {
        bail!("{} random moves do not fit in the first {} plies", opts.random_moves, opts.random_until);
    }
    let id = fnv1a(&[variant.name().as_bytes(), opts.teacher.as_bytes(), opts.job.as_bytes(), &opts.seed.to_le_bytes()]);
    // Games are seeded by the job, its game number and the chunks the job already wrote, so a
    // rerun of the same job (after a kill, or a loop's round played again) plays new games
    // rather than the same ones again (the teacher is deterministic at a node count).
    let tag = format!("play_{id:016x}_");
    let earlier = run.list_chunk_names()?.iter().filter(|n| ChunkName::parse(n).is_some_and(|c| c.worker.starts_with(&tag))).count() as u64;
    let chunk_base = earlier as usize;
    let pb = if opts.progress { ProgressBar::new(opts.games as u64) } else { ProgressBar::hidden() };
    pb.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} games [{elapsed_precise}, eta {eta}] {msg}").expect("valid template"));
    let next = AtomicUsize::new(0);
    let summary = Mutex::new(PlaySummary::default());
    // games and positions finished (written or pending), for the heartbeat
    let done = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let counters = done.clone();
    let source = move || Progress { games: counters.0.load(Ordering::Relaxed), rows: counters.1.load(Ordering::Relaxed), ..Progress::default() };
    let heartbeat = match Heartbeat::start(run, "label", BEAT_PERIOD, Box::new(source)) {
        Ok(h) => Some(h),
        Err(e) => {
            summary.lock().unwrap_or_else(|e| e.into_inner()).warnings.push(format!("no heartbeat for `vzero status`: {e}"));
            None
        }
    };
    let maker = RowMaker::new(variant);
    let threads = opts.concurrency.min(opts.games).max(1);
    let result = run_workers(threads, |t, failed| -> Result<()> {
        let (spec, next, summary, maker, pb, done) = (&spec, &next, &summary, &maker, &pb, &done);
        let mut teacher = Teacher::new(spec, variant, opts.seed.wrapping_add(t as u64 * 0x9e37_79b9));
        let mut pending: Vec<PlayedGame> = Vec::new();
        let mut pending_kept = 0usize; // positions kept by the pending games
        let mut chunk_no = chunk_base;
        let flush = |pending: &mut Vec<PlayedGame>, chunk_no: &mut usize| -> Result<()> {
            if pending.is_empty() {
                return Ok(());
            }
            let worker = format!("play_{id:016x}_w{t:02}_c{chunk_no:05}");
            *chunk_no += 1;
            let games: Vec<GameRecord> = pending.iter().map(|g| g.record.clone()).collect();
            let rows: Vec<Row> = pending.iter_mut().flat_map(|g| std::mem::take(&mut g.rows)).collect();
            // each position names its game's index among the chunk's games (the held-out split)
            let scored: Vec<ScoredPosition> = pending
                .iter_mut()
                .enumerate()
                .flat_map(|(i, g)| std::mem::take(&mut g.scored).into_iter().map(move |s| ScoredPosition { game: Some(i as u32), ..s }))
                .collect();
            let meta = maker.meta(Source::Label, &worker, &opts.teacher);
            run.write_chunk_scored(&worker, &meta, &rows, &games, &scored).with_context(|| format!("writing a chunk into {}", run.location()))?;
            let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
            s.chunks += 1;
            for g in pending.drain(..) {
                s.games += 1;
                s.positions += g.kept;
                s.siblings += g.siblings;
                s.searches += g.searches;
                let k = match g.record.result.as_str() {
                    "1-0" => 0,
                    "0-1" => 2,
                    _ => 1,
                };
                s.results[k] += 1;
                *s.reasons.entry(g.record.reason.clone()).or_insert(0) += 1;
            }
            Ok(())
        };
        // The deadline counts from each worker's first game on: a teacher that started slowly
        // (a loaded machine, Python importing pyffish) still labels a game before it stops.
        let mut played_one = false;
        loop {
            if failed.load(Ordering::Relaxed) || (played_one && opts.deadline.is_some_and(|d| Instant::now() >= d)) {
                break;
            }
            played_one = true;
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= opts.games {
                break;
            }
            let mut rng = StdRng::seed_from_u64(fnv1a(&[&id.to_le_bytes(), &earlier.to_le_bytes(), &(k as u64).to_le_bytes()]));
            let warn = |w: String| pb.println(w);
            match play_one(&mut teacher, variant, maker, opts, &mut rng, &warn)? {
                Ok(g) => {
                    done.0.fetch_add(1, Ordering::Relaxed);
                    done.1.fetch_add(g.kept as u64, Ordering::Relaxed);
                    pending_kept += g.kept;
                    pending.push(g)
                }
                Err(why) => {
                    let mut s = summary.lock().unwrap_or_else(|e| e.into_inner());
                    *s.abandoned.entry(why).or_insert(0) += 1;
                }
            }
            summary.lock().unwrap_or_else(|e| e.into_inner()).restarts += std::mem::take(&mut teacher.restarts);
            pb.inc(1);
            if pending.len() >= opts.games_per_chunk || pending_kept >= opts.positions_per_chunk {
                flush(&mut pending, &mut chunk_no)?;
                pending_kept = 0;
            }
        }
        flush(&mut pending, &mut chunk_no)
    });
    pb.finish_and_clear();
    drop(heartbeat); // its last record says `stopped`
    result?;
    let mut s = summary.into_inner().unwrap_or_else(|e| e.into_inner());
    s.seconds = start.elapsed().as_secs_f64();
    Ok(s)
}

/// Plays one game; `Ok(Err(reason))` when the teacher failed twice on one position (the game is
/// abandoned, the teacher restarted); `Err` when the teacher cannot be used at all.
fn play_one(teacher: &mut Teacher, variant: Variant, maker: &RowMaker, opts: &PlayOptions, rng: &mut StdRng, warn: &dyn Fn(String)) -> Result<std::result::Result<PlayedGame, String>> {
    let mut random_plies: Vec<u32> = (0..opts.random_until).choose_multiple(rng, opts.random_moves as usize);
    random_plies.sort_unstable();
    let mut game = Game::startpos(variant);
    let (mut scored, mut rows, mut kept_at) = (Vec::new(), Vec::new(), Vec::new());
    let (mut priors, mut values) = (Vec::new(), Vec::new());
    let (mut searches, mut siblings) = (0usize, 0usize);
    let mut adjudicated: Option<Color> = None;
    let reason;
    loop {
        let r = game.result();
        if r.is_over() {
            reason = r.reason.to_string();
            break;
        }
        let ply = game.moves().len() as u32;
        if ply >= opts.max_plies {
            reason = "max-plies".to_string();
            break;
        }
        let legal = game.position().legal_moves();
        if random_plies.binary_search(&ply).is_ok() {
            let &m = legal.choose(rng).expect("a game that is not over has a legal move");
            priors.push(1.0 / legal.len() as f32);
            values.push(0.0);
            game.play(m);
            continue;
        }
        let (m, score, lines) = match teacher.judge_lines(&game, warn)? {
            Ok(v) => v,
            Err(why) => return Ok(Err(why)),
        };
        searches += 1;
        let wdl = score_to_wdl(score, opts.cp_scale);
        if ply >= opts.write_from {
            if let Some(index) = maker.index(&game, m) {
                rows.push(maker.row(&game, vec![(index, 1.0)], wdl, -1.0));
                scored.push(scored_position(&game, m, score, None));
                kept_at.push(Some(ply));
            }
            // the other lines of a multi-PV search: the position after each first move, scored
            // by the line (one ply shallower) with the line's reply as its move; not on the
            // game's path, so without a result or moves left
            for line in &lines {
                let Some(reply) = line.reply else { continue };
                game.play(line.first);
                let child_score = line.score.after_move();
                if let (false, Some(index)) = (game.result().is_over(), maker.index(&game, reply)) {
                    rows.push(maker.row(&game, vec![(index, 1.0)], score_to_wdl(child_score, opts.cp_scale), -1.0));
                    scored.push(scored_position(&game, reply, child_score, None));
                    kept_at.push(None);
                    siblings += 1;
                }
                game.undo();
            }
        }
        priors.push(1.0);
        values.push(wdl[0] - wdl[2]);
        let mover = game.position().side_to_move();
        let decisive = match score {
            Score::Mate(n) => Some(if n > 0 { mover } else { mover.flip() }),
            Score::Cp(c) if opts.adjudicate_cp > 0 && c.abs() >= opts.adjudicate_cp => Some(if c > 0 { mover } else { mover.flip() }),
            Score::Cp(_) => None,
        };
        if let Some(winner) = decisive {
            adjudicated = Some(winner);
            reason = "adjudication".to_string();
            break;
        }
        game.play(m);
    }
    // White's result
    let white: Option<f32> = match (adjudicated, reason.as_str()) {
        (Some(w), _) => Some(if w == Color::White { 1.0 } else { -1.0 }),
        (None, "max-plies") => None,
        (None, _) => {
            let mover = game.position().side_to_move();
            let r = game.result();
            let for_mover = match r.outcome {
                Outcome::Win => 1.0,
                Outcome::Loss => -1.0,
                _ => 0.0,
            };
            Some(if mover == Color::White { for_mover } else { -for_mover })
        }
    };
    let plies = game.moves().len() as u32;
    for ((s, row), ply) in scored.iter_mut().zip(rows.iter_mut()).zip(&kept_at) {
        if let Some(ply) = ply {
            s.result = white;
            row.moves_left = (plies - ply) as f32;
        }
    }
    let result = match white {
        Some(r) if r > 0.0 => "1-0",
        Some(r) if r < 0.0 => "0-1",
        _ => "1/2-1/2",
    };
    let record = GameRecord {
        variant: variant.name().to_string(),
        start_fen: game.start().fen(),
        moves: game.uci_moves(),
        result: result.to_string(),
        reason,
        network: teacher.name().to_string(),
        white: teacher.name().to_string(),
        black: teacher.name().to_string(),
        priors,
        values,
    };
    let kept = scored.len();
    Ok(Ok(PlayedGame { record, scored, rows, searches, kept, siblings }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two segments' summaries add up field by field; reasons present in one only are kept.
    #[test]
    fn summaries_of_segments_add_up() {
        let seg = |k: usize, reason: &str| PlaySummary {
            games: k,
            positions: 10 * k,
            siblings: k,
            searches: 20 * k,
            chunks: 1,
            results: [k, 1, 2],
            reasons: BTreeMap::from([(reason.to_string(), k)]),
            abandoned: BTreeMap::from([("crash".to_string(), 1)]),
            restarts: 1,
            seconds: 1.5,
            warnings: vec![format!("w{k}")],
        };
        let mut total = PlaySummary::default();
        total.add(seg(2, "adjudication"));
        total.add(seg(3, "checkmate"));
        assert_eq!((total.games, total.positions, total.siblings, total.searches, total.chunks, total.restarts), (5, 50, 5, 100, 2, 2));
        assert_eq!(total.results, [5, 2, 4]);
        assert_eq!(total.reasons, BTreeMap::from([("adjudication".to_string(), 2), ("checkmate".to_string(), 3)]));
        assert_eq!(total.abandoned, BTreeMap::from([("crash".to_string(), 2)]));
        assert_eq!(total.seconds, 3.0);
        assert_eq!(total.warnings, ["w2", "w3"]);
    }
}
