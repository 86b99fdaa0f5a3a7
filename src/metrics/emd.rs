//! Earth Mover's Distance between each equivalence class's sensitive distribution and the
//! whole release's (t-closeness, Li, Li & Venkatasubramanian 2007); the distances are
//! [`crate::formulas::emd`], the ones kanon's t-closeness and IPA's node score use.

use super::decode::{Decoded, Sensitive};
use crate::formulas::emd::{equal_emd, ordered_emd};

/// EMD of every class (suppressed records form no class). For a categorical sensitive
/// attribute the equal ground distance gives EMD(P, Q) = ½ Σ_i |p_i − q_i|; for a numeric one the
/// ordered distance over the m values sorted ascending gives
/// EMD(P, Q) = (1/(m − 1)) Σ_{i=1..m} |Σ_{j ≤ i} (p_j − q_j)| (Li et al., Sec. 4.2).
/// Q is the distribution over every released record that carries a value (a suppressed
/// record's is withheld).
pub fn class_emds(rel: &Decoded) -> Vec<f64> {
    let Some(s) = &rel.sensitive else { return Vec::new() };
    let m = s.values.len();
    let table = distribution(rel, s, (0..rel.len()).collect::<Vec<_>>().as_slice(), m);
    rel.class_members()
        .iter()
        .map(|rows| {
            let p = distribution(rel, s, rows, m);
            if s.ordered { ordered_emd(&p, &table) } else { equal_emd(&p, &table) }
        })
        .collect()
}

fn distribution(rel: &Decoded, s: &Sensitive, rows: &[usize], m: usize) -> Vec<f64> {
    let mut d = vec![0.0; m];
    for &r in rows.iter().filter(|&&r| s.codes[r] != super::decode::WITHHELD) {
        d[s.codes[r] as usize] += rel.weight(r);
    }
    let n: f64 = d.iter().sum::<f64>().max(1.0);
    d.iter_mut().for_each(|x| *x /= n);
    d
}

/// (max, mean over classes) of the class EMDs; (0, 0) without classes.
pub(crate) fn emd_summary(rel: &Decoded) -> (f64, f64) {
    let e = class_emds(rel);
    (e.iter().copied().fold(0.0, f64::max), super::loss::mean(&e))
}
