//! How `dp_synthesize` splits ε, and what it charges: the proof's sum (docs/dp.md, "Synthetic
//! records from a tree of marginals").
//!
//! With k attributes, f declared edges and t three-way marginals: k one-way marginals at ε₁
//! each, r = k − 1 − f + t selection rounds (the tree's private edges, then one per three-way
//! marginal) at ε_s each, and k − 1 two-way plus t three-way marginals at ε₂ each, every
//! mechanism of sensitivity 1 under adding or removing one record, so the release is
//! (k ε₁ + r ε_s + (k − 1 + t) ε₂)-DP by sequential composition (declared edges are public and
//! spend nothing; with no round left, the selection's share goes to the marginals). The
//! samplers round each ε down onto the 2^-32 grid, and the ledger is charged the sum of the
//! rounded parts: exactly what the mechanisms spend, never more than ε.

use crate::dp::DiscreteLaplace;
use crate::dp::ledger::grid_units;
use crate::error::{AnonError, Result};

/// The default fractions of ε: one-way marginals, selection, two-way marginals. The two-way
/// marginals are what the records are drawn from; the one-way marginals only steer the
/// selection and sharpen each attribute's distribution, and the selection needs only to tell
/// strongly dependent pairs from the rest.
pub const DEFAULT_SPLIT: [f64; 3] = [0.1, 0.1, 0.8];

/// The default number of three-way marginals beside the tree (fewer where the tree has fewer
/// than [`Budget::most_triples`]).
pub const DEFAULT_TRIPLES: usize = 1;

/// ε per mechanism.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Attributes.
    pub k: usize,
    /// ε of each one-way marginal.
    pub one_way: f64,
    /// Private selection rounds: k − 1 less the declared edges, plus one per three-way marginal.
    pub rounds: usize,
    /// ε of each selection round (0 without rounds).
    pub selection: f64,
    /// ε of each two-way and each three-way marginal (0 with one attribute).
    pub two_way: f64,
    /// Three-way marginals beside the tree.
    pub triples: usize,
}

impl Budget {
    /// Split `epsilon` over `k` attributes by `split` (fractions summing to 1), every tree edge
    /// chosen privately; one attribute has no pairs and spends all of ε on its marginal.
    pub fn new(epsilon: f64, split: [f64; 3], k: usize) -> Result<Self> {
        Self::with_declared(epsilon, split, k, 0, 0)
    }

    /// The most three-way marginals a tree of `k` attributes takes (each attribute but the
    /// root and one other gains one second parent, [`super::select::triple`]): k − 2.
    pub fn most_triples(k: usize) -> usize {
        k.saturating_sub(2)
    }

    /// As [`Budget::new`] with `declared` of the k − 1 edges declared by the call (public) and
    /// `triples` three-way marginals asked for (at most [`Budget::most_triples`] are planned):
    /// the selection's share is split over the remaining rounds, or, with none left, added to
    /// the marginals' share; the marginals' share over the k − 1 two-way and t three-way ones.
    pub fn with_declared(epsilon: f64, split: [f64; 3], k: usize, declared: usize, triples: usize) -> Result<Self> {
        const F: &str = "dp_synthesize";
        if split.iter().any(|f| !f.is_finite() || *f <= 0.0) || (split.iter().sum::<f64>() - 1.0).abs() > 1e-9 {
            return Err(AnonError::argument(F, "split", "needs three positive fractions of epsilon summing to 1"));
        }
        if k == 0 {
            return Err(AnonError::argument(F, "source", "needs at least one attribute"));
        }
        if k > 0 && declared > k - 1 {
            return Err(AnonError::argument(
                F,
                "edges",
                format!("declares {declared} edges; a tree of {k} attributes has {}", k - 1),
            ));
        }
        let b = if k == 1 {
            Budget { k, one_way: epsilon, rounds: 0, selection: 0.0, two_way: 0.0, triples: 0 }
        } else {
            let triples = triples.min(Self::most_triples(k));
            let (kf, marginals, rounds) = ((k as f64), (k - 1 + triples) as f64, k - 1 - declared + triples);
            let (selection, two_way) = if rounds > 0 {
                (epsilon * split[1] / rounds as f64, epsilon * split[2] / marginals)
            } else {
                (0.0, epsilon * (split[1] + split[2]) / marginals)
            };
            Budget { k, one_way: epsilon * split[0] / kf, rounds, selection, two_way, triples }
        };
        // Each part must be a usable ε for its sampler: an error now, before anything is charged.
        for (part, e) in b.parts() {
            if e > 0.0 {
                crate::dp::epsilon_numerator(F, e).map_err(|_| {
                    AnonError::argument(
                        F,
                        "epsilon",
                        format!("its {part} share {e:e} is below the smallest ε the samplers take (2^-32)"),
                    )
                })?;
            }
        }
        Ok(b)
    }

    /// (name, ε per mechanism) of the three kinds of mechanism.
    pub fn parts(&self) -> [(&'static str, f64); 3] {
        [("one_way", self.one_way), ("selection", self.selection), ("two_way", self.two_way)]
    }

    /// The composition sum on the samplers' grid: k·ε₁ + r·ε_s + (k − 1 + t)·ε₂, each ε
    /// rounded down as its sampler rounds it. The ledger charge.
    pub fn units(&self) -> u64 {
        let marginals = (self.k - 1 + self.triples) as u64;
        let part = |e: f64| if e > 0.0 { grid_units(e) } else { 0 };
        self.k as u64 * part(self.one_way) + self.rounds as u64 * part(self.selection) + marginals * part(self.two_way)
    }

    /// The composition sum as a number, for reports and the release's label: the ledger's
    /// charge ([`Budget::units`]) in ε, never above the ε asked for (the parts' own float sum
    /// can exceed it in its last bit: 1.0000000000000002 for ε = 1).
    pub fn total(&self) -> f64 {
        epsilon_of(self.units())
    }

    /// The ε of all one-way marginals, of all selection rounds, of all two-way marginals and
    /// of all three-way marginals, each on the samplers' grid as [`Budget::units`] counts it,
    /// so that the four add up to [`Budget::total`].
    pub fn totals(&self) -> [f64; 4] {
        let part = |n: usize, e: f64| epsilon_of(n as u64 * if e > 0.0 { grid_units(e) } else { 0 });
        [
            part(self.k, self.one_way),
            part(self.rounds, self.selection),
            part(self.k - 1, self.two_way),
            part(self.triples, self.two_way),
        ]
    }

    /// The variance of one two-way cell's noise (0 without pairs).
    pub(crate) fn two_way_variance(&self) -> Result<f64> {
        if self.two_way > 0.0 { Ok(DiscreteLaplace::for_epsilon(self.two_way, 1)?.variance()) } else { Ok(0.0) }
    }
}

/// Grid units as ε (exact: both are multiples of 2^-32 well inside f64's 53 bits).
fn epsilon_of(units: u64) -> f64 {
    units as f64 / (1u64 << crate::dp::EPSILON_GRID_BITS) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_compose_to_at_most_epsilon() {
        for (eps, k) in [(1.0, 6), (0.1, 2), (3.0, 1), (0.7, 9)] {
            let b = Budget::new(eps, DEFAULT_SPLIT, k).unwrap();
            assert!(b.total() <= eps && eps - b.total() < 1e-8, "{eps} {k}");
            assert!(b.units() <= grid_units(eps) && b.units() + 3 * k as u64 >= grid_units(eps), "{eps} {k}");
        }
    }

    #[test]
    fn declared_edges_leave_the_sum_at_epsilon() {
        for (k, declared, triples) in [(6, 1, 0), (6, 5, 0), (3, 2, 0), (4, 0, 0), (6, 5, 1), (6, 0, 9), (2, 1, 1)] {
            let b = Budget::with_declared(1.0, DEFAULT_SPLIT, k, declared, triples).unwrap();
            assert_eq!(b.triples, triples.min(k - 2));
            assert_eq!(b.rounds, k - 1 - declared + b.triples);
            assert!(b.total() <= 1.0 && 1.0 - b.total() < 1e-8, "{k} {declared} {triples}");
            assert!(b.units() <= grid_units(1.0) && b.units() + 3 * (k + triples) as u64 >= grid_units(1.0));
        }
        assert!(Budget::with_declared(1.0, DEFAULT_SPLIT, 3, 3, 0).unwrap_err().to_string().contains("edges"));
    }

    #[test]
    fn bad_splits_and_tiny_shares_are_refused() {
        for split in [[0.5, 0.5, 0.5], [0.0, 0.2, 0.8], [f64::NAN, 0.5, 0.5]] {
            assert!(Budget::new(1.0, split, 3).unwrap_err().to_string().contains("split"));
        }
        assert!(Budget::new(1e-9, DEFAULT_SPLIT, 5).unwrap_err().to_string().contains("epsilon"));
    }
}
