//! One MCTS move search with a leaf evaluator (material or network), node/time limits, a stop
//! flag and periodic progress reports: what the MCTS players and `vzero uci` share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use vzero_mcts::{Knowledge, Leaf, MaterialEvaluator, Search, SearchConfig, SearchResult, VariantGame};
pub use vzero_model::NetEvaluator;
use vzero_rules::Move;

/// Most simulations one search may run (the tree grows by up to one node per simulation).
pub const MAX_SIMS: u64 = 5_000_000;

/// Leaf evaluation.
pub enum Evaluator {
    /// Uniform priors, material value (no network).
    Material(MaterialEvaluator),
    /// The variant-definition heuristics alone: capture priors and quiescent material value.
    Knowledge(Knowledge),
    /// A network (with its variant's encodings).
    Net(Box<NetEvaluator>),
}

impl Evaluator {
    /// Leaves gathered per evaluation: 1 without a network; with one, a batch that grows with
    /// the budget (virtual loss spreads a batch over the tree, which a small search cannot
    /// afford): `sims / 16` clamped to 1..=8, so 64 simulations go 4 leaves at a time.
    pub fn batch(&self, sims: u32) -> usize {
        match self {
            Evaluator::Material(_) | Evaluator::Knowledge(_) => 1,
            Evaluator::Net(_) => (sims as usize / 16).clamp(1, 8),
        }
    }
}

/// When to stop a search.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Simulations (capped at [`MAX_SIMS`]; `None`: up to the cap).
    pub sims: Option<u64>,
    /// Wall time.
    pub time: Option<Duration>,
    /// Leaves per network evaluation (default: see [`Evaluator`]'s budget rule).
    pub batch: Option<usize>,
}

/// Progress of a search, for `info` lines.
#[derive(Clone, Debug)]
pub struct Progress {
    pub sims: u64,
    pub elapsed: Duration,
    /// Root value (W - L) and draw probability for the side to move.
    pub value: f32,
    pub draw: f32,
    /// Principal variation: most visited moves from the root.
    pub pv: Vec<Move>,
}

impl Progress {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.sims as f64 / self.elapsed.as_secs_f64().max(1e-6)) as u64
    }
}

/// The principal variation: most visited child from the root down, at most `max` moves; where
/// the line reaches a node that was evaluated but not searched further, it ends with that node's
/// most probable move (so a PV is one move long only when the game ends after it).
pub fn principal_variation(search: &Search<VariantGame>, max: usize, first: Option<Move>) -> Vec<Move> {
    let mut pv: Vec<Move> = first.into_iter().collect();
    while pv.len() < max {
        let Some(st) = search.node_stats(&pv) else { break };
        match st.children.iter().filter(|c| c.visits > 0).max_by_key(|c| c.visits) {
            Some(best) => pv.push(best.mv),
            None => {
                if st.expanded {
                    if let Some(top) = st.children.iter().max_by(|a, b| a.prior.total_cmp(&b.prior)) {
                        pv.push(top.mv);
                    }
                }
                break;
            }
        }
    }
    pv
}

fn progress(search: &Search<VariantGame>, sims: u64, t0: Instant, first: Option<Move>) -> Progress {
    let root = search.node_stats(&[]);
    let (value, draw) = root.map_or((0.0, 0.0), |r| (r.value.unwrap_or(0.0), r.draw.unwrap_or(0.0)));
    Progress { sims, elapsed: t0.elapsed(), value, draw, pv: principal_variation(search, 32, first) }
}

/// Runs one search from `state` and returns its result (`None` if the position is terminal).
/// `stop` ends it early (checked between evaluations); `report` is called about every
/// `report_every` and once at the end.
pub fn search_move(
    state: VariantGame,
    config: SearchConfig,
    seed: u64,
    eval: &mut Evaluator,
    limits: Limits,
    stop: Option<&AtomicBool>,
    report_every: Option<Duration>,
    report: &mut dyn FnMut(&Progress),
) -> Result<Option<(SearchResult<Move>, Progress)>> {
    let t0 = Instant::now();
    let budget = limits.sims.unwrap_or(MAX_SIMS).clamp(1, MAX_SIMS) as u32;
    let mut search = Search::new(state, config, seed);
    search.start_with(budget, true);
    let batch = limits.batch.unwrap_or_else(|| eval.batch(budget)).max(1);
    let mut leaves = Vec::with_capacity(batch);
    let mut priors = Vec::new();
    let mut last_report = Instant::now();
    let mut iter = 0u64;
    let mut idle = 0u32;
    while !search.is_done() {
        if step(&mut search, eval, batch, &mut leaves, &mut priors)? == 0 {
            idle += 1;
            if idle > 1000 {
                break; // no progress possible (should not happen)
            }
        }
        iter += 1;
        // The root is evaluated by the first round; only then may a search be cut short.
        {
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                break;
            }
            if iter % 16 == 0 {
                if limits.time.is_some_and(|t| t0.elapsed() >= t) {
                    break;
                }
                if let Some(every) = report_every {
                    if last_report.elapsed() >= every {
                        last_report = Instant::now();
                        report(&progress(&search, search.simulations() as u64, t0, None));
                    }
                }
            }
        }
    }
    let sims = search.simulations() as u64;
    let Some(result) = search.finish() else { return Ok(None) };
    let p = progress(&search, sims, t0, Some(result.chosen));
    report(&p);
    Ok(Some((result, p)))
}

/// One gather/evaluate/apply round of `search` with up to `batch` leaves; returns the number of
/// leaves evaluated (0 when every descent collided, the budget is spent or the root is settled).
pub fn step(
    search: &mut Search<VariantGame>,
    eval: &mut Evaluator,
    batch: usize,
    leaves: &mut Vec<Leaf<VariantGame>>,
    priors: &mut Vec<f32>,
) -> Result<usize> {
    leaves.clear();
    let n = search.gather(batch, leaves);
    if n == 0 {
        return Ok(0);
    }
    match eval {
        Evaluator::Material(_) | Evaluator::Knowledge(_) => {
            for leaf in leaves.iter() {
                let moves = search.leaf_moves(leaf.handle);
                priors.clear();
                priors.resize(moves.len(), 0.0);
                let v = match eval {
                    Evaluator::Knowledge(k) => k.evaluate(&leaf.state, moves, priors),
                    Evaluator::Material(m) => m.evaluate(&leaf.state, moves, priors),
                    Evaluator::Net(_) => unreachable!(),
                };
                search.apply(leaf.handle, priors, v);
            }
        }
        Evaluator::Net(net) => {
            let states: Vec<&VariantGame> = leaves.iter().map(|l| &l.state).collect();
            let moves: Vec<&[Move]> = leaves.iter().map(|l| search.leaf_moves(l.handle)).collect();
            let eval = net.evaluate_batch(&states, &moves)?;
            drop(moves);
            for (i, leaf) in leaves.iter().enumerate() {
                search.apply(leaf.handle, eval.policy(i), vzero_model::leaf_value(eval, i));
            }
        }
    }
    Ok(n)
}

/// Centipawns from a value v = W - L in [-1, 1]: `111.714640912 · tan(1.5620688421 · v)`
/// (Leela Chess Zero's mapping), clamped to ±12800 (sign kept).
pub fn value_to_cp(v: f32) -> i32 {
    let v = (v as f64).clamp(-1.0, 1.0);
    (111.714640912 * (1.5620688421 * v).tan()).clamp(-12800.0, 12800.0).round() as i32
}
