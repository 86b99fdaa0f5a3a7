//! Normalized Certainty Penalty of one generalized value (Xu et al. 2006), in the two readings
//! the papers give. Both charge a categorical value the share of its hierarchy's leaves it
//! covers (0 for a single leaf) and a suppressed value 1; they differ on numeric values:
//!
//! - ArtUC (Def. 3) measures a range by its length: (hi − lo)/(U − L);
//! - IPA (Eq. 5) counts the hierarchy leaves the range covers, as for a categorical value.
//!
//! A record's NCP is a weighted sum over its quasi-identifiers (ArtUC Def. 4, IPA Eq. 6 with
//! weights 1/q); callers add it up, since what a record is differs between them (a decoded
//! row, a cluster's hull, a class of a lattice node).

use crate::hierarchy::Hierarchy;
use crate::release::Cell;

/// A value covering `leaves` of the `all` leaves of its hierarchy: 0 for one leaf (no loss),
/// `leaves / all` otherwise (IPA Eq. 5; ArtUC Def. 3 for categorical values).
pub(crate) fn leaf_ncp(leaves: f64, all: usize) -> f64 {
    if leaves <= 1.0 { 0.0 } else { leaves / all as f64 }
}

/// A numeric range [lo, hi] of a hierarchy with domain [L, U]: (hi − lo)/(U − L), clamped to
/// [0, 1] (ArtUC Def. 3); 0 for a one-value domain.
pub(crate) fn range_ncp(lo: f64, hi: f64, h: &Hierarchy) -> f64 {
    match h.domain() {
        Some((l, u)) if u > l => ((hi - lo) / (u - l)).clamp(0.0, 1.0),
        _ => 0.0,
    }
}

/// NCP_A(ṽ) of ArtUC Def. 3: 0 when |ṽ| = 1, |ṽ|/|A| otherwise, |ṽ| a range's length or a node's
/// leaves; a suppressed value costs 1.
pub(crate) fn ncp_value(c: &Cell, h: &Hierarchy) -> f64 {
    match *c {
        Cell::Range { lo, hi } => range_ncp(lo, hi, h),
        Cell::Node { level, code } => leaf_ncp(h.leaves_under(level as usize, code) as f64, h.leaf_count()),
        Cell::Suppressed => 1.0,
    }
}

/// NCP of IPA Eq. 5: the share of the hierarchy's leaves the value covers, numeric ranges too
/// (a suppressed value covers them all).
pub(crate) fn ipa_ncp_value(c: &Cell, h: &Hierarchy) -> f64 {
    leaf_ncp(c.leaves(h), h.leaf_count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_leaf_costs_nothing_and_every_leaf_costs_one() {
        assert_eq!(leaf_ncp(1.0, 10), 0.0);
        assert_eq!(leaf_ncp(10.0, 10), 1.0);
        assert!((leaf_ncp(3.0, 12) - 0.25).abs() < 1e-15);
    }
}
