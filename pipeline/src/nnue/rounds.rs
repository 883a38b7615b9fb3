//! `vzero nnue loop`: Fairy-Stockfish NNUE nets improved in rounds, as the nets of
//! variant-nnue-pytorch are meant to be (data from the classical evaluation, train, regenerate
//! with the new net), all in one command.
//!
//! A round:
//! 1. **play**: teacher workers (Fairy-Stockfish processes, `--workers` of them) play games
//!    against themselves with a few random moves early ([`vzero_teacher::play_games`]); every
//!    position they search is kept with its raw score, the move as a policy row and the game's
//!    result, in `Source::Label` chunks of the run (so `vzero train`'s learner can use them too);
//! 2. **train**: the run's NNUE trainer goes on from its newest checkpoint on all the run's
//!    positions ([`super::train::train_nnue`]);
//! 3. **publish**: the newest checkpoint is exported to `nnue/nets/<variant>-<sha>.nnue` and
//!    published to the run once;
//! 4. **gate**: the new net plays the teachers' evaluation of this round (`gate_games` games at
//!    the teacher's limits) and becomes the teachers' net only when it scores over 50%; the
//!    round is recorded as a row of `nnue/nets.csv` (gate score, the teachers' net);
//! 5. the teachers of the next round load that net (`setoption name EvalFile`): the best net so
//!    far plays and scores the next round's games, as checkpoints go back to self-play workers
//!    in `vzero train`.
//!
//! One loop (or `vzero nnue train`) per run: the run's NNUE trainer lease
//! (`nnue/trainer.lock`) is held for the whole loop.
//!
//! Kill-safe: chunks, checkpoints and nets are written atomically; `nets.csv` is rewritten
//! whole (temporary file, rename) after a net is published, so a rerun finds the teachers' net
//! and the round number in it and goes on from there. A round killed before its net was recorded is
//! played again (its games are kept: they are data like any other).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use vzero_data::RunDir;
use vzero_rules::Variant;
use vzero_arena::{run_match, MatchConfig, MatchReport, PlayerSpec};
use vzero_teacher::{play_games, PlayOptions, PlaySummary};

use super::export::export_nnue;
use super::files::{nnue_dir, nnue_lease};
use super::train::{train_nnue_held, NnueTrainOptions};

/// The columns of `nnue/nets.csv`.
pub const NETS_HEADER: &str = "round,net,games,positions,play_seconds,positions_per_s,train_step,validation_loss,gate_score,teacher,unix";

/// What `teacher` says when the teachers use the engine's own (classical) evaluation.
pub const CLASSICAL: &str = "classical";

/// How the loop runs.
#[derive(Clone, Debug)]
pub struct LoopOptions {
    /// The teacher spec (`fsf:nodes=…` or `uci:/path/to/fairy-stockfish:variantpath=…:nodes=…`); the loop adds
    /// `opt=EvalFile=<net>` once a net is published.
    pub teacher: String,
    /// Teacher processes playing at once.
    pub workers: usize,
    /// Stop after this many minutes (the round under way finishes its training step and
    /// publishes first).
    pub minutes: f64,
    /// Stop after this many rounds in all (counting earlier sessions).
    pub rounds: Option<u64>,
    /// Minutes of play per round.
    pub play_minutes: f64,
    /// Minutes of training per round.
    pub train_minutes: f64,
    /// How games are played (teacher, workers, games and deadline are set by the loop).
    pub play: PlayOptions,
    /// How the trainer trains (its stop conditions are set by the loop).
    pub train: NnueTrainOptions,
    /// Games of the gate: each new net plays the teachers' current evaluation (the classical
    /// one, or the best net so far) with the teacher's limits, colours swapped in pairs from
    /// random openings, and becomes the teachers' net only when it scores over 50%. 0: every
    /// new net becomes the teachers' net.
    pub gate_games: u32,
}

impl LoopOptions {
    /// Refuses a loop that cannot run (checked before the run is opened or created, so that a
    /// mistyped command leaves nothing behind): a teacher that is not a UCI engine, no
    /// workers, minutes that are not positive, training options no training runs with, a
    /// variant Fairy-Stockfish cannot hold.
    pub fn check(&self, variant: Variant) -> Result<()> {
        check_teacher(&self.teacher)?;
        if self.workers == 0 {
            bail!("--workers must be at least 1");
        }
        if !(self.play_minutes > 0.0 && self.train_minutes > 0.0 && self.minutes > 0.0) {
            bail!("the loop's minutes (total, play and train per round) must be > 0");
        }
        self.train.check()?;
        vzero_nnue::FsfMapping::for_variant(variant)?;
        Ok(())
    }
}

/// One published net: a row of `nnue/nets.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct NetRow {
    pub round: u64,
    /// File name under `nnue/nets/`.
    pub net: String,
    pub games: usize,
    pub positions: usize,
    pub play_seconds: f64,
    pub train_step: u64,
    pub validation_loss: Option<f32>,
    /// The new net's score (0..1) against the teachers' evaluation of this round, when gated.
    pub gate_score: Option<f64>,
    /// What the next round's teachers load: a file name under `nnue/nets/`, or [`CLASSICAL`].
    pub teacher: String,
    pub unix: u64,
}

impl NetRow {
    fn csv(&self) -> String {
        let pps = if self.play_seconds > 0.0 { self.positions as f64 / self.play_seconds } else { 0.0 };
        format!(
            "{},{},{},{},{:.1},{:.1},{},{},{},{},{}",
            self.round,
            self.net,
            self.games,
            self.positions,
            self.play_seconds,
            pps,
            self.train_step,
            self.validation_loss.map_or(String::new(), |v| format!("{v:.6}")),
            self.gate_score.map_or(String::new(), |v| format!("{v:.4}")),
            self.teacher,
            self.unix
        )
    }

    fn parse(line: &str) -> Option<NetRow> {
        let f: Vec<&str> = line.split(',').collect();
        // (rows of the first layout, without the gate: the net was the next teacher)
        let (gate_score, teacher, unix) = match f.len() {
            9 => (None, f[1].to_string(), f[8]),
            11 => (if f[8].is_empty() { None } else { Some(f[8].parse().ok()?) }, f[9].to_string(), f[10]),
            _ => return None,
        };
        Some(NetRow {
            round: f[0].parse().ok()?,
            net: f[1].to_string(),
            games: f[2].parse().ok()?,
            positions: f[3].parse().ok()?,
            play_seconds: f[4].parse().ok()?,
            train_step: f[6].parse().ok()?,
            validation_loss: if f[7].is_empty() { None } else { Some(f[7].parse().ok()?) },
            gate_score,
            teacher,
            unix: unix.parse().ok()?,
        })
    }
}

/// What a loop did.
#[derive(Clone, Debug, Default)]
pub struct LoopSummary {
    /// Rounds run by this call.
    pub rounds: u64,
    /// Games played and positions kept by this call.
    pub games: usize,
    pub positions: usize,
    /// Seconds spent playing (all workers together, wall clock).
    pub play_seconds: f64,
    /// Seconds spent training and exporting.
    pub train_seconds: f64,
    /// Seconds spent in the gates' games.
    pub gate_seconds: f64,
    /// Nets published by this call, oldest first.
    pub published: Vec<NetRow>,
    /// Teacher restarts and abandoned games.
    pub restarts: usize,
    pub abandoned: usize,
}

impl LoopSummary {
    /// Positions labelled per second of play.
    pub fn positions_per_second(&self) -> f64 {
        if self.play_seconds > 0.0 {
            self.positions as f64 / self.play_seconds
        } else {
            0.0
        }
    }
}

/// A loop's progress, for the caller to print.
#[derive(Clone, Debug)]
pub enum LoopEvent {
    /// A round starts; `net` is the net its teachers load (None: classical evaluation).
    RoundStart { round: u64, net: Option<String> },
    /// The round's games are played.
    Played { round: u64, summary: PlaySummary },
    /// The round's net was played against the teachers' evaluation.
    Gate { round: u64, report: String },
    /// The round's net is published.
    Published(NetRow),
}

/// The nets published so far (`nnue/nets.csv`), oldest first.
pub fn published_nets(run: &RunDir) -> Result<Vec<NetRow>> {
    let path = nnue_dir(run).join("nets.csv");
    if !run.fetch(&path, true)? {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", run.describe(&path)))?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        rows.push(NetRow::parse(line).with_context(|| format!("{} line {}: not a nets.csv row: '{line}'", run.describe(&path), i + 1))?);
    }
    Ok(rows)
}

fn write_nets(run: &RunDir, rows: &[NetRow]) -> Result<()> {
    let path = nnue_dir(run).join("nets.csv");
    let mut text = String::from(NETS_HEADER);
    text.push('\n');
    for r in rows {
        text.push_str(&r.csv());
        text.push('\n');
    }
    vzero_base::write_atomic(&path, text.as_bytes())?;
    run.publish(&path)?;
    Ok(())
}

/// Refuses a loop teacher that cannot load the loop's nets: one that is not a UCI engine
/// (`fsf`, with vzero's definitions or others, and `uci:` are).
fn check_teacher(teacher: &str) -> Result<()> {
    let spec = PlayerSpec::parse(teacher).with_context(|| format!("teacher '{teacher}'"))?;
    match spec {
        PlayerSpec::Uci(_) => Ok(()),
        _ => bail!("the loop's teacher must be a UCI engine that loads NNUE nets (fsf:nodes=N, or uci:/path/to/fairy-stockfish:variantpath=…), not '{}'", teacher),
    }
}

/// The teachers' net now: the one the last row of `rows` chose (None: the classical
/// evaluation), with its local path (fetched from the store of an object-storage run). What
/// each round of the loop plays with, and what `vzero nnue play --follow` switches to.
pub fn teachers_net(run: &RunDir, rows: &[NetRow]) -> Result<Option<(String, PathBuf)>> {
    let Some(name) = rows.last().map(|r| r.teacher.clone()).filter(|t| t != CLASSICAL) else { return Ok(None) };
    let p = nnue_dir(run).join("nets").join(&name);
    if !run.fetch(&p, false)? {
        bail!("{}: the teachers' net of nnue/nets.csv is missing", run.describe(&p));
    }
    Ok(Some((name, p)))
}

/// The teacher spec of a round: `base` with the net loaded, when there is one.
pub fn teacher_with_net(base: &str, net: Option<&Path>) -> Result<String> {
    let Some(net) = net else { return Ok(base.to_string()) };
    let p = net.to_string_lossy();
    if p.contains(':') {
        bail!("the net's path {p} contains ':', which separates a uci: spec's options and Fairy-Stockfish's EvalFile list");
    }
    Ok(format!("{base}:opt=EvalFile={p}"))
}

/// Runs the loop on `run` for `variant` until `opts.minutes` or `opts.rounds`.
pub fn run_loop(run: &RunDir, variant: Variant, opts: &LoopOptions, on_event: &mut dyn FnMut(LoopEvent)) -> Result<LoopSummary> {
    opts.check(variant)?;
    run.check_variant(variant.name())?;
    // one NNUE trainer per run, for the whole loop
    let lease = nnue_lease(run, "vzero nnue loop")?;
    let deadline = Instant::now() + Duration::from_secs_f64(opts.minutes * 60.0);
    let nets_dir = nnue_dir(run).join("nets");
    std::fs::create_dir_all(&nets_dir).with_context(|| format!("creating {}", nets_dir.display()))?;
    let mut rows = published_nets(run)?;
    let mut summary = LoopSummary::default();
    loop {
        let round = rows.last().map_or(0, |r| r.round + 1);
        if opts.rounds.is_some_and(|n| round >= n) || Instant::now() >= deadline {
            break;
        }
        // the teachers load the net the last round chose (none: the classical evaluation)
        let (teacher_net, net) = teachers_net(run, &rows)?.unzip();
        on_event(LoopEvent::RoundStart { round, net: teacher_net.clone() });
        let play_end = (Instant::now() + Duration::from_secs_f64(opts.play_minutes * 60.0)).min(deadline);
        let play = PlayOptions {
            teacher: teacher_with_net(&opts.teacher, net.as_deref())?,
            concurrency: opts.workers,
            games: usize::MAX,
            deadline: Some(play_end),
            job: format!("round{round:05}"),
            seed: opts.play.seed.wrapping_add(round.wrapping_mul(0x9e37_79b9)),
            ..opts.play.clone()
        };
        let played = play_games(run, variant, &play)?;
        summary.games += played.games;
        summary.positions += played.positions;
        summary.play_seconds += played.seconds;
        summary.restarts += played.restarts;
        summary.abandoned += played.abandoned.values().sum::<usize>();
        on_event(LoopEvent::Played { round, summary: played.clone() });
        // train on everything the run holds, then publish
        let t = Instant::now();
        let train = NnueTrainOptions { minutes: Some(opts.train_minutes), steps: None, ..opts.train.clone() };
        let trained = train_nnue_held(run, &lease, Some(variant.name()), &[], &train)?;
        let (path, _description) = export_nnue(Some(run), None, &nets_dir)?;
        lease.check()?;
        run.publish_new(&path).or_else(|e| if e.to_string().contains("already") { Ok(()) } else { Err(e) })?;
        summary.train_seconds += t.elapsed().as_secs_f64();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // the gate: the new net against the teachers' evaluation of this round
        let (gate_score, teacher) = if opts.gate_games == 0 {
            (None, name.clone())
        } else {
            let t = Instant::now();
            let report = gate(variant, &opts.teacher, &path, net.as_deref(), opts, round)?;
            summary.gate_seconds += t.elapsed().as_secs_f64();
            let s = report.stats.points() / report.stats.games().max(1) as f64;
            on_event(LoopEvent::Gate { round, report: report.summary(None).trim_end().replace('\n', "; ") });
            let keep = teacher_net.clone().unwrap_or_else(|| CLASSICAL.to_string());
            (Some(s), if s > 0.5 { name.clone() } else { keep })
        };
        let row = NetRow {
            round,
            net: name,
            games: played.games,
            positions: played.positions,
            play_seconds: played.seconds,
            train_step: trained.step,
            validation_loss: trained.validation_loss,
            gate_score,
            teacher,
            unix: vzero_base::now_unix(),
        };
        rows.push(row.clone());
        write_nets(run, &rows)?;
        summary.rounds += 1;
        summary.published.push(row.clone());
        on_event(LoopEvent::Published(row));
    }
    Ok(summary)
}

/// The gate of `round`: `gate_games` games of the teacher with the new net `candidate` (as A)
/// against the teacher with `incumbent` (None: its classical evaluation), `workers` at once.
fn gate(variant: Variant, teacher: &str, candidate: &Path, incumbent: Option<&Path>, opts: &LoopOptions, round: u64) -> Result<MatchReport> {
    let a = PlayerSpec::parse(&format!("{}:name=round{round}", teacher_with_net(teacher, Some(candidate))?))?;
    let b = PlayerSpec::parse(&format!("{}:name=teachers", teacher_with_net(teacher, incumbent)?))?;
    let mut cfg = MatchConfig::new(variant);
    cfg.games = opts.gate_games;
    cfg.concurrency = opts.workers;
    cfg.seed = opts.play.seed ^ round.wrapping_mul(0x2545_f491_4f6c_dd1d);
    cfg.event = format!("vzero nnue loop gate, round {round}");
    cfg.max_plies = opts.play.max_plies;
    run_match(&a, &b, &cfg).with_context(|| format!("the gate of round {round}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_rows_round_trip_and_bad_rows_are_refused() {
        let r = NetRow { round: 3, net: "empire-0123456789ab.nnue".into(), games: 12, positions: 900, play_seconds: 30.5, train_step: 700, validation_loss: Some(0.012345), gate_score: Some(0.625), teacher: CLASSICAL.into(), unix: 17 };
        assert_eq!(NetRow::parse(&r.csv()), Some(r.clone()));
        let none = NetRow { validation_loss: None, gate_score: None, teacher: r.net.clone(), ..r.clone() };
        assert_eq!(NetRow::parse(&none.csv()), Some(none));
        assert_eq!(NetRow::parse("1,x,2"), None);
        assert_eq!(NETS_HEADER.split(',').count(), r.csv().split(',').count());
        // a row of the first layout (no gate): its net was the next teachers' net
        let old = NetRow::parse("0,empire-06ea5fca9799.nnue,2259,144133,360.1,400.2,3521,0.083974,1796224456").unwrap();
        assert_eq!((old.gate_score, old.teacher.as_str(), old.unix), (None, "empire-06ea5fca9799.nnue", 1796224456));
    }

    #[test]
    fn loop_teachers_are_uci_engines() {
        assert!(check_teacher("uci:fsf:variantpath=v.ini:nodes=500").is_ok());
        assert!(check_teacher("fsf:variantpath=v.ini:nodes=500").is_ok());
        // vzero's own definitions have Fairy-Stockfish's piece types (vzero/tests/fsf_engine.rs
        // checks that its nets evaluate alike in the engine)
        assert!(check_teacher("fsf:nodes=500").is_ok());
        assert!(check_teacher("alphabeta:2").unwrap_err().to_string().contains("must be a UCI engine"));
        assert!(check_teacher("uci:").is_err());
    }

    #[test]
    fn the_net_goes_into_the_teacher_spec() {
        let base = "uci:fsf:variantpath=v.ini:nodes=500";
        assert_eq!(teacher_with_net(base, None).unwrap(), base);
        assert_eq!(teacher_with_net(base, Some(Path::new("/r/nnue/nets/empire-ab.nnue"))).unwrap(), format!("{base}:opt=EvalFile=/r/nnue/nets/empire-ab.nnue"));
        assert!(teacher_with_net(base, Some(Path::new("C:/x/empire.nnue"))).is_err());
    }
}
