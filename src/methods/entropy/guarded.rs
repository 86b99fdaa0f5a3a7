//! Q-blocks that must also satisfy entropy l-diversity and/or t-closeness (`entropy_l=`,
//! `t=`): the paper's two baselines as it ran them, Q-block clustering with Q-blocks of size
//! k = 3 ("the Q-block size is 3" for every method of Figs. 4–6), and a guaranteed variant of
//! its own method (`distance=d` with a guard).
//!
//! The paper does not say how its baselines built their blocks. Ours is Algorithm 2 with a
//! privacy guard: a random seed, then records in order of their distance to the seed (the same
//! key as the unguarded clustering: H(X|Y) for `distance=ce`, d for `distance=d`), skipping a
//! record whose sensitive value would not bring the block closer to the guard (under
//! t-closeness: that the block does not hold less of than the whole table); the block closes
//! as soon as it has k records and the guard holds, so it stays at k records whenever the
//! nearest records allow. A block is only taken if the records left after it still satisfy the
//! guard together (the whole table is checked first), so the clustering can stop at any point
//! with a valid remainder: when no block can be completed or taken, the records left join
//! existing blocks one at a time where the guard still holds, and those that stay form the
//! last block ([`Clusterer::absorb_leftovers`]).
//!
//! The models are kanon_anonymize's ([`crate::methods::kanon::models`]): one definition of
//! entropy l-diversity and of t-closeness (equal-distance EMD for a categorical sensitive
//! attribute, ordered distance for a numeric one) in the methods; `verify_release` checks the
//! result with its own code.

use super::block::Block;
use super::cluster::{Cand, Clusterer, commit_block, join_record};
use super::guard::Guard;
use super::state::State;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Records as (row, count) merged by row, ascending.
fn merged(parts: impl IntoIterator<Item = (u32, u64)>) -> Vec<(u32, u64)> {
    let mut m: BTreeMap<u32, u64> = BTreeMap::new();
    for (row, c) in parts {
        *m.entry(row).or_default() += c;
    }
    m.into_iter().collect()
}

/// The records of a pool as leaf counts per attribute, for the loss of its union with a block.
struct PoolLeaves {
    size: u64,
    counts: Vec<BTreeMap<u32, u64>>,
    /// Σ_x f(c_x) per attribute.
    sum_f: Vec<f64>,
}

impl PoolLeaves {
    fn new(state: &State, members: &[(u32, u64)]) -> Self {
        let mut counts = vec![BTreeMap::new(); state.attributes()];
        for &(row, c) in members {
            for (a, &x) in state.leaves(row as usize).iter().enumerate() {
                *counts[a].entry(x).or_insert(0u64) += c;
            }
        }
        let sum_f = counts.iter().map(|m| m.values().map(|&c| state.f.f(c)).sum()).collect();
        PoolLeaves { size: members.iter().map(|m| m.1).sum(), counts, sum_f }
    }

    /// The rise in N × total information loss, |Q| Σ_a H_Q(X_a) in bits summed over blocks,
    /// when the pool joins `block`: with f(c) = c·log₂c, |Q|·H_Q = f(|Q|) − Σ_x f(c_x).
    fn rise(&self, state: &State, block: &Block) -> f64 {
        let f = &state.f;
        let n_b = block.size();
        let mut rise = 0.0;
        for a in 0..state.attributes() {
            let mut in_block: BTreeMap<u32, u64> = BTreeMap::new();
            for &(row, c) in &block.members {
                *in_block.entry(state.leaves(row as usize)[a]).or_default() += c;
            }
            let (mut union, mut alone) = (self.sum_f[a], 0.0);
            for (x, &c) in &in_block {
                let p = self.counts[a].get(x).copied().unwrap_or(0);
                union += f.f(p + c) - f.f(p);
                alone += f.f(c);
            }
            rise += (f.f(self.size + n_b) - union) - (f.f(n_b) - alone);
        }
        rise
    }
}

impl Clusterer {
    /// Form one Q-block around a record of `seed` that satisfies `guard`, taking the records
    /// nearest the seed whose sensitive values the guard wants. Returns false, changing
    /// nothing, when the remaining records cannot complete such a block.
    pub(crate) fn form_guarded_block(&mut self, seed: usize, guard: &Guard) -> bool {
        self.state.seed_view(seed, &mut self.sv);
        let (state, sv) = (&self.state, &self.sv);
        let mut cands = Vec::with_capacity(self.active.len());
        // The records left, seed included: what must still make valid blocks afterwards.
        let (mut pool, mut pool_size) = guard.histogram(state, &[]);
        for &row in &self.active {
            let r = row as usize;
            pool[state.z[r] as usize] += self.left.of(r) as u32;
            pool_size += self.left.of(r);
            let count = self.left.of(r) - u64::from(r == seed);
            if count > 0 {
                cands.push(Reverse(Cand { key: state.pair_key(sv, r), row, count }));
            }
        }
        self.stats.scored += cands.len() as u64;
        // Candidates come off the heap in (key, row) order; those the guard did not want yet
        // wait in `seen`, in the same order, for a later step that may want them.
        let mut heap = BinaryHeap::from(cands);
        let mut seen: Vec<Cand> = Vec::new();
        let (mut hist, mut size) = guard.histogram(state, &[(seed as u32, 1)]);
        let mut taken = vec![(seed as u32, 1u64)];
        while !(size >= self.k && guard.holds(&hist, size)) {
            let wanted = guard.wanted(&mut hist, size);
            let want = |c: &Cand| c.count > 0 && wanted[state.z[c.row as usize] as usize];
            let pick = match seen.iter().position(want) {
                Some(i) => i,
                None => loop {
                    let Some(Reverse(c)) = heap.pop() else { return false };
                    seen.push(c);
                    if want(&c) {
                        break seen.len() - 1;
                    }
                },
            };
            let c = &mut seen[pick];
            c.count -= 1;
            hist[state.z[c.row as usize] as usize] += 1;
            size += 1;
            taken.push((c.row, 1));
        }
        // The records left after this block must still satisfy the guard together (or be none),
        // so that whatever no later block takes can always be a valid block of its own.
        for (p, &h) in pool.iter_mut().zip(&hist) {
            *p -= h;
        }
        if pool_size > size && !guard.holds(&pool, pool_size - size) {
            return false;
        }
        self.stats.seeds += 1;
        let members = merged(taken);
        for &(row, c) in &members {
            self.left.add(row as usize, -(c as i64));
        }
        let block = commit_block(&mut self.state, members);
        self.blocks.push(block);
        let left = &self.left;
        self.active.retain(|&r| left.of(r as usize) > 0);
        true
    }

    /// The records no block took (they satisfy `guard` together: see
    /// [`Clusterer::form_guarded_block`]) join existing blocks one at a time, in row order: each
    /// joins the block that still satisfies the guard with it at the least rise in N × total
    /// information loss (ties: the earliest), as long as the records staying behind still
    /// satisfy it too. Those that stay form the last block.
    pub(crate) fn absorb_leftovers(&mut self, guard: &Guard) {
        self.active.clear();
        let rest: Vec<(u32, u64)> =
            (0..self.state.rows()).filter(|&r| self.left.of(r) > 0).map(|r| (r as u32, self.left.of(r))).collect();
        if rest.is_empty() {
            return;
        }
        // Sensitive histograms of the blocks, so that a union is checked in O(values).
        let mut hists: Vec<(Vec<u32>, u64)> =
            self.blocks.iter().map(|b| guard.histogram(&self.state, &b.members)).collect();
        let (mut pool, mut pool_size) = guard.histogram(&self.state, &rest);
        let mut stay: Vec<(u32, u64)> = Vec::new();
        for &(row, c) in &rest {
            self.left.add(row as usize, -(c as i64));
            let z = self.state.z[row as usize] as usize;
            let leaves = PoolLeaves::new(&self.state, &[(row, 1)]);
            for _ in 0..c {
                pool[z] -= 1;
                pool_size -= 1;
                let best = if pool_size == 0 || guard.holds(&pool, pool_size) {
                    (0..self.blocks.len())
                        .filter(|&i| {
                            let mut h = hists[i].0.clone();
                            h[z] += 1;
                            guard.holds(&h, hists[i].1 + 1)
                        })
                        .map(|i| (leaves.rise(&self.state, &self.blocks[i]), i))
                        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                } else {
                    None
                };
                match best {
                    Some((_, i)) => {
                        join_record(&mut self.state, &mut self.blocks[i], row as usize);
                        hists[i].0[z] += 1;
                        hists[i].1 += 1;
                    }
                    None => {
                        pool[z] += 1;
                        pool_size += 1;
                        stay.push((row, 1));
                    }
                }
            }
        }
        if !stay.is_empty() {
            let block = commit_block(&mut self.state, merged(stay));
            self.blocks.push(block);
        }
    }
}
