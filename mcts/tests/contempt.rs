//! Contempt (`SearchConfig::contempt`): a draw counts `-c` for the root's player and `+c` for the
//! other while moves are chosen; what the search reports stays unbiased.
mod common;

use common::{inner, term, TableGame};
use vzero_mcts::{GumbelConfig, LeafValue, RootMode, Search, SearchConfig};

/// `me` to move at node `at` chooses between a draw at once (move 0) and an endless line that
/// the evaluator scores `edge` for `me` at every node (move 1). Nodes from `at` on.
fn draw_or_line(at: usize, me: usize, edge: f32) -> Vec<common::TableNode> {
    let other = 1 - me;
    vec![
        inner(me, edge, &[(0, at + 1), (1, at + 2)]), // at: the choice
        term(other, 0.0),                             // at+1: drawn
        inner(other, -edge, &[(0, at + 3)]),          // at+2: the line, `me` is `edge` ahead
        inner(me, edge, &[(0, at + 2)]),              // at+3: and so on
    ]
}

fn table_eval(s: &TableGame, moves: &[u8], p: &mut [f32]) -> LeafValue {
    assert!(s.node().terminal.is_none(), "evaluator called on a terminal node");
    p.iter_mut().for_each(|x| *x = 1.0 / moves.len() as f32);
    LeafValue { value: s.node().eval, draw: 0.0 }
}

fn puct(contempt: f32) -> SearchConfig {
    SearchConfig { contempt, ..SearchConfig::default() }
}

fn gumbel(contempt: f32) -> SearchConfig {
    SearchConfig {
        root_mode: RootMode::Gumbel(GumbelConfig { gumbel_scale: 0.0, ..GumbelConfig::default() }),
        contempt,
        ..SearchConfig::default()
    }
}

#[test]
fn the_root_player_leaves_a_draw_for_a_slightly_worse_line_only_with_contempt() {
    // p0 to move: a draw now, or a line 0.1 behind.
    let game = TableGame::new(draw_or_line(0, 0, -0.1));
    for (name, config) in [("puct", puct as fn(f32) -> SearchConfig), ("gumbel", gumbel)] {
        let r = Search::new(game.clone(), config(0.0), 1).run(64, table_eval).unwrap();
        assert_eq!(r.chosen, 0, "{name}: without contempt the draw is better: {r:?}");
        let r = Search::new(game.clone(), config(0.2), 1).run(64, table_eval).unwrap();
        assert_eq!(r.chosen, 1, "{name}: with contempt 0.2 a draw is worth -0.2 < -0.1: {r:?}");
        // Reported values are not shifted: the draw's Q is 0, the line's -0.1.
        assert_eq!(r.moves[0].q, Some(0.0), "{name}");
        assert!((r.moves[1].q.unwrap() + 0.1).abs() < 1e-5, "{name}: {r:?}");
        assert!(r.root_value <= 0.0 && r.root_value >= -0.1, "{name}: {r:?}");
        // A contempt smaller than the gap changes nothing.
        let r = Search::new(game.clone(), config(0.05), 1).run(64, table_eval).unwrap();
        assert_eq!(r.chosen, 0, "{name}: {r:?}");
    }
}

#[test]
fn the_opponent_values_a_draw_at_plus_contempt() {
    // p0's only move leads to p1's choice between a draw and a line 0.1 ahead for p1. Without
    // contempt p1 plays the line; with contempt 0.2 the draw is worth +0.2 to p1 (zero-sum with
    // the root player's -0.2), so p1 takes it.
    let mut nodes = vec![inner(0, 0.0, &[(0, 1)])];
    nodes.extend(draw_or_line(1, 1, 0.1));
    let game = TableGame::new(nodes);
    for (contempt, want) in [(0.0, 1), (0.2, 0)] {
        let mut s = Search::new(game.clone(), puct(contempt), 1);
        s.run(200, table_eval).unwrap();
        let reply = s.node_stats(&[0]).unwrap();
        let best = reply.children.iter().max_by_key(|m| m.visits).unwrap();
        assert_eq!(best.mv, want, "contempt {contempt}: {reply:?}");
    }
}

#[test]
fn contempt_follows_the_root_across_moves_of_a_reused_tree() {
    // p0 chooses between a draw and a line 0.1 behind twice in a row, with p1 in between: the
    // tree kept from p0's first search must not carry p1's view of the draw into p0's second one.
    let mut nodes = vec![inner(0, -0.1, &[(0, 1), (1, 2)]), term(1, 0.0), inner(1, 0.1, &[(0, 3)])];
    nodes.extend(draw_or_line(3, 0, -0.1));
    let game = TableGame::new(nodes);
    let mut s = Search::new(game, puct(0.2), 1);
    let r = s.run(200, table_eval).unwrap();
    assert_eq!(r.chosen, 1, "{r:?}");
    s.advance(1);
    // p1 to move, one move.
    let r = s.run(50, table_eval).unwrap();
    s.advance(r.chosen);
    let r = s.run(200, table_eval).unwrap();
    assert_eq!(r.chosen, 1, "p0 again at the root: a draw is worth -0.2 to it: {r:?}");
}
