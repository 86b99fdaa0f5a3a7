//! Exact uniform subsampling of records from a histogram.
//!
//! IPA realizes a negative noisy class size by withholding records of the class (see
//! `methods/ipa/perturb.rs`): which records go must be a uniformly random subset, drawn with
//! the same exact integer sampler as the noise, so the withheld values follow the
//! multivariate hypergeometric law and carry no trace of the generator's rounding.

use super::uniform_below;
use rand::Rng;

/// Remove `k` records chosen uniformly at random without replacement from the histogram
/// `counts` (records per value); returns how many of each value were removed. Removes every
/// record when `k` is at least their number.
pub(crate) fn withhold<R: Rng + ?Sized>(rng: &mut R, counts: &[u32], k: u64) -> Vec<u32> {
    let mut left: Vec<u64> = counts.iter().map(|&c| u64::from(c)).collect();
    let mut total: u64 = left.iter().sum();
    let mut removed = vec![0u32; counts.len()];
    for _ in 0..k.min(total) {
        // The i-th remaining record, records laid out value by value.
        let mut i = uniform_below(rng, u128::from(total)) as u64;
        let v = left
            .iter()
            .position(|&n| {
                if i < n {
                    return true;
                }
                i -= n;
                false
            })
            .expect("i < total");
        left[v] -= 1;
        removed[v] += 1;
        total -= 1;
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn removes_k_records_within_the_histogram() {
        let mut rng = StdRng::seed_from_u64(1);
        let counts = [3, 0, 5, 1];
        for k in 0..=10 {
            let r = withhold(&mut rng, &counts, k);
            assert_eq!(r.iter().map(|&x| x as u64).sum::<u64>(), k.min(9));
            assert!(r.iter().zip(&counts).all(|(a, b)| a <= b));
        }
    }

    #[test]
    fn one_record_is_removed_in_proportion_to_its_value() {
        let mut rng = StdRng::seed_from_u64(2);
        let counts = [1, 3];
        let draws = 40_000;
        let second: u32 = (0..draws).map(|_| withhold(&mut rng, &counts, 1)[1]).sum();
        let p = 0.75;
        let sigma = (draws as f64 * p * (1.0 - p)).sqrt();
        assert!((second as f64 - p * draws as f64).abs() < 5.0 * sigma, "{second}");
    }
}
