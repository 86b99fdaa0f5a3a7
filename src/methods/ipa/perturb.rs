//! Algorithm 1 on one lattice node: suppression under a noisy threshold (lines 6–12), a noisy
//! size per class (lines 16–17) and counterfeit informative values from the exponential
//! mechanism with the scores of Eq. 3 (lines 18–21). It runs on the node's classes and their
//! informative-value histograms, never on rows.
//!
//! Decisions the proofs need (docs/ipa.md has the paper's text for each):
//! - **Fresh threshold noise per class** (line 7 draws `Lap((t−1)/ε_suppression)` inside the
//!   loop); a shared draw would couple the classes and break the parallel composition that
//!   Theorem 5 relies on.
//! - **The released size of a class is the noisy count `n' = n + Lap(1/ε_insertion)`**
//!   (Theorem 6 is the Laplace mechanism on the class size, so what is published must be that
//!   noisy count). A positive draw inserts `n' − n` counterfeits; a negative one withholds
//!   `n − n'` uniformly chosen real records of the class (all of them when `n' ≤ 0`). Clamping
//!   at `n` instead would publish `max(n, n')`, whose value `n` has probability ≈ ½ under the
//!   table and 0 under the neighbour with one record fewer: no ε bounds that.
//! - **Suppressed records form one more class**, `*` in every dimension attribute (Table 7),
//!   and it is perturbed like the others. Algorithm 1 inserts only into the kept classes, which
//!   would publish the suppressed records exactly: a record whose class is suppressed would add
//!   one `*` row with certainty. The `*` class exists in every release (it is data
//!   independent), so it is perturbed even when nothing is suppressed.
//! - **Counterfeit values are drawn independently from Eq. 4 over the real class** (the scores
//!   of Eq. 3 use the class's real records, `|E_i|` and `Count_i(v)` before insertion). Line 20
//!   adds each drawn value to `E_i`, which could be read as updating the scores between draws;
//!   the scores are fixed here so that every draw is the mechanism Theorem 7 analyses.
//! - **ΔS = 1**: the paper leaves the sensitivity of Eq. 3 symbolic; every score lies in [0, 1)
//!   (`Count_i(v) ≤ |E_i| < |E_i| + 1`), so no change of one record moves a score by 1.

use crate::dp::{DiscreteLaplace, ExponentialMechanism, withhold};
use crate::encode::Cached;
use crate::error::{AnonError, Result};
use rand::Rng;

/// Sensitivity of the Eq. 3 scores (module doc).
pub(crate) const SCORE_SENSITIVITY: f64 = 1.0;

/// The samplers of Algorithm 1, built once per call.
#[derive(Debug, Clone)]
pub struct Noise {
    /// `t` of Definition 3.
    t: u64,
    /// `Lap((t − 1)/ε_suppression)`, as the discrete Laplace.
    pub threshold: DiscreteLaplace,
    /// `Lap(1/ε_insertion)`.
    size: DiscreteLaplace,
    /// `ε_value` of Eq. 4.
    pub epsilon_value: f64,
}

impl Noise {
    pub(crate) fn new(t: u64, epsilon_suppression: f64, epsilon_insertion: f64, epsilon_value: f64) -> Result<Self> {
        if t < 2 {
            return Err(AnonError::argument("ipa_release", "t", format!("must be at least 2, got {t}")));
        }
        Ok(Noise {
            t,
            threshold: DiscreteLaplace::for_epsilon(epsilon_suppression, t - 1)?,
            size: DiscreteLaplace::for_epsilon(epsilon_insertion, 1)?,
            epsilon_value,
        })
    }
}

/// One class of the perturbed node: a kept class of the node or the `*` class.
#[derive(Debug, Clone, PartialEq)]
pub struct PerturbedClass {
    /// The node's class (an index into its grouping), `None` for the `*` class.
    pub class: Option<u32>,
    /// Real records per informative value before perturbation (P of the class's EMD).
    pub original: Vec<u32>,
    /// Real records released per value.
    pub kept: Vec<u32>,
    /// Counterfeit records per value.
    pub counterfeit: Vec<u32>,
}

impl PerturbedClass {
    pub fn original_size(&self) -> u64 {
        self.original.iter().map(|&n| u64::from(n)).sum()
    }
    pub fn counterfeits(&self) -> u64 {
        self.counterfeit.iter().map(|&n| u64::from(n)).sum()
    }
    /// Released records: kept real ones plus counterfeits.
    pub fn released_size(&self) -> u64 {
        self.kept.iter().map(|&n| u64::from(n)).sum::<u64>() + self.counterfeits()
    }
    pub fn is_suppressed(&self) -> bool {
        self.class.is_none()
    }
}

/// The node's release before it is written out: its kept classes in canonical order, then
/// the `*` class.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbation {
    pub classes: Vec<PerturbedClass>,
    /// Classes suppressed under the noisy threshold.
    pub suppressed_classes: usize,
    /// Real records in suppressed classes (released, if not withheld, as `*`).
    pub suppressed_records: u64,
    /// Real records withheld to realize negative noise.
    pub withheld_records: u64,
    pub counterfeit_records: u64,
}

/// The node's classes in the order of their generalized values, so the noise a class gets
/// does not depend on how the grouping was rolled up (the cache may build a node from any
/// specialization, in any class order).
pub(crate) fn canonical_order(cached: &Cached) -> Vec<u32> {
    let g = &cached.g;
    let mut order: Vec<u32> = (0..g.len() as u32).collect();
    order.sort_by(|&a, &b| g.codes.iter().map(|c| c[a as usize]).cmp(g.codes.iter().map(|c| c[b as usize])));
    order
}

/// Definition 3 for one class: suppressed when `n ≤ t + Lap((t−1)/ε_suppression)`, with a
/// fresh draw per class.
pub fn is_suppressed<R: Rng + ?Sized>(n: u64, noise: &Noise, rng: &mut R) -> bool {
    let threshold = i128::from(noise.t) + i128::from(noise.threshold.sample(rng));
    i128::from(n) <= threshold
}

/// Eq. 3: `Count_i(v)/(|E_i| + 1)` for a value in the class, `1/((|E_i| + 1)(|Inf| − |Inf_i|))`
/// for one that is not.
pub(crate) fn scores(hist: &[u32]) -> Vec<f64> {
    let n: u64 = hist.iter().map(|&c| u64::from(c)).sum();
    let present = hist.iter().filter(|&&c| c > 0).count();
    let absent = (hist.len() - present).max(1) as f64;
    hist.iter().map(|&c| if c > 0 { f64::from(c) / (n + 1) as f64 } else { 1.0 / ((n + 1) as f64 * absent) }).collect()
}

/// Lines 16–21 for one class with real histogram `original`: a noisy size, then counterfeits
/// from Eq. 4 or withheld real records.
pub fn insert<R: Rng + ?Sized>(
    class: Option<u32>,
    original: Vec<u32>,
    noise: &Noise,
    rng: &mut R,
) -> Result<PerturbedClass> {
    let n = original.iter().map(|&c| u64::from(c)).sum::<u64>();
    let delta = noise.size.sample(rng);
    let mut kept = original.clone();
    let mut counterfeit = vec![0u32; original.len()];
    if delta > 0 {
        let em = ExponentialMechanism::new(&scores(&original), noise.epsilon_value, SCORE_SENSITIVITY)?;
        for _ in 0..delta {
            counterfeit[em.sample(rng)] += 1;
        }
    } else if delta < 0 {
        let gone = withhold(rng, &original, delta.unsigned_abs().min(n));
        kept.iter_mut().zip(gone).for_each(|(k, g)| *k -= g);
    }
    Ok(PerturbedClass { class, original, kept, counterfeit })
}

/// Algorithm 1 on one node. `width` is the number of informative values (|Inf|).
pub fn perturb<R: Rng + ?Sized>(cached: &Cached, width: usize, noise: &Noise, rng: &mut R) -> Result<Perturbation> {
    let order = canonical_order(cached);
    let mut star = vec![0u32; width];
    let mut kept = Vec::with_capacity(order.len());
    let (mut suppressed_classes, mut suppressed_records) = (0usize, 0u64);
    // Lines 6–12.
    for &c in &order {
        let n = cached.g.sizes[c as usize];
        if is_suppressed(n, noise, rng) {
            suppressed_classes += 1;
            suppressed_records += n;
            star.iter_mut().zip(cached.class_hist(c as usize, width)).for_each(|(s, &h)| *s += h);
        } else {
            kept.push(c);
        }
    }
    // Lines 14–23, the `*` class last.
    let mut classes = Vec::with_capacity(kept.len() + 1);
    for c in kept {
        classes.push(insert(Some(c), cached.class_hist(c as usize, width).to_vec(), noise, rng)?);
    }
    classes.push(insert(None, star, noise, rng)?);
    let withheld_records = classes.iter().map(|c| c.original_size() + c.counterfeits() - c.released_size()).sum();
    let counterfeit_records = classes.iter().map(PerturbedClass::counterfeits).sum();
    Ok(Perturbation { classes, suppressed_classes, suppressed_records, withheld_records, counterfeit_records })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq3_scores() {
        // Table 6's first class over Inf = {Anemia, Diabetes, Gastritis, Pneumonia, Stroke}.
        let s = scores(&[0, 0, 1, 2, 0]);
        assert_eq!(s, vec![1.0 / 12.0, 1.0 / 12.0, 0.25, 0.5, 1.0 / 12.0]);
        // An empty class (the `*` class with nothing suppressed): uniform.
        assert_eq!(scores(&[0, 0]), vec![0.5, 0.5]);
        assert!(scores(&[7, 1, 0]).iter().all(|&x| (0.0..1.0).contains(&x)));
    }
}
