//! Bradley–Terry ratings over a set of games, with draws counted as half a win.
//!
//! Model: `P(i scores against j) = 1 / (1 + 10^((r_j - r_i) / 400))`; each game contributes
//! `s log p + (1 - s) log(1 - p)` with `s` ∈ {0, ½, 1}. The ratings maximize the total
//! (Newton–Raphson on the Elo scale), with one player fixed at 0 (the anchor, `random` by
//! default). Intervals are ±1.96 standard errors from the inverse of the observed information
//! (negative Hessian) with the anchor removed, so they are intervals *relative to the anchor*.
//!
//! A player with a 100% or 0% score has no finite maximum-likelihood rating; `prior_draws`
//! adds that many virtual draws to every pair of players who met (BayesElo's prior idea), which
//! keeps every rating finite. `prior_draws = 0` gives the plain maximum-likelihood estimate.

use std::collections::BTreeMap;

use crate::elo::Z95;
use vzero_rules::pgn::PgnGame;

/// One game result between two named players.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    /// White's score: 1, ½ or 0.
    pub white_score: f64,
}

impl GameRecord {
    /// From a PGN game (`None` for an unfinished game, `*`).
    pub fn from_pgn(g: &PgnGame) -> Option<GameRecord> {
        Some(GameRecord {
            white: g.tag("White").unwrap_or("?").to_string(),
            black: g.tag("Black").unwrap_or("?").to_string(),
            white_score: g.white_score()?,
        })
    }
}

/// One row of a ratings table.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    pub player: String,
    pub games: u32,
    /// Points scored / games.
    pub score: f64,
    pub elo: f64,
    /// Half-width of the 95% interval (0 for the anchor).
    pub margin: f64,
}

const C: f64 = std::f64::consts::LN_10 / 400.0;

fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in 0..n {
            if r != col {
                let f = a[r][col] / a[col][col];
                if f != 0.0 {
                    for k in col..n {
                        a[r][k] -= f * a[col][k];
                    }
                    b[r] -= f * b[col];
                }
            }
        }
    }
    Some((0..n).map(|i| b[i] / a[i][i]).collect())
}

fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut cols = Vec::with_capacity(n);
    for j in 0..n {
        let e: Vec<f64> = (0..n).map(|i| (i == j) as u8 as f64).collect();
        cols.push(solve(a.to_vec(), e)?);
    }
    Some((0..n).map(|i| (0..n).map(|j| cols[j][i]).collect()).collect())
}

/// Ratings of every player in `games`, anchored to `anchor` (which must have played), sorted
/// by Elo, best first. Errors if the anchor is missing or the players are not all connected to it.
pub fn compute_ratings(games: &[GameRecord], anchor: &str, prior_draws: f64) -> Result<Vec<Rating>, String> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for g in games {
        for p in [&g.white, &g.black] {
            let n = index.len();
            index.entry(p.as_str()).or_insert(n);
        }
    }
    let names: Vec<&str> = {
        let mut v = vec![""; index.len()];
        for (k, &i) in &index {
            v[i] = k;
        }
        v
    };
    let n = names.len();
    let Some(&a) = index.get(anchor) else {
        return Err(format!("anchor player '{anchor}' has no games (players: {})", names.join(", ")));
    };
    // Pairwise aggregates: w[i][j] = points of i against j, m[i][j] = games between them.
    let mut pts = vec![vec![0.0f64; n]; n];
    let mut cnt = vec![vec![0.0f64; n]; n];
    let mut games_of = vec![0u32; n];
    let mut points_of = vec![0.0f64; n];
    for g in games {
        let (w, b) = (index[g.white.as_str()], index[g.black.as_str()]);
        if w == b {
            continue;
        }
        pts[w][b] += g.white_score;
        pts[b][w] += 1.0 - g.white_score;
        cnt[w][b] += 1.0;
        cnt[b][w] += 1.0;
        games_of[w] += 1;
        games_of[b] += 1;
        points_of[w] += g.white_score;
        points_of[b] += 1.0 - g.white_score;
    }
    if prior_draws > 0.0 {
        for i in 0..n {
            for j in 0..n {
                if cnt[i][j] > 0.0 {
                    pts[i][j] += 0.5 * prior_draws;
                    cnt[i][j] += prior_draws;
                }
            }
        }
    }
    // Connectivity to the anchor.
    let mut seen = vec![false; n];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(i) = stack.pop() {
        for j in 0..n {
            if cnt[i][j] > 0.0 && !seen[j] {
                seen[j] = true;
                stack.push(j);
            }
        }
    }
    if let Some(i) = (0..n).find(|&i| !seen[i]) {
        return Err(format!("player '{}' is not connected to the anchor '{anchor}' by games", names[i]));
    }
    let free: Vec<usize> = (0..n).filter(|&i| i != a).collect();
    let mut r = vec![0.0f64; n];
    let hessian = |r: &[f64]| -> (Vec<f64>, Vec<Vec<f64>>) {
        // gradient and negative Hessian over the free players
        let pos: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
        let k = free.len();
        let mut g = vec![0.0; k];
        let mut h = vec![vec![0.0; k]; k];
        for i in 0..n {
            for j in 0..n {
                if i == j || cnt[i][j] == 0.0 {
                    continue;
                }
                let p = 1.0 / (1.0 + 10f64.powf((r[j] - r[i]) / 400.0));
                let info = cnt[i][j] * C * C * p * (1.0 - p);
                if let Some(pi) = pos[i] {
                    g[pi] += C * (pts[i][j] - cnt[i][j] * p);
                    h[pi][pi] += info;
                    if let Some(pj) = pos[j] {
                        h[pi][pj] -= info;
                    }
                }
            }
        }
        (g, h)
    };
    let mut converged = false;
    for _ in 0..200 {
        let (g, h) = hessian(&r);
        let Some(step) = solve(h, g) else { break };
        let big = step.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let scale = if big > 400.0 { 400.0 / big } else { 1.0 };
        for (k, &i) in free.iter().enumerate() {
            r[i] += step[k] * scale;
        }
        if big < 1e-9 {
            converged = true;
            break;
        }
        if r.iter().any(|x| x.abs() > 1e5) {
            break;
        }
    }
    if !converged {
        return Err("the ratings do not converge (a player with a 100% or 0% score?); add --prior-draws".into());
    }
    let (_, h) = hessian(&r);
    let cov = invert(&h).ok_or("singular information matrix")?;
    let mut out: Vec<Rating> = (0..n)
        .map(|i| {
            let margin = free.iter().position(|&f| f == i).map_or(0.0, |k| Z95 * cov[k][k].max(0.0).sqrt());
            Rating {
                player: names[i].to_string(),
                games: games_of[i],
                score: if games_of[i] > 0 { points_of[i] / games_of[i] as f64 } else { 0.0 },
                elo: r[i],
                margin,
            }
        })
        .collect();
    out.sort_by(|x, y| y.elo.total_cmp(&x.elo).then(x.player.cmp(&y.player)));
    Ok(out)
}

/// The ratings table as text: rank, player, games, score %, Elo, ±95%.
pub fn format_table(rows: &[Rating]) -> String {
    let w = rows.iter().map(|r| r.player.len()).max().unwrap_or(6).max(6);
    let mut s = format!("{:>4}  {:<w$}  {:>6}  {:>7}  {:>8}  {:>7}\n", "rank", "player", "games", "score", "elo", "±95%");
    for (i, r) in rows.iter().enumerate() {
        s += &format!(
            "{:>4}  {:<w$}  {:>6}  {:>6.1}%  {:>8.1}  {:>7.1}\n",
            i + 1,
            r.player,
            r.games,
            100.0 * r.score,
            r.elo,
            r.margin
        );
    }
    s
}
