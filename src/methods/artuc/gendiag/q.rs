//! Q (Step 2): the item sets of size ≤ m held by some record and by fewer than k records, most
//! frequent first, then smaller, then by their items' lowest codes.
//!
//! Q is built once per GenDiag run, on the fresh state (items are the codes), and holds nearly
//! every code pair (and at m = 3 triple) of a sparse cluster, so for m ≤ 3 it is produced
//! already in order: local ids order like codes, so walking first items ascending and each
//! one's partners ascending fills per-support buckets in (size, codes) order and no sort is
//! needed.

use super::state::State;
use crate::encode::hash::{FastMap, fast_map};
use std::cmp::Reverse;
use std::collections::HashSet;

impl State {
    /// Q with each set's support.
    pub(crate) fn violating(&self, k: usize, m: usize) -> Vec<(Vec<usize>, usize)> {
        match self.violating_packed(k, m) {
            Some(q) => q.into_iter().map(|p| (unpack(p), self.support(&unpack(p)))).collect(),
            None => self.violating_scan(k, m),
        }
    }

    /// Q as packed sets (None when m or the item count is too large to pack).
    pub(crate) fn violating_packed(&self, k: usize, m: usize) -> Option<Vec<u64>> {
        if m > PACKED_MAX || self.items.len() >= PACKED_ITEMS {
            return None;
        }
        if self.fresh {
            return Some(self.violating_fresh(k, m));
        }
        Some(self.violating_sorted(k, m))
    }

    /// Q on the fresh state (m ≤ 3), in order: its head ([`State::violating_head`]) and then
    /// its tail ([`walk_tail`]).
    fn violating_fresh(&self, k: usize, m: usize) -> Vec<u64> {
        let mut out = self.violating_head(k, m);
        walk_tail(&self.rec_codes, &self.code_recs, (k, m), &mut Collect(&mut out));
        out
    }

    /// Q on the fresh state (m ≤ 3) but its tail, the triples of support 1 (Q's last segment:
    /// [`walk_tail`] visits those), in order without a hash map or a sort: buckets by support
    /// (from k − 1 down), in each the singletons, then the pairs, then the triples, each
    /// ascending. Per first item a, a's records are walked once: each later item b is counted
    /// (the support of {a, b}) and marked, and for m = 3 the record is also kept under b. Then
    /// b is read back ascending, and for m = 3 the later items c of b's kept records are
    /// counted and read back the same way. A cluster's triples are most of its Q at m = 3 (a
    /// 100-code record alone holds 161,700), so counting them in a hash map was nearly all of
    /// an m = 3 run; a pair held by one record has only triples of support 1, so its triples
    /// are left to the tail without being counted.
    pub fn violating_head(&self, k: usize, m: usize) -> Vec<u64> {
        let top = k.min(self.suppressed.len() + 1);
        let mut buckets: [Vec<Vec<u64>>; PACKED_MAX] = std::array::from_fn(|_| vec![Vec::new(); top]);
        let n = self.items.len();
        let mut walk = PairWalk::new(n, m);
        let mut triple_count = vec![0u32; n];
        let mut c_marks = Marks::new(n);
        for (a, recs) in self.code_recs.iter().enumerate() {
            if !recs.is_empty() && recs.len() < k {
                buckets[0][recs.len()].push(pack(&[a]));
            }
            if m < 2 {
                continue;
            }
            walk.pairs(&self.rec_codes, a, recs, |b, support, with_b| {
                if support < k {
                    buckets[1][support].push(pack(&[a, b]));
                }
                if m < 3 || support < 2 {
                    return;
                }
                for &r in with_b {
                    for &c in after(&self.rec_codes[r as usize], b) {
                        triple_count[c] += 1;
                        c_marks.mark(c);
                    }
                }
                c_marks.drain(|c| {
                    let support = std::mem::take(&mut triple_count[c]) as usize;
                    if (2..k).contains(&support) {
                        buckets[2][support].push(pack(&[a, b, c]));
                    }
                });
            });
        }
        let mut out = Vec::with_capacity(buckets.iter().flatten().map(Vec::len).sum());
        for s in (0..top).rev() {
            for size in &buckets {
                out.extend_from_slice(&size[s]);
            }
        }
        out
    }

    /// Q on any state (the debug check after the pass): counted, then sorted by key.
    fn violating_sorted(&self, k: usize, m: usize) -> Vec<u64> {
        let mut counts: FastMap<u64, u32> = fast_map(1024);
        for r in 0..self.rec_codes.len() {
            let items = self.record_items(r);
            subsets(&items, m, 0, &mut Vec::new(), &mut |p| *counts.entry(pack(p)).or_insert(0) += 1);
        }
        let first: Vec<u32> = (0..self.items.len()).map(|i| self.first_code(i)).collect();
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
        // Keys are distinct (alive items have distinct lowest codes), so the key alone orders.
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, p)| p).collect()
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
}

/// The items of an ascending record after item `a`.
fn after(items: &[usize], a: usize) -> &[usize] {
    &items[items.partition_point(|&b| b <= a)..]
}

/// What walks Q's tail ([`walk_tail`]) gets to see, in the tail's order.
pub(super) trait TailVisitor {
    /// Whether to walk the triples whose lowest item is `a` (false: none of them needs a look).
    fn first(&mut self, _a: usize) -> bool {
        true
    }
    /// Whether to walk the triples of the pair {a, b} (false: none of them needs a look).
    fn pair(&mut self, _a: usize, _b: usize) -> bool {
        true
    }
    /// One triple of the tail; false stops the walk.
    fn triple(&mut self, t: &[usize]) -> bool;
}

/// Collects the tail as packed sets (Q in full, for [`State::violating`] and the tests).
struct Collect<'a>(&'a mut Vec<u64>);

impl TailVisitor for Collect<'_> {
    fn triple(&mut self, t: &[usize]) -> bool {
        self.0.push(pack(t));
        true
    }
}

/// Q's tail on the fresh state: the triples held by one record (support 1 < k, so in Q when
/// k ≥ 2), in Q's order (ascending), each visited as it is found and never stored. Returns
/// false when the visitor stopped the walk.
///
/// Q's order puts them last (support 1 is the lowest, triples the largest sets), and they are
/// most of an m = 3 Q: a long record's code triples are nearly all its own. GenDiag gives up a
/// run as soon as it suppresses more than a limit, which it mostly learns before the tail, so
/// counting and storing the tail first was most of a given-up run's cost. A pair held by one
/// record r makes every triple with a later code of r a tail triple, read off r directly.
/// The walk reads only the original codes, so the state may change while it runs, and the
/// visitor may pass over a first item or a pair whose triples it knows need nothing.
pub(super) fn walk_tail(
    rec_codes: &[Vec<usize>],
    code_recs: &[Vec<u32>],
    (k, m): (usize, usize),
    v: &mut impl TailVisitor,
) -> bool {
    if m < 3 || k < 2 {
        return true;
    }
    let n = code_recs.len();
    let mut walk = PairWalk::new(n, m);
    let mut triple_count = vec![0u32; n];
    let mut c_marks = Marks::new(n);
    let mut go = true;
    for (a, recs) in code_recs.iter().enumerate() {
        if recs.is_empty() || !v.first(a) {
            continue;
        }
        walk.pairs(rec_codes, a, recs, |b, support, with_b| {
            if !go || !v.pair(a, b) {
                return;
            }
            if support == 1 {
                for &c in after(&rec_codes[with_b[0] as usize], b) {
                    if !v.triple(&[a, b, c]) {
                        go = false;
                        return;
                    }
                }
                return;
            }
            for &r in with_b {
                for &c in after(&rec_codes[r as usize], b) {
                    triple_count[c] += 1;
                    c_marks.mark(c);
                }
            }
            c_marks.drain(|c| {
                // Drained even once stopped: the marks must be left clear.
                if std::mem::take(&mut triple_count[c]) == 1 && go && !v.triple(&[a, b, c]) {
                    go = false;
                }
            });
        });
        if !go {
            return false;
        }
    }
    true
}

/// Per first item a, its pairs {a, b} in ascending b, each with its support and (m = 3) the
/// records holding it: a's records walked once, each later item counted and marked.
struct PairWalk {
    pair_count: Vec<u32>,
    b_marks: Marks,
    /// Per b, the records holding {a, b} (m = 3 only).
    with_b: Vec<Vec<u32>>,
}

impl PairWalk {
    fn new(n: usize, m: usize) -> Self {
        PairWalk {
            pair_count: vec![0; n],
            b_marks: Marks::new(n),
            with_b: vec![Vec::new(); if m == 3 { n } else { 0 }],
        }
    }

    /// Visit (b, support of {a, b}, its records (empty unless m = 3)) for every b > a held with
    /// a by some record of `recs` (a's records), ascending in b.
    fn pairs(&mut self, rec_codes: &[Vec<usize>], a: usize, recs: &[u32], mut visit: impl FnMut(usize, usize, &[u32])) {
        let keep = !self.with_b.is_empty();
        for &r in recs {
            for &b in after(&rec_codes[r as usize], a) {
                self.pair_count[b] += 1;
                self.b_marks.mark(b);
                if keep {
                    self.with_b[b].push(r);
                }
            }
        }
        let (pair_count, with_b) = (&mut self.pair_count, &mut self.with_b);
        self.b_marks.drain(|b| {
            let support = std::mem::take(&mut pair_count[b]) as usize;
            match with_b.get_mut(b) {
                Some(list) => {
                    visit(b, support, list);
                    list.clear();
                }
                None => visit(b, support, &[]),
            }
        });
    }
}

/// A set of item ids read back ascending and emptied in one pass: a bitmap over the ids plus
/// the range of words touched, so reading costs the range, not the whole vocabulary.
struct Marks {
    words: Vec<u64>,
    lo: usize,
    hi: usize,
}

impl Marks {
    fn new(n: usize) -> Self {
        Marks { words: vec![0; n.div_ceil(64)], lo: usize::MAX, hi: 0 }
    }

    fn mark(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.lo = self.lo.min(i / 64);
        self.hi = self.hi.max(i / 64);
    }

    /// Visit the marked ids ascending and unmark them.
    fn drain(&mut self, mut visit: impl FnMut(usize)) {
        if self.lo > self.hi {
            return;
        }
        for w in self.lo..=self.hi {
            let mut bits = std::mem::take(&mut self.words[w]);
            while bits != 0 {
                visit(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        (self.lo, self.hi) = (usize::MAX, 0);
    }
}

/// Q's order: support descending, size, the items' lowest codes.
type QKey = (Reverse<u32>, usize, [u32; PACKED_MAX]);

/// Sets of up to this many items are packed into a u64 key, 21 bits an item.
pub(super) const PACKED_MAX: usize = 3;
pub(super) const PACKED_ITEMS: usize = (1 << 21) - 1;

/// An ascending item set as a u64: item + 1 in 21-bit fields, lowest first.
fn pack(p: &[usize]) -> u64 {
    p.iter().enumerate().fold(0, |key, (j, &i)| key | ((i as u64 + 1) << (21 * j)))
}

fn unpack(key: u64) -> Vec<usize> {
    let mut p = Vec::with_capacity(PACKED_MAX);
    unpack_into(key, &mut p);
    p
}

pub(super) fn unpack_into(mut key: u64, p: &mut Vec<usize>) {
    p.clear();
    while key != 0 {
        p.push((key & PACKED_ITEMS as u64) as usize - 1);
        key >>= 21;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// The in-order Q of the fresh state is the counted-and-sorted one, for m = 1, 2, 3.
    #[test]
    fn fresh_q_is_the_sorted_q() {
        let mut rng = StdRng::seed_from_u64(5);
        for round in 0..200 {
            let vocabulary = rng.random_range(2..40u32);
            let records: Vec<Vec<u32>> = (0..rng.random_range(1..30))
                .map(|_| (0..rng.random_range(0..12)).map(|_| rng.random_range(0..vocabulary) * 3).collect())
                .collect();
            let refs: Vec<&[u32]> = records.iter().map(Vec::as_slice).collect();
            let sets: Vec<Option<u32>> = (0..vocabulary * 3).map(|c| Some(c % 4)).collect();
            let state = State::new(&refs, &sets);
            for m in 1..=3 {
                let k = rng.random_range(1..8);
                assert_eq!(state.violating_packed(k, m), Some(state.violating_sorted(k, m)), "round {round}, m {m}");
            }
        }
    }
}
