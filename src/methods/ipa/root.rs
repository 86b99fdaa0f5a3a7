//! The automatic plan's root, chosen privately (issue 32): the exponential mechanism over the
//! lattice's nodes, scored by how much of the informative attribute's dependence on the
//! quasi-identifiers a node's combinations hold, net of the noise its coarse level will add.
//! Proof and sensitivity: docs/dp.md, "The automatic plan's root"; measurements:
//! docs/results/ipa.md, "Your own table".
//!
//! For a node R with combinations x (counts n_x), informative values v (counts n_{x,v}; over
//! the table N_v and N) and V declared values:
//!
//! u(R) = G(R) − C_R · V · E|X|,  G(R) = Σ_x Σ_v |n_{x,v} − n_x N_v / N|
//!
//! - G(R) is the L1 distance between the node's joint histogram and the one that would hold if
//!   the informative attribute did not depend on R's combinations: 0 at the top node, and
//!   growing only with the combinations that tell the informative values apart. IPA keeps the
//!   informative attribute's distribution per class, so this is what a root can preserve that
//!   the top node cannot; splits that carry no information (a location that does not predict
//!   the disease) add sampling variation only.
//! - C_R · V · E|X| is the expected L1 error that the coarse level's noise (ε_coarse) adds over
//!   the node's C_R · V public cells: a root is worth its cells only when its combinations tell
//!   more than their noise hides. It reads the public domain only.
//!
//! G is computed exactly as S / N with S = Σ |N n_{x,v} − n_x N_v| an integer, so the only
//! rounding is one division. Adding or removing one record moves G by less than 4 (docs/dp.md),
//! and the mechanism is given Δ = 4 (1 + 10⁻⁶).

use super::select::map_lattice;
use crate::dp::{DiscreteLaplace, ExponentialMechanism, StreamKey};
use crate::encode::{Cached, FrequencyTable, NodeCache};
use crate::error::Result;
use crate::progress::Progress;

/// Default share of ε spent choosing the automatic plan's root.
pub(crate) const ROOT_SHARE: f64 = 0.1;
/// Part of the root's share spent on the noisy record count N̂ that bounds its combinations.
pub(crate) const COUNT_SHARE: f64 = 0.2;
/// Sensitivity of G with the margin for its one rounded division (module doc).
const SENSITIVITY: f64 = 4.0 * (1.0 + 1e-6);
/// Most cells (combinations × declared values) a candidate root may have: a public rule, and
/// a bound on the coarse level's noise rows.
pub(crate) const MAX_ROOT_CELLS: u64 = 1_000_000;
/// Noise streams of the choice and of the count (the adaptive release's stages use
/// u64::MAX − 2 .. − 4).
const ROOT_STREAM: u64 = u64::MAX - 5;
const COUNT_STREAM: u64 = u64::MAX - 6;

/// One candidate root. Diagnostic: G reads the exact data.
#[derive(Debug, Clone, PartialEq)]
pub struct RootCandidate {
    pub levels: Vec<u8>,
    pub gain: f64,
    /// Public: C_R · V · E|X|.
    pub penalty: f64,
}

impl RootCandidate {
    pub fn utility(&self) -> f64 {
        self.gain - self.penalty
    }
}

/// G of one grouped node (module doc), exactly in integers but for the final division.
pub(crate) fn informative_gain(c: &Cached, width: usize) -> f64 {
    let classes = c.g.len();
    let mut totals = vec![0u64; width];
    for k in 0..classes {
        for (t, &x) in totals.iter_mut().zip(c.class_hist(k, width)) {
            *t += u64::from(x);
        }
    }
    let n: u64 = totals.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let mut s: u128 = 0;
    for k in 0..classes {
        let hist = c.class_hist(k, width);
        let nx: u64 = hist.iter().map(|&x| u64::from(x)).sum();
        for (&x, &t) in hist.iter().zip(&totals) {
            s += (i128::from(n) * i128::from(x) - i128::from(nx) * i128::from(t)).unsigned_abs();
        }
    }
    s as f64 / n as f64
}

/// The most combinations a root may have: N̂ / `theta` (at least 1), N̂ = N + X with X discrete
/// Laplace at `epsilon` (sensitivity 1). Roots finer than that hold classes below θ on average,
/// which no step can refine: their gain would be spent on classes the cells' noise swamps.
pub(crate) fn most_combinations(ft: &FrequencyTable, epsilon: f64, theta: f64, key: &StreamKey) -> Result<u128> {
    let n: u64 = ft.counts.iter().sum();
    let noisy =
        i128::from(n) + i128::from(DiscreteLaplace::for_epsilon(epsilon, 1)?.sample(&mut key.stream(COUNT_STREAM)));
    Ok(((noisy.max(0) as f64 / theta.max(1.0)).floor() as u128).max(1))
}

/// Every node within [`MAX_ROOT_CELLS`] that `eligible` (a public rule) accepts, scored.
pub fn candidates(
    ft: &FrequencyTable,
    coarse: &DiscreteLaplace,
    eligible: impl Fn(&[u8]) -> bool,
    progress: &dyn Progress,
) -> Result<Vec<RootCandidate>> {
    let mut nodes = NodeCache::new(ft, true)?;
    let width = nodes.width();
    let per_cell = coarse.mean_abs();
    let lattice = nodes.lattice.clone();
    let scored = map_lattice(&mut nodes, MAX_ROOT_CELLS, progress, "IPA: choosing the root", |_, c, cells| {
        (informative_gain(c, width), cells as f64 * per_cell)
    })?;
    Ok(scored
        .into_iter()
        .map(|(node, (gain, penalty))| RootCandidate { levels: lattice.levels(node), gain, penalty })
        .filter(|c| eligible(&c.levels))
        .collect())
}

/// The exponential mechanism over the candidates at `epsilon` (sensitivity: module doc).
pub(crate) fn mechanism(candidates: &[RootCandidate], epsilon: f64) -> Result<ExponentialMechanism> {
    let u: Vec<f64> = candidates.iter().map(RootCandidate::utility).collect();
    ExponentialMechanism::new(&u, epsilon, SENSITIVITY)
}

/// Choose the root: one exact draw of the mechanism from the key's root stream.
pub(crate) fn choose(candidates: &[RootCandidate], epsilon: f64, key: &StreamKey) -> Result<Vec<u8>> {
    let m = mechanism(candidates, epsilon)?;
    Ok(candidates[m.sample(&mut key.stream(ROOT_STREAM))].levels.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Grouping;

    fn cached(hist: Vec<u32>, classes: usize) -> Cached {
        let g = Grouping { levels: Vec::new(), codes: Vec::new(), sizes: vec![0; classes], ranges: Vec::new() };
        Cached { g, hist, keys: Vec::new() }
    }

    #[test]
    fn gain_is_the_l1_distance_to_independence() {
        // Two classes, two values: (3, 1) and (1, 3); N_v = (4, 4), N = 8, independence gives
        // (2, 2) in each class, so G = 4 · 1.
        assert_eq!(informative_gain(&cached(vec![3, 1, 1, 3], 2), 2), 4.0);
        // Proportional classes carry no information.
        assert_eq!(informative_gain(&cached(vec![2, 4, 1, 2], 2), 2), 0.0);
        assert_eq!(informative_gain(&cached(vec![0, 0], 1), 2), 0.0);
    }
}
