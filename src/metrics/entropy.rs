//! Conditional-entropy information loss and Q-block diversity (Entropy / mutual-information
//! paper: "An Approach to Reducing Information Loss and Achieving Diversity of Sensitive
//! Attributes in k-anonymity Methods").

use super::align::Alignment;
use super::decode::Decoded;
use crate::formulas::entropy::entropy_bits;
use std::collections::HashSet;

/// Entropy (bits) of a block's original values of one attribute: −Σ_x (n_x/|Q|) log₂(n_x/|Q|).
/// The counts are taken in sorted order, so the same release gives the same bits whatever the
/// map's iteration order.
fn block_entropy(counts: &std::collections::HashMap<u32, u64>, size: u64) -> f64 {
    if size == 0 {
        return 0.0;
    }
    let mut n: Vec<u64> = counts.values().copied().collect();
    n.sort_unstable();
    entropy_bits(n, size)
}

/// A sum of per-block terms in sorted order: the blocks' order follows the release's row order,
/// which is random, and a floating-point sum must not depend on it.
fn canonical_sum(mut terms: Vec<f64>) -> f64 {
    terms.sort_by(f64::total_cmp);
    terms.into_iter().sum()
}

/// The blocks' losses unweighted: within a Q-block every record has the same generalized value
/// Y, so H(X|Y) of attribute X over the block alone is the entropy of the block's original X
/// values; summed over the quasi-identifiers and the Q-blocks. Suppressed records count as one
/// more block. It grows with the number of blocks; the paper's total loss is
/// [`conditional_entropy`].
pub(crate) fn entropy_loss(al: &Alignment) -> f64 {
    canonical_sum(
        al.counts
            .iter()
            .zip(&al.block_sizes)
            .map(|(attrs, &n)| attrs.iter().map(|c| block_entropy(c, n)).sum())
            .collect(),
    )
}

/// The paper's total information loss (Fig. 4): Eq. 6, H(X|Y) = −Σ_ij p_ij log₂(p_ij / p_j) with
/// joint probabilities over all records and Y the record's Q-block, summed over the
/// quasi-identifiers: Σ_a Σ_Q (|Q|/N) H_Q(X_a). "Summing up the loss of all Q-blocks" sums
/// these probability-weighted parts; the paper explains CE's falling loss by "a reduction in
/// the average value of p_ij", which only a weighted sum shows.
pub(crate) fn conditional_entropy(al: &Alignment) -> f64 {
    let total: u64 = al.block_sizes.iter().sum();
    if total == 0 {
        return 0.0;
    }
    canonical_sum(
        al.counts
            .iter()
            .zip(&al.block_sizes)
            .map(|(attrs, &n)| n as f64 / total as f64 * attrs.iter().map(|c| block_entropy(c, n)).sum::<f64>())
            .collect(),
    )
}

/// Number of Q-blocks (equivalence classes; suppressed records form none) with exactly 1, exactly
/// 2, and 3 or more distinct sensitive values: the paper's Fig. 5 counts for l = 1 (homogeneity
/// attack), l = 2 (background-knowledge attack) and l = 3 (safe).
pub(crate) fn qblock_diversity(rel: &Decoded) -> [u64; 3] {
    let Some(s) = &rel.sensitive else { return [0; 3] };
    let mut out = [0u64; 3];
    for rows in rel.class_members() {
        let distinct: HashSet<u32> = rows.iter().map(|&r| s.codes[r]).collect();
        match distinct.len() {
            0 => {}
            1 => out[0] += 1,
            2 => out[1] += 1,
            _ => out[2] += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The same blocks in another order (a release's rows are shuffled) give the same bits.
    #[test]
    fn losses_do_not_depend_on_the_blocks_order() {
        let block = |seed: u64| -> Vec<HashMap<u32, u64>> {
            (0..3).map(|a| (0..7).map(|v| (v, 1 + (seed * 31 + a * 7 + u64::from(v) * 13) % 17)).collect()).collect()
        };
        let blocks: Vec<Vec<HashMap<u32, u64>>> = (0..40).map(block).collect();
        let sizes: Vec<u64> = blocks.iter().map(|b| b[0].values().sum()).collect();
        let forward = Alignment { counts: blocks.clone(), block_sizes: sizes.clone(), unmatched: 0 };
        let backward = Alignment {
            counts: blocks.into_iter().rev().collect(),
            block_sizes: sizes.into_iter().rev().collect(),
            unmatched: 0,
        };
        assert_eq!(entropy_loss(&forward).to_bits(), entropy_loss(&backward).to_bits());
        assert_eq!(conditional_entropy(&forward).to_bits(), conditional_entropy(&backward).to_bits());
    }
}
