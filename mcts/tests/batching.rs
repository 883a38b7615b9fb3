//! Gather/apply batching, virtual loss, tree reuse, determinism and playout caps.
mod common;

use common::{Endless, TicTacToe};
use std::collections::HashSet;
use vzero_mcts::{
    gather_batch, uniform_evaluator, Game, Leaf, PlayoutCap, Proof, Search, SearchConfig, SearchResult,
    TemperatureSchedule,
};

fn eval_leaf<G: Game>(s: &mut Search<G>, leaf: &Leaf<G>) {
    let mut p = vec![0.0; s.leaf_moves(leaf.handle).len()];
    let v = uniform_evaluator(&leaf.state, s.leaf_moves(leaf.handle), &mut p);
    s.apply(leaf.handle, &p, v);
}

#[test]
fn virtual_loss_yields_distinct_leaves() {
    let mut s = Search::new(Endless::new(30), SearchConfig::default(), 0);
    s.start_with(100, true);
    let mut leaves = Vec::new();
    // A fresh tree first needs its root evaluated: one leaf, however many are asked for.
    assert_eq!(s.gather(8, &mut leaves), 1);
    assert_eq!(s.gather(8, &mut leaves), 0, "root already in flight");
    eval_leaf(&mut s, &leaves.pop().unwrap());

    // Three batches of 8 gathered before any is applied: 24 distinct leaves.
    let mut seen = HashSet::new();
    for round in 0..3 {
        let before = leaves.len();
        assert_eq!(s.gather(8, &mut leaves), 8, "round {round}");
        assert_eq!(s.pending() as usize, leaves.len());
        for l in &leaves[before..] {
            assert!(seen.insert(l.state.path), "leaf returned twice");
        }
    }
    // Apply out of order.
    for l in leaves.iter().rev() {
        eval_leaf(&mut s, l);
    }
    assert_eq!(s.pending(), 0);
    assert_eq!(s.node_stats(&[]).unwrap().visits, 1 + 24);
}

#[test]
fn small_trees_give_fewer_leaves_but_never_duplicates() {
    // Two empty squares: at most 2 leaves below the root, then terminals.
    let pos = TicTacToe::parse("xoxxoo.x.");
    assert!(pos.terminal_value().is_none());
    let mut s = Search::new(pos.clone(), SearchConfig::default(), 0);
    s.start_with(50, true);
    let mut leaves = Vec::new();
    s.gather(8, &mut leaves);
    eval_leaf(&mut s, &leaves.pop().unwrap());
    let n = s.gather(8, &mut leaves);
    assert!((1..=2).contains(&n), "{n}");
    let states: HashSet<_> = leaves.iter().map(|l| l.state.clone()).collect();
    assert_eq!(states.len(), n);
    for l in std::mem::take(&mut leaves) {
        eval_leaf(&mut s, &l);
    }
    // The search goes on (terminals are scored inside gather) until the solver proves the draw:
    // O must take 6 (8 lets X complete the 0-3-6 column), then X's 8 fills the board.
    while !s.is_done() {
        s.gather(8, &mut leaves);
        for l in std::mem::take(&mut leaves) {
            eval_leaf(&mut s, &l);
        }
    }
    let r = s.finish().unwrap();
    assert_eq!((r.proven, r.chosen, r.root_value), (Some(Proof::Draw(2)), 6, 0.0));
    assert!(r.simulations < 50, "{}", r.simulations);
    // Without the solver the whole budget is spent.
    let mut s = Search::new(pos.clone(), SearchConfig { solver: false, ..SearchConfig::default() }, 0);
    assert_eq!(s.run(50, uniform_evaluator).unwrap().simulations, 50);
}

#[test]
fn batched_search_over_many_trees_finds_the_win() {
    let positions = ["xx.oo....", "xo..x...o", "........."];
    let mut searches: Vec<_> = (0..6)
        .map(|i| Search::new(TicTacToe::parse(positions[i % 3]), SearchConfig::default(), i as u64))
        .collect();
    for s in &mut searches {
        s.start_with(3000, true);
    }
    let mut batch = Vec::new();
    let mut batches = 0;
    while searches.iter().any(|s| !s.is_done()) {
        batch.clear();
        assert!(gather_batch(&mut searches, 8, 40, &mut batch) <= 40);
        batches += 1;
        for leaf in &batch {
            eval_leaf(&mut searches[leaf.handle.tree()], leaf);
        }
    }
    // Batches of up to 6 x 8 leaves: far fewer round trips than simulations.
    assert!(batches < 6 * 3000 / 4, "{batches} batches");
    for (i, s) in searches.iter_mut().enumerate() {
        let r = s.finish().unwrap();
        // The whole budget, unless the root was proven first (the wins in one and in two).
        assert!(r.simulations == 3000 || r.proven.is_some(), "tree {i}: {} sims", r.simulations);
        let pos = TicTacToe::parse(positions[i % 3]);
        assert!(pos.optimal_moves().contains(&r.chosen), "tree {i}: {}", r.chosen);
        if pos.solve() == 1.0 {
            assert!(r.proven.is_some_and(|p| p.value() == 1.0), "tree {i}: {:?}", r.proven);
        }
    }
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let mut s = Search::new(TicTacToe::new(), SearchConfig::default(), 0);
    let r = s.run(500, uniform_evaluator).unwrap();
    let mv = r.chosen;
    let child = s.node_stats(&[mv]).unwrap();
    let grandchildren: Vec<_> = child.children.iter().map(|c| s.node_stats(&[mv, c.mv])).collect();
    assert!(child.visits > 20);

    s.advance(mv);
    assert_eq!(s.ply(), 1);
    let root = s.node_stats(&[]).unwrap();
    assert_eq!(root, child);
    for (c, g) in child.children.iter().zip(&grandchildren) {
        assert_eq!(&s.node_stats(&[c.mv]), g);
    }
    assert!(s.num_nodes() < 500);

    let r2 = s.run(100, uniform_evaluator).unwrap();
    assert_eq!(r2.root_visits, child.visits + 100);
    assert_eq!(r2.simulations, 100);

    // Without reuse the tree restarts.
    let cfg = SearchConfig { reuse_tree: false, ..SearchConfig::default() };
    let mut s = Search::new(TicTacToe::new(), cfg, 0);
    s.run(200, uniform_evaluator).unwrap();
    s.advance(4);
    assert_eq!(s.node_stats(&[]).unwrap().visits, 0);
}

fn selfplay_game(cfg: &SearchConfig, seed: u64) -> Vec<SearchResult<u8>> {
    let mut s = Search::new(TicTacToe::new(), cfg.clone(), seed);
    let mut out = Vec::new();
    while s.root_state().terminal_value().is_none() {
        let r = s.run_move(uniform_evaluator).unwrap();
        s.advance(r.chosen);
        out.push(r);
    }
    out
}

#[test]
fn deterministic_under_a_fixed_seed() {
    let mut puct = SearchConfig::selfplay_puct();
    puct.playout_cap = PlayoutCap { full_prob: 0.5, full_sims: 64, cheap_sims: 16, noise_in_cheap: false };
    puct.temperature = TemperatureSchedule { initial: 1.0, final_: 0.5, half_life: 4.0 };
    let mut gumbel = SearchConfig::selfplay_gumbel();
    gumbel.playout_cap = puct.playout_cap;
    for cfg in [puct, gumbel] {
        let a = selfplay_game(&cfg, 42);
        let b = selfplay_game(&cfg, 42);
        assert_eq!(a, b);
        let differs = (0..10).any(|seed| selfplay_game(&cfg, seed) != a);
        assert!(differs, "different seeds never differ");
    }
}

#[test]
fn dirichlet_noise_changes_search_priors_but_not_reported_priors() {
    let cfg = SearchConfig { noise: Some(Default::default()), ..SearchConfig::default() };
    let mut s = Search::new(Endless::new(30), cfg, 11);
    let r = s.run(50, uniform_evaluator).unwrap();
    assert!(r.moves.iter().all(|m| (m.prior - 1.0 / 30.0).abs() < 1e-6));
    let noised: Vec<f32> = s.node_stats(&[]).unwrap().children.iter().map(|c| c.prior).collect();
    assert!((noised.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    let max = noised.iter().cloned().fold(0.0, f32::max);
    assert!(max > 1.0 / 30.0 + 0.01, "noise had no effect: {noised:?}");
    // A cheap search gets no noise (KataGo), and raw priors are restored for it.
    s.start_with(10, false);
    let mut leaves = Vec::new();
    while !s.is_done() {
        s.gather(1, &mut leaves);
        for l in std::mem::take(&mut leaves) {
            eval_leaf(&mut s, &l);
        }
    }
    let r = s.finish().unwrap();
    assert!(!r.full_search && !r.record_policy());
    let pri: Vec<f32> = s.node_stats(&[]).unwrap().children.iter().map(|c| c.prior).collect();
    assert!(pri.iter().all(|p| (p - 1.0 / 30.0).abs() < 1e-6));
}

#[test]
fn playout_cap_randomization() {
    let cfg = SearchConfig {
        playout_cap: PlayoutCap { full_prob: 0.3, full_sims: 40, cheap_sims: 8, noise_in_cheap: false },
        ..SearchConfig::default()
    };
    let mut s = Search::new(Endless::new(5), cfg, 3);
    let mut full = 0;
    for _ in 0..400 {
        let r = s.run_move(uniform_evaluator).unwrap();
        assert_eq!(r.simulations, if r.full_search { 40 } else { 8 });
        assert_eq!(r.record_policy(), r.full_search);
        full += r.full_search as u32;
        s.advance(r.chosen);
    }
    assert!((90..150).contains(&full), "{full} full searches of 400");
}

#[test]
fn temperature_samples_in_proportion_to_visits() {
    let cfg = SearchConfig {
        temperature: TemperatureSchedule { initial: 1.0, final_: 1.0, half_life: 0.0 },
        fpu_reduction: 0.0,
        root_fpu_reduction: 0.0,
        ..SearchConfig::default()
    };
    let mut counts = [0u32; 2];
    let mut share = 0.0;
    for seed in 0..2000 {
        let mut s = Search::new(Endless::new(2), cfg.clone(), seed);
        let r = s
            .run(40, |_, _, p| {
                p.copy_from_slice(&[0.75, 0.25]);
                Default::default()
            })
            .unwrap();
        share = r.policy_target[0];
        counts[r.chosen as usize] += 1;
    }
    let f = counts[0] as f32 / 2000.0;
    assert!((f - share).abs() < 0.04, "picked first {f}, visit share {share}");
}
