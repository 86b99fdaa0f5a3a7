//! The exponential mechanism (McSherry, Talwar 2007), sampled exactly: choose candidate i with
//! probability proportional to exp(eps * u_i / (2 Δ)) for utilities u_i of sensitivity Δ. IPA
//! uses it to pick the informative value of each inserted record (Eq. 4) and the released
//! lattice node (Eq. 12).
//!
//! # Sampling
//!
//! Rejection: propose i uniformly, accept with an exact Bernoulli(exp(-gamma_i)), where
//! gamma_i = eps' * g_i / (2 D) is a rational (below). A round accepts i with probability
//! exp(-gamma_i) / n, so the output is exactly ∝ exp(-gamma_i). The best candidate has
//! gamma = 0, so each round succeeds with probability >= 1/n: at most n rounds are expected, each
//! of O(1) expected uniform draws, i.e. O(n) expected work per selection whatever the utilities.
//!
//! # From floating-point utilities to rationals, and why it stays private
//!
//! Let e = floor(log2 Δ), h = 2^(e - 32) and D = ceil(Δ / h), an integer in [2^32, 2^33]. All
//! of the following is computed exactly in integers from the bits of the doubles:
//!
//! - epsilon: eps' = floor(eps * 2^32) / 2^32 <= eps;
//! - utilities: q_i = clamp(floor(u_i / h), -2^125, 2^125), then the gap to the best
//!   g_i = min(max_j q_j - q_i, 2^63);
//! - gamma_i = eps' * g_i / (2 D) = floor(eps * 2^32) * g_i / (2^33 * D).
//!
//! Claim: if on neighbouring datasets every computed (f64) utility u_i changes by at most Δ,
//! this mechanism is eps'-DP, hence eps-DP. Proof: if |a - b| <= Δ then floor(a/h) - floor(b/h)
//! is an integer below Δ/h + 1, so at most ceil(Δ/h) = D: the q_i have sensitivity D (clamping
//! is 1-Lipschitz). The selection probabilities are ∝ exp(-gamma_i) ∝ exp(eps' * w_i / (2 D))
//! with w_i = max(q_i, max_j q_j - 2^63), the common factor exp(-eps' max_j q_j / (2D))
//! cancelling. A maximum of quantities that each move by at most D moves by at most D, so w has
//! sensitivity D, and the exponential mechanism theorem gives eps'-DP.
//!
//! The distribution differs from the ideal one only by the quantization: eps - eps' < 2^-32,
//! and each gamma_i moves by less than eps'/(2D) <= eps' 2^-33 (flooring the utilities) plus a
//! relative 1/D <= 2^-32 of itself (D rounds Δ/h up, which only makes the noise wider). The gap clamp at 2^63 grid units
//! (about 2^30 Δ) only changes candidates whose ideal weight is below exp(-eps * 2^29)
//! relative to the best. [`ExponentialMechanism::probabilities`] reports the realized
//! distribution, clamp and all.

use super::bernoulli::exp_neg;
use super::{EPSILON_GRID_BITS, epsilon_numerator, floor_log2, floor_scaled, uniform_below};
use crate::error::{AnonError, Result};
use rand::Rng;

/// Quantized utilities are clamped to +-2^125 so their differences fit i128.
const UTILITY_LIMIT: i128 = 1 << 125;
/// Gaps are clamped to 2^63 so that eps numerator (< 2^64) times gap fits u128.
const GAP_LIMIT: i128 = 1 << 63;

/// An exact exponential mechanism over a fixed list of candidates' utilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExponentialMechanism {
    /// Numerators of gamma_i; all share the denominator `gamma_den`.
    gamma_num: Vec<u128>,
    gamma_den: u128,
    epsilon_num: u64,
}

impl ExponentialMechanism {
    /// Prepare a selection among `utilities.len()` candidates with privacy loss `epsilon` for
    /// utilities whose (computed, f64) values change by at most `sensitivity` between
    /// neighbouring datasets. Errors on an empty list, non-finite utilities, epsilon not finite
    /// or below 2^-32, or a sensitivity that is not finite and positive.
    pub fn new(utilities: &[f64], epsilon: f64, sensitivity: f64) -> Result<Self> {
        const F: &str = "ExponentialMechanism::new";
        if utilities.is_empty() {
            return Err(AnonError::argument(F, "utilities", "needs at least one candidate"));
        }
        if let Some(i) = utilities.iter().position(|u| !u.is_finite()) {
            return Err(AnonError::argument(F, "utilities", format!("utility {i} is not finite")));
        }
        let epsilon_num = epsilon_numerator(F, epsilon)?;
        if !sensitivity.is_finite() || sensitivity <= 0.0 {
            return Err(AnonError::argument(F, "sensitivity", format!("must be finite and > 0, got {sensitivity}")));
        }
        // h = 2^-k with k = 32 - floor(log2 Δ); D = ceil(Δ 2^k) = -floor(-Δ 2^k) in [2^32, 2^33].
        let k = 32 - floor_log2(sensitivity);
        let d = -floor_scaled(-sensitivity, k, UTILITY_LIMIT);
        debug_assert!((1 << 32..=1 << 33).contains(&d));
        let quantized: Vec<i128> = utilities.iter().map(|&u| floor_scaled(u, k, UTILITY_LIMIT)).collect();
        let best = *quantized.iter().max().expect("non-empty");
        let gamma_num =
            quantized.iter().map(|&q| u128::from(epsilon_num) * (best - q).min(GAP_LIMIT) as u128).collect();
        let gamma_den = (d as u128) << (EPSILON_GRID_BITS + 1);
        Ok(ExponentialMechanism { gamma_num, gamma_den, epsilon_num })
    }

    /// The realized privacy loss eps' = floor(eps * 2^32) / 2^32 <= eps.
    pub fn epsilon(&self) -> f64 {
        self.epsilon_num as f64 / (1u64 << EPSILON_GRID_BITS) as f64
    }

    /// One exact selection: the index of the chosen candidate.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let n = self.gamma_num.len() as u128;
        loop {
            let i = uniform_below(rng, n) as usize;
            if exp_neg(rng, self.gamma_num[i], self.gamma_den) {
                return i;
            }
        }
    }

    /// The exact selection probabilities of [`Self::sample`], rounded to f64 (for tests and
    /// reports; never used for sampling).
    pub fn probabilities(&self) -> Vec<f64> {
        let den = self.gamma_den as f64;
        let weights: Vec<f64> = self.gamma_num.iter().map(|&g| (-(g as f64) / den).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.into_iter().map(|w| w / total).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn softmax(utilities: &[f64], scale: f64) -> Vec<f64> {
        let best = utilities.iter().cloned().fold(f64::MIN, f64::max);
        let w: Vec<f64> = utilities.iter().map(|u| (scale * (u - best)).exp()).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    #[test]
    fn probabilities_match_the_ideal_mechanism() {
        for (u, eps, sens) in [
            (vec![1.0, 2.0, 3.0, 4.0], 1.0, 1.0),
            (vec![0.25, 0.25, 0.1], 0.7, 1.0 / 3.0),
            (vec![-5.0, 0.0, 1e-9, 7.5], 0.01, 1e-3),
            (vec![2.9, 2.95, 1.0], 2.0, 3.0 / 1001.0),
        ] {
            let m = ExponentialMechanism::new(&u, eps, sens).unwrap();
            // With the realized eps' only the quantization remains: gamma moves by less than
            // eps'/(2D) (flooring utilities) plus a relative 1/D <= 2^-32 (the ceil in D).
            let scale = m.epsilon() / (2.0 * sens);
            let best = u.iter().cloned().fold(f64::MIN, f64::max);
            let ideal = softmax(&u, scale);
            for ((p, q), ui) in m.probabilities().iter().zip(&ideal).zip(&u) {
                let gamma = scale * (best - ui);
                assert!((p - q).abs() <= (1e-9 + gamma * 2f64.powi(-31)) * q, "{u:?}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn ties_get_equal_probability_and_the_best_gamma_is_zero() {
        let m = ExponentialMechanism::new(&[0.3, 0.3, 0.1], 1.0, 0.1).unwrap();
        let p = m.probabilities();
        assert_eq!(p[0], p[1]);
        assert_eq!(m.gamma_num[0], 0);
    }

    #[test]
    fn huge_spreads_are_clamped_not_rejected() {
        let m = ExponentialMechanism::new(&[1e300, -1e300, 0.0], 1.0, 1.0).unwrap();
        assert_eq!(m.probabilities(), vec![1.0, 0.0, 0.0]);
        assert_eq!(m.gamma_num[1], u128::from(m.epsilon_num) << 63);
    }

    #[test]
    fn rejects_bad_arguments() {
        for (u, eps, sens) in [
            (vec![], 1.0, 1.0),
            (vec![1.0, f64::NAN], 1.0, 1.0),
            (vec![f64::INFINITY], 1.0, 1.0),
            (vec![1.0], 0.0, 1.0),
            (vec![1.0], f64::NAN, 1.0),
            (vec![1.0], 1e-11, 1.0),
            (vec![1.0], 1.0, 0.0),
            (vec![1.0], 1.0, -2.0),
            (vec![1.0], 1.0, f64::INFINITY),
        ] {
            assert!(ExponentialMechanism::new(&u, eps, sens).is_err(), "{u:?} {eps} {sens}");
        }
    }

    #[test]
    fn epsilon_is_rounded_down() {
        let m = ExponentialMechanism::new(&[0.0, 1.0], 0.3, 1.0).unwrap();
        assert!(m.epsilon() <= 0.3 && m.epsilon() > 0.3 - 2f64.powi(-32));
    }
}
