//! `vzero uci`: a UCI engine speaking Fairy-Stockfish's conventions.
//!
//! * `uci` → `id`, options, `uciok`. Options: `UCI_Variant` (combo of the built-in variants),
//!   `ModelPath` (checkpoint; `<empty>` = no network: uniform priors + material value),
//!   `Simulations` (budget of a `go` without limits), `Threads` (LibTorch intra-op threads),
//!   `Book` (a `vzero book build` file; `<empty>` = none) and `BookPlies` (book moves are played
//!   below this game ply, counted from the start FEN's move number): a book move is answered
//!   at once, chosen at random by the book's weights.
//! * `position startpos|fen <FEN> [moves …]` in FSF notation (drops `P@e4`, promotions `+`,
//!   hands in the FEN's `[…]`).
//! * `go [nodes N] [movetime MS] [wtime MS btime MS winc MS binc MS movestogo N] [infinite]`;
//!   the search runs in a thread, `stop` ends it, `isready` answers at once. With clock times
//!   the budget is `time / movestogo (default 30) + 3/4 of the increment`, at most half the time
//!   left. `infinite` (or `ponder`) prints `bestmove` only after `stop`.
//! * `info depth <pv length> nodes <simulations> nps … time … score cp <cp> wdl <W D L per mille> pv …`
//!   about twice a second and at the end; cp = 111.714640912 · tan(1.5620688421 · (W − L)).

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use vzero_arena::{search_move, value_to_cp, Evaluator, Limits, NetEvaluator, Progress};
use vzero_mcts::{LeafValue, MaterialEvaluator, SearchConfig, VariantGame};
use vzero_rules::{Game, Position, Variant};

/// Arguments of `vzero uci`.
#[derive(Args, Debug)]
pub struct UciArgs {
    /// Initial variant (the GUI can change it with `setoption name UCI_Variant`).
    #[arg(long, default_value = "empire")]
    pub variant: String,
    /// Checkpoint evaluating the search's leaves (default: uniform priors + material value).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Simulations of a `go` without limits.
    #[arg(long, default_value_t = 800)]
    pub sims: u32,
    /// Opening book (`vzero book build`), also settable as the `Book` option.
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Book moves are played below this ply (`BookPlies` option).
    #[arg(long, default_value_t = 16)]
    pub book_plies: usize,
}

struct Running {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Evaluator>,
}

struct Engine {
    variant: Variant,
    game: Game,
    model: Option<PathBuf>,
    sims: u32,
    /// Cached evaluator and what it was made for.
    eval: Option<(Option<PathBuf>, &'static str, Evaluator)>,
    running: Option<Running>,
    seed: u64,
    book: Option<vzero_openings::Book>,
    book_plies: usize,
}

fn say(s: &str) {
    println!("{s}");
}

impl Engine {
    fn stop_search(&mut self) {
        if let Some(r) = self.running.take() {
            r.stop.store(true, Ordering::SeqCst);
            if let Ok(ev) = r.handle.join() {
                let key = self.eval_key();
                self.eval = Some((key.0, key.1, ev));
            }
        }
    }

    fn eval_key(&self) -> (Option<PathBuf>, &'static str) {
        (self.model.clone(), self.variant.name())
    }

    fn take_evaluator(&mut self) -> Evaluator {
        let key = self.eval_key();
        if let Some((p, v, e)) = self.eval.take() {
            if p == key.0 && v == key.1 {
                return e;
            }
        }
        match &self.model {
            None => Evaluator::Material(MaterialEvaluator::default()),
            Some(path) => match NetEvaluator::load(path, self.variant, vzero_model::Device::Cpu).map(|(n, _)| n) {
                Ok(n) => Evaluator::Net(Box::new(n)),
                Err(e) => {
                    say(&format!("info string error: {e:#}; searching without a network"));
                    Evaluator::Material(MaterialEvaluator::default())
                }
            },
        }
    }

    fn set_option(&mut self, line: &str) {
        // setoption name <id> [value <x>]
        let rest = line.strip_prefix("setoption").unwrap_or("").trim();
        let rest = rest.strip_prefix("name").unwrap_or(rest).trim();
        let (name, value) = match rest.split_once(" value ") {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (rest.strip_suffix(" value").unwrap_or(rest).trim(), ""),
        };
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => match Variant::load(value) {
                Ok(v) => {
                    self.variant = v;
                    self.game = Game::startpos(v);
                }
                Err(e) => say(&format!("info string error: UCI_Variant {value}: {e}")),
            },
            "modelpath" => {
                self.model = if value.is_empty() || value == "<empty>" { None } else { Some(PathBuf::from(value)) };
            }
            "simulations" => match value.parse::<u32>() {
                Ok(n) if n > 0 => self.sims = n,
                _ => say(&format!("info string error: Simulations {value}: not a positive number")),
            },
            "threads" => match value.parse::<usize>() {
                Ok(n) if n > 0 => vzero_model::set_threads(n),
                _ => say(&format!("info string error: Threads {value}: not a positive number")),
            },
            "book" => {
                if value.is_empty() || value == "<empty>" {
                    self.book = None;
                } else {
                    match vzero_openings::Book::load(std::path::Path::new(value)) {
                        Ok(b) => self.book = Some(b),
                        Err(e) => say(&format!("info string error: Book {value}: {e:#}")),
                    }
                }
            }
            "bookplies" => match value.parse::<usize>() {
                Ok(n) => self.book_plies = n,
                _ => say(&format!("info string error: BookPlies {value}: not a number")),
            },
            _ => say(&format!("info string unknown option '{name}'")),
        }
    }

    fn position(&mut self, line: &str) {
        let toks: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mi = toks.iter().position(|&t| t == "moves").unwrap_or(toks.len());
        let mut game = match toks.first() {
            Some(&"startpos") => Game::startpos(self.variant),
            Some(&"fen") => match Game::from_fen(self.variant, &toks[1..mi].join(" ")) {
                Ok(g) => g,
                Err(e) => return say(&format!("info string error: {e}")),
            },
            _ => return say("info string error: position startpos|fen <FEN> [moves ...]"),
        };
        for m in toks.iter().skip(mi + 1) {
            if let Err(e) = game.play_uci(m) {
                return say(&format!("info string error: {e}"));
            }
        }
        self.game = game;
    }

    /// A weighted random book move when a book is set and the game is young enough.
    fn book_move(&mut self) -> Option<vzero_rules::Move> {
        use rand::SeedableRng;
        let book = self.book.as_mut()?;
        book.set_max_plies(self.book_plies);
        let start = self.game.start();
        let ply = 2 * (start.fullmove_number().max(1) as usize - 1)
            + (start.side_to_move() == vzero_rules::Color::Black) as usize
            + self.game.moves().len();
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed ^ 0xB00C ^ (std::process::id() as u64) << 20);
        self.seed += 1;
        if self.game.result().is_over() {
            return None;
        }
        book.pick(self.game.position(), ply, &mut rng)
    }

    fn go(&mut self, line: &str) {
        let toks: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut limits = Limits::default();
        let mut infinite = false;
        let (mut wtime, mut btime, mut winc, mut binc, mut mtg) = (None, None, 0u64, 0u64, None);
        let mut i = 0;
        let num = |i: usize| toks.get(i + 1).and_then(|x| x.parse::<i64>().ok()).map(|x| x.max(0) as u64);
        while i < toks.len() {
            match toks[i] {
                "nodes" => limits.sims = num(i),
                "movetime" => limits.time = num(i).map(Duration::from_millis),
                "wtime" => wtime = num(i),
                "btime" => btime = num(i),
                "winc" => winc = num(i).unwrap_or(0),
                "binc" => binc = num(i).unwrap_or(0),
                "movestogo" => mtg = num(i),
                "infinite" | "ponder" => {
                    infinite = true;
                    i += 1;
                    continue;
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
            i += 2;
        }
        let white = self.game.position().side_to_move() == vzero_rules::Color::White;
        let (mytime, myinc) = if white { (wtime, winc) } else { (btime, binc) };
        if let Some(t) = mytime {
            let budget = t / mtg.unwrap_or(30).max(1) + myinc * 3 / 4;
            let cap = (t / 2).saturating_sub(30);
            let ms = budget.min(cap).max(10);
            limits.time = Some(limits.time.map_or(Duration::from_millis(ms), |x| x.min(Duration::from_millis(ms))));
        }
        if !infinite && limits.sims.is_none() && limits.time.is_none() {
            limits.sims = Some(self.sims as u64);
        }
        if let Some(m) = self.book_move() {
            let eval = self.take_evaluator();
            let stop = Arc::new(AtomicBool::new(false));
            let stop2 = stop.clone();
            let text = self.game.position().uci(m);
            say(&format!("info string book move {text}"));
            let handle = std::thread::spawn(move || {
                wait_stop(infinite, &stop2);
                say(&format!("bestmove {text}"));
                eval
            });
            self.running = Some(Running { stop, handle });
            return;
        }
        let mut eval = self.take_evaluator();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let game = self.game.clone();
        let seed = self.seed;
        self.seed += 1;
        let handle = std::thread::spawn(move || {
            let root = *game.position();
            if game.result().is_over() {
                say("info depth 0 score cp 0");
                wait_stop(infinite, &stop2);
                say("bestmove (none)");
                return eval;
            }
            let mut report = |p: &Progress| say(&info_line(&root, p));
            let r = search_move(
                VariantGame::from_game(&game),
                SearchConfig::default(),
                seed,
                &mut eval,
                limits,
                Some(&stop2),
                Some(Duration::from_millis(500)),
                &mut report,
            );
            match r {
                Ok(Some((res, _))) => {
                    wait_stop(infinite, &stop2);
                    say(&format!("bestmove {}", root.uci(res.chosen)));
                }
                Ok(None) => {
                    wait_stop(infinite, &stop2);
                    say("bestmove (none)");
                }
                Err(e) => {
                    say(&format!("info string error: {e:#}"));
                    let m = root.legal_moves()[0];
                    wait_stop(infinite, &stop2);
                    say(&format!("bestmove {}", root.uci(m)));
                }
            }
            eval
        });
        self.running = Some(Running { stop, handle });
    }
}

fn wait_stop(infinite: bool, stop: &AtomicBool) {
    while infinite && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn info_line(root: &Position, p: &Progress) -> String {
    let [w, d, _] = LeafValue { value: p.value, draw: p.draw }.wdl();
    let (w, d) = ((w * 1000.0).round() as i32, (d * 1000.0).round() as i32);
    let l = (1000 - w - d).max(0);
    let mut pos = *root;
    let mut pv = String::new();
    for &m in &p.pv {
        pv.push(' ');
        pv += &pos.uci(m);
        pos.play(m);
    }
    format!(
        "info depth {} nodes {} nps {} time {} score cp {} wdl {w} {d} {l}{}{pv}",
        p.pv.len().max(1),
        p.sims,
        p.nps(),
        p.elapsed.as_millis(),
        value_to_cp(p.value),
        if pv.is_empty() { "" } else { " pv" }
    )
}

fn uci_header(variant: &str) {
    say(&format!("id name vzero {}", env!("CARGO_PKG_VERSION")));
    say("id author the vzero developers");
    let names = vzero_rules::variant::builtin_names();
    let vars: String = names.iter().map(|n| format!(" var {n}")).collect();
    say(&format!("option name UCI_Variant type combo default {variant}{vars}"));
    say("option name ModelPath type string default <empty>");
    say(&format!("option name Simulations type spin default 800 min 1 max {}", vzero_arena::engine::MAX_SIMS));
    say("option name Threads type spin default 1 min 1 max 256");
    say("option name Book type string default <empty>");
    say("option name BookPlies type spin default 16 min 0 max 1000");
    say("uciok");
}

pub fn uci(a: UciArgs) -> Result<()> {
    let variant = Variant::load(&a.variant)?;
    vzero_model::set_threads(1);
    let mut e = Engine {
        variant,
        game: Game::startpos(variant),
        model: a.model.clone(),
        sims: a.sims.max(1),
        eval: None,
        running: None,
        seed: 0,
        book: a.book.as_deref().map(vzero_openings::Book::load).transpose()?,
        book_plies: a.book_plies,
    };
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line?;
        let line = line.trim();
        let cmd = line.split_whitespace().next().unwrap_or("");
        match cmd {
            "uci" => uci_header(e.variant.name()),
            "isready" => say("readyok"),
            "ucinewgame" => {
                e.stop_search();
                e.game = Game::startpos(e.variant);
            }
            "setoption" => {
                e.stop_search();
                e.set_option(line);
            }
            "position" => {
                e.stop_search();
                e.position(line);
            }
            "go" => {
                e.stop_search();
                e.go(line);
            }
            "stop" | "ponderhit" => e.stop_search(),
            "quit" => break,
            "d" => say(&format!("Fen: {}", e.game.position().fen())),
            "" | "debug" | "register" => {}
            _ => say(&format!("info string unknown command '{cmd}'")),
        }
    }
    e.stop_search();
    Ok(())
}
