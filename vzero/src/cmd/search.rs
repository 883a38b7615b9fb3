//! `vzero search`: one search from a position, printing the root's moves and `bestmove`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use vzero_mcts::{
    uniform_evaluator, GumbelConfig, Knowledge, LeafValue, MaterialEvaluator, RolloutEvaluator, RootMode, Search, SearchConfig,
    VariantGame,
};
use vzero_rules::Move;

use crate::cmd::rules::PositionArgs;

/// Most simulations one search may run (the tree grows by one node per simulation).
const MAX_SIMS: u32 = 10_000_000;

/// Leaf evaluation when no network is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EvalKind {
    /// Uniform priors; value tanh(material difference / 10 pawns) from the variant's piece values.
    Material,
    /// Uniform priors; value of a 16-ply random playout (result, or material where it stops).
    Rollout,
    /// Uniform priors; value 0.
    Uniform,
    /// The variant-definition heuristics: capture priors (MVV), value tanh(material / 4 pawns)
    /// after a capture-only quiescence search.
    Knowledge,
}

/// Arguments of `vzero search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    #[command(flatten)]
    pos: PositionArgs,
    /// Simulations (not counting the root's evaluation).
    #[arg(long)]
    sims: u32,
    /// Gumbel root (Gumbel-top-k sampling, sequential halving, completed-Q policy) instead of PUCT.
    #[arg(long)]
    gumbel: bool,
    /// Moves the Gumbel root considers (m).
    #[arg(long, default_value_t = 16)]
    considered: usize,
    /// Seed of the search's randomness (Gumbel noise).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Leaf evaluation without a network.
    #[arg(long, value_enum, default_value_t = EvalKind::Material)]
    eval: EvalKind,
    /// Network checkpoint to evaluate leaves with (instead of --eval).
    #[arg(long)]
    model: Option<PathBuf>,
    #[command(flatten)]
    net: crate::cmd::net::NetRunArgs,
}

pub fn search(a: SearchArgs) -> Result<()> {
    if a.sims == 0 || a.sims > MAX_SIMS {
        bail!("--sims {} is out of range (1..={MAX_SIMS})", a.sims);
    }
    if a.considered == 0 {
        bail!("--considered must be at least 1");
    }
    let game = a.pos.game()?;
    let result = game.result();
    if result.is_over() {
        bail!("the game is over ({result}); there is no move to search");
    }
    let state = VariantGame::from_game(&game);
    let pos = *game.position();
    let mut config = SearchConfig::default();
    if a.gumbel {
        config.root_mode = RootMode::Gumbel(GumbelConfig { max_considered: a.considered, ..GumbelConfig::default() });
    }
    let material = MaterialEvaluator::default();
    let knowledge = Knowledge::heuristic_only();
    let rollout = RolloutEvaluator { seed: a.seed, ..RolloutEvaluator::default() };
    let eval = |s: &VariantGame, m: &[Move], p: &mut [f32]| -> LeafValue {
        match a.eval {
            EvalKind::Material => material.evaluate(s, m, p),
            EvalKind::Rollout => rollout.evaluate(s, m, p),
            EvalKind::Uniform => uniform_evaluator(s, m, p),
            EvalKind::Knowledge => knowledge.evaluate(s, m, p),
        }
    };
    let t = Instant::now();
    let mut s = Search::new(state, config, a.seed);
    let found = match &a.model {
        Some(path) => {
            let device = a.net.device()?;
            let (mut net, _) = vzero_model::NetEvaluator::load(path, pos.variant(), device)?;
            s.start_with(a.sims, true);
            net.run_search(&mut s, a.net.batch)?
        }
        None => s.run(a.sims, eval),
    };
    let Some(r) = found else { bail!("the root is terminal; there is no move to search") };
    let secs = t.elapsed().as_secs_f64();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());

    writeln!(
        out,
        "search {} {} sims {} eval {} seed {}",
        pos.variant().name(),
        if a.gumbel { "gumbel" } else { "puct" },
        r.simulations,
        match &a.model {
            Some(p) => p.display().to_string(),
            None => a.eval.to_possible_value().map_or(String::new(), |v| v.get_name().to_string()),
        },
        a.seed
    )?;
    writeln!(out, "fen {}", pos.fen())?;
    writeln!(
        out,
        "root value {:+.4} raw {:+.4} visits {} nodes {} time {:.1} ms ({:.0} sims/s){}",
        r.root_value,
        r.raw_value,
        r.root_visits,
        s.num_nodes(),
        secs * 1e3,
        r.simulations as f64 / secs.max(1e-9),
        r.proven.map_or(String::new(), |p| format!(" proven {p}"))
    )?;
    let mut order: Vec<usize> = (0..r.moves.len()).collect();
    order.sort_by(|&i, &j| {
        let (x, y) = (&r.moves[i], &r.moves[j]);
        y.visits.cmp(&x.visits).then(r.policy_target[j].total_cmp(&r.policy_target[i]))
    });
    // A proven root may have spent no simulation: its proven-best moves (the target) first.
    if r.proven.is_some() {
        order.sort_by(|&i, &j| r.policy_target[j].total_cmp(&r.policy_target[i]));
    }
    writeln!(out, "{:<10} {:>8} {:>8} {:>8} {:>8} {:>8}", "move", "visits", "prior", "q", "policy", "proof")?;
    for i in order {
        let m = &r.moves[i];
        let q = m.q.map_or("-".to_string(), |q| format!("{q:+.4}"));
        let proof = m.proof.map_or("-".to_string(), |p| format!("{}:{}", p.outcome(), p.plies()));
        writeln!(out, "{:<10} {:>8} {:>8.4} {:>8} {:>8.4} {:>8}", pos.uci(m.mv), m.visits, m.prior, q, r.policy_target[i], proof)?;
    }
    writeln!(out, "bestmove {}", pos.uci(r.chosen))?;
    out.flush()?;
    Ok(())
}
