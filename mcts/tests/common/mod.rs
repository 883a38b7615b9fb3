//! Toy games for the search tests.
#![allow(dead_code)]

pub mod chess;

use std::sync::Arc;
use vzero_mcts::Game;

/// Tic-tac-toe; player 0 is X. Moves are square indices 0..9.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TicTacToe {
    pub board: [u8; 9], // 0 empty, 1 X, 2 O
    pub to_move: usize,
}

const LINES: [[usize; 3]; 8] = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

impl TicTacToe {
    pub fn new() -> Self {
        TicTacToe { board: [0; 9], to_move: 0 }
    }

    /// From a 9-char string of 'x', 'o', '.'; the player to move is deduced from the counts.
    pub fn parse(s: &str) -> Self {
        let mut board = [0u8; 9];
        for (i, c) in s.chars().enumerate() {
            board[i] = match c {
                'x' => 1,
                'o' => 2,
                _ => 0,
            };
        }
        let xs = board.iter().filter(|&&c| c == 1).count();
        let os = board.iter().filter(|&&c| c == 2).count();
        TicTacToe { board, to_move: if xs > os { 1 } else { 0 } }
    }

    fn winner(&self) -> Option<u8> {
        LINES.iter().find_map(|l| {
            let c = self.board[l[0]];
            (c != 0 && c == self.board[l[1]] && c == self.board[l[2]]).then_some(c)
        })
    }

    /// Exact minimax value for the player to move.
    pub fn solve(&self) -> f32 {
        if let Some(v) = self.terminal_value() {
            return v;
        }
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        moves
            .iter()
            .map(|&m| {
                let mut s = self.clone();
                s.play(m);
                -s.solve()
            })
            .fold(-1.0, f32::max)
    }

    /// Moves that keep the exact minimax value (the optimal moves).
    pub fn optimal_moves(&self) -> Vec<u8> {
        let best = self.solve();
        let mut moves = Vec::new();
        self.legal_moves(&mut moves);
        moves
            .into_iter()
            .filter(|&m| {
                let mut s = self.clone();
                s.play(m);
                -s.solve() == best
            })
            .collect()
    }
}

impl Game for TicTacToe {
    type Move = u8;
    fn to_move(&self) -> usize {
        self.to_move
    }
    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.extend((0..9u8).filter(|&i| self.board[i as usize] == 0));
    }
    fn play(&mut self, mv: u8) {
        assert_eq!(self.board[mv as usize], 0);
        self.board[mv as usize] = self.to_move as u8 + 1;
        self.to_move ^= 1;
    }
    fn terminal_value(&self) -> Option<f32> {
        if self.winner().is_some() {
            Some(-1.0) // the previous mover completed a line
        } else if self.board.iter().all(|&c| c != 0) {
            Some(0.0)
        } else {
            None
        }
    }
}

/// Nim with one pile: take 1..=3; whoever takes the last stone wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nim {
    pub pile: u32,
    pub to_move: usize,
}

impl Game for Nim {
    type Move = u8;
    fn to_move(&self) -> usize {
        self.to_move
    }
    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.extend((1..=3u8).filter(|&k| k as u32 <= self.pile));
    }
    fn play(&mut self, mv: u8) {
        self.pile -= mv as u32;
        self.to_move ^= 1;
    }
    fn terminal_value(&self) -> Option<f32> {
        (self.pile == 0).then_some(-1.0)
    }
}

/// A never-ending game with `width` moves per position; players alternate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endless {
    pub width: u8,
    pub path: u64, // hash of the moves so far
    pub to_move: usize,
}

impl Endless {
    pub fn new(width: u8) -> Self {
        Endless { width, path: 0, to_move: 0 }
    }
}

impl Game for Endless {
    type Move = u8;
    fn to_move(&self) -> usize {
        self.to_move
    }
    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.extend(0..self.width);
    }
    fn play(&mut self, mv: u8) {
        self.path = self.path.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(mv as u64 + 1);
        self.to_move ^= 1;
    }
    fn terminal_value(&self) -> Option<f32> {
        None
    }
}

/// One position of an explicit game tree.
#[derive(Clone, Debug)]
pub struct TableNode {
    pub to_move: usize,
    /// `Some(v)`: terminal with value v for `to_move`.
    pub terminal: Option<f32>,
    /// What a stub evaluator should say about this node (value for `to_move`).
    pub eval: f32,
    pub children: Vec<(u8, usize)>,
}

/// A game given as an explicit tree (turns need not alternate). Node 0 is the start.
#[derive(Clone, Debug)]
pub struct TableGame {
    pub nodes: Arc<Vec<TableNode>>,
    pub cur: usize,
}

impl TableGame {
    pub fn new(nodes: Vec<TableNode>) -> Self {
        TableGame { nodes: Arc::new(nodes), cur: 0 }
    }
    pub fn node(&self) -> &TableNode {
        &self.nodes[self.cur]
    }
}

pub fn inner(to_move: usize, eval: f32, children: &[(u8, usize)]) -> TableNode {
    TableNode { to_move, terminal: None, eval, children: children.to_vec() }
}

pub fn term(to_move: usize, value: f32) -> TableNode {
    TableNode { to_move, terminal: Some(value), eval: f32::NAN, children: Vec::new() }
}

impl Game for TableGame {
    type Move = u8;
    fn to_move(&self) -> usize {
        self.node().to_move
    }
    fn legal_moves(&self, out: &mut Vec<u8>) {
        out.extend(self.node().children.iter().map(|c| c.0));
    }
    fn play(&mut self, mv: u8) {
        self.cur = self.node().children.iter().find(|c| c.0 == mv).expect("illegal move").1;
    }
    fn terminal_value(&self) -> Option<f32> {
        self.node().terminal
    }
}
