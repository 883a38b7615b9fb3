//! Seeded random sampling used by the search: Dirichlet noise and Gumbel variates.
//!
//! Gamma variates use Marsaglia–Tsang (with the `U^(1/a)` boost for `a < 1`, kept in log space so
//! that tiny per-move concentrations — 10.83 spread over 300 moves — never underflow to all zeros).

use rand::Rng;

/// The search's random number generator: ChaCha8, seeded, reproducible across platforms.
pub type SearchRng = rand_chacha::ChaCha8Rng;

fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // Box–Muller; u1 in (0, 1].
    let u1 = 1.0 - rng.gen::<f64>();
    let u2 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Natural log of a Gamma(alpha, 1) variate (`alpha > 0`).
pub fn ln_gamma_sample<R: Rng + ?Sized>(alpha: f64, rng: &mut R) -> f64 {
    assert!(alpha > 0.0, "gamma shape must be positive");
    if alpha < 1.0 {
        let u = 1.0 - rng.gen::<f64>(); // (0, 1]
        return ln_gamma_sample(alpha + 1.0, rng) + u.ln() / alpha;
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - rng.gen::<f64>();
        if u < 1.0 - 0.0331 * x * x * x * x || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return (d * v).ln();
        }
    }
}

/// Fills `out` (its current length) with a symmetric Dirichlet sample of concentration `alpha` per entry.
pub fn dirichlet<R: Rng + ?Sized>(alpha: f64, out: &mut [f32], rng: &mut R) {
    if out.is_empty() {
        return;
    }
    let logs: Vec<f64> = (0..out.len()).map(|_| ln_gamma_sample(alpha, rng)).collect();
    let max = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logs.iter().map(|l| (l - max).exp()).sum();
    for (o, l) in out.iter_mut().zip(&logs) {
        *o = ((l - max).exp() / sum) as f32;
    }
}

/// A standard Gumbel(0, 1) variate.
pub fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    let u = rng.gen::<f64>().clamp(1e-300, 1.0 - 1e-16);
    (-(-u.ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn gamma_mean_matches_shape() {
        let mut rng = SearchRng::seed_from_u64(1);
        for &a in &[0.05f64, 0.3, 1.0, 2.5, 10.0] {
            let n = 20000;
            let mean: f64 = (0..n).map(|_| ln_gamma_sample(a, &mut rng).exp()).sum::<f64>() / n as f64;
            assert!((mean - a).abs() < 0.06 * a.max(1.0), "shape {a}: mean {mean}");
        }
    }

    #[test]
    fn dirichlet_sums_to_one_even_with_tiny_alpha() {
        let mut rng = SearchRng::seed_from_u64(2);
        let mut v = vec![0.0f32; 300];
        dirichlet(10.83 / 300.0, &mut v, &mut rng);
        let s: f32 = v.iter().sum();
        assert!((s - 1.0).abs() < 1e-4);
        assert!(v.iter().all(|x| x.is_finite() && *x >= 0.0));
        // Small alpha concentrates the mass on a few entries.
        let max = v.iter().cloned().fold(0.0, f32::max);
        assert!(max > 0.05, "max {max}");
    }

    #[test]
    fn gumbel_mean_is_euler_gamma() {
        let mut rng = SearchRng::seed_from_u64(3);
        let n = 50000;
        let m: f64 = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((m - 0.5772).abs() < 0.03, "mean {m}");
    }
}
