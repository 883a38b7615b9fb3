//! The search: a tree over a [`Game`] with a gather/apply step API for batched evaluation.
//!
//! One move's search:
//! 1. [`Search::start`] (playout cap randomization) or [`Search::start_with`] sets the budget.
//! 2. Repeat until [`Search::is_done`]: [`Search::gather`] (or [`gather_batch`] over many trees)
//!    returns leaves; evaluate each (priors over [`Search::leaf_moves`] plus a [`LeafValue`]);
//!    [`Search::apply`] backs them up. Terminal leaves are scored from [`Game::terminal_value`]
//!    inside `gather` and never reach the caller.
//! 3. [`Search::finish`] returns the [`SearchResult`]; [`Search::advance`] plays a move keeping
//!    its subtree.
//!
//! [`Search::run`] wraps the loop for single-tree use with a closure evaluator.
//!
//! With [`SearchConfig::solver`] (the default) the search is an MCTS-solver (see [`crate::proof`]):
//! terminal nodes are proven by their terminal value, every new node by [`Game::winning_move`]
//! (a move that wins at once makes it a proven win without an evaluation), and proofs go up on
//! backup. Selection never enters a move proven lost when another is left, stops at proven
//! nodes (backing up their exact value), and a search whose root is proven is done at once.

use rand::{Rng, SeedableRng};

use crate::config::{RootMode, SearchConfig};
use crate::eval::LeafValue;
use crate::game::Game;
use crate::gumbel::{self, LOW_LOGIT};
use crate::noise::{self, SearchRng};
use crate::proof::Proof;
use crate::result::{MoveStats, NodeStats, SearchResult};
use crate::tree::{Edge, NodeState, Tree, NONE};

/// Opaque reference to a leaf returned by `gather`, to be passed back to `apply`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeafHandle {
    tree: u32,
    node: u32,
    generation: u32,
}

impl LeafHandle {
    /// Index of the search this leaf belongs to in the slice given to [`gather_batch`] (0 for [`Search::gather`]).
    pub fn tree(&self) -> usize {
        self.tree as usize
    }
}

/// A leaf to evaluate: its position and the handle to apply the evaluation with.
#[derive(Clone, Debug)]
pub struct Leaf<G: Game> {
    /// Handle for [`Search::apply`] and [`Search::leaf_moves`].
    pub handle: LeafHandle,
    /// The leaf position (a clone; the search keeps none).
    pub state: G,
}

enum Descent<G> {
    Leaf(u32, G),
    Terminal(u32),
    Collision(u32),
}

/// A search tree over a game, with its configuration and its own seeded RNG.
#[derive(Clone, Debug)]
pub struct Search<G: Game> {
    config: SearchConfig,
    tree: Tree<G::Move>,
    root_state: G,
    rng: SearchRng,
    generation: u32,
    ply: u32,
    // Current search.
    budget: u32,
    sims_started: u32,
    pending: u32,
    full: bool,
    prepared: bool,
    noise_applied: bool,
    root_raw_priors: Vec<f32>,
    // Gumbel root state: per-search visits (incl. in flight), Gumbel noise, logits, schedule.
    g_visits: Vec<u32>,
    g_noise: Vec<f32>,
    g_logits: Vec<f32>,
    g_schedule: Vec<u32>,
    scratch_visits: Vec<u32>,
    scratch_q: Vec<f32>,
    scratch_sigma: Vec<f32>,
    collided: Vec<u32>,
}

impl<G: Game> Search<G> {
    /// A search rooted at `state`; all randomness comes from `seed`.
    pub fn new(state: G, config: SearchConfig, seed: u64) -> Self {
        let mut s = Search {
            config,
            tree: Tree::new(),
            root_state: state,
            rng: SearchRng::seed_from_u64(seed),
            generation: 0,
            ply: 0,
            budget: 0,
            sims_started: 0,
            pending: 0,
            full: true,
            prepared: false,
            noise_applied: false,
            root_raw_priors: Vec::new(),
            g_visits: Vec::new(),
            g_noise: Vec::new(),
            g_logits: Vec::new(),
            g_schedule: Vec::new(),
            scratch_visits: Vec::new(),
            scratch_q: Vec::new(),
            scratch_sigma: Vec::new(),
            collided: Vec::new(),
        };
        s.init_root();
        s
    }

    /// The configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The root position.
    pub fn root_state(&self) -> &G {
        &self.root_state
    }

    /// Ply of the root (used by the temperature schedule); incremented by [`Search::advance`].
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Sets the ply of the root (e.g. when starting from a FEN).
    pub fn set_ply(&mut self, ply: u32) {
        self.ply = ply;
    }

    /// Replaces the root position, discarding the tree.
    pub fn set_root(&mut self, state: G, ply: u32) {
        assert_eq!(self.pending, 0, "set_root with leaves awaiting evaluation");
        self.root_state = state;
        self.ply = ply;
        self.init_root();
    }

    /// Number of nodes in the tree.
    pub fn num_nodes(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Number of edges (the legal moves of every node created) in the tree.
    pub fn num_edges(&self) -> usize {
        self.tree.edges.len()
    }

    /// Leaves gathered and not yet applied.
    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// Simulations started by the current search.
    pub fn simulations(&self) -> u32 {
        self.sims_started
    }

    /// Starts a search with playout cap randomization: a full search with probability
    /// `playout_cap.full_prob`, otherwise a cheap one.
    pub fn start(&mut self) {
        let cap = self.config.playout_cap;
        let full = self.rng.gen::<f32>() < cap.full_prob;
        self.start_with(if full { cap.full_sims } else { cap.cheap_sims }, full);
    }

    /// Starts a search of `sims` simulations (not counting the root evaluation); `full` marks
    /// whether its policy target should be recorded (and enables root noise).
    pub fn start_with(&mut self, sims: u32, full: bool) {
        assert_eq!(self.pending, 0, "start with leaves awaiting evaluation");
        if self.noise_applied {
            let range = self.tree.edge_range(0);
            for (e, &p) in self.tree.edges[range].iter_mut().zip(&self.root_raw_priors) {
                e.prior = p;
            }
            self.noise_applied = false;
        }
        self.budget = sims;
        self.sims_started = 0;
        self.full = full;
        self.prepared = false;
    }

    /// Whether the current search is complete: nothing is in flight and the budget is spent or
    /// the root is settled (solver: proven, and no shorter win left to look for), or the root is
    /// terminal.
    pub fn is_done(&self) -> bool {
        match self.tree.nodes[0].state {
            NodeState::Terminal => true,
            NodeState::Expanded => self.pending == 0 && (self.sims_started >= self.budget || self.root_settled()),
            _ => false,
        }
    }

    /// Whether the root's proof is final: a loss or a draw (every move proven), a win within
    /// three plies (every win in one ply is marked when the root is created, so only a double
    /// move could be shorter), or a longer win with every move proven. A root proven to win in
    /// more plies keeps searching its unproven moves, untried ones first, for a shorter win.
    fn root_settled(&self) -> bool {
        match self.tree.nodes[0].proof {
            None => false,
            Some(Proof::Win(k)) if k > 3 => self.tree.edges[self.tree.edge_range(0)].iter().all(|e| e.proof.is_some()),
            Some(_) => true,
        }
    }

    /// Whether root move `e` is out of the running: proven lost, or proven at all once the root
    /// is proven (only shorter wins are then looked for).
    #[inline]
    fn root_excluded(&self, e: usize) -> bool {
        let e = &self.tree.edges[e];
        e.lost() || (e.proof.is_some() && self.tree.nodes[0].proof.is_some())
    }

    /// The proven value of the root for its player to move, if the solver has one.
    pub fn root_proof(&self) -> Option<Proof> {
        self.tree.nodes[0].proof
    }

    /// Runs a full search of `sims` simulations with `eval(state, legal_moves, priors_out) -> value`
    /// one leaf at a time. `None` if the root is terminal.
    pub fn run<F>(&mut self, sims: u32, mut eval: F) -> Option<SearchResult<G::Move>>
    where
        F: FnMut(&G, &[G::Move], &mut [f32]) -> LeafValue,
    {
        self.start_with(sims, true);
        self.run_loop(&mut eval)
    }

    /// Like [`Search::run`] but with playout cap randomization ([`Search::start`]).
    pub fn run_move<F>(&mut self, mut eval: F) -> Option<SearchResult<G::Move>>
    where
        F: FnMut(&G, &[G::Move], &mut [f32]) -> LeafValue,
    {
        self.start();
        self.run_loop(&mut eval)
    }

    fn run_loop<F>(&mut self, eval: &mut F) -> Option<SearchResult<G::Move>>
    where
        F: FnMut(&G, &[G::Move], &mut [f32]) -> LeafValue,
    {
        let mut leaves = Vec::with_capacity(1);
        let mut priors = Vec::new();
        while !self.is_done() {
            self.gather(1, &mut leaves);
            for leaf in leaves.drain(..) {
                let moves = self.leaf_moves(leaf.handle);
                priors.clear();
                priors.resize(moves.len(), 0.0);
                let v = eval(&leaf.state, moves, &mut priors);
                self.apply(leaf.handle, &priors, v);
            }
        }
        self.finish()
    }

    /// Appends up to `max_leaves` distinct leaves needing evaluation to `out` and returns how many.
    /// Terminal leaves met on the way are backed up at once (they count as simulations).
    /// Returns 0 when the budget is spent, or when every descent collides with a leaf already
    /// in flight (apply the pending ones first).
    pub fn gather(&mut self, max_leaves: usize, out: &mut Vec<Leaf<G>>) -> usize {
        self.gather_tagged(0, max_leaves, out)
    }

    fn gather_tagged(&mut self, tree_id: u32, max_leaves: usize, out: &mut Vec<Leaf<G>>) -> usize {
        if max_leaves == 0 {
            return 0;
        }
        match self.tree.nodes[0].state {
            NodeState::Terminal | NodeState::Pending => return 0,
            NodeState::Unevaluated => {
                let root = &mut self.tree.nodes[0];
                root.state = NodeState::Pending;
                root.in_flight += 1;
                self.pending += 1;
                out.push(Leaf { handle: self.handle(tree_id, 0), state: self.root_state.clone() });
                return 1;
            }
            NodeState::Expanded => {}
        }
        if !self.prepared {
            self.prepare_root();
        }
        let gumbel_root = matches!(self.config.root_mode, RootMode::Gumbel(_));
        let mut pushed = 0;
        let mut collisions = 0;
        while pushed < max_leaves && self.sims_started < self.budget && !self.root_settled() {
            let (descent, root_choice) = self.descend();
            match descent {
                Descent::Leaf(node, state) => {
                    out.push(Leaf { handle: self.handle(tree_id, node), state });
                    pushed += 1;
                    self.pending += 1;
                    self.sims_started += 1;
                }
                Descent::Terminal(node) => {
                    let n = self.tree.nodes[node as usize];
                    self.tree.backup(node, n.raw_value, n.raw_draw);
                    self.sims_started += 1;
                }
                Descent::Collision(node) => {
                    collisions += 1;
                    if gumbel_root {
                        // The halving schedule depends on results not yet known: stop here.
                        self.g_visits[root_choice] -= 1;
                        self.tree.undo_in_flight(node);
                        break;
                    }
                    // Keep the virtual loss until the end of this gather so the next descents divert.
                    self.collided.push(node);
                    if collisions > self.config.max_collisions {
                        break;
                    }
                }
            }
        }
        for i in 0..self.collided.len() {
            self.tree.undo_in_flight(self.collided[i]);
        }
        self.collided.clear();
        pushed
    }

    /// Legal moves of a gathered leaf, in `legal_moves` order: the order of the priors `apply` expects.
    pub fn leaf_moves(&self, handle: LeafHandle) -> &[G::Move] {
        self.check_handle(handle);
        &self.tree.moves[self.tree.edge_range(handle.node)]
    }

    /// Applies an evaluation to a gathered leaf and backs it up. `priors` are over
    /// [`Search::leaf_moves`] (normalized here; all-zero or non-finite priors become uniform);
    /// `value` is for the leaf's player to move.
    pub fn apply(&mut self, handle: LeafHandle, priors: &[f32], value: LeafValue) {
        self.check_handle(handle);
        let node = handle.node;
        assert_eq!(self.tree.nodes[node as usize].state, NodeState::Pending, "leaf applied twice");
        let range = self.tree.edge_range(node);
        assert_eq!(priors.len(), range.len(), "priors must match the leaf's legal moves");
        let sum: f32 = priors.iter().map(|p| p.max(0.0)).sum();
        let edges = &mut self.tree.edges[range.clone()];
        if sum > 0.0 && sum.is_finite() {
            let inv = 1.0 / sum;
            for (e, &p) in edges.iter_mut().zip(priors) {
                e.prior = p.max(0.0) * inv;
            }
        } else {
            let u = 1.0 / range.len().max(1) as f32;
            edges.iter_mut().for_each(|e| e.prior = u);
        }
        let v = if value.value.is_finite() { value.value.clamp(-1.0, 1.0) } else { 0.0 };
        let d = if value.draw.is_finite() { value.draw.clamp(0.0, 1.0) } else { 0.0 };
        let n = &mut self.tree.nodes[node as usize];
        n.raw_value = v;
        n.raw_draw = d;
        n.state = NodeState::Expanded;
        self.tree.backup(node, v, d);
        self.pending -= 1;
    }

    /// The result of the current search (call when [`Search::is_done`]). `None` if the root is
    /// terminal or has not been evaluated. Consumes randomness for the temperature sampling.
    pub fn finish(&mut self) -> Option<SearchResult<G::Move>> {
        assert_eq!(self.pending, 0, "finish with leaves awaiting evaluation");
        let root = self.tree.nodes[0];
        if root.state != NodeState::Expanded {
            return None;
        }
        if !self.prepared {
            self.prepare_root();
        }
        let range = self.tree.edge_range(0);
        let moves: Vec<MoveStats<G::Move>> = range
            .clone()
            .enumerate()
            .map(|(i, e)| {
                let mut s = self.move_stats(e);
                s.prior = self.root_raw_priors[i];
                s
            })
            .collect();
        let (policy_target, chosen) = match (root.proof, self.config.root_mode) {
            (Some(_), _) => proven_target_and_choice(&moves),
            (None, RootMode::Puct) => self.puct_target_and_choice(&moves),
            (None, RootMode::Gumbel(_)) => self.gumbel_target_and_choice(),
        };
        Some(SearchResult {
            to_move: root.to_move as usize,
            chosen: moves[chosen].mv,
            moves,
            policy_target,
            root_value: root.proof.map_or(root.value_sum / root.visits.max(1) as f32, Proof::value),
            root_draw: root.proof.map_or(root.draw_sum / root.visits.max(1) as f32, Proof::draw),
            proven: root.proof,
            raw_value: root.raw_value,
            root_visits: root.visits,
            simulations: self.sims_started,
            full_search: self.full,
        })
    }

    /// Plays `mv` at the root. With `reuse_tree`, the move's subtree becomes the new tree
    /// (its statistics are kept); otherwise the tree restarts. Panics if `mv` is not legal.
    pub fn advance(&mut self, mv: G::Move) {
        assert_eq!(self.pending, 0, "advance with leaves awaiting evaluation");
        let e = self
            .tree
            .edge_range(0)
            .find(|&e| self.tree.moves[e] == mv)
            .unwrap_or_else(|| panic!("move {mv:?} is not legal at the root"));
        let child = self.tree.edges[e].child;
        self.root_state.play(mv);
        self.ply += 1;
        if self.config.reuse_tree
            && child != NONE
            && self.tree.nodes[child as usize].state == NodeState::Expanded
        {
            self.tree.reroot(child);
            self.generation = self.generation.wrapping_add(1);
            self.reset_search_state();
        } else {
            self.init_root();
        }
    }

    /// Statistics of the node reached from the root by `path`; `None` if it is not in the tree.
    pub fn node_stats(&self, path: &[G::Move]) -> Option<NodeStats<G::Move>> {
        let mut node = 0u32;
        for mv in path {
            let e = self.tree.edge_range(node).find(|&e| self.tree.moves[e] == *mv)?;
            node = self.tree.edges[e].child;
            if node == NONE {
                return None;
            }
        }
        let n = &self.tree.nodes[node as usize];
        let visited = n.visits > 0;
        Some(NodeStats {
            to_move: n.to_move as usize,
            visits: n.visits,
            value: visited.then(|| n.value_sum / n.visits as f32),
            draw: visited.then(|| n.draw_sum / n.visits as f32),
            terminal: n.state == NodeState::Terminal,
            expanded: n.state == NodeState::Expanded,
            proof: n.proof,
            children: self.tree.edge_range(node).map(|e| self.move_stats(e)).collect(),
        })
    }

    // ---- internals ----

    fn handle(&self, tree: u32, node: u32) -> LeafHandle {
        LeafHandle { tree, node, generation: self.generation }
    }

    fn check_handle(&self, h: LeafHandle) {
        assert!(
            h.generation == self.generation && (h.node as usize) < self.tree.nodes.len(),
            "stale or foreign leaf handle"
        );
    }

    fn reset_search_state(&mut self) {
        self.budget = 0;
        self.sims_started = 0;
        self.prepared = false;
        self.noise_applied = false;
    }

    fn init_root(&mut self) {
        self.tree.clear();
        self.generation = self.generation.wrapping_add(1);
        self.reset_search_state();
        let state = self.root_state.clone();
        self.new_node(NONE, NONE, &state);
    }

    /// Adds a node for `state`; terminal positions (or positions without legal moves, scored as
    /// draws) are marked terminal with their value. With the solver, terminal nodes are proven by
    /// their value, and a node with a move that wins at once is a proven win in one ply (the root
    /// marks every such move, other nodes the first).
    fn new_node(&mut self, parent: u32, parent_edge: u32, state: &G) -> u32 {
        let first = self.tree.moves.len();
        let terminal = state.expand(&mut self.tree.moves);
        let idx = self.tree.push_node(parent, parent_edge, state.to_move(), first);
        let no_moves = self.tree.nodes[idx as usize].num_edges == 0;
        debug_assert!(terminal.is_some() || !no_moves, "non-terminal position without legal moves");
        if terminal.is_some() || no_moves {
            let n = &mut self.tree.nodes[idx as usize];
            n.state = NodeState::Terminal;
            let v = terminal.unwrap_or(0.0).clamp(-1.0, 1.0);
            n.raw_value = v;
            n.raw_draw = if v == 0.0 { 1.0 } else { 0.0 };
            if self.config.solver {
                n.proof = Some(Proof::terminal(v));
            }
        } else if self.config.solver {
            let tree = &mut self.tree;
            let mut from = first;
            while let Some(i) = state.winning_move(&tree.moves[from..]) {
                tree.edges[from + i].proof = Some(Proof::Win(1));
                tree.nodes[idx as usize].proof = Some(Proof::Win(1));
                from += i + 1;
                if parent != NONE || from == tree.moves.len() {
                    break;
                }
            }
        }
        idx
    }

    fn move_stats(&self, e: usize) -> MoveStats<G::Move> {
        let edge = &self.tree.edges[e];
        let visited = edge.visits > 0;
        let draw = if visited && edge.child != NONE {
            let c = &self.tree.nodes[edge.child as usize];
            Some(c.draw_sum / c.visits.max(1) as f32)
        } else {
            None
        };
        MoveStats {
            mv: self.tree.moves[e],
            visits: edge.visits,
            prior: edge.prior,
            q: visited.then(|| edge.value_sum / edge.visits as f32),
            draw,
            proof: edge.proof,
        }
    }

    /// Root noise (PUCT) or Gumbel sampling, once per search, after the root is evaluated.
    fn prepare_root(&mut self) {
        let range = self.tree.edge_range(0);
        let n = range.len();
        self.root_raw_priors.clear();
        self.root_raw_priors.extend(self.tree.edges[range.clone()].iter().map(|e| e.prior));
        match self.config.root_mode {
            RootMode::Puct => {
                if let Some(dn) = self.config.noise {
                    if n > 1 && dn.fraction > 0.0 && (self.full || self.config.playout_cap.noise_in_cheap) {
                        let mut eta = vec![0.0f32; n];
                        noise::dirichlet((dn.total_alpha / n as f32) as f64, &mut eta, &mut self.rng);
                        for (e, x) in self.tree.edges[range].iter_mut().zip(&eta) {
                            e.prior = (1.0 - dn.fraction) * e.prior + dn.fraction * x;
                        }
                        self.noise_applied = true;
                    }
                }
            }
            RootMode::Gumbel(cfg) => {
                self.g_visits.clear();
                self.g_visits.resize(n, 0);
                self.g_noise.clear();
                for _ in 0..n {
                    let g = if cfg.gumbel_scale != 0.0 { cfg.gumbel_scale * noise::gumbel(&mut self.rng) } else { 0.0 };
                    self.g_noise.push(g);
                }
                gumbel::logits_from_priors(&self.root_raw_priors, &mut self.g_logits);
                let m = cfg.max_considered.max(1).min(n);
                self.g_schedule = gumbel::considered_visits(m, self.budget as usize);
            }
        }
        self.prepared = true;
    }

    /// One descent from the root, applying in-flight visits along the path.
    /// Also returns the root edge chosen (local index) for Gumbel bookkeeping.
    fn descend(&mut self) -> (Descent<G>, usize) {
        let mut node = 0u32;
        let mut state = self.root_state.clone();
        self.tree.nodes[0].in_flight += 1;
        let mut root_choice = usize::MAX;
        loop {
            let n = &self.tree.nodes[node as usize];
            match n.state {
                NodeState::Terminal => return (Descent::Terminal(node), root_choice),
                // A proven node is settled: its exact value is backed up (never the root: a
                // search with a proven root is done).
                _ if n.proof.is_some() && node != 0 => return (Descent::Terminal(node), root_choice),
                NodeState::Pending | NodeState::Unevaluated => return (Descent::Collision(node), root_choice),
                NodeState::Expanded => {}
            }
            let e = if node == 0 {
                match self.config.root_mode {
                    RootMode::Puct => self.select_puct(0, true),
                    RootMode::Gumbel(_) => {
                        let i = self.select_gumbel();
                        self.g_visits[i] += 1;
                        root_choice = i;
                        self.tree.nodes[0].first_edge as usize + i
                    }
                }
            } else {
                self.select_puct(node, false)
            };
            self.tree.edges[e].in_flight += 1;
            state.play(self.tree.moves[e]);
            let child = self.tree.edges[e].child;
            if child == NONE {
                let c = self.new_node(node, e as u32, &state);
                self.tree.edges[e].child = c;
                let cn = &mut self.tree.nodes[c as usize];
                cn.in_flight = 1;
                if cn.state == NodeState::Terminal || cn.proof.is_some() {
                    return (Descent::Terminal(c), root_choice);
                }
                cn.state = NodeState::Pending;
                return (Descent::Leaf(c, state), root_choice);
            }
            node = child;
            self.tree.nodes[node as usize].in_flight += 1;
        }
    }

    /// What a draw is worth, while choosing moves, to `player`: `-contempt` for the root's
    /// player, `+contempt` for the other (0 without contempt).
    #[inline]
    fn contempt_shift(&self, player: u8) -> f32 {
        let c = self.config.contempt;
        if c == 0.0 {
            0.0
        } else if player == self.tree.nodes[0].to_move {
            -c
        } else {
            c
        }
    }

    /// A move's `q` as its player sees it while choosing: shifted by `shift` (from
    /// [`Search::contempt_shift`]) times the move's draw share.
    #[inline]
    fn with_contempt(&self, e: &Edge, q: f32, shift: f32) -> f32 {
        if shift == 0.0 {
            q
        } else {
            q + shift * self.edge_draw(e)
        }
    }

    /// Draw share below a move: exact when proven, else the child's mean draw probability.
    #[inline]
    fn edge_draw(&self, e: &Edge) -> f32 {
        match e.proof {
            Some(p) => p.draw(),
            None if e.child != NONE => {
                let c = &self.tree.nodes[e.child as usize];
                if c.visits > 0 {
                    c.draw_sum / c.visits as f32
                } else {
                    0.0
                }
            }
            None => 0.0,
        }
    }

    /// PUCT with FPU reduction and virtual loss: argmax of Q + c * P * sqrt(N) / (1 + n).
    fn select_puct(&self, node: u32, is_root: bool) -> usize {
        let cfg = &self.config;
        let n = &self.tree.nodes[node as usize];
        let parent_n = (n.visits + n.in_flight) as f32;
        let c = if cfg.c_puct_factor != 0.0 {
            cfg.c_puct + cfg.c_puct_factor * ((parent_n + cfg.c_puct_base + 1.0) / cfg.c_puct_base).ln()
        } else {
            cfg.c_puct
        };
        let c_sqrt_n = c * parent_n.max(1.0).sqrt();
        // Contempt: this node's player values a draw at `shift` (see `SearchConfig::contempt`).
        let shift = self.contempt_shift(n.to_move);
        let parent_q = if n.visits > 0 { n.value_sum / n.visits as f32 + shift * n.draw_sum / n.visits as f32 } else { 0.0 };
        let vl = cfg.virtual_loss;
        let first = n.first_edge as usize;
        let edges = &self.tree.edges[first..first + n.num_edges as usize];

        let mut best_visited = f32::NEG_INFINITY;
        let mut best_visited_i = usize::MAX;
        let mut best_unvisited_p = f32::NEG_INFINITY;
        let mut best_unvisited_i = usize::MAX;
        let mut visited_mass = 0.0f32;
        for (i, e) in edges.iter().enumerate() {
            if if is_root { self.root_excluded(first + i) } else { e.lost() } {
                continue;
            }
            let ne = e.visits + e.in_flight;
            if ne == 0 {
                if e.prior > best_unvisited_p {
                    best_unvisited_p = e.prior;
                    best_unvisited_i = i;
                }
            } else {
                visited_mass += e.prior;
                let nf = ne as f32;
                let q = self.with_contempt(e, e.proof.map_or((e.value_sum - vl * e.in_flight as f32) / nf, Proof::value), shift);
                let score = q + c_sqrt_n * e.prior / (1.0 + nf);
                if score > best_visited {
                    best_visited = score;
                    best_visited_i = i;
                }
            }
        }
        // A proven root looks for a shorter win: untried moves first.
        if is_root && best_unvisited_i != usize::MAX && self.tree.nodes[0].proof.is_some() {
            return first + best_unvisited_i;
        }
        if best_unvisited_i != usize::MAX {
            let red = if is_root { cfg.root_fpu_reduction } else { cfg.fpu_reduction };
            let fpu_q = parent_q - red * visited_mass.max(0.0).sqrt();
            let score = fpu_q + c_sqrt_n * best_unvisited_p;
            if score > best_visited || best_visited_i == usize::MAX {
                return first + best_unvisited_i;
            }
        }
        // Every move proven lost only happens at a proven node, which is never selected from.
        first + if best_visited_i == usize::MAX { 0 } else { best_visited_i }
    }

    /// Fills `scratch_sigma` with sigma(completedQ) of the root's actions.
    fn root_sigma(&mut self) {
        let RootMode::Gumbel(cfg) = self.config.root_mode else { unreachable!() };
        let range = self.tree.edge_range(0);
        let root = self.tree.nodes[0];
        let shift = self.contempt_shift(root.to_move);
        self.scratch_visits.clear();
        self.scratch_q.clear();
        for e in &self.tree.edges[range] {
            self.scratch_visits.push(e.visits);
            self.scratch_q.push(match e.proof {
                Some(p) => self.with_contempt(e, p.value(), shift),
                None if e.visits > 0 => self.with_contempt(e, e.value_sum / e.visits as f32, shift),
                None => 0.0,
            });
        }
        gumbel::sigma_completed_q(
            &cfg,
            root.raw_value + shift * root.raw_draw,
            &self.root_raw_priors,
            &self.scratch_visits,
            &self.scratch_q,
            &mut self.scratch_sigma,
        );
    }

    /// Best action (by g + logits + sigma) among those not excluded (proven lost; proven at all
    /// at a proven root) whose per-search visit count equals `target` (`None`: any count).
    fn gumbel_argmax(&self, target: Option<u32>) -> usize {
        let mut best = f32::NEG_INFINITY;
        let mut best_i = usize::MAX;
        let first = self.tree.nodes[0].first_edge as usize;
        for i in 0..self.g_visits.len() {
            if target.is_some_and(|t| self.g_visits[i] != t) || self.root_excluded(first + i) {
                continue;
            }
            let s = (self.g_noise[i] + self.g_logits[i] + self.scratch_sigma[i]).max(LOW_LOGIT);
            if s > best || best_i == usize::MAX {
                best = s;
                best_i = i;
            }
        }
        best_i
    }

    /// Sequential-halving root selection for simulation `sims_started` (mctx
    /// `gumbel_muzero_root_action_selection`).
    fn select_gumbel(&mut self) -> usize {
        self.root_sigma();
        let target = self.g_schedule[self.sims_started as usize];
        let i = self.gumbel_argmax(Some(target));
        if i != usize::MAX {
            return i;
        }
        // Only when a considered action was dropped (proven): its simulation goes to the most
        // visited action left (or, with none visited, the best unconsidered one).
        self.gumbel_argmax(Some(self.max_visits_left()))
    }

    /// The largest per-search visit count of a root action not excluded.
    fn max_visits_left(&self) -> u32 {
        let first = self.tree.nodes[0].first_edge as usize;
        (0..self.g_visits.len()).filter(|&i| !self.root_excluded(first + i)).map(|i| self.g_visits[i]).max().unwrap_or(0)
    }

    fn gumbel_target_and_choice(&mut self) -> (Vec<f32>, usize) {
        self.root_sigma();
        let mut target = Vec::new();
        gumbel::improved_policy(&self.g_logits, &self.scratch_sigma, &mut target);
        let first = self.tree.nodes[0].first_edge as usize;
        drop_lost(&mut target, |i| self.tree.edges[first + i].lost());
        let choice = self.gumbel_argmax(Some(self.max_visits_left()));
        (target, if choice == usize::MAX { 0 } else { choice })
    }

    fn puct_target_and_choice(&mut self, moves: &[MoveStats<G::Move>]) -> (Vec<f32>, usize) {
        let lost = |m: &MoveStats<G::Move>| m.proof.is_some_and(Proof::is_loss);
        let total: u64 = moves.iter().filter(|m| !lost(m)).map(|m| m.visits as u64).sum();
        // Greedy order: not proven lost, then visits, then Q, then prior.
        let key = |m: &MoveStats<G::Move>| (!lost(m), m.visits, m.q.unwrap_or(-2.0), m.prior);
        let greedy = || {
            (0..moves.len()).fold(0, |b, i| {
                let (a, c) = (key(&moves[i]), key(&moves[b]));
                if (a.0, a.1) > (c.0, c.1) || ((a.0, a.1) == (c.0, c.1) && (a.2 > c.2 || (a.2 == c.2 && a.3 > c.3))) { i } else { b }
            })
        };
        if total == 0 {
            let mut target: Vec<f32> = moves.iter().map(|m| m.prior).collect();
            drop_lost(&mut target, |i| lost(&moves[i]));
            return (target, greedy());
        }
        let target: Vec<f32> = moves.iter().map(|m| if lost(m) { 0.0 } else { (m.visits as f64 / total as f64) as f32 }).collect();
        let t = self.config.temperature.at(self.ply);
        let choice = if t < 0.01 {
            greedy()
        } else {
            let max = moves.iter().filter(|m| !lost(m)).map(|m| m.visits).max().unwrap() as f64;
            let w: Vec<f64> = moves
                .iter()
                .map(|m| if m.visits == 0 || lost(m) { 0.0 } else { ((m.visits as f64 / max).ln() / t as f64).exp() })
                .collect();
            let sum: f64 = w.iter().sum();
            let mut r = self.rng.gen::<f64>() * sum;
            let mut pick = 0;
            for (i, &x) in w.iter().enumerate() {
                if x > 0.0 {
                    pick = i;
                    if r < x {
                        break;
                    }
                    r -= x;
                }
            }
            pick
        };
        (target, choice)
    }
}

/// Zeroes the entries of `target` whose move is proven lost and renormalizes, unless every
/// move is lost (then `target` is left as it is).
fn drop_lost(target: &mut [f32], lost: impl Fn(usize) -> bool) {
    let kept: f32 = (0..target.len()).filter(|&i| !lost(i)).map(|i| target[i]).sum();
    if kept > 0.0 && (0..target.len()).any(&lost) {
        for (i, t) in target.iter_mut().enumerate() {
            *t = if lost(i) { 0.0 } else { *t / kept };
        }
    }
}

/// Policy target and move of a proven root: the proven-best moves (the shortest wins, any draw,
/// or the longest losses) share the target equally; the move is the most visited of them (then
/// the highest prior). Temperature does not apply.
fn proven_target_and_choice<M>(moves: &[MoveStats<M>]) -> (Vec<f32>, usize) {
    let pref = |m: &MoveStats<M>| m.proof.map_or(i32::MIN, Proof::preference);
    let best = moves.iter().map(pref).max().unwrap_or(i32::MIN);
    let n = moves.iter().filter(|m| pref(m) == best).count().max(1);
    let target = moves.iter().map(|m| if pref(m) == best { 1.0 / n as f32 } else { 0.0 }).collect();
    let choice = (0..moves.len())
        .filter(|&i| pref(&moves[i]) == best)
        .max_by(|&a, &b| (moves[a].visits, moves[a].prior).partial_cmp(&(moves[b].visits, moves[b].prior)).unwrap_or(std::cmp::Ordering::Equal).then(b.cmp(&a)))
        .unwrap_or(0);
    (target, choice)
}

/// Gathers up to `per_tree` leaves from each unfinished search (at most `max_total` in all) into
/// `out`, for one batched evaluation; `leaf.handle.tree()` is the index into `searches` of the
/// search to `apply` the evaluation to. Returns the number of leaves added.
pub fn gather_batch<G: Game>(
    searches: &mut [Search<G>],
    per_tree: usize,
    max_total: usize,
    out: &mut Vec<Leaf<G>>,
) -> usize {
    let mut n = 0;
    for (i, s) in searches.iter_mut().enumerate() {
        if n >= max_total {
            break;
        }
        if !s.is_done() {
            n += s.gather_tagged(i as u32, per_tree.min(max_total - n), out);
        }
    }
    n
}
