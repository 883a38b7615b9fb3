//! `vzero uci`: a UCI engine speaking Fairy-Stockfish's conventions, as pychess's tools,
//! lichess-bot-style bridges and variantfishtest drive it.
//!
//! * `uci` → `id`, the options (listed in the README, "Play on pychess.org"), `uciok`.
//! * `setoption name UCI_Variant value V` prints Fairy-Stockfish's
//!   `info string variant V files F ranks R pocket P template fairy startpos FEN`;
//!   `VariantPath` loads a vzero variant definition file (`.toml`) whose variant `UCI_Variant`
//!   can then select.
//! * `position startpos|fen FEN [moves …]` (FSF notation; the FEN may carry EPD operations,
//!   which are ignored, as variantfishtest sends its book lines).
//! * `go [wtime btime winc binc movestogo] [nodes N] [movetime MS] [depth D] [infinite] [ponder]`
//!   searches in a thread ([`crate::think`]); `stop`, `ponderhit` and `isready` are answered
//!   during it. Clock play follows [`crate::timeman`].
//! * `info depth D seldepth S multipv K score cp X|mate N [wdl W D L] nodes N nps N hashfull H
//!   time MS pv …` for the `MultiPV` best lines about twice a second and at the end (`wdl` with
//!   `UCI_ShowWDL`); then `bestmove M [ponder P]`. A finished game answers
//!   `info depth 0 score mate 0` (the side to move has lost) or `score cp 0` (draw), then
//!   `bestmove (none)`.
//! * `d` prints `Fen: …` and `Key: …`; `ucinewgame` forgets the search trees. When a position
//!   continues the last one searched, the trees are kept (`info string tree reuse: N visits
//!   kept` before the last info lines).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;
use vzero_mcts::MaterialEvaluator;
use vzero_openings::{parse_epd, Book};
use vzero_rules::{echo, Color, Game, Outcome, Position, Variant};

use crate::search::{value_to_cp, Evaluator, NetEvaluator, MAX_SIMS};
use crate::think::{GoLimits, Report, ThinkConfig, Thinker};
use crate::timeman::Clock;

/// How `vzero uci` starts (its command-line arguments).
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Initial variant (a GUI changes it with `UCI_Variant`).
    pub variant: Variant,
    /// Checkpoint evaluating the leaves (`ModelPath`); `None`: uniform priors and material value.
    pub model: Option<PathBuf>,
    /// Simulations of a `go` without limits (`Simulations`).
    pub sims: u32,
    /// Opening book (`Book`).
    pub book: Option<Book>,
    /// Book moves are played below this ply (`BookPlies`).
    pub book_plies: usize,
}

/// Where the engine writes; shared with the search thread. Each line is written and flushed whole.
#[derive(Clone)]
struct Out(Arc<Mutex<Box<dyn Write + Send>>>);

impl Out {
    fn say(&self, line: &str) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    ponder: Arc<AtomicBool>,
    handle: JoinHandle<Thinker>,
}

/// What a thinker was built for: model, variant, threads.
type ThinkerKey = (Option<PathBuf>, &'static str, usize);

struct Server {
    out: Out,
    variant: Variant,
    custom: Vec<Variant>,
    game: Option<Game>,
    model: Option<PathBuf>,
    sims: u32,
    threads: usize,
    multipv: usize,
    show_wdl: bool,
    ponder_opt: bool,
    analyse_mode: bool,
    hash_mb: usize,
    overhead_ms: u64,
    /// The thinker when no search runs (the search thread owns it meanwhile) and its key.
    thinker: Option<Thinker>,
    thinker_key: Option<ThinkerKey>,
    running: Option<Running>,
    book: Option<Book>,
    book_plies: usize,
    seed: u64,
    /// `Skill Level` 0..=20 (20: full strength); see [`skill_sims`].
    skill: u32,
}

/// Simulations a search may use at `Skill Level` `level` (0..=19; 20 and above: no cap):
/// 4 · 2^(level/2), from 4 at level 0 to 2,896 at level 19. Every level still searches (never a
/// move without evaluation); fewer simulations play weaker, on the scale the README's table of
/// `Skill Level` measured with `vzero match` against alphabeta:2.
pub fn skill_sims(level: u32) -> Option<u64> {
    (level < MAX_SKILL).then(|| (4.0 * 2f64.powf(f64::from(level) / 2.0)).round() as u64)
}

/// The strongest `Skill Level` (no cap on simulations).
pub const MAX_SKILL: u32 = 20;

/// Runs the engine on `input` until `quit` or the end of the input, writing to `output`.
pub fn serve(opts: ServerOptions, input: impl BufRead, output: impl Write + Send + 'static) -> Result<()> {
    vzero_model::set_threads(1);
    let builtin = vzero_rules::variant::builtin_names().contains(&opts.variant.name());
    let mut s = Server {
        out: Out(Arc::new(Mutex::new(Box::new(output)))),
        variant: opts.variant,
        custom: if builtin { Vec::new() } else { vec![opts.variant] },
        game: Some(Game::startpos(opts.variant)),
        model: opts.model,
        sims: opts.sims.max(1),
        threads: 1,
        multipv: 1,
        show_wdl: false,
        ponder_opt: false,
        analyse_mode: false,
        hash_mb: ThinkConfig::default().hash_mb,
        overhead_ms: ThinkConfig::default().overhead.as_millis() as u64,
        thinker: None,
        thinker_key: None,
        running: None,
        book: opts.book,
        book_plies: opts.book_plies,
        seed: 0,
        skill: MAX_SKILL,
    };
    for line in input.lines() {
        let line = line?;
        let line = line.trim();
        let cmd = line.split_whitespace().next().unwrap_or("");
        match cmd {
            "uci" => s.header(),
            "isready" => s.out.say("readyok"),
            "ucinewgame" => {
                s.stop_search();
                if let Some(t) = s.thinker.as_mut() {
                    t.clear();
                }
                s.game = Some(Game::startpos(s.variant));
            }
            "setoption" => {
                s.stop_search();
                s.set_option(line);
            }
            "position" => {
                s.stop_search();
                s.position(line);
            }
            "go" => {
                s.stop_search();
                s.go(line);
            }
            "stop" => s.stop_search(),
            "ponderhit" => {
                if let Some(r) = &s.running {
                    r.ponder.store(false, Ordering::SeqCst);
                }
            }
            "quit" => break,
            "d" => match &s.game {
                Some(g) => {
                    s.out.say(&format!("Fen: {}", g.position().fen()));
                    s.out.say(&format!("Key: {:016X}", g.position().key()));
                }
                None => s.out.say("info string no valid position"),
            },
            "" | "debug" | "register" => {}
            _ => s.out.say(&format!("info string unknown command '{}'", echo(cmd))),
        }
    }
    s.stop_search();
    Ok(())
}

/// Fairy-Stockfish's line announcing a variant.
pub fn variant_info(v: Variant) -> String {
    let pocket = v.hand_types().len();
    format!(
        "info string variant {} files {} ranks {} pocket {pocket} template fairy startpos {}",
        v.name(),
        v.files(),
        v.ranks(),
        Position::startpos(v).fen()
    )
}

/// The `info` lines of a report: the first `multipv` lines, each `info depth … pv …`.
pub fn info_lines(r: &Report, root: &Position, multipv: usize, show_wdl: bool) -> Vec<String> {
    let shown = &r.lines[..r.lines.len().min(multipv.max(1))];
    let seldepth = shown.iter().map(|l| l.pv.len()).max().unwrap_or(1);
    shown
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let wdl = if show_wdl {
                let [w, d, x] = l.wdl();
                format!(" wdl {w} {d} {x}")
            } else {
                String::new()
            };
            format!(
                "info depth {} seldepth {seldepth} multipv {} score {}{wdl} nodes {} nps {} hashfull {} time {} pv {}",
                l.pv.len(),
                k + 1,
                l.score(),
                r.sims,
                r.nps(),
                r.hashfull,
                r.elapsed.as_millis(),
                uci_line(root, &l.pv)
            )
        })
        .collect()
}

/// Moves in UCI notation, played one after another from `pos`.
pub fn uci_line(pos: &Position, moves: &[vzero_rules::Move]) -> String {
    let mut p = *pos;
    let mut s = Vec::with_capacity(moves.len());
    for &m in moves {
        s.push(p.uci(m));
        p.play(m);
    }
    s.join(" ")
}

fn wait_stop(wait: &dyn Fn() -> bool, stop: &AtomicBool) {
    while wait() && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

impl Server {
    fn header(&self) {
        let o = &self.out;
        o.say(&format!("id name vzero {}", env!("CARGO_PKG_VERSION")));
        o.say("id author the vzero developers");
        let mut names: Vec<&str> = vzero_rules::variant::builtin_names();
        names.extend(self.custom.iter().map(|v| v.name()));
        let vars: String = names.iter().map(|n| format!(" var {n}")).collect();
        o.say(&format!("option name UCI_Variant type combo default {}{vars}", self.variant.name()));
        o.say("option name VariantPath type string default <empty>");
        let model = self.model.as_ref().map_or("<empty>".to_string(), |p| p.display().to_string());
        o.say(&format!("option name ModelPath type string default {model}"));
        o.say("option name Threads type spin default 1 min 1 max 64");
        o.say(&format!("option name Hash type spin default {} min 1 max 65536", self.hash_mb));
        o.say("option name MultiPV type spin default 1 min 1 max 500");
        o.say("option name UCI_ShowWDL type check default false");
        o.say("option name Ponder type check default false");
        o.say(&format!("option name Move Overhead type spin default {} min 0 max 5000", self.overhead_ms));
        o.say(&format!("option name Simulations type spin default {} min 1 max {MAX_SIMS}", self.sims));
        o.say(&format!("option name Skill Level type spin default {MAX_SKILL} min 0 max {MAX_SKILL}"));
        o.say("option name Book type string default <empty>");
        o.say(&format!("option name BookPlies type spin default {} min 0 max 1000", self.book_plies));
        o.say("option name UCI_AnalyseMode type check default false");
        o.say("option name UCI_Chess960 type check default false");
        o.say("option name Clear Hash type button");
        o.say("uciok");
    }

    fn stop_search(&mut self) {
        if let Some(r) = self.running.take() {
            r.stop.store(true, Ordering::SeqCst);
            if let Ok(t) = r.handle.join() {
                self.thinker = Some(t);
            }
        }
    }

    fn error(&self, msg: &str) {
        // inputs are echoed bounded where they are named; this bounds the rest
        self.out.say(&format!("info string error: {}", vzero_rules::echo_within(msg, vzero_rules::MESSAGE_MAX)));
    }

    fn find_variant(&self, name: &str) -> Result<Variant> {
        if let Some(v) = self.custom.iter().find(|v| v.name().eq_ignore_ascii_case(name)) {
            return Ok(*v);
        }
        Ok(Variant::load(name)?)
    }

    fn set_option(&mut self, line: &str) {
        // setoption name <id> [value <x>]; names are case-insensitive and may contain spaces
        let rest = line.strip_prefix("setoption").unwrap_or("").trim();
        let rest = rest.strip_prefix("name").unwrap_or(rest).trim();
        let (name, value) = match rest.split_once(" value ") {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (rest.strip_suffix(" value").unwrap_or(rest).trim(), ""),
        };
        let empty = value.is_empty() || value == "<empty>";
        let flag = |v: &str| -> Option<bool> {
            match v.to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        };
        let spin = |min: u64, max: u64| -> Option<u64> { value.parse::<u64>().ok().filter(|n| (min..=max).contains(n)) };
        let bad = |what: &str| format!("{} {}: {what}", echo(name), echo(value));
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => match self.find_variant(value) {
                Ok(v) => {
                    self.variant = v;
                    self.game = Some(Game::startpos(v));
                    self.out.say(&variant_info(v));
                }
                Err(e) => self.error(&bad(&e.to_string())),
            },
            "variantpath" if empty => {}
            "variantpath" => match Variant::load(value) {
                Ok(v) => {
                    if !self.custom.iter().any(|c| c.name() == v.name()) {
                        self.custom.push(v);
                    }
                }
                Err(e) => self.error(&bad(&e.to_string())),
            },
            "modelpath" if empty => self.model = None,
            // checked now, so that a GUI hears of a missing or damaged file at once (not at the
            // first `go`); the previous network stays
            "modelpath" => match vzero_model::NetEvaluator::load(std::path::Path::new(value), self.variant, vzero_model::Device::Cpu) {
                Ok(_) => self.model = Some(PathBuf::from(value)),
                Err(e) => self.error(&format!("ModelPath {}: {e:#}; keeping {}", echo(value), self.model.as_ref().map_or("no network".to_string(), |p| p.display().to_string()))),
            },
            "skill level" => match spin(0, u64::from(MAX_SKILL)) {
                Some(n) => self.skill = n as u32,
                None => self.error(&bad(&format!("not a number from 0 to {MAX_SKILL}"))),
            },
            "threads" => match spin(1, 64) {
                Some(n) => self.threads = n as usize,
                None => self.error(&bad("not a number from 1 to 64")),
            },
            "hash" => match spin(1, 65536) {
                Some(n) => self.hash_mb = n as usize,
                None => self.error(&bad("not a number from 1 to 65536")),
            },
            "multipv" => match spin(1, 500) {
                Some(n) => self.multipv = n as usize,
                None => self.error(&bad("not a number from 1 to 500")),
            },
            "move overhead" => match spin(0, 5000) {
                Some(n) => self.overhead_ms = n,
                None => self.error(&bad("not a number from 0 to 5000")),
            },
            "simulations" => match spin(1, MAX_SIMS) {
                Some(n) => self.sims = n as u32,
                None => self.error(&bad("not a positive number")),
            },
            "uci_showwdl" | "ponder" | "uci_analysemode" | "uci_chess960" => match flag(value) {
                Some(b) => match name.to_ascii_lowercase().as_str() {
                    "uci_showwdl" => self.show_wdl = b,
                    "ponder" => self.ponder_opt = b,
                    "uci_analysemode" => self.analyse_mode = b,
                    _ if b => self.error(&bad("Chess960 is not supported")),
                    _ => {}
                },
                None => self.error(&bad("expected true or false")),
            },
            "clear hash" => {
                if let Some(t) = self.thinker.as_mut() {
                    t.clear();
                }
            }
            "book" if empty => self.book = None,
            "book" => match Book::load(std::path::Path::new(value)) {
                Ok(b) => self.book = Some(b),
                Err(e) => self.error(&format!("Book {value}: {e:#}")),
            },
            "bookplies" => match value.parse::<usize>() {
                Ok(n) => self.book_plies = n,
                _ => self.error(&bad("not a number")),
            },
            _ => self.out.say(&format!("info string unknown option '{}'", echo(name))),
        }
    }

    fn position(&mut self, line: &str) {
        let rest = line.strip_prefix("position").unwrap_or("").trim();
        let (setup, moves) = match rest.split_once(" moves") {
            Some((s, m)) => (s.trim(), m.trim()),
            None => (rest.strip_suffix("moves").unwrap_or(rest).trim(), ""),
        };
        let game = if setup == "startpos" {
            Ok(Game::startpos(self.variant))
        } else if let Some(fen) = setup.strip_prefix("fen ") {
            parse_epd(self.variant, fen).map(|(g, _)| g).map_err(|e| format!("position fen: {e:#}"))
        } else {
            Err("expected 'position startpos|fen <FEN> [moves …]'".to_string())
        };
        let game = game.and_then(|mut g| {
            for (i, m) in moves.split_whitespace().enumerate() {
                g.play_uci(m).map_err(|e| format!("position: move {} '{m}': {e}", i + 1))?;
            }
            Ok(g)
        });
        match game {
            Ok(g) => self.game = Some(g),
            Err(e) => {
                self.error(&e);
                self.game = None;
            }
        }
    }

    /// A weighted random book move when a book is set and the game is young enough, with the
    /// mover's score in the book and the line it starts (the book's best reply, if any).
    fn book_move(&mut self, game: &Game) -> Option<(vzero_rules::Move, f64, String)> {
        use rand::SeedableRng;
        if self.analyse_mode || game.result().is_over() {
            return None;
        }
        let book = self.book.as_mut()?;
        book.set_max_plies(self.book_plies);
        let start = game.start();
        let ply = 2 * (start.fullmove_number().max(1) as usize - 1) + (start.side_to_move() == Color::Black) as usize + game.moves().len();
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed ^ 0xB00C ^ (u64::from(std::process::id()) << 20));
        self.seed += 1;
        let m = book.pick(game.position(), ply, &mut rng)?;
        let uci = game.position().uci(m);
        let score = book.moves(game.position()).iter().find(|b| b.uci == uci).map_or(0.5, |b| b.score);
        let mut next = *game.position();
        next.play(m);
        // a one-move PV with `cp 0` reads as a draw to variantfishtest: add the book's reply
        let line = match book.moves(&next).first().filter(|r| next.parse_uci(&r.uci).is_ok()) {
            Some(r) => format!("{uci} {}", r.uci),
            None => uci,
        };
        Some((m, score, line))
    }

    fn thinker(&mut self) -> Thinker {
        let key = (self.model.clone(), self.variant.name(), self.threads);
        if self.thinker_key.as_ref() == Some(&key) {
            if let Some(t) = self.thinker.take() {
                return t;
            }
        }
        let mut evals = Vec::with_capacity(self.threads);
        for _ in 0..self.threads {
            evals.push(match &self.model {
                None => Evaluator::Material(MaterialEvaluator::default()),
                Some(p) => match NetEvaluator::load(p, self.variant, vzero_model::Device::Cpu) {
                    Ok((n, _)) => Evaluator::Net(Box::new(n)),
                    Err(e) => {
                        self.error(&format!("ModelPath {}: {e:#}; searching without a network", p.display()));
                        Evaluator::Material(MaterialEvaluator::default())
                    }
                },
            });
        }
        self.seed += 1;
        self.thinker_key = Some(key);
        Thinker::new(evals, ThinkConfig::default(), self.seed)
    }

    fn go(&mut self, line: &str) {
        let toks: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut limits = GoLimits::default();
        let mut ponder = false;
        let (mut wtime, mut btime, mut winc, mut binc, mut mtg) = (None, None, 0u64, 0u64, None);
        // A limit must be a positive number (a clock may be 0 or negative: a flagged clock
        // plays at once); anything else is named in an error line and ignored.
        let out = self.out.clone();
        let num = |i: usize, min: i64| -> Option<u64> {
            let raw = toks.get(i + 1).copied().unwrap_or("");
            match raw.parse::<i64>() {
                Ok(x) if x >= min => Some(x.max(0) as u64),
                _ => {
                    let what = if min > 0 { "a positive number" } else { "a number" };
                    out.say(&format!("info string error: go {} {}: expected {what}; ignored", toks[i], echo(raw)));
                    None
                }
            }
        };
        let mut i = 0;
        while i < toks.len() {
            let mut skip = 2;
            match toks[i] {
                "nodes" => limits.nodes = num(i, 1),
                "movetime" => limits.movetime = num(i, 1).map(Duration::from_millis),
                "depth" => limits.depth = num(i, 1).map(|d| d as usize),
                "wtime" => wtime = num(i, i64::MIN),
                "btime" => btime = num(i, i64::MIN),
                "winc" => winc = num(i, 0).unwrap_or(0),
                "binc" => binc = num(i, 0).unwrap_or(0),
                "movestogo" => mtg = num(i, 1).map(|m| m as u32),
                "infinite" => {
                    limits.infinite = true;
                    skip = 1;
                }
                "ponder" => {
                    ponder = true;
                    skip = 1;
                }
                "searchmoves" => {
                    self.out.say("info string searchmoves is not supported; searching every move");
                    skip = 1;
                }
                _ => skip = 1,
            }
            i += skip;
        }
        let Some(game) = self.game.clone() else {
            self.error("no valid position (the last 'position' command failed)");
            self.out.say("bestmove (none)");
            return;
        };
        let white = game.position().side_to_move() == Color::White;
        let (mytime, myinc) = if white { (wtime, winc) } else { (btime, binc) };
        if let Some(t) = mytime {
            limits.clock = Some(Clock { time: Duration::from_millis(t), inc: Duration::from_millis(myinc), moves_to_go: mtg });
        }
        if !limits.infinite && !ponder && limits.nodes.is_none() && limits.movetime.is_none() && limits.depth.is_none() && limits.clock.is_none() {
            limits.nodes = Some(u64::from(self.sims));
        }
        if let Some(cap) = skill_sims(self.skill) {
            limits.nodes = Some(limits.nodes.map_or(cap, |n| n.min(cap)));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let ponder_flag = Arc::new(AtomicBool::new(ponder));
        let (stop2, ponder2, out) = (stop.clone(), ponder_flag.clone(), self.out.clone());
        let infinite = limits.infinite;
        let book = if ponder { None } else { self.book_move(&game) };
        let mut thinker = self.thinker();
        let (multipv, show_wdl) = (self.multipv, self.show_wdl);
        thinker.set_multipv(multipv);
        thinker.set_hash_mb(self.hash_mb);
        thinker.set_overhead(Duration::from_millis(self.overhead_ms));
        let handle = std::thread::spawn(move || {
            let root = *game.position();
            let waiting = || infinite || ponder2.load(Ordering::SeqCst);
            if let Some((m, score, line)) = book {
                let text = root.uci(m);
                out.say(&format!("info string book move {text}"));
                let cp = value_to_cp((2.0 * score - 1.0) as f32);
                let depth = line.split(' ').count();
                out.say(&format!("info depth {depth} seldepth {depth} multipv 1 score cp {cp} nodes 0 nps 0 time 0 pv {line}"));
                wait_stop(&waiting, &stop2);
                out.say(&format!("bestmove {text}"));
                return thinker;
            }
            if game.result().is_over() {
                let r = game.result();
                let score = match r.outcome {
                    Outcome::Loss => "mate 0".to_string(),
                    Outcome::Win => "cp 12800".to_string(),
                    _ => "cp 0".to_string(),
                };
                out.say(&format!("info depth 0 score {score}"));
                out.say(&format!("info string game over: {r}"));
                wait_stop(&waiting, &stop2);
                out.say("bestmove (none)");
                return thinker;
            }
            let mut report = |r: &Report| {
                for l in info_lines(r, &root, multipv, show_wdl) {
                    out.say(&l);
                }
            };
            let result = thinker.think(&game, &limits, &stop2, Some(&ponder2), Duration::from_millis(500), &mut report);
            let best = match result {
                Ok(Some(r)) => {
                    if r.reused > 0 {
                        out.say(&format!("info string tree reuse: {} visits kept", r.reused));
                    }
                    report(&r);
                    let pv = &r.lines[0].pv;
                    let ponder_move = (pv.len() > 1).then(|| uci_line(&root, &pv[..2]).split_once(' ').map(|x| x.1.to_string())).flatten();
                    (root.uci(pv[0]), ponder_move)
                }
                Ok(None) => ("(none)".to_string(), None),
                Err(e) => {
                    out.say(&format!("info string error: {e:#}"));
                    (root.uci(root.legal_moves()[0]), None)
                }
            };
            wait_stop(&waiting, &stop2);
            match best.1 {
                Some(p) => out.say(&format!("bestmove {} ponder {p}", best.0)),
                None => out.say(&format!("bestmove {}", best.0)),
            }
            thinker
        });
        self.running = Some(Running { stop, ponder: ponder_flag, handle });
    }
}
