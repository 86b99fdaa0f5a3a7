//! Step 2: the information loss of a perturbed node, IL = NCP + EMD + Rate (Eqs. 5–10), on the
//! node's perturbed classes. Each part lies in [0, 1], which is what the paper's sensitivity of
//! 1 per part (ΔIL = 3) rests on; the readings below keep every part in that range.
//!
//! - **NCP** (Eqs. 5–6): a value covering |v| of the |L| leaves of its hierarchy costs |v|/|L|,
//!   a leaf 0; a `*` record covers every leaf (cost 1 per attribute). Eq. 6 sums over the
//!   attributes yet claims a range of [0, 1]: the per-record sum is averaged over the q
//!   dimension attributes (weights 1/q, as `anon_metrics`' NCP does by default). Records are
//!   the released ones, counterfeits included (Eq. 6 sums over r ∈ D̂). For numeric attributes
//!   |v| counts hierarchy leaves, as Eq. 5 says; `anon_metrics` measures a numeric range by its
//!   length instead, so the two agree on categorical attributes.
//! - **EMD** (Eq. 7): Eq. 7 compares "the original and anonymized datasets", while the text
//!   bounds it by "two completely different equivalent classes": it is read per class, between
//!   the informative distribution of the class's real records (P) and of its released records
//!   (Q), with the equal ground distance ½Σ|p_k − q_k|, and averaged over the classes as Rate
//!   is (Eq. 9). A class released empty, or released with counterfeits only, is at distance 1.
//! - **Rate** (Eqs. 8–9): counterfeits over the class's released size |E_i| (counterfeits
//!   included, so Rate_class ≤ 1; Table 8's classes have 1/4), averaged over the classes.
//!
//! The classes averaged over are the node's kept classes and the `*` class when it holds real
//! or released records.

use super::perturb::{Perturbation, PerturbedClass};
use crate::encode::Grouping;
use crate::formulas::emd::equal_emd;
use crate::formulas::ncp::leaf_ncp;
use crate::hierarchy::Hierarchy;
use std::sync::Arc;

/// ΔIL of Eq. 12: three parts of sensitivity 1.
pub(crate) const IL_SENSITIVITY: f64 = 3.0;

/// The parts of IL (Eq. 10).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Loss {
    pub ncp: f64,
    pub emd: f64,
    pub rate: f64,
}

impl Loss {
    pub fn il(&self) -> f64 {
        self.ncp + self.emd + self.rate
    }
    /// Eq. 11: u = 3 − IL.
    pub(crate) fn utility(&self) -> f64 {
        IL_SENSITIVITY - self.il()
    }
}

/// NCP of one record of class `c` (mean of Eq. 5 over the dimension attributes).
pub(crate) fn class_ncp(hs: &[Arc<Hierarchy>], g: &Grouping, c: usize) -> f64 {
    codes_ncp(hs, &g.levels, |a| g.codes[a][c])
}

/// NCP of one record generalized to node codes `code(a)` at `levels`.
pub(crate) fn codes_ncp(hs: &[Arc<Hierarchy>], levels: &[u8], code: impl Fn(usize) -> u32) -> f64 {
    let q = hs.len().max(1) as f64;
    hs.iter()
        .enumerate()
        .map(|(a, h)| leaf_ncp(f64::from(h.leaves_under(levels[a] as usize, code(a))), h.leaf_count()))
        .sum::<f64>()
        / q
}

/// NCP of a `*` record.
pub(crate) fn suppressed_ncp(hs: &[Arc<Hierarchy>]) -> f64 {
    let q = hs.len().max(1) as f64;
    hs.iter().map(|h| leaf_ncp(h.leaf_count() as f64, h.leaf_count())).sum::<f64>() / q
}

/// Eq. 7 for one class (module doc).
pub(crate) fn class_emd(c: &PerturbedClass) -> f64 {
    let (n, m) = (c.original_size(), c.released_size());
    if n == 0 || m == 0 {
        return 1.0;
    }
    let p: Vec<f64> = c.original.iter().map(|&x| f64::from(x) / n as f64).collect();
    let q: Vec<f64> = c.kept.iter().zip(&c.counterfeit).map(|(&k, &f)| f64::from(k + f) / m as f64).collect();
    equal_emd(&p, &q)
}

/// Eq. 8 for one class.
pub(crate) fn class_rate(c: &PerturbedClass) -> f64 {
    let m = c.released_size();
    if m == 0 { 0.0 } else { c.counterfeits() as f64 / m as f64 }
}

/// IL of a perturbed node (module doc). An empty release costs NCP 1: its records could be
/// anything.
pub fn loss(hs: &[Arc<Hierarchy>], g: &Grouping, p: &Perturbation) -> Loss {
    let classes: Vec<&PerturbedClass> =
        p.classes.iter().filter(|c| !c.is_suppressed() || c.original_size() + c.released_size() > 0).collect();
    let star = suppressed_ncp(hs);
    let (mut ncp_sum, mut released) = (0.0, 0u64);
    for c in &classes {
        let m = c.released_size();
        let ncp = match c.class {
            Some(k) => class_ncp(hs, g, k as usize),
            None => star,
        };
        ncp_sum += m as f64 * ncp;
        released += m;
    }
    let k = classes.len().max(1) as f64;
    Loss {
        ncp: if released == 0 { 1.0 } else { ncp_sum / released as f64 },
        emd: classes.iter().map(|c| class_emd(c)).sum::<f64>() / k,
        rate: classes.iter().map(|c| class_rate(c)).sum::<f64>() / k,
    }
}
