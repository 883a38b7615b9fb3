//! Per-player backups across double moves and passes, and terminal scoring; the same for proofs.
mod common;

use common::{inner, term, TableGame};
use std::cell::Cell;
use vzero_mcts::{LeafValue, Proof, Search, SearchConfig};

/// Plain MCTS: these tests count visits that the solver would save.
fn plain() -> SearchConfig {
    SearchConfig { solver: false, ..SearchConfig::default() }
}

/// R (p0) -a-> X (p0 again: double move) -pass-> Y (p1) -b-> Z (p1 again) -c-> T (terminal, p1 won).
fn double_move_line() -> TableGame {
    TableGame::new(vec![
        inner(0, 0.1, &[(0, 1)]),  // 0: R, eval 0.1 for p0
        inner(0, 0.5, &[(1, 2)]),  // 1: X, p0 moves again, eval 0.5 for p0
        inner(1, 0.3, &[(2, 3)]),  // 2: Y, after p0's pass, eval 0.3 for p1
        inner(1, -0.2, &[(3, 4)]), // 3: Z, p1 moves again, eval -0.2 for p1
        term(0, -1.0),             // 4: T, p0 to move and lost
    ])
}

fn table_eval(calls: &Cell<u32>) -> impl FnMut(&TableGame, &[u8], &mut [f32]) -> LeafValue + '_ {
    move |s, moves, p| {
        assert!(s.node().terminal.is_none(), "evaluator called on a terminal node");
        calls.set(calls.get() + 1);
        p.iter_mut().for_each(|x| *x = 1.0 / moves.len() as f32);
        LeafValue { value: s.node().eval, draw: 0.0 }
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

#[test]
fn backup_across_double_move_and_pass_matches_hand_computation() {
    let calls = Cell::new(0);
    let mut s = Search::new(double_move_line(), plain(), 0);
    let r = s.run(5, table_eval(&calls)).unwrap();
    // Root + X + Y + Z evaluated; T twice from terminal_value.
    assert_eq!(calls.get(), 4);

    // Hand computation (values in each player's own perspective, no per-ply flipping):
    // backups for p0: +0.1 (R), +0.5 (X), -0.3 (Y), +0.2 (Z), -1, -1 (T twice).
    assert_eq!(r.root_visits, 6);
    assert!(close(r.root_value, (0.1 + 0.5 - 0.3 + 0.2 - 1.0 - 1.0) / 6.0), "{}", r.root_value);
    let a = &r.moves[0];
    assert_eq!(a.visits, 5);
    assert!(close(a.q.unwrap(), (0.5 - 0.3 + 0.2 - 1.0 - 1.0) / 5.0), "{a:?}");

    let x = s.node_stats(&[0]).unwrap();
    assert_eq!((x.to_move, x.visits), (0, 5));
    assert!(close(x.value.unwrap(), -1.6 / 5.0));
    let pass = &x.children[0];
    assert_eq!(pass.visits, 4);
    assert!(close(pass.q.unwrap(), (-0.3 + 0.2 - 1.0 - 1.0) / 4.0)); // mover p0

    let y = s.node_stats(&[0, 1]).unwrap();
    assert_eq!((y.to_move, y.visits), (1, 4));
    assert!(close(y.value.unwrap(), (0.3 - 0.2 + 1.0 + 1.0) / 4.0));
    let b = &y.children[0];
    assert_eq!(b.visits, 3);
    assert!(close(b.q.unwrap(), (-0.2 + 1.0 + 1.0) / 3.0)); // mover p1

    let z = s.node_stats(&[0, 1, 2]).unwrap();
    assert_eq!((z.to_move, z.visits), (1, 3));
    assert!(close(z.children[0].q.unwrap(), 1.0)); // p1's move into p0's loss

    let t = s.node_stats(&[0, 1, 2, 3]).unwrap();
    assert!(t.terminal);
    assert_eq!(t.visits, 2);
    assert!(close(t.value.unwrap(), -1.0));
}

/// The same line with the solver: Z is a proven win for p1 when it is created (its move wins at
/// once), and the proof goes up per player: a win for p1 at Y (p1's double move), a loss for p0
/// at X (p0's pass hands the move over) and at R (p0's double move).
#[test]
fn proofs_go_up_per_player_across_double_move_and_pass() {
    let calls = Cell::new(0);
    let mut s = Search::new(double_move_line(), SearchConfig::default(), 0);
    let r = s.run(100, table_eval(&calls)).unwrap();
    assert_eq!(calls.get(), 3, "R, X and Y evaluated; Z proven without an evaluation");
    assert_eq!((r.proven, r.root_value, r.root_draw), (Some(Proof::Loss(4)), -1.0, 0.0));
    assert!(r.simulations < 100, "a proven root ends the search");
    assert_eq!(r.moves[0].proof, Some(Proof::Loss(4)));
    let proofs: Vec<_> = (0..4).map(|k| s.node_stats(&[0, 1, 2, 3][..k]).unwrap()).map(|n| (n.to_move, n.proof)).collect();
    assert_eq!(proofs, [(0, Some(Proof::Loss(4))), (0, Some(Proof::Loss(3))), (1, Some(Proof::Win(2))), (1, Some(Proof::Win(1)))]);
    // Every backup through a proven node counts its exact value.
    let x = s.node_stats(&[0]).unwrap();
    assert!(close(x.value.unwrap(), -1.0) && close(r.moves[0].q.unwrap(), -1.0), "{x:?}");
}

/// p0 can either move twice (double move, then pick a winning or a losing finish) or pass the
/// turn to p1, who then has a winning move. The double move must be recognized as winning.
#[test]
fn double_move_win_is_found() {
    let game = TableGame::new(vec![
        inner(0, 0.0, &[(0, 1), (1, 2)]), // 0: p0: 0 = first half of a double move, 1 = pass
        inner(0, 0.0, &[(0, 3), (1, 4)]), // 1: p0 again
        inner(1, 0.0, &[(0, 5), (1, 6)]), // 2: p1 after the pass
        term(1, -1.0),                    // 3: p1 to move, lost (p0 won)
        term(1, 1.0),                     // 4: p1 to move, won (p0 blundered)
        term(0, -1.0),                    // 5: p0 to move, lost (p1 won)
        term(0, 0.0),                     // 6: draw
    ]);
    let calls = Cell::new(0);
    // The solver: the double move's first step leads to a node where p0 wins at once.
    let mut s = Search::new(game.clone(), SearchConfig::default(), 0);
    let r = s.run(200, table_eval(&calls)).unwrap();
    assert_eq!((r.chosen, r.proven, r.moves[0].proof), (0, Some(Proof::Win(2)), Some(Proof::Win(2))));
    let d = s.node_stats(&[0]).unwrap();
    assert_eq!((d.to_move, d.proof, d.children[0].proof), (0, Some(Proof::Win(1)), Some(Proof::Win(1))));

    let mut s = Search::new(game, plain(), 0);
    let r = s.run(200, table_eval(&calls)).unwrap();
    assert_eq!(r.chosen, 0, "{:?}", r.moves);
    assert!(r.moves[0].q.unwrap() > 0.9, "{:?}", r.moves);
    assert!(r.moves[1].q.unwrap() < -0.5, "{:?}", r.moves);
    let d = s.node_stats(&[0]).unwrap();
    assert_eq!(d.to_move, 0);
    assert!(d.children[0].visits > d.children[1].visits);
    assert!(close(d.children[0].q.unwrap(), 1.0) && close(d.children[1].q.unwrap(), -1.0));
    let p = s.node_stats(&[1]).unwrap();
    assert_eq!(p.to_move, 1);
    assert!(close(p.children[0].q.unwrap(), 1.0)); // p1's winning reply, from p1's perspective
}

#[test]
fn terminal_leaves_are_scored_from_terminal_value_not_the_evaluator() {
    let game = TableGame::new(vec![
        inner(0, 0.0, &[(0, 1), (1, 2), (2, 3)]),
        term(1, -1.0), // 0: p1 to move and lost: p0's win
        term(1, 0.0),  // 1: draw
        term(0, -1.0), // 2: a "pass into loss": p0 still to move and lost
    ]);
    let calls = Cell::new(0);
    // The solver sees the win in one at the root: nothing to simulate.
    let r = Search::new(game.clone(), SearchConfig::default(), 0).run(60, table_eval(&calls)).unwrap();
    assert_eq!((calls.get(), r.simulations, r.chosen, r.proven), (1, 0, 0, Some(Proof::Win(1))));
    let proofs: Vec<_> = r.moves.iter().map(|m| m.proof).collect();
    assert_eq!(proofs, [Some(Proof::Win(1)), None, None]);
    calls.set(0);
    let mut s = Search::new(game, plain(), 0);
    // The evaluator claims every position is won for its player to move; terminal nodes must ignore it.
    let mut eval = table_eval(&calls);
    let r = s.run(60, |st, m, p| LeafValue { value: 0.9, ..eval(st, m, p) }).unwrap();
    assert_eq!(calls.get(), 1, "only the root is evaluated");
    let [win, draw, loss] = [&r.moves[0], &r.moves[1], &r.moves[2]];
    assert!(close(win.q.unwrap(), 1.0) && close(win.draw.unwrap(), 0.0), "{win:?}");
    assert!(close(draw.q.unwrap(), 0.0) && close(draw.draw.unwrap(), 1.0), "{draw:?}");
    assert!(close(loss.q.unwrap(), -1.0), "{loss:?}");
    assert_eq!(r.chosen, 0);
    assert!(win.visits > draw.visits && draw.visits >= loss.visits, "{:?}", r.moves);
}

#[test]
fn terminal_root_gives_no_result() {
    let game = TableGame::new(vec![term(0, -1.0)]);
    let mut s = Search::new(game, SearchConfig::default(), 0);
    assert!(s.run(10, |_, _, _| panic!("no evaluation expected")).is_none());
    assert!(s.is_done());
}

#[test]
fn wdl_values_keep_draw_probability() {
    // Root with one move into a node the evaluator calls 20% win, 50% draw, 30% loss.
    let game = TableGame::new(vec![inner(0, 0.0, &[(0, 1)]), inner(1, 0.0, &[(0, 2)]), term(0, 0.0)]);
    let mut s = Search::new(game, SearchConfig::default(), 0);
    let r = s
        .run(1, |st, _, p| {
            p[0] = 1.0;
            if st.cur == 0 { LeafValue::from_wdl(0.0, 1.0, 0.0) } else { LeafValue::from_wdl(0.2, 0.5, 0.3) }
        })
        .unwrap();
    let m = &r.moves[0];
    assert!(close(m.q.unwrap(), 0.1), "{m:?}"); // p0's view of p1's -0.1
    assert!(close(m.draw.unwrap(), 0.5));
    assert!(close(r.root_draw, 0.75) && close(r.root_value, 0.05));
}
