//! Elo from match results, with 95% intervals, and the SPRT stop rule.
//!
//! * Score `s = (W + D/2) / N`, Elo difference `-400 log10(1/s - 1)` (logistic model).
//! * Interval: normal approximation on the mean score, mapped through the same function. The
//!   variance is the **pentanomial** one (per game pair: 0, ½, 1, 1½, 2 points) when every game
//!   belongs to a complete colour-swapped pair, otherwise the **trinomial** one (per game: W/D/L).
//!   Pairs played from one opening are correlated; the pentanomial variance accounts for that.
//!   When every unit scored the same (a clean sweep, all draws) the sample variance is 0 and the
//!   normal interval would be a point: the Wilson interval with the Bernoulli variance is used
//!   instead, so 100 won games still give a finite lower bound.
//! * SPRT: the generalized SPRT (GSPRT) with the normal approximation of the log-likelihood ratio
//!   for logistic Elo bounds, as in fishtest / Van den Bergh's "LLR_logistic":
//!   `LLR = N (s1 - s0) (2 s̄ - s0 - s1) / (2 σ²)`, with `s0 = score(elo0)`, `s1 = score(elo1)`,
//!   `s̄` and `σ²` the observed mean and variance per unit (game, or pair with scores halved), and
//!   counts regularized by 1e-3 per category (fishtest) so all-win samples stay finite. H1 is
//!   accepted when `LLR ≥ ln((1-β)/α)`, H0 when `LLR ≤ ln(β/(1-α))`.

/// Elo difference of a score in (0, 1); ±infinity at 1 and 0.
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Expected score of an Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// 97.5% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Results of a match from the first player's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchStats {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Complete pairs by the first player's points over the pair: 0, ½, 1, 1½, 2.
    pub penta: [u32; 5],
}

/// An Elo estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EloEstimate {
    pub score: f64,
    pub elo: f64,
    /// Bounds of the 95% interval (Elo).
    pub low: f64,
    pub high: f64,
    /// Whether the pentanomial variance was used.
    pub pentanomial: bool,
}

impl EloEstimate {
    /// Half the width of the interval (the "±" figure); infinite when a bound is.
    pub fn margin(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// SPRT parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

impl SprtConfig {
    /// Parses `elo0,elo1,alpha,beta` (e.g. `0,10,0.05,0.05`).
    pub fn parse(s: &str) -> Result<SprtConfig, String> {
        let v: Vec<f64> = s
            .split(',')
            .map(|x| x.trim().parse::<f64>().map_err(|_| format!("--sprt: '{x}' is not a number")))
            .collect::<Result<_, _>>()?;
        if v.len() != 4 {
            return Err(format!("--sprt wants elo0,elo1,alpha,beta, got '{s}'"));
        }
        let c = SprtConfig { elo0: v[0], elo1: v[1], alpha: v[2], beta: v[3] };
        if !(c.elo1 > c.elo0) {
            return Err("--sprt: elo1 must be greater than elo0".into());
        }
        if !(c.alpha > 0.0 && c.alpha < 0.5 && c.beta > 0.0 && c.beta < 0.5) {
            return Err("--sprt: alpha and beta must be in (0, 0.5)".into());
        }
        Ok(c)
    }

    /// Lower (accept H0) and upper (accept H1) LLR bounds.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }
}

/// What the SPRT says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// Keep playing.
    Continue,
    /// elo ≤ elo0 accepted.
    H0,
    /// elo ≥ elo1 accepted.
    H1,
}

impl std::fmt::Display for SprtDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SprtDecision::Continue => "continue",
            SprtDecision::H0 => "H0 accepted",
            SprtDecision::H1 => "H1 accepted",
        })
    }
}

impl MatchStats {
    /// Games counted.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Complete pairs counted.
    pub fn pairs(&self) -> u32 {
        self.penta.iter().sum()
    }

    /// Points of the first player.
    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }

    /// Adds one game: `score` 1, ½ or 0 for the first player.
    pub fn add_game(&mut self, score: f64) {
        if score > 0.75 {
            self.wins += 1;
        } else if score > 0.25 {
            self.draws += 1;
        } else {
            self.losses += 1;
        }
    }

    /// Adds a complete pair by its total points (0 to 2, in halves); the games themselves are
    /// added with [`MatchStats::add_game`].
    pub fn add_pair(&mut self, points: f64) {
        let i = (points * 2.0).round().clamp(0.0, 4.0) as usize;
        self.penta[i] += 1;
    }

    /// Whether the pentanomial model applies: every game is in a complete pair.
    fn use_penta(&self) -> bool {
        self.pairs() > 0 && 2 * self.pairs() == self.games()
    }

    /// (units, mean score, variance of one unit's score), per game or per pair (pair scores
    /// halved), with counts regularized by `reg` per category.
    fn moments(&self, reg: f64) -> (f64, f64, f64, bool) {
        let (vals, counts): (Vec<f64>, Vec<f64>) = if self.use_penta() {
            ((0..5).map(|i| i as f64 / 4.0).collect(), self.penta.iter().map(|&c| c as f64 + reg).collect())
        } else {
            (vec![1.0, 0.5, 0.0], vec![self.wins as f64 + reg, self.draws as f64 + reg, self.losses as f64 + reg])
        };
        let n: f64 = counts.iter().sum();
        let mean = vals.iter().zip(&counts).map(|(v, c)| v * c).sum::<f64>() / n;
        let var = vals.iter().zip(&counts).map(|(v, c)| c * (v - mean).powi(2)).sum::<f64>() / n;
        (n, mean, var, self.use_penta())
    }

    /// Elo difference with its 95% interval (`None` before any game).
    pub fn elo(&self) -> Option<EloEstimate> {
        if self.games() == 0 {
            return None;
        }
        let (n, mean, var, penta) = self.moments(0.0);
        let (lo, hi) = if var > 0.0 {
            let se = (var / n).sqrt();
            ((mean - Z95 * se).max(0.0), (mean + Z95 * se).min(1.0))
        } else {
            wilson(mean, n)
        };
        Some(EloEstimate { score: mean, elo: elo_from_score(mean), low: elo_from_score(lo), high: elo_from_score(hi), pentanomial: penta })
    }

    /// The GSPRT log-likelihood ratio of H1 against H0 (see the module documentation).
    pub fn llr(&self, c: &SprtConfig) -> f64 {
        if self.games() == 0 {
            return 0.0;
        }
        let (n, mean, var, _) = self.moments(1e-3);
        if var <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (score_from_elo(c.elo0), score_from_elo(c.elo1));
        n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    }

    /// The SPRT decision now.
    pub fn sprt(&self, c: &SprtConfig) -> SprtDecision {
        let llr = self.llr(c);
        let (lo, hi) = c.bounds();
        if llr >= hi {
            SprtDecision::H1
        } else if llr <= lo {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

/// Wilson score interval (95%) of a mean score `p` over `n` units, with the Bernoulli variance
/// `p (1 - p)`: the most a unit score in [0, 1] with that mean can vary. Used when every unit
/// scored the same (all wins, all losses, all draws), where the sample variance is 0 and the
/// normal interval would collapse to a point; 50 won pairs give a lower bound of +446 Elo.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Formats an Elo figure: `+70.4`, `-inf`.
pub fn fmt_elo(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "+inf".into() } else { "-inf".into() }
    } else {
        format!("{:+.1}", x + 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_scores() {
        assert!((elo_from_score(0.6) - 70.437).abs() < 0.01);
        assert!((elo_from_score(0.75) - 190.849).abs() < 0.01);
        assert_eq!(elo_from_score(0.5), 0.0);
        assert!((score_from_elo(elo_from_score(0.3)) - 0.3).abs() < 1e-12);
    }

    fn stats(w: u32, d: u32, l: u32, penta: [u32; 5]) -> MatchStats {
        MatchStats { wins: w, draws: d, losses: l, penta }
    }

    #[test]
    fn a_clean_sweep_has_a_finite_lower_bound_that_grows_with_games() {
        let sweep = |pairs: u32| stats(2 * pairs, 0, 0, [0, 0, 0, 0, pairs]).elo().unwrap();
        let e50 = sweep(50);
        assert_eq!(e50.elo, f64::INFINITY);
        assert_eq!(e50.high, f64::INFINITY);
        // Wilson: 50 / (50 + z²) = 0.9286 -> +446 Elo.
        assert!((e50.low - 445.9).abs() < 1.0, "{}", e50.low);
        assert!(sweep(10).low < e50.low && e50.low < sweep(200).low);
        // The mirror image: a clean loss has a finite upper bound.
        let lost = stats(0, 0, 100, [50, 0, 0, 0, 0]).elo().unwrap();
        assert_eq!(lost.low, f64::NEG_INFINITY);
        assert!((lost.high + e50.low).abs() < 1e-6);
        // Trinomial (incomplete pairs): 7 straight wins.
        let seven = stats(7, 0, 0, [0; 5]).elo().unwrap();
        assert!(seven.low.is_finite() && seven.low > 0.0 && seven.low < e50.low);
    }

    #[test]
    fn all_draws_give_an_interval_around_zero() {
        let d = stats(0, 40, 0, [0, 0, 20, 0, 0]).elo().unwrap();
        assert_eq!(d.elo, 0.0);
        assert!(d.low < -50.0 && d.high > 50.0 && (d.low + d.high).abs() < 1e-6);
    }

    #[test]
    fn mixed_results_keep_the_normal_interval() {
        // 60/20/20 by games, trinomial: the normal interval, unchanged by the Wilson fallback.
        let e = stats(60, 20, 20, [0; 5]).elo().unwrap();
        let (n, mean): (f64, f64) = (100.0, 0.7);
        let var = (60.0 * 0.09 + 20.0 * 0.04 + 20.0 * 0.49) / n;
        let se: f64 = (var / n).sqrt();
        assert!((e.low - elo_from_score(mean - Z95 * se)).abs() < 1e-9);
        assert!((e.high - elo_from_score(mean + Z95 * se)).abs() < 1e-9);
    }
}
