//! The engine's search of one position with everything a GUI asks for: node, time, depth and
//! clock limits ([`crate::timeman`]), `stop` and `ponderhit`, MultiPV lines ranked by visits with
//! scores (`cp`, or `mate` when the solver proves a result), tree reuse between the moves of a
//! game, and root-parallel search over several threads.
//!
//! **Threads.** With `threads` = N > 1, N workers search the same position, each with its own
//! tree, seed and evaluator (a network is loaded once per worker), and their root statistics are
//! merged: visits add up, Q is visit-weighted, a proof found by any worker holds for all (proofs
//! are exact). Each worker reuses its own tree between moves. This is root parallelisation: it
//! needs no locks, and on a machine with N free cores it runs N times the simulations of one
//! thread; the trees overlap, so the strength gained is less than N times the simulations.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;
use vzero_mcts::{LeafValue, MoveStats, Proof, Search, SearchConfig, VariantGame};
use vzero_rules::{Game, Move};

use crate::search::{principal_variation, step, value_to_cp, Evaluator, MAX_SIMS};
use crate::timeman::{Clock, SearchState, TimePlan};

/// Bytes of tree memory per node and per edge (estimates for `Hash` and `hashfull`).
const NODE_BYTES: usize = 64;
const EDGE_BYTES: usize = 32;

/// How the engine searches.
#[derive(Clone, Debug)]
pub struct ThinkConfig {
    /// Workers (root-parallel trees); at least 1.
    pub threads: usize,
    /// Lines reported (MultiPV); at least 1.
    pub multipv: usize,
    /// Tree memory limit in MiB over all workers: a full tree stops the search (`Hash`).
    pub hash_mb: usize,
    /// Latency reserved per move by the time manager (`Move Overhead`).
    pub overhead: Duration,
    /// The search itself (PUCT, no noise, greedy choice, tree reuse, solver).
    pub search: SearchConfig,
}

impl Default for ThinkConfig {
    fn default() -> Self {
        ThinkConfig { threads: 1, multipv: 1, hash_mb: 512, overhead: Duration::from_millis(30), search: SearchConfig::default() }
    }
}

/// Limits of one search (`go …`); none set means [`MAX_SIMS`] simulations.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoLimits {
    /// `nodes N`: simulations of this search, over all workers.
    pub nodes: Option<u64>,
    /// `movetime MS`.
    pub movetime: Option<Duration>,
    /// `depth D`: stop once the principal variation is this long.
    pub depth: Option<usize>,
    /// `wtime`/`btime`/`winc`/`binc`/`movestogo` of the side to move.
    pub clock: Option<Clock>,
    /// `infinite` (or `ponder` until `ponderhit`): only `stop` ends the search.
    pub infinite: bool,
}

/// A score as UCI writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns (from the value, see [`value_to_cp`]).
    Cp(i32),
    /// Mate in N moves (negative: being mated); 0 = the side to move is mated.
    Mate(i32),
}

impl Score {
    /// Parses the tokens after `score` in a UCI `info` line (`cp 35`, `mate -3`; a following
    /// `lowerbound`/`upperbound` is ignored).
    pub fn parse_uci(tokens: &[&str]) -> Option<Score> {
        match tokens {
            ["cp", n, ..] => n.parse().ok().map(Score::Cp),
            ["mate", n, ..] => n.parse().ok().map(Score::Mate),
            _ => None,
        }
    }

    /// The score, for the side to move after it, of the position the scored move leads to
    /// (a multi-PV line's score read from its first move's position): centipawns negated; the
    /// mover's mate in n is the opponent mated in n − 1 (`mate 0`: mated now), the mover mated
    /// in n is a mate in n for the opponent.
    pub fn after_move(self) -> Score {
        match self {
            Score::Cp(c) => Score::Cp(-c),
            Score::Mate(n) if n > 0 => Score::Mate(-(n - 1)),
            Score::Mate(n) => Score::Mate(-n),
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(c) => write!(f, "cp {c}"),
            Score::Mate(m) => write!(f, "mate {m}"),
        }
    }
}

/// The UCI score of a value `q` in [-1, 1] for the side to move, or of a proof: a win in k plies
/// is `mate (k+1)/2`, a loss in k plies `mate -(k+1)/2` (`mate 0` for a position already lost),
/// a draw `cp 0`.
pub fn score(q: f32, proof: Option<Proof>) -> Score {
    match proof {
        Some(Proof::Win(k)) => Score::Mate((i32::from(k) + 1) / 2),
        Some(Proof::Loss(k)) => Score::Mate(-(i32::from(k) + 1) / 2),
        Some(Proof::Draw(_)) => Score::Cp(0),
        None => Score::Cp(value_to_cp(q)),
    }
}

/// One root move as reported: merged statistics and its principal variation.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The move.
    pub mv: Move,
    /// Visits over all workers.
    pub visits: u32,
    /// Mean value for the side making the move (W − L), exact when proven.
    pub q: f32,
    /// Mean draw probability (exact when proven).
    pub draw: f32,
    /// Proven value for the side making the move.
    pub proof: Option<Proof>,
    /// Principal variation starting with `mv`.
    pub pv: Vec<Move>,
}

impl Line {
    /// The line's UCI score.
    pub fn score(&self) -> Score {
        score(self.q, self.proof)
    }

    /// Win, draw and loss in per mille (summing to 1000).
    pub fn wdl(&self) -> [u32; 3] {
        wdl_permille(self.q, self.draw)
    }
}

/// Win, draw and loss per mille from a value (W − L) and a draw probability.
pub fn wdl_permille(q: f32, draw: f32) -> [u32; 3] {
    let [w, d, _] = LeafValue { value: q, draw }.wdl();
    let w = (w * 1000.0).round().clamp(0.0, 1000.0) as u32;
    let d = ((d * 1000.0).round().clamp(0.0, 1000.0) as u32).min(1000 - w);
    [w, d, 1000 - w - d]
}

/// What a search has found so far (or in the end).
#[derive(Clone, Debug)]
pub struct Report {
    /// Simulations of this search over all workers.
    pub sims: u64,
    /// Time since the search started.
    pub elapsed: Duration,
    /// Tree memory used, per mille of the `Hash` limit.
    pub hashfull: u32,
    /// Every root move, best first: the chosen move, then by visits (proven wins first, proven
    /// losses last); PVs are filled in for the first `multipv` lines.
    pub lines: Vec<Line>,
    /// Proven value of the root for the side to move, if any worker has one.
    pub proof: Option<Proof>,
    /// Root visits kept from the previous search by tree reuse (the most of any worker).
    pub reused: u32,
}

impl Report {
    /// Simulations per second.
    pub fn nps(&self) -> u64 {
        (self.sims as f64 / self.elapsed.as_secs_f64().max(1e-6)) as u64
    }

    /// The best move (the first line).
    pub fn best(&self) -> Move {
        self.lines[0].mv
    }
}

/// One worker's root statistics at some moment.
#[derive(Clone, Debug, Default)]
struct Snap {
    sims: u64,
    bytes: usize,
    moves: Vec<MoveStats<Move>>,
    pvs: Vec<(Move, Vec<Move>)>,
    proof: Option<Proof>,
}

fn snap(search: &Search<VariantGame>, pv_lines: usize) -> Snap {
    let Some(root) = search.node_stats(&[]) else { return Snap::default() };
    let mut order: Vec<usize> = (0..root.children.len()).collect();
    order.sort_by(|&a, &b| rank_key(&root.children[b]).partial_cmp(&rank_key(&root.children[a])).unwrap_or(std::cmp::Ordering::Equal));
    let pvs = order.iter().take(pv_lines).map(|&i| (root.children[i].mv, principal_variation(search, 64, Some(root.children[i].mv)))).collect();
    Snap {
        sims: search.simulations() as u64,
        bytes: search.num_nodes() * NODE_BYTES + search.num_edges() * EDGE_BYTES,
        moves: root.children,
        pvs,
        proof: root.proof,
    }
}

/// Ranking of root moves: proven wins (shortest first), then unproven and drawn moves by
/// visits, Q and prior (a search stopped at once still plays the evaluator's choice, not the
/// first legal move), then proven losses (longest first).
fn rank_key(m: &MoveStats<Move>) -> (i32, i64, f32, f32) {
    match m.proof {
        Some(Proof::Win(k)) => (2, -i64::from(k), 0.0, 0.0),
        Some(Proof::Loss(k)) => (0, i64::from(k), 0.0, 0.0),
        _ => (1, i64::from(m.visits), m.q.unwrap_or(-2.0), m.prior),
    }
}

fn merge(snaps: &[Snap], multipv: usize, elapsed: Duration, hash_bytes: usize) -> Report {
    let first = &snaps[0];
    let mut merged: Vec<(MoveStats<Move>, f64, f64)> =
        first.moves.iter().map(|m| (MoveStats { visits: 0, q: None, draw: None, ..m.clone() }, 0.0, 0.0)).collect();
    for s in snaps {
        for m in &s.moves {
            let Some(e) = merged.iter_mut().find(|e| e.0.mv == m.mv) else { continue };
            e.0.visits += m.visits;
            e.1 += f64::from(m.q.unwrap_or(0.0)) * f64::from(m.visits);
            e.2 += f64::from(m.draw.unwrap_or(0.0)) * f64::from(m.visits);
            if e.0.proof.is_none() {
                e.0.proof = m.proof;
            }
        }
    }
    let mut stats: Vec<MoveStats<Move>> = merged
        .into_iter()
        .map(|(mut m, qs, ds)| {
            if m.visits > 0 {
                m.q = Some((qs / f64::from(m.visits)) as f32);
                m.draw = Some((ds / f64::from(m.visits)) as f32);
            }
            m
        })
        .collect();
    stats.sort_by(|a, b| rank_key(b).partial_cmp(&rank_key(a)).unwrap_or(std::cmp::Ordering::Equal));
    let lines: Vec<Line> = stats
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (q, draw) = match m.proof {
                Some(p) => (p.value(), p.draw()),
                None => (m.q.unwrap_or(0.0), m.draw.unwrap_or(0.0)),
            };
            let pv = if i < multipv {
                // the PV of the worker that searched the move most
                snaps
                    .iter()
                    .filter_map(|s| {
                        let v = s.moves.iter().find(|x| x.mv == m.mv).map_or(0, |x| x.visits);
                        s.pvs.iter().find(|p| p.0 == m.mv).map(|p| (v, p.1.clone()))
                    })
                    .max_by_key(|(v, _)| *v)
                    .map_or_else(|| vec![m.mv], |p| p.1)
            } else {
                vec![m.mv]
            };
            Line { mv: m.mv, visits: m.visits, q, draw, proof: m.proof, pv }
        })
        .collect();
    let bytes: usize = snaps.iter().map(|s| s.bytes).sum();
    Report {
        sims: snaps.iter().map(|s| s.sims).sum(),
        elapsed,
        hashfull: ((bytes as f64 / hash_bytes.max(1) as f64) * 1000.0).min(1000.0) as u32,
        lines,
        proof: snaps.iter().find_map(|s| s.proof),
        reused: 0,
    }
}

struct Worker {
    search: Option<Search<VariantGame>>,
    eval: Evaluator,
}

/// The engine's searcher: workers with their trees and evaluators, kept between searches.
pub struct Thinker {
    workers: Vec<Worker>,
    config: ThinkConfig,
    /// The start FEN and moves of the game the trees are rooted at.
    rooted: Option<(String, Vec<Move>)>,
    seed: u64,
}

impl Thinker {
    /// A thinker with one worker per evaluator (at least one).
    pub fn new(evals: Vec<Evaluator>, mut config: ThinkConfig, seed: u64) -> Thinker {
        assert!(!evals.is_empty(), "a thinker needs an evaluator");
        config.threads = evals.len();
        config.multipv = config.multipv.max(1);
        Thinker { workers: evals.into_iter().map(|eval| Worker { search: None, eval }).collect(), config, rooted: None, seed }
    }

    /// The configuration.
    pub fn config(&self) -> &ThinkConfig {
        &self.config
    }

    /// Sets the number of MultiPV lines.
    pub fn set_multipv(&mut self, n: usize) {
        self.config.multipv = n.max(1);
    }

    /// Sets the `Hash` limit (MiB).
    pub fn set_hash_mb(&mut self, mb: usize) {
        self.config.hash_mb = mb.max(1);
    }

    /// Sets the `Move Overhead`.
    pub fn set_overhead(&mut self, d: Duration) {
        self.config.overhead = d;
    }

    /// Forgets the trees (a new game, `Clear Hash`).
    pub fn clear(&mut self) {
        for w in &mut self.workers {
            w.search = None;
        }
        self.rooted = None;
    }

    /// Takes the evaluators back (to move them into another thinker).
    pub fn into_evaluators(self) -> Vec<Evaluator> {
        self.workers.into_iter().map(|w| w.eval).collect()
    }

    /// Roots every worker's tree at `game`: the old tree advanced by the moves played since
    /// (keeping their subtrees) when `game` continues the game the trees were rooted at.
    /// Returns the most root visits a worker kept.
    fn root_at(&mut self, game: &Game) -> u32 {
        let fen = game.start().fen();
        let moves = game.moves().to_vec();
        let reuse = match &self.rooted {
            Some((f, old)) if *f == fen && moves.len() >= old.len() && moves[..old.len()] == old[..] => Some(old.len()),
            _ => None,
        };
        for (i, w) in self.workers.iter_mut().enumerate() {
            match (reuse, w.search.as_mut()) {
                (Some(from), Some(s)) if s.node_stats(&[]).is_some_and(|r| !r.terminal) => {
                    for &m in &moves[from..] {
                        s.advance(m);
                    }
                }
                _ => {
                    self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    w.search = Some(Search::new(VariantGame::from_game(game), self.config.search.clone(), self.seed ^ i as u64));
                }
            }
        }
        self.rooted = Some((fen, moves));
        self.workers.iter().filter_map(|w| w.search.as_ref()?.node_stats(&[])).map(|r| r.visits).max().unwrap_or(0)
    }

    /// Searches `game` (which must not be over) within `limits`. `stop` ends the search early;
    /// while `pondering` is set the search is infinite, and when it is cleared (`ponderhit`)
    /// the clock limits start to count. `report` gets a [`Report`] every `report_every` and
    /// the final one is returned (`None` for a finished game).
    pub fn think(
        &mut self,
        game: &Game,
        limits: &GoLimits,
        stop: &AtomicBool,
        pondering: Option<&AtomicBool>,
        report_every: Duration,
        report: &mut dyn FnMut(&Report),
    ) -> Result<Option<Report>> {
        if game.result().is_over() {
            return Ok(None);
        }
        let reused = self.root_at(game);
        let t0 = Instant::now();
        let threads = self.workers.len();
        let total = limits.nodes.unwrap_or(MAX_SIMS).clamp(1, MAX_SIMS);
        let per_worker = total.div_ceil(threads as u64) as u32;
        let hash_bytes = self.config.hash_mb.saturating_mul(1 << 20);
        let multipv = self.config.multipv;
        let halt = AtomicBool::new(false);
        let slots: Mutex<Vec<Snap>> = Mutex::new(vec![Snap::default(); threads]);
        let plan = limits.clock.map(|c| TimePlan::new(&c, self.config.overhead));
        let (first, rest) = self.workers.split_first_mut().expect("one worker");
        let result = std::thread::scope(|scope| -> Result<()> {
            let mut handles = Vec::new();
            for (i, w) in rest.iter_mut().enumerate() {
                let (halt, slots, stop) = (&halt, &slots, stop);
                handles.push(scope.spawn(move || -> Result<()> {
                    let search = w.search.as_mut().expect("rooted");
                    search.start_with(per_worker, true);
                    let batch = w.eval.batch(per_worker);
                    let (mut leaves, mut priors) = (Vec::new(), Vec::new());
                    let mut last = Instant::now();
                    while !search.is_done() && !halt.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                        step(search, &mut w.eval, batch, &mut leaves, &mut priors)?;
                        if last.elapsed() >= Duration::from_millis(20) {
                            last = Instant::now();
                            slots.lock().expect("snapshot lock")[i + 1] = snap(search, multipv);
                        }
                    }
                    slots.lock().expect("snapshot lock")[i + 1] = snap(search, multipv);
                    Ok(())
                }));
            }
            let search = first.search.as_mut().expect("rooted");
            search.start_with(per_worker, true);
            let batch = first.eval.batch(per_worker);
            let (mut leaves, mut priors) = (Vec::new(), Vec::new());
            let mut last_report = Instant::now();
            let mut clock_start = t0;
            let mut was_pondering = pondering.is_some_and(|p| p.load(Ordering::Relaxed));
            let (mut best, mut best_since) = (None, Duration::ZERO);
            let mut iter = 0u64;
            // Ok(true): stopped early (stop, limits, full tree): the other workers stop too;
            // Ok(false): this worker's budget is spent, the others finish theirs.
            let outcome = (|| -> Result<bool> {
                while !search.is_done() {
                    step(search, &mut first.eval, batch, &mut leaves, &mut priors)?;
                    iter += 1;
                    if stop.load(Ordering::Relaxed) {
                        return Ok(true);
                    }
                    let ponder_now = pondering.is_some_and(|p| p.load(Ordering::Relaxed));
                    if was_pondering && !ponder_now {
                        clock_start = Instant::now(); // ponderhit: the clock starts now
                    }
                    was_pondering = ponder_now;
                    let timed = !limits.infinite && !ponder_now;
                    let spent = clock_start.elapsed();
                    if timed && (limits.movetime.is_some_and(|t| spent >= t) || plan.is_some_and(|p| spent >= p.hard)) {
                        return Ok(true);
                    }
                    let check = iter % if plan.is_some() || limits.depth.is_some() { 8 } else { 256 } == 0;
                    let due = last_report.elapsed() >= report_every;
                    if !(check || due) {
                        continue;
                    }
                    let mut snaps = slots.lock().expect("snapshot lock").clone();
                    snaps[0] = snap(search, if due || limits.depth.is_some() { multipv } else { 0 });
                    let mut r = merge(&snaps, multipv, t0.elapsed(), hash_bytes);
                    r.reused = reused;
                    if r.hashfull >= 1000 {
                        return Ok(true); // the tree is full
                    }
                    if best != Some(r.best()) {
                        best = Some(r.best());
                        best_since = spent;
                    }
                    if due {
                        last_report = Instant::now();
                        report(&r);
                    }
                    if !timed {
                        continue;
                    }
                    // depth D: a principal variation D moves long, after at least D
                    // simulations per root move (never a move the search has not looked at)
                    if limits.depth.is_some_and(|d| r.lines[0].pv.len() >= d && r.sims >= (d * r.lines.len()) as u64) {
                        return Ok(true);
                    }
                    if let Some(p) = plan {
                        let second = r.lines.get(1).map_or(0, |l| l.visits);
                        let state = SearchState {
                            elapsed: spent,
                            best_visits: r.lines[0].visits,
                            second_visits: second,
                            best_for: spent.saturating_sub(best_since),
                            nps: r.sims as f64 / spent.as_secs_f64().max(1e-3),
                        };
                        if r.lines.len() == 1 || p.should_stop(&state) {
                            return Ok(true);
                        }
                    }
                }
                // a proven root ends early: the others stop too
                Ok(u64::from(search.simulations()) < u64::from(per_worker))
            })();
            if !matches!(outcome, Ok(false)) {
                halt.store(true, Ordering::Relaxed);
            }
            for h in handles {
                h.join().map_err(|_| anyhow::anyhow!("a search thread panicked"))??;
            }
            outcome.map(|_| ())
        });
        if let Err(e) = result {
            self.clear(); // leaves may be left unapplied
            return Err(e);
        }
        let snaps: Vec<Snap> = self.workers.iter().map(|w| snap(w.search.as_ref().expect("rooted"), multipv)).collect();
        let mut r = merge(&snaps, multipv, t0.elapsed(), hash_bytes);
        r.reused = reused;
        Ok(Some(r))
    }

    /// Evaluators of the workers (e.g. to change a network's knowledge blend).
    pub fn evaluators_mut(&mut self) -> impl Iterator<Item = &mut Evaluator> {
        self.workers.iter_mut().map(|w| &mut w.eval)
    }
}

/// Expected score (W + D/2) of a value for the side it belongs to.
pub fn expected_score(q: f32) -> f32 {
    ((q + 1.0) / 2.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_score_after_its_move() {
        assert_eq!(Score::Cp(35).after_move(), Score::Cp(-35));
        // mate in 1: the position after the move is mated; mate in 3: mated in 2
        assert_eq!(Score::Mate(1).after_move(), Score::Mate(0));
        assert_eq!(Score::Mate(3).after_move(), Score::Mate(-2));
        // mated in 2 after this move: the opponent mates in 2
        assert_eq!(Score::Mate(-2).after_move(), Score::Mate(2));
        // consistent with `score`: a win in k plies (the mover's k-th ply mates) is, after the
        // move, a loss in k - 1
        for k in (1u16..12).step_by(2) {
            let before = score(0.0, Some(Proof::Win(k)));
            let after = score(0.0, Some(Proof::Loss(k - 1)));
            assert_eq!(before.after_move(), after, "win in {k} plies");
        }
    }

    use super::*;
    use vzero_mcts::MaterialEvaluator;
    use vzero_rules::Variant;

    fn thinker(threads: usize) -> Thinker {
        let evals = (0..threads).map(|_| Evaluator::Material(MaterialEvaluator::default())).collect();
        Thinker::new(evals, ThinkConfig { multipv: 3, ..ThinkConfig::default() }, 1)
    }

    #[test]
    fn scores_from_proofs() {
        assert_eq!(score(0.0, Some(Proof::Win(1))), Score::Mate(1));
        assert_eq!(score(0.0, Some(Proof::Win(3))), Score::Mate(2));
        assert_eq!(score(0.0, Some(Proof::Loss(2))), Score::Mate(-1));
        assert_eq!(score(0.0, Some(Proof::Loss(0))), Score::Mate(0));
        assert_eq!(score(0.3, Some(Proof::Draw(4))), Score::Cp(0));
        assert_eq!(score(0.0, None), Score::Cp(0));
        assert_eq!(Score::Mate(-3).to_string(), "mate -3");
        assert_eq!(wdl_permille(1.0, 0.0), [1000, 0, 0]);
        assert_eq!(wdl_permille(-0.2, 0.5).iter().sum::<u32>(), 1000);
    }

    #[test]
    fn nodes_multipv_and_threads() {
        let game = Game::startpos(Variant::builtin("shogun").unwrap());
        for threads in [1, 2] {
            let mut t = thinker(threads);
            let stop = AtomicBool::new(false);
            let limits = GoLimits { nodes: Some(2000), ..GoLimits::default() };
            let r = t.think(&game, &limits, &stop, None, Duration::from_secs(60), &mut |_| {}).unwrap().unwrap();
            assert!(r.sims >= 2000 && r.sims <= 2000 + 2 * threads as u64, "{}", r.sims);
            assert_eq!(r.lines.len(), game.position().legal_moves().len());
            assert!(r.lines[0].visits >= r.lines[1].visits && r.lines[1].visits >= r.lines[2].visits);
            assert!(r.lines[..3].iter().all(|l| l.pv.len() > 1 && l.pv[0] == l.mv), "{:?}", &r.lines[..3]);
            // tree reuse: the next search starts from the played moves' subtree
            let mut g2 = game.clone();
            g2.play(r.lines[0].pv[0]);
            g2.play(r.lines[0].pv[1]);
            t.root_at(&g2);
            let kept = t.workers[0].search.as_ref().unwrap().node_stats(&[]).unwrap().visits;
            assert!(kept > 1, "subtree kept ({kept} visits)");
        }
    }
}
