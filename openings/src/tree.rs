//! The opening tree: for every line up to `plies` plies, games, W/D/L from White's side and
//! from the mover's side, mean game length and the network's mean prior and search value of
//! the move. Only nodes within `plies` plies are kept; games are added one at a time.

use std::fmt::Write as _;

use serde::Serialize;
use vzero_rules::Color;

use crate::san::san;
use crate::source::ReplayedGame;

/// Per-move statistics (the move leading from the parent to this node).
#[derive(Clone, Debug, Default)]
struct Node {
    uci: String,
    san: String,
    mover: Option<Color>,
    /// Fullmove number of the position the move is played in (a Dictator's second step keeps
    /// its turn's number).
    turn: u32,
    games: u64,
    white_wins: u64,
    draws: u64,
    black_wins: u64,
    total_plies: u64,
    prior_sum: f64,
    prior_n: u64,
    value_sum: f64,
    value_n: u64,
    children: Vec<usize>,
}

/// Opening tree over any number of start positions (one root each).
#[derive(Clone, Debug)]
pub struct OpeningTree {
    plies: usize,
    nodes: Vec<Node>,
    /// (start FEN, root node).
    roots: Vec<(String, usize)>,
}

/// One exported line of the tree (a move and its statistics).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TreeRow {
    /// Start position (FEN) of the line.
    pub start_fen: String,
    /// Ply of the move (1 = first move).
    pub ply: usize,
    /// UCI moves of the line, this move last.
    pub line_uci: Vec<String>,
    /// SAN-like moves of the line, this move last.
    pub line_san: Vec<String>,
    pub uci: String,
    pub san: String,
    /// "white" or "black": the side that played the move.
    pub mover: String,
    /// Fullmove number of the turn the move belongs to (a Dictator's second step keeps it).
    pub turn: u32,
    /// The line as PGN movetext with move numbers (`1. Pe4 Pe5 2. Nf3`; a line from a position
    /// with Black to move starts `n...`; a double move is numbered once).
    pub line: String,
    pub games: u64,
    /// Share of the games played from the parent position that chose this move.
    pub frequency: f64,
    pub white_wins: u64,
    pub draws: u64,
    pub black_wins: u64,
    /// Wins / losses of the side that played the move.
    pub mover_wins: u64,
    pub mover_losses: u64,
    /// Mover's score: (wins + draws/2) / games.
    pub score: f64,
    /// Elo performance of the mover: -400 log10(1/score - 1); `None` at 0% or 100%.
    pub elo: Option<f64>,
    /// Mean length (plies) of the games through this move.
    pub avg_length: f64,
    /// Mean network prior of the move where recorded.
    pub prior: Option<f64>,
    /// Mean search value for the mover where recorded, in [-1, 1].
    pub value: Option<f64>,
}

/// Elo difference of a score in (0, 1); `None` at 0 or 1.
pub fn elo_performance(score: f64) -> Option<f64> {
    if score <= 0.0 || score >= 1.0 {
        None
    } else {
        Some(-400.0 * (1.0 / score - 1.0).log10() + 0.0) // + 0.0: no "-0"
    }
}

impl OpeningTree {
    /// An empty tree keeping lines up to `plies` plies.
    pub fn new(plies: usize) -> OpeningTree {
        OpeningTree { plies, nodes: Vec::new(), roots: Vec::new() }
    }

    /// Number of nodes (positions reached within `plies` plies, roots included).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Games added.
    pub fn games(&self) -> u64 {
        self.roots.iter().map(|&(_, r)| self.nodes[r].games).sum()
    }

    fn child(&mut self, parent: usize, uci: &str) -> Option<usize> {
        self.nodes[parent].children.iter().copied().find(|&c| self.nodes[c].uci == uci)
    }

    fn count(&mut self, n: usize, g: &ReplayedGame, mover: Option<Color>, ply: Option<usize>) {
        let node = &mut self.nodes[n];
        node.games += 1;
        match g.white_score {
            s if s > 0.75 => node.white_wins += 1,
            s if s < 0.25 => node.black_wins += 1,
            _ => node.draws += 1,
        }
        node.total_plies += g.len() as u64;
        node.mover = node.mover.or(mover);
        if let Some(i) = ply {
            if let Some(&p) = g.raw.priors.get(i) {
                if p.is_finite() {
                    node.prior_sum += p as f64;
                    node.prior_n += 1;
                }
            }
            if let Some(&v) = g.raw.values.get(i) {
                if v.is_finite() {
                    node.value_sum += v as f64;
                    node.value_n += 1;
                }
            }
        }
    }

    /// Adds one game: its first `plies` moves.
    pub fn add(&mut self, g: &ReplayedGame) {
        let fen = g.start.fen();
        let root = match self.roots.iter().find(|(f, _)| *f == fen) {
            Some(&(_, r)) => r,
            None => {
                self.nodes.push(Node::default());
                self.roots.push((fen, self.nodes.len() - 1));
                self.nodes.len() - 1
            }
        };
        self.count(root, g, None, None);
        let mut pos = g.start;
        let mut cur = root;
        for (i, &m) in g.moves.iter().take(self.plies).enumerate() {
            let uci = pos.uci(m);
            let next = match self.child(cur, &uci) {
                Some(c) => c,
                None => {
                    let node = Node { san: san(&pos, m), uci, turn: pos.fullmove_number().max(1), ..Default::default() };
                    self.nodes.push(node);
                    let c = self.nodes.len() - 1;
                    self.nodes[cur].children.push(c);
                    c
                }
            };
            let mover = pos.side_to_move();
            pos.play(m);
            self.count(next, g, Some(mover), Some(i));
            cur = next;
        }
    }

    /// Summary of each root: (start FEN, games, white wins, draws, black wins).
    pub fn roots(&self) -> Vec<(String, u64, u64, u64, u64)> {
        self.roots
            .iter()
            .map(|(f, r)| {
                let n = &self.nodes[*r];
                (f.clone(), n.games, n.white_wins, n.draws, n.black_wins)
            })
            .collect()
    }

    /// The lines reached by at least `min_games` games, depth-first, siblings by decreasing
    /// frequency (then UCI text); roots by decreasing games.
    pub fn rows(&self, min_games: u64) -> Vec<TreeRow> {
        let mut out = Vec::new();
        let mut roots = self.roots.clone();
        roots.sort_by(|a, b| self.nodes[b.1].games.cmp(&self.nodes[a.1].games).then(a.0.cmp(&b.0)));
        for (fen, r) in roots {
            let mut line_uci = Vec::new();
            let mut line_san = Vec::new();
            let mut turns = Vec::new();
            self.walk(&fen, r, min_games, (&mut line_uci, &mut line_san, &mut turns), &mut out);
        }
        out
    }

    fn sorted_children(&self, n: usize) -> Vec<usize> {
        let mut ch = self.nodes[n].children.clone();
        ch.sort_by(|&a, &b| self.nodes[b].games.cmp(&self.nodes[a].games).then_with(|| self.nodes[a].uci.cmp(&self.nodes[b].uci)));
        ch
    }

    /// Depth-first rows below node `n`; `line` holds the UCI moves, SAN moves and turns
    /// (fullmove number, mover) of the path to `n`.
    #[allow(clippy::type_complexity)]
    fn walk(&self, fen: &str, n: usize, min: u64, line: (&mut Vec<String>, &mut Vec<String>, &mut Vec<(u32, Color)>), out: &mut Vec<TreeRow>) {
        let (lu, ls, lt) = line;
        let children = self.sorted_children(n);
        let total: u64 = children.iter().map(|&c| self.nodes[c].games).sum();
        for c in children {
            let node = &self.nodes[c];
            if node.games < min.max(1) {
                continue;
            }
            let white = node.mover != Some(Color::Black);
            lu.push(node.uci.clone());
            ls.push(node.san.clone());
            lt.push((node.turn, if white { Color::White } else { Color::Black }));
            let (mw, ml) = if white { (node.white_wins, node.black_wins) } else { (node.black_wins, node.white_wins) };
            let g = node.games as f64;
            let score = (mw as f64 + 0.5 * node.draws as f64) / g;
            out.push(TreeRow {
                start_fen: fen.to_string(),
                ply: lu.len(),
                line_uci: lu.clone(),
                line_san: ls.clone(),
                uci: node.uci.clone(),
                san: node.san.clone(),
                mover: if white { "white" } else { "black" }.into(),
                turn: node.turn,
                line: numbered_line(ls, lt),
                games: node.games,
                frequency: node.games as f64 / total as f64,
                white_wins: node.white_wins,
                draws: node.draws,
                black_wins: node.black_wins,
                mover_wins: mw,
                mover_losses: ml,
                score,
                elo: elo_performance(score),
                avg_length: node.total_plies as f64 / g,
                prior: (node.prior_n > 0).then(|| node.prior_sum / node.prior_n as f64),
                value: (node.value_n > 0).then(|| node.value_sum / node.value_n as f64),
            });
            self.walk(fen, c, min, (&mut *lu, &mut *ls, &mut *lt), out);
            lu.pop();
            ls.pop();
            lt.pop();
        }
    }
}

/// Numbered SAN line (`1. Pe4 Pe5 2. Nf3`) from each ply's turn (fullmove number, mover), by
/// the one PGN numbering rule ([`vzero_rules::pgn::move_number`]): a line that starts with Black
/// reads `n... Pe5`, and a Dictator's second step carries no number of its own.
pub fn numbered_line(sans: &[String], turns: &[(u32, Color)]) -> String {
    let mut s = String::new();
    let mut last = None;
    for (m, &(num, side)) in sans.iter().zip(turns) {
        if !s.is_empty() {
            s.push(' ');
        }
        if let Some(n) = vzero_rules::pgn::move_number(last, num, side) {
            s.push_str(&n);
            s.push(' ');
        }
        s.push_str(m);
        last = Some(side);
    }
    s
}

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or(String::new(), |v| format!("{v:.prec$}"))
}

fn elo_text(x: Option<f64>, score: f64) -> String {
    match x {
        Some(e) => format!("{e:+.0}"),
        None if score >= 1.0 => "+inf".into(),
        None => "-inf".into(),
    }
}

/// CSV with a header line (lines as space-separated moves).
pub fn to_csv(rows: &[TreeRow]) -> String {
    let mut s = String::from("ply,line_uci,line_san,uci,san,mover,games,frequency,white_wins,draws,black_wins,mover_wins,mover_losses,score,elo,avg_length,prior,value\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{:.4},{},{},{},{},{},{:.4},{},{:.1},{},{}",
            r.ply,
            r.line_uci.join(" "),
            r.line_san.join(" "),
            r.uci,
            r.san,
            r.mover,
            r.games,
            r.frequency,
            r.white_wins,
            r.draws,
            r.black_wins,
            r.mover_wins,
            r.mover_losses,
            r.score,
            r.elo.map_or(elo_text(None, r.score), |e| format!("{e:.1}")),
            r.avg_length,
            opt(r.prior, 4),
            opt(r.value, 4)
        );
    }
    s
}

/// Markdown: a header with the totals, then one table row per line, indented by depth.
pub fn to_markdown(rows: &[TreeRow], roots: &[(String, u64, u64, u64, u64)], skipped: usize, variant: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Opening tree ({variant})\n");
    for (fen, g, w, d, b) in roots {
        let _ = writeln!(s, "* `{fen}`: {g} games, White {w} / draws {d} / Black {b}");
    }
    let _ = writeln!(s, "* skipped (malformed or unfinished): {skipped}\n");
    s.push_str("| line | move | uci | games | freq | W/D/L (White) | W/D/L (mover) | score | Elo | avg len | prior | value |\n");
    s.push_str("|---|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|\n");
    let multi = roots.len() > 1;
    for r in rows {
        let indent = "\u{a0}\u{a0}".repeat(r.ply - 1);
        let line = if multi { format!("[{}] {}", &r.start_fen, r.line) } else { r.line.clone() };
        let _ = writeln!(
            s,
            "| {indent}{line} | {} | {} | {} | {:.1}% | {}/{}/{} | {}/{}/{} | {:.1}% | {} | {:.1} | {} | {} |",
            r.san,
            r.uci,
            r.games,
            100.0 * r.frequency,
            r.white_wins,
            r.draws,
            r.black_wins,
            r.mover_wins,
            r.draws,
            r.mover_losses,
            100.0 * r.score,
            elo_text(r.elo, r.score),
            r.avg_length,
            opt(r.prior, 3),
            opt(r.value, 3)
        );
    }
    s
}

/// JSON: `{variant, games, skipped, roots: [...], lines: [TreeRow...]}`.
pub fn to_json(rows: &[TreeRow], roots: &[(String, u64, u64, u64, u64)], skipped: usize, variant: &str) -> String {
    let roots: Vec<_> = roots
        .iter()
        .map(|(f, g, w, d, b)| serde_json::json!({"start_fen": f, "games": g, "white_wins": w, "draws": d, "black_wins": b}))
        .collect();
    let v = serde_json::json!({
        "variant": variant,
        "games": roots.iter().map(|r| r["games"].as_u64().unwrap_or(0)).sum::<u64>(),
        "skipped": skipped,
        "roots": roots,
        "lines": rows,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}
