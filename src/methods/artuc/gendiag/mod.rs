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

mod q;
mod state;

use crate::formulas::ul::record_ul;
use q::{PACKED_ITEMS, PACKED_MAX, TailVisitor, unpack_into};
use state::State;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

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
    gendiag_within(records, set_of_code, k, m, u64::MAX).expect("no suppression limit")
}

/// [`gendiag`], given up (None) as soon as more than `limit` codes are suppressed: suppressions
/// only accumulate and UL(C) ≥ Σ_r s(r), so such a cluster's UL exceeds `limit`. Step 20 asks
/// only whether a union beats the best UL found so far.
pub(crate) fn gendiag_within(
    records: &[&[u32]],
    set_of_code: &[Option<u32>],
    k: usize,
    m: usize,
    limit: u64,
) -> Option<Diag> {
    gendiag_below(records, set_of_code, k, m, &AtomicU64::new(limit))
}

/// [`gendiag_within`] with a limit that may fall while the run goes on (Step 20's best UL so
/// far, lowered by the runs on other threads): the run is given up once it has suppressed more
/// codes than the limit at that moment. Any limit at least the final best UL keeps Step 20's
/// choice (a union given up has UL above a UL found), so when it falls does not matter.
pub(crate) fn gendiag_below(
    records: &[&[u32]],
    set_of_code: &[Option<u32>],
    k: usize,
    m: usize,
    limit: &AtomicU64,
) -> Option<Diag> {
    let mut s = State::new(records, set_of_code);
    let mut buf = Vec::new();
    if m <= PACKED_MAX && s.items.len() < PACKED_ITEMS {
        // At m = 3 Q's last segments (pairs and triples held by one record) are not walked but
        // looked up. (At m = 2 looking the pairs up was slower than walking them: full-size
        // EHRD, 32.7 s of CPU against 29.0 s.)
        let tail_looked_up = m == 3 && k >= 2;
        let (head, tail) = s.violating_head(k, m, !tail_looked_up);
        let done = pass_in_order(&mut s, (&head, &tail), tail_looked_up, &mut buf, k, limit);
        q::recycle(head, tail);
        if !done {
            return None;
        }
    } else {
        for (p, _) in s.violating(k, m) {
            s.process(&p, k, &mut buf);
            if s.suppressed_total > limit.load(Ordering::Relaxed) {
                return None;
            }
        }
    }
    debug_assert!(s.violating(k, m).is_empty(), "GenDiag: a violating set survived the pass");
    Some(s.finish())
}

/// [`Pass`] over Q's head then its tail; false once more than `limit` codes are suppressed.
fn pass_in_order(
    s: &mut State,
    (head, tail): (&q::Head, &q::Tail),
    tail_looked_up: bool,
    buf: &mut Vec<usize>,
    k: usize,
    limit: &AtomicU64,
) -> bool {
    // Q's tail is read from the original codes (shared, fixed) as the pass changes the state.
    let rec_codes = Rc::clone(&s.rec_codes);
    let mut pass = Pass::new(s, buf, k, limit);
    let mut p = Vec::with_capacity(PACKED_MAX);
    for key in head.iter() {
        unpack_into(key, &mut p);
        if !pass.set(&p) {
            return false;
        }
    }
    if !tail_looked_up {
        return tail.walk(&rec_codes, &mut pass);
    }
    let pairs = pass.s.last_to_look_at(k, 2);
    if !pairs.into_iter().all(|key| pass.set(&[(key >> 21 & LOW) as usize, (key & LOW) as usize])) {
        return false;
    }
    let look = pass.s.last_to_look_at(k, 3);
    look.into_iter().all(|key| pass.triple(&[(key >> 42) as usize, (key >> 21 & LOW) as usize, (key & LOW) as usize]))
}

/// 21 bits: one code of a pair or triple in [`State::last_to_look_at`]'s keys.
const LOW: u64 = (1 << 21) - 1;

impl State {
    /// `out` = the records holding both items x and y, as a bitset row.
    fn both(&self, x: usize, y: usize, out: &mut [u64]) {
        for ((o, p), q) in out.iter_mut().zip(self.row(x)).zip(self.row(y)) {
            *o = p & q;
        }
    }

    /// Whether at least k of the records of the bitset row `xy` hold item z: word by word when
    /// z's record list is longer than the row, else by z's records.
    fn k_of_row_hold(&self, xy: &[u64], z: usize, k: usize) -> bool {
        let recs = &self.item_recs[z];
        if recs.len() > xy.len() {
            let mut n = 0;
            xy.iter().zip(self.row(z)).any(|(p, q)| {
                n += (p & q).count_ones() as usize;
                n >= k
            })
        } else {
            recs.iter().filter(|&&r| xy[r as usize / 64] >> (r % 64) & 1 == 1).take(k).count() >= k
        }
    }

    /// The sets of one of Q's last segments, the pairs (`size` 2) or the triples (`size` 3)
    /// held by one record, whose image is not satisfied when the segment is reached (after the
    /// head, and for the triples after the pairs), ascending by codes (as `(a << 21) | b` or
    /// `(a << 42) | (b << 21) | c`). The others need no look: an image satisfied then stays
    /// satisfied (merges keep an item's id or move its codes to a larger item, and only add
    /// records; a suppressed item leaves a smaller image, a subset's, which is satisfied), so
    /// Steps 4–14 would do nothing for them when reached, and passing over them leaves the
    /// state as walking them would.
    ///
    /// The unsatisfied images are few (Steps 4–14 act on a tiny share of these segments), so
    /// they are found per record from its items (a few, once codes are generalized) instead of
    /// from its codes' pairs or triples (a 100-code record holds 161,700 triples): per pair of
    /// the record's items the records holding both are one bitset row, and each third item is
    /// counted against it up to k. Only for an image found unsatisfied are the record's code
    /// sets with that image listed. A code set held by two or more records is in Q's head or
    /// has support ≥ k, so its image is satisfied by now: what is listed is the segment's.
    fn last_to_look_at(&self, k: usize, size: usize) -> Vec<u64> {
        let words = self.words();
        let mut out = Vec::new();
        let mut by_item: Vec<(usize, usize)> = Vec::new();
        let mut starts: Vec<usize> = Vec::new();
        let mut xy = vec![0u64; words];
        for codes in self.rec_codes.iter() {
            if codes.len() < size {
                continue;
            }
            by_item.clear();
            by_item.extend(codes.iter().filter_map(|&c| self.resolve(c).map(|x| (x, c))));
            by_item.sort_unstable();
            starts.clear();
            for (i, &(x, _)) in by_item.iter().enumerate() {
                if i == 0 || by_item[i - 1].0 != x {
                    starts.push(i);
                }
            }
            let items = starts.len();
            if items < size {
                continue;
            }
            starts.push(by_item.len());
            let item = |i: usize| by_item[starts[i]].0;
            let codes_of = |i: usize| by_item[starts[i]..starts[i + 1]].iter().map(|p| p.1);
            if size == 2 {
                for i in 0..items {
                    for j in i + 1..items {
                        if self.support_up_to(&[item(i), item(j)], k) >= k {
                            continue;
                        }
                        for a in codes_of(i) {
                            for b in codes_of(j) {
                                out.push((a.min(b) as u64) << 21 | a.max(b) as u64);
                            }
                        }
                    }
                }
                continue;
            }
            for i in 0..items {
                for j in i + 1..items {
                    self.both(item(i), item(j), &mut xy);
                    for l in j + 1..items {
                        if self.k_of_row_hold(&xy, item(l), k) {
                            continue;
                        }
                        for a in codes_of(i) {
                            for b in codes_of(j) {
                                for c in codes_of(l) {
                                    let mut t = [a as u64, b as u64, c as u64];
                                    t.sort_unstable();
                                    out.push(t[0] << 42 | t[1] << 21 | t[2]);
                                }
                            }
                        }
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Steps 4–14 on Q in order (the head's sets, then the tail's triples, [`q::Tail`]), passing
/// over the triples known to be satisfied without counting their support. When a triple of Q
/// is reached, every proper subset of it has been processed or had support ≥ k (a subset has
/// at least the triple's support, and within a support smaller sets come first), so the
/// subset's image has support ≥ k (in a cluster of at least k records; in a smaller one every
/// item is suppressed by then), and merges and suppressions never lower an image's support, so
/// it stays so. A triple whose image has fewer than three items (one was suppressed, or two
/// codes share an item) is the image of such a subset: satisfied. So in the tail a first item
/// a that was suppressed, or a pair {a, b} whose codes were suppressed or share an item, has no
/// triple to look at. Otherwise, with a's and b's items x and y, the third items z found
/// satisfied are remembered until x or y changes (triples of one pair come one after another,
/// and a long record's later codes share few items). Passing over them is exact: Steps 4–14
/// do nothing for a satisfied set.
struct Pass<'a> {
    s: &'a mut State,
    buf: &'a mut Vec<usize>,
    k: usize,
    limit: &'a AtomicU64,
    /// Per item, the epoch in which (x, y, item) was found satisfied (u64: an epoch per pair
    /// never wraps).
    seen: Vec<u64>,
    epoch: u64,
    /// The items (x, y) the epoch is for.
    pair: Option<(usize, usize)>,
    /// The records holding both x and y, as a bitset row (valid while `xy_fresh`: a merge in
    /// Steps 4–14 may grow x's or y's records).
    xy: Vec<u64>,
    xy_fresh: bool,
}

impl<'a> Pass<'a> {
    fn new(s: &'a mut State, buf: &'a mut Vec<usize>, k: usize, limit: &'a AtomicU64) -> Self {
        let seen = vec![0; s.items.len()];
        let xy = vec![0; s.words()];
        Pass { s, buf, k, limit, seen, epoch: 0, pair: None, xy, xy_fresh: false }
    }

    /// Steps 4–14 for one set of Q's head; false once more than the limit is suppressed.
    fn set(&mut self, p: &[usize]) -> bool {
        if p.len() == 3 {
            return self.triple(p);
        }
        self.s.process(p, self.k, self.buf);
        self.xy_fresh = false;
        self.s.suppressed_total <= self.limit.load(Ordering::Relaxed)
    }

    /// The items of a and b when both are alive and distinct, the epoch set for them.
    ///
    /// The epoch is per pair of items, not of codes: whether (x, y, z) is satisfied depends on
    /// the items only, and once satisfied it stays so while x, y and z are alive (a merge keeps
    /// the first item's id and only adds records; a suppressed or merged-away item is no
    /// longer any code's image). Codes of one constraint set are contiguous and generalized
    /// into the same items, so consecutive pairs of Q often share their items.
    fn items(&mut self, a: usize, b: usize) -> Option<(usize, usize)> {
        let (x, y) = (self.s.resolve(a)?, self.s.resolve(b)?);
        if x == y {
            return None;
        }
        if self.pair != Some((x, y)) {
            self.pair = Some((x, y));
            self.epoch += 1;
            self.xy_fresh = false;
        }
        Some((x, y))
    }

    /// Whether (x, y, z) (the epoch's x and y) is held by at least k records, counted against
    /// the records of x and y, kept as one bitset row per epoch.
    fn satisfied_xyz(&mut self, x: usize, y: usize, z: usize) -> bool {
        let (s, k) = (&*self.s, self.k);
        let words = s.words();
        let (lx, ly, lz) = (s.item_recs[x].len(), s.item_recs[y].len(), s.item_recs[z].len());
        if lx.min(ly).min(lz) < k {
            return false;
        }
        if lz > words {
            // Long lists: the row of x and y, ANDed once per epoch.
            if !self.xy_fresh {
                s.both(x, y, &mut self.xy);
                self.xy_fresh = true;
            }
            return s.k_of_row_hold(&self.xy, z, k);
        }
        s.support_triple(x, y, z, k) >= k
    }
}

impl TailVisitor for Pass<'_> {
    fn first(&mut self, a: usize) -> bool {
        self.s.resolve(a).is_some()
    }

    fn pair(&mut self, a: usize, b: usize) -> bool {
        self.items(a, b).is_some()
    }

    fn triple(&mut self, t: &[usize]) -> bool {
        let &[a, b, c] = t else { return true };
        let Some((x, y)) = self.items(a, b) else { return true };
        let z = match self.s.resolve(c) {
            Some(z) if z != x && z != y && self.seen[z] != self.epoch => z,
            _ => return true,
        };
        // Most triples are satisfied when reached: Steps 4–14 would do nothing, and the state
        // (so the epoch) stays as it is.
        if self.satisfied_xyz(x, y, z) {
            self.seen[z] = self.epoch;
            return true;
        }
        self.s.process(t, self.k, self.buf);
        self.xy_fresh = false;
        // Its image is satisfied now: remember its third item while x and y are the epoch's.
        if let (Some(_), Some(z)) = (self.items(a, b), self.s.resolve(c)) {
            self.seen[z] = self.epoch;
        }
        self.s.suppressed_total <= self.limit.load(Ordering::Relaxed)
    }
}

/// Step 6's order on candidate pairs: |ũ| (so UL(ũ) = 2^|ũ| − 1), then the larger support of p
/// after the merge, then the lowest codes of u and u′.
type PairKey = (usize, Reverse<usize>, u32, u32);

impl State {
    /// Steps 4–14 for one element p of Q (`buf`: scratch space).
    fn process(&mut self, q: &[usize], k: usize, buf: &mut Vec<usize>) {
        if self.satisfied_small(q, k) == Some(true) {
            return;
        }
        let mut p = std::mem::take(buf);
        self.resolve_into(q, &mut p);
        let mut next = Vec::new();
        while !p.is_empty() && self.support_up_to(&p, k) < k {
            match self.best_pair(&p) {
                Some((u, v)) => {
                    self.merge(u, v);
                    self.resolve_into(&p, &mut next);
                    std::mem::swap(&mut p, &mut next);
                }
                None => {
                    while self.support_up_to(&p, k) < k {
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
            let Some(min_v) = list.iter().filter(|&&v| v != u).map(|&v| self.size[v]).min() else {
                continue;
            };
            let size = (self.size[u] + min_v) as usize;
            if best.as_ref().is_some_and(|b| size > b.0.0) {
                continue;
            }
            let (mut base, mut gained) = (0, 0);
            for (w, g) in gain.iter_mut().enumerate() {
                let others = p.iter().filter(|&&i| i != u).fold(u64::MAX, |acc, &i| acc & self.row(i)[w]);
                base += (others & self.row(u)[w]).count_ones() as usize;
                *g = others & !self.row(u)[w];
                gained += g.count_ones() as usize;
            }
            let fu = self.first_code(u);
            for &v in list.iter().filter(|&&v| v != u && self.size[v] == min_v) {
                let outside = !p.contains(&v);
                // u′ ∉ p gains at most its own records: skip it when even that cannot win.
                let bound = base + self.item_recs[v].len().min(gained);
                if outside && best.as_ref().is_some_and(|b| (size, Reverse(bound), fu, self.first_code(v)) >= b.0) {
                    continue;
                }
                let support = if !outside {
                    rest.clear();
                    rest.extend(p.iter().copied().filter(|&i| i != u && i != v));
                    self.support_merged(u, v, &rest)
                } else if self.item_recs[v].len() <= words {
                    base + self.item_recs[v].iter().filter(|&&r| gain[r as usize / 64] >> (r % 64) & 1 == 1).count()
                } else {
                    base + gain.iter().zip(self.row(v)).map(|(g, b)| (g & b).count_ones() as usize).sum::<usize>()
                };
                let key = (size, Reverse(support), fu, self.first_code(v));
                if best.as_ref().is_none_or(|b| key < b.0) {
                    best = Some((key, (u, v)));
                }
            }
        }
        best.map(|b| b.1)
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
