//! Exact Bernoulli samplers over rational parameters (Canonne, Kamath, Steinke 2020, "The
//! Discrete Gaussian for Differential Privacy", section 5.1). Every coin is a comparison of an
//! exactly uniform integer with an integer threshold, so the probabilities are exactly the
//! rationals (and the exp(-gamma) of a rational) that the privacy proofs use.
//!
//! The `pub` functions validate their arguments; the `pub(crate)` ones are the unchecked cores
//! the other samplers call in their loops, on u128 so that products of denominators fit.

use super::uniform_below;
use crate::error::{AnonError, Result};
use rand::Rng;

/// True with probability exactly `num / den` (requires `den > 0`, `num <= den`).
pub fn bernoulli_rational<R: Rng + ?Sized>(rng: &mut R, num: u64, den: u64) -> Result<bool> {
    if den == 0 || num > den {
        return Err(AnonError::argument(
            "bernoulli_rational",
            "num/den",
            format!("{num}/{den} is not a probability (need den > 0 and num <= den)"),
        ));
    }
    Ok(ratio(rng, u128::from(num), u128::from(den)))
}

/// True with probability exactly `exp(-num / den)` (requires `den > 0`; any `num >= 0`).
///
/// Expected cost is bounded independently of gamma: at most e uniform draws for gamma <= 1, and
/// for gamma > 1 the chain of Bernoulli(exp(-1)) coins stops at its first failure (on average
/// within 1/(1 - 1/e) ~ 1.58 coins).
pub fn bernoulli_exp_neg<R: Rng + ?Sized>(rng: &mut R, num: u64, den: u64) -> Result<bool> {
    if den == 0 {
        return Err(AnonError::argument("bernoulli_exp_neg", "den", "the denominator of gamma must be > 0"));
    }
    Ok(exp_neg(rng, u128::from(num), u128::from(den)))
}

/// Bernoulli(num/den), unchecked: `0 < den`, `num <= den`.
pub(crate) fn ratio<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(den > 0 && num <= den);
    uniform_below(rng, den) < num
}

/// Bernoulli(exp(-num/den)) for any rational gamma = num/den >= 0, unchecked: `den > 0`.
pub(crate) fn exp_neg<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(den > 0);
    // exp(-gamma) = exp(-1)^floor(gamma) * exp(-frac(gamma)): independent coins, all must succeed.
    let whole = num / den;
    let mut i = 0u128;
    while i < whole {
        if !exp_neg_unit(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    exp_neg_unit(rng, num % den, den)
}

/// Bernoulli(exp(-gamma)) for gamma = num/den in [0, 1] (CKS 2020, the K-loop).
///
/// Draw A_k ~ Bernoulli(gamma/k) for k = 1, 2, ... until the first failure at K. Then
/// P(K > k) = gamma^k / k!, so P(K odd) = sum over odd k of (gamma^(k-1)/(k-1)! - gamma^k/k!)
/// = 1 - gamma + gamma^2/2! - ... = exp(-gamma).
fn exp_neg_unit<R: Rng + ?Sized>(rng: &mut R, num: u128, den: u128) -> bool {
    debug_assert!(den > 0 && num <= den);
    let mut k: u128 = 1;
    loop {
        let success = match den.checked_mul(k) {
            Some(dk) => ratio(rng, num, dk),
            // Never reached in practice (k would need ~2^60 successes); the product of two
            // independent coins keeps it exact anyway.
            None => ratio(rng, num, den) && ratio(rng, 1, k),
        };
        if !success {
            return k % 2 == 1;
        }
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};

    fn frequency(n: u32, mut coin: impl FnMut() -> bool) -> f64 {
        (0..n).filter(|_| coin()).count() as f64 / n as f64
    }

    #[test]
    fn rejects_invalid_parameters() {
        let mut rng = StdRng::seed_from_u64(1);
        assert!(bernoulli_rational(&mut rng, 1, 0).is_err());
        assert!(bernoulli_rational(&mut rng, 3, 2).is_err());
        assert!(bernoulli_exp_neg(&mut rng, 1, 0).is_err());
        let msg = bernoulli_rational(&mut rng, 3, 2).unwrap_err().to_string();
        assert!(msg.contains("bernoulli_rational") && msg.contains("3/2"), "{msg}");
    }

    #[test]
    fn degenerate_probabilities_are_certain() {
        let mut rng = StdRng::seed_from_u64(2);
        for _ in 0..1000 {
            assert!(!bernoulli_rational(&mut rng, 0, 7).unwrap());
            assert!(bernoulli_rational(&mut rng, 7, 7).unwrap());
            assert!(bernoulli_exp_neg(&mut rng, 0, 3).unwrap());
        }
    }

    #[test]
    fn rational_frequency_is_within_five_sigma() {
        let mut rng = StdRng::seed_from_u64(3);
        let n = 100_000;
        for (num, den) in [(1u64, 3u64), (1, 2), (999, 1000), (5, u64::MAX)] {
            let p = num as f64 / den as f64;
            let f = frequency(n, || bernoulli_rational(&mut rng, num, den).unwrap());
            let sigma = (p * (1.0 - p) / n as f64).sqrt().max(1.0 / n as f64);
            assert!((f - p).abs() < 5.0 * sigma, "{num}/{den}: {f} vs {p}");
        }
    }

    #[test]
    fn wide_denominators_use_the_product_fallback_exactly() {
        // den * k overflows u128 from k = 2 on, so every k >= 2 takes the two-coin path.
        let mut rng = StdRng::seed_from_u64(4);
        let den = u128::MAX / 2 + 1;
        let n = 100_000;
        let f = frequency(n, || exp_neg_unit(&mut rng, den / 2, den));
        let p = (-0.5f64).exp();
        assert!((f - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(), "{f} vs {p}");
    }
}
