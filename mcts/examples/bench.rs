//! Simulations per second of the search with a zero-cost stub evaluator, single thread.
//!
//! `cargo run --release -p vzero-mcts --example bench [runs]` (or `scripts/bench.sh mcts [runs]`)
//!
//! The evaluator returns uniform priors and value 0, so this is the search's own ceiling. Each
//! run plays 16 moves of a game (800 simulations per move, tree reuse on) and the median over the
//! runs is printed, first for every built-in variant from its start position ([`VariantGame`]),
//! then for the toy game as a reference measured in the same run. The toy game has 28-32 legal
//! moves per position, occasional double moves, and ends after 60 plies.

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

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    let puct = SearchConfig::default();
    let gumbel = SearchConfig { root_mode: RootMode::Gumbel(GumbelConfig::default()), ..SearchConfig::default() };
    let cases: [(&str, &SearchConfig, usize); 3] =
        [("puct, 1 leaf/gather", &puct, 1), ("puct, 16 leaves/gather", &puct, 16), ("gumbel m=16, 1 leaf/gather", &gumbel, 1)];
    println!("mcts bench: 800 sims/move x 16 moves from the start position, zero-cost evaluator, single thread, {runs} runs");
    for name in vzero_rules::variant::builtin_names() {
        let v = Variant::builtin(name).expect("built-in variant");
        let legal = vzero_rules::Position::startpos(v).legal_moves().len();
        for (case, cfg, batch) in [cases[0], cases[2]] {
            let rates = (0..runs)
                .map(|i| {
                    let (sims, secs) = run_from(VariantGame::startpos(v), cfg, 1000 + i as u64, batch);
                    sims as f64 / secs
                })
                .collect();
            let (med, lo, hi) = median(rates);
            let label = format!("{name} ({}x{}, {legal} moves), {case}", v.files(), v.ranks());
            println!("{label:52} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})");
        }
    }
    // Reference: the same search over the rules core's Game (clones its whole history each simulation).
    let v = Variant::builtin("empire").expect("built-in variant");
    let rates = (0..runs)
        .map(|i| {
            let (sims, secs) = run_from(RulesGame(vzero_rules::Game::startpos(v)), &puct, 1000 + i as u64, 1);
            sims as f64 / secs
        })
        .collect();
    let (med, lo, hi) = median(rates);
    println!("{:52} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})", "empire via rules::Game state (reference), puct");
    println!("toy game (reference), ~30 moves/position:");
    for (name, cfg, batch) in cases {
        let rates = (0..runs)
            .map(|i| {
                let (sims, secs) = run_game(cfg, 1000 + i as u64, batch);
                sims as f64 / secs
            })
            .collect();
        let (med, lo, hi) = median(rates);
        println!("{:52} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})", format!("toy, {name}"));
    }
    let rates = (0..runs)
        .map(|i| {
            let (sims, secs) = run_big(&puct, 2000 + i as u64, 50_000);
            sims as f64 / secs
        })
        .collect();
    let (med, lo, hi) = median(rates);
    println!("{:52} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})", "toy, puct, one 50k-sim search");
}
