//! Matches between two players: openings, colour-swapped pairs, parallel games, adjudication,
//! W/D/L, Elo with interval, SPRT stop, PGN output.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use anyhow::{anyhow, bail, Context, Result};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use vzero_rules::{Color, Game, Outcome, Position, Variant};

use crate::elo::{fmt_elo, MatchStats, SprtConfig, SprtDecision};
use vzero_rules::pgn::PgnGame;
use crate::player::Player;
use crate::spec::PlayerSpec;

/// Where openings come from.
#[derive(Clone, Debug)]
pub enum Openings {
    /// `plies` uniformly random legal moves from the start position, one opening per pair,
    /// seeded by the match seed and the pair number (openings that end the game are redrawn).
    Random { plies: u32 },
    /// A list of openings used in order, cycling (see [`vzero_openings::read_book`]).
    Book(Vec<Game>),
}

/// Match settings.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub variant: Variant,
    /// Games to play (pairs of two, colours swapped; an odd count leaves the last pair half).
    pub games: u32,
    pub openings: Openings,
    /// Games played at once (threads).
    pub concurrency: usize,
    /// A game still running after this many plies (counting the opening) is a draw by adjudication.
    pub max_plies: u32,
    pub seed: u64,
    pub sprt: Option<SprtConfig>,
    /// PGN file written (appended to) as games finish.
    pub pgn: Option<PathBuf>,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// PGN `Event` tag.
    pub event: String,
}

impl MatchConfig {
    /// Defaults: 2 games, 8 random plies, 1 thread, 500 plies, seed 0, no SPRT, no PGN, no bar.
    pub fn new(variant: Variant) -> MatchConfig {
        MatchConfig {
            variant,
            games: 2,
            openings: Openings::Random { plies: 8 },
            concurrency: 1,
            max_plies: 500,
            seed: 0,
            sprt: None,
            pgn: None,
            progress: false,
            event: "vzero match".into(),
        }
    }
}

/// The settings of the matches a training run plays on its own (the gauntlet's, the switch
/// check's): `games` in colour-swapped pairs from random openings of `opening_plies`, both sides
/// searching `sims` simulations per move, adjudicated drawn after `max_plies`, `concurrency`
/// at once. Each config declares its own keys and defaults (`[gauntlet]`, `[switch]`) and
/// hands them here, which checks them and builds the match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedGames {
    pub games: u32,
    pub sims: u32,
    pub max_plies: u32,
    pub opening_plies: u32,
    pub concurrency: usize,
}

impl PairedGames {
    /// Checks the settings of table `table`; errors name the key (`gauntlet.games`).
    pub fn validate(&self, table: &str, min_games: u32) -> Result<()> {
        if self.games < min_games {
            bail!("{table}.games must be at least {min_games}");
        }
        for (key, v) in [("sims", self.sims as usize), ("max_plies", self.max_plies as usize), ("concurrency", self.concurrency)] {
            if v == 0 {
                bail!("{table}.{key} must be at least 1");
            }
        }
        Ok(())
    }

    /// The match these settings play, with `seed` and the PGN event `event`.
    pub fn config(&self, variant: Variant, seed: u64, event: impl Into<String>) -> MatchConfig {
        MatchConfig {
            games: self.games,
            openings: Openings::Random { plies: self.opening_plies },
            concurrency: self.concurrency,
            max_plies: self.max_plies,
            seed,
            event: event.into(),
            ..MatchConfig::new(variant)
        }
    }
}

/// One finished game.
#[derive(Clone, Debug)]
pub struct GameOutcome {
    /// Game number, from 0; pair = index / 2.
    pub index: u32,
    /// Whether the first player (A) had White.
    pub a_white: bool,
    /// White's score: 1, ½, 0.
    pub white_score: f64,
    /// Why it ended (`checkmate`, `adjudication`, `forfeit`, ...).
    pub termination: String,
    pub plies: usize,
    pub pgn: PgnGame,
}

impl GameOutcome {
    /// A's score in this game.
    pub fn a_score(&self) -> f64 {
        if self.a_white { self.white_score } else { 1.0 - self.white_score }
    }
}

/// What a match produced.
#[derive(Clone, Debug)]
pub struct MatchReport {
    pub a: String,
    pub b: String,
    pub stats: MatchStats,
    pub sprt: Option<(SprtDecision, f64)>,
    pub games: Vec<GameOutcome>,
}

impl MatchReport {
    /// The summary lines `vzero match` prints.
    pub fn summary(&self, sprt: Option<&SprtConfig>) -> String {
        let s = &self.stats;
        let mut out = format!("{} vs {}: {} games\n", self.a, self.b, s.games());
        out += &format!("W/D/L {}/{}/{}  score {:.1}/{} ({:.1}%)\n", s.wins, s.draws, s.losses, s.points(), s.games(), 100.0 * s.points() / s.games().max(1) as f64);
        if let Some(e) = s.elo() {
            out += &format!(
                "elo {} [{}, {}] (95%, {})\n",
                fmt_elo(e.elo),
                fmt_elo(e.low),
                fmt_elo(e.high),
                if e.pentanomial { format!("pentanomial, {} pairs {:?}", s.pairs(), s.penta) } else { "trinomial".into() }
            );
        }
        if let (Some(c), Some((d, llr))) = (sprt, self.sprt) {
            let (lo, hi) = c.bounds();
            out += &format!(
                "sprt elo0 {} elo1 {} alpha {} beta {}: llr {:.3} [{:.3}, {:.3}] {}\n",
                c.elo0, c.elo1, c.alpha, c.beta, llr, lo, hi, d
            );
        }
        out
    }
}

/// The opening of pair `pair`.
pub fn opening_for(cfg: &MatchConfig, pair: u32) -> Game {
    match &cfg.openings {
        Openings::Book(list) => list[pair as usize % list.len()].clone(),
        Openings::Random { plies } => {
            let mut rng = StdRng::seed_from_u64(cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (pair as u64 + 1));
            // openings that end the game are drawn again (100 tries, then the start position)
            for _ in 0..100 {
                let mut g = Game::startpos(cfg.variant);
                if g.play_opening(*plies, |moves| *moves.choose(&mut rng).expect("play_opening never passes an empty list")) {
                    return g;
                }
            }
            Game::startpos(cfg.variant)
        }
    }
}

fn result_string(white_score: f64) -> &'static str {
    if white_score > 0.75 {
        "1-0"
    } else if white_score < 0.25 {
        "0-1"
    } else {
        "1/2-1/2"
    }
}

/// Plays one game from `opening`; returns White's score, the termination and the final game.
pub fn play_game(white: &mut dyn Player, black: &mut dyn Player, opening: &Game, max_plies: u32) -> (f64, String, Game, Option<String>) {
    let mut g = opening.clone();
    loop {
        let r = g.result();
        let stm = g.position().side_to_move();
        if r.is_over() {
            let stm_score = match r.outcome {
                Outcome::Win => 1.0,
                Outcome::Loss => 0.0,
                _ => 0.5,
            };
            let ws = if stm == Color::White { stm_score } else { 1.0 - stm_score };
            return (ws, r.reason.to_string(), g, None);
        }
        if g.moves().len() as u32 >= max_plies {
            return (0.5, "adjudication".into(), g, Some(format!("draw after {max_plies} plies")));
        }
        let p: &mut dyn Player = if stm == Color::White { &mut *white } else { &mut *black };
        match p.choose(&g) {
            Ok(m) if g.position().legal_moves().contains(&m) => g.play(m),
            Ok(m) => {
                let text = g.position().uci(m);
                let ws = if stm == Color::White { 0.0 } else { 1.0 };
                return (ws, "forfeit".into(), g, Some(format!("{} played an illegal move {text}", p.name())));
            }
            Err(e) => {
                let ws = if stm == Color::White { 0.0 } else { 1.0 };
                return (ws, "forfeit".into(), g, Some(format!("{:#}", e)));
            }
        }
    }
}

fn today() -> String {
    let secs = vzero_base::now_unix();
    let (y, m, d) = vzero_base::clock::civil_date(secs);
    format!("{y:04}.{m:02}.{d:02}")
}

/// The PGN record of a finished game.
pub fn pgn_record(event: &str, round: u32, white: &str, black: &str, game: &Game, white_score: f64, termination: &str, detail: Option<&str>) -> PgnGame {
    let start = game.start();
    let variant = start.variant();
    let mut p = PgnGame::default();
    p.set_tag("Event", event);
    p.set_tag("Site", "vzero");
    p.set_tag("Date", today());
    p.set_tag("Round", round.to_string());
    p.set_tag("White", white);
    p.set_tag("Black", black);
    p.set_tag("Result", result_string(white_score));
    p.set_tag("Variant", variant.name());
    if start.fen() != Position::startpos(variant).fen() {
        p.set_tag("FEN", start.fen());
        p.set_tag("SetUp", "1");
    }
    p.set_tag("Termination", termination);
    if let Some(d) = detail {
        p.set_tag("TerminationDetails", d);
    }
    p.set_tag("PlyCount", game.moves().len().to_string());
    let mut pos = *start;
    for &m in game.moves() {
        p.moves.push(pos.uci(m));
        pos.play(m);
    }
    p.result = result_string(white_score).to_string();
    p
}

/// Writes a game to a PGN stream with correct move numbers.
pub fn write_pgn(out: &mut impl Write, p: &PgnGame, start: &Position) -> std::io::Result<()> {
    out.write_all(p.to_pgn_from(start).as_bytes())
}

/// The queue of game indices the match threads take from: handed out in order, kept topped up
/// by the collecting thread with at most one waiting per thread (so a large `--games` cut short
/// by SPRT costs no memory). Closing it ends each thread after the game it is playing.
struct GameQueue {
    tx: Option<Sender<u32>>,
    rx: Receiver<u32>,
    next: u32,
    games: u32,
}

impl GameQueue {
    fn new(games: u32, threads: usize) -> GameQueue {
        let (tx, rx) = bounded(threads.max(1));
        let mut q = GameQueue { tx: Some(tx), rx, next: 0, games };
        q.top_up();
        q
    }

    /// Queues the next games while there is room; closes the queue after the last one.
    fn top_up(&mut self) {
        if let Some(tx) = &self.tx {
            while self.next < self.games && tx.try_send(self.next).is_ok() {
                self.next += 1;
            }
            if self.next >= self.games {
                self.tx = None;
            }
        }
    }

    /// No more games: the queue is closed and what it holds dropped.
    fn close(&mut self) {
        self.tx = None;
        drain(&self.rx);
    }
}

/// Drops the games waiting in a queue (a thread that cannot play stops the others this way).
fn drain(games: &Receiver<u32>) {
    while games.try_recv().is_ok() {}
}

/// Runs a match of A against B.
pub fn run_match(a: &PlayerSpec, b: &PlayerSpec, cfg: &MatchConfig) -> Result<MatchReport> {
    if cfg.games == 0 {
        bail!("--games must be at least 1");
    }
    let name_a = a.name();
    let mut name_b = b.name();
    if name_b == name_a {
        name_b = format!("{name_b}#2");
    }
    let mut pgn_out = match &cfg.pgn {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::OpenOptions::new().create(true).append(true).open(p).with_context(|| format!("opening {}", p.display()))?,
        )),
        None => None,
    };
    let threads = cfg.concurrency.clamp(1, cfg.games as usize);
    let mut queue = GameQueue::new(cfg.games, threads);
    let bar = if cfg.progress { indicatif::ProgressBar::new(cfg.games as u64) } else { indicatif::ProgressBar::hidden() };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} games  {msg}  [{elapsed_precise} < {eta}]")
            .expect("valid template"),
    );
    let mut report = MatchReport { a: name_a.clone(), b: name_b.clone(), stats: MatchStats::default(), sprt: None, games: Vec::new() };
    let mut first_of_pair: HashMap<u32, f64> = HashMap::new();
    let (tx, rx) = unbounded::<Result<GameOutcome>>();
    let mut failure: Option<anyhow::Error> = None;
    std::thread::scope(|scope| {
        for w in 0..threads {
            let tx = tx.clone();
            let games = queue.rx.clone();
            let (name_a, name_b) = (name_a.clone(), name_b.clone());
            scope.spawn(move || {
                let seed = cfg.seed ^ ((w as u64 + 1) << 32);
                let players = a.build(cfg.variant, seed ^ 0xA).and_then(|pa| Ok((pa, b.build(cfg.variant, seed ^ 0xB)?)));
                let (mut pa, mut pb) = match players {
                    Ok(p) => p,
                    Err(e) => {
                        drain(&games);
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                for i in games.iter() {
                    let a_white = i % 2 == 0;
                    let opening = opening_for(cfg, i / 2);
                    // each game's own seeds (the threads take games from a shared queue)
                    let game_seed = cfg.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    pa.reseed(game_seed ^ 0xA);
                    pb.reseed(game_seed ^ 0xB);
                    let started = pa.new_game().and_then(|_| pb.new_game());
                    let (ws, term, game, detail) = match started {
                        Err(e) => {
                            // A player that cannot start a game forfeits it (blame A first).
                            let ws = if a_white { 0.0 } else { 1.0 };
                            (ws, "forfeit".to_string(), opening.clone(), Some(format!("{e:#}")))
                        }
                        Ok(()) => {
                            if a_white {
                                play_game(pa.as_mut(), pb.as_mut(), &opening, cfg.max_plies)
                            } else {
                                play_game(pb.as_mut(), pa.as_mut(), &opening, cfg.max_plies)
                            }
                        }
                    };
                    let (wn, bn) = if a_white { (&name_a, &name_b) } else { (&name_b, &name_a) };
                    let pgn = pgn_record(&cfg.event, i + 1, wn, bn, &game, ws, &term, detail.as_deref());
                    let out = GameOutcome { index: i, a_white, white_score: ws, termination: term, plies: game.moves().len(), pgn };
                    if tx.send(Ok(out)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx.iter() {
            let g = match msg {
                Ok(g) => g,
                Err(e) => {
                    failure.get_or_insert(e);
                    queue.close();
                    continue;
                }
            };
            queue.top_up();
            if let Some(out) = pgn_out.as_mut() {
                let start = opening_start(&g, cfg);
                if let Err(e) = write_pgn(out, &g.pgn, &start).and_then(|_| out.flush()) {
                    failure.get_or_insert(anyhow!("writing PGN: {e}"));
                    queue.close();
                }
            }
            let sa = g.a_score();
            report.stats.add_game(sa);
            let pair = g.index / 2;
            if let Some(first) = first_of_pair.remove(&pair) {
                report.stats.add_pair(first + sa);
            } else {
                first_of_pair.insert(pair, sa);
            }
            if let Some(c) = &cfg.sprt {
                let d = report.stats.sprt(c);
                report.sprt = Some((d, report.stats.llr(c)));
                if d != SprtDecision::Continue {
                    queue.close();
                }
            }
            let s = &report.stats;
            let elo = s.elo().map_or(String::new(), |e| format!("elo {} ± {:.0}", fmt_elo(e.elo), e.margin()));
            bar.set_message(format!("{}/{}/{}  {elo}", s.wins, s.draws, s.losses));
            bar.inc(1);
            report.games.push(g);
        }
    });
    bar.finish_and_clear();
    if let Some(e) = failure {
        return Err(e);
    }
    report.games.sort_by_key(|g| g.index);
    Ok(report)
}

fn opening_start(g: &GameOutcome, cfg: &MatchConfig) -> Position {
    match g.pgn.tag("FEN") {
        Some(f) => Position::from_fen(cfg.variant, f).unwrap_or_else(|_| Position::startpos(cfg.variant)),
        None => Position::startpos(cfg.variant),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_game_queue_hands_out_every_game_in_order_and_closes() {
        let mut q = GameQueue::new(5, 2);
        let rx = q.rx.clone();
        let mut got = Vec::new();
        // a thread takes what is queued; the collector tops up after each result
        while let Ok(i) = rx.try_recv() {
            got.push(i);
            q.top_up();
        }
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert!(q.tx.is_none(), "closed after the last game");
        assert!(rx.recv().is_err(), "a thread sees the end");
        // closing drops what waits
        let mut q = GameQueue::new(10, 3);
        assert_eq!(q.rx.len(), 3);
        q.close();
        assert!(q.rx.recv().is_err());
    }

    #[test]
    fn sprt_ends_a_match_of_four_billion_games_and_a_player_that_cannot_start_fails_it() {
        let v = Variant::builtin("empire").unwrap();
        let mut cfg = MatchConfig::new(v);
        cfg.games = u32::MAX;
        cfg.concurrency = 3;
        cfg.seed = 7;
        cfg.sprt = Some(SprtConfig::parse("0,50,0.05,0.05").unwrap());
        let r = run_match(&PlayerSpec::Greedy, &PlayerSpec::Random, &cfg).unwrap();
        assert_eq!(r.sprt.map(|s| s.0), Some(SprtDecision::H1));
        assert!(r.stats.games() < 200, "{:?}", r.stats);
        let indices: Vec<u32> = r.games.iter().map(|g| g.index).collect();
        assert_eq!(indices, (0..indices.len() as u32).collect::<Vec<_>>(), "no game skipped");
        let missing = PlayerSpec::parse("net:/nonexistent/vzero-match-test.json").unwrap();
        cfg.games = 1000;
        cfg.sprt = None;
        assert!(run_match(&missing, &PlayerSpec::Random, &cfg).is_err());
    }
}
