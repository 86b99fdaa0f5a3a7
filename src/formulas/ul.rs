//! Utility Loss of a set-valued attribute (Loukides et al.), as the ArtUC paper defines it
//! (Defs. 5–6): what ArtUC's GenDiag minimizes and what `anon_metrics` reports.

/// UL of a generalized diagnosis code ũ that replaced |ũ| codes (ArtUC Def. 5):
/// UL(ũ) = (2^|ũ| − 1) · w(ũ). Example 4 gives the one-code generalized code (494.1) UL 0 ("no
/// information loss"), so a single code costs 0 here; every weight w(ũ) is 1.
pub(crate) fn ul_code(size: u32) -> f64 {
    if size <= 1 { 0.0 } else { 2f64.powi(size.min(1000) as i32) - 1.0 }
}

/// UL of one record without its suppression term (ArtUC Def. 6):
/// Σ_{ũ ∈ r} UL(ũ) / (2^σ(r) − 1), σ(r) = the number of codes that appear in r's generalized
/// codes (Σ |ũ|). 0 for a record with no codes.
pub fn record_ul(sizes: &[u32]) -> f64 {
    let sigma: u32 = sizes.iter().sum();
    if sigma == 0 {
        return 0.0;
    }
    sizes.iter().map(|&s| ul_code(s)).sum::<f64>() / (2f64.powi(sigma.min(1000) as i32) - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_codes_cost_nothing_and_pairs_three() {
        assert_eq!(ul_code(1), 0.0);
        assert_eq!(ul_code(2), 3.0);
        // ArtUC Example 4: record 6 = 494.1 (458.1, 458.21).
        assert!((record_ul(&[1, 2]) - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(record_ul(&[]), 0.0);
    }
}
