//! GenDiag as first written (per-item bitsets, Q counted in a hash map, Q recomputed as a
//! guard, Step 6 over every item): the test-only reference the optimized [`super::gendiag`]
//! must agree with.

use super::gendiag::Diag;
use crate::encode::hash::{FastMap, fast_map};
use crate::formulas::ul::record_ul;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

/// A random cluster of the property tests: records holding codes of `0..vocab`, and the code
/// sets (code c in set c mod `sets`; with `none`, one drawn code in none).
#[derive(Debug, Clone)]
pub(crate) struct RandomCluster {
    pub(crate) set_of: Vec<Option<u32>>,
    recs: Vec<Vec<u32>>,
}

impl RandomCluster {
    /// `records` records of up to `codes` codes each, from `vocab` codes in `sets` code sets.
    pub(crate) fn strategy(
        vocab: u32,
        codes: usize,
        records: std::ops::Range<usize>,
        sets: std::ops::Range<u32>,
        none: bool,
    ) -> impl proptest::strategy::Strategy<Value = RandomCluster> {
        use proptest::prelude::*;
        let recs = prop::collection::vec(prop::collection::btree_set(0..vocab, 0..codes), records);
        (recs, sets, 0..vocab).prop_map(move |(recs, sets, code)| RandomCluster {
            set_of: (0..vocab).map(|c| (!none || c != code).then_some(c % sets)).collect(),
            recs: recs.into_iter().map(|s| s.into_iter().collect()).collect(),
        })
    }

    pub(crate) fn refs(&self) -> Vec<&[u32]> {
        self.recs.iter().map(Vec::as_slice).collect()
    }
}

/// Run GenDiag on the cluster whose records hold `records` (sorted leaf codes). `set_of_code`
/// maps a leaf to its constraint code set; `k` ≥ 1, `m` ≥ 1.
pub(crate) fn gendiag_v1(records: &[&[u32]], set_of_code: &[Option<u32>], k: usize, m: usize) -> Diag {
    let mut s = State::new(records, set_of_code);
    for _ in 0..records.len().max(1) * 4 {
        let q = s.violating(k, m);
        if q.is_empty() {
            break;
        }
        for (p, _) in q {
            s.process(p, k);
        }
    }
    s.finish()
}

/// GenDiag with Q found by a support query per distinct set: the reference the counting
/// [`State::violating`] must agree with.
pub(crate) fn gendiag_reference(records: &[&[u32]], set_of_code: &[Option<u32>], k: usize, m: usize) -> Diag {
    let mut s = State::new(records, set_of_code);
    for _ in 0..records.len().max(1) * 4 {
        let q = s.violating_scan(k, m);
        if q.is_empty() {
            break;
        }
        for (p, _) in q {
            s.process(p, k);
        }
    }
    s.finish()
}

/// Step 6's order on candidate pairs: |ũ| (so UL(ũ) = 2^|ũ| − 1), then the larger support of p
/// after the merge, then the lowest codes of u and u′.
type PairKey = (usize, Reverse<usize>, u32, u32);

struct State<'a> {
    set_of_code: &'a [Option<u32>],
    /// Local code id → leaf code, ascending.
    codes: Vec<u32>,
    /// Per record, its local code ids.
    rec_codes: Vec<Vec<usize>>,
    code_bits: Vec<Vec<u64>>,
    /// Local code → its item; items start as one per code.
    item_of: Vec<Option<usize>>,
    /// Item → local codes (empty once merged away or suppressed).
    items: Vec<Vec<usize>>,
    item_bits: Vec<Vec<u64>>,
    /// Item → the item it was merged into (None while alive or once suppressed).
    forward: Vec<Option<usize>>,
    alive: Vec<bool>,
    suppressed: Vec<u32>,
}

impl<'a> State<'a> {
    fn new(records: &[&[u32]], set_of_code: &'a [Option<u32>]) -> Self {
        let mut codes: Vec<u32> = records.iter().flat_map(|r| r.iter().copied()).collect();
        codes.sort_unstable();
        codes.dedup();
        let local: HashMap<u32, usize> = codes.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        let words = records.len().div_ceil(64).max(1);
        let mut code_bits = vec![vec![0u64; words]; codes.len()];
        let rec_codes: Vec<Vec<usize>> = records
            .iter()
            .enumerate()
            .map(|(r, cs)| {
                let mut v: Vec<usize> = cs.iter().map(|c| local[c]).collect();
                v.sort_unstable();
                v.dedup();
                for &c in &v {
                    code_bits[c][r / 64] |= 1 << (r % 64);
                }
                v
            })
            .collect();
        let n = codes.len();
        State {
            set_of_code,
            codes,
            rec_codes,
            item_bits: code_bits.clone(),
            code_bits,
            item_of: (0..n).map(Some).collect(),
            items: (0..n).map(|i| vec![i]).collect(),
            forward: vec![None; n],
            alive: vec![true; n],
            suppressed: vec![0; records.len()],
        }
    }

    fn record_items(&self, r: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self.rec_codes[r].iter().filter_map(|&c| self.item_of[c]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn support_bits(&self, bits: &[&Vec<u64>]) -> usize {
        let words = self.suppressed.len().div_ceil(64).max(1);
        if bits.is_empty() {
            return self.suppressed.len();
        }
        (0..words).map(|w| bits.iter().fold(u64::MAX, |acc, b| acc & b[w]).count_ones() as usize).sum()
    }

    fn support(&self, p: &[usize]) -> usize {
        let bits: Vec<&Vec<u64>> = p.iter().map(|&i| &self.item_bits[i]).collect();
        self.support_bits(&bits)
    }

    /// The lowest leaf code of an item: a stable, data-independent order for ties.
    fn first_code(&self, item: usize) -> u32 {
        self.items[item].iter().map(|&c| self.codes[c]).min().unwrap_or(u32::MAX)
    }

    /// Q (Step 2): item sets of size ≤ m held by some record and by fewer than k records,
    /// most frequent first, then smaller, then by their codes.
    ///
    /// A set's support is the number of records whose item subsets include it, so one pass
    /// counting every record's subsets (packed into a u64 for m ≤ 3) gives every support,
    /// instead of a bitset intersection per distinct set.
    fn violating(&self, k: usize, m: usize) -> Vec<(Vec<usize>, usize)> {
        if m > PACKED_MAX || self.items.len() >= PACKED_ITEMS {
            return self.violating_scan(k, m);
        }
        let mut counts: FastMap<u64, u32> = fast_map(1024);
        for r in 0..self.rec_codes.len() {
            let items = self.record_items(r);
            subsets(&items, m, 0, &mut Vec::new(), &mut |p| *counts.entry(pack(p)).or_insert(0) += 1);
        }
        let first: Vec<u32> = (0..self.items.len()).map(|i| self.first_code(i)).collect();
        // Sort keys computed once per set: Q is large on sparse data.
        let mut keyed: Vec<(QKey, u64)> = counts
            .into_iter()
            .filter(|&(_, s)| (s as usize) < k)
            .map(|(p, s)| {
                let mut codes = [0u32; PACKED_MAX];
                let mut len = 0;
                for (j, c) in codes.iter_mut().enumerate() {
                    let i = (p >> (21 * j)) & PACKED_ITEMS as u64;
                    if i != 0 {
                        *c = first[i as usize - 1];
                        len += 1;
                    }
                }
                ((Reverse(s), len, codes), p)
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|((s, _, _), p)| (unpack(p), s.0 as usize)).collect()
    }

    /// [`State::violating`] by a support query per distinct set (any m).
    fn violating_scan(&self, k: usize, m: usize) -> Vec<(Vec<usize>, usize)> {
        let mut seen: HashSet<Vec<usize>> = HashSet::new();
        let mut out = Vec::new();
        for r in 0..self.rec_codes.len() {
            let items = self.record_items(r);
            subsets(&items, m, 0, &mut Vec::new(), &mut |p| {
                if seen.insert(p.to_vec()) {
                    let s = self.support(p);
                    if s < k {
                        out.push((p.to_vec(), s));
                    }
                }
            });
        }
        out.sort_by_cached_key(|(p, s)| {
            (Reverse(*s), p.len(), p.iter().map(|&i| self.first_code(i)).collect::<Vec<u32>>())
        });
        out
    }

    /// Follow merges: the alive item that `item` became, or None if it was suppressed.
    fn resolve(&self, mut item: usize) -> Option<usize> {
        while !self.alive[item] {
            item = self.forward[item]?;
        }
        Some(item)
    }

    fn resolve_set(&self, p: &[usize]) -> Vec<usize> {
        let mut v: Vec<usize> = p.iter().filter_map(|&i| self.resolve(i)).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Steps 4–14 for one element p of Q.
    fn process(&mut self, p: Vec<usize>, k: usize) {
        let mut p = self.resolve_set(&p);
        while !p.is_empty() && self.support(&p) < k {
            match self.best_pair(&p) {
                Some((u, v)) => {
                    self.merge(u, v);
                    p = self.resolve_set(&p);
                }
                None => {
                    while self.support(&p) < k {
                        let Some(&e) = p.iter().min_by_key(|&&i| (self.support(&[i]), self.first_code(i))) else {
                            break;
                        };
                        self.suppress(e);
                        p.retain(|&i| i != e);
                    }
                }
            }
        }
    }

    /// Step 6: u ∈ p and u′ of the same constraint code set with minimum UL(ũ).
    fn best_pair(&self, p: &[usize]) -> Option<(usize, usize)> {
        let mut best: Option<(PairKey, (usize, usize))> = None;
        for &u in p {
            let Some(set) = self.set_of(u) else { continue };
            for v in (0..self.items.len()).filter(|&v| v != u && self.alive[v] && self.set_of(v) == Some(set)) {
                let merged: Vec<u64> = self.item_bits[u].iter().zip(&self.item_bits[v]).map(|(a, b)| a | b).collect();
                let mut bits: Vec<&Vec<u64>> =
                    p.iter().filter(|&&i| i != u && i != v).map(|&i| &self.item_bits[i]).collect();
                bits.push(&merged);
                let size = self.items[u].len() + self.items[v].len();
                let key = (size, Reverse(self.support_bits(&bits)), self.first_code(u), self.first_code(v));
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, (u, v)));
                }
            }
        }
        best.map(|b| b.1)
    }

    fn set_of(&self, item: usize) -> Option<u32> {
        let c = *self.items[item].first()?;
        self.set_of_code.get(self.codes[c] as usize).copied().flatten()
    }

    /// Step 8: replace u and u′ by ũ everywhere (ũ keeps u's index).
    fn merge(&mut self, u: usize, v: usize) {
        let moved = std::mem::take(&mut self.items[v]);
        for &c in &moved {
            self.item_of[c] = Some(u);
        }
        self.items[u].extend(moved);
        self.items[u].sort_unstable();
        let vb = std::mem::take(&mut self.item_bits[v]);
        for (a, b) in self.item_bits[u].iter_mut().zip(&vb) {
            *a |= b;
        }
        self.alive[v] = false;
        self.forward[v] = Some(u);
    }

    /// Steps 11–12: suppress e from every record of the cluster, counting the codes each loses.
    fn suppress(&mut self, e: usize) {
        for &c in &self.items[e] {
            self.item_of[c] = None;
            for (r, s) in self.suppressed.iter_mut().enumerate() {
                if self.code_bits[c][r / 64] >> (r % 64) & 1 == 1 {
                    *s += 1;
                }
            }
        }
        self.alive[e] = false;
        self.forward[e] = None;
    }

    fn finish(self) -> Diag {
        let mut index: HashMap<usize, u32> = HashMap::new();
        let mut order: Vec<usize> = (0..self.items.len()).filter(|&i| self.alive[i]).collect();
        order.sort_by_key(|&i| self.first_code(i));
        let items: Vec<Vec<u32>> = order
            .iter()
            .enumerate()
            .map(|(n, &i)| {
                index.insert(i, n as u32);
                self.items[i].iter().map(|&c| self.codes[c]).collect()
            })
            .collect();
        let records: Vec<Vec<u32>> = (0..self.rec_codes.len())
            .map(|r| {
                let mut v: Vec<u32> = self.record_items(r).iter().map(|i| index[i]).collect();
                v.sort_unstable();
                v
            })
            .collect();
        let ul = records
            .iter()
            .zip(&self.suppressed)
            .map(|(rec, &s)| {
                let sizes: Vec<u32> = rec.iter().map(|&i| items[i as usize].len() as u32).collect();
                record_ul(&sizes) + s as f64
            })
            .sum();
        Diag { items, records, suppressed: self.suppressed, ul }
    }
}

/// Q's order: support descending, size, the items' lowest codes.
type QKey = (Reverse<u32>, usize, [u32; PACKED_MAX]);

/// Sets of up to this many items are packed into a u64 key, 21 bits an item.
const PACKED_MAX: usize = 3;
const PACKED_ITEMS: usize = (1 << 21) - 1;

/// An ascending item set as a u64: item + 1 in 21-bit fields, lowest first.
fn pack(p: &[usize]) -> u64 {
    p.iter().enumerate().fold(0, |key, (j, &i)| key | ((i as u64 + 1) << (21 * j)))
}

fn unpack(mut key: u64) -> Vec<usize> {
    let mut p = Vec::with_capacity(PACKED_MAX);
    while key != 0 {
        p.push((key & PACKED_ITEMS as u64) as usize - 1);
        key >>= 21;
    }
    p
}

/// Visit every non-empty subset of `items` of size at most `m`.
fn subsets(items: &[usize], m: usize, start: usize, current: &mut Vec<usize>, visit: &mut impl FnMut(&[usize])) {
    for i in start..items.len() {
        current.push(items[i]);
        visit(current);
        if current.len() < m {
            subsets(items, m, i + 1, current, visit);
        }
        current.pop();
    }
}
