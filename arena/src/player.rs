//! Players: anything that picks a move for a [`vzero_rules::Game`], and the spec strings that
//! name them.
//!
//! ## Player spec grammar
//!
//! ```text
//! spec      := random | greedy | alphabeta[:DEPTH] | mcts[:SIMS][:knowledge] | net:PATH[:gumbel][:SIMS]{:NETOPT}
//!            | uci:CMD{:OPTION} | fsf{:OPTION}
//! NETOPT    := kv=W | kp=W | batch=N
//! OPTION    := nodes=N | movetime=MS | opt=NAME=VALUE | variantpath=PATH | name=LABEL | timeout=MS
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
//!   `nodes=N` (`go nodes N`, default 1000 unless `movetime` is given), `movetime=MS`
//!   (`go movetime MS`), `opt=Name=Value` (`setoption`, repeatable), `variantpath=PATH`
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
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use vzero_mcts::{material_balance, GumbelConfig, Knowledge, MaterialEvaluator, RootMode, SearchConfig, VariantGame};
use vzero_rules::{Game, Move, MoveKind, Outcome, Variant};

use crate::engine::{search_move, Evaluator, Limits, NetEvaluator};
use crate::think::Score;
use crate::uci_engine::{EngineInfo, UciEngine, UciEngineSpec};

/// Something that plays moves.
pub trait Player: Send {
    /// Name used in results and PGN tags.
    fn name(&self) -> &str;
    /// Called before each game.
    fn new_game(&mut self) -> Result<()> {
        Ok(())
    }
    /// A legal move for the side to move in `game` (which is not over). An error forfeits the game.
    fn choose(&mut self, game: &Game) -> Result<Move>;
    /// A move, as [`Player::choose`], with the player's score of the position for the side to
    /// move when it has one: what a teacher gives `vzero label`. Players without a score
    /// (random, greedy) answer `None`.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        Ok((self.choose(game)?, None))
    }
}


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
                let (mut net, _) = NetEvaluator::load(path, variant, tch::Device::Cpu).with_context(|| format!("loading checkpoint {}", path.display()))?;
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

/// Plays a uniformly random legal move.
pub struct RandomPlayer {
    name: String,
    rng: StdRng,
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        game.position().legal_moves().choose(&mut self.rng).copied().context("no legal move")
    }
}

/// A score for the side that just moved in `g` (after one of its moves): terminal results
/// dominate, then material. Positive is good for that side.
fn score_after(g: &VariantGame, mover: usize) -> f32 {
    use vzero_mcts::Game as _;
    let r = g.result();
    let stm = g.to_move();
    let sign = if stm == mover { 1.0 } else { -1.0 };
    if r.is_over() {
        let v = match r.outcome {
            Outcome::Win => 1.0,
            Outcome::Loss => -1.0,
            _ => 0.0,
        };
        return sign * v * 1e6;
    }
    sign * material_balance(g.position())
}

/// One ply: wins at once if it can, else maximizes material; ties at random.
pub struct GreedyPlayer {
    name: String,
    rng: StdRng,
}

impl Player for GreedyPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        use vzero_mcts::Game as _;
        let state = VariantGame::from_game(game);
        let mover = state.to_move();
        let mut best: Vec<Move> = Vec::new();
        let mut best_score = f32::NEG_INFINITY;
        for m in game.position().legal_moves() {
            let mut g = state.clone();
            g.play_move(m);
            let s = score_after(&g, mover);
            if s > best_score + 1e-4 {
                best_score = s;
                best.clear();
                best.push(m);
            } else if (s - best_score).abs() <= 1e-4 {
                best.push(m);
            }
        }
        best.choose(&mut self.rng).copied().context("no legal move")
    }
}

/// Fixed-depth alpha-beta on material with MVV-LVA move ordering.
pub struct AlphaBetaPlayer {
    name: String,
    rng: StdRng,
    depth: u32,
    /// Nodes searched by the last move (for tests and curiosity).
    pub nodes: u64,
}

const MATE: f32 = 1e6;

impl AlphaBetaPlayer {
    /// Ordering key: captures by victim value minus a tenth of the attacker's, promotions, then the rest.
    fn order_key(pos: &vzero_rules::Position, m: Move) -> f32 {
        let pieces = pos.variant().pieces();
        let mut k = 0.0;
        if m.kind() != MoveKind::Drop && m.kind() != MoveKind::Pass {
            if let Some(victim) = pos.piece_at(vzero_rules::Square(m.to() as u8)) {
                if victim.color != pos.side_to_move() {
                    let attacker = pos.piece_at(vzero_rules::Square(m.from() as u8)).map_or(0.0, |p| pieces[p.kind.index()].value);
                    k += 100.0 + pieces[victim.kind.index()].value * 10.0 - attacker;
                }
            }
        }
        if matches!(m.kind(), MoveKind::Promotion | MoveKind::PiecePromotion) {
            k += 50.0;
        }
        k
    }

    /// Negamax value for the side to move in `g`.
    fn negamax(&mut self, g: &VariantGame, depth: u32, ply: u32, mut alpha: f32, beta: f32) -> f32 {
        use vzero_mcts::Game as _;
        self.nodes += 1;
        let mut moves = Vec::new();
        if let Some(v) = g.expand(&mut moves) {
            // terminal: v for the side to move; prefer quick wins and slow losses
            return if v > 0.0 { MATE - ply as f32 } else if v < 0.0 { -MATE + ply as f32 } else { 0.0 };
        }
        if depth == 0 {
            return material_balance(g.position());
        }
        let pos = *g.position();
        moves.sort_by_cached_key(|&m| std::cmp::Reverse((Self::order_key(&pos, m) * 16.0) as i64));
        let me = g.to_move();
        let mut best = f32::NEG_INFINITY;
        for m in moves {
            let mut c = g.clone();
            c.play_move(m);
            // turns need not alternate (SPQR Dictator): negate only when the side changes
            let v = if c.to_move() == me {
                self.negamax(&c, depth - 1, ply + 1, alpha, beta)
            } else {
                -self.negamax(&c, depth - 1, ply + 1, -beta, -alpha)
            };
            if v > best {
                best = v;
            }
            if v > alpha {
                alpha = v;
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        Ok(self.judge(game)?.0)
    }

    /// The move and its negamax score: material in centipawns (piece values × 100), or a mate
    /// in moves when one is found within the depth.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        use vzero_mcts::Game as _;
        self.nodes = 0;
        let state = VariantGame::from_game(game);
        let me = state.to_move();
        let pos = *game.position();
        let mut moves = pos.legal_moves();
        moves.shuffle(&mut self.rng);
        moves.sort_by_cached_key(|&m| std::cmp::Reverse((Self::order_key(&pos, m) * 16.0) as i64));
        let mut best = Vec::new();
        let mut best_v = f32::NEG_INFINITY;
        for m in moves {
            let mut c = state.clone();
            c.play_move(m);
            // full window below the best so far minus a hair, so equal moves are kept for ties
            let alpha = best_v - 1e-3;
            let v = if c.to_move() == me {
                self.negamax(&c, self.depth - 1, 1, alpha, f32::INFINITY)
            } else {
                -self.negamax(&c, self.depth - 1, 1, f32::NEG_INFINITY, -alpha)
            };
            if v > best_v + 1e-3 {
                best_v = v;
                best.clear();
                best.push(m);
            } else if (v - best_v).abs() <= 1e-3 {
                best.push(m);
            }
        }
        let m = best.choose(&mut self.rng).copied().context("no legal move")?;
        let score = if best_v.abs() >= MATE - 1000.0 {
            let plies = (MATE - best_v.abs()).round() as i32;
            Score::Mate(if best_v > 0.0 { (plies + 1) / 2 } else { -(plies + 1) / 2 })
        } else {
            Score::Cp((best_v * 100.0).round() as i32)
        };
        Ok((m, Some(score)))
    }
}

/// MCTS with an evaluator (material or network), a fresh tree per move.
pub struct MctsPlayer {
    name: String,
    rng: StdRng,
    sims: u32,
    batch: Option<usize>,
    config: SearchConfig,
    eval: Evaluator,
}

impl Player for MctsPlayer {
    fn name(&self) -> &str {
        &self.name
    }
    fn choose(&mut self, game: &Game) -> Result<Move> {
        Ok(self.judge(game)?.0)
    }

    /// The chosen move and the root's value as centipawns ([`crate::engine::value_to_cp`]), or
    /// a mate when the solver proved one.
    fn judge(&mut self, game: &Game) -> Result<(Move, Option<Score>)> {
        let limits = Limits { sims: Some(self.sims as u64), time: None, batch: self.batch };
        let seed = self.rng.gen();
        let r = search_move(VariantGame::from_game(game), self.config.clone(), seed, &mut self.eval, limits, None, None, &mut |_| {})?;
        let r = r.context("search from a finished game")?.0;
        Ok((r.chosen, Some(crate::think::score(r.root_value, r.proven))))
    }
}
