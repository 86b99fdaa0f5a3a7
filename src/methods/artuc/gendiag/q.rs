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
        let (head, tail) = self.violating_head(k, m, true);
        let mut out: Vec<u64> = head.iter().collect();
        tail.walk(&self.rec_codes, &mut Collect(&mut out));
        out
    }

    /// Q on the fresh state (m ≤ 3) but its tail, the triples of support 1 (Q's last segment,
    /// returned as a [`Tail`] to walk later), in order without a hash map or a sort: buckets by support
    /// (from k − 1 down), in each the singletons, then the pairs, then the triples, each
    /// ascending. Per first item a, a's records are walked once: each later item b is counted
    /// (the support of {a, b}) and marked, and for m = 3 the record is also kept under b. Then
    /// b is read back ascending, and for m = 3 the later items c of b's kept records are
    /// counted and read back the same way. A cluster's triples are most of its Q at m = 3 (a
    /// 100-code record alone holds 161,700), so counting them in a hash map was nearly all of
    /// an m = 3 run; a pair held by one record has only triples of support 1, so its triples
    /// are left to the tail without being counted. The third items of a pair's triples that
    /// the count finds held by one record are the tail's, kept so that the tail is not counted
    /// again (`Tail`).
    ///
    /// Without `with_last` neither the pairs held by one record nor the tail are kept (Q's
    /// last segments: GenDiag's pass finds the few it must look at from the state after the
    /// head, [`State::last_to_look_at`]).
    pub(super) fn violating_head(&self, k: usize, m: usize, with_last: bool) -> (Head, Tail) {
        let top = k.min(self.suppressed.len() + 1);
        let (Head { mut buckets }, mut tail) = spare(top);
        let n = self.items.len();
        let mut walk = PairWalk::new(n, m);
        let mut triple_count = vec![0u32; n];
        let mut c_marks = Marks::new(n);
        let mut twice = Twice::new(if m == 3 { n } else { 0 });
        // Support 1 < k: the tail is part of Q.
        let keep_tail = with_last && m == 3 && k >= 2;
        let [singles, pairs, triples] = &mut buckets;
        for (a, recs) in self.code_recs.iter().enumerate() {
            if !recs.is_empty() && recs.len() < k {
                singles[recs.len()].push(pack(&[a]));
            }
            if m < 2 {
                continue;
            }
            walk.pairs(&self.rec_codes, a, recs, |b, support, with_b| {
                if support < k && (with_last || support > 1) {
                    pairs[support].push(pack(&[a, b]));
                }
                if m < 3 {
                    return;
                }
                if support == 1 {
                    if keep_tail {
                        tail.single(&self.rec_codes, a, b, with_b[0]);
                    }
                    return;
                }
                if !keep_tail {
                    // Only the third items held twice or more are the head's.
                    twice.next();
                    for &(r, j) in with_b {
                        twice.count(&self.rec_codes[r as usize][j as usize + 1..]);
                    }
                    twice.drain(|c, support| {
                        if support < k {
                            triples[support].push(pack(&[a, b, c]));
                        }
                    });
                    return;
                }
                for &(r, j) in with_b {
                    c_marks.count_sorted(&self.rec_codes[r as usize][j as usize + 1..], &mut triple_count);
                }
                let start = tail.thirds.len();
                c_marks.drain(|c| {
                    let support = std::mem::take(&mut triple_count[c]) as usize;
                    if (2..k).contains(&support) {
                        triples[support].push(pack(&[a, b, c]));
                    } else if support == 1 && keep_tail {
                        tail.thirds.push(c as u32);
                    }
                });
                tail.counted(a, b, start);
            });
        }
        (Head { buckets }, tail)
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

/// Q's head as [`State::violating_head`] counted it: per set size, per support, the sets
/// ascending by codes. Read in Q's order by [`Head::iter`], not copied into one list first (at
/// m = 3 the head holds ~10^5 triples a run).
pub(super) struct Head {
    buckets: [Vec<Vec<u64>>; PACKED_MAX],
}

impl Head {
    /// The head's sets in Q's order: support descending, then size, then codes.
    pub(super) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let top = self.buckets[0].len();
        (0..top).rev().flat_map(move |s| self.buckets.iter().flat_map(move |size| size[s].iter().copied()))
    }
}

/// Emptied head and tail buffers of finished GenDiag runs, for the next runs: they hold ~10^5
/// sets a run at m = 3, and fresh ones for each of a call's thousands of runs cost more page
/// faults (system time) than the stored tail saves. Shared, not per thread: a merge step runs
/// its GenDiag runs on the process's pool (`parallel::map`), one or two runs a thread. At most
/// one set per run that was in flight at once is kept (the cores' count).
static SPARE: std::sync::Mutex<Vec<(Head, Tail)>> = std::sync::Mutex::new(Vec::new());

/// Empty head buckets for supports 0..top and an empty tail, reusing spare ones.
fn spare(top: usize) -> (Head, Tail) {
    // A poisoned lock only means another run panicked; its buffers are not used then.
    let (mut head, tail) = SPARE
        .lock()
        .ok()
        .and_then(|mut s| s.pop())
        .unwrap_or_else(|| (Head { buckets: std::array::from_fn(|_| Vec::new()) }, Tail::default()));
    for size in &mut head.buckets {
        size.resize_with(top, Vec::new);
    }
    (head, tail)
}

/// Give a run's head and tail back for a next run, emptied.
pub(super) fn recycle(mut head: Head, mut tail: Tail) {
    head.buckets.iter_mut().flatten().for_each(Vec::clear);
    tail.pairs.clear();
    tail.thirds.clear();
    if let Ok(mut s) = SPARE.lock() {
        s.push((head, tail));
    }
}

/// What walks Q's tail ([`Tail::walk`]) gets to see, in the tail's order.
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
/// k ≥ 2, m = 3), as [`State::violating_head`] found them, walked in Q's order (ascending) by
/// [`Tail::walk`], each triple visited as it is read and never stored as a set.
///
/// Q's order puts them last (support 1 is the lowest, triples the largest sets), and they are
/// most of an m = 3 Q: a long record's code triples are nearly all its own. GenDiag gives up a
/// run as soon as it suppresses more than a limit, which it mostly learns before the tail, so
/// storing the tail's triples as sets was most of a given-up run's cost. What is kept is, per
/// pair {a, b} with tail triples, where its third items are: a pair held by one record r makes
/// every triple with a later code of r a tail triple (read off r), and for a pair held by more
/// records the head's count found the third items held by one of them (kept in `thirds`;
/// counting them again in the walk was a tenth of an m = 3 run). The walk reads only the
/// original codes, so the state may change while it runs, and the visitor may pass over a
/// first item or a pair whose triples it knows need nothing.
#[derive(Default)]
pub(super) struct Tail {
    /// The pairs with tail triples, ascending by (a, b).
    pairs: Vec<TailPair>,
    /// The third items of the counted pairs, each pair's ascending, pair after pair.
    thirds: Vec<u32>,
}

struct TailPair {
    a: u32,
    b: u32,
    thirds: Thirds,
}

/// Where a tail pair's third items are.
enum Thirds {
    /// The codes of record `r` from position `from` on.
    Record { r: u32, from: u32 },
    /// `Tail::thirds[start..end]`.
    Counted { start: u32, end: u32 },
}

impl Tail {
    /// The pair {a, b} held by one record only, at b's position `(r, j)` there.
    fn single(&mut self, rec_codes: &[Vec<usize>], a: usize, b: usize, (r, j): (u32, u32)) {
        if j as usize + 1 < rec_codes[r as usize].len() {
            self.pairs.push(TailPair { a: a as u32, b: b as u32, thirds: Thirds::Record { r, from: j + 1 } });
        }
    }

    /// The pair {a, b} whose third items were pushed to `thirds` from `start` on.
    fn counted(&mut self, a: usize, b: usize, start: usize) {
        let end = self.thirds.len();
        if end > start {
            let thirds = Thirds::Counted { start: start as u32, end: end as u32 };
            self.pairs.push(TailPair { a: a as u32, b: b as u32, thirds });
        }
    }

    /// Visit the tail's triples in order; false when the visitor stopped the walk.
    pub(super) fn walk(&self, rec_codes: &[Vec<usize>], v: &mut impl TailVisitor) -> bool {
        let mut first: Option<(u32, bool)> = None;
        for p in &self.pairs {
            if first.is_none_or(|(a, _)| a != p.a) {
                first = Some((p.a, v.first(p.a as usize)));
            }
            let (a, b) = (p.a as usize, p.b as usize);
            if first.is_some_and(|(_, go)| !go) || !v.pair(a, b) {
                continue;
            }
            let go = match p.thirds {
                Thirds::Record { r, from } => {
                    rec_codes[r as usize][from as usize..].iter().all(|&c| v.triple(&[a, b, c]))
                }
                Thirds::Counted { start, end } => {
                    self.thirds[start as usize..end as usize].iter().all(|&c| v.triple(&[a, b, c as usize]))
                }
            };
            if !go {
                return false;
            }
        }
        true
    }
}

/// Per first item a, its pairs {a, b} in ascending b, each with its support and (m = 3) the
/// records holding it: a's records walked once, each later item counted and marked.
struct PairWalk {
    pair_count: Vec<u32>,
    b_marks: Marks,
    /// Per b, the records holding {a, b}, each with b's position in the record (m = 3 only:
    /// the third items are the record's codes after it, no search needed).
    with_b: Vec<Vec<(u32, u32)>>,
}

impl PairWalk {
    fn new(n: usize, m: usize) -> Self {
        PairWalk {
            pair_count: vec![0; n],
            b_marks: Marks::new(n),
            with_b: vec![Vec::new(); if m == 3 { n } else { 0 }],
        }
    }

    /// Visit (b, support of {a, b}, its records with b's position (empty unless m = 3)) for
    /// every b > a held with a by some record of `recs` (a's records), ascending in b.
    fn pairs(
        &mut self,
        rec_codes: &[Vec<usize>],
        a: usize,
        recs: &[u32],
        mut visit: impl FnMut(usize, usize, &[(u32, u32)]),
    ) {
        let keep = !self.with_b.is_empty();
        for &r in recs {
            let codes = &rec_codes[r as usize];
            let from = codes.partition_point(|&b| b <= a);
            let later = &codes[from..];
            self.b_marks.count_sorted(later, &mut self.pair_count);
            if keep {
                for (j, &b) in later.iter().enumerate() {
                    self.with_b[b].push((r, (from + j) as u32));
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

/// Counts of item ids for one pair {a, b} at a time, stamped with the pair (no reset between
/// pairs), and the ids counted twice or more, read back ascending. Without Q's tail only those
/// are needed: most third items of a pair are held by one of its records, and reading them all
/// back was most of the head's count.
struct Twice {
    /// Per id, (the pair's stamp, the count).
    counts: Vec<(u32, u32)>,
    stamp: u32,
    marks: Marks,
}

impl Twice {
    fn new(n: usize) -> Self {
        Twice { counts: vec![(0, 0); n], stamp: 0, marks: Marks::new(n) }
    }

    /// Start counting for the next pair.
    fn next(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Wrapped: old stamps could match again.
            self.counts.iter_mut().for_each(|c| *c = (0, 0));
            self.stamp = 1;
        }
    }

    fn count(&mut self, ids: &[usize]) {
        for &i in ids {
            let c = &mut self.counts[i];
            if c.0 != self.stamp {
                *c = (self.stamp, 1);
            } else {
                c.1 += 1;
                if c.1 == 2 {
                    self.marks.mark(i);
                }
            }
        }
    }

    /// Visit (id, count) for the ids counted twice or more, ascending, and unmark them.
    fn drain(&mut self, mut visit: impl FnMut(usize, usize)) {
        let counts = &self.counts;
        self.marks.drain(|i| visit(i, counts[i].1 as usize));
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

    /// Mark ascending ids and count each in `counts` (one loop: this is the counting passes'
    /// innermost loop; the range of words touched is read off the ends).
    fn count_sorted(&mut self, ids: &[usize], counts: &mut [u32]) {
        let (Some(&lo), Some(&hi)) = (ids.first(), ids.last()) else { return };
        for &i in ids {
            counts[i] += 1;
            self.words[i / 64] |= 1 << (i % 64);
        }
        self.lo = self.lo.min(lo / 64);
        self.hi = self.hi.max(hi / 64);
    }

    /// Mark one id.
    #[inline]
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
