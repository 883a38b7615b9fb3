//! Gauntlets: a training run's checkpoint against fixed baselines and the run's previous
//! gauntlet checkpoints, with ratings over every gauntlet game of the run.
//!
//! Files, under the run directory:
//!
//! * `arena/games.pgn` — every gauntlet game. A gauntlet's games are added all at once: the old
//!   file and the new games are written to a temporary file in the same directory, fsynced and
//!   renamed over the old one (`write_atomic`). A run killed during a gauntlet loses that
//!   gauntlet's games but never leaves a half-written game behind.
//! * `arena/ratings.csv` — `player,games,score,elo,margin95`: Bradley–Terry over all the games of
//!   `games.pgn` (one virtual draw per pair of players who met), anchored at `random` = 0 (or at
//!   the first opponent when `random` is not one of them).
//! * `arena/elo.csv` — `checkpoint,generation,step,minutes,elo,lo,hi`: one row per gauntleted
//!   checkpoint, its rating and 95% interval recomputed from all games after every gauntlet
//!   (the file is also the list of earlier gauntlet checkpoints).
//! * `plots/elo.svg` — Elo with its 95% interval against training minutes (hand-written SVG).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use vzero_data::{parse_checkpoint_name, RunDir};
use vzero_base::write_atomic;
use vzero_rules::{Position, Variant};

use crate::matches::{run_match, write_pgn, PairedGames};
use vzero_rules::pgn::{read_pgn_file, PgnGame};
use crate::spec::PlayerSpec;
use crate::ratings::{compute_ratings, GameRecord, Rating};

/// `[gauntlet]` settings of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GauntletConfig {
    /// Run a gauntlet every this many generations (0 = never).
    #[serde(default)]
    pub every: u64,
    /// Games against each opponent (colour-swapped pairs).
    #[serde(default = "default_games")]
    pub games: usize,
    /// Simulations per move of the checkpoint (and of earlier checkpoints it meets).
    #[serde(default = "default_sims")]
    pub sims: u32,
    /// Baseline player specs (`random`, `greedy`, `alphabeta:2`, ...).
    #[serde(default = "default_opponents")]
    pub opponents: Vec<String>,
    /// Also play the last this many earlier gauntlet checkpoints.
    #[serde(default)]
    pub previous: usize,
    /// Games longer than this (opening included) are adjudicated draws.
    #[serde(default = "default_max_plies")]
    pub max_plies: u32,
    /// Random plies of each pair's opening.
    #[serde(default = "default_opening_plies")]
    pub opening_plies: u32,
    /// Games played at once.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
}

fn default_games() -> usize {
    6
}
fn default_sims() -> u32 {
    32
}
fn default_opponents() -> Vec<String> {
    vec!["random".into(), "greedy".into()]
}
fn default_max_plies() -> u32 {
    300
}
fn default_opening_plies() -> u32 {
    4
}
fn default_concurrency() -> usize {
    1
}

impl Default for GauntletConfig {
    /// Off (`every = 0`), otherwise the small defaults.
    fn default() -> Self {
        GauntletConfig {
            every: 0,
            games: default_games(),
            sims: default_sims(),
            opponents: default_opponents(),
            previous: 0,
            max_plies: default_max_plies(),
            opening_plies: default_opening_plies(),
            concurrency: default_concurrency(),
        }
    }
}

impl GauntletConfig {
    /// Checks the settings; errors name the field.
    pub fn validate(&self) -> Result<()> {
        if self.every == 0 {
            return Ok(());
        }
        self.paired().validate("gauntlet", 1)?;
        if self.opponents.is_empty() {
            bail!("gauntlet.opponents must name at least one player (e.g. [\"random\", \"greedy\"])");
        }
        for o in &self.opponents {
            PlayerSpec::parse(o).with_context(|| format!("gauntlet.opponents: '{o}'"))?;
        }
        Ok(())
    }

    /// The match settings of each gauntlet match.
    pub fn paired(&self) -> PairedGames {
        PairedGames { games: self.games as u32, sims: self.sims, max_plies: self.max_plies, opening_plies: self.opening_plies, concurrency: self.concurrency }
    }

    /// The rating anchor: `random` if it is an opponent, else the first opponent.
    pub fn anchor(&self) -> String {
        let specs: Vec<String> = self.opponents.iter().filter_map(|o| PlayerSpec::parse(o).ok()).map(|p| p.name()).collect();
        if specs.iter().any(|s| s == "random") {
            "random".into()
        } else {
            specs.into_iter().next().unwrap_or_else(|| "random".into())
        }
    }
}

/// One row of `elo.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct EloRow {
    pub checkpoint: String,
    pub generation: u64,
    pub step: u64,
    pub minutes: f64,
    pub elo: f64,
    pub lo: f64,
    pub hi: f64,
}

/// One opponent's result in a gauntlet.
#[derive(Clone, Debug)]
pub struct OpponentResult {
    pub opponent: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// An earlier gauntlet checkpoint of the run (`previous`), not one of the baselines.
    pub earlier: bool,
}

/// What a gauntlet did.
#[derive(Clone, Debug)]
pub struct GauntletSummary {
    /// Player name of the checkpoint (`net:STEM:SIMS`).
    pub player: String,
    /// This checkpoint's row (rating after this gauntlet).
    pub row: EloRow,
    pub results: Vec<OpponentResult>,
    pub games: usize,
    pub anchor: String,
    /// The whole ratings table after this gauntlet.
    pub ratings: Vec<Rating>,
}

impl GauntletSummary {
    /// The checkpoint's Elo relative to each baseline opponent, `(opponent, its Elo minus the
    /// opponent's)`, from the ratings after this gauntlet (so against the anchor it is the Elo
    /// of `elo.csv`). Earlier checkpoints met (`previous`) are left out: each is a different
    /// player every gauntlet.
    pub fn elo_vs_opponents(&self) -> Vec<(String, f64)> {
        let elo = |p: &str| self.ratings.iter().find(|r| r.player == p).map(|r| r.elo);
        self.results.iter().filter(|o| !o.earlier).filter_map(|o| Some((o.opponent.clone(), self.row.elo - elo(&o.opponent)?))).collect()
    }

    /// One line: checkpoint, Elo and interval, W/D/L per opponent.
    pub fn line(&self) -> String {
        let r = &self.row;
        let res: Vec<String> = self.results.iter().map(|o| format!("{} +{}={}-{}", o.opponent, o.wins, o.draws, o.losses)).collect();
        format!(
            "gauntlet {}: elo {:.0} [{:.0}, {:.0}] ({} = 0) | {}",
            r.checkpoint,
            r.elo,
            r.lo,
            r.hi,
            self.anchor,
            res.join(", ")
        )
    }
}

/// `<run>/arena`.
pub fn arena_dir(run: &RunDir) -> PathBuf {
    run.root().join("arena")
}

fn stem_of(path: &Path) -> String {
    let f = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().to_string());
    f.strip_suffix(".json").or_else(|| f.strip_suffix(".safetensors")).unwrap_or(&f).to_string()
}

/// Reads `elo.csv` (missing file = no rows).
pub fn read_elo_csv(path: &Path) -> Result<Vec<EloRow>> {
    let Some(text) = vzero_base::read_if_exists(path)? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let bad = || anyhow::anyhow!("{}:{}: expected checkpoint,generation,step,minutes,elo,lo,hi", path.display(), i + 1);
        if f.len() != 7 {
            return Err(bad());
        }
        let n = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
        out.push(EloRow {
            checkpoint: f[0].to_string(),
            generation: f[1].trim().parse().map_err(|_| bad())?,
            step: f[2].trim().parse().map_err(|_| bad())?,
            minutes: n(f[3])?,
            elo: n(f[4])?,
            lo: n(f[5])?,
            hi: n(f[6])?,
        });
    }
    Ok(out)
}

/// `games` as PGN text, each from its `FEN` tag's position (else the start position).
pub(crate) fn pgn_text<'a>(games: impl IntoIterator<Item = &'a PgnGame>, variant: Variant) -> Result<String> {
    let mut buf = Vec::new();
    for g in games {
        let start = match g.tag("FEN") {
            Some(f) => Position::from_fen(variant, f).unwrap_or_else(|_| Position::startpos(variant)),
            None => Position::startpos(variant),
        };
        write_pgn(&mut buf, g, &start)?;
    }
    Ok(String::from_utf8(buf)?)
}

/// Plays `checkpoint` against the configured opponents and the last `previous` gauntlet
/// checkpoints, adds the games to `<run>/arena/games.pgn`, and rewrites the ratings, `elo.csv`
/// and `plots/elo.svg`. `elapsed_minutes` is the training time recorded for the checkpoint.
pub fn run_gauntlet(run: &RunDir, variant: Variant, checkpoint: &Path, cfg: &GauntletConfig, elapsed_minutes: f64) -> Result<GauntletSummary> {
    let mut cfg = cfg.clone();
    if cfg.every == 0 {
        cfg.every = 1; // validate the rest even when run by hand on a run whose gauntlet is off
    }
    cfg.validate()?;
    let dir = arena_dir(run);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let pgn_path = dir.join("games.pgn");
    let elo_path = dir.join("elo.csv");
    let stem = stem_of(checkpoint);
    let (generation, step) = parse_checkpoint_name(&stem).unwrap_or((0, 0));
    let me = PlayerSpec::Net { path: checkpoint.to_path_buf(), sims: cfg.sims, gumbel: false, options: Default::default() };
    let my_name = me.name();

    let mut opponents: Vec<PlayerSpec> = cfg.opponents.iter().map(|o| PlayerSpec::parse(o)).collect::<Result<_>>()?;
    let mut rows = read_elo_csv(&elo_path)?;
    rows.retain(|r| r.checkpoint != stem);
    if cfg.previous > 0 {
        let earlier: Vec<&EloRow> = rows.iter().filter(|r| r.step < step || (r.step == step && r.generation < generation)).collect();
        for r in earlier.iter().rev().take(cfg.previous) {
            let path = run.checkpoints_dir().join(format!("{}.json", r.checkpoint));
            if run.fetch_checkpoint(&path).is_ok() && path.exists() {
                opponents.push(PlayerSpec::Net { path, sims: cfg.sims, gumbel: false, options: Default::default() });
            }
        }
    }

    let mut new_games = Vec::new();
    let mut results = Vec::new();
    for (k, opp) in opponents.iter().enumerate() {
        let mc = cfg.paired().config(variant, generation.wrapping_mul(1_000_003) ^ step ^ ((k as u64) << 40), format!("vzero gauntlet {stem}"));
        let report = run_match(&me, opp, &mc).with_context(|| format!("gauntlet match against {}", opp.name()))?;
        results.push(OpponentResult {
            opponent: report.b.clone(),
            wins: report.stats.wins,
            draws: report.stats.draws,
            losses: report.stats.losses,
            earlier: k >= cfg.opponents.len(),
        });
        new_games.extend(report.games.into_iter().map(|g| g.pgn));
    }

    // All games: the old file plus this gauntlet's, written at once.
    let mut all = if pgn_path.exists() { read_pgn_file(&pgn_path)? } else { Vec::new() };
    all.extend(new_games.iter().cloned());
    write_atomic(&pgn_path, pgn_text(&all, variant)?.as_bytes())?;
    run.publish(&pgn_path)?;

    let anchor = cfg.anchor();
    let records: Vec<GameRecord> = all.iter().filter_map(GameRecord::from_pgn).collect();
    let ratings = compute_ratings(&records, &anchor, 1.0).map_err(|e| anyhow::anyhow!("ratings of {}: {e}", pgn_path.display()))?;
    let mut csv = String::from("player,games,score,elo,margin95\n");
    for r in &ratings {
        csv += &format!("{},{},{:.4},{:.1},{:.1}\n", r.player, r.games, r.score, r.elo, r.margin);
    }
    write_atomic(&dir.join("ratings.csv"), csv.as_bytes())?;
    run.publish(&dir.join("ratings.csv"))?;

    rows.push(EloRow { checkpoint: stem.clone(), generation, step, minutes: elapsed_minutes, elo: 0.0, lo: 0.0, hi: 0.0 });
    rows.sort_by(|a, b| (a.step, a.generation).cmp(&(b.step, b.generation)));
    // A checkpoint's rating is that of its player at the current sims (older rows keep theirs if
    // their player name is not in the games any more, e.g. after a change of sims).
    for r in rows.iter_mut() {
        let name = format!("net:{}:{}", r.checkpoint, cfg.sims);
        if let Some(x) = ratings.iter().find(|x| x.player == name) {
            r.elo = x.elo;
            r.lo = x.elo - x.margin;
            r.hi = x.elo + x.margin;
        }
    }
    let mut csv = String::from("checkpoint,generation,step,minutes,elo,lo,hi\n");
    for r in &rows {
        csv += &format!("{},{},{},{:.2},{:.1},{:.1},{:.1}\n", r.checkpoint, r.generation, r.step, r.minutes, r.elo, r.lo, r.hi);
    }
    write_atomic(&elo_path, csv.as_bytes())?;
    run.publish(&elo_path)?;
    std::fs::create_dir_all(run.plots_dir()).with_context(|| format!("creating {}", run.plots_dir().display()))?;
    let svg = run.plots_dir().join("elo.svg");
    write_atomic(&svg, elo_svg(&rows, &format!("gauntlet Elo ({anchor} = 0, 95% interval)")).as_bytes())?;
    run.publish(&svg)?;

    let row = rows.iter().find(|r| r.checkpoint == stem).cloned().expect("row just added");
    Ok(GauntletSummary { player: my_name, row, results, games: new_games.len(), anchor, ratings })
}

fn nice_step(span: f64, target: usize) -> f64 {
    let raw = (span / target as f64).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Elo (line and points) with the 95% interval (shaded band) against training minutes, under
/// `title`. An infinite bound (a clean sweep) is drawn at the edge of the plot.
pub fn elo_svg(rows: &[EloRow], title: &str) -> String {
    let (w, h) = (800.0, 480.0);
    let (l, r, t, b) = (70.0, 20.0, 40.0, 50.0);
    let finite = |x: f64| if x.is_finite() { x } else { 0.0 };
    let max_x = rows.iter().map(|r| r.minutes).fold(0.0f64, f64::max).max(1.0);
    let mut lo_y = rows.iter().map(|r| finite(r.lo)).fold(0.0f64, f64::min);
    let mut hi_y = rows.iter().map(|r| finite(r.hi)).fold(0.0f64, f64::max);
    if hi_y - lo_y < 100.0 {
        hi_y += 50.0;
        lo_y -= 50.0;
    }
    let px = |x: f64| l + (x / max_x) * (w - l - r);
    let py = |y: f64| {
        let y = if y.is_nan() { 0.0 } else { y.clamp(lo_y, hi_y) };
        t + (hi_y - y) / (hi_y - lo_y) * (h - t - b)
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"18\">{title}</text>\n",
        w / 2.0
    );
    let ys = nice_step(hi_y - lo_y, 8);
    let mut y = (lo_y / ys).ceil() * ys;
    while y <= hi_y {
        s += &format!(
            "<line x1=\"{l}\" x2=\"{}\" y1=\"{py:.1}\" y2=\"{py:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{y:.0}</text>\n",
            w - r,
            l - 6.0,
            py(y) + 4.0,
            py = py(y)
        );
        y += ys;
    }
    let xs = nice_step(max_x, 8);
    let mut x = 0.0;
    while x <= max_x + 1e-9 {
        s += &format!(
            "<line x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{t}\" y2=\"{}\" stroke=\"#eee\"/><text x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\">{x}</text>\n",
            h - b,
            h - b + 16.0,
            px = px(x)
        );
        x += xs;
    }
    s += &format!(
        "<rect x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">training time (minutes)</text>\n\
         <text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">Elo</text>\n",
        w - l - r,
        h - t - b,
        (l + w - r) / 2.0,
        h - 12.0,
        (t + h - b) / 2.0,
        (t + h - b) / 2.0
    );
    if !rows.is_empty() {
        let upper: Vec<String> = rows.iter().map(|r| format!("{:.1},{:.1}", px(r.minutes), py(r.hi))).collect();
        let lower: Vec<String> = rows.iter().rev().map(|r| format!("{:.1},{:.1}", px(r.minutes), py(r.lo))).collect();
        s += &format!("<polygon points=\"{} {}\" fill=\"steelblue\" fill-opacity=\"0.25\" stroke=\"none\"/>\n", upper.join(" "), lower.join(" "));
        let line: Vec<String> = rows.iter().map(|r| format!("{:.1},{:.1}", px(r.minutes), py(r.elo))).collect();
        s += &format!("<polyline points=\"{}\" fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\"/>\n", line.join(" "));
        for r in rows {
            s += &format!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"steelblue\"><title>{} gen {} step {}: {:.0} [{:.0}, {:.0}]</title></circle>\n",
                px(r.minutes),
                py(r.elo),
                r.checkpoint,
                r.generation,
                r.step,
                r.elo,
                r.lo,
                r.hi
            );
        }
    }
    s += "</svg>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let ok = GauntletConfig { every: 5, ..GauntletConfig::default() };
        ok.validate().unwrap();
        GauntletConfig { games: 0, ..GauntletConfig::default() }.validate().unwrap(); // off: not checked
        for (c, needle) in [
            (GauntletConfig { games: 0, ..ok.clone() }, "gauntlet.games"),
            (GauntletConfig { sims: 0, ..ok.clone() }, "gauntlet.sims"),
            (GauntletConfig { opponents: vec![], ..ok.clone() }, "gauntlet.opponents"),
            (GauntletConfig { opponents: vec!["randy".into()], ..ok.clone() }, "randy"),
            (GauntletConfig { max_plies: 0, ..ok.clone() }, "gauntlet.max_plies"),
            (GauntletConfig { concurrency: 0, ..ok.clone() }, "gauntlet.concurrency"),
        ] {
            let e = format!("{:#}", c.validate().unwrap_err());
            assert!(e.contains(needle), "{needle}: {e}");
        }
        assert_eq!(ok.anchor(), "random");
        assert_eq!(GauntletConfig { opponents: vec!["greedy".into(), "alphabeta:2".into()], ..ok }.anchor(), "greedy");
    }

    #[test]
    fn svg_handles_infinite_and_empty() {
        let row = EloRow { checkpoint: "gen-000005-step-000000250".into(), generation: 5, step: 250, minutes: 3.0, elo: 120.0, lo: f64::NEG_INFINITY, hi: 300.0 };
        let s = elo_svg(&[row], "random");
        assert!(s.starts_with("<svg") && s.contains("polyline") && !s.contains("NaN"));
        // coordinates stay finite (the tooltip may say -inf)
        for attr in s.split("points=\"").skip(1) {
            assert!(!attr.split('"').next().unwrap().contains("inf"), "{s}");
        }
        assert!(elo_svg(&[], "random").ends_with("</svg>\n"));
    }
}
