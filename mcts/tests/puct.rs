//! PUCT search on toy games with stub evaluators.
mod common;

use common::{Endless, Nim, TicTacToe};
use vzero_mcts::{uniform_evaluator, Game, LeafValue, Proof, Search, SearchConfig};

fn greedy() -> SearchConfig {
    SearchConfig::default()
}

/// Evaluator that panics on terminal positions: those must be scored by the search itself.
fn uniform_nonterminal<G: Game>(s: &G, m: &[G::Move], p: &mut [f32]) -> LeafValue {
    assert!(s.terminal_value().is_none(), "evaluator called on a terminal position");
    uniform_evaluator(s, m, p)
}

#[test]
fn finds_tictactoe_win_in_one() {
    // X: 0 1, O: 3 4; X to move. Only 2 wins at once (O threatens 5).
    let pos = TicTacToe::parse("xx.oo....");
    assert_eq!(pos.to_move, 0);
    assert_eq!(pos.optimal_moves(), vec![2]);
    let mut s = Search::new(pos.clone(), greedy(), 1);
    let r = s.run(400, uniform_nonterminal).unwrap();
    assert_eq!(r.chosen, 2);
    // The solver sees the win when the root is created: proven, exact, no simulation spent.
    let win = r.moves.iter().find(|m| m.mv == 2).unwrap();
    assert_eq!((win.proof, r.proven, r.root_value, r.simulations), (Some(Proof::Win(1)), Some(Proof::Win(1)), 1.0, 0));
    // Plain MCTS finds it by simulation.
    let mut s = Search::new(pos, SearchConfig { solver: false, ..greedy() }, 1);
    let r = s.run(400, uniform_nonterminal).unwrap();
    assert_eq!(r.chosen, 2);
    let win = r.moves.iter().find(|m| m.mv == 2).unwrap();
    assert!(win.q.unwrap() > 0.99, "{win:?}");
    assert!(r.root_value > 0.5, "root value {}", r.root_value);
}

#[test]
fn finds_tictactoe_win_in_two() {
    // X: 0 4, O: 1 8; X to move. No immediate win; a fork (3 or 6) wins in two.
    let pos = TicTacToe::parse("xo..x...o");
    assert_eq!(pos.to_move, 0);
    let winning = pos.optimal_moves();
    assert_eq!(pos.solve(), 1.0);
    let mut all = Vec::new();
    pos.legal_moves(&mut all);
    assert!(winning.len() < all.len() && !winning.is_empty());
    for &m in &all {
        let mut p = pos.clone();
        p.play(m);
        assert!(p.terminal_value().is_none(), "{m} wins at once; not a win-in-two position");
    }
    let mut s = Search::new(pos, greedy(), 1);
    let r = s.run(3000, uniform_nonterminal).unwrap();
    assert!(winning.contains(&r.chosen), "chose {} not in {winning:?}: {:?}", r.chosen, r.moves);
    assert!(r.root_value > 0.5, "root value {}", r.root_value);
}

#[test]
fn finds_nim_wins() {
    // Take the last stone wins: from 3 take 3 (win in one); from 7 take 3 (win in two);
    // from 10 take 2 (win in three).
    for (pile, best, sims) in [(3, 3u8, 100), (7, 3, 1000), (10, 2, 3000)] {
        let mut s = Search::new(Nim { pile, to_move: 0 }, greedy(), 7);
        let r = s.run(sims, uniform_nonterminal).unwrap();
        assert_eq!(r.chosen, best, "pile {pile}: {:?}", r.moves);
    }
}

#[test]
fn visits_follow_prior_when_value_is_uninformative() {
    let priors = [0.4f32, 0.3, 0.2, 0.1];
    let cfg = SearchConfig { fpu_reduction: 0.0, root_fpu_reduction: 0.0, ..SearchConfig::default() };
    let mut s = Search::new(Endless::new(4), cfg, 3);
    let n = 4000;
    let r = s
        .run(n, |_, moves, p| {
            assert_eq!(moves.len(), 4);
            p.copy_from_slice(&priors);
            LeafValue::scalar(0.0)
        })
        .unwrap();
    let total: u32 = r.moves.iter().map(|m| m.visits).sum();
    assert_eq!(total, n);
    for (m, &p) in r.moves.iter().zip(&priors) {
        let f = m.visits as f32 / total as f32;
        assert!((f - p).abs() < 0.01, "move {:?}: visit share {f} vs prior {p}", m.mv);
        assert!((m.prior - p).abs() < 1e-6);
    }
    // The policy target of a PUCT search is the visit distribution.
    for (m, t) in r.moves.iter().zip(&r.policy_target) {
        assert!((t - m.visits as f32 / total as f32).abs() < 1e-6);
    }
    assert_eq!(r.chosen, 0);
}

#[test]
fn unnormalized_priors_are_normalized() {
    let mut s = Search::new(Endless::new(3), greedy(), 0);
    let r = s
        .run(10, |_, _, p| {
            p.copy_from_slice(&[2.0, 1.0, 1.0]);
            LeafValue::default()
        })
        .unwrap();
    let pr: Vec<f32> = r.moves.iter().map(|m| m.prior).collect();
    assert_eq!(pr, vec![0.5, 0.25, 0.25]);
}

#[test]
fn fpu_reduction_concentrates_visits_on_good_moves() {
    // With value information the better move gets more visits than the prior alone would give
    // (plain MCTS: the solver would prove the win at once and spend nothing).
    let cfg = SearchConfig { fpu_reduction: 0.5, root_fpu_reduction: 0.5, solver: false, ..SearchConfig::default() };
    let mut s = Search::new(TicTacToe::parse("xx.oo...."), cfg, 0);
    let r = s.run(200, uniform_nonterminal).unwrap();
    let win = r.moves.iter().find(|m| m.mv == 2).unwrap();
    assert!(win.visits > 150, "{:?}", r.moves);
}
