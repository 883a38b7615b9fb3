//! Simulations per second of the search with a zero-cost stub evaluator, single thread.
//!
//! `cargo run --release -p vzero-mcts --example bench [runs]` (or `scripts/bench.sh mcts [runs]`)
//!
//! The evaluator returns uniform priors and value 0, so this is the search's own ceiling. Each
//! run plays 16 moves of a game (800 simulations per move, tree reuse on) and the median over the
//! runs is printed, first for every built-in variant from its start position ([`VariantGame`]),
//! then for the toy game as a reference measured in the same run. The toy game has 28-32 legal
//! moves per position, occasional double moves, and ends after 60 plies.
//!
//! Every variant case runs with the MCTS-solver (the default) and without (`solver: false`), in
//! the same interleaved runs; the `solver/plain` column is their ratio. Last, the cost of
//! decisive-move detection alone: nanoseconds per node of `Game::winning_move` next to
//! `Game::expand` (move generation and result) over positions of random games.

use std::time::Instant;
use vzero_mcts::{uniform_evaluator, Game, GumbelConfig, RootMode, Search, SearchConfig, VariantGame};
use vzero_rules::Variant;

/// The rules core's own `Game` (whole-position history) as the search state: a reference to
/// show what the lighter [`VariantGame`] saves.
#[derive(Clone)]
struct RulesGame(vzero_rules::Game);

impl Game for RulesGame {
    type Move = vzero_rules::Move;
    fn to_move(&self) -> usize {
        self.0.position().side_to_move().index()
    }
    fn legal_moves(&self, out: &mut Vec<Self::Move>) {
        out.extend(self.0.position().legal_moves());
    }
    fn play(&mut self, mv: Self::Move) {
        self.0.play(mv)
    }
    fn terminal_value(&self) -> Option<f32> {
        let r = self.0.result();
        r.is_over().then(|| r.value())
    }
}

#[derive(Clone, Debug)]
struct Toy {
    h: u64,
    ply: u32,
    to_move: usize,
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

impl Game for Toy {
    type Move = u16;
    fn to_move(&self) -> usize {
        self.to_move
    }
    fn legal_moves(&self, out: &mut Vec<u16>) {
        let n = 28 + (self.h % 5) as u16;
        out.extend((0..n).map(|i| i * 3 + (self.h >> 8) as u16 % 3));
    }
    fn play(&mut self, mv: u16) {
        self.h = mix(self.h ^ mv as u64);
        self.ply += 1;
        if self.h & 15 != 0 {
            self.to_move ^= 1; // 1 in 16 moves is a double move
        }
    }
    fn terminal_value(&self) -> Option<f32> {
        (self.ply >= 60).then(|| [(-1.0), 0.0, 1.0][(self.h % 3) as usize])
    }
}

fn run_game(cfg: &SearchConfig, seed: u64, batch: usize) -> (u64, f64) {
    run_from(Toy { h: seed, ply: 0, to_move: 0 }, cfg, seed, batch)
}

/// 16 moves of 800 simulations each from `start`, tree reuse on.
fn run_from<G: Game>(start: G, cfg: &SearchConfig, seed: u64, batch: usize) -> (u64, f64) {
    let mut s = Search::new(start, cfg.clone(), seed);
    let mut leaves = Vec::new();
    let mut priors = Vec::new();
    let mut sims = 0u64;
    let t = Instant::now();
    for _ in 0..16 {
        s.start_with(800, true);
        while !s.is_done() {
            s.gather(batch, &mut leaves);
            for leaf in leaves.drain(..) {
                let moves = s.leaf_moves(leaf.handle);
                priors.clear();
                priors.resize(moves.len(), 0.0);
                let v = uniform_evaluator(&leaf.state, moves, &mut priors);
                s.apply(leaf.handle, &priors, v);
            }
        }
        let Some(r) = s.finish() else { break };
        sims += r.simulations as u64;
        s.advance(r.chosen);
    }
    (sims, t.elapsed().as_secs_f64())
}

/// One deep search of `sims` simulations from the start position.
fn run_big(cfg: &SearchConfig, seed: u64, sims: u32) -> (u64, f64) {
    let mut s = Search::new(Toy { h: seed, ply: 0, to_move: 0 }, cfg.clone(), seed);
    let t = Instant::now();
    let r = s.run(sims, uniform_evaluator).unwrap();
    (r.simulations as u64, t.elapsed().as_secs_f64())
}

fn median(mut rates: Vec<f64>) -> (f64, f64, f64) {
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (rates[rates.len() / 2], rates[0], rates[rates.len() - 1])
}

/// A position `plies` plies into a game of pseudo-random moves (fixed seed), not over.
fn midgame(v: Variant, plies: usize) -> vzero_rules::Game {
    midgame_seeded(v, plies, 0x5eed)
}

/// [`midgame`] with another seed.
fn midgame_seeded(v: Variant, plies: usize, seed: u64) -> vzero_rules::Game {
    let mut g = vzero_rules::Game::startpos(v);
    let mut x = seed;
    while g.moves().len() < plies {
        let moves = g.position().legal_moves();
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        g.play(moves[(x >> 33) as usize % moves.len()]);
        if g.result().is_over() {
            g.undo();
            g.undo();
        }
    }
    g
}

type Case<'a> = (String, Box<dyn Fn(u64) -> (u64, f64) + 'a>);

/// Positions 10 to 89 plies into seeded random games (none over).
fn positions(v: Variant, n: usize) -> Vec<VariantGame> {
    (0..n).map(|i| VariantGame::from_game(&midgame_seeded(v, 10 + i % 80, 0x5eed + i as u64))).collect()
}

/// Nanoseconds per position of `expand` and of `winning_move` over `states`: the fastest of 9
/// interleaved passes each (a pass takes about a millisecond: one preemption would dominate it).
fn detection_cost(states: &[(VariantGame, Vec<vzero_rules::Move>)]) -> (f64, f64) {
    let mut out = Vec::new();
    let mut n = 0usize;
    let (mut expand, mut detect) = (f64::MAX, f64::MAX);
    for _ in 0..9 {
        let t = Instant::now();
        for (st, _) in states {
            out.clear();
            n += st.expand(&mut out).is_none() as usize;
        }
        expand = expand.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for (st, moves) in states {
            n += st.winning_move(moves).unwrap_or(0);
        }
        detect = detect.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(n);
    let k = states.len() as f64;
    (expand / k * 1e9, detect / k * 1e9)
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7).max(1);
    let puct = &SearchConfig::default();
    let gumbel = &SearchConfig { root_mode: RootMode::Gumbel(GumbelConfig::default()), ..SearchConfig::default() };
    let plain_puct = &SearchConfig { solver: false, ..puct.clone() };
    let plain_gumbel = &SearchConfig { solver: false, ..gumbel.clone() };
    // Reference first: ratios are against it, measured in the same run. The toy game runs
    // without the solver (its `Game::winning_move` is the default: a clone and a move per
    // legal move), but for one case, to show that default's cost.
    let mut cases: Vec<Case> = vec![
        ("toy, puct (reference)".into(), Box::new(move |seed| run_game(plain_puct, seed, 1))),
        ("toy, puct, 16 leaves/gather".into(), Box::new(move |seed| run_game(plain_puct, seed, 16))),
        ("toy, gumbel m=16".into(), Box::new(move |seed| run_game(plain_gumbel, seed, 1))),
        ("toy, puct, one 50k-sim search".into(), Box::new(move |seed| run_big(plain_puct, seed, 50_000))),
        ("toy, puct, solver (default winning_move)".into(), Box::new(move |seed| run_game(puct, seed, 1))),
    ];
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name).expect("built-in variant");
        let legal = vzero_rules::Position::startpos(v).legal_moves().len();
        let label = format!("{name} ({}x{}, {legal} moves)", v.files(), v.ranks());
        cases.push((format!("{label}, puct"), Box::new(move |seed| run_from(VariantGame::startpos(v), puct, seed, 1))));
        cases.push((format!("{label}, puct, no solver"), Box::new(move |seed| run_from(VariantGame::startpos(v), plain_puct, seed, 1))));
        cases.push((format!("{label}, gumbel m=16"), Box::new(move |seed| run_from(VariantGame::startpos(v), gumbel, seed, 1))));
        cases.push((format!("{label}, gumbel m=16, no solver"), Box::new(move |seed| run_from(VariantGame::startpos(v), plain_gumbel, seed, 1))));
    }
    // State choice: VariantGame (position + repetition keys) against the rules core's Game
    // (whole-position history), at the start and 80 plies into a game.
    for name in ["empire", "shogun"] {
        let v = Variant::builtin(name).expect("built-in variant");
        let mid = midgame(v, 80);
        let (m1, m2, m3) = (mid.clone(), mid.clone(), mid.clone());
        cases.push((format!("{name} ply 80, puct, VariantGame"), Box::new(move |seed| run_from(VariantGame::from_game(&m1), puct, seed, 1))));
        cases.push((format!("{name} ply 80, puct, VariantGame, no solver"), Box::new(move |seed| run_from(VariantGame::from_game(&m3), plain_puct, seed, 1))));
        // Without the solver: `RulesGame` keeps `Game::winning_move`'s default, which clones the
        // whole history once per legal move.
        cases.push((format!("{name} ply 80, puct, rules::Game state, no solver"), Box::new(move |seed| run_from(RulesGame(m2.clone()), plain_puct, seed, 1))));
    }
    // Decisive-move detection alone, per variant, over positions of random games.
    let names = vzero_rules::variant::builtin_names();
    let detect_sets: Vec<Vec<(VariantGame, Vec<vzero_rules::Move>)>> = names
        .iter()
        .map(|name| {
            positions(Variant::builtin(name).expect("built-in variant"), 400)
                .into_iter()
                .map(|st| {
                    let mut moves = Vec::new();
                    st.legal_moves(&mut moves);
                    (st, moves)
                })
                .collect()
        })
        .collect();
    let mut rates = vec![Vec::new(); cases.len()];
    let mut costs = vec![(Vec::new(), Vec::new()); names.len()];
    // Interleaved runs, so that a change in machine load hits every case alike.
    for i in 0..runs {
        for (c, (_, f)) in cases.iter().enumerate() {
            let (sims, secs) = f(1000 + i as u64);
            rates[c].push(sims as f64 / secs);
        }
        for (set, cost) in detect_sets.iter().zip(&mut costs) {
            let (expand, detect) = detection_cost(set);
            cost.0.push(expand);
            cost.1.push(detect);
        }
    }
    println!("mcts bench: sims/s, zero-cost evaluator (uniform priors, value 0), single thread, median of {runs} runs");
    println!("games: 16 moves x 800 sims from the position, tree reuse on; toy game: ~30 moves/position, double moves 1 in 16");
    let reference = median(rates[0].clone()).0;
    let medians: Vec<f64> = rates.iter().map(|r| median(r.clone()).0).collect();
    for (c, ((name, _), r)) in cases.iter().zip(rates).enumerate() {
        let (med, lo, hi) = median(r);
        // The solver's case is right before its "no solver" twin.
        let vs_plain = cases.get(c + 1).filter(|(n, _)| *n == format!("{name}, no solver")).map(|_| medians[c] / medians[c + 1]);
        let vs_plain = vs_plain.map_or(String::new(), |x| format!("  solver/plain x{x:.2}"));
        println!("{name:50} median {med:>9.0} sims/s  x{:.2} of toy  (min {lo:.0}, max {hi:.0}){vs_plain}", med / reference);
    }
    println!("decisive-move detection (Game::winning_move) per node, 400 positions 10-89 plies into random games, ns (median of runs):");
    for (name, (expand, detect)) in names.iter().zip(costs) {
        let (e, d) = (median(expand).0, median(detect).0);
        println!("{name:16} expand {e:>7.0} ns  winning_move {d:>6.0} ns  (x{:.2} of expand)", d / e);
    }
}
