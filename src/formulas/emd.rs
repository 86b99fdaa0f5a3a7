//! Earth Mover's Distance between two distributions over the same values (t-closeness, Li, Li &
//! Venkatasubramanian 2007, Sec. 4.2). Both take (p_i, q_i) pairs so a caller holding counts
//! (a class histogram, a global distribution in another order) divides as it iterates instead
//! of building the two vectors.

/// Equal ground distance: EMD(P, Q) = ½ Σ_i |p_i − q_i| (total variation).
pub(crate) fn equal_emd_of(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    0.5 * pairs.into_iter().map(|(a, b)| (a - b).abs()).sum::<f64>()
}

/// Ordered ground distance |i − j|/(m − 1) over the m values in ascending order:
/// EMD(P, Q) = (1/(m − 1)) Σ_i |Σ_{j ≤ i} (p_j − q_j)|; 0 for fewer than two values.
pub(crate) fn ordered_emd_of(pairs: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let (mut acc, mut total, mut m) = (0.0, 0.0, 0usize);
    for (a, b) in pairs {
        acc += a - b;
        total += f64::abs(acc);
        m += 1;
    }
    if m < 2 { 0.0 } else { total / (m - 1) as f64 }
}

/// [`equal_emd_of`] of two slices.
pub fn equal_emd(p: &[f64], q: &[f64]) -> f64 {
    equal_emd_of(p.iter().copied().zip(q.iter().copied()))
}

/// [`ordered_emd_of`] of two slices in ascending value order.
pub fn ordered_emd(p: &[f64], q: &[f64]) -> f64 {
    ordered_emd_of(p.iter().copied().zip(q.iter().copied()))
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
        // One value: no distance to speak of, whatever the mass.
        assert_eq!(ordered_emd(&[1.0], &[0.0]), 0.0);
    }
}
