//! k-map against a declared population (Sweeney 2002), estimated from the release alone as in
//! El Emam & Dankar, JAMIA 2008: the release's rows are a sample of n people from a population
//! of N, so a population class of k people shows X ~ Poisson(λ = k·n/N) rows (zero-truncated:
//! X given X >= 1, since a published class has at least one row). A class of f < k rows stands
//! for more than k people when P(X >= f) <= α under that model; a class of k rows or more
//! does by itself.
//!
//! Written from the definition: each class's upper tail is summed term by term in log space,
//! independent of the method's size threshold.

use super::diversity::outcome;
use super::{Histogram, Verdict};
use crate::error::{AnonError, Result};
use std::collections::HashMap;

/// P(X >= f) for X ~ Poisson(λ), as the sum of e^(-λ + x ln λ - ln x!) over x >= f, until the
/// terms past the mode no longer change the sum.
fn upper_tail(lambda: f64, f: u64) -> f64 {
    if f == 0 {
        return 1.0;
    }
    if lambda <= 0.0 {
        return 0.0;
    }
    let ln_fact: f64 = (2..=f).map(|i| (i as f64).ln()).sum();
    let (mut x, mut ln_x_fact, mut sum) = (f, ln_fact, 0.0f64);
    loop {
        let term = (-lambda + x as f64 * lambda.ln() - ln_x_fact).exp();
        sum += term;
        if x as f64 > lambda && term <= sum * 1e-17 {
            return sum.min(1.0);
        }
        x += 1;
        ln_x_fact += (x as f64).ln();
    }
}

/// Every class of fewer than k rows is unlikely (probability at most `alpha`) under a
/// population class of only k people; suppressed rows count in the sample size n, not as a
/// class.
pub(crate) fn k_map(h: &Histogram, k: u64, population: u64, alpha: f64, zero_truncated: bool) -> Result<Verdict> {
    let n = h.classes.iter().map(|c| c.size()).sum::<u64>() + h.suppressed;
    if n > population {
        return Err(AnonError::argument(
            "verify_release",
            "checks",
            format!("'kmap': the population ({population}) is smaller than the release ({n} rows)"),
        ));
    }
    let lambda = k as f64 * n as f64 / population as f64;
    // P(X >= 1) = 1 - e^-λ, the zero-truncated model's normalization.
    let seen = if zero_truncated { -(-lambda).exp_m1() } else { 1.0 };
    let estimator = if zero_truncated { "zero-truncated Poisson" } else { "Poisson" };
    let model = format!("{n} of {population} people, {estimator} with lambda = {lambda:.4}, significance {alpha}");
    let mut tails: HashMap<u64, f64> = HashMap::new();
    let mut failing = Vec::new();
    for (i, c) in h.classes.iter().enumerate() {
        let f = c.size();
        if f >= k {
            continue;
        }
        let p = *tails.entry(f).or_insert_with(|| upper_tail(lambda, f.max(1)) / seen);
        // Relative slack for rounding in the sum against a threshold computed another way.
        if p > alpha * (1.0 + 1e-9) {
            failing.push((i, format!("has {f} rows, P(>= {f} rows | {k} people) = {p:.4} > {alpha}; {model}")));
        }
    }
    let min = h.classes.iter().map(|c| c.size()).min().unwrap_or(0);
    Ok(outcome(h, failing, format!("{} classes, smallest has {min} rows; {model}", h.classes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_tails_match_the_poisson_cdf() {
        // λ = 1: P(X >= 3) = 1 - e^-1 (1 + 1 + 1/2) = 0.080301, P(X >= 5) = 0.0036599.
        assert!((upper_tail(1.0, 3) - 0.080_301_397).abs() < 1e-8, "{}", upper_tail(1.0, 3));
        assert!((upper_tail(1.0, 5) - 0.003_659_847).abs() < 1e-8, "{}", upper_tail(1.0, 5));
        // λ = 20, below the mode: P(X >= 10) = 0.99500 (1 - CDF(9) = 1 - 0.004995).
        assert!((upper_tail(20.0, 10) - 0.995_005).abs() < 1e-5, "{}", upper_tail(20.0, 10));
        assert_eq!(upper_tail(3.0, 0), 1.0);
    }
}
