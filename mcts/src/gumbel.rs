//! Gumbel root search pieces (Danihelka et al., "Policy improvement by planning with Gumbel",
//! ICLR 2022), following DeepMind mctx: the sequential-halving visit schedule
//! (`seq_halving.py`) and the completed-Q transform (`qtransform_completed_by_mix_value`).
//!
//! As in mctx, Gumbel-top-k is implicit: simulation `k` may only go to a root action whose visit
//! count (in this search) equals `considered_visits(m, n)[k]`, and among those the action with the
//! largest `g + logits + sigma(completedQ)` is taken. The first `m` simulations therefore visit the
//! top-m actions by `g + logits`, and each later phase keeps the better half.
//!
//! Only the root uses Gumbel selection; interior nodes use plain PUCT (with FPU and virtual loss),
//! not mctx's deterministic non-root selection. Visit counts for the halving schedule are those of
//! the current search (reused subtree visits do not shift the schedule), while sigma uses the full
//! visit counts of the root's edges.

use crate::config::GumbelConfig;

/// Floor for log-priors (mctx `low_logit`): keeps zero-prior moves finite.
pub const LOW_LOGIT: f32 = -1e9;

/// Visit count an action must have (in this search) to receive simulation `k`, for `k < num_simulations`
/// (mctx `get_sequence_of_considered_visits`). `max_considered` should already be capped by the
/// number of legal moves.
pub fn considered_visits(max_considered: usize, num_simulations: usize) -> Vec<u32> {
    if max_considered <= 1 {
        return (0..num_simulations as u32).collect();
    }
    let log2max = (max_considered as f64).log2().ceil() as usize;
    let mut seq = Vec::with_capacity(num_simulations + max_considered);
    let mut visits = vec![0u32; max_considered];
    let mut considered = max_considered;
    while seq.len() < num_simulations {
        let extra = (num_simulations / (log2max * considered)).max(1);
        for _ in 0..extra {
            seq.extend_from_slice(&visits[..considered]);
            for v in &mut visits[..considered] {
                *v += 1;
            }
        }
        considered = (considered / 2).max(2);
    }
    seq.truncate(num_simulations);
    seq
}

/// Log-prior logits for `priors`, floored at [`LOW_LOGIT`].
pub fn logits_from_priors(priors: &[f32], out: &mut Vec<f32>) {
    out.clear();
    out.extend(priors.iter().map(|&p| if p > 0.0 { p.ln().max(LOW_LOGIT) } else { LOW_LOGIT }));
}

/// sigma(completedQ) for every root action, written into `out`.
///
/// `q[i]` is the mean value of action `i` from the mover's perspective (ignored when `visits[i] == 0`);
/// `raw_value` is the evaluator's value of the root for the same player. Unvisited actions get the
/// mixed value `(raw + sum N * sum_{visited} p q / sum_{visited} p) / (sum N + 1)`. The result is
/// `(c_visit + max N) * c_scale * q'` where `q'` is the completed Q, min-max rescaled if configured.
pub fn sigma_completed_q(
    cfg: &GumbelConfig,
    raw_value: f32,
    priors: &[f32],
    visits: &[u32],
    q: &[f32],
    out: &mut Vec<f32>,
) {
    let n = priors.len();
    debug_assert!(visits.len() == n && q.len() == n);
    let mut sum_n = 0f64;
    let mut max_n = 0u32;
    let mut sum_p = 0f64;
    let mut sum_pq = 0f64;
    for i in 0..n {
        if visits[i] > 0 {
            let p = priors[i].max(f32::MIN_POSITIVE) as f64;
            sum_n += visits[i] as f64;
            max_n = max_n.max(visits[i]);
            sum_p += p;
            sum_pq += p * q[i] as f64;
        }
    }
    let weighted_q = if sum_p > 0.0 { sum_pq / sum_p } else { 0.0 };
    let mixed = ((raw_value as f64 + sum_n * weighted_q) / (sum_n + 1.0)) as f32;
    out.clear();
    out.extend((0..n).map(|i| if visits[i] > 0 { q[i] } else { mixed }));
    if cfg.rescale_q {
        let lo = out.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = out.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let span = (hi - lo).max(1e-8);
        out.iter_mut().for_each(|x| *x = (*x - lo) / span);
    }
    let scale = (cfg.c_visit + max_n as f32) * cfg.c_scale;
    out.iter_mut().for_each(|x| *x *= scale);
}

/// Softmax of `logits + sigma` into `out` (the improved policy target; sums to 1).
pub fn improved_policy(logits: &[f32], sigma: &[f32], out: &mut Vec<f32>) {
    out.clear();
    out.extend(logits.iter().zip(sigma).map(|(l, s)| l + s));
    let max = out.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f64;
    for x in out.iter_mut() {
        *x = (*x - max).exp();
        sum += *x as f64;
    }
    out.iter_mut().for_each(|x| *x = (*x as f64 / sum) as f32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn considered_visits_matches_mctx() {
        // Values computed with mctx's seq_halving.get_sequence_of_considered_visits.
        assert_eq!(considered_visits(1, 4), vec![0, 1, 2, 3]);
        assert_eq!(considered_visits(2, 6), vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(
            considered_visits(4, 16),
            vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        );
        let s = considered_visits(16, 32);
        assert_eq!(&s[..16], &[0; 16]);
        assert_eq!(&s[16..24], &[1; 8]);
        assert_eq!(&s[24..32], &[2, 2, 2, 2, 3, 3, 3, 3]);
    }

    #[test]
    fn completed_q_uses_mixed_value_for_unvisited() {
        let cfg = GumbelConfig { rescale_q: false, c_visit: 0.0, c_scale: 1.0, ..GumbelConfig::default() };
        let mut out = Vec::new();
        // Two visited actions (p 0.5 q 1.0 x2 visits, p 0.25 q -1.0 x1), one unvisited.
        sigma_completed_q(&cfg, 0.2, &[0.5, 0.25, 0.25], &[2, 1, 0], &[1.0, -1.0, 0.0], &mut out);
        let weighted = (0.5 * 1.0 - 0.25) / 0.75;
        let mixed = (0.2 + 3.0 * weighted) / 4.0;
        // scale = (0 + max N = 2) * 1
        assert!((out[0] - 2.0).abs() < 1e-6);
        assert!((out[1] + 2.0).abs() < 1e-6);
        assert!((out[2] - 2.0 * mixed).abs() < 1e-6, "{out:?}");
    }

    #[test]
    fn improved_policy_is_a_distribution() {
        let mut out = Vec::new();
        improved_policy(&[0.0, -1.0, LOW_LOGIT], &[1.0, 0.0, 0.0], &mut out);
        assert!((out.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(out[0] > out[1] && out[2] == 0.0);
    }
}
