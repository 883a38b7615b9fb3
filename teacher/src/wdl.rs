//! From a teacher's score to a W/D/L value target.

use vzero_arena::Score;

/// Default scale of the logistic, in centipawns: lichess's win-probability model
/// `1 / (1 + exp(-0.00368208 · cp))`, i.e. `1 / 0.00368208` ≈ 271.6. One pawn gives 59%, a
/// minor piece about 75%, a queen 96%.
pub const DEFAULT_CP_SCALE: f64 = 271.6;

/// The W/D/L target of `score` for the side to move: `cp` → `p = 1 / (1 + exp(-cp / cp_scale))`,
/// `[p, 0, 1 − p]` (a score says nothing about draws: its expectation is what is kept); a
/// mate for the side to move → `[1, 0, 0]`, a mate against it (or `mate 0`) → `[0, 0, 1]`.
pub fn score_to_wdl(score: Score, cp_scale: f64) -> [f32; 3] {
    match score {
        Score::Mate(n) if n > 0 => [1.0, 0.0, 0.0],
        Score::Mate(_) => [0.0, 0.0, 1.0],
        Score::Cp(cp) => {
            let p = 1.0 / (1.0 + (-(cp as f64) / cp_scale).exp());
            [p as f32, 0.0, (1.0 - p) as f32]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logistic_is_monotone_symmetric_and_sums_to_one() {
        let mut last = -1.0;
        for cp in (-2000..=2000).step_by(50) {
            let w = score_to_wdl(Score::Cp(cp), DEFAULT_CP_SCALE);
            assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            assert!(w[0] > last, "not increasing at {cp}");
            last = w[0];
            let m = score_to_wdl(Score::Cp(-cp), DEFAULT_CP_SCALE);
            assert!((w[0] - m[2]).abs() < 1e-6, "not symmetric at {cp}");
        }
        assert_eq!(score_to_wdl(Score::Cp(0), DEFAULT_CP_SCALE), [0.5, 0.0, 0.5]);
        let pawn = score_to_wdl(Score::Cp(100), DEFAULT_CP_SCALE)[0];
        assert!((pawn - 0.591).abs() < 0.002, "{pawn}");
        assert_eq!(score_to_wdl(Score::Mate(3), 100.0), [1.0, 0.0, 0.0]);
        assert_eq!(score_to_wdl(Score::Mate(-1), 100.0), [0.0, 0.0, 1.0]);
        assert_eq!(score_to_wdl(Score::Mate(0), 100.0), [0.0, 0.0, 1.0]);
        // a smaller scale is more confident
        assert!(score_to_wdl(Score::Cp(100), 100.0)[0] > pawn);
    }
}
