//! One self-play worker: many games at once in one thread, their search leaves evaluated
//! together in one forward pass, finished games written as HDF5 chunks, and the newest
//! checkpoint of the run picked up between moves.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use crossbeam_channel::{bounded, Receiver, Sender};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use vzero_base::now_unix;
use vzero_data::{ChunkMeta, GameRecord, Resigns, RunDir, Row};
use vzero_encoding::ENCODING_VERSION;
use vzero_mcts::{gather_batch, material_target, FalseResignStats, Leaf, LeafValue, ResignTracker, Search, SearchConfig, VariantGame};
use vzero_model::{leaf_value, CheckpointMeta, Device, EvalServer, NetEvaluator};
use vzero_openings::OpeningLine;
use vzero_rules::{Color, Game, Move, Outcome, Variant};

use crate::config::{SelfplayConfig, BRANCH_MEMORY};
use crate::targets::{capped_end, finish_game, GameEnd, GameRow};

/// Counters shared by all workers of a process, for progress bars and summaries.
#[derive(Debug, Default)]
pub struct Stats {
    /// Finished games.
    pub games: AtomicU64,
    /// Moves played.
    pub moves: AtomicU64,
    /// Training rows written to chunks.
    pub rows: AtomicU64,
    /// Chunk files written.
    pub chunks: AtomicU64,
    /// Positions evaluated by the network.
    pub evals: AtomicU64,
    /// Forward passes.
    pub batches: AtomicU64,
    /// Nanoseconds spent in forward passes (encoding included).
    pub eval_nanos: AtomicU64,
    /// Games won by White, drawn, won by Black.
    pub results: [AtomicU64; 3],
    /// Games ended by resignation.
    pub resigned: AtomicU64,
    /// Name of the newest network in use.
    pub network: Mutex<String>,
    /// Playthrough games: would the resigner have won?
    pub false_resign: Mutex<FalseResignStats>,
    /// Rung after each chunk written, for a learner in the same process waiting for data.
    pub chunk_written: Doorbell,
    /// The process's evaluation server, when the workers share one (its forward passes and
    /// positions per pass).
    pub evaluator: std::sync::OnceLock<Arc<EvalServer>>,
}

impl Stats {
    /// Games resigned and the playthrough games' false resignations, as heartbeats and
    /// progress lines report them.
    pub fn resigns(&self) -> Resigns {
        let f = *self.false_resign.lock().unwrap_or_else(|e| e.into_inner());
        let FalseResignStats { playthrough_games, would_resign, resigner_won, resigner_drew } = f;
        Resigns { resigned: self.resigned.load(Ordering::Relaxed), playthrough_games, would_resign, resigner_won, resigner_drew }
    }

    /// Positions per forward pass: the evaluation server's batches when there is one, else each
    /// worker's own.
    pub fn positions_per_forward(&self) -> f64 {
        match self.evaluator.get() {
            Some(server) => server.stats().positions_per_forward(),
            None => self.evals.load(Ordering::Relaxed) as f64 / self.batches.load(Ordering::Relaxed).max(1) as f64,
        }
    }
}

/// A wake-up from one thread to another, without a payload: [`Doorbell::ring`] never blocks,
/// and rings while one is pending merge into it. A waiting thread selects on
/// [`Doorbell::receiver`] (with a timeout when other things can also end its wait).
#[derive(Debug)]
pub struct Doorbell {
    tx: Sender<()>,
    rx: Receiver<()>,
}

impl Default for Doorbell {
    fn default() -> Doorbell {
        let (tx, rx) = bounded(1);
        Doorbell { tx, rx }
    }
}

impl Doorbell {
    /// Wakes the waiting thread (or the next one to wait).
    pub fn ring(&self) {
        let _ = self.tx.try_send(());
    }

    /// What a waiting thread receives a `()` from once per ring (or merged rings).
    pub fn receiver(&self) -> &Receiver<()> {
        &self.rx
    }

    /// Forgets a pending ring (before looking at what it announces, so a later ring is news).
    pub fn clear(&self) {
        let _ = self.rx.try_recv();
    }
}

/// What a worker needs to run.
#[derive(Clone)]
pub struct WorkerContext {
    /// The run directory (data and checkpoints).
    pub run: RunDir,
    /// The variant played.
    pub variant: Variant,
    /// Self-play settings.
    pub config: SelfplayConfig,
    /// Device of the network.
    pub device: Device,
    /// Set to stop: unfinished games are dropped, finished ones are written first.
    pub stop: Arc<AtomicBool>,
    /// Shared counters.
    pub stats: Arc<Stats>,
    /// Stop after this many games in all (counted over the workers sharing `stats`).
    pub max_games: Option<u64>,
    /// Worker name, part of chunk file names.
    pub name: String,
    /// Seed of this worker's randomness.
    pub seed: u64,
    /// The process's evaluation server, batching the leaves of all its workers; `None`: the
    /// worker runs its own network in its own thread.
    pub evaluator: Option<Arc<EvalServer>>,
    /// The lines of `config.start_book` ([`SelfplayConfig::start_lines`]), read once per
    /// process and shared by its workers (empty: no book).
    pub starts: Arc<Vec<OpeningLine>>,
}

/// Loads the network at `path` for a worker: through the process's evaluation server when
/// there is one.
fn load_net(ctx: &WorkerContext, path: &std::path::Path) -> Result<(NetEvaluator, CheckpointMeta)> {
    let loaded = match &ctx.evaluator {
        Some(server) => NetEvaluator::load_shared(path, ctx.variant, ctx.device, server.client()),
        None => NetEvaluator::load(path, ctx.variant, ctx.device),
    };
    loaded.with_context(|| format!("loading {}", path.display()))
}

/// A game in progress.
struct Slot {
    game: Game,
    /// Rows of the game so far (targets that need the game's end still missing).
    rows: Vec<GameRow>,
    priors: Vec<f32>,
    values: Vec<f32>,
    resign: ResignTracker,
    network: String,
}

/// The newest checkpoint of the run, waiting for one to appear if there is none yet.
fn wait_for_network(ctx: &WorkerContext) -> Result<Option<PathBuf>> {
    loop {
        if let Some(p) = ctx.run.latest_checkpoint()? {
            return Ok(Some(p));
        }
        if ctx.stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // A timed poll, not a channel: the checkpoint is a file that a learner in another
        // process (or on another machine, through object storage) publishes; there is no thread
        // here to signal its arrival.
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The end reason of a game stopped at `max_plies` whose rows keep their own search values
/// (`cap_outcome = "search"`): it has no result.
const MAX_PLIES: &str = "max-plies";


struct Worker {
    ctx: WorkerContext,
    search_config: SearchConfig,
    net: NetEvaluator,
    net_path: PathBuf,
    slots: Vec<Slot>,
    searches: Vec<Search<VariantGame>>,
    rows: Vec<Row>,
    games: Vec<GameRecord>,
    rng: StdRng,
    last_poll: Instant,
    /// The moves (from the start position) of this worker's last finished games, the starts
    /// of branched games (`branch_prob`).
    recent: std::collections::VecDeque<Vec<Move>>,
    /// The lines of `start_book` that games may start inside.
    starts: Arc<Vec<OpeningLine>>,
}

impl Worker {
    fn new_slot(&mut self) -> (Slot, Search<VariantGame>) {
        let cfg = &self.ctx.config;
        // a line to start inside: an earlier game of this worker (branching) or a book line
        let inside = if !self.recent.is_empty() && self.rng.gen::<f32>() < cfg.branch_prob {
            self.recent.get(self.rng.gen_range(0..self.recent.len())).map(|moves| (Game::startpos(self.ctx.variant), moves.as_slice()))
        } else if !self.starts.is_empty() && self.rng.gen::<f32>() < cfg.start_book_prob {
            let line = &self.starts[self.rng.gen_range(0..self.starts.len())];
            Some((Game::new(line.start), line.moves.as_slice()))
        } else {
            None
        };
        let game = match inside {
            Some((mut game, line)) => {
                // A uniformly random position of the line at which a move was played (so the
                // game is not over there; the line's own start when it has no moves) and below
                // the cap.
                let plies = self.rng.gen_range(0..line.len().min(cfg.max_plies as usize - 1).max(1));
                for &m in &line[..plies] {
                    game.play(m);
                }
                game
            }
            None => {
                let reduced = cfg.reduced_army_prob > 0.0 && self.rng.gen::<f32>() < cfg.reduced_army_prob;
                let mut game = reduced
                    .then(|| crate::reduced_army::reduced_army(self.ctx.variant, cfg.reduced_army_share, &mut self.rng))
                    .flatten()
                    .unwrap_or_else(|| Game::startpos(self.ctx.variant));
                let plies = self.rng.gen_range(0..=cfg.opening_random_plies);
                let rng = &mut self.rng;
                game.play_opening(plies, |moves| *moves.choose(rng).expect("play_opening never passes an empty list"));
                game
            }
        };
        // The opening's (or the line's replayed) moves have no search here: their prior and
        // value are unknown (NaN), which keeps the record's per-ply vectors aligned with its moves.
        let opening = game.moves().len();
        let search = Search::new(VariantGame::from_game(&game), self.search_config.clone(), self.rng.gen());
        let slot = Slot {
            game,
            rows: Vec::new(),
            priors: vec![f32::NAN; opening],
            values: vec![f32::NAN; opening],
            resign: ResignTracker::new(self.ctx.config.resign_config(), &mut self.rng),
            network: self.net.name().to_string(),
        };
        (slot, search)
    }

    fn poll_network(&mut self) -> Result<()> {
        if self.last_poll.elapsed().as_secs_f64() < self.ctx.config.poll_seconds {
            return Ok(());
        }
        self.last_poll = Instant::now();
        let latest = match self.ctx.run.latest_checkpoint() {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(()),
            // e.g. object storage unreachable for a while: play on with the current network
            Err(e) => {
                eprintln!("warning: looking for a new checkpoint in {}: {e}", self.ctx.run.location());
                return Ok(());
            }
        };
        if latest != self.net_path {
            // Write what the old network played before switching, so each chunk has one network.
            self.flush()?;
            let (net, meta) = load_net(&self.ctx, &latest)?;
            self.net = net;
            self.search_config = self.ctx.config.search_config_at(meta.step);
            self.net_path = latest;
            *self.ctx.stats.network.lock().unwrap_or_else(|e| e.into_inner()) = self.net.name().to_string();
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows.is_empty() && self.games.is_empty() {
            return Ok(());
        }
        let input = self.net.input();
        let meta = ChunkMeta {
            variant: self.ctx.variant.name().to_string(),
            encoding_version: ENCODING_VERSION,
            planes: input.shape(),
            policy_size: self.net.moves().len(),
            network: self.net.name().to_string(),
            worker: self.ctx.name.clone(),
            created_unix: now_unix(),
            short_term_horizons: self.ctx.config.short_term_horizons.clone(),
            source: vzero_data::Source::SelfPlay,
        };
        let run = &self.ctx.run;
        run.write_chunk(&self.ctx.name, &meta, &self.rows, &self.games).with_context(|| format!("writing a chunk into {}", run.location()))?;
        self.ctx.stats.rows.fetch_add(self.rows.len() as u64, Ordering::Relaxed);
        self.ctx.stats.chunks.fetch_add(1, Ordering::Relaxed);
        self.ctx.stats.chunk_written.ring();
        self.rows.clear();
        self.games.clear();
        Ok(())
    }

    /// Evaluates one batch of leaves gathered from every unfinished search.
    fn evaluate_batch(&mut self, leaves: &mut Vec<Leaf<VariantGame>>) -> Result<()> {
        leaves.clear();
        let cfg = &self.ctx.config;
        gather_batch(&mut self.searches, cfg.leaves_per_game, cfg.leaves_per_game * cfg.games_per_worker, leaves);
        if leaves.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        let states: Vec<&VariantGame> = leaves.iter().map(|l| &l.state).collect();
        let moves: Vec<&[Move]> = leaves.iter().map(|l| self.searches[l.handle.tree()].leaf_moves(l.handle)).collect();
        let eval = self.net.evaluate_batch(&states, &moves)?;
        drop(moves);
        for (i, leaf) in leaves.iter().enumerate() {
            self.searches[leaf.handle.tree()].apply(leaf.handle, eval.policy(i), leaf_value(eval, i));
        }
        let s = &self.ctx.stats;
        s.evals.fetch_add(leaves.len() as u64, Ordering::Relaxed);
        s.batches.fetch_add(1, Ordering::Relaxed);
        s.eval_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Plays the searched move of game `i`, recording the row; ends the game when it is over.
    fn advance(&mut self, i: usize) -> Result<()> {
        let Some(result) = self.searches[i].finish() else {
            return self.end_game(i, None);
        };
        let slot = &mut self.slots[i];
        let pos = *slot.game.position();
        let side = pos.side_to_move();
        // Every searched position is a value target; only full searches are policy targets
        // (playout cap randomisation), cheap ones get policy weight 0.
        let full = result.record_policy();
        let mut policy = Vec::new();
        if full {
            for (k, ms) in result.moves.iter().enumerate() {
                let p = result.policy_target[k];
                if p > 0.0 {
                    let idx = self.net.moves().encode(&pos, ms.mv).context("legal move without a policy index")?;
                    policy.push((idx as u32, p));
                }
            }
        }
        let chosen = result.chosen;
        let played = self.net.moves().encode(&pos, chosen).context("played move without a policy index")? as u32;
        let row = Row {
            planes: self.net.input().encode(&pos, slot.game.repetitions()),
            policy,
            search_value: result.root_value,
            ply: slot.game.moves().len() as u32,
            weight: 1.0,
            policy_weight: if full { 1.0 } else { 0.0 },
            material: material_target(&pos),
            material_weight: 1.0,
            ..Row::default()
        };
        let search_wdl = LeafValue { value: result.root_value, draw: result.root_draw }.wdl();
        slot.rows.push(GameRow { row, side, search_wdl, played });
        let prior = result.moves.iter().find(|m| m.mv == chosen).map_or(0.0, |m| m.prior);
        slot.priors.push(prior);
        slot.values.push(result.root_value);
        let ply = slot.game.moves().len() as u32;
        let resigner = slot.resign.observe(ply, side.index(), result.root_value);
        slot.game.play(chosen);
        self.ctx.stats.moves.fetch_add(1, Ordering::Relaxed);
        if let Some(p) = resigner {
            let loser = Color::from_index(p);
            return self.end_game(i, Some((Some(loser.flip()), "resign".to_string())));
        }
        let over = slot.game.result();
        if over.is_over() {
            let mover = slot.game.position().side_to_move();
            let winner = match over.outcome {
                Outcome::Win => Some(mover),
                Outcome::Loss => Some(mover.flip()),
                _ => None,
            };
            return self.end_game(i, Some((winner, over.reason.to_string())));
        }
        if slot.game.moves().len() as u32 >= self.ctx.config.max_plies {
            let cfg = &self.ctx.config;
            let (_, winner, reason) = capped_end(cfg.cap_outcome, cfg.cap_material_margin, cfg.cap_king_advance, slot.game.position());
            return self.end_game(i, Some((winner, reason.to_string())));
        }
        self.searches[i].advance(chosen);
        self.searches[i].set_ply(slot.game.moves().len() as u32);
        self.start_search(i);
        Ok(())
    }

    /// Starts the next search of game `i` with playout cap randomisation, at the budgets of the
    /// current network (progressive simulations: see `SelfplayConfig::playout_cap_at`).
    fn start_search(&mut self, i: usize) {
        let cap = self.search_config.playout_cap;
        let full = self.rng.gen::<f32>() < cap.full_prob;
        self.searches[i].start_with(if full { cap.full_sims } else { cap.cheap_sims }, full);
    }

    /// Finishes game `i` with (winner, reason) — `None` when the search found the root terminal —
    /// and starts a new one in its place.
    fn end_game(&mut self, i: usize, end: Option<(Option<Color>, String)>) -> Result<()> {
        let (winner, reason) = match end {
            Some(e) => e,
            None => {
                let r = self.slots[i].game.result();
                let mover = self.slots[i].game.position().side_to_move();
                let w = match r.outcome {
                    Outcome::Win => Some(mover),
                    Outcome::Loss => Some(mover.flip()),
                    _ => None,
                };
                (w, r.reason.to_string())
            }
        };
        if self.ctx.config.branch_prob > 0.0 {
            // remembered first, so the game that replaces it may branch from it
            if self.recent.len() == BRANCH_MEMORY {
                self.recent.pop_front();
            }
            self.recent.push_back(self.slots[i].game.moves().to_vec());
        }
        let (new_slot, new_search) = self.new_slot();
        let slot = std::mem::replace(&mut self.slots[i], new_slot);
        self.searches[i] = new_search;
        self.start_search(i);
        let plies = slot.game.moves().len() as u32;
        // A game stopped at max_plies has no result: its rows keep their own search's W/D/L as
        // value targets rather than teaching that aimless play draws.
        let end = if reason == MAX_PLIES { GameEnd::Truncated } else { GameEnd::Result(winner) };
        self.rows.extend(finish_game(slot.rows, end, plies, &self.ctx.config.short_term_horizons));
        let start = *slot.game.start();
        let moves = slot.game.uci_moves();
        let result = match winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        };
        self.games.push(GameRecord {
            variant: self.ctx.variant.name().to_string(),
            start_fen: start.fen(),
            moves,
            result: result.to_string(),
            reason: reason.clone(),
            network: slot.network.clone(),
            white: slot.network.clone(),
            black: slot.network,
            priors: slot.priors,
            values: slot.values,
        });
        let s = &self.ctx.stats;
        s.games.fetch_add(1, Ordering::Relaxed);
        s.results[match winner {
            Some(Color::White) => 0,
            None => 1,
            Some(Color::Black) => 2,
        }]
        .fetch_add(1, Ordering::Relaxed);
        if reason == "resign" {
            s.resigned.fetch_add(1, Ordering::Relaxed);
        }
        s.false_resign.lock().unwrap_or_else(|e| e.into_inner()).record(&slot.resign, winner.map(|c| c.index()));
        if self.rows.len() >= self.ctx.config.rows_per_chunk {
            self.flush()?;
        }
        Ok(())
    }

    fn games_left(&self) -> bool {
        match self.ctx.max_games {
            Some(max) => self.ctx.stats.games.load(Ordering::Relaxed) < max,
            None => true,
        }
    }

    fn run(&mut self) -> Result<()> {
        let mut leaves = Vec::new();
        while !self.ctx.stop.load(Ordering::Relaxed) && self.games_left() {
            self.poll_network()?;
            self.evaluate_batch(&mut leaves)?;
            for i in 0..self.searches.len() {
                if self.searches[i].is_done() {
                    self.advance(i)?;
                }
            }
        }
        self.flush()
    }
}

/// Runs one worker until `ctx.stop` is set or the game limit is reached. Needs a checkpoint in
/// the run (waits for the first one); writes every finished game before returning.
pub fn run_worker(ctx: WorkerContext) -> Result<()> {
    vzero_model::set_threads(1);
    ctx.config.validate().map_err(anyhow::Error::msg)?;
    let Some(net_path) = wait_for_network(&ctx)? else { return Ok(()) };
    let (net, meta) = load_net(&ctx, &net_path)?;
    *ctx.stats.network.lock().unwrap_or_else(|e| e.into_inner()) = net.name().to_string();
    let mut w = Worker {
        search_config: ctx.config.search_config_at(meta.step),
        rng: StdRng::seed_from_u64(ctx.seed),
        net,
        net_path,
        slots: Vec::new(),
        searches: Vec::new(),
        rows: Vec::new(),
        games: Vec::new(),
        last_poll: Instant::now(),
        recent: std::collections::VecDeque::with_capacity(BRANCH_MEMORY),
        starts: ctx.starts.clone(),
        ctx,
    };
    for i in 0..w.ctx.config.games_per_worker {
        let (slot, search) = w.new_slot();
        w.slots.push(slot);
        w.searches.push(search);
        w.start_search(i);
    }
    w.run()
}
