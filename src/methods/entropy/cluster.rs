//! Algorithm 2: Q-blocks by clustering. A random record is the seed; the k−1 remaining
//! records closest to it under d (Algorithm 1) join it; the block is generalized to the
//! closest common ancestors of its values; repeat while k records remain. The fewer than k
//! left then join, one at a time, the block whose d rises least.
//!
//! What makes it fast, and why the result is the same as the plain algorithm
//! ([`super::reference`] is the plain algorithm, and the property tests compare the two):
//! - Records with the same quasi-identifiers and sensitive value are one frequency-table row
//!   with a count. They have the same distance to any seed, so a row is scored once; ties are
//!   broken by row order, which is the plain algorithm's record order.
//! - The table's counts are updated when a block forms, never recounted; every count is an
//!   integer, so the updated counts are the recounted ones exactly.
//! - A candidate whose lower bound ([`State::pair_bound`]) already exceeds the k−1-th best
//!   key so far is skipped: its key is larger, so it cannot be chosen.

use super::block::Block;
use super::block::Label;
use super::guard::Guard;
use super::pair::SeedView;
use super::state::State;
use crate::encode::FrequencyTable;
use crate::error::Result;
use crate::progress::Progress;
use rand::RngExt;
use rand::rngs::StdRng;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

/// Work done, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub(crate) seeds: u64,
    /// Candidate rows whose key was computed in full.
    pub(crate) scored: u64,
    /// Candidate rows skipped on their lower bound.
    pub(crate) pruned: u64,
    pub(crate) leftovers: u64,
}

/// A candidate in the selection heap, ordered by (key, row).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cand {
    pub(crate) key: f64,
    pub(crate) row: u32,
    pub(crate) count: u64,
}
crate::sorted::eq_and_partial_ord_from_ord!(Cand);
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.total_cmp(&o.key).then(self.row.cmp(&o.row))
    }
}

/// Remaining records per row, with prefix sums for drawing the r-th one (a Fenwick tree).
#[derive(Debug, Clone)]
pub(crate) struct Remaining {
    count: Vec<u64>,
    tree: Vec<u64>,
    total: u64,
}

impl Remaining {
    pub(crate) fn new(counts: &[u64]) -> Self {
        let mut r = Remaining { count: vec![0; counts.len()], tree: vec![0; counts.len() + 1], total: 0 };
        for (row, &c) in counts.iter().enumerate() {
            r.add(row, c as i64);
        }
        r
    }
    pub(crate) fn of(&self, row: usize) -> u64 {
        self.count[row]
    }
    pub(crate) fn add(&mut self, row: usize, d: i64) {
        self.count[row] = self.count[row].wrapping_add_signed(d);
        self.total = self.total.wrapping_add_signed(d);
        let mut i = row + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(d);
            i += i & i.wrapping_neg();
        }
    }
    /// The row holding the r-th remaining record (0-based, in row order).
    pub(crate) fn nth(&self, mut r: u64) -> usize {
        let (mut pos, mut step) = (0usize, self.tree.len().next_power_of_two());
        while step > 0 {
            if pos + step < self.tree.len() && self.tree[pos + step] <= r {
                pos += step;
                r -= self.tree[pos];
            }
            step /= 2;
        }
        pos
    }
}

/// The clustering in progress.
pub struct Clusterer {
    pub state: State,
    pub(crate) k: u64,
    pub(crate) left: Remaining,
    /// Rows with remaining records, ascending.
    pub(crate) active: Vec<u32>,
    pub blocks: Vec<Block>,
    pub(crate) stats: Stats,
    pub(crate) sv: SeedView,
}

impl Clusterer {
    pub fn new(ft: &FrequencyTable, k: u64, with_mi: bool) -> Result<Self> {
        let state = State::new(ft, with_mi)?;
        let left = Remaining::new(&state.counts);
        let active = (0..state.rows() as u32).collect();
        Ok(Clusterer { state, k, left, active, blocks: Vec::new(), stats: Stats::default(), sv: SeedView::default() })
    }

    pub fn remaining(&self) -> u64 {
        self.left.total
    }

    /// Records of `row` not yet in a block.
    pub fn left_of(&self, row: usize) -> u64 {
        self.left.of(row)
    }

    /// Run Algorithm 2 to the end, seeds drawn from `rng`; fails only when cancelled.
    pub fn run(&mut self, rng: &mut StdRng, progress: &dyn Progress) -> Result<()> {
        self.run_guarded(rng, progress, None)
    }

    /// Algorithm 2 with every block held to `guard` too ([`super::guarded`]), or without one.
    pub(crate) fn run_guarded(
        &mut self,
        rng: &mut StdRng,
        progress: &dyn Progress,
        guard: Option<&Guard>,
    ) -> Result<()> {
        progress.begin("entropy Q-blocks", self.left.total);
        while self.left.total >= self.k {
            let before = self.left.total;
            let seed = self.left.nth(rng.random_range(0..self.left.total));
            match guard {
                None => self.form_block(seed),
                Some(g) if !self.form_guarded_block(seed, g) => break,
                Some(_) => {}
            }
            progress.tick(before - self.left.total)?;
        }
        self.stats.leftovers = self.left.total;
        match guard {
            None => attach_leftovers(&mut self.state, &mut self.blocks, &mut self.left),
            Some(g) => self.absorb_leftovers(g),
        }
        progress.finish();
        Ok(())
    }

    /// Form one Q-block around a record of `seed` (which must have one left).
    pub fn form_block(&mut self, seed: usize) {
        self.stats.seeds += 1;
        self.left.add(seed, -1);
        let mut members = self.nearest(seed);
        for &(row, c) in &members {
            self.left.add(row as usize, -(c as i64));
        }
        match members.iter_mut().find(|m| m.0 as usize == seed) {
            Some(m) => m.1 += 1,
            None => members.push((seed as u32, 1)),
        }
        members.sort_unstable();
        let block = commit_block(&mut self.state, members);
        self.blocks.push(block);
        let left = &self.left;
        self.active.retain(|&r| left.of(r as usize) > 0);
    }

    /// The k−1 remaining records closest to the seed, as (row, records).
    fn nearest(&mut self, seed: usize) -> Vec<(u32, u64)> {
        let need = self.k - 1;
        let state = &self.state;
        state.seed_view(seed, &mut self.sv);
        let sv = &self.sv;
        let mut heap: BinaryHeap<Cand> = BinaryHeap::new();
        let mut held = 0u64;
        let mut threshold = f64::INFINITY;
        let seed_tid = state.tid[seed];
        let (same_lo, same_hi) = state.tid_rows[seed_tid as usize];
        let same = (same_lo..same_hi).filter(|&r| self.left.of(r as usize) > 0);
        let others = self.active.iter().copied().filter(|&r| r < same_lo || r >= same_hi);
        // Rows with the seed's own quasi-identifiers (key 0) first: they set a low threshold.
        for row in same.chain(others) {
            let r = row as usize;
            let key = if state.tid[r] == seed_tid {
                0.0
            } else {
                let (h, e_max) = state.pair_h(sv, r);
                let bound = state.pair_bound(h, e_max);
                if bound - 1e-9 * (1.0 + bound.abs()) > threshold {
                    self.stats.pruned += 1;
                    continue;
                }
                self.stats.scored += 1;
                if state.with_mi { h + state.pair_i(sv, r, e_max) } else { h }
            };
            let count = self.left.of(r);
            heap.push(Cand { key, row, count });
            held += count;
            while held - heap.peek().map_or(0, |c| c.count) >= need {
                held -= heap.pop().map_or(0, |c| c.count);
            }
            if held >= need {
                threshold = heap.peek().map_or(f64::INFINITY, |c| c.key);
            }
        }
        take_closest(heap.into_vec(), need)
    }
}

/// The first `need` records of the candidates in (key, row) order.
fn take_closest(mut cands: Vec<Cand>, need: u64) -> Vec<(u32, u64)> {
    cands.sort_unstable();
    let mut out = Vec::new();
    let mut left = need;
    for c in cands {
        if left == 0 {
            break;
        }
        let t = c.count.min(left);
        out.push((c.row, t));
        left -= t;
    }
    out
}

/// Generalize a new block's records (all at their leaves) to their closest common ancestors.
pub(crate) fn commit_block(state: &mut State, members: Vec<(u32, u64)>) -> Block {
    let first = state.leaf_label(members[0].0 as usize);
    let label: Vec<Label> = (0..state.attributes())
        .map(|a| members.iter().fold(first[a], |y, &(row, _)| state.attrs[a].widen(y, state.leaves(row as usize)[a])))
        .collect();
    for &(row, c) in &members {
        let leaf = state.leaf_label(row as usize);
        state.relabel(row as usize, c, &leaf, &label);
    }
    Block { label, members }
}

/// The records left when fewer than k remain join, one by one in row order, the block whose
/// generalization raises N·d least (ties: the earliest block).
pub(crate) fn attach_leftovers(state: &mut State, blocks: &mut [Block], left: &mut Remaining) {
    if blocks.is_empty() {
        return;
    }
    while left.total > 0 {
        let row = left.nth(0);
        let best = (0..blocks.len())
            .map(|b| (join_key(state, &blocks[b], row), b))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, b)| b)
            .unwrap_or(0);
        join_record(state, &mut blocks[best], row);
        left.add(row, -1);
    }
}

/// One record of `row` (at its leaves) joins `block`, which widens to cover it.
pub(crate) fn join_record(state: &mut State, block: &mut Block, row: usize) {
    let to: Vec<Label> =
        (0..state.attributes()).map(|a| state.attrs[a].widen(block.label[a], state.leaves(row)[a])).collect();
    for &(r, c) in &block.members {
        state.relabel(r as usize, c, &block.label, &to);
    }
    let leaf = state.leaf_label(row);
    state.relabel(row, 1, &leaf, &to);
    block.label = to;
    match block.members.binary_search_by_key(&(row as u32), |m| m.0) {
        Ok(i) => block.members[i].1 += 1,
        Err(i) => block.members.insert(i, (row as u32, 1)),
    }
}

/// The change of N·d when one record of `row` joins `block` (the block widens to cover it).
fn join_key(state: &State, block: &Block, row: usize) -> f64 {
    let f = &state.f;
    let xs = state.leaves(row);
    let mut h = 0.0;
    let mut to = Vec::with_capacity(xs.len());
    for (a, attr) in state.attrs.iter().enumerate() {
        let (from, x) = (block.label[a], xs[a]);
        let y = attr.widen(from, x);
        to.push(y);
        if y == from {
            if y.0 > 0 {
                h += f.step(attr.label_count(x, y), 1) - f.step(attr.joint(x, y.0), 1);
            }
            continue;
        }
        // Every member moves from `from` to `y`, and the record joins them.
        let mut moved: BTreeMap<u32, u64> = BTreeMap::new();
        for &(r, c) in &block.members {
            *moved.entry(state.leaves(r as usize)[a]).or_default() += c;
        }
        let n_b: u64 = moved.values().sum();
        *moved.entry(x).or_default() += 1;
        let mut term = f.step(attr.label_count(x, y), n_b as i64 + 1);
        if from.0 > 0 {
            term += f.step(attr.label_count(x, from), -(n_b as i64));
        }
        for (&v, &c) in &moved {
            term -= f.step(attr.joint(v, y.0), c as i64);
            let was = if v == x { c - 1 } else { c };
            if from.0 > 0 && was > 0 {
                term -= f.step(attr.joint(v, from.0), -(was as i64));
            }
        }
        h += term;
    }
    if !state.with_mi {
        return h;
    }
    let leaf = state.leaf_label(row);
    if to == block.label && leaf == block.label {
        return h; // the record already shares the block's leaves: nothing moves
    }
    let z = state.z[row];
    let w_record = tuple_delta(state, &leaf, &[(z, -1)]);
    let w = if to == block.label {
        tuple_delta(state, &block.label, &[(z, 1)])
    } else {
        let mut by_z: BTreeMap<u32, i64> = BTreeMap::new();
        for &(r, c) in &block.members {
            *by_z.entry(state.z[r as usize]).or_default() += c as i64;
        }
        let out: Vec<(u32, i64)> = by_z.iter().map(|(&z, &c)| (z, -c)).collect();
        *by_z.entry(z).or_default() += 1;
        let into: Vec<(u32, i64)> = by_z.into_iter().collect();
        tuple_delta(state, &block.label, &out) + tuple_delta(state, &to, &into)
    };
    h - (w_record + w)
}

fn tuple_delta(state: &State, labels: &[Label], changes: &[(u32, i64)]) -> f64 {
    let (total, count) = state.tuple(labels);
    super::state::delta_w(&state.f, total, count, changes)
}
