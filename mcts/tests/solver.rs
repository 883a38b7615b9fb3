//! The MCTS-solver on the rules core's variants: one-move wins never missed, proven mates,
//! campmates, repetitions and n-move draws, Dictator double moves, tree reuse and batching.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_mcts::{
    gather_batch, uniform_evaluator, Game, GumbelConfig, LeafValue, Proof, RootMode, Search, SearchConfig,
    SearchResult, VariantGame,
};
use vzero_rules::{Move, Reason};

mod common;
use common::chess::{forced_win, gumbel_greedy, present, rules_game, state, variant, MATES_IN_TWO};

/// Whether `m` ends the game at once with a win for the player making it (by playing it).
fn wins_at_once(st: &VariantGame, m: Move) -> bool {
    let me = st.to_move();
    let mut next = st.clone();
    next.play(m);
    next.terminal_value().is_some_and(|v| if next.to_move() == me { v > 0.0 } else { v < 0.0 })
}

/// Positions of seeded random games of `name` in which some move wins at once: up to `want`,
/// at most two per game. With `wide`, only positions with at least 150 legal moves, from games
/// that capture whenever they can (in shogun the captured pieces fill the hands: many drops).
fn one_move_wins(name: &str, want: usize, seed: u64, wide: bool) -> Vec<VariantGame> {
    let v = variant(name);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut found = Vec::new();
    let mut moves = Vec::new();
    for _game in 0..400 {
        let mut st = VariantGame::startpos(v);
        let mut taken = 0;
        for _ply in 0..300 {
            moves.clear();
            if st.expand(&mut moves).is_some() {
                break;
            }
            let eligible = !wide || moves.len() >= 150;
            if taken < 2 && eligible && moves.iter().any(|&m| wins_at_once(&st, m)) && (taken == 0 || rng.gen_bool(0.3)) {
                found.push(st.clone());
                taken += 1;
                if found.len() == want {
                    return found;
                }
            }
            let captures: Vec<Move> = moves.iter().copied().filter(|&m| !m.is_drop() && st.position().piece_at(vzero_rules::Square(m.to() as u8)).is_some()).collect();
            let m = if wide && !captures.is_empty() && rng.gen_bool(0.8) { captures[rng.gen_range(0..captures.len())] } else { moves[rng.gen_range(0..moves.len())] };
            st.play(m);
        }
    }
    found
}

/// A Gumbel root as self-play uses it (16 considered moves, Gumbel noise).
fn gumbel() -> SearchConfig {
    SearchConfig { root_mode: RootMode::Gumbel(GumbelConfig::default()), ..SearchConfig::default() }
}

/// An evaluator that hides the wins: all prior on the first move that does not win at once,
/// and a value that says the side to move is lost.
fn misleading(st: &VariantGame, moves: &[Move], priors: &mut [f32]) -> LeafValue {
    priors.iter_mut().for_each(|p| *p = 0.0);
    let i = moves.iter().position(|&m| !wins_at_once(st, m)).unwrap_or(0);
    priors[i] = 1.0;
    LeafValue::scalar(-0.9)
}

/// 25 positions per variant with a win in one ply, and 10 more with 150 or more legal moves per
/// variant with drops; 64 simulations, PUCT and Gumbel roots, uniform and misleading evaluators.
#[test]
fn one_move_wins_are_never_missed() {
    // Plain MCTS (`solver: false`) misses 387 of these 580 searches: 9 of 145 with PUCT and
    // 88 of 145 with the Gumbel root under the uniform evaluator, all under the misleading one.
    let mut wide = 0;
    let (mut misses, mut searches) = (Vec::new(), 0);
    for name in vzero_rules::variant::builtin_names() {
        let mut positions = one_move_wins(name, 25, 11, false);
        assert!(positions.len() >= 10, "{name}: only {} positions with a one-move win", positions.len());
        if common::chess::variant(name).has_drops() {
            positions.extend(one_move_wins(name, 10, 12, true));
        }
        for (k, st) in positions.iter().enumerate() {
            let mut legal = Vec::new();
            st.legal_moves(&mut legal);
            wide += (legal.len() >= 150) as usize;
            for (cfg, mode) in [(SearchConfig::default(), "puct"), (gumbel(), "gumbel")] {
                for (eval, ename) in [
                    (uniform_evaluator::<VariantGame, Move> as fn(&VariantGame, &[Move], &mut [f32]) -> LeafValue, "uniform"),
                    (misleading, "misleading"),
                ] {
                    let mut s = Search::new(st.clone(), cfg.clone(), k as u64);
                    let r = s.run(64, eval).unwrap();
                    searches += 1;
                    if !wins_at_once(st, r.chosen) {
                        misses.push(format!(
                            "{name} {mode} {ename}: {} ({} moves) chose {}",
                            st.position().fen(),
                            legal.len(),
                            st.position().uci(r.chosen)
                        ));
                    }
                }
            }
        }
    }
    assert!(wide >= 10, "only {wide} positions with 150 or more legal moves");
    assert!(misses.is_empty(), "{} of {searches} searches missed a one-move win:\n{}", misses.len(), misses.join("\n"));
}

fn run(st: &VariantGame, cfg: SearchConfig, sims: u32) -> SearchResult<Move> {
    Search::new(st.clone(), cfg, 7).run(sims, uniform_evaluator).expect("root not terminal")
}

#[test]
fn mates_in_two_are_proven_with_their_distance() {
    for (name, fen) in MATES_IN_TWO {
        if !present(name) {
            continue;
        }
        let mut g = rules_game(name, fen, "");
        let me = g.position().side_to_move();
        assert!(forced_win(&mut g, me, 3) && !forced_win(&mut g, me, 1), "{name} {fen}: not exactly a mate in two");
        let st = VariantGame::from_game(&g);
        for cfg in [SearchConfig::default(), gumbel_greedy()] {
            let r = run(&st, cfg.clone(), 3000);
            assert_eq!((r.proven, r.root_value, r.root_draw), (Some(Proof::Win(3)), 1.0, 0.0), "{name} {:?}", cfg.root_mode);
            let chosen = r.moves.iter().find(|m| m.mv == r.chosen).unwrap();
            assert_eq!(chosen.proof, Some(Proof::Win(3)), "{name}");
            g.play(r.chosen);
            assert!(forced_win(&mut g, me, 2), "{name}: {} does not mate in two", st.position().uci(r.chosen));
            g.undo();
            // The target is on the proven mates in two; each short proof agrees with the rules.
            for (m, &t) in r.moves.iter().zip(&r.policy_target) {
                assert_eq!(t > 0.0, m.proof == Some(Proof::Win(3)), "{name}: {:?}", m);
                if let Some(p) = m.proof.filter(|p| p.plies() <= 3) {
                    g.play(m.mv);
                    let won = forced_win(&mut g, me, p.plies() as u32 - 1);
                    g.undo();
                    assert_eq!(won, p.value() == 1.0, "{name}: {} proven {p}", st.position().uci(m.mv));
                }
            }
        }
    }
}

#[test]
fn campmate_in_one_is_proven_and_played() {
    // empire: White can take a rook, or step onto rank 8 (campmate); SPQR: the Dictator king's
    // first step onto rank 12 ends the game at once, without the second step.
    let mut cases = vec![("empire", "8/3K4/4r3/8/k7/8/7q/8 w - - 0 1")];
    if present("spqr") {
        cases.push(("spqr", "12/5K6/12/12/12/5k6/12/12/12/12/12/12 w - - 0 1 K"));
    }
    for (name, fen) in cases {
        let st = state(name, fen, "");
        assert!(st.position().is_dictator(vzero_rules::Color::White) || name != "spqr");
        for cfg in [SearchConfig::default(), gumbel(), SearchConfig::selfplay_puct(), SearchConfig::selfplay_gumbel()] {
            for sims in [0, 1, 64] {
                let r = run(&st, cfg.clone(), sims);
                assert_eq!((r.proven, r.simulations), (Some(Proof::Win(1)), 0), "{name} {:?}", cfg.root_mode);
                let mut after = st.clone();
                after.play(r.chosen);
                assert_eq!(after.result().reason, Reason::Campmate, "{name}: chose {}", st.position().uci(r.chosen));
                let winning: Vec<_> = r.moves.iter().map(|m| m.proof == Some(Proof::Win(1))).collect();
                let campmates: Vec<_> = r.moves.iter().map(|m| wins_at_once(&st, m.mv)).collect();
                assert_eq!(winning, campmates, "{name}: every campmate marked, nothing else");
                let n = campmates.iter().filter(|&&c| c).count() as f32;
                assert!(r.policy_target.iter().zip(&campmates).all(|(&t, &c)| t == if c { 1.0 / n } else { 0.0 }));
            }
        }
    }
}

/// SPQR, Black to move with only its king; White's Dictator king on f10 reaches rank 12 with a
/// double move (a first step to rank 11, then a second step; the pass `0000` is the other
/// choice there). Every Black move is a proven loss in three plies, through White's double move.
#[test]
fn spqr_loss_is_proven_through_a_dictator_double_move() {
    if !present("spqr") {
        return;
    }
    let fen = "12/12/5K6/12/12/11k/12/12/12/12/12/12 b - - 0 1 K";
    let st = state("spqr", fen, "");
    for cfg in [SearchConfig::default(), gumbel_greedy()] {
        let mut s = Search::new(st.clone(), cfg.clone(), 3);
        let r = s.run(2000, uniform_evaluator).unwrap();
        assert_eq!((r.proven, r.root_value), (Some(Proof::Loss(3)), -1.0), "{:?}", cfg.root_mode);
        assert!(r.simulations < 2000, "a proven root stops the search");
        assert!(r.moves.iter().all(|m| m.proof == Some(Proof::Loss(3))));
        // Down one line: Black's move, White's first step (White to move again), the second step.
        let black = r.chosen;
        let white = s.node_stats(&[black]).unwrap();
        assert_eq!((white.to_move, white.proof), (0, Some(Proof::Win(2))));
        let first = white.children.iter().find(|c| c.proof == Some(Proof::Win(2))).expect("a proven first step").mv;
        let pending = s.node_stats(&[black, first]).unwrap();
        assert_eq!((pending.to_move, pending.proof), (0, Some(Proof::Win(1))), "the same side moves again");
        assert!(pending.children.iter().any(|c| c.mv == Move::PASS));
        let mut line = st.clone();
        line.play(black);
        line.play(first);
        assert!(line.position().pending_second_step().is_some());
        let second = pending.children.iter().find(|c| c.proof == Some(Proof::Win(1))).unwrap().mv;
        line.play(second);
        assert_eq!(line.result().reason, Reason::Campmate);
    }
}

const EMPIRE_SHUFFLE: &str = "b1a2 b8a6 a2b1 a6b8 b1a2 b8a6 a2b1";

#[test]
fn repetition_wins_and_losses_are_proven() {
    let start = variant("empire").start_fen();
    // Black completes the threefold repetition: White, to move in it, loses.
    let st = state("empire", start, EMPIRE_SHUFFLE);
    let r = run(&st, SearchConfig::default(), 200);
    assert_eq!((st.position().uci(r.chosen).as_str(), r.proven), ("a6b8", Some(Proof::Win(1))));
    // One ply earlier, White's a2b1 lets Black do it: a proven loss in two plies, avoided.
    let before: Vec<&str> = EMPIRE_SHUFFLE.split(' ').collect();
    let st = state("empire", start, &before[..6].join(" "));
    for cfg in [SearchConfig::default(), gumbel_greedy()] {
        let r = run(&st, cfg, 400);
        let a2b1 = r.moves.iter().find(|m| st.position().uci(m.mv) == "a2b1").unwrap();
        assert_eq!(a2b1.proof, Some(Proof::Loss(2)));
        assert_ne!(r.chosen, a2b1.mv);
        assert_eq!(r.policy_target[r.moves.iter().position(|m| m.mv == a2b1.mv).unwrap()], 0.0);
    }
}

#[test]
fn n_move_draws_are_proven() {
    // Every White move (the king's) reaches the 50-move limit: a proven draw in one ply.
    let st = state("empire", "4k3/8/8/8/8/8/8/3K4 w - - 99 80", "");
    let r = run(&st, SearchConfig::default(), 100);
    assert_eq!((r.proven, r.root_value, r.root_draw), (Some(Proof::Draw(1)), 0.0, 1.0));
    assert!(r.moves.iter().all(|m| m.proof == Some(Proof::Draw(1))));
    let n = r.moves.len() as f32;
    assert!(r.policy_target.iter().all(|&t| (t - 1.0 / n).abs() < 1e-6));
    // Taking the pawn resets the clock: that move is not a draw, the others are, the root unproven.
    let st = state("empire", "4k3/8/8/8/8/8/3p4/3K4 w - - 99 80", "");
    let r = run(&st, SearchConfig::default(), 100);
    assert_eq!(r.proven, None);
    for m in &r.moves {
        let take = st.position().uci(m.mv) == "d1d2";
        assert_eq!(m.proof, if take { None } else { Some(Proof::Draw(1)) }, "{}", st.position().uci(m.mv));
    }
}

/// Proofs and exact values are the same whether leaves come one at a time or in batches of
/// eight per tree over several trees (virtual loss, collisions), and they survive tree reuse:
/// after the proven mate-in-two move the opponent's root is a proven loss at once.
#[test]
fn proofs_survive_batched_gathering_and_tree_reuse() {
    let positions: Vec<VariantGame> = MATES_IN_TWO.iter().filter(|(n, _)| present(n)).map(|(n, f)| state(n, f, "")).collect();
    let mut searches: Vec<Search<VariantGame>> = positions.iter().map(|st| Search::new(st.clone(), SearchConfig::default(), 5)).collect();
    for s in &mut searches {
        s.start_with(3000, true);
    }
    let mut batch = Vec::new();
    let mut priors = Vec::new();
    let mut most = 0;
    while searches.iter().any(|s| !s.is_done()) {
        batch.clear();
        gather_batch(&mut searches, 8, 64, &mut batch);
        most = most.max(batch.len());
        for leaf in &batch {
            let s = &mut searches[leaf.handle.tree()];
            priors.resize(s.leaf_moves(leaf.handle).len(), 0.0);
            let v = uniform_evaluator(&leaf.state, s.leaf_moves(leaf.handle), &mut priors);
            s.apply(leaf.handle, &priors, v);
        }
    }
    assert!(most > positions.len(), "several leaves per tree in a batch: {most}");
    for (st, s) in positions.iter().zip(&mut searches) {
        let r = s.finish().unwrap();
        assert_eq!(r.proven, Some(Proof::Win(3)), "{}", st.position().fen());
        let root = s.node_stats(&[]).unwrap();
        assert_eq!(root.value, Some(1.0), "every backup below the proven root counts as a win");

        // Tree reuse: the opponent's root is proven lost, the search done at once.
        s.advance(r.chosen);
        s.start_with(100, true);
        assert!(s.is_done());
        let r2 = s.finish().unwrap();
        assert_eq!((r2.proven, r2.root_value, r2.simulations), (Some(Proof::Loss(2)), -1.0, 0));
        assert!(r2.moves.iter().all(|m| m.proof == Some(Proof::Loss(2))), "every reply allows a mate in one");
        s.advance(r2.chosen);
        let mut leaves = Vec::new();
        s.start_with(100, true);
        while !s.is_done() {
            s.gather(4, &mut leaves);
            for leaf in leaves.drain(..) {
                priors.resize(s.leaf_moves(leaf.handle).len(), 0.0);
                let v = uniform_evaluator(&leaf.state, s.leaf_moves(leaf.handle), &mut priors);
                s.apply(leaf.handle, &priors, v);
            }
        }
        let r3 = s.finish().unwrap();
        assert_eq!(r3.proven, Some(Proof::Win(1)));
        let mut end = s.root_state().clone();
        end.play(r3.chosen);
        assert_eq!(end.result().reason, Reason::Checkmate);
    }
}
