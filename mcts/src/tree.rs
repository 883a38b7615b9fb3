//! Arena search tree: nodes in one `Vec`, each node's edges stored contiguously in another
//! (statistics) and a third (moves), children referenced by index. No per-node heap allocation.
//!
//! Perspective rule: a node's `value_sum` is from the point of view of the player to move at that
//! node; an edge's `value_sum` from the point of view of the player who makes that move (the
//! parent's player to move). A backup adds `+v` or `-v` at each step depending on whether that
//! player is the leaf's player — never by flipping the sign per ply — so double moves and passes
//! are handled like any other move.
//!
//! Proofs (MCTS-solver): a node's `proof` is for its player to move, an edge's for the player
//! making the move. A backup passing a proven node replaces what it carries by the node's exact
//! value, and sets the node's sums to `visits × exact`, sending the difference up the path: the
//! ancestors' statistics then count every simulation below a proven node at its exact value.

/// Index meaning "none".
pub(crate) const NONE: u32 = u32::MAX;

use crate::proof::{combine, Proof};

/// Evaluation state of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeState {
    /// Edges generated, evaluation not yet requested: a fresh root, or a node proven when it was
    /// created (a move of it wins at once), which is never evaluated.
    Unevaluated,
    /// Returned to the caller by `gather`, waiting for `apply`.
    Pending,
    /// Evaluated; priors set.
    Expanded,
    /// Game over; `raw_value` holds the terminal value.
    Terminal,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub parent: u32,
    pub parent_edge: u32,
    pub first_edge: u32,
    pub num_edges: u32,
    /// Completed visits (its own evaluation + all backups through it).
    pub visits: u32,
    /// Descents through this node not yet backed up.
    pub in_flight: u32,
    /// Sum of values, perspective of `to_move`.
    pub value_sum: f32,
    pub draw_sum: f32,
    /// Evaluator's (or terminal) value for `to_move`.
    pub raw_value: f32,
    pub raw_draw: f32,
    pub to_move: u8,
    pub state: NodeState,
    /// Proven value for `to_move` (solver only).
    pub proof: Option<Proof>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub prior: f32,
    pub child: u32,
    pub visits: u32,
    pub in_flight: u32,
    /// Sum of values, perspective of the player making this move.
    pub value_sum: f32,
    /// Proven value for the player making this move (solver only).
    pub proof: Option<Proof>,
}

impl Edge {
    const NEW: Edge = Edge { prior: 0.0, child: NONE, visits: 0, in_flight: 0, value_sum: 0.0, proof: None };

    /// Whether the move is proven to lose for the player making it.
    #[inline]
    pub fn lost(&self) -> bool {
        self.proof.is_some_and(Proof::is_loss)
    }
}

/// The arena. The root is always node 0.
#[derive(Clone, Debug)]
pub(crate) struct Tree<M> {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub moves: Vec<M>,
    // Spare buffers reused by `reroot`.
    spare_nodes: Vec<Node>,
    spare_edges: Vec<Edge>,
    spare_moves: Vec<M>,
    order: Vec<u32>,
}

impl<M: Copy> Tree<M> {
    pub fn new() -> Self {
        Tree {
            nodes: Vec::new(),
            edges: Vec::new(),
            moves: Vec::new(),
            spare_nodes: Vec::new(),
            spare_edges: Vec::new(),
            spare_moves: Vec::new(),
            order: Vec::new(),
        }
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.moves.clear();
    }

    /// Adds a node for a position whose legal moves were just appended to `self.moves`
    /// (from index `first_edge`); returns its index.
    pub fn push_node(&mut self, parent: u32, parent_edge: u32, to_move: usize, first_edge: usize) -> u32 {
        let num = self.moves.len() - first_edge;
        self.edges.resize(self.moves.len(), Edge::NEW);
        let idx = self.nodes.len() as u32;
        self.nodes.push(Node {
            parent,
            parent_edge,
            first_edge: first_edge as u32,
            num_edges: num as u32,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            draw_sum: 0.0,
            raw_value: 0.0,
            raw_draw: 0.0,
            to_move: to_move as u8,
            state: NodeState::Unevaluated,
            proof: None,
        });
        idx
    }

    /// Edge index range of `node`.
    #[inline]
    pub fn edge_range(&self, node: u32) -> std::ops::Range<usize> {
        let n = &self.nodes[node as usize];
        n.first_edge as usize..(n.first_edge + n.num_edges) as usize
    }

    /// Backs up `value` (for the player to move at `leaf`) and `draw` from `leaf` to the root,
    /// removing one in-flight visit on every node and edge of the path. From a proven node up,
    /// what is backed up is its exact value plus the correction of its earlier visits; proofs
    /// of edges and parents are updated on the way.
    pub fn backup(&mut self, leaf: u32, value: f32, draw: f32) {
        let mut p = self.nodes[leaf as usize].to_move;
        let (mut v, mut d) = (value, draw);
        let mut n = leaf;
        loop {
            let node = &mut self.nodes[n as usize];
            node.visits += 1;
            node.in_flight -= 1;
            if let Some(proof) = node.proof {
                let visits = node.visits as f32;
                let (exact_v, exact_d) = (proof.value() * visits, proof.draw() * visits);
                p = node.to_move;
                v = exact_v - node.value_sum;
                d = exact_d - node.draw_sum;
                node.value_sum = exact_v;
                node.draw_sum = exact_d;
            } else {
                node.value_sum += if node.to_move == p { v } else { -v };
                node.draw_sum += d;
            }
            if node.parent == NONE {
                break;
            }
            let (pe, par, proof, to_move) = (node.parent_edge, node.parent, node.proof, node.to_move);
            let mover = self.nodes[par as usize].to_move;
            let e = &mut self.edges[pe as usize];
            e.visits += 1;
            e.in_flight -= 1;
            e.value_sum += if mover == p { v } else { -v };
            let edge_proof = proof.map(|c| c.before_move(to_move == mover));
            if edge_proof != e.proof {
                e.proof = edge_proof;
                let range = self.edge_range(par);
                self.nodes[par as usize].proof = combine(self.edges[range].iter().map(|e| e.proof));
            }
            n = par;
        }
    }

    /// Removes one in-flight visit from `leaf` and its path to the root (an abandoned descent).
    pub fn undo_in_flight(&mut self, leaf: u32) {
        let mut n = leaf;
        loop {
            let node = &mut self.nodes[n as usize];
            node.in_flight -= 1;
            if node.parent == NONE {
                break;
            }
            self.edges[node.parent_edge as usize].in_flight -= 1;
            n = node.parent;
        }
    }

    /// Makes `new_root` (a child of the root) the root, keeping only its subtree; indices are
    /// compacted so that the new root is node 0. No node of the subtree may be in flight.
    pub fn reroot(&mut self, new_root: u32) {
        let mut nodes = std::mem::take(&mut self.spare_nodes);
        let mut edges = std::mem::take(&mut self.spare_edges);
        let mut moves = std::mem::take(&mut self.spare_moves);
        let mut order = std::mem::take(&mut self.order);
        nodes.clear();
        edges.clear();
        moves.clear();
        order.clear();

        let mut root = self.nodes[new_root as usize];
        root.parent = NONE;
        root.parent_edge = NONE;
        nodes.push(root);
        order.push(new_root);
        let mut i = 0;
        while i < nodes.len() {
            let old = order[i];
            let range = self.edge_range(old);
            nodes[i].first_edge = edges.len() as u32;
            for e in range {
                let mut edge = self.edges[e];
                moves.push(self.moves[e]);
                if edge.child != NONE {
                    let mut child = self.nodes[edge.child as usize];
                    child.parent = i as u32;
                    child.parent_edge = edges.len() as u32;
                    order.push(edge.child);
                    edge.child = nodes.len() as u32;
                    nodes.push(child);
                }
                edges.push(edge);
            }
            i += 1;
        }

        self.spare_nodes = std::mem::replace(&mut self.nodes, nodes);
        self.spare_edges = std::mem::replace(&mut self.edges, edges);
        self.spare_moves = std::mem::replace(&mut self.moves, moves);
        self.order = order;
    }
}
