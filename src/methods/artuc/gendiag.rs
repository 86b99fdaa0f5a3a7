//! GenDiag (Appendix A): (k, k^m)-anonymize the diagnosis codes of one cluster by set-based
//! generalization within utility constraints, and suppression when no generalization is
//! allowed.
//!
//! Items are the cluster's current (generalized) codes; a record holds an item when it held any
//! of the item's codes. Q is every set of at most m items held by some record and by fewer than
//! k records (Step 2), processed "in decreasing order of frequency" (Appendix B sorts Q once).
//! For each p: while p is held by fewer than k records, merge u ∈ p with another item u′ of
//! the same constraint code set minimizing UL(ũ) = 2^|ũ| − 1 (Step 6; ties: the merge giving p
//! the largest support, then the lowest codes), or, when no such pair exists, suppress the
//! element of p held by the fewest records, from every record of the cluster (Steps 9–12).
//! Merges and suppressions only raise supports, so one pass leaves no violating set; Q is
//! checked in debug builds (the first version recomputed Q as a guard).
//!
//! u′ is taken among the cluster's own items: a code of the constraint that no record of the
//! cluster holds would widen ũ without raising any support.

use crate::encode::hash::{FastMap, fast_map};
use crate::metrics::ul::record_ul;
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

/// The anonymized codes of one cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Diag {
    /// Generalized codes, each as its sorted leaf codes (one code when not generalized).
    pub items: Vec<Vec<u32>>,
    /// Per record of the cluster (in the cluster's order), its items by index, ascending.
    pub records: Vec<Vec<u32>>,
    /// Per record, s(r): the codes suppressed from it.
    pub suppressed: Vec<u32>,
    /// UL(C) = Σ_r UL(r) (Definition 6, suppression included).
    pub ul: f64,
}

impl Diag {
    /// Σ_r s(r): diagnosis codes suppressed from the cluster.
    pub fn suppressed_total(&self) -> u64 {
        self.suppressed.iter().map(|&s| s as u64).sum()
    }
}

/// Run GenDiag on the cluster whose records hold `records` (sorted leaf codes). `set_of_code`
/// maps a leaf to its constraint code set; `k` ≥ 1, `m` ≥ 1.
///
/// Q is computed once: every set Q would hold after the pass is the image of a set of the
/// first Q (or of a set that already had support ≥ k), and merges and suppressions never lower
/// the support of a set's image, so a second Q is always empty (checked in debug builds; the
/// first version, kept in `gendiag_reference.rs` for the tests, recomputed it).
pub fn gendiag(records: &[&[u32]], set_of_code: &[Option<u32>], k: usize, m: usize) -> Diag {
    let mut s = State::new(records, set_of_code);
    let mut buf = Vec::new();
    match s.violating_packed(k, m) {
        Some(q) => {
            let mut p = Vec::with_capacity(PACKED_MAX);
            for key in q {
                unpack_into(key, &mut p);
                s.process(&p, k, &mut buf);
            }
        }
        None => {
            for (p, _) in s.violating(k, m) {
                s.process(&p, k, &mut buf);
            }
        }
    }
    debug_assert!(s.violating(k, m).is_empty(), "GenDiag: a violating set survived the pass");
    s.finish()
}

/// Step 6's order on candidate pairs: |ũ| (so UL(ũ) = 2^|ũ| − 1), then the larger support of p
/// after the merge, then the lowest codes of u and u′.
type PairKey = (usize, Reverse<usize>, u32, u32);

struct State {
    /// Local code id → leaf code, ascending.
    codes: Vec<u32>,
    /// Per record, its local code ids, ascending.
    rec_codes: Vec<Vec<usize>>,
    /// Per local code, the records holding it, ascending.
    code_recs: Vec<Vec<u32>>,
    /// Local code → its item; items start as one per code.
    item_of: Vec<Option<usize>>,
    /// Item → local codes, ascending (empty once merged away).
    items: Vec<Vec<usize>>,
    /// Per alive item, the records holding it, ascending, and the same as a bitset.
    item_recs: Vec<Vec<u32>>,
    item_bits: Vec<Vec<u64>>,
    /// Item → its constraint code set (dense id), fixed: merges stay within a set.
    item_set: Vec<Option<usize>>,
    /// Per code set, its alive items (any order) and each item's position there.
    set_items: Vec<Vec<usize>>,
    set_pos: Vec<usize>,
    /// Item → the item it was merged into (None while alive or once suppressed).
    forward: Vec<Option<usize>>,
    alive: Vec<bool>,
    suppressed: Vec<u32>,
}

impl State {
    fn new(records: &[&[u32]], set_of_code: &[Option<u32>]) -> Self {
        let mut codes: Vec<u32> = records.iter().flat_map(|r| r.iter().copied()).collect();
        codes.sort_unstable();
        codes.dedup();
        let local: FastMap<u32, usize> = {
            let mut l = fast_map(codes.len());
            l.extend(codes.iter().enumerate().map(|(i, &c)| (c, i)));
            l
        };
        let n = codes.len();
        let words = records.len().div_ceil(64).max(1);
        let mut code_recs: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut item_bits = vec![vec![0u64; words]; n];
        let rec_codes: Vec<Vec<usize>> = records
            .iter()
            .enumerate()
            .map(|(r, cs)| {
                let mut v: Vec<usize> = cs.iter().map(|c| local[c]).collect();
                v.sort_unstable();
                v.dedup();
                for &c in &v {
                    code_recs[c].push(r as u32);
                    item_bits[c][r / 64] |= 1 << (r % 64);
                }
                v
            })
            .collect();
        let mut set_ids: HashMap<u32, usize> = HashMap::new();
        let mut set_items: Vec<Vec<usize>> = Vec::new();
        let mut set_pos = vec![0; n];
        let item_set: Vec<Option<usize>> = codes
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let set = set_of_code.get(c as usize).copied().flatten()?;
                let id = *set_ids.entry(set).or_insert_with(|| {
                    set_items.push(Vec::new());
                    set_items.len() - 1
                });
                set_pos[i] = set_items[id].len();
                set_items[id].push(i);
                Some(id)
            })
            .collect();
        State {
            codes,
            rec_codes,
            item_recs: code_recs.clone(),
            code_recs,
            item_of: (0..n).map(Some).collect(),
            items: (0..n).map(|i| vec![i]).collect(),
            item_bits,
            item_set,
            set_items,
            set_pos,
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

    #[inline]
    fn holds(&self, item: usize, r: u32) -> bool {
        self.item_bits[item][r as usize / 64] >> (r % 64) & 1 == 1
    }

    /// Records holding every item of `p` (alive items): the smallest item's records, filtered.
    fn support(&self, p: &[usize]) -> usize {
        match p {
            [] => self.suppressed.len(),
            [a] => self.item_recs[*a].len(),
            _ => {
                let s = *p.iter().min_by_key(|&&i| self.item_recs[i].len()).expect("non-empty");
                if self.item_recs[s].len() > self.words() {
                    return (0..self.words())
                        .map(|w| p.iter().fold(u64::MAX, |acc, &i| acc & self.item_bits[i][w]).count_ones() as usize)
                        .sum();
                }
                self.item_recs[s].iter().filter(|&&r| p.iter().all(|&i| i == s || self.holds(i, r))).count()
            }
        }
    }

    fn words(&self) -> usize {
        self.suppressed.len().div_ceil(64).max(1)
    }

    /// The support of `rest` ∪ {u ∪ v}: records holding u or v and every item of `rest`, over
    /// the bitsets or the shortest record lists, whichever is shorter.
    fn support_merged(&self, u: usize, v: usize, rest: &[usize]) -> usize {
        let (ru, rv) = (&self.item_recs[u], &self.item_recs[v]);
        let shortest =
            rest.iter().map(|&i| self.item_recs[i].len()).min().unwrap_or(usize::MAX).min(ru.len() + rv.len());
        if shortest > self.words() * (rest.len() + 1) {
            return (0..self.words())
                .map(|w| {
                    let all = rest.iter().fold(u64::MAX, |acc, &i| acc & self.item_bits[i][w]);
                    ((self.item_bits[u][w] | self.item_bits[v][w]) & all).count_ones() as usize
                })
                .sum();
        }
        let smallest_rest = rest.iter().map(|&i| (self.item_recs[i].len(), i)).min();
        match smallest_rest {
            None => {
                let (small, other) = if ru.len() <= rv.len() { (ru, v) } else { (rv, u) };
                ru.len() + rv.len() - small.iter().filter(|&&r| self.holds(other, r)).count()
            }
            Some((len, s)) if len < ru.len() + rv.len() => self.item_recs[s]
                .iter()
                .filter(|&&r| {
                    (self.holds(u, r) || self.holds(v, r)) && rest.iter().all(|&i| i == s || self.holds(i, r))
                })
                .count(),
            Some(_) => {
                let in_rest = |r: u32| rest.iter().all(|&i| self.holds(i, r));
                ru.iter().filter(|&&r| in_rest(r)).count()
                    + rv.iter().filter(|&&r| !self.holds(u, r) && in_rest(r)).count()
            }
        }
    }

    /// The lowest leaf code of an item: a stable, data-independent order for ties.
    fn first_code(&self, item: usize) -> u32 {
        self.items[item].first().map_or(u32::MAX, |&c| self.codes[c])
    }

    /// Q (Step 2): item sets of size ≤ m held by some record and by fewer than k records,
    /// most frequent first, then smaller, then by their codes.
    ///
    /// Singletons' supports are their record lists' lengths; pairs are counted per first item
    /// a over the records holding a, in a dense array over the second item (every record's
    /// pairs once). Larger m counts every record's subsets in a hash map.
    fn violating(&self, k: usize, m: usize) -> Vec<(Vec<usize>, usize)> {
        match self.violating_packed(k, m) {
            Some(q) => q.into_iter().map(|p| (unpack(p), self.support(&unpack(p)))).collect(),
            None => self.violating_scan(k, m),
        }
    }

    /// Q as packed sets (None when m or the item count is too large to pack).
    fn violating_packed(&self, k: usize, m: usize) -> Option<Vec<u64>> {
        if m > PACKED_MAX || self.items.len() >= PACKED_ITEMS {
            return None;
        }
        let mut q: Vec<(u64, u32)> = Vec::new();
        if m <= 2 {
            let alive: Vec<usize> = (0..self.items.len()).filter(|&i| self.alive[i]).collect();
            for &a in &alive {
                let s = self.item_recs[a].len();
                if s > 0 && s < k {
                    q.push((pack(&[a]), s as u32));
                }
            }
            if m == 2 {
                let rec_items: Vec<Vec<usize>> = (0..self.rec_codes.len()).map(|r| self.record_items(r)).collect();
                let mut count = vec![0u32; self.items.len()];
                let mut touched: Vec<usize> = Vec::new();
                for &a in &alive {
                    for &r in &self.item_recs[a] {
                        let its = &rec_items[r as usize];
                        for &b in &its[its.partition_point(|&b| b <= a)..] {
                            if count[b] == 0 {
                                touched.push(b);
                            }
                            count[b] += 1;
                        }
                    }
                    for &b in &touched {
                        if (count[b] as usize) < k {
                            q.push((pack(&[a, b]), count[b]));
                        }
                        count[b] = 0;
                    }
                    touched.clear();
                }
            }
        } else {
            let mut counts: FastMap<u64, u32> = fast_map(1024);
            for r in 0..self.rec_codes.len() {
                let items = self.record_items(r);
                subsets(&items, m, 0, &mut Vec::new(), &mut |p| *counts.entry(pack(p)).or_insert(0) += 1);
            }
            q.extend(counts.into_iter().filter(|&(_, s)| (s as usize) < k));
        }
        let first: Vec<u32> = (0..self.items.len()).map(|i| self.first_code(i)).collect();
        let codes_of = |p: u64| {
            let mut codes = [0u32; PACKED_MAX];
            let mut len = 0;
            for (j, c) in codes.iter_mut().enumerate() {
                let i = (p >> (21 * j)) & PACKED_ITEMS as u64;
                if i != 0 {
                    *c = first[i as usize - 1];
                    len += 1;
                }
            }
            (len, codes)
        };
        // Keys are distinct (alive items have distinct lowest codes), so sorting by the key
        // alone gives Q's order. When the codes fit in 31 bits: for m ≤ 2, buckets by support
        // (s < k and s ≤ |C|), each sorted by (size, codes) packed into a u64; else one u128.
        let fits = self.codes.last().is_none_or(|&c| c < 1 << 31);
        if fits && m <= 2 {
            let mut buckets: Vec<Vec<(u64, u64)>> = vec![Vec::new(); k.min(self.suppressed.len() + 1)];
            for (p, s) in q {
                let (len, [c0, c1, _]) = codes_of(p);
                buckets[s as usize].push(((len as u64) << 62 | (c0 as u64) << 31 | c1 as u64, p));
            }
            let mut out = Vec::with_capacity(buckets.iter().map(Vec::len).sum());
            for b in buckets.iter_mut().rev() {
                b.sort_unstable();
                out.extend(b.iter().map(|&(_, p)| p));
            }
            Some(out)
        } else if fits {
            let mut keyed: Vec<(u128, u64)> = q
                .into_iter()
                .map(|(p, s)| {
                    let (len, [c0, c1, c2]) = codes_of(p);
                    let key = ((u32::MAX - s) as u128) << 96
                        | (len as u128) << 94
                        | (c0 as u128) << 62
                        | (c1 as u128) << 31
                        | c2 as u128;
                    (key, p)
                })
                .collect();
            keyed.sort_unstable();
            Some(keyed.into_iter().map(|(_, p)| p).collect())
        } else {
            let mut keyed: Vec<(QKey, u64)> = q
                .into_iter()
                .map(|(p, s)| {
                    let (len, codes) = codes_of(p);
                    ((Reverse(s), len, codes), p)
                })
                .collect();
            keyed.sort_unstable();
            Some(keyed.into_iter().map(|(_, p)| p).collect())
        }
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

    /// The alive items `p`'s items became, ascending, into `out`.
    fn resolve_into(&self, p: &[usize], out: &mut Vec<usize>) {
        out.clear();
        out.extend(p.iter().filter_map(|&i| self.resolve(i)));
        out.sort_unstable();
        out.dedup();
    }

    /// Steps 4–14 for one element p of Q (`buf`: scratch space).
    fn process(&mut self, q: &[usize], k: usize, buf: &mut Vec<usize>) {
        let mut p = std::mem::take(buf);
        self.resolve_into(q, &mut p);
        let mut next = Vec::new();
        while !p.is_empty() && self.support(&p) < k {
            match self.best_pair(&p) {
                Some((u, v)) => {
                    self.merge(u, v);
                    self.resolve_into(&p, &mut next);
                    std::mem::swap(&mut p, &mut next);
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
        *buf = p;
    }

    /// Step 6: u ∈ p and u′ of the same constraint code set with minimum UL(ũ).
    ///
    /// Only u′ of the smallest size can win (|ũ| comes first in the order), so supports are
    /// counted for those only. For u′ ∉ p the support after the merge is sup(p) plus the
    /// records holding u′ and p ∖ {u} but not u: those records (`gain`) are computed once per
    /// u, then each candidate counts over its own records or bitset, whichever is shorter.
    fn best_pair(&self, p: &[usize]) -> Option<(usize, usize)> {
        let mut best: Option<(PairKey, (usize, usize))> = None;
        let mut rest: Vec<usize> = Vec::with_capacity(p.len());
        let words = self.words();
        let mut gain = vec![0u64; words];
        for &u in p {
            let Some(set) = self.item_set[u] else { continue };
            let list = &self.set_items[set];
            let Some(min_v) = list.iter().filter(|&&v| v != u).map(|&v| self.items[v].len()).min() else {
                continue;
            };
            let size = self.items[u].len() + min_v;
            if best.as_ref().is_some_and(|b| size > b.0.0) {
                continue;
            }
            let mut base = 0;
            for (w, g) in gain.iter_mut().enumerate() {
                let others = p.iter().filter(|&&i| i != u).fold(u64::MAX, |acc, &i| acc & self.item_bits[i][w]);
                base += (others & self.item_bits[u][w]).count_ones() as usize;
                *g = others & !self.item_bits[u][w];
            }
            let fu = self.first_code(u);
            for &v in list.iter().filter(|&&v| v != u && self.items[v].len() == min_v) {
                let support = if p.contains(&v) {
                    rest.clear();
                    rest.extend(p.iter().copied().filter(|&i| i != u && i != v));
                    self.support_merged(u, v, &rest)
                } else if self.item_recs[v].len() <= words {
                    base + self.item_recs[v].iter().filter(|&&r| gain[r as usize / 64] >> (r % 64) & 1 == 1).count()
                } else {
                    base + gain
                        .iter()
                        .zip(&self.item_bits[v])
                        .map(|(g, b)| (g & b).count_ones() as usize)
                        .sum::<usize>()
                };
                let key = (size, Reverse(support), fu, self.first_code(v));
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, (u, v)));
                }
            }
        }
        best.map(|b| b.1)
    }

    fn unlist(&mut self, item: usize) {
        if let Some(set) = self.item_set[item] {
            let list = &mut self.set_items[set];
            let pos = self.set_pos[item];
            list.swap_remove(pos);
            if let Some(&moved) = list.get(pos) {
                self.set_pos[moved] = pos;
            }
        }
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
        let vr = std::mem::take(&mut self.item_recs[v]);
        let ur = std::mem::take(&mut self.item_recs[u]);
        self.item_recs[u] = union_sorted(&ur, &vr);
        self.unlist(v);
        self.alive[v] = false;
        self.forward[v] = Some(u);
    }

    /// Steps 11–12: suppress e from every record of the cluster, counting the codes each loses.
    fn suppress(&mut self, e: usize) {
        for &c in &self.items[e] {
            self.item_of[c] = None;
            for &r in &self.code_recs[c] {
                self.suppressed[r as usize] += 1;
            }
        }
        self.item_recs[e] = Vec::new();
        self.item_bits[e] = Vec::new();
        self.unlist(e);
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

/// The union of two ascending lists.
fn union_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
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

fn unpack(key: u64) -> Vec<usize> {
    let mut p = Vec::with_capacity(PACKED_MAX);
    unpack_into(key, &mut p);
    p
}

fn unpack_into(mut key: u64, p: &mut Vec<usize>) {
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

    #[test]
    fn generalizes_within_a_code_set_and_suppresses_otherwise() {
        // Codes 0, 1 share a set; 2 is alone. Records {0, 2}, {1}: k = 2, m = 1.
        let sets = [Some(0), Some(0), Some(1)];
        let d = gendiag(&[&[0, 2], &[1]], &sets, 2, 1);
        assert_eq!(d.items, vec![vec![0, 1]]);
        assert_eq!(d.records, vec![vec![0], vec![0]]);
        assert_eq!(d.suppressed, vec![1, 0]);
        // UL: both records hold (0,1): 3/3 each, plus the suppressed code.
        assert!((d.ul - 3.0).abs() < 1e-12, "{d:?}");
    }
}
