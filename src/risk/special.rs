//! The special functions the population models need: digamma ψ, trigamma ψ₁ and ln Γ, on the
//! whole real line apart from the poles (Newton's iterates may leave the parameters' domain
//! before a constraint sends the solver to its next start).
//!
//! ψ and ψ₁ shift the argument up by their recurrences (ψ(x) = ψ(x+1) − 1/x,
//! ψ₁(x) = ψ₁(x+1) + 1/x²) until it is at least 20 and add the asymptotic series there
//! (Abramowitz & Stegun 6.3.18 and 6.4.12, terms to x⁻¹¹: the first omitted is below 1e-17 at x ≥ 20);
//! negative arguments go through the reflection formulas (6.3.7, 6.4.7). ln Γ is Stirling's
//! series (6.1.41) after the same upward shift, and the reflection formula below 1/2.

use std::f64::consts::PI;

/// Where the asymptotic series take over.
const LARGE: f64 = 20.0;

pub(crate) fn digamma(x: f64) -> f64 {
    if !x.is_finite() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < 0.0 {
        return digamma(1.0 - x) - PI / (PI * x).tan();
    }
    let (mut x, mut acc) = (x, 0.0);
    while x < LARGE {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let r2 = 1.0 / (x * x);
    let series = r2 * (1.0 / 12.0 - r2 * (1.0 / 120.0 - r2 * (1.0 / 252.0 - r2 * (1.0 / 240.0 - r2 / 132.0))));
    acc + x.ln() - 0.5 / x - series
}

pub(crate) fn trigamma(x: f64) -> f64 {
    if !x.is_finite() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < 0.0 {
        let s = (PI * x).sin();
        return -trigamma(1.0 - x) + PI * PI / (s * s);
    }
    let (mut x, mut acc) = (x, 0.0);
    while x < LARGE {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let r = 1.0 / x;
    let r2 = r * r;
    // 1/x + 1/(2x²) + Σ B_2k / x^(2k+1)
    let series = r2 * (1.0 / 6.0 - r2 * (1.0 / 30.0 - r2 * (1.0 / 42.0 - r2 * (1.0 / 30.0 - r2 * 5.0 / 66.0))));
    acc + r + 0.5 * r2 + r * series
}

/// ln |Γ(x)|.
pub(crate) fn ln_gamma(x: f64) -> f64 {
    if !x.is_finite() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < 0.5 {
        return (PI / (PI * x).sin()).abs().ln() - ln_gamma(1.0 - x);
    }
    let (mut x, mut shift) = (x, 0.0);
    while x < LARGE {
        shift += x.ln();
        x += 1.0;
    }
    let r = 1.0 / x;
    let r2 = r * r;
    let series = r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 / 1188.0))));
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * PI).ln() + series - shift
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn digamma_at_known_points() {
        // ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, ψ(x+1) = ψ(x) + 1/x.
        let gamma = 0.577_215_664_901_532_9;
        assert!(close(digamma(1.0), -gamma, 1e-14));
        assert!(close(digamma(0.5), -gamma - 2.0 * 2f64.ln(), 1e-14));
        for x in [0.3, 2.7, 9.5, 10.5, 123.4, -0.4, -2.5] {
            assert!(close(digamma(x + 1.0), digamma(x) + 1.0 / x, 1e-12), "{x}");
        }
    }

    #[test]
    fn trigamma_at_known_points() {
        // ψ₁(1) = π²/6, ψ₁(1/2) = π²/2, ψ₁(x) = ψ₁(x+1) + 1/x².
        assert!(close(trigamma(1.0), PI * PI / 6.0, 1e-14));
        assert!(close(trigamma(0.5), PI * PI / 2.0, 1e-14));
        for x in [0.3, 2.7, 9.5, 10.5, 123.4, -0.4, -2.5] {
            assert!(close(trigamma(x), trigamma(x + 1.0) + 1.0 / (x * x), 1e-12), "{x}");
        }
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut ln_fact = 0.0;
        for n in 1..60u32 {
            // Γ(n+1) = n!
            ln_fact += f64::from(n).ln();
            assert!(close(ln_gamma(f64::from(n) + 1.0), ln_fact, 1e-14), "{n}");
        }
        assert!(close(ln_gamma(0.5), PI.sqrt().ln(), 1e-14));
        assert!(close(ln_gamma(-0.5), (2.0 * PI.sqrt()).ln(), 1e-13));
    }
}
