//! Proofs against brute force: every node the solver proves has the value a minimax of its
//! subtree to the proof's depth gives (toy games with double moves, and the rules core's
//! variants under random play); and the roots never pick a move proven lost.
mod common;

use common::{inner, term, TableGame, TableNode, TicTacToe};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_mcts::{
    uniform_evaluator, Game, GumbelConfig, LeafValue, Proof, RootMode, Search, SearchConfig,
};

/// The outcome for the player to move (1 win, 0 draw, -1 loss) that a minimax of at most
/// `depth` plies settles, or `None` when some line needed is longer.
fn minimax<G: Game>(g: &G, depth: u16) -> Option<i8> {
    let mut moves = Vec::new();
    if let Some(v) = g.expand(&mut moves) {
        return Some((v > 0.0) as i8 - (v < 0.0) as i8);
    }
    if depth == 0 {
        return None;
    }
    let mut all = true;
    let mut best = -1;
    for m in moves {
        let mut next = g.clone();
        next.play(m);
        let same = next.to_move() == g.to_move();
        match minimax(&next, depth - 1) {
            Some(v) => {
                let v = if same { v } else { -v };
                if v == 1 {
                    return Some(1);
                }
                best = best.max(v);
            }
            None => all = false,
        }
    }
    all.then_some(best)
}

/// Checks every proven node of `s` (its state reached from `root`) whose proof is at most
/// `max_plies` long against [`minimax`] to that depth; returns how many were checked.
fn check_proofs<G: Game>(s: &Search<G>, root: &G, max_plies: u16) -> usize {
    let mut checked = 0;
    let mut stack = vec![(Vec::new(), root.clone())];
    while let Some((path, state)) = stack.pop() {
        let Some(n) = s.node_stats(&path) else { continue };
        if let Some(p) = n.proof.filter(|p| p.plies() <= max_plies) {
            let v = minimax(&state, p.plies());
            assert_eq!(v, Some(p.value() as i8), "node {path:?} proven {p}: minimax to that depth says {v:?}");
            checked += 1;
        }
        for c in n.children.iter().filter(|c| c.visits > 0) {
            if let Some(p) = c.proof.filter(|p| p.plies() <= max_plies) {
                let mut next = state.clone();
                next.play(c.mv);
                let same = next.to_move() == state.to_move();
                let v = minimax(&next, p.plies() - 1).map(|v| if same { v } else { -v });
                assert_eq!(v, Some(p.value() as i8), "move {:?} at {path:?} proven {p}", c.mv);
            }
            let mut next = state.clone();
            next.play(c.mv);
            stack.push(([path.clone(), vec![c.mv]].concat(), next));
        }
    }
    checked
}

fn configs() -> [SearchConfig; 3] {
    [
        SearchConfig::default(),
        SearchConfig { root_mode: RootMode::Gumbel(GumbelConfig::default()), ..SearchConfig::default() },
        SearchConfig::selfplay_puct(),
    ]
}

#[test]
fn proofs_match_minimax_in_tictactoe() {
    let mut rng = StdRng::seed_from_u64(1);
    let mut checked = 0;
    for game in 0..40 {
        let mut pos = TicTacToe::new();
        for _ in 0..rng.gen_range(0..5) {
            let mut moves = Vec::new();
            pos.legal_moves(&mut moves);
            pos.play(moves[rng.gen_range(0..moves.len())]);
        }
        if pos.terminal_value().is_some() {
            continue;
        }
        for cfg in configs() {
            let mut s = Search::new(pos.clone(), cfg, game);
            let r = s.run(rng.gen_range(10..600), uniform_evaluator).unwrap();
            checked += check_proofs(&s, &pos, 9);
            if let Some(p) = r.proven {
                assert_eq!(p.value(), pos.solve(), "{pos:?}");
                assert!(pos.optimal_moves().contains(&r.chosen), "{pos:?}: proven {p}, chose {}", r.chosen);
            }
        }
    }
    assert!(checked > 2000, "{checked}");
}

/// A random finite game tree where the same player often moves twice in a row.
fn random_tree(rng: &mut StdRng) -> TableGame {
    let mut nodes: Vec<TableNode> = vec![inner(0, 0.0, &[])];
    let mut open = vec![(0usize, 0u32)];
    while let Some((i, depth)) = open.pop() {
        let width = rng.gen_range(1..=3u8);
        for mv in 0..width {
            let to_move = if rng.gen_bool(0.3) { nodes[i].to_move } else { 1 - nodes[i].to_move };
            let child = nodes.len();
            if depth >= 7 || rng.gen_bool(0.2) {
                nodes.push(term(to_move, [-1.0, 0.0, 1.0][rng.gen_range(0..3)]));
            } else {
                nodes.push(inner(to_move, rng.gen_range(-1.0..1.0), &[]));
                open.push((child, depth + 1));
            }
            nodes[i].children.push((mv, child));
        }
    }
    TableGame::new(nodes)
}

#[test]
fn proofs_match_minimax_on_random_trees_with_double_moves() {
    let mut rng = StdRng::seed_from_u64(2);
    let (mut checked, mut proven_roots) = (0, 0);
    for k in 0..60 {
        let g = random_tree(&mut rng);
        for cfg in configs() {
            let mut s = Search::new(g.clone(), cfg, k);
            let r = s.run(rng.gen_range(20..800), |st: &TableGame, m: &[u8], p: &mut [f32]| {
                uniform_evaluator(st, m, p);
                LeafValue::scalar(st.node().eval)
            });
            checked += check_proofs(&s, &g, 20);
            if let Some(p) = r.and_then(|r| r.proven) {
                proven_roots += 1;
                assert_eq!(minimax(&g, 20), Some(p.value() as i8));
            }
        }
    }
    assert!(checked > 3000 && proven_roots > 30, "{checked} nodes, {proven_roots} roots");
}

/// Positions from the last plies of seeded random games of every variant (where tactics are):
/// each short proof of a searched tree agrees with a minimax of the rules.
#[test]
fn proofs_match_minimax_in_every_variant() {
    let mut rng = StdRng::seed_from_u64(3);
    for name in vzero_rules::variant::builtin_names() {
        let v = common::chess::variant(name);
        let big = v.files() * v.ranks() > 64 || v.has_drops();
        let max_plies = if big { 2 } else { 3 };
        let mut checked = 0;
        for game in 0..12 {
            let line = common::chess::random_game(v, &mut rng, 400);
            for st in line.iter().rev().skip(1).take(6) {
                let mut s = Search::new(st.clone(), SearchConfig::default(), game);
                s.run(300, uniform_evaluator).unwrap();
                checked += check_proofs(&s, st, max_plies);
            }
        }
        assert!(checked >= 30, "{name}: only {checked} proven nodes checked");
    }
}

/// Root p0: move 0 (prior 0.9) hands p1 a win at once, but the evaluator calls that position
/// lost for p1; move 1 (prior 0.1) starts a long quiet line. Plain MCTS believes the evaluator;
/// the solver proves move 0 lost and neither root plays it or puts target mass on it.
#[test]
fn roots_never_choose_a_move_proven_lost() {
    let mut nodes = vec![
        inner(0, 0.0, &[(0, 1), (1, 3)]),
        inner(1, -0.9, &[(0, 2)]), // p1 to move, and its move wins at once
        term(0, -1.0),
    ];
    for i in 3..60 {
        nodes.push(inner(if i % 2 == 1 { 1 } else { 0 }, 0.0, &[(0, i + 1)]));
    }
    nodes.push(term(0, 0.0));
    let game = TableGame::new(nodes);
    let eval = |st: &TableGame, _: &[u8], p: &mut [f32]| {
        let n = p.len();
        p.iter_mut().enumerate().for_each(|(i, x)| *x = if n == 2 { [0.9, 0.1][i] } else { 1.0 / n as f32 });
        LeafValue::scalar(st.node().eval)
    };
    let gumbel = RootMode::Gumbel(GumbelConfig { max_considered: 2, gumbel_scale: 0.0, ..GumbelConfig::default() });
    for root_mode in [RootMode::Puct, gumbel] {
        let plain = SearchConfig { root_mode, solver: false, ..SearchConfig::default() };
        let r = Search::new(game.clone(), plain, 0).run(2, eval).unwrap();
        assert_eq!(r.chosen, 0, "plain MCTS believes the evaluator ({root_mode:?})");
        for cfg in [SearchConfig { root_mode, ..SearchConfig::default() }, SearchConfig { root_mode, ..SearchConfig::selfplay_puct() }] {
            for sims in [1, 2, 16, 64] {
                let r = Search::new(game.clone(), cfg.clone(), 0).run(sims, eval).unwrap();
                assert_eq!(r.moves[0].proof, Some(Proof::Loss(2)), "{root_mode:?} {sims}");
                assert_eq!((r.chosen, r.policy_target[0]), (1, 0.0), "{root_mode:?} {sims}: {:?}", r.policy_target);
            }
        }
    }
}

/// A Gumbel root that considers two moves (no noise, the two highest priors) still plays the
/// win in one among the others: the solver proves it when the root is created.
#[test]
fn gumbel_root_plays_a_proven_win_it_would_not_consider() {
    let game = TableGame::new(vec![
        inner(0, 0.0, &[(0, 1), (1, 1), (2, 1), (3, 2)]),
        inner(1, 0.0, &[(0, 3)]),
        term(1, -1.0), // p1 to move and lost: move 3 wins at once
        term(0, 0.0),
    ]);
    let eval = |_: &TableGame, _: &[u8], p: &mut [f32]| {
        let n = p.len();
        p.iter_mut().enumerate().for_each(|(i, x)| *x = if n == 4 { [0.4, 0.3, 0.28, 0.02][i] } else { 1.0 });
        LeafValue::scalar(0.5)
    };
    let root_mode = RootMode::Gumbel(GumbelConfig { max_considered: 2, gumbel_scale: 0.0, ..GumbelConfig::default() });
    let r = Search::new(game.clone(), SearchConfig { root_mode, solver: false, ..SearchConfig::default() }, 0).run(32, eval).unwrap();
    assert_ne!(r.chosen, 3, "sequential halving never looks at it");
    let r = Search::new(game, SearchConfig { root_mode, ..SearchConfig::default() }, 0).run(32, eval).unwrap();
    assert_eq!((r.chosen, r.proven, r.policy_target.clone()), (3, Some(Proof::Win(1)), vec![0.0, 0.0, 0.0, 1.0]));
}
