//! Shannon entropy of a histogram: the entropy paper's information loss (bits, Eq. 6) and
//! entropy l-diversity (nats, compared with ln l).

/// −Σ (c/n) log₂(c/n) over the non-zero counts of a histogram of n records; 0 when empty.
pub(crate) fn entropy_bits(counts: impl IntoIterator<Item = u64>, n: u64) -> f64 {
    counts.into_iter().filter(|&c| c > 0).map(|c| c as f64 / n as f64).map(|p| -p * p.log2()).sum()
}

/// −Σ (c/n) ln(c/n) over the non-zero counts of a histogram of n records; 0 when empty.
pub(crate) fn entropy_nats(counts: impl IntoIterator<Item = u64>, n: u64) -> f64 {
    counts.into_iter().filter(|&c| c > 0).map(|c| c as f64 / n as f64).map(|p| -p * p.ln()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_histogram_has_the_log_of_its_size() {
        assert!((entropy_bits([2, 2, 2, 2], 8) - 2.0).abs() < 1e-12);
        assert!((entropy_nats([1, 1, 1], 3) - 3f64.ln()).abs() < 1e-12);
        assert_eq!(entropy_bits([5, 0], 5), 0.0);
        assert_eq!(entropy_bits([], 0), 0.0);
    }
}
