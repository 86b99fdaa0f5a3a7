//! Exact differential-privacy noise: samplers whose output distribution is exactly the one the
//! privacy proof assumes, not a floating-point approximation of it.
//!
//! Textbook Laplace noise (`-b * sign(u) * ln(1 - 2|u|)` on doubles) is deliberately absent: the
//! rounding of `ln` and of the uniform double leaves holes and spikes in the output distribution
//! that can reveal the true value (Mironov 2012). Everything here samples from integers only:
//!
//! - [`bernoulli`]: Bernoulli(num/den) and Bernoulli(exp(-num/den)) (Canonne, Kamath, Steinke
//!   2020, "The Discrete Gaussian for Differential Privacy", section 5.1);
//! - [`laplace`]: the discrete Laplace (two-sided geometric) distribution, CKS 2020 Algorithm 2;
//! - [`exponential`]: the exponential mechanism by rejection with exact Bernoulli(exp(-gamma));
//! - [`rng`]: the generator policy (ChaCha12 seeded from the OS, or from a seed for tests);
//! - [`ledger`]: every table's privacy budget and what each release spent of it.
//!
//! Floating-point parameters (epsilon, utilities, sensitivities) are mapped onto a dyadic grid
//! *before* sampling, rounding in the direction that keeps the privacy claim true; see
//! `docs/dp.md` for the argument.

pub(crate) mod bernoulli;
pub(crate) mod exponential;
pub(crate) mod laplace;
pub mod ledger;
pub(crate) mod rng;
pub(crate) mod subsample;

pub use bernoulli::{bernoulli_exp_neg, bernoulli_rational};
pub use exponential::ExponentialMechanism;
pub use laplace::DiscreteLaplace;
pub use rng::{StreamKey, dp_rng};
pub(crate) use subsample::withhold;

use crate::error::Result;
use rand::Rng;

/// Epsilon is represented as `numerator / 2^EPSILON_GRID_BITS`, rounded down.
pub(crate) const EPSILON_GRID_BITS: u32 = 32;

/// An exactly uniform integer in `0..n` (`n > 0`).
///
/// Not `rng.random_range`: in rand 0.10 that uses Canon's method, which the rand docs describe as
/// biased (1 in 2^64 samples for u64) unless the crate-wide `unbiased` feature is enabled, and
/// enabling it would change every other seeded generator in the engine. Both branches below are
/// rejection samplers whose accepted region is an exact multiple of `n`, hence exactly uniform.
pub(crate) fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u128) -> u128 {
    assert!(n > 0, "uniform_below: empty range");
    if let Ok(n) = u64::try_from(n) {
        // Lemire: the high word of word * n is uniform once low words below 2^64 mod n are rejected.
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(rng.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return m >> 64;
            }
        }
    }
    // Wide ranges: reject the lowest 2^128 mod n values of a 128-bit word, then reduce.
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
        if x >= threshold {
            return x % n;
        }
    }
}

/// `floor(epsilon * 2^32)` as the numerator of a dyadic epsilon' <= epsilon. Multiplying by a
/// power of two is exact in binary floating point and `floor` is exact, so epsilon' never
/// exceeds epsilon. Outside the grid's range ([`ledger::MIN_EPSILON`] to
/// [`ledger::MAX_EPSILON`]) it is an error with the limits, never a silent clamp.
pub(crate) fn epsilon_numerator(function: &str, epsilon: f64) -> Result<u64> {
    ledger::check_epsilon_range(function, epsilon)?;
    Ok((epsilon * (1u64 << EPSILON_GRID_BITS) as f64).floor() as u64)
}

/// A finite double as `mantissa * 2^exponent` with an integer mantissa, exactly.
pub(crate) fn decompose(x: f64) -> (i64, i32) {
    debug_assert!(x.is_finite());
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1u64 << 52) - 1)) as i64;
    // Subnormals have no implicit leading bit and the exponent of the smallest normal.
    let (mantissa, exponent) = if biased == 0 { (fraction, -1074) } else { (fraction | (1i64 << 52), biased - 1075) };
    (if x.is_sign_negative() { -mantissa } else { mantissa }, exponent)
}

/// `floor(log2 |x|)` of a finite non-zero double, exactly.
pub(crate) fn floor_log2(x: f64) -> i32 {
    let (m, e) = decompose(x);
    e + 63 - m.unsigned_abs().leading_zeros() as i32
}

/// `floor(x * 2^k)` computed exactly in integers, clamped to `[-limit, limit]` (`limit <= 2^126`).
/// Clamping is 1-Lipschitz, so it never increases a sensitivity.
pub(crate) fn floor_scaled(x: f64, k: i32, limit: i128) -> i128 {
    debug_assert!(limit > 0 && limit <= 1 << 126);
    let (m, e) = decompose(x);
    let m = i128::from(m);
    let shift = e + k;
    if m == 0 {
        0
    } else if shift >= 0 {
        // A result of 127 bits or more is at least 2^126 >= limit in magnitude: saturate.
        let bits = 128 - m.unsigned_abs().leading_zeros() as i32;
        if bits + shift >= 127 { limit * m.signum() } else { (m << shift).clamp(-limit, limit) }
    } else if shift < -100 {
        // |m * 2^shift| < 1: floor is 0 or -1. Arithmetic shift of i128 is floor division.
        if m > 0 { 0 } else { -1 }
    } else {
        (m >> (-shift)).clamp(-limit, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn floor_scaled_is_exact() {
        let lim = 1i128 << 125;
        assert_eq!(floor_scaled(2.5, 1, lim), 5);
        assert_eq!(floor_scaled(2.5, 0, lim), 2);
        assert_eq!(floor_scaled(-2.5, 0, lim), -3);
        assert_eq!(floor_scaled(-0.0, 10, lim), 0);
        assert_eq!(floor_scaled(1e-310, 0, lim), 0);
        assert_eq!(floor_scaled(-1e-310, 0, lim), -1);
        assert_eq!(floor_scaled(-1e-310, 1074, lim), i128::from(decompose(-1e-310).0));
        assert_eq!(floor_scaled(1e300, 0, lim), lim);
        assert_eq!(floor_scaled(3.0, 124, lim), lim);
        assert_eq!(floor_scaled(1.0, 200, lim), lim);
        assert_eq!(floor_scaled(1.5, 100, lim), 3i128 << 99);
        assert_eq!(floor_scaled(-1.0, 125, lim), -lim);
        assert_eq!(floor_scaled(-1e300, 0, lim), -lim);
        assert_eq!(floor_scaled(0.1, 32, lim), (0.1f64 * 4294967296.0).floor() as i128);
        assert_eq!(floor_scaled(-0.1, 32, lim), (-0.1f64 * 4294967296.0).floor() as i128);
    }

    #[test]
    fn floor_log2_is_exact() {
        assert_eq!(floor_log2(1.0), 0);
        assert_eq!(floor_log2(0.999_999_999_999_999_9), -1);
        assert_eq!(floor_log2(3.0), 1);
        assert_eq!(floor_log2(-4.0), 2);
        assert_eq!(floor_log2(f64::MIN_POSITIVE), -1022);
        assert_eq!(floor_log2(5e-324), -1074);
    }

    #[test]
    fn epsilon_rounds_down_onto_the_grid() {
        assert_eq!(epsilon_numerator("f", 1.0).unwrap(), 1 << 32);
        let n = epsilon_numerator("f", 0.1).unwrap();
        assert!((n as f64) <= 0.1 * 4294967296.0 && (n + 1) as f64 > 0.1 * 4294967296.0);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-12, 2e6, 1e308] {
            assert!(epsilon_numerator("f", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn uniform_below_covers_its_range_evenly() {
        let mut rng = StdRng::seed_from_u64(7);
        assert_eq!(uniform_below(&mut rng, 1), 0);
        // Small ranges value by value, a range wider than 64 bits by thirds.
        for (n, bins) in [(3u128, 3u128), (10, 10), ((1u128 << 64) + 5, 3)] {
            let draws = 30_000u32;
            let mut counts = vec![0u32; bins as usize];
            for _ in 0..draws {
                let x = uniform_below(&mut rng, n);
                assert!(x < n);
                counts[(x * bins / n) as usize] += 1;
            }
            let p = 1.0 / bins as f64;
            let sigma = (draws as f64 * p * (1.0 - p)).sqrt();
            let expected = draws as f64 * p;
            assert!(counts.iter().all(|&c| (c as f64 - expected).abs() < 5.0 * sigma), "{n}: {counts:?}");
        }
    }
}
