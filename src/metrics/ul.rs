//! Utility Loss of a set-valued attribute (Loukides et al.), as the ArtUC paper defines it
//! (Defs. 5–6).

use super::decode::SetColumn;
use std::collections::{HashMap, HashSet};

/// UL of a generalized diagnosis code ũ that replaced |ũ| codes (ArtUC Def. 5):
/// UL(ũ) = (2^|ũ| − 1) · w(ũ). Example 4 gives the one-code generalized code (494.1) UL 0 ("no
/// information loss"), so a single code costs 0 here; every weight w(ũ) is 1.
pub fn ul_code(size: u32) -> f64 {
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

/// Records containing each code: leaf code → count. Counts each code once per record.
pub fn code_records<'a>(records: impl IntoIterator<Item = &'a [u32]>) -> HashMap<u32, u64> {
    weighted_code_records(records.into_iter().map(|r| (r, 1)))
}

/// [`code_records`] over (codes, records that hold them) pairs.
pub fn weighted_code_records<'a>(records: impl IntoIterator<Item = (&'a [u32], u64)>) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    for (r, w) in records {
        for c in r.iter().collect::<HashSet<_>>() {
            *out.entry(*c).or_insert(0) += w;
        }
    }
    out
}

/// Suppressed code occurrences Σ_r s(r), without record-by-record alignment: a code x held by
/// o(x) original records and covered (as a code or inside a generalized code) by c(x)
/// released records lost at least max(0, o(x) − c(x)) occurrences. Exact unless a generalized
/// code of a record that never held x hides a suppressed x elsewhere.
/// `weights`: records per decoded row ([`super::decode::Release::weights`]).
pub fn suppressed_codes(col: &SetColumn, weights: &[u64], original: &HashMap<u32, u64>) -> u64 {
    let released: Vec<Vec<u32>> = col.rows.iter().map(|r| r.iter().flatten().copied().collect()).collect();
    let covered = weighted_code_records(released.iter().map(|v| v.as_slice()).zip(weights.iter().copied()));
    original.iter().map(|(x, &o)| o.saturating_sub(covered.get(x).copied().unwrap_or(0))).sum()
}

/// UL(D) = Σ_{r ∈ D} UL(r) / |D| with UL(r) = record_ul(r) + s(r) (Def. 6), the s(r) summed by
/// [`suppressed_codes`]. Returns (UL(D), Σ UL(r)).
pub fn ul(col: &SetColumn, weights: &[u64], original: &HashMap<u32, u64>) -> (f64, f64) {
    let generalized: f64 = (0..col.rows.len()).map(|r| record_ul(&col.sizes(r)) * weights[r] as f64).sum();
    let sum = generalized + suppressed_codes(col, weights, original) as f64;
    let n: u64 = weights.iter().sum();
    (if n == 0 { 0.0 } else { sum / n as f64 }, sum)
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
