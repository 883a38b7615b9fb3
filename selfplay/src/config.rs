//! Self-play settings, as read from the `[selfplay]` section of a training config.

use serde::{Deserialize, Serialize};

use crate::targets::CapOutcome;
use vzero_openings::OpeningLine;
use vzero_rules::Variant;
use vzero_mcts::{
    DirichletNoise, GumbelConfig, PlayoutCap, ResignConfig, RootMode, SearchConfig, TemperatureSchedule,
};

/// Earlier games of a worker that a branched game may start from (see
/// [`SelfplayConfig::branch_prob`]).
pub const BRANCH_MEMORY: usize = 64;

/// How self-play games are played and written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Worker threads, each with its own copy of the network (1 torch thread each).
    pub workers: usize,
    /// Games each worker plays at once; their leaves share one forward pass.
    pub games_per_worker: usize,
    /// Leaves gathered from one game's tree per forward pass (virtual loss spreads them).
    pub leaves_per_game: usize,
    /// Simulations of a full search (its policy is a training target).
    pub full_sims: u32,
    /// Simulations of a cheap search (only moves the game on).
    pub cheap_sims: u32,
    /// Probability that a move gets a full search (playout cap randomisation).
    pub full_prob: f32,
    /// Gumbel root (sequential halving, completed-Q targets) instead of PUCT with noise.
    pub gumbel: bool,
    /// Moves the Gumbel root considers.
    pub considered: usize,
    /// Gumbel root: `c_visit` in the policy target's sigma(q) = (c_visit + max N) * c_scale * q
    /// (mctx `maxvisit_init`, 50).
    pub gumbel_c_visit: f32,
    /// Gumbel root: `c_scale` in sigma(q) (mctx `value_scale`, 0.1). At a few dozen simulations
    /// sigma spans about 7 logits, so the targets keep most of their mass on the prior's
    /// unvisited moves; a larger `c_scale` puts it on the moves the search preferred.
    pub gumbel_c_scale: f32,
    /// Dirichlet noise at the root, total concentration spread over the legal moves (PUCT).
    pub dirichlet_total: f32,
    /// Share of the noise in the root prior (PUCT).
    pub dirichlet_fraction: f32,
    /// Move temperature at ply 0, decaying towards `temperature_final` (PUCT).
    pub temperature_initial: f32,
    /// Temperature reached late in the game.
    pub temperature_final: f32,
    /// Plies for the temperature to go half the way.
    pub temperature_half_life: f32,
    /// Resign below this root value for the side to move (-1 disables).
    pub resign_threshold: f32,
    /// ...held for this many consecutive own moves.
    pub resign_consecutive: u32,
    /// Share of games never resigned, to measure the false-resign rate.
    pub resign_playthrough: f32,
    /// Games are stopped at this many plies; `cap_outcome` says what they teach.
    pub max_plies: u32,
    /// What a game stopped at `max_plies` teaches: `search` (each row its own search's W/D/L),
    /// `material` (the side ahead by `cap_material_margin` pawns of quiescent material wins,
    /// else a draw) or `draw`.
    pub cap_outcome: CapOutcome,
    /// Pawns of quiescent material that win a capped game under `cap_outcome = "material"`.
    pub cap_material_margin: f32,
    /// Under `cap_outcome = "material"`, pawns added to a side's balance for each rank its royal
    /// piece is nearer its campmate ranks than the opponent's is to theirs (a king walk toward
    /// the winning rank counts; 0: off; nothing in variants without campmate).
    pub cap_king_advance: f32,
    /// Each game starts with a number of uniformly random legal moves, itself drawn uniformly
    /// from `0..=opening_random_plies` (0: every game starts from the start position). They
    /// are kept in the game record but are no training rows: a curriculum of varied, often
    /// unbalanced positions, so fewer games are the same long shuffle.
    pub opening_random_plies: u32,
    /// Share of new games (not branched, not from `start_book`) that start from a reduced army:
    /// the start position with a random number (1 to `reduced_army_share` of each side's
    /// non-royal pieces) taken off each side, mirrored where the start is symmetric, castling
    /// rights dropped ([`crate::reduced_army()`]); `opening_random_plies` follow. Endings come
    /// within plies, so games teach turning a lead into the result the rules count (0: off).
    pub reduced_army_prob: f32,
    /// The largest share of each side's non-royal pieces a reduced-army start takes off.
    pub reduced_army_share: f32,
    /// Probability that a new game starts from a position of an earlier game of the same
    /// worker instead of the start (KataGo's branching from earlier games): a uniformly random
    /// ply of one of its last [`BRANCH_MEMORY`] games, replayed from the start so repetitions
    /// count. The replayed moves are kept in the record but are no training rows, and the
    /// `max_plies` cap still counts from the start, so a branched game reaches its result in
    /// fewer searched plies: more results per hour, from middlegames and endings (0: off).
    pub branch_prob: f32,
    /// An opening list (read by [`vzero_openings::read_lines`]: FEN, EPD or UCI-move lines, or a
    /// PGN file, e.g. games `alphabeta:2` played against itself) whose lines games may start
    /// inside: with probability `start_book_prob` a game (not branched) starts at a uniformly
    /// random ply of a uniformly random line, its replayed moves no training rows. A path
    /// relative to the working directory; `None`: off.
    pub start_book: Option<String>,
    /// Share of new games that start inside a `start_book` line.
    pub start_book_prob: f32,
    /// Contempt in self-play searches: while choosing moves a draw counts `-contempt` for the
    /// side to move and `+contempt` for its opponent (`SearchConfig::contempt`), so both sides
    /// steer away from draws on their own moves; the values and targets written stay unbiased
    /// (0: off; in [-1, 1]).
    pub contempt: f32,
    /// Rows per HDF5 chunk file.
    pub rows_per_chunk: usize,
    /// Seconds between checks for a newer checkpoint.
    pub poll_seconds: f64,
    /// Progressive simulations: learner steps over which the search budgets grow linearly from
    /// `sims_start_fraction` of `full_sims` and `cheap_sims` to their full values (0: off). A
    /// young network gains little from a deep search, so early games are played faster.
    pub sims_ramp_steps: u64,
    /// Share of the budgets at step 0 of the ramp.
    pub sims_start_fraction: f32,
    /// Horizons (plies) of the short-term value targets written with every row (KataGo's
    /// short-term values: exponentially weighted averages of the following search values, see
    /// `data/README.md`); a network with `[net] short_term_value = true` predicts these.
    pub short_term_horizons: Vec<u32>,
    /// Where the workers' forward passes run: each worker its own network (`per-worker`), or
    /// one evaluation server per process batching the leaves of all workers (`shared`).
    pub evaluator: EvaluatorMode,
    /// Shared evaluator: server threads (each runs forward passes with its own copy of the
    /// network while another collects the next batch).
    pub evaluator_threads: usize,
    /// Shared evaluator: milliseconds a batch waits, after its first request, for workers not
    /// yet in (never when all are in).
    pub evaluator_wait_ms: f64,
    /// Shared evaluator: positions at which a batch stops collecting.
    pub evaluator_max_batch: usize,
}

/// Where self-play's forward passes run (see [`SelfplayConfig::evaluator`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvaluatorMode {
    /// Each worker evaluates its own leaves in its own thread.
    #[default]
    PerWorker,
    /// One server per process batches the leaves of all workers.
    Shared,
}

impl std::fmt::Display for EvaluatorMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EvaluatorMode::PerWorker => "per-worker",
            EvaluatorMode::Shared => "shared",
        })
    }
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            workers: 2,
            games_per_worker: 16,
            leaves_per_game: 2,
            full_sims: 64,
            cheap_sims: 16,
            full_prob: 0.25,
            gumbel: true,
            considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            dirichlet_total: 10.83,
            dirichlet_fraction: 0.25,
            temperature_initial: 0.75,
            temperature_final: 0.15,
            temperature_half_life: 19.0,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            resign_playthrough: 0.1,
            max_plies: 300,
            cap_outcome: CapOutcome::Search,
            cap_material_margin: 3.0,
            cap_king_advance: 0.0,
            opening_random_plies: 0,
            reduced_army_prob: 0.0,
            reduced_army_share: 0.5,
            branch_prob: 0.0,
            start_book: None,
            start_book_prob: 0.5,
            contempt: 0.0,
            rows_per_chunk: 2000,
            poll_seconds: 2.0,
            sims_ramp_steps: 0,
            sims_start_fraction: 0.25,
            short_term_horizons: vec![6, 16],
            evaluator: EvaluatorMode::PerWorker,
            evaluator_threads: 2,
            evaluator_wait_ms: 2.0,
            evaluator_max_batch: 4096,
        }
    }
}

impl SelfplayConfig {
    /// Checks every field, naming the first one out of range.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, field: &str, want: &str| if ok { Ok(()) } else { Err(format!("selfplay.{field} must be {want}")) };
        check((1..=256).contains(&self.workers), "workers", "1..=256")?;
        check((1..=4096).contains(&self.games_per_worker), "games_per_worker", "1..=4096")?;
        check((1..=64).contains(&self.leaves_per_game), "leaves_per_game", "1..=64")?;
        check(self.full_sims >= 1, "full_sims", "at least 1")?;
        check(self.cheap_sims >= 1 && self.cheap_sims <= self.full_sims, "cheap_sims", "1..=full_sims")?;
        check((0.0..=1.0).contains(&self.full_prob) && self.full_prob > 0.0, "full_prob", "in (0, 1]")?;
        check(self.considered >= 2, "considered", "at least 2")?;
        check(self.gumbel_c_visit.is_finite() && self.gumbel_c_visit >= 0.0, "gumbel_c_visit", "a non-negative number")?;
        check(self.gumbel_c_scale.is_finite() && self.gumbel_c_scale > 0.0, "gumbel_c_scale", "a positive number")?;
        check(self.dirichlet_total > 0.0, "dirichlet_total", "positive")?;
        check((0.0..=1.0).contains(&self.dirichlet_fraction), "dirichlet_fraction", "in [0, 1]")?;
        check(self.temperature_initial >= 0.0 && self.temperature_final >= 0.0, "temperature_*", "non-negative")?;
        check((-1.0..=0.0).contains(&self.resign_threshold), "resign_threshold", "in [-1, 0]")?;
        check((0.0..=1.0).contains(&self.resign_playthrough), "resign_playthrough", "in [0, 1]")?;
        check(self.max_plies >= 2, "max_plies", "at least 2")?;
        check(self.cap_material_margin > 0.0, "cap_material_margin", "positive")?;
        check((0.0..=10.0).contains(&self.cap_king_advance), "cap_king_advance", "in [0, 10] pawns per rank")?;
        check(self.opening_random_plies < self.max_plies.min(1000), "opening_random_plies", "below max_plies (and 1000)")?;
        check((0.0..=1.0).contains(&self.reduced_army_prob), "reduced_army_prob", "in [0, 1]")?;
        check(self.reduced_army_share > 0.0 && self.reduced_army_share <= 1.0, "reduced_army_share", "in (0, 1]")?;
        check((0.0..=1.0).contains(&self.branch_prob), "branch_prob", "in [0, 1]")?;
        check((0.0..=1.0).contains(&self.start_book_prob), "start_book_prob", "in [0, 1]")?;
        check(self.start_book.as_ref().is_none_or(|p| !p.trim().is_empty()), "start_book", "a path")?;
        check((-1.0..=1.0).contains(&self.contempt), "contempt", "in [-1, 1]")?;
        check(self.rows_per_chunk >= 1, "rows_per_chunk", "at least 1")?;
        check(self.poll_seconds > 0.0, "poll_seconds", "positive")?;
        check(self.sims_start_fraction > 0.0 && self.sims_start_fraction <= 1.0, "sims_start_fraction", "in (0, 1]")?;
        check((1..=64).contains(&self.evaluator_threads), "evaluator_threads", "1..=64")?;
        check((0.0..=1000.0).contains(&self.evaluator_wait_ms), "evaluator_wait_ms", "in [0, 1000]")?;
        check(self.evaluator_max_batch >= 1, "evaluator_max_batch", "at least 1")?;
        vzero_model::validate_horizons(&self.short_term_horizons, false).map_err(|e| format!("selfplay.short_term_horizons {e}"))?;
        Ok(())
    }

    /// The lines of `start_book` (empty when there is none); an unreadable or empty book is an
    /// error naming the file and line.
    pub fn start_lines(&self, variant: Variant) -> anyhow::Result<Vec<OpeningLine>> {
        match &self.start_book {
            None => Ok(Vec::new()),
            Some(path) => vzero_openings::read_lines(std::path::Path::new(path), variant)
                .map_err(|e| anyhow::anyhow!("selfplay.start_book: {e:#}")),
        }
    }

    /// The playout cap for a network trained for `step` learner steps (progressive simulations).
    pub fn playout_cap_at(&self, step: u64) -> PlayoutCap {
        let f = if self.sims_ramp_steps == 0 {
            1.0
        } else {
            let t = (step as f64 / self.sims_ramp_steps as f64).min(1.0) as f32;
            self.sims_start_fraction + (1.0 - self.sims_start_fraction) * t
        };
        let scale = |n: u32| ((n as f32 * f).round() as u32).clamp(1, n);
        PlayoutCap { full_prob: self.full_prob, full_sims: scale(self.full_sims), cheap_sims: scale(self.cheap_sims), noise_in_cheap: false }
    }

    /// The search settings these options describe, for a network at learner step `step`.
    pub fn search_config_at(&self, step: u64) -> SearchConfig {
        SearchConfig { playout_cap: self.playout_cap_at(step), ..self.search_config() }
    }

    /// The search settings these options describe (the full budgets).
    pub fn search_config(&self) -> SearchConfig {
        let base = SearchConfig { playout_cap: self.playout_cap_at(u64::MAX), contempt: self.contempt, ..SearchConfig::default() };
        if self.gumbel {
            SearchConfig {
                root_mode: RootMode::Gumbel(GumbelConfig {
                    max_considered: self.considered,
                    c_visit: self.gumbel_c_visit,
                    c_scale: self.gumbel_c_scale,
                    ..GumbelConfig::default()
                }),
                ..base
            }
        } else {
            SearchConfig {
                noise: Some(DirichletNoise { total_alpha: self.dirichlet_total, fraction: self.dirichlet_fraction }),
                temperature: TemperatureSchedule {
                    initial: self.temperature_initial,
                    final_: self.temperature_final,
                    half_life: self.temperature_half_life,
                },
                ..base
            }
        }
    }

    /// The process's evaluation server these options ask for (`None`: per-worker networks).
    pub fn start_evaluator(&self) -> Result<Option<std::sync::Arc<vzero_model::EvalServer>>, vzero_model::ModelError> {
        if self.evaluator == EvaluatorMode::PerWorker {
            return Ok(None);
        }
        let config = vzero_model::ServerConfig {
            executors: self.evaluator_threads,
            max_batch: self.evaluator_max_batch,
            max_wait: std::time::Duration::from_secs_f64(self.evaluator_wait_ms / 1000.0),
            threads: 1,
        };
        Ok(Some(std::sync::Arc::new(vzero_model::EvalServer::start(config)?)))
    }

    /// The resignation settings.
    pub fn resign_config(&self) -> ResignConfig {
        ResignConfig {
            threshold: self.resign_threshold,
            consecutive: self.resign_consecutive,
            playthrough_fraction: self.resign_playthrough,
            min_ply: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progressive_simulations_grow_linearly_to_the_full_budget() {
        let c = SelfplayConfig { full_sims: 64, cheap_sims: 16, sims_ramp_steps: 1000, sims_start_fraction: 0.25, ..SelfplayConfig::default() };
        let at = |s| c.playout_cap_at(s);
        assert_eq!((at(0).full_sims, at(0).cheap_sims), (16, 4));
        assert_eq!((at(500).full_sims, at(500).cheap_sims), (40, 10));
        assert_eq!((at(1000).full_sims, at(1000).cheap_sims), (64, 16));
        assert_eq!(at(10_000).full_sims, 64);
        assert_eq!(c.search_config().playout_cap.full_sims, 64);
        let off = SelfplayConfig { sims_ramp_steps: 0, ..c.clone() };
        assert_eq!(off.playout_cap_at(0).full_sims, 64);
        // never below one simulation
        let tiny = SelfplayConfig { full_sims: 2, cheap_sims: 1, sims_start_fraction: 0.01, ..c };
        assert_eq!((tiny.playout_cap_at(0).full_sims, tiny.playout_cap_at(0).cheap_sims), (1, 1));
        assert!(SelfplayConfig { sims_start_fraction: 0.0, ..SelfplayConfig::default() }.validate().unwrap_err().contains("sims_start_fraction"));
    }

    #[test]
    fn the_evaluator_settings_are_read_and_validated() {
        let c: SelfplayConfig = toml::from_str("evaluator = \"shared\"\nevaluator_threads = 3\nevaluator_wait_ms = 0.5").unwrap();
        assert_eq!((c.evaluator, c.evaluator_threads, c.evaluator_wait_ms), (EvaluatorMode::Shared, 3, 0.5));
        assert_eq!(SelfplayConfig::default().evaluator, EvaluatorMode::PerWorker);
        assert!(toml::from_str::<SelfplayConfig>("evaluator = \"gpu\"").is_err());
        assert!(SelfplayConfig { evaluator_threads: 0, ..c.clone() }.validate().unwrap_err().contains("evaluator_threads"));
        assert!(SelfplayConfig { evaluator_wait_ms: -1.0, ..c.clone() }.validate().unwrap_err().contains("evaluator_wait_ms"));
        assert!(SelfplayConfig::default().start_evaluator().unwrap().is_none());
        let server = c.start_evaluator().unwrap().expect("a shared evaluator");
        assert_eq!(server.config().executors, 3);
        assert_eq!(server.config().max_wait, std::time::Duration::from_micros(500));
    }

    #[test]
    fn random_opening_plies_and_branching_are_read_and_validated() {
        assert_eq!(SelfplayConfig::default().opening_random_plies, 0);
        let c: SelfplayConfig = toml::from_str("opening_random_plies = 8\nmax_plies = 200").unwrap();
        assert_eq!(c.opening_random_plies, 8);
        c.validate().unwrap();
        let e = SelfplayConfig { opening_random_plies: 200, ..c.clone() }.validate().unwrap_err();
        assert!(e.contains("opening_random_plies"), "{e}");
        assert_eq!(SelfplayConfig::default().branch_prob, 0.0);
        let b: SelfplayConfig = toml::from_str("branch_prob = 0.5").unwrap();
        assert_eq!(b.branch_prob, 0.5);
        b.validate().unwrap();
        for bad in [-0.1, 1.5, f32::NAN] {
            assert!(SelfplayConfig { branch_prob: bad, ..c.clone() }.validate().unwrap_err().contains("branch_prob"), "{bad}");
        }
    }

    #[test]
    fn a_start_book_is_read_validated_and_its_lines_loaded() {
        let variant = Variant::builtin("empire").unwrap();
        assert_eq!((SelfplayConfig::default().start_book, SelfplayConfig::default().start_lines(variant).unwrap().len()), (None, 0));
        let dir = std::env::temp_dir().join(format!("vzero-start-book-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let book = dir.join("book.txt");
        let mut g = vzero_rules::Game::startpos(variant);
        g.play_opening(4, |m| m[0]);
        std::fs::write(&book, format!("# two lines\n{}\n\n{}\n", g.uci_moves().join(" "), g.position().fen())).unwrap();
        let c: SelfplayConfig = toml::from_str(&format!("start_book = {:?}\nstart_book_prob = 0.25", book.display().to_string())).unwrap();
        c.validate().unwrap();
        let lines = c.start_lines(variant).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].moves.as_slice(), lines[0].start.fen()), (g.moves(), g.start().fen()), "a move line keeps its start and moves");
        assert_eq!((lines[1].moves.len(), lines[1].start.fen()), (0, g.position().fen()), "a FEN line is its position");
        for bad in [-0.1, 1.5, f32::NAN] {
            assert!(SelfplayConfig { start_book_prob: bad, ..c.clone() }.validate().unwrap_err().contains("start_book_prob"), "{bad}");
        }
        assert!(SelfplayConfig { start_book: Some(" ".into()), ..c.clone() }.validate().unwrap_err().contains("start_book"));
        let missing = SelfplayConfig { start_book: Some(dir.join("nope.pgn").display().to_string()), ..c.clone() };
        let e = format!("{:#}", missing.start_lines(variant).unwrap_err());
        assert!(e.contains("selfplay.start_book") && e.contains("nope.pgn"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_king_advance_at_the_cap_is_read_and_validated() {
        assert_eq!(SelfplayConfig::default().cap_king_advance, 0.0);
        let c: SelfplayConfig = toml::from_str("cap_outcome = \"material\"\ncap_king_advance = 0.5").unwrap();
        c.validate().unwrap();
        assert_eq!(c.cap_king_advance, 0.5);
        for bad in [-0.5, 11.0, f32::NAN] {
            assert!(SelfplayConfig { cap_king_advance: bad, ..c.clone() }.validate().unwrap_err().contains("cap_king_advance"), "{bad}");
        }
    }

    #[test]
    fn gumbel_target_scale_is_read_validated_and_sharpens_the_targets() {
        let d = SelfplayConfig::default();
        let RootMode::Gumbel(g) = d.search_config().root_mode else { panic!("gumbel root expected") };
        assert_eq!((g.c_visit, g.c_scale), (GumbelConfig::default().c_visit, GumbelConfig::default().c_scale));
        let c: SelfplayConfig = toml::from_str("gumbel_c_visit = 100\ngumbel_c_scale = 0.3").unwrap();
        c.validate().unwrap();
        let RootMode::Gumbel(g3) = c.search_config_at(0).root_mode else { panic!("gumbel root expected") };
        assert_eq!((g3.c_visit, g3.c_scale), (100.0, 0.3));
        for (field, bad) in [("gumbel_c_visit", -1.0), ("gumbel_c_visit", f32::NAN), ("gumbel_c_scale", 0.0), ("gumbel_c_scale", f32::INFINITY)] {
            let mut b = c.clone();
            if field == "gumbel_c_visit" { b.gumbel_c_visit = bad } else { b.gumbel_c_scale = bad }
            assert!(b.validate().unwrap_err().contains(field), "{field} = {bad}");
        }
        // A spqr-like root after 50 simulations: 70 legal moves under a flat prior, the best of 16
        // considered moves visited 20 times (Q 0.15), the other 15 twice (Q spread over [-0.1, 0.1]).
        let n = 70;
        let logits = vec![0.0f32; n];
        let priors = vec![1.0 / n as f32; n];
        let visits: Vec<u32> = (0..n).map(|i| if i == 0 { 20 } else if i < 16 { 2 } else { 0 }).collect();
        let q: Vec<f32> = (0..n).map(|i| if i == 0 { 0.15 } else if i < 16 { -0.1 + 0.2 * (i - 1) as f32 / 14.0 } else { 0.0 }).collect();
        let best_share = |cfg: &GumbelConfig| {
            let (mut sigma, mut target) = (Vec::new(), Vec::new());
            vzero_mcts::gumbel::sigma_completed_q(cfg, 0.0, &priors, &visits, &q, &mut sigma);
            vzero_mcts::gumbel::improved_policy(&logits, &sigma, &mut target);
            target[0]
        };
        let (soft, sharp) = (best_share(&g), best_share(&g3));
        assert!(soft < 0.5, "default scale leaves most of the target off the best move: {soft}");
        assert!(sharp > 0.9, "c_visit 100, c_scale 0.3 put the target on the search's best move: {sharp}");
    }

    #[test]
    fn contempt_is_read_validated_and_given_to_every_search() {
        assert_eq!(SelfplayConfig::default().contempt, 0.0);
        let c: SelfplayConfig = toml::from_str("contempt = 0.2").unwrap();
        c.validate().unwrap();
        assert_eq!(c.search_config().contempt, 0.2);
        assert_eq!(SelfplayConfig { gumbel: false, ..c.clone() }.search_config().contempt, 0.2);
        assert_eq!(c.search_config_at(0).contempt, 0.2);
        for bad in [-1.5, 2.0, f32::NAN] {
            assert!(SelfplayConfig { contempt: bad, ..c.clone() }.validate().unwrap_err().contains("contempt"), "{bad}");
        }
    }

    #[test]
    fn short_term_horizons_are_validated() {
        SelfplayConfig::default().validate().unwrap();
        for h in [vec![], vec![0], vec![6, 6], vec![1; 9]] {
            let e = SelfplayConfig { short_term_horizons: h.clone(), ..SelfplayConfig::default() }.validate().unwrap_err();
            assert!(e.starts_with("selfplay.short_term_horizons"), "{h:?}: {e}");
        }
    }
}
