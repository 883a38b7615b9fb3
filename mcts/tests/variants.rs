//! The search on the rules core's variants: terminal scoring from the rules, mates found with
//! the cheap evaluators, Gumbel targets, determinism.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vzero_mcts::{
    material_balance, material_evaluator, Game, MaterialEvaluator, RolloutEvaluator, Search,
    SearchConfig, SearchResult, uniform_evaluator, VariantGame,
};
use vzero_rules::{Game as RulesGame, Move, MoveKind, Outcome, Position, Reason, Variant};

mod common;
use common::chess::{forced_win, gumbel_greedy, present, random_game, rules_game, state, uci, variant, MATES_IN_TWO};

fn search(g: &RulesGame, cfg: SearchConfig, sims: u32, seed: u64) -> SearchResult<Move> {
    let mut s = Search::new(VariantGame::from_game(g), cfg, seed);
    s.run(sims, material_evaluator).expect("root not terminal")
}

/// Which cheap evaluator a test searches with.
#[derive(Clone, Copy, Debug)]
enum Eval {
    /// Uniform priors, value 0 (`uniform_evaluator`).
    Stub,
    /// Uniform priors, material value (`material_evaluator`).
    Material,
}

/// Checks that `fen` is a win in exactly `n` moves of the side to move (not fewer), then that the
/// search (PUCT and Gumbel roots) chooses a move that keeps the forced win.
fn finds_forced_win(v: &str, fen: &str, n: u32, sims: u32, evals: &[Eval]) {
    let mut g = rules_game(v, fen, "");
    let me = g.position().side_to_move();
    let plies = 2 * n - 1;
    assert!(forced_win(&mut g, me, plies), "{v} {fen}: no win in {n}");
    if n > 1 {
        assert!(!forced_win(&mut g, me, plies - 2), "{v} {fen}: already a win in {}", n - 1);
    }
    for &ev in evals {
        for cfg in [SearchConfig::default(), gumbel_greedy()] {
            let mut s = Search::new(VariantGame::from_game(&g), cfg.clone(), 7);
            let r = match ev {
                Eval::Stub => s.run(sims, uniform_evaluator),
                Eval::Material => s.run(sims, material_evaluator),
            }
            .unwrap();
            let mv = uci(&g, r.chosen);
            g.play(r.chosen);
            let ok = forced_win(&mut g, me, plies - 1);
            g.undo();
            assert!(ok, "{v} {fen} ({ev:?}, {:?}): chose {mv}, which does not win in {n}", cfg.root_mode);
        }
    }
}

// ---- mates ----

#[test]
fn empire_mate_in_one() {
    finds_forced_win("empire", "4k3/8/8/8/8/7r/6r1/K7 b - - 0 1", 1, 400, &[Eval::Stub, Eval::Material]);
}

#[test]
fn empire_mate_in_two() {
    finds_forced_win("empire", MATES_IN_TWO[0].1, 2, 4000, &[Eval::Stub, Eval::Material]);
}

#[test]
fn shogun_mate_in_one() {
    // Smothered mate: Nf7#.
    finds_forced_win("shogun", "6rk/6pp/8/6N1/8/8/8/4K3[] w - - 0 1", 1, 400, &[Eval::Stub, Eval::Material]);
}

#[test]
fn shogun_mate_in_two() {
    // The material evaluator is not asked: it prefers winning a piece (c4a6+) to the sacrifice
    // at this budget, as a material-greedy search would. The Gumbel root with uniform priors
    // halves ~40 moves on 0-valued ties, so it needs a larger budget than PUCT here.
    finds_forced_win("shogun", MATES_IN_TWO[1].1, 2, 20000, &[Eval::Stub]);
}

#[test]
fn empire_faceoff_mates_in_one_and_two() {
    if !present("empire-faceoff") {
        return;
    }
    finds_forced_win("empire-faceoff", "k7/6R1/8/8/8/8/8/4K2R w - - 0 1", 1, 400, &[Eval::Stub, Eval::Material]);
    finds_forced_win("empire-faceoff", MATES_IN_TWO[2].1, 2, 20000, &[Eval::Stub, Eval::Material]);
}

#[test]
fn shogun_auto_mates_in_one_and_two() {
    if !present("shogun-auto") {
        return;
    }
    finds_forced_win("shogun-auto", "6rk/6pp/8/6N1/8/8/8/4K3[] w - - 0 1", 1, 400, &[Eval::Stub, Eval::Material]);
    finds_forced_win("shogun-auto", MATES_IN_TWO[3].1, 2, 20000, &[Eval::Stub]);
}

#[test]
fn rollout_evaluator_finds_mate_in_one() {
    let g = rules_game("shogun", "6rk/6pp/8/6N1/8/8/8/4K3[] w - - 0 1", "");
    let ev = RolloutEvaluator::default();
    let mut s = Search::new(VariantGame::from_game(&g), SearchConfig::default(), 1);
    let r = s.run(400, |st, m, p| ev.evaluate(st, m, p)).unwrap();
    assert!(["g5f7", "g5f7+"].contains(&uci(&g, r.chosen).as_str()), "chose {}", uci(&g, r.chosen));
}

// ---- terminal scoring from the rules ----

/// Terminal value of the search's state, checked against the rules core's `Game::result()`.
fn terminal(v: &str, fen: &str, moves: &str) -> Option<f32> {
    let g = rules_game(v, fen, moves);
    let st = VariantGame::from_game(&g);
    assert_eq!(st.result(), g.result(), "{v} {fen} {moves}");
    let mut out = Vec::new();
    let t = st.expand(&mut out);
    assert_eq!(t, st.terminal_value());
    assert!(t.is_some() || out == g.position().legal_moves());
    t
}

#[test]
fn empire_stalemate_is_a_loss_for_the_stalemated_side() {
    let fen = "k7/2K5/S7/8/8/8/8/8 b - - 0 1";
    assert_eq!(state("empire", fen, "").result().reason, Reason::Stalemate);
    assert_eq!(terminal("empire", fen, ""), Some(-1.0));
}

#[test]
fn shogun_stalemate_is_a_draw() {
    let fen = "k1K5/8/2N5/8/8/8/8/8[] b - - 0 1";
    assert_eq!(state("shogun", fen, "").result().reason, Reason::Stalemate);
    assert_eq!(terminal("shogun", fen, ""), Some(0.0));
}

#[test]
fn search_stalemates_in_empire() {
    // a5a6 stalemates Black, which wins in empire.
    let g = rules_game("empire", "k7/8/2K5/S7/8/8/8/1T6 w - - 0 1", "");
    let r = search(&g, SearchConfig::default(), 800, 0);
    let after = rules_game("empire", "k7/8/2K5/S7/8/8/8/1T6 w - - 0 1", &uci(&g, r.chosen));
    assert_eq!(after.result().outcome, Outcome::Loss, "chose {}", uci(&g, r.chosen));
    let stalemate = rules_game("empire", "k7/8/2K5/S7/8/8/8/1T6 w - - 0 1", "a5a6");
    assert_eq!(stalemate.result(), vzero_rules::GameResult { outcome: Outcome::Loss, reason: Reason::Stalemate });
}

#[test]
fn campmate_is_a_loss_for_the_side_to_move() {
    let fen = "8/3K4/8/8/k7/8/7q/8 w - - 0 1";
    assert_eq!(terminal("empire", fen, ""), None);
    assert_eq!(terminal("empire", fen, "d7d8"), Some(-1.0));
    assert_eq!(state("empire", fen, "d7d8").result().reason, Reason::Campmate);
}

#[test]
fn search_takes_campmate_in_one() {
    // White can take a rook (material) or step onto rank 8 (campmate, wins at once).
    let fen = "8/3K4/4r3/8/k7/8/7q/8 w - - 0 1";
    let g = rules_game("empire", fen, "");
    for cfg in [SearchConfig::default(), gumbel_greedy()] {
        let r = search(&g, cfg, 200, 0);
        let after = state("empire", fen, &uci(&g, r.chosen));
        assert_eq!(after.result().reason, Reason::Campmate, "chose {}", uci(&g, r.chosen));
    }
}

const EMPIRE_SHUFFLE: &str = "b1a2 b8a6 a2b1 a6b8 b1a2 b8a6 a2b1";
const SHOGUN_SHUFFLE: &str = "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1";

#[test]
fn empire_repetition_is_a_loss_for_the_side_to_move() {
    let start = variant("empire").start_fen();
    assert_eq!(terminal("empire", start, EMPIRE_SHUFFLE), None);
    let rep = format!("{EMPIRE_SHUFFLE} a6b8");
    assert_eq!(terminal("empire", start, &rep), Some(-1.0));
    assert_eq!(state("empire", start, &rep).result().reason, Reason::Repetition);
    assert_eq!(state("empire", start, &rep).repetitions(), 2);
}

#[test]
fn shogun_repetition_is_a_draw() {
    let start = variant("shogun").start_fen();
    assert_eq!(terminal("shogun", start, SHOGUN_SHUFFLE), None);
    let rep = format!("{SHOGUN_SHUFFLE} f6g8");
    assert_eq!(terminal("shogun", start, &rep), Some(0.0));
    assert_eq!(state("shogun", start, &rep).result().reason, Reason::Repetition);
}

#[test]
fn search_completes_a_winning_repetition_in_empire() {
    // Black to move; a6b8 repeats the position a third time with White to move: White loses.
    let g = rules_game("empire", variant("empire").start_fen(), EMPIRE_SHUFFLE);
    let r = search(&g, SearchConfig::default(), 200, 0);
    assert_eq!(uci(&g, r.chosen), "a6b8");
    let proof = r.moves.iter().find(|m| m.mv == r.chosen).unwrap().proof;
    assert_eq!((proof, r.proven), (Some(vzero_mcts::Proof::Win(1)), Some(vzero_mcts::Proof::Win(1))));
    // Plain MCTS finds it by simulation.
    let r = search(&g, SearchConfig { solver: false, ..SearchConfig::default() }, 200, 0);
    assert_eq!(uci(&g, r.chosen), "a6b8");
    let q = r.moves.iter().find(|m| m.mv == r.chosen).unwrap().q.unwrap();
    assert!((q - 1.0).abs() < 1e-6, "q {q}");
}

#[test]
fn fifty_move_rule_draws() {
    let fen = "4k3/8/8/8/8/8/8/3K4 w - - 99 80";
    assert_eq!(terminal("empire", fen, ""), None);
    assert_eq!(terminal("empire", fen, "d1c1"), Some(0.0));
    assert_eq!(state("empire", fen, "d1c1").result().reason, Reason::FiftyMove);
    let fen = "4k3/8/8/8/8/8/8/3K4[] w - - 99 80";
    assert_eq!(terminal("shogun", fen, "d1c1"), Some(0.0));
}

/// Random games (with many back-and-forth moves, so that positions repeat): the search's state
/// agrees with the rules core's `Game` on the result, the legal moves and the player to move;
/// `result_after` agrees with playing the move, and `winning_move` with trying every move.
#[test]
fn state_matches_rules_game_under_random_play() {
    let mut rng = StdRng::seed_from_u64(5);
    for name in vzero_rules::variant::builtin_names() {
        let v = variant(name);
        let mut reasons = std::collections::HashMap::new();
        for _ in 0..60 {
            let mut g = RulesGame::startpos(v);
            let mut st = VariantGame::startpos(v);
            let mut out = Vec::new();
            for _ply in 0..400 {
                let r = g.result();
                assert_eq!(st.result(), r, "{name}: {}", g.position().fen());
                assert_eq!(st.to_move(), g.position().side_to_move().index());
                assert_eq!(st.position().key(), g.position().key());
                out.clear();
                let t = st.expand(&mut out);
                assert_eq!(t, r.is_over().then(|| r.value()));
                if r.is_over() {
                    assert!(out.is_empty());
                    *reasons.entry(r.reason).or_insert(0) += 1;
                    break;
                }
                let legal = g.position().legal_moves();
                assert_eq!(out, legal);
                for &m in &legal {
                    let mut next = st.clone();
                    next.play(m);
                    assert_eq!(st.result_after(m), next.result(), "{name}: {} after {}", g.position().fen(), g.position().uci(m));
                }
                assert_eq!(st.winning_move(&legal), first_win(&st, &legal).map(|w| w.0), "{name}: {}", g.position().fen());
                // Half the time, undo our previous move if we can (makes repetitions common).
                let n = g.moves().len();
                let back = (n >= 2 && rng.gen_bool(0.5))
                    .then(|| g.moves()[n - 2])
                    .and_then(|p| legal.iter().copied().find(|m| m.kind() == MoveKind::Normal && m.from() == p.to() && m.to() == p.from()));
                let m = back.unwrap_or_else(|| legal[rng.gen_range(0..legal.len())]);
                g.play(m);
                st.play(m);
            }
        }
        assert!(reasons.get(&Reason::Repetition).copied().unwrap_or(0) > 0, "{name}: no repetition reached: {reasons:?}");
    }
}

/// The first move that wins at once, by playing every move (`None` if none does), with the reason.
fn first_win(st: &VariantGame, moves: &[Move]) -> Option<(usize, Reason)> {
    moves.iter().enumerate().find_map(|(i, &m)| {
        let mut next = st.clone();
        next.play(m);
        let r = next.result();
        (r.outcome == if next.to_move() == st.to_move() { Outcome::Win } else { Outcome::Loss }).then_some((i, r.reason))
    })
}

/// The last plies of random games played to their end, where wins at once of every kind are
/// (mate, campmate, stalemate and repetition where they win): `winning_move` finds the first.
#[test]
fn winning_move_agrees_with_trying_every_move_near_game_ends() {
    let mut rng = StdRng::seed_from_u64(6);
    for name in vzero_rules::variant::builtin_names() {
        let v = variant(name);
        let mut wins = std::collections::BTreeMap::new();
        let mut moves = Vec::new();
        for _ in 0..150 {
            let line = random_game(v, &mut rng, 600);
            for st in line.iter().rev().skip(1).take(8) {
                moves.clear();
                st.legal_moves(&mut moves);
                let brute = first_win(st, &moves);
                assert_eq!(st.winning_move(&moves), brute.map(|w| w.0), "{name}: {}", st.position().fen());
                if let Some((_, reason)) = brute {
                    *wins.entry(format!("{reason:?}")).or_insert(0) += 1;
                }
            }
        }
        // Every kind of win at once the variant's rules allow shows up (random endings have them).
        let end = &v.def().end;
        let kinds = [
            ("Checkmate", true),
            ("Campmate", v.def().flag.is_some()),
            ("Stalemate", end.stalemate == "loss"),
            ("Repetition", end.nfold_value == "loss"),
        ];
        for (kind, allowed) in kinds {
            assert_eq!(wins.contains_key(kind), allowed, "{name}: {kind}: {wins:?}");
        }
    }
}

// ---- evaluators ----

#[test]
fn material_balance_is_from_the_side_to_move() {
    let shogun = variant("shogun");
    assert_eq!(material_balance(&Position::startpos(shogun)), 0.0);
    // White is a rook up, partly in hand.
    let p = Position::from_fen(shogun, "4k3/8/8/8/8/8/8/4K3[Rp] w - - 0 1").unwrap();
    assert_eq!(material_balance(&p), 4.0);
    let p = Position::from_fen(shogun, "4k3/8/8/8/8/8/8/R3K3[p] b - - 0 1").unwrap();
    assert_eq!(material_balance(&p), -4.0);
    let st = VariantGame::new(p);
    let mut priors = vec![0.0; 3];
    let v = MaterialEvaluator { scale: 4.0 }.evaluate(&st, &[], &mut priors);
    assert!((v.value - (-1.0f32).tanh()).abs() < 1e-6);
    assert!(priors.iter().all(|&x| (x - 1.0 / 3.0).abs() < 1e-6));
}

#[test]
fn rollout_evaluator_is_deterministic_and_bounded() {
    let ev = RolloutEvaluator::default();
    for name in vzero_rules::variant::builtin_names() {
        let st = VariantGame::startpos(variant(name));
        let mut moves = Vec::new();
        st.legal_moves(&mut moves);
        let mut p1 = vec![0.0; moves.len()];
        let mut p2 = vec![0.0; moves.len()];
        let a = ev.evaluate(&st, &moves, &mut p1);
        let b = ev.evaluate(&st, &moves, &mut p2);
        assert_eq!(a, b);
        assert!(a.value.abs() <= 1.0);
        assert!((p1.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
}

// ---- search properties on real variants ----

#[test]
fn gumbel_policy_target_sums_to_one_over_legal_moves() {
    for name in vzero_rules::variant::builtin_names() {
        let st = VariantGame::startpos(variant(name));
        let mut legal = Vec::new();
        st.legal_moves(&mut legal);
        for sims in [1, 16, 100] {
            let mut s = Search::new(st.clone(), SearchConfig::selfplay_gumbel(), 11);
            let r = s.run(sims, material_evaluator).unwrap();
            assert_eq!(r.moves.iter().map(|m| m.mv).collect::<Vec<_>>(), legal, "{name}");
            assert_eq!(r.policy_target.len(), legal.len());
            assert!(r.policy_target.iter().all(|&p| p >= 0.0 && p.is_finite()));
            let sum: f32 = r.policy_target.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{name} sims {sims}: sum {sum}");
            assert!(legal.contains(&r.chosen));
        }
    }
}

#[test]
fn deterministic_under_a_fixed_seed() {
    let g = rules_game("shogun", variant("shogun").start_fen(), "e2e4 e7e5 g1f3");
    for cfg in [SearchConfig::selfplay_puct(), SearchConfig::selfplay_gumbel()] {
        let play = |seed: u64| {
            let mut s = Search::new(VariantGame::from_game(&g), cfg.clone(), seed);
            let mut out = Vec::new();
            for _ in 0..4 {
                let r = s.run_move(material_evaluator).unwrap();
                s.advance(r.chosen);
                out.push(r);
            }
            out
        };
        let a = play(42);
        assert_eq!(a, play(42));
        assert_ne!(a, play(43));
    }
}

// ---- SPQR: Dictator double moves and passes ----

/// A deterministic position-dependent value in [-1, 1], so that every backup is distinguishable.
fn hashed_value(s: &VariantGame) -> f32 {
    ((s.position().key() >> 11) % 1001) as f32 / 500.0 - 1.0
}

fn hashed_evaluator(s: &VariantGame, moves: &[Move], priors: &mut [f32]) -> vzero_mcts::LeafValue {
    priors.iter_mut().for_each(|p| *p = 1.0 / moves.len() as f32);
    vzero_mcts::LeafValue::scalar(hashed_value(s))
}

fn spqr() -> Option<Variant> {
    present("spqr").then(|| variant("spqr"))
}

/// White is a Dictator (FEN field `K`): a king move is followed by a second step or a pass.
const SPQR_DICTATOR: &str = "5k6/1p10/12/12/12/12/12/12/12/12/10P1/6K5 w - - 0 1 K";

#[test]
fn spqr_one_simulation_backs_up_without_flipping_across_the_first_step() {
    let Some(v) = spqr() else { return };
    let root = VariantGame::new(Position::from_fen(v, SPQR_DICTATOR).unwrap());
    // Root value (White) + value after the simulated move, signed by who is to move there.
    let mut s = Search::new(root.clone(), SearchConfig::default(), 0);
    let r = s.run(1, hashed_evaluator).unwrap();
    let played = r.moves.iter().find(|m| m.visits == 1).unwrap().mv;
    let mut child = root.clone();
    child.play(played);
    let sign = if child.to_move() == root.to_move() { 1.0 } else { -1.0 };
    let expected = (hashed_value(&root) + sign * hashed_value(&child)) / 2.0;
    assert!((r.root_value - expected).abs() < 1e-6, "{} vs {expected}", r.root_value);

    // Force the Dictator's first step: the child is White to move again, and its value counts
    // for White with a plus sign.
    let g1g2 = root.position().parse_uci("g1g2").unwrap();
    let mut first = root.clone();
    first.play(g1g2);
    assert_eq!(first.to_move(), 0, "a Dictator's first step leaves White to move");
    let mut s = Search::new(root.clone(), SearchConfig::default(), 0);
    s.run(0, hashed_evaluator);
    s.advance(g1g2);
    // Root = after the first step (White, second step pending). Its moves are the second steps
    // and the pass, each handing the move to Black.
    let r = s.run(1, hashed_evaluator).unwrap();
    assert!(r.moves.iter().any(|m| m.mv == Move::PASS));
    let played = r.moves.iter().find(|m| m.visits == 1).unwrap().mv;
    let mut second = first.clone();
    second.play(played);
    assert_eq!(second.to_move(), 1);
    let expected = (hashed_value(&first) - hashed_value(&second)) / 2.0;
    assert!((r.root_value - expected).abs() < 1e-6, "{} vs {expected}", r.root_value);
}

/// Every node of a searched SPQR tree: value_sum = own evaluation + each child's value_sum, with
/// a plus sign where the child has the same player to move (double move) and a minus sign
/// otherwise; and the tree does contain Dictator double moves and passes.
#[test]
fn spqr_values_backed_up_per_player_across_double_moves_and_passes() {
    let Some(v) = spqr() else { return };
    let root = VariantGame::new(Position::from_fen(v, SPQR_DICTATOR).unwrap());
    let mut s = Search::new(root.clone(), SearchConfig::default(), 0);
    s.run(3000, hashed_evaluator).unwrap();
    let (mut doubles, mut passes, mut checked) = (0, 0, 0);
    let mut stack = vec![(Vec::<Move>::new(), root)];
    while let Some((path, state)) = stack.pop() {
        let n = s.node_stats(&path).unwrap();
        assert_eq!(n.to_move, state.to_move());
        let mut sum = if n.terminal {
            state.terminal_value().unwrap() * n.visits as f32
        } else {
            hashed_value(&state)
        };
        for c in n.children.iter().filter(|c| c.visits > 0) {
            let mut next = state.clone();
            next.play(c.mv);
            let child = s.node_stats(&[path.clone(), vec![c.mv]].concat()).unwrap();
            assert_eq!(child.visits, c.visits);
            let same = next.to_move() == state.to_move();
            let child_sum = child.value.unwrap() * child.visits as f32;
            let edge_sum = c.q.unwrap() * c.visits as f32;
            let signed = if same { child_sum } else { -child_sum };
            assert!((edge_sum - signed).abs() < 1e-2, "edge {:?} at {path:?}", c.mv);
            sum += signed;
            doubles += same as usize;
            passes += (c.mv == Move::PASS) as usize;
            stack.push(([path.clone(), vec![c.mv]].concat(), next));
        }
        let node_sum = n.value.unwrap() * n.visits as f32;
        assert!((node_sum - sum).abs() < 1e-2 * (1.0 + n.visits as f32).sqrt(), "node {path:?}: {node_sum} vs {sum}");
        checked += 1;
    }
    assert!(checked > 1000, "{checked}");
    assert!(doubles > 10 && passes > 10, "double moves {doubles}, passes {passes}");
}
