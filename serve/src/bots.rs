//! The opponents a page may choose: a closed list of specs (a browser never names a program or
//! a file), each turned into an arena player.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;
use vzero_arena::{FsfSource, Player, PlayerSpec};
use vzero_rules::Variant;

use crate::{ApiError, ApiResult};

/// Variants Fairy-Stockfish plays with vzero's definitions (the `fsf` player).
const FSF_VARIANTS: [&str; 2] = ["empire", "shogun"];

/// Search budgets a page may ask for.
const MAX_SIMS: u32 = 5000;
const MAX_DEPTH: u32 = 5;

/// A checkpoint the server plays with: one named on the command line, or a run's newest.
#[derive(Clone, Debug)]
pub struct ModelEntry {
    /// The checkpoint's metadata file.
    pub path: PathBuf,
    /// Its name (file stem).
    pub name: String,
    pub variant: Variant,
    /// Where it came from, for people (`--model`, `run 0 newest`).
    pub source: String,
}

impl ModelEntry {
    /// A checkpoint named with `--model` (a `.json`, `.safetensors` or stem path).
    pub fn open(path: &Path, variants: &[Variant]) -> Result<ModelEntry> {
        let path = if path.extension().is_some_and(|e| e == "json") { path.to_path_buf() } else { path.with_extension("json") };
        let meta = vzero_model::checkpoint::read_meta(&path)?;
        let variant = match variants.iter().find(|v| v.name() == meta.variant) {
            Some(v) => *v,
            None => Variant::load(&meta.variant).with_context(|| format!("{}: variant '{}'", path.display(), meta.variant))?,
        };
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(ModelEntry { path, name, variant, source: "--model".into() })
    }

    /// The newest checkpoint of run `index` (`dir`), if it has one.
    pub fn run_latest(index: usize, dir: &vzero_data::RunDir, variant: Variant) -> Result<Option<ModelEntry>> {
        let Some(path) = dir.latest_checkpoint()? else { return Ok(None) };
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Some(ModelEntry { path, name, variant, source: format!("run {index} newest") }))
    }
}

/// A page's choice of player for one side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSpec {
    /// A person at the board.
    Human,
    Random,
    Greedy,
    /// Alpha-beta on material to a depth.
    AlphaBeta(u32),
    /// MCTS with the variant's heuristics, simulations.
    Mcts(u32),
    /// Model `index` of the server's list, simulations per move.
    Model(usize, u32),
    /// Fairy-Stockfish at a Skill Level (0-20).
    Fsf(u32),
}

impl BotSpec {
    /// Parses a page's spec (`human`, `random`, `greedy`, `alphabeta:D`, `mcts:N`,
    /// `model:I:SIMS`, `fsf:skill=S`), refusing anything else.
    pub fn parse(text: &str) -> ApiResult<BotSpec> {
        let bad = |why: &str| ApiError::bad(format!("player '{}': {why}; one of human, random, greedy, alphabeta:1-{MAX_DEPTH}, mcts:N, model:I:SIMS, fsf:skill=0-20", vzero_rules::echo(text)));
        let num = |s: &str, lo: u32, hi: u32| s.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n));
        let parts: Vec<&str> = text.split(':').collect();
        Ok(match parts.as_slice() {
            ["human"] => BotSpec::Human,
            ["random"] => BotSpec::Random,
            ["greedy"] => BotSpec::Greedy,
            ["alphabeta", d] => BotSpec::AlphaBeta(num(d, 1, MAX_DEPTH).ok_or_else(|| bad("depth out of range"))?),
            ["mcts", n] => BotSpec::Mcts(num(n, 1, MAX_SIMS).ok_or_else(|| bad("simulations out of range"))?),
            ["model", i, n] => BotSpec::Model(
                i.parse().map_err(|_| bad("model index is not a number"))?,
                num(n, 1, MAX_SIMS).ok_or_else(|| bad("simulations out of range"))?,
            ),
            ["fsf", s] => BotSpec::Fsf(s.strip_prefix("skill=").and_then(|s| num(s, 0, 20)).ok_or_else(|| bad("skill out of range"))?),
            _ => return Err(bad("not a player this server offers")),
        })
    }

    /// Whether a person plays this side.
    pub fn is_human(&self) -> bool {
        *self == BotSpec::Human
    }

    /// The arena player for `variant` (none for a person), checked against the models served.
    pub fn player(&self, variant: Variant, models: &[ModelEntry], seed: u64) -> ApiResult<Option<Box<dyn Player>>> {
        let spec = match self {
            BotSpec::Human => return Ok(None),
            BotSpec::Random => "random".to_string(),
            BotSpec::Greedy => "greedy".to_string(),
            BotSpec::AlphaBeta(d) => format!("alphabeta:{d}"),
            BotSpec::Mcts(n) => format!("mcts:{n}:knowledge"),
            BotSpec::Model(i, n) => {
                let m = models.get(*i).ok_or_else(|| ApiError::bad(format!("no model {i}: this server has {}", models.len())))?;
                if m.variant.name() != variant.name() {
                    return Err(ApiError::bad(format!("model {i} ({}) plays {}, not {}", m.name, m.variant.name(), variant.name())));
                }
                format!("net:{}:{n}", m.path.display())
            }
            BotSpec::Fsf(s) => {
                if !FSF_VARIANTS.contains(&variant.name()) {
                    return Err(ApiError::bad(format!("Fairy-Stockfish does not play {}", variant.name())));
                }
                format!("fsf:movetime=300:opt=Skill Level={s}")
            }
        };
        let parsed = PlayerSpec::parse(&spec).map_err(|e| ApiError::internal(format!("{spec}: {e:#}")))?;
        let player = parsed.build(variant, seed).map_err(|e| ApiError::bad(format!("starting {}: {e:#}", self.label())))?;
        Ok(Some(player))
    }

    /// The spec as the page writes it.
    pub fn label(&self) -> String {
        match self {
            BotSpec::Human => "human".into(),
            BotSpec::Random => "random".into(),
            BotSpec::Greedy => "greedy".into(),
            BotSpec::AlphaBeta(d) => format!("alphabeta:{d}"),
            BotSpec::Mcts(n) => format!("mcts:{n}"),
            BotSpec::Model(i, n) => format!("model:{i}:{n}"),
            BotSpec::Fsf(s) => format!("fsf:skill={s}"),
        }
    }
}

/// The opponents offered on the page (each with the variants it plays; none listed: all).
pub fn menu(models: &[ModelEntry]) -> Vec<serde_json::Value> {
    let mut out = vec![
        json!({ "spec": "human", "label": "Human" }),
        json!({ "spec": "random", "label": "random mover" }),
        json!({ "spec": "greedy", "label": "greedy (one ply)" }),
    ];
    for d in 1..=4 {
        out.push(json!({ "spec": format!("alphabeta:{d}"), "label": format!("alpha-beta depth {d}") }));
    }
    out.push(json!({ "spec": "mcts:400", "label": "MCTS 400 (heuristics, no network)" }));
    for (i, m) in models.iter().enumerate() {
        for sims in [64, 400] {
            out.push(json!({ "spec": format!("model:{i}:{sims}"), "label": format!("{} ({}), {sims} sims", m.name, m.source), "variants": [m.variant.name()] }));
        }
    }
    if vzero_arena::find_fsf().1 != FsfSource::Missing {
        for s in [0, 5, 10, 20] {
            out.push(json!({ "spec": format!("fsf:skill={s}"), "label": format!("Fairy-Stockfish, Skill Level {s}"), "variants": FSF_VARIANTS }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_offered_players_parse() {
        assert_eq!(BotSpec::parse("alphabeta:3").unwrap(), BotSpec::AlphaBeta(3));
        assert_eq!(BotSpec::parse("model:0:64").unwrap(), BotSpec::Model(0, 64));
        assert_eq!(BotSpec::parse("fsf:skill=20").unwrap(), BotSpec::Fsf(20));
        for bad in ["uci:/bin/sh", "net:/etc/passwd:64", "alphabeta:9", "mcts:0", "fsf:nodes=1", "model:x:64", "fsf:skill=21", "", "human:1"] {
            let e = BotSpec::parse(bad).unwrap_err();
            assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST, "{bad}");
        }
        for spec in ["human", "random", "greedy", "alphabeta:1", "mcts:10", "model:2:400", "fsf:skill=0"] {
            assert_eq!(BotSpec::parse(spec).unwrap().label(), spec);
        }
    }
}
