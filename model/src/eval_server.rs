//! One evaluator per process: the search leaves of many threads (self-play workers) gathered
//! into one forward pass, as KataGo's neural-net server threads and lc0's multiplexing backend
//! do. A GPU runs one large batch far better than many small ones on one stream.
//!
//! Clients ([`EvalClient`], one per thread) encode their own leaves (that work stays parallel)
//! and hand the planes and legal moves to the server; `executors` server threads each collect
//! the requests waiting, wait at most `max_wait` for the clients not yet in (never when every
//! client is in, so a lone client is not delayed), run one forward pass per network and hand
//! each client its share. Networks are named by checkpoint path ([`NetKey`]); each executor
//! loads a checkpoint once, on first use, and keeps the two most recent (a run switching
//! networks has clients on the old and on the new one for a moment).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, unbounded, Receiver, RecvTimeoutError, Sender};
use tch::Device;
use vzero_rules::Variant;

use crate::error::{ModelError, Result};
use crate::variant_net::load_model;
use crate::model::{Evaluation, LegalMoves, Model};

/// A network the server evaluates: a checkpoint of a variant on a device.
#[derive(Clone, Debug)]
pub struct NetKey {
    /// The checkpoint's metadata file (`gen-*.json`).
    pub path: PathBuf,
    /// Its variant (checked when it loads).
    pub variant: Variant,
    /// Where the executors run it.
    pub device: Device,
}

impl PartialEq for NetKey {
    fn eq(&self, other: &NetKey) -> bool {
        self.path == other.path && self.device == other.device && self.variant.name() == other.variant.name()
    }
}

/// How the server batches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerConfig {
    /// Server threads, each with its own copy of each network: one collects the next batch
    /// while another runs a forward pass (on a CPU, one per core keeps them all busy).
    pub executors: usize,
    /// Positions at which a batch stops collecting.
    pub max_batch: usize,
    /// Longest wait, after the first request of a batch, for clients not yet in.
    pub max_wait: Duration,
    /// Torch threads of each executor.
    pub threads: usize,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig { executors: 2, max_batch: 4096, max_wait: Duration::from_millis(2), threads: 1 }
    }
}

/// Counters of a server, for progress lines and benchmarks.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Forward passes run (one per network per batch).
    pub forwards: AtomicU64,
    /// Positions evaluated.
    pub positions: AtomicU64,
    /// Client requests answered.
    pub requests: AtomicU64,
    /// Nanoseconds the executors spent in forward passes (including loading and splitting).
    pub busy_nanos: AtomicU64,
}

impl ServerStats {
    /// Average positions per forward pass so far.
    pub fn positions_per_forward(&self) -> f64 {
        self.positions.load(Ordering::Relaxed) as f64 / self.forwards.load(Ordering::Relaxed).max(1) as f64
    }
}

/// A client's request: its buffers travel to the server and back, so nothing is allocated per
/// call once they have grown.
struct Request {
    key: Arc<NetKey>,
    planes: Vec<f32>,
    legal: LegalMoves,
    eval: Evaluation,
    reply: Sender<Reply>,
}

struct Reply {
    planes: Vec<f32>,
    legal: LegalMoves,
    eval: Evaluation,
    result: std::result::Result<(), String>,
}

/// What the clients and executors share.
struct Shared {
    /// Clients alive.
    clients: AtomicUsize,
    /// Requests taken by an executor and not yet answered.
    in_flight: AtomicUsize,
    /// Held by the executor collecting a batch (the others run theirs meanwhile).
    collect: Mutex<()>,
    stats: ServerStats,
}

/// The evaluation server of a process. Dropping it leaves the executors serving the clients
/// still alive; they end with the last client.
pub struct EvalServer {
    tx: Sender<Request>,
    shared: Arc<Shared>,
    config: ServerConfig,
}

impl std::fmt::Debug for EvalServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalServer").field("config", &self.config).field("stats", &self.shared.stats).finish()
    }
}

impl EvalServer {
    /// Starts `config.executors` server threads.
    pub fn start(config: ServerConfig) -> Result<EvalServer> {
        if config.executors == 0 || config.max_batch == 0 || config.threads == 0 {
            return Err(ModelError::Config(format!("evaluation server: executors, max_batch and threads must be at least 1 ({config:?})")));
        }
        let (tx, rx) = unbounded();
        let shared = Arc::new(Shared { clients: AtomicUsize::new(0), in_flight: AtomicUsize::new(0), collect: Mutex::new(()), stats: ServerStats::default() });
        for i in 0..config.executors {
            let (rx, shared) = (rx.clone(), shared.clone());
            std::thread::Builder::new()
                .name(format!("eval-server-{i}"))
                .spawn(move || Executor { rx, shared, config, nets: Vec::new(), planes: Vec::new(), legal: LegalMoves::new(), eval: Evaluation::default() }.run())
                .map_err(|e| ModelError::Device(format!("starting an evaluation server thread: {e}")))?;
        }
        Ok(EvalServer { tx, shared, config })
    }

    /// A client for one thread.
    pub fn client(&self) -> EvalClient {
        self.shared.clients.fetch_add(1, Ordering::SeqCst);
        let (reply_tx, reply_rx) = bounded(1);
        EvalClient { tx: self.tx.clone(), reply_tx, reply_rx, shared: self.shared.clone() }
    }

    /// The server's counters.
    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }

    /// Its settings.
    pub fn config(&self) -> ServerConfig {
        self.config
    }
}

/// One thread's handle on the server.
pub struct EvalClient {
    tx: Sender<Request>,
    reply_tx: Sender<Reply>,
    reply_rx: Receiver<Reply>,
    shared: Arc<Shared>,
}

impl Drop for EvalClient {
    fn drop(&mut self) {
        self.shared.clients.fetch_sub(1, Ordering::SeqCst);
    }
}

impl EvalClient {
    /// Evaluates `legal.len()` positions (`planes` B x C x H x W, as [`Model::evaluate_into`]
    /// takes them) with the network `key` into `out`, in a batch with other clients' positions.
    /// With no positions it only loads and checks the network. Blocks until the answer.
    pub fn evaluate(&mut self, key: &Arc<NetKey>, planes: &mut Vec<f32>, legal: &mut LegalMoves, out: &mut Evaluation) -> Result<()> {
        let request = Request {
            key: key.clone(),
            planes: std::mem::take(planes),
            legal: std::mem::take(legal),
            eval: std::mem::take(out),
            reply: self.reply_tx.clone(),
        };
        let stopped = || ModelError::Device("the evaluation server stopped".into());
        self.tx.send(request).map_err(|_| stopped())?;
        let reply = self.reply_rx.recv().map_err(|_| stopped())?;
        (*planes, *legal, *out) = (reply.planes, reply.legal, reply.eval);
        reply.result.map_err(ModelError::Device)
    }

    /// The server's counters.
    pub fn stats(&self) -> &ServerStats {
        &self.shared.stats
    }
}

/// A server thread: its networks and combined buffers.
struct Executor {
    rx: Receiver<Request>,
    shared: Arc<Shared>,
    config: ServerConfig,
    /// Loaded networks, most recently used last (at most two).
    nets: Vec<(Arc<NetKey>, Model)>,
    planes: Vec<f32>,
    legal: LegalMoves,
    eval: Evaluation,
}

impl Executor {
    fn run(mut self) {
        crate::device::set_threads(self.config.threads);
        while let Some(mut batch) = self.collect() {
            let t = Instant::now();
            let n = batch.len();
            // one forward pass per network, in order of first appearance
            while !batch.is_empty() {
                let key = batch[0].key.clone();
                let (same, rest): (Vec<Request>, Vec<Request>) = batch.into_iter().partition(|r| *r.key == *key);
                batch = rest;
                self.serve(&key, same);
            }
            self.shared.stats.busy_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            self.shared.in_flight.fetch_sub(n, Ordering::SeqCst);
        }
    }

    /// The next batch: the first request (blocking), then what comes until every client is in,
    /// `max_batch` positions are reached or `max_wait` has passed. `None` once every client and
    /// the server are gone.
    fn collect(&self) -> Option<Vec<Request>> {
        let _turn = self.shared.collect.lock().unwrap_or_else(|e| e.into_inner());
        let first = self.rx.recv().ok()?;
        let deadline = Instant::now() + self.config.max_wait;
        let mut positions = first.legal.len();
        let mut batch = vec![first];
        while positions < self.config.max_batch {
            let elsewhere = self.shared.in_flight.load(Ordering::SeqCst);
            if batch.len() + elsewhere >= self.shared.clients.load(Ordering::SeqCst) {
                // every client is in (or being answered): drain what is queued, wait no more
                match self.rx.try_recv() {
                    Ok(r) => {
                        positions += r.legal.len();
                        batch.push(r);
                        continue;
                    }
                    Err(_) => break,
                }
            }
            match self.rx.recv_deadline(deadline) {
                Ok(r) => {
                    positions += r.legal.len();
                    batch.push(r);
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        self.shared.in_flight.fetch_add(batch.len(), Ordering::SeqCst);
        Some(batch)
    }

    /// The network `key`, loaded on first use.
    fn net(&mut self, key: &Arc<NetKey>) -> Result<&Model> {
        if let Some(i) = self.nets.iter().position(|(k, _)| **k == **key) {
            let entry = self.nets.remove(i);
            self.nets.push(entry);
        } else {
            let (model, _) = load_model(&key.path, key.variant, key.device)?;
            if self.nets.len() >= 2 {
                self.nets.remove(0);
            }
            self.nets.push((key.clone(), model));
        }
        Ok(&self.nets.last().expect("just pushed").1)
    }

    /// Evaluates the requests of one network in one forward pass and answers each.
    fn serve(&mut self, key: &Arc<NetKey>, mut requests: Vec<Request>) {
        let result = self.forward(key, &requests);
        let stats = &self.shared.stats;
        stats.requests.fetch_add(requests.len() as u64, Ordering::Relaxed);
        let mut first = 0;
        for mut r in requests.drain(..) {
            let b = r.legal.len();
            let result = match &result {
                Ok(()) => {
                    split_into(&self.eval, first, b, &mut r.eval);
                    Ok(())
                }
                Err(e) => Err(e.clone()),
            };
            first += b;
            // a client gone meanwhile (its thread ended) needs no answer
            let _ = r.reply.send(Reply { planes: r.planes, legal: r.legal, eval: r.eval, result });
        }
    }

    fn forward(&mut self, key: &Arc<NetKey>, requests: &[Request]) -> std::result::Result<(), String> {
        let (mut planes, mut legal, mut eval) = (std::mem::take(&mut self.planes), std::mem::take(&mut self.legal), std::mem::take(&mut self.eval));
        planes.clear();
        legal.clear();
        for r in requests {
            planes.extend_from_slice(&r.planes);
            for i in 0..r.legal.len() {
                legal.push(r.legal.get(i));
            }
        }
        let result = (|| {
            let model = self.net(key)?;
            if legal.is_empty() {
                return Ok(());
            }
            model.evaluate_into(&planes, None, &legal, &mut eval)?;
            let stats = &self.shared.stats;
            stats.forwards.fetch_add(1, Ordering::Relaxed);
            stats.positions.fetch_add(legal.len() as u64, Ordering::Relaxed);
            Ok::<(), ModelError>(())
        })()
        .map_err(|e| format!("evaluating with {}: {e}", key.path.display()));
        (self.planes, self.legal, self.eval) = (planes, legal, eval);
        result
    }
}

/// Positions `first..first + n` of `all` into `out`.
fn split_into(all: &Evaluation, first: usize, n: usize, out: &mut Evaluation) {
    out.offsets.clear();
    out.policy.clear();
    out.wdl.clear();
    out.moves_left.clear();
    if n == 0 {
        out.offsets.push(0);
        return;
    }
    let (a, b) = (all.offsets[first], all.offsets[first + n]);
    out.offsets.extend(all.offsets[first..=first + n].iter().map(|o| o - a));
    out.policy.extend_from_slice(&all.policy[a..b]);
    out.wdl.extend_from_slice(&all.wdl[first..first + n]);
    if !all.moves_left.is_empty() {
        out.moves_left.extend_from_slice(&all.moves_left[first..first + n]);
    }
}
