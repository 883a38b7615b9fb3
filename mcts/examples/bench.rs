//! Simulations per second of the search with a zero-cost stub evaluator, single thread.
//!
//! `cargo run --release -p vzero-mcts --example bench [runs]`
//!
//! The toy game has 28-32 legal moves per position, occasional double moves, and ends after
//! 60 plies; the evaluator returns uniform priors and value 0. Each run plays 16 moves of a game
//! (800 simulations per move, tree reuse on) and the median over the runs is printed.

use std::time::Instant;
use vzero_mcts::{uniform_evaluator, Game, GumbelConfig, RootMode, Search, SearchConfig};

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
    let start = Toy { h: seed, ply: 0, to_move: 0 };
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
        let r = s.finish().unwrap();
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
    println!("mcts bench: toy game ~30 moves/position, 800 sims/move x 16 moves, zero-cost evaluator, {runs} runs");
    for (name, cfg, batch) in cases {
        let rates = (0..runs)
            .map(|i| {
                let (sims, secs) = run_game(cfg, 1000 + i as u64, batch);
                sims as f64 / secs
            })
            .collect();
        let (med, lo, hi) = median(rates);
        println!("{name:30} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})");
    }
    let rates = (0..runs)
        .map(|i| {
            let (sims, secs) = run_big(&puct, 2000 + i as u64, 50_000);
            sims as f64 / secs
        })
        .collect();
    let (med, lo, hi) = median(rates);
    println!("{:30} median {med:>9.0} sims/s  (min {lo:.0}, max {hi:.0})", "puct, one 50k-sim search");
}
