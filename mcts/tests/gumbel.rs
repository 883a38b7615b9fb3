//! Gumbel root search: policy target, sequential halving, determinism.
mod common;

use common::{Endless, Nim, TicTacToe};
use vzero_mcts::{uniform_evaluator, Game, GumbelConfig, LeafValue, Proof, RootMode, Search, SearchConfig};

fn gumbel_cfg(m: usize) -> SearchConfig {
    SearchConfig { root_mode: RootMode::Gumbel(GumbelConfig { max_considered: m, ..GumbelConfig::default() }), ..SearchConfig::default() }
}

#[test]
fn policy_target_sums_to_one_and_favours_the_winning_move() {
    let pos = TicTacToe::parse("xx.oo....");
    let mut legal = Vec::new();
    pos.legal_moves(&mut legal);
    let win = legal.iter().position(|&m| m == 2).unwrap();
    for seed in 0..10 {
        // The solver proves the win in one at the root: no simulation, all the target on it.
        let r = Search::new(pos.clone(), gumbel_cfg(16), seed).run(32, uniform_evaluator).unwrap();
        assert_eq!((r.chosen, r.proven, r.simulations), (2, Some(Proof::Win(1)), 0));
        assert_eq!(r.policy_target, (0..legal.len()).map(|i| if i == win { 1.0 } else { 0.0 }).collect::<Vec<_>>());
        // Without it, the completed-Q target finds the win.
        let cfg = SearchConfig { solver: false, ..gumbel_cfg(16) };
        let mut s = Search::new(pos.clone(), cfg, seed);
        let r = s.run(32, uniform_evaluator).unwrap();
        assert_eq!(r.policy_target.len(), legal.len());
        assert_eq!(r.moves.iter().map(|m| m.mv).collect::<Vec<_>>(), legal);
        let sum: f32 = r.policy_target.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "sum {sum}");
        assert!(r.policy_target.iter().all(|&p| p > 0.0 && p.is_finite()));
        let prior = r.moves[win].prior;
        let best = r.policy_target.iter().cloned().fold(0.0, f32::max);
        assert_eq!(r.policy_target[win], best, "seed {seed}: {:?}", r.policy_target);
        assert!(r.policy_target[win] > 1.5 * prior, "seed {seed}: target {} prior {prior}", r.policy_target[win]);
        assert_eq!(r.chosen, 2, "seed {seed}");
        assert_eq!(r.simulations, 32);
    }
}

#[test]
fn small_budget_finds_nim_win_in_two() {
    for seed in 0..10 {
        let mut s = Search::new(Nim { pile: 7, to_move: 0 }, gumbel_cfg(4), seed);
        let r = s.run(48, uniform_evaluator).unwrap();
        assert_eq!(r.chosen, 3, "seed {seed}: {:?}", r.moves);
        let t = &r.policy_target;
        assert!(t[2] > t[0] && t[2] > t[1], "{t:?}");
    }
}

#[test]
fn sequential_halving_spreads_then_focuses_visits() {
    // 20 moves, m = 8, 64 sims, constant value: 8 actions get visits, the first phase gives each
    // the same count, and the winners of the halving get strictly more.
    let mut s = Search::new(Endless::new(20), gumbel_cfg(8), 5);
    let r = s
        .run(64, |_, m, p| {
            uniform_evaluator(&(), m, p);
            LeafValue::default()
        })
        .unwrap();
    let visited: Vec<u32> = r.moves.iter().map(|m| m.visits).filter(|&v| v > 0).collect();
    assert_eq!(visited.len(), 8, "{visited:?}");
    assert_eq!(visited.iter().sum::<u32>(), 64);
    let max = *visited.iter().max().unwrap();
    let min = *visited.iter().min().unwrap();
    assert!(max >= 4 * min, "{visited:?}");
    // The chosen move is among the most visited.
    let chosen = r.moves.iter().find(|m| m.mv == r.chosen).unwrap();
    assert_eq!(chosen.visits, max);
}

#[test]
fn zero_gumbel_scale_is_deterministic_across_seeds_and_budget_zero_samples_prior() {
    let cfg = SearchConfig {
        root_mode: RootMode::Gumbel(GumbelConfig { gumbel_scale: 0.0, ..GumbelConfig::default() }),
        ..SearchConfig::default()
    };
    let pos = TicTacToe::parse("xo..x...o");
    let a = Search::new(pos.clone(), cfg.clone(), 1).run(40, uniform_evaluator).unwrap();
    let b = Search::new(pos.clone(), cfg, 2).run(40, uniform_evaluator).unwrap();
    assert_eq!(a, b);

    // With no simulations the Gumbel-max trick samples the move from the prior.
    let mut counts = [0u32; 3];
    for seed in 0..3000 {
        let mut s = Search::new(Endless::new(3), gumbel_cfg(16), seed);
        let r = s
            .run(0, |_, _, p| {
                p.copy_from_slice(&[0.6, 0.3, 0.1]);
                LeafValue::default()
            })
            .unwrap();
        counts[r.chosen as usize] += 1;
        assert!((r.policy_target[0] - 0.6).abs() < 1e-5);
    }
    assert!((1650..1950).contains(&counts[0]) && (750..1050).contains(&counts[1]), "{counts:?}");
}

#[test]
fn policy_target_is_softmax_of_logits_plus_sigma_completed_q() {
    // Recompute the target from the reported statistics with the paper's formula.
    let cfg = GumbelConfig { max_considered: 8, ..GumbelConfig::default() };
    let sc = SearchConfig { root_mode: RootMode::Gumbel(cfg), ..SearchConfig::default() };
    let mut s = Search::new(Endless::new(12), sc, 9);
    let priors: Vec<f32> = (0..12).map(|i| (i + 1) as f32 / 78.0).collect();
    let r = s
        .run(40, |st, _, p| {
            p.copy_from_slice(&priors);
            LeafValue::scalar(((st.path % 17) as f32 / 8.0 - 1.0).clamp(-1.0, 1.0))
        })
        .unwrap();
    let visited: Vec<bool> = r.moves.iter().map(|m| m.visits > 0).collect();
    assert!(visited.iter().any(|v| !v), "want some unvisited moves");
    let sum_n: f32 = r.moves.iter().map(|m| m.visits as f32).sum();
    let max_n = r.moves.iter().map(|m| m.visits).max().unwrap() as f32;
    let sum_p: f32 = r.moves.iter().filter(|m| m.visits > 0).map(|m| m.prior).sum();
    let sum_pq: f32 = r.moves.iter().filter(|m| m.visits > 0).map(|m| m.prior * m.q.unwrap()).sum();
    let mixed = (r.raw_value + sum_n * sum_pq / sum_p) / (sum_n + 1.0);
    let completed: Vec<f32> = r.moves.iter().map(|m| m.q.unwrap_or(mixed)).collect();
    let lo = completed.iter().cloned().fold(f32::INFINITY, f32::min);
    let hi = completed.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let z: Vec<f32> = r
        .moves
        .iter()
        .zip(&completed)
        .map(|(m, q)| m.prior.ln() + (cfg.c_visit + max_n) * cfg.c_scale * (q - lo) / (hi - lo))
        .collect();
    let zmax = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|x| (x - zmax).exp()).collect();
    let es: f32 = e.iter().sum();
    for (i, (t, x)) in r.policy_target.iter().zip(&e).enumerate() {
        assert!((t - x / es).abs() < 1e-4, "move {i}: {t} vs {}", x / es);
    }
}
