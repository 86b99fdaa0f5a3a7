//! k-map against a declared population (Sweeney 2002; estimated as in El Emam & Dankar,
//! "Protecting privacy using k-anonymity", JAMIA 2008, and ARX's `KMap` criterion): every
//! published class should stand for at least k people of the population the table was drawn
//! from, not only k records of the table.
//!
//! The population is not at hand, so its class sizes are estimated. A population class of k
//! people, sampled at fraction f, shows a Poisson(λ = k·f) number of records in the table
//! (Pannekoek's estimator), or a zero-truncated Poisson one when only classes seen in the table
//! count (the default: a published class holds at least one record). A table class of c records
//! whose chance under a population class of only k people is at most the significance level α
//! is judged to stand for more than k people. Smaller population classes make large table
//! classes even less likely, so the test reduces to one size threshold t: the smallest c with
//! P(X >= c) <= α, never above k (a class of k records already stands for k people). k-map is
//! then t-anonymity, monotone under generalization and under suppression.

use crate::error::{AnonError, Result};

/// The distribution of a population class's records in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// Poisson(k·f) (Pannekoek 1988).
    Poisson,
    /// Poisson(k·f) given at least one record (El Emam & Dankar 2008).
    ZtPoisson,
}

impl Estimator {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "poisson" => Some(Estimator::Poisson),
            "zt_poisson" => Some(Estimator::ZtPoisson),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Estimator::Poisson => "poisson",
            Estimator::ZtPoisson => "zt_poisson",
        }
    }
}

/// The population the table was sampled from, as a size or a sampling fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Population {
    Size(u64),
    Fraction(f64),
}

/// The k-map model: k, the population, the estimator and its significance level.
#[derive(Debug, Clone, PartialEq)]
pub struct KMap {
    pub k: u64,
    pub population: Population,
    pub significance: f64,
    pub estimator: Estimator,
    /// The class-size threshold for the table it was resolved against ([`KMap::resolve`]).
    pub(crate) threshold: Option<u64>,
}

/// The default significance level, ARX's.
pub(crate) const SIGNIFICANCE: f64 = 0.01;

impl KMap {
    /// The sampling fraction of a table of `records` records.
    fn fraction(&self, records: u64) -> f64 {
        match self.population {
            Population::Size(n) => records as f64 / n.max(1) as f64,
            Population::Fraction(f) => f,
        }
    }

    pub(crate) fn validate(&self, function: &str, records: u64) -> Result<()> {
        let bad = |arg: &str, m: String| Err(AnonError::argument(function, arg, m));
        if self.k < 1 {
            return bad("k_map", format!("must be at least 1, got {}", self.k));
        }
        match self.population {
            Population::Size(n) if n < records => {
                return bad(
                    "population",
                    format!(
                        "{n} is smaller than the table ({records} records); the table is a sample of the population"
                    ),
                );
            }
            Population::Fraction(f) if !(f > 0.0 && f <= 1.0) => {
                return bad("fraction", format!("must be in (0, 1], got {}", crate::dp::ledger::shown(f)));
            }
            _ => {}
        }
        if !(0.0..1.0).contains(&self.significance) {
            return bad(
                "significance",
                format!("must be in [0, 1), got {}", crate::dp::ledger::shown(self.significance)),
            );
        }
        Ok(())
    }

    /// Fix the threshold for a table of `records` records.
    pub(crate) fn resolve(&mut self, records: u64) {
        let lambda = self.k as f64 * self.fraction(records);
        self.threshold = Some(threshold(self.k, lambda, self.significance, self.estimator));
    }

    /// A short description for reports.
    pub(crate) fn describe(&self) -> String {
        let population = match self.population {
            Population::Size(n) => format!("population={n}"),
            Population::Fraction(f) => format!("fraction={f}"),
        };
        let min = self.threshold.map(|t| format!(", classes >= {t}")).unwrap_or_default();
        format!("k_map={} ({population}, {}, significance={}{min})", self.k, self.estimator.name(), self.significance)
    }
}

/// The smallest class size c (at most k) that a population class of k people, showing
/// Poisson(λ) records in the table (zero-truncated for [`Estimator::ZtPoisson`]), reaches with
/// probability at most α. The cumulative probabilities P(X <= c - 1) are summed from the
/// probability mass p(x) = e^-λ λ^x / x!, computed by its recurrence p(x) = p(x-1) λ / x.
pub(crate) fn threshold(k: u64, lambda: f64, alpha: f64, estimator: Estimator) -> u64 {
    if alpha <= 0.0 {
        return k;
    }
    let mut p = (-lambda).exp();
    // Zero-truncated: condition on X >= 1, dividing by P(X >= 1) = 1 - e^-λ.
    let (mut below, scale, first) = match estimator {
        Estimator::Poisson => (0.0, 1.0, 0),
        Estimator::ZtPoisson => (0.0, -(-lambda).exp_m1(), 1),
    };
    for c in first..k {
        if c > 0 {
            p *= lambda / c as f64;
        }
        // below = P(X <= c); a class of c + 1 records or more has probability 1 - below.
        below += p / scale;
        if 1.0 - below <= alpha {
            return (c + 1).min(k);
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: λ = 1 (k = 10, fraction 0.1). Poisson CDF: P(X<=0) = e^-1 = 0.3679,
    /// P(X<=1) = 0.7358, P(X<=2) = 0.9197, P(X<=3) = 0.9810, P(X<=4) = 0.99634.
    /// Upper tails 0.0803 (>=3), 0.0190 (>=4), 0.00366 (>=5).
    /// Zero-truncated (divide P(1..c) by 1 - e^-1 = 0.6321): P(X<=1) = 0.5820, P(X<=2) =
    /// 0.8731, P(X<=3) = 0.9699, P(X<=4) = 0.99421; tails 0.0301 (>=4), 0.00579 (>=5).
    #[test]
    fn threshold_matches_hand_computed_poisson_tails() {
        assert_eq!(threshold(10, 1.0, 0.05, Estimator::Poisson), 4);
        assert_eq!(threshold(10, 1.0, 0.01, Estimator::Poisson), 5);
        assert_eq!(threshold(10, 1.0, 0.10, Estimator::Poisson), 3);
        assert_eq!(threshold(10, 1.0, 0.05, Estimator::ZtPoisson), 4);
        assert_eq!(threshold(10, 1.0, 0.01, Estimator::ZtPoisson), 5);
        assert_eq!(threshold(10, 1.0, 0.02, Estimator::ZtPoisson), 5);
        assert_eq!(threshold(10, 1.0, 0.031, Estimator::ZtPoisson), 4);
        // Never above k; a census (fraction 1, λ = k) needs k records; α = 0 is k-anonymity.
        assert_eq!(threshold(3, 1.0, 0.001, Estimator::Poisson), 3);
        assert_eq!(threshold(5, 5.0, 0.01, Estimator::ZtPoisson), 5);
        assert_eq!(threshold(10, 1.0, 0.0, Estimator::Poisson), 10);
        // A tiny fraction: one record is already unlikely under Poisson (P(X>=1) = 1 - e^-0.001
        // < 0.01), while the zero-truncated estimator, given one record, needs a second.
        assert_eq!(threshold(10, 0.001, 0.01, Estimator::Poisson), 1);
        assert_eq!(threshold(10, 0.001, 0.01, Estimator::ZtPoisson), 2);
    }

    #[test]
    fn resolves_from_a_population_size_or_a_fraction() {
        let mut m = KMap {
            k: 10,
            population: Population::Size(10_000),
            significance: 0.05,
            estimator: Estimator::Poisson,
            threshold: None,
        };
        m.resolve(1000);
        assert_eq!(m.threshold, Some(4));
        m.population = Population::Fraction(0.1);
        m.resolve(5);
        assert_eq!(m.threshold, Some(4));
        assert!(m.describe().contains("classes >= 4"), "{}", m.describe());
        m.population = Population::Size(999);
        let e = m.validate("kanon_anonymize", 1000).unwrap_err().to_string();
        assert!(e.contains("population") && e.contains("smaller than the table"), "{e}");
    }
}
