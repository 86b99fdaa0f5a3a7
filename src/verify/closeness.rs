//! t-closeness (Li, Li and Venkatasubramanian, "t-Closeness: Privacy Beyond k-Anonymity and
//! l-Diversity", ICDE 2007): the Earth Mover's Distance between each class's sensitive
//! distribution P and the whole table's Q is at most t.
//!
//! - categorical sensitive attribute, equal ground distance: EMD = ½ Σ_i |p_i - q_i|
//!   (total variation);
//! - numeric sensitive attribute, ordered distance over its m distinct values in ascending
//!   order: EMD = 1/(m-1) Σ_{i=1}^{m} |Σ_{j<=i} (p_j - q_j)|.
//!
//! Q is the distribution over every row of the ORIGINAL table's declared sensitive column (the
//! definition: the whole table's), not over the release: a suppressed record is published as a
//! shell that carries no sensitive value, so the release no longer holds the whole table's.
//! The methods compare with the same Q (kanon's over its whole frequency table).

use super::{Histogram, Verdict};

/// Dense distribution of one class over the value indices.
fn distribution(counts: &[(u32, u64)], m: usize) -> Vec<f64> {
    let n: u64 = counts.iter().map(|c| c.1).sum();
    let mut p = vec![0.0; m];
    for &(v, c) in counts {
        p[v as usize] = c as f64 / n.max(1) as f64;
    }
    p
}

pub(crate) fn equal_emd(p: &[f64], q: &[f64]) -> f64 {
    0.5 * p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<f64>()
}

/// `p` and `q` indexed in ascending value order.
pub(crate) fn ordered_emd(p: &[f64], q: &[f64]) -> f64 {
    let m = p.len();
    if m <= 1 {
        return 0.0;
    }
    let mut cum = 0.0;
    let mut total = 0.0;
    for (a, b) in p.iter().zip(q) {
        cum += a - b;
        total += cum.abs();
    }
    total / (m as f64 - 1.0)
}

/// Value indices of the histogram in ascending numeric order (numeric attribute) or as stored.
fn order(h: &Histogram) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..h.values.len()).collect();
    if let Some(x) = &h.numeric {
        idx.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    }
    idx
}

pub(crate) fn t_closeness(h: &Histogram, t: f64) -> Verdict {
    let m = h.values.len();
    let perm = order(h);
    let overall = distribution(&h.overall, m);
    let q: Vec<f64> = perm.iter().map(|&i| overall[i]).collect();
    let ordered = h.numeric.is_some();
    let mut worst = 0.0f64;
    let mut failing: Vec<(usize, f64)> = Vec::new();
    for (i, c) in h.classes.iter().enumerate() {
        let raw = distribution(&c.counts, m);
        let p: Vec<f64> = perm.iter().map(|&j| raw[j]).collect();
        let d = if ordered { ordered_emd(&p, &q) } else { equal_emd(&p, &q) };
        worst = worst.max(d);
        if d > t + 1e-12 {
            failing.push((i, d));
        }
    }
    let kind = if ordered { "ordered-distance" } else { "equal-distance" };
    let note = h.suppressed_note();
    match failing.first() {
        None => Verdict::holds(format!("{} classes, largest {kind} EMD {worst:.4}{note}", h.classes.len())),
        Some(&(i, d)) => Verdict::fails(
            failing.len() as i64,
            format!(
                "{} of {} classes fail; first: class ({}) has {kind} EMD {d:.4} > t={t}{note}",
                failing.len(),
                h.classes.len(),
                h.classes[i].label
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emds() {
        assert!((equal_emd(&[1.0, 0.0], &[0.5, 0.5]) - 0.5).abs() < 1e-12);
        // Li et al. example shape: all mass at the lowest of 3 values vs uniform.
        let d = ordered_emd(&[1.0, 0.0, 0.0], &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        assert_eq!(ordered_emd(&[1.0], &[1.0]), 0.0);
    }
}
