//! Learning curves: a run's checkpoints at evenly spaced training times, each played against
//! the run's generation 0, so a reader sees what each stretch of training bought (the gauntlet
//! rates checkpoints against fixed baselines instead; generation 0 is the yardstick issue-style
//! strength rows use).
//!
//! Files, under the run directory:
//!
//! * `arena/curve.csv` — `checkpoint,generation,step,minutes,sims,games,wins,draws,losses,elo,lo,hi`:
//!   one row per measured checkpoint, Elo against generation 0 with its 95% interval (pentanomial
//!   over the colour-swapped pairs). Rewritten atomically after every point, so a curve that is
//!   stopped resumes where it was: a checkpoint already measured with the same `sims` and `games`
//!   is not played again.
//! * `arena/curve-<checkpoint>.pgn` — that point's games.
//! * `plots/curve.svg` — Elo against training minutes, generation 0 at (0, 0).
//!
//! A checkpoint's training minutes are its creation time minus generation 0's (the `created_unix`
//! of their metadata), so a run resumed after a pause counts the pause too.

use std::path::Path;

use anyhow::{bail, Context, Result};
use vzero_base::write_atomic;
use vzero_data::{CheckpointEntry, RunDir};
use vzero_rules::Variant;

use crate::gauntlet::{arena_dir, elo_svg, pgn_text, EloRow};
use crate::matches::{run_match, PairedGames};
use crate::spec::PlayerSpec;

/// What a curve measures: how many checkpoints and how each match is played.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurveConfig {
    /// Checkpoints measured, spread evenly over the run's training time (the newest is always one).
    pub points: usize,
    /// The match of each point (both sides search `sims` simulations).
    pub paired: PairedGames,
    /// Seed of the openings: the same for every point, so the points meet the same openings.
    pub seed: u64,
}

/// One measured checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    pub checkpoint: String,
    pub generation: u64,
    pub step: u64,
    /// Training minutes at the checkpoint (its creation time minus generation 0's).
    pub minutes: f64,
    pub sims: u32,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Elo against generation 0 and its 95% interval.
    pub elo: f64,
    pub lo: f64,
    pub hi: f64,
}

impl CurvePoint {
    /// One line: minutes, checkpoint, W/D/L and Elo with its interval.
    pub fn line(&self) -> String {
        format!(
            "{:>6.1} min  {}  {}/{}/{}  elo {} [{}, {}]",
            self.minutes,
            self.checkpoint,
            self.wins,
            self.draws,
            self.losses,
            crate::elo::fmt_elo(self.elo),
            crate::elo::fmt_elo(self.lo),
            crate::elo::fmt_elo(self.hi)
        )
    }
}

const HEADER: &str = "checkpoint,generation,step,minutes,sims,games,wins,draws,losses,elo,lo,hi";

/// Reads `curve.csv` (a missing file is no rows); errors name the file and line.
pub fn read_curve_csv(path: &Path) -> Result<Vec<CurvePoint>> {
    let Some(text) = vzero_base::read_if_exists(path)? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || anyhow::anyhow!("{}:{}: expected {HEADER}", path.display(), i + 1);
        if f.len() != 12 {
            return Err(bad());
        }
        let int = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad());
        out.push(CurvePoint {
            checkpoint: f[0].to_string(),
            generation: int(f[1])?,
            step: int(f[2])?,
            minutes: num(f[3])?,
            sims: int(f[4])? as u32,
            games: int(f[5])? as u32,
            wins: int(f[6])? as u32,
            draws: int(f[7])? as u32,
            losses: int(f[8])? as u32,
            elo: num(f[9])?,
            lo: num(f[10])?,
            hi: num(f[11])?,
        });
    }
    Ok(out)
}

fn curve_csv(points: &[CurvePoint]) -> String {
    let mut csv = format!("{HEADER}\n");
    for p in points {
        csv += &format!(
            "{},{},{},{:.2},{},{},{},{},{},{:.1},{:.1},{:.1}\n",
            p.checkpoint, p.generation, p.step, p.minutes, p.sims, p.games, p.wins, p.draws, p.losses, p.elo + 0.0, p.lo + 0.0, p.hi + 0.0
        );
    }
    csv
}

/// Picks `points` of `timed` (checkpoints with their training minutes, oldest first, generation 0
/// first): for each of the evenly spaced times `k·T/points` (`T` the newest checkpoint's minutes,
/// `k = 1..=points`), the checkpoint nearest to it in time; each at most once, never generation 0,
/// the newest always.
pub fn pick_points(timed: &[(CheckpointEntry, f64)], points: usize) -> Vec<(CheckpointEntry, f64)> {
    let Some((_, last)) = timed.last() else { return Vec::new() };
    let candidates = &timed[1.min(timed.len())..];
    let mut out: Vec<(CheckpointEntry, f64)> = Vec::new();
    for k in 1..=points {
        let target = last * k as f64 / points as f64;
        let nearest = if k == points {
            candidates.last()
        } else {
            candidates.iter().min_by(|a, b| (a.1 - target).abs().total_cmp(&(b.1 - target).abs()))
        };
        if let Some(c) = nearest {
            if !out.iter().any(|o| o.0 == c.0) {
                out.push(c.clone());
            }
        }
    }
    out.sort_by_key(|c| (c.0.step, c.0.generation));
    out
}

/// The run's checkpoints with their training minutes (creation time minus generation 0's),
/// oldest first. On object storage the metadata files are downloaded.
pub fn timed_checkpoints(run: &RunDir) -> Result<Vec<(CheckpointEntry, f64)>> {
    let entries = run.list_checkpoints()?;
    let mut out = Vec::with_capacity(entries.len());
    let mut first: Option<u64> = None;
    for c in entries {
        run.fetch(&c.path, false)?;
        let meta = vzero_model::checkpoint::read_meta(&c.path).with_context(|| format!("checkpoint {}", run.describe(&c.path)))?;
        let t0 = *first.get_or_insert(meta.created_unix);
        out.push((c, meta.created_unix.saturating_sub(t0) as f64 / 60.0));
    }
    Ok(out)
}

/// Plays `cfg.points` checkpoints of the run against its generation 0 (skipping those already in
/// `arena/curve.csv` with the same sims and games) and rewrites the csv, the points' PGN files and
/// `plots/curve.svg` after each. `on_point` sees each point as it is measured or found.
pub fn run_curve(run: &RunDir, variant: Variant, cfg: &CurveConfig, mut on_point: impl FnMut(&CurvePoint, bool)) -> Result<Vec<CurvePoint>> {
    cfg.paired.validate("curve", 2)?;
    if cfg.points == 0 {
        bail!("curve points must be at least 1");
    }
    let timed = timed_checkpoints(run)?;
    let Some((gen0, _)) = timed.first().cloned() else {
        bail!("no checkpoint in {}", run.location());
    };
    let chosen = pick_points(&timed, cfg.points);
    if chosen.is_empty() {
        bail!("{} has only its generation 0: nothing to compare with it yet", run.location());
    }
    run.fetch_checkpoint(&gen0.path)?;
    let dir = arena_dir(run);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::create_dir_all(run.plots_dir()).with_context(|| format!("creating {}", run.plots_dir().display()))?;
    let csv_path = dir.join("curve.csv");
    let mut points = read_curve_csv(&csv_path)?;
    let sims = cfg.paired.sims;
    let base = PlayerSpec::Net { path: gen0.path.clone(), sims, gumbel: false, options: Default::default() };
    for (c, minutes) in &chosen {
        let stem = c.name();
        if let Some(p) = points.iter().find(|p| p.checkpoint == stem && p.sims == sims && p.games == cfg.paired.games) {
            on_point(p, false);
            continue;
        }
        run.fetch_checkpoint(&c.path)?;
        let me = PlayerSpec::Net { path: c.path.clone(), sims, gumbel: false, options: Default::default() };
        let mc = cfg.paired.config(variant, cfg.seed, format!("vzero curve {stem}"));
        let report = run_match(&me, &base, &mc).with_context(|| format!("curve match of {stem} against {}", gen0.name()))?;
        let s = &report.stats;
        let e = s.elo().context("a match without games")?;
        let point = CurvePoint {
            checkpoint: stem.clone(),
            generation: c.generation,
            step: c.step,
            minutes: *minutes,
            sims,
            games: s.games(),
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            elo: e.elo,
            lo: e.low,
            hi: e.high,
        };
        let pgn_path = dir.join(format!("curve-{stem}.pgn"));
        write_atomic(&pgn_path, pgn_text(report.games.iter().map(|g| &g.pgn), variant)?.as_bytes())?;
        run.publish(&pgn_path)?;
        points.retain(|p| p.checkpoint != stem);
        points.push(point.clone());
        points.sort_by(|a, b| (a.step, a.generation).cmp(&(b.step, b.generation)));
        write_atomic(&csv_path, curve_csv(&points).as_bytes())?;
        run.publish(&csv_path)?;
        let svg = run.plots_dir().join("curve.svg");
        write_atomic(&svg, curve_svg(&points, sims).as_bytes())?;
        run.publish(&svg)?;
        on_point(&point, true);
    }
    let wanted: Vec<String> = chosen.iter().map(|c| c.0.name()).collect();
    Ok(points.into_iter().filter(|p| wanted.contains(&p.checkpoint) && p.sims == sims && p.games == cfg.paired.games).collect())
}

/// The curve's plot: generation 0 at (0, 0), then each point's Elo and interval.
pub fn curve_svg(points: &[CurvePoint], sims: u32) -> String {
    let mut rows = vec![EloRow { checkpoint: "generation 0".into(), generation: 0, step: 0, minutes: 0.0, elo: 0.0, lo: 0.0, hi: 0.0 }];
    rows.extend(points.iter().filter(|p| p.sims == sims).map(|p| EloRow {
        checkpoint: p.checkpoint.clone(),
        generation: p.generation,
        step: p.step,
        minutes: p.minutes,
        elo: p.elo,
        lo: p.lo,
        hi: p.hi,
    }));
    elo_svg(&rows, &format!("Elo against generation 0 ({sims} simulations, 95% interval)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(generation: u64) -> CheckpointEntry {
        CheckpointEntry { generation, step: generation * 50, path: format!("gen-{generation}.json").into() }
    }

    #[test]
    fn points_are_spread_over_time_without_generation_0_and_end_at_the_newest() {
        // generations 0..=12, one every 10 minutes
        let timed: Vec<_> = (0..=12).map(|g| (entry(g), g as f64 * 10.0)).collect();
        let gens = |v: Vec<(CheckpointEntry, f64)>| v.iter().map(|c| c.0.generation).collect::<Vec<_>>();
        assert_eq!(gens(pick_points(&timed, 4)), vec![3, 6, 9, 12]);
        assert_eq!(gens(pick_points(&timed, 1)), vec![12]);
        // more points than checkpoints: each checkpoint once, generation 0 never
        assert_eq!(gens(pick_points(&timed[..3], 6)), vec![1, 2]);
        assert!(pick_points(&timed[..1], 3).is_empty());
        assert!(pick_points(&[], 3).is_empty());
    }

    #[test]
    fn the_csv_round_trips_and_a_bad_line_is_named() {
        let dir = std::env::temp_dir().join(format!("vzero-curve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = CurvePoint {
            checkpoint: "gen-000010-step-000000500".into(),
            generation: 10,
            step: 500,
            minutes: 12.5,
            sims: 64,
            games: 40,
            wins: 20,
            draws: 10,
            losses: 10,
            elo: 88.7,
            lo: 20.1,
            hi: f64::INFINITY,
        };
        let path = dir.join("curve.csv");
        std::fs::write(&path, curve_csv(std::slice::from_ref(&p))).unwrap();
        assert_eq!(read_curve_csv(&path).unwrap(), vec![p.clone()]);
        std::fs::write(&path, format!("{HEADER}\ngen-1,1,50,1.0,64,40\n")).unwrap();
        let e = format!("{:#}", read_curve_csv(&path).unwrap_err());
        assert!(e.contains("curve.csv:2"), "{e}");
        assert!(read_curve_csv(&dir.join("missing.csv")).unwrap().is_empty());
        let svg = curve_svg(&[p], 64);
        assert!(svg.contains("generation 0 (64 simulations") && svg.contains("gen-000010-step-000000500"), "{svg}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
