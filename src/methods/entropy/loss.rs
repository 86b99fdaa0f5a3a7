//! Measures of the Q-blocks: the paper's total information loss (Fig. 4), the blocks' sensitive
//! diversity (Fig. 5), and the table-level conditional entropy and mutual information with Y the
//! record's Q-block. The diversity and I(Q;Z) are the release's own (its `class_id` and
//! sensitive values), so the report holds them; the losses are entropies of the blocks'
//! original values, which the release does not show (ages 20, 21, 24 and 20, 20, 24 both publish
//! `20-24`), so only the opt-in diagnostics do. `anon_metrics` measures the same on the
//! published table through its own code path; the tests hold the two equal.

use super::block::Block;
use super::state::State;
use crate::formulas::entropy::entropy_bits;
use std::collections::BTreeMap;

/// Measures of a set of Q-blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measures {
    /// The paper's total information loss (Fig. 4): Eq. 6 over the whole table, Σ_a H(X_a|Q)
    /// = Σ_Q (|Q|/N) Σ_a H_Q(X_a), H_Q the entropy of block Q's original values. Each block's
    /// loss weighs by its probability |Q|/N because Eq. 6 sums joint probabilities p_ij; the
    /// paper explains CE's falling loss by "a reduction in the average value of p_ij".
    pub total_information_loss: f64,
    /// Σ_Q Σ_a H_Q(X_a), the blocks' losses unweighted (grows with the number of blocks).
    pub(crate) block_entropy_sum: f64,
    /// I(Q; Z) = H(Z) − Σ_Q (|Q|/N) H_Q(Z).
    pub(crate) mutual_information: f64,
    /// Blocks with 1, 2 and 3 or more distinct sensitive values (l = 1, 2, 3 of Fig. 5).
    pub diversity: [u64; 3],
}

pub(crate) fn measure(state: &State, blocks: &[Block]) -> Measures {
    let n: u64 = blocks.iter().map(Block::size).sum();
    let mut out = Measures::default();
    let mut z_all: BTreeMap<u32, u64> = BTreeMap::new();
    let mut hz_given_q = 0.0;
    for b in blocks {
        let size = b.size();
        let mut z: BTreeMap<u32, u64> = BTreeMap::new();
        let mut loss = 0.0;
        for a in 0..state.attributes() {
            let mut x: BTreeMap<u32, u64> = BTreeMap::new();
            for &(row, c) in &b.members {
                *x.entry(state.leaves(row as usize)[a]).or_default() += c;
            }
            loss += entropy_bits(x.values().copied(), size);
        }
        for &(row, c) in &b.members {
            *z.entry(state.z[row as usize]).or_default() += c;
            *z_all.entry(state.z[row as usize]).or_default() += c;
        }
        out.block_entropy_sum += loss;
        out.total_information_loss += size as f64 / n as f64 * loss;
        hz_given_q += size as f64 / n as f64 * entropy_bits(z.values().copied(), size);
        out.diversity[(z.len() - 1).min(2)] += 1;
    }
    out.mutual_information = entropy_bits(z_all.values().copied(), n) - hz_given_q;
    out
}
