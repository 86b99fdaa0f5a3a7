//! The discrete Laplace (two-sided geometric) distribution, sampled exactly: CKS 2020
//! ("The Discrete Gaussian for Differential Privacy") Algorithm 2.
//!
//! With scale t/s, `P(X = x) = (1 - q) / (1 + q) * q^|x|`, `q = exp(-s/t)`. Adding it to an
//! integer query of sensitivity Δ is (Δ s / t)-DP: neighbouring outputs differ by at most Δ,
//! and the pmf ratio of values Δ apart is at most q^-Δ = exp(Δ s/t). This is the integer
//! counterpart of the Laplace mechanism that IPA's Algorithm 1 uses for its noisy suppression
//! threshold (sensitivity t - 1) and noisy class sizes (sensitivity 1).

use super::bernoulli::{exp_neg, ratio};
use super::{EPSILON_GRID_BITS, epsilon_numerator, uniform_below};
use crate::error::{AnonError, Result};
use rand::Rng;

/// Largest accepted scale t/s. Far beyond any useful noise level; it keeps |X| well inside i64
/// (an overflow would need about 2^23 consecutive exp(-1) coins to succeed).
pub(crate) const MAX_SCALE: u64 = 1 << 40;

/// Discrete Laplace noise with rational scale `t / s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiscreteLaplace {
    t: u64,
    s: u64,
}

impl DiscreteLaplace {
    /// Scale `t / s` (`s, t >= 1`), stored in lowest terms.
    pub(crate) fn new(t: u64, s: u64) -> Result<Self> {
        if t == 0 || s == 0 {
            return Err(AnonError::argument("DiscreteLaplace::new", "t/s", "the scale t/s needs t >= 1 and s >= 1"));
        }
        if t / s >= MAX_SCALE {
            return Err(AnonError::argument(
                "DiscreteLaplace::new",
                "t/s",
                format!("scale {t}/{s} exceeds the largest supported scale 2^40"),
            ));
        }
        let g = gcd(t, s);
        Ok(DiscreteLaplace { t: t / g, s: s / g })
    }

    /// Noise for an integer query of the given sensitivity under epsilon-DP.
    ///
    /// Epsilon is rounded DOWN onto the grid of multiples of 2^-32 (eps' = floor(eps * 2^32) /
    /// 2^32, computed exactly), and the scale is sensitivity / eps' = (2^32 * sensitivity) /
    /// floor(eps * 2^32). The noise is therefore calibrated to eps' <= eps, slightly wider than
    /// sensitivity/eps, so the mechanism is eps'-DP and a fortiori eps-DP. Rejects eps that is
    /// not finite, not positive, or below 2^-32, and sensitivities of 0 or >= 2^32.
    pub fn for_epsilon(epsilon: f64, sensitivity: u64) -> Result<Self> {
        const F: &str = "DiscreteLaplace::for_epsilon";
        let s = epsilon_numerator(F, epsilon)?;
        if sensitivity == 0 || sensitivity >= 1 << (64 - EPSILON_GRID_BITS) {
            return Err(AnonError::argument(F, "sensitivity", format!("must be in 1..2^32, got {sensitivity}")));
        }
        let t = sensitivity << EPSILON_GRID_BITS;
        DiscreteLaplace::new(t, s).map_err(|_| {
            AnonError::argument(
                F,
                "epsilon",
                format!("sensitivity {sensitivity} / epsilon {epsilon} exceeds the largest supported scale 2^40"),
            )
        })
    }

    /// The scale as `(t, s)`, meaning t/s, in lowest terms.
    pub fn scale(&self) -> (u64, u64) {
        (self.t, self.s)
    }

    /// The realized privacy loss `sensitivity * s / t` for a query of that sensitivity (as f64;
    /// the exact value is the rational). For [`Self::for_epsilon`] this is eps' <= eps.
    pub fn epsilon(&self, sensitivity: u64) -> f64 {
        sensitivity as f64 * self.s as f64 / self.t as f64
    }

    /// One exact draw (CKS 2020 Algorithm 2). Expected O(1) work for every scale: the first
    /// rejection keeps at least 1 - 1/e of the proposals and the second at least half.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> i64 {
        let (t, s) = (u128::from(self.t), u128::from(self.s));
        loop {
            // X = U + t V is geometric with P(X = x) ∝ exp(-x/t): U uniform below t kept with
            // probability exp(-U/t) gives the remainder, V counts exp(-1) successes.
            let u = uniform_below(rng, t);
            if !exp_neg(rng, u, t) {
                continue;
            }
            let mut v: u128 = 0;
            while exp_neg(rng, 1, 1) {
                v += 1;
            }
            // Y = floor(X / s) is geometric with P(Y = y) ∝ exp(-y s/t).
            let y = (u + t * v) / s;
            // A random sign; rejecting "-0" keeps zero from being counted twice.
            let negative = ratio(rng, 1, 2);
            if negative && y == 0 {
                continue;
            }
            // Saturation needs |Y| > 2^63 with scale <= 2^40: probability below exp(-2^23).
            let y = i64::try_from(y).unwrap_or(i64::MAX);
            return if negative { -y } else { y };
        }
    }

    /// `exp(-s/t)`, the ratio of neighbouring pmf values.
    pub fn q(&self) -> f64 {
        (-(self.s as f64) / self.t as f64).exp()
    }

    /// `P(X = x) = (1 - q) / (1 + q) * q^|x|` in floating point, for tests and reports.
    pub fn pmf(&self, x: i64) -> f64 {
        let rate = self.s as f64 / self.t as f64;
        let one_minus_q = -(-rate).exp_m1();
        one_minus_q / (1.0 + self.q()) * (-rate * x.unsigned_abs() as f64).exp()
    }

    /// `E|X| = 2q / ((1 - q)(1 + q))`: the expected size of one draw's error.
    pub(crate) fn mean_abs(&self) -> f64 {
        let q = self.q();
        2.0 * q / ((1.0 - q) * (1.0 + q))
    }

    /// `Var X = 2q / (1 - q)^2` (the mean is 0).
    pub fn variance(&self) -> f64 {
        let q = self.q();
        let one_minus_q = -(-(self.s as f64) / self.t as f64).exp_m1();
        2.0 * q / (one_minus_q * one_minus_q)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn for_epsilon_rounds_down_and_reduces() {
        let d = DiscreteLaplace::for_epsilon(1.0, 1).unwrap();
        assert_eq!(d.scale(), (1, 1));
        let d = DiscreteLaplace::for_epsilon(0.5, 3).unwrap();
        assert_eq!(d.scale(), (6, 1));
        let d = DiscreteLaplace::for_epsilon(0.1, 1).unwrap();
        assert!(d.epsilon(1) <= 0.1 && d.epsilon(1) > 0.1 - 2f64.powi(-32));
    }

    #[test]
    fn for_epsilon_rejects_bad_arguments() {
        for eps in [0.0, -0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e-10] {
            let e = DiscreteLaplace::for_epsilon(eps, 1).unwrap_err().to_string();
            assert!(e.contains("epsilon"), "{e}");
        }
        assert!(DiscreteLaplace::for_epsilon(1.0, 0).is_err());
        assert!(DiscreteLaplace::for_epsilon(1.0, 1 << 32).is_err());
        // Scale 2^31 / 2^-20 is past 2^40.
        assert!(DiscreteLaplace::for_epsilon(2f64.powi(-20), 1 << 31).is_err());
        assert!(DiscreteLaplace::new(0, 1).is_err() && DiscreteLaplace::new(1, 0).is_err());
    }

    #[test]
    fn pmf_sums_to_one_and_is_symmetric() {
        let d = DiscreteLaplace::new(3, 1).unwrap();
        let total: f64 = (-200..=200).map(|x| d.pmf(x)).sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        assert_eq!(d.pmf(5), d.pmf(-5));
        let var: f64 = (-400..=400i64).map(|x| (x * x) as f64 * d.pmf(x)).sum();
        assert!((var - d.variance()).abs() < 1e-9 * var, "{var} vs {}", d.variance());
    }

    #[test]
    fn small_scales_are_mostly_zero() {
        // Scale 1/64: P(0) = (1 - q)/(1 + q) with q = e^-64, i.e. 1 - 2.6e-28.
        let d = DiscreteLaplace::new(1, 64).unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        assert!((0..10_000).all(|_| d.sample(&mut rng) == 0));
    }
}
