//! Player specs: the strings that name players (`alphabeta:3`, `net:PATH:64`, `fsf:nodes=1000`),
//! parsed into a [`PlayerSpec`] that builds as many independent players as a match needs.
//!
//!
//! ## Player spec grammar
//!
//! ```text
//! spec      := random | greedy | alphabeta[:DEPTH] | mcts[:SIMS][:knowledge] | net:PATH[:gumbel][:SIMS]{:NETOPT}
//!            | uci:CMD{:OPTION} | fsf{:OPTION}
//! NETOPT    := kv=W | kp=W | batch=N
//! OPTION    := nodes=N | movetime=MS | depth=D | tc=S[+INC] | opt=NAME=VALUE | variantpath=PATH | name=LABEL | timeout=MS
//! ```
//!
//! * `random` — uniformly random legal move (seeded).
//! * `greedy` — one ply: a move that wins at once (mate, campmate, ...) if any, else the best
//!   material balance after the move (`PieceInfo.value`), ties broken at random.
//! * `alphabeta:D` — fixed-depth (default 3) negamax with alpha-beta on material, captures and
//!   promotions searched first (MVV-LVA), mates scored by distance; random among equal moves.
//! * `mcts:N` — PUCT MCTS, N simulations (default 800) per move, uniform priors, material value;
//!   `mcts:N:knowledge` evaluates leaves with the variant-definition heuristics instead
//!   ([`vzero_mcts::Knowledge`]: capture priors, quiescent material value).
//! * `net:PATH:N` — checkpoint PATH (stem, `.json` or `.safetensors`) evaluating leaves of a PUCT
//!   search of N simulations (default 800); `net:PATH:gumbel:N` uses a Gumbel root with N
//!   simulations (default 64). The knowledge blend recorded in the checkpoint is used; options
//!   after the simulations override it and the batch: `kv=W` (value weight), `kp=W` (prior
//!   weight), `batch=N` (leaves per forward pass), e.g. `net:runs/a/gen-9:64:kv=0:kp=0`.
//! * `uci:CMD` — an external UCI engine: CMD is split on whitespace into program and arguments
//!   (e.g. `uci:fairy-stockfish` or `uci:/path/to/vzero uci`). Options, `:`-separated:
//!   `nodes=N` (`go nodes N`, default 1000 unless `movetime` or `depth` is given), `movetime=MS`
//!   (`go movetime MS`), `depth=D` (`go depth D`), `tc=S+INC` (a game clock in seconds, e.g.
//!   `tc=10+0.1`: `go wtime … winc …`, each move charged its wall time, a flag loses the game),
//!   `opt=Name=Value` (`setoption`, repeatable), `variantpath=PATH`
//!   (`setoption name VariantPath`), `name=LABEL` (name in results and PGN),
//!   `timeout=MS` (extra time allowed per move before the engine forfeits, default 10000).
//! * `fsf` — Fairy-Stockfish: `uci:` with the program `$VZERO_FSF`, else `fairy-stockfish` on
//!   the `PATH`, else `scripts/fairy-stockfish` (the engine inside the pinned `pyffish` wheel,
//!   which `scripts/setup.sh` installs), and vzero's own definitions of empire and shogun
//!   (`scripts/fsf/variants.ini`, built in; the same piece types as Fairy-Stockfish's own, so
//!   its NNUE nets load) unless `variantpath=` is given; e.g. `fsf:nodes=1` or `fsf:movetime=100`.
//!
//! A player's display name is the spec itself unless `name=` is given (for `net:` the file stem
//! replaces the path).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use vzero_engine::{Evaluator, NetEvaluator};
use vzero_mcts::{GumbelConfig, Knowledge, MaterialEvaluator, RootMode, SearchConfig};
use vzero_rules::Variant;

use crate::player::{AlphaBetaPlayer, GreedyPlayer, MctsPlayer, Player, RandomPlayer};
use crate::uci_client::{EngineInfo, UciEngine, UciEngineSpec};

/// A parsed player spec; [`PlayerSpec::build`] makes as many independent players as needed (one
/// per game thread).
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    Random,
    Greedy,
    AlphaBeta { depth: u32 },
    Mcts { sims: u32, knowledge: bool },
    Net { path: PathBuf, sims: u32, gumbel: bool, options: NetOptions },
    Uci(UciEngineSpec),
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T> {
    s.parse().map_err(|_| anyhow::anyhow!("{what}: '{s}' is not a valid number"))
}

impl PlayerSpec {
    /// Parses a spec (see the module documentation for the grammar).
    pub fn parse(spec: &str) -> Result<PlayerSpec> {
        let (head, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let has_rest = spec.contains(':');
        Ok(match head {
            "random" if !has_rest => PlayerSpec::Random,
            "greedy" if !has_rest => PlayerSpec::Greedy,
            "alphabeta" => {
                let depth = if has_rest { num(rest, "alphabeta depth")? } else { 3 };
                if !(1..=8).contains(&depth) {
                    bail!("alphabeta depth must be 1 to 8, not {depth}");
                }
                PlayerSpec::AlphaBeta { depth }
            }
            "mcts" => {
                let (sims, knowledge) = match rest.split_once(':') {
                    Some((n, "knowledge")) => (n, true),
                    Some(_) => bail!("bad mcts spec '{spec}': mcts[:SIMS][:knowledge]"),
                    None if rest == "knowledge" => ("", true),
                    None => (rest, false),
                };
                let sims = if sims.is_empty() { 800 } else { num(sims, "mcts simulations")? };
                if sims == 0 {
                    bail!("mcts simulations must be at least 1");
                }
                PlayerSpec::Mcts { sims, knowledge }
            }
            "net" => {
                let parts: Vec<&str> = rest.split(':').collect();
                if rest.is_empty() {
                    bail!("net:PATH[:SIMS] or net:PATH:gumbel[:SIMS] needs a checkpoint path");
                }
                let path = PathBuf::from(parts[0]);
                let n_opts = parts[1..].iter().rev().take_while(|p| p.contains('=')).count();
                let (plain, opts) = parts[1..].split_at(parts.len() - 1 - n_opts);
                let (gumbel, sims) = match plain {
                    [] => (false, 800),
                    ["gumbel"] => (true, 64),
                    ["gumbel", n] => (true, num(n, "net simulations")?),
                    [n] => (false, num(n, "net simulations")?),
                    _ => bail!("bad net spec '{spec}': net:PATH[:SIMS] or net:PATH:gumbel[:SIMS], then options kv=W, kp=W, batch=N"),
                };
                if sims == 0 {
                    bail!("net simulations must be at least 1");
                }
                let options = NetOptions::parse(opts)?;
                PlayerSpec::Net { path, sims, gumbel, options }
            }
            "uci" => PlayerSpec::Uci(UciEngineSpec::parse(rest)?),
            "fsf" => PlayerSpec::Uci(UciEngineSpec::parse_fsf(rest)?),
            _ => bail!(
                "unknown player '{spec}': expected random, greedy, alphabeta[:D], mcts[:N], net:PATH[:N], net:PATH:gumbel[:N], uci:CMD[:options] or fsf[:options]"
            ),
        })
    }

    /// The display name.
    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Random => "random".into(),
            PlayerSpec::Greedy => "greedy".into(),
            PlayerSpec::AlphaBeta { depth } => format!("alphabeta:{depth}"),
            PlayerSpec::Mcts { sims, knowledge } => format!("mcts:{sims}{}", if *knowledge { ":knowledge" } else { "" }),
            PlayerSpec::Net { path, sims, gumbel, options } => {
                let stem = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().to_string());
                let stem = stem.strip_suffix(".json").or_else(|| stem.strip_suffix(".safetensors")).unwrap_or(&stem).to_string();
                let root = if *gumbel { "gumbel:" } else { "" };
                format!("net:{stem}:{root}{sims}{}", options.suffix())
            }
            PlayerSpec::Uci(u) => u.name(),
        }
    }

    /// For an engine (`uci:`, `fsf`), what runs, from starting it once (see
    /// [`UciEngineSpec::identify`]); `None` for vzero's own players.
    pub fn identify(&self, variant: Variant) -> Result<Option<EngineInfo>> {
        match self {
            PlayerSpec::Uci(u) => u.identify(variant).map(Some),
            _ => Ok(None),
        }
    }

    /// A fresh player for `variant` with its own randomness from `seed`.
    pub fn build(&self, variant: Variant, seed: u64) -> Result<Box<dyn Player>> {
        let name = self.name();
        let rng = StdRng::seed_from_u64(seed);
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer { name, rng }),
            PlayerSpec::Greedy => Box::new(GreedyPlayer { name, rng }),
            PlayerSpec::AlphaBeta { depth } => Box::new(AlphaBetaPlayer { name, rng, depth: *depth, nodes: 0 }),
            PlayerSpec::Mcts { sims, knowledge } => Box::new(MctsPlayer {
                name,
                rng,
                sims: *sims,
                batch: None,
                config: SearchConfig::default(),
                eval: if *knowledge {
                    Evaluator::Knowledge(Knowledge::heuristic_only())
                } else {
                    Evaluator::Material(MaterialEvaluator::default())
                },
            }),
            PlayerSpec::Net { path, sims, gumbel, options } => {
                let (mut net, _) = NetEvaluator::load(path, variant, vzero_model::Device::Cpu).with_context(|| format!("loading checkpoint {}", path.display()))?;
                let mut knowledge = net.knowledge();
                if let Some(w) = options.knowledge_value {
                    knowledge.value_weight = w;
                }
                if let Some(w) = options.knowledge_prior {
                    knowledge.prior_weight = w;
                }
                net.set_knowledge(knowledge);
                let mut config = SearchConfig::default();
                if *gumbel {
                    config.root_mode = RootMode::Gumbel(GumbelConfig::default());
                }
                Box::new(MctsPlayer { name, rng, sims: *sims, config, eval: Evaluator::Net(Box::new(net)), batch: options.batch })
            }
            PlayerSpec::Uci(u) => Box::new(UciEngine::start(u, variant).with_context(|| format!("starting {}", u.name()))?),
        })
    }
}

/// Options of a `net:` player, written `:key=value` after the simulations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetOptions {
    /// `kv=W`: knowledge value weight, replacing the checkpoint's recorded blend.
    pub knowledge_value: Option<f32>,
    /// `kp=W`: knowledge prior weight, replacing the checkpoint's recorded blend.
    pub knowledge_prior: Option<f32>,
    /// `batch=N`: leaves per forward pass (default: simulations / 16, clamped to 1..=8).
    pub batch: Option<usize>,
}

impl NetOptions {
    fn parse(opts: &[&str]) -> Result<NetOptions> {
        let mut o = NetOptions::default();
        for opt in opts {
            let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
            let weight = |v: &str| -> Result<f32> {
                let w: f32 = num(v, k)?;
                if !(0.0..=1.0).contains(&w) {
                    bail!("net option {k} must be in [0, 1], not {v}");
                }
                Ok(w)
            };
            match k {
                "kv" => o.knowledge_value = Some(weight(v)?),
                "kp" => o.knowledge_prior = Some(weight(v)?),
                "batch" => {
                    let b: usize = num(v, "batch")?;
                    if !(1..=256).contains(&b) {
                        bail!("net option batch must be 1 to 256, not {v}");
                    }
                    o.batch = Some(b);
                }
                _ => bail!("unknown net option '{opt}': expected kv=W, kp=W or batch=N"),
            }
        }
        Ok(o)
    }

    /// The options as written in a spec (`:kv=0.5:batch=4`), empty when none is set.
    fn suffix(&self) -> String {
        let mut s = String::new();
        if let Some(w) = self.knowledge_value {
            s += &format!(":kv={w}");
        }
        if let Some(w) = self.knowledge_prior {
            s += &format!(":kp={w}");
        }
        if let Some(b) = self.batch {
            s += &format!(":batch={b}");
        }
        s
    }
}
