//! Earth Mover's Distance between each equivalence class's sensitive distribution and the
//! whole release's (t-closeness, Li, Li & Venkatasubramanian 2007).

use super::decode::{Release, Sensitive};

/// EMD of every class (suppressed records form no class). For a categorical sensitive
/// attribute the equal ground distance gives EMD(P, Q) = ½ Σ_i |p_i − q_i|; for a numeric one the
/// ordered distance over the m values sorted ascending gives
/// EMD(P, Q) = (1/(m − 1)) Σ_{i=1..m} |Σ_{j ≤ i} (p_j − q_j)| (Li et al., Sec. 4.2).
/// Q is the distribution over every released record.
pub fn class_emds(rel: &Release) -> Vec<f64> {
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

fn distribution(rel: &Release, s: &Sensitive, rows: &[usize], m: usize) -> Vec<f64> {
    let mut d = vec![0.0; m];
    for &r in rows {
        d[s.codes[r] as usize] += rel.weight(r);
    }
    let n: f64 = d.iter().sum::<f64>().max(1.0);
    d.iter_mut().for_each(|x| *x /= n);
    d
}

/// Equal ground distance: ½ Σ |p_i − q_i|.
pub fn equal_emd(p: &[f64], q: &[f64]) -> f64 {
    0.5 * p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<f64>()
}

/// Ordered ground distance |i − j|/(m − 1): (1/(m − 1)) Σ_i |Σ_{j ≤ i} (p_j − q_j)|.
pub fn ordered_emd(p: &[f64], q: &[f64]) -> f64 {
    if p.len() < 2 {
        return 0.0;
    }
    let mut acc = 0.0;
    let mut total = 0.0;
    for (a, b) in p.iter().zip(q) {
        acc += a - b;
        total += acc.abs();
    }
    total / (p.len() - 1) as f64
}

/// (max, mean over classes) of the class EMDs; (0, 0) without classes.
pub fn emd_summary(rel: &Release) -> (f64, f64) {
    let e = class_emds(rel);
    (e.iter().copied().fold(0.0, f64::max), super::loss::mean(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_distributions_are_at_distance_zero() {
        let q = [0.2, 0.3, 0.5];
        assert_eq!(equal_emd(&q, &q), 0.0);
        assert_eq!(ordered_emd(&q, &q), 0.0);
        // All mass at the far end: the largest ordered distance, 1.
        assert!((ordered_emd(&[1.0, 0.0, 0.0], &[0.0, 0.0, 1.0]) - 1.0).abs() < 1e-12);
    }
}
