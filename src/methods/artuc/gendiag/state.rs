//! GenDiag's working state: the cluster's items, which records hold them, and support counts.
//!
//! Supports are the hot path (one per element of Q, and Q holds nearly every code pair of a
//! sparse cluster), so every item keeps its records twice: as an ascending list and as a row of
//! one flat bitset. A set's support counts over the shortest list or ANDs the rows, whichever
//! touches fewer words.

use crate::encode::hash::{FastMap, fast_map};
use std::collections::HashMap;
use std::rc::Rc;

pub(super) struct State {
    /// Local code id → leaf code, ascending (so local ids order like codes).
    pub(crate) codes: Vec<u32>,
    /// Per record, its local code ids, ascending. Shared (like `code_recs`) so that Q's tail
    /// can be walked from the original codes while the state changes.
    pub(crate) rec_codes: Rc<Vec<Vec<usize>>>,
    /// Per local code, the records holding it, ascending.
    pub(crate) code_recs: Rc<Vec<Vec<u32>>>,
    /// Local code → its item; items start as one per code.
    pub(crate) item_of: Vec<Option<usize>>,
    /// Item → local codes, ascending (empty once merged away).
    pub(crate) items: Vec<Vec<usize>>,
    /// Item → |items[item]| and its lowest leaf code (u32::MAX once merged away), kept dense:
    /// Step 6 reads them for every candidate.
    pub(crate) size: Vec<u32>,
    first: Vec<u32>,
    /// Per alive item, the records holding it, ascending.
    pub(crate) item_recs: Vec<Vec<u32>>,
    /// The same as bitset rows of `words` words, item after item.
    bits: Vec<u64>,
    words: usize,
    /// Item → its constraint code set (dense id), fixed: merges stay within a set.
    pub(crate) item_set: Vec<Option<usize>>,
    /// Per code set, its alive items (any order) and each item's position there.
    pub(crate) set_items: Vec<Vec<usize>>,
    set_pos: Vec<usize>,
    pub(crate) alive: Vec<bool>,
    /// True until the first merge or suppression: items are the codes themselves.
    pub(crate) fresh: bool,
    pub(crate) suppressed: Vec<u32>,
    /// Σ suppressed: the codes suppressed so far.
    pub(crate) suppressed_total: u64,
}

impl State {
    pub(crate) fn new(records: &[&[u32]], set_of_code: &[Option<u32>]) -> Self {
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
        let mut bits = vec![0u64; words * n];
        let rec_codes: Vec<Vec<usize>> = records
            .iter()
            .enumerate()
            .map(|(r, cs)| {
                let mut v: Vec<usize> = cs.iter().map(|c| local[c]).collect();
                v.sort_unstable();
                v.dedup();
                for &c in &v {
                    code_recs[c].push(r as u32);
                    bits[c * words + r / 64] |= 1 << (r % 64);
                }
                v
            })
            .collect();
        let (item_set, set_items, set_pos) = code_sets(&codes, set_of_code);
        State {
            codes: codes.clone(),
            rec_codes: Rc::new(rec_codes),
            item_recs: code_recs.clone(),
            code_recs: Rc::new(code_recs),
            item_of: (0..n).map(Some).collect(),
            items: (0..n).map(|i| vec![i]).collect(),
            size: vec![1; n],
            first: codes.clone(),
            bits,
            words,
            item_set,
            set_items,
            set_pos,
            alive: vec![true; n],
            fresh: true,
            suppressed: vec![0; records.len()],
            suppressed_total: 0,
        }
    }

    pub(crate) fn words(&self) -> usize {
        self.words
    }

    #[inline]
    pub(crate) fn row(&self, item: usize) -> &[u64] {
        &self.bits[item * self.words..(item + 1) * self.words]
    }

    #[inline]
    pub(crate) fn holds(&self, item: usize, r: u32) -> bool {
        self.bits[item * self.words + r as usize / 64] >> (r % 64) & 1 == 1
    }

    pub(crate) fn record_items(&self, r: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self.rec_codes[r].iter().filter_map(|&c| self.item_of[c]).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Records holding every item of `p` (alive items).
    pub(crate) fn support(&self, p: &[usize]) -> usize {
        self.support_up_to(p, usize::MAX)
    }

    /// [`State::support`], counted no further than `cap`: whether a set reaches support k
    /// needs only k of its records, and most of Q is satisfied by the time it is reached (at
    /// m = 3 Q is mostly triples, whose full count was most of a run).
    pub(crate) fn support_up_to(&self, p: &[usize], cap: usize) -> usize {
        match *p {
            [] => self.suppressed.len().min(cap),
            [a] => self.item_recs[a].len().min(cap),
            [a, b] => self.support_pair(a, b).min(cap),
            [a, b, c] => self.support_triple(a, b, c, cap),
            _ => {
                let s = *p.iter().min_by_key(|&&i| self.item_recs[i].len()).expect("non-empty");
                if self.item_recs[s].len() > self.words {
                    let mut n = 0;
                    for w in 0..self.words {
                        n += p.iter().fold(u64::MAX, |acc, &i| acc & self.row(i)[w]).count_ones() as usize;
                        if n >= cap {
                            return cap;
                        }
                    }
                    return n;
                }
                self.item_recs[s].iter().filter(|&&r| p.iter().all(|&i| i == s || self.holds(i, r))).take(cap).count()
            }
        }
    }

    /// [`State::support_up_to`] of three distinct alive items (any order), without the
    /// general fold: at m = 3 one is counted for nearly every triple of Q.
    #[inline]
    pub(crate) fn support_triple(&self, a: usize, b: usize, c: usize, cap: usize) -> usize {
        let len = |i: usize| self.item_recs[i].len();
        let (s, o, p) = if len(a) <= len(b) && len(a) <= len(c) {
            (a, b, c)
        } else if len(b) <= len(c) {
            (b, a, c)
        } else {
            (c, a, b)
        };
        if len(s) > self.words {
            let mut n = 0;
            for ((x, y), z) in self.row(s).iter().zip(self.row(o)).zip(self.row(p)) {
                n += (x & y & z).count_ones() as usize;
                if n >= cap {
                    return cap;
                }
            }
            return n;
        }
        self.item_recs[s].iter().filter(|&&r| self.holds(o, r) && self.holds(p, r)).take(cap).count()
    }

    /// The common case of [`State::support`] (m = 2), without the general fold.
    #[inline]
    fn support_pair(&self, a: usize, b: usize) -> usize {
        let (s, o) = if self.item_recs[a].len() <= self.item_recs[b].len() { (a, b) } else { (b, a) };
        if self.item_recs[s].len() > self.words {
            return self.row(s).iter().zip(self.row(o)).map(|(x, y)| (x & y).count_ones() as usize).sum();
        }
        self.item_recs[s].iter().filter(|&&r| self.holds(o, r)).count()
    }

    /// The support of `rest` ∪ {u ∪ v}: records holding u or v and every item of `rest`, over
    /// the bitsets or the shortest record lists, whichever is shorter.
    pub(crate) fn support_merged(&self, u: usize, v: usize, rest: &[usize]) -> usize {
        let (ru, rv) = (&self.item_recs[u], &self.item_recs[v]);
        let shortest =
            rest.iter().map(|&i| self.item_recs[i].len()).min().unwrap_or(usize::MAX).min(ru.len() + rv.len());
        if shortest > self.words * (rest.len() + 1) {
            return (0..self.words)
                .map(|w| {
                    let all = rest.iter().fold(u64::MAX, |acc, &i| acc & self.row(i)[w]);
                    ((self.row(u)[w] | self.row(v)[w]) & all).count_ones() as usize
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
    #[inline]
    pub(crate) fn first_code(&self, item: usize) -> u32 {
        self.first[item]
    }

    /// Follow merges: the alive item that `item` became, or None if it was suppressed.
    ///
    /// Item ids are code ids (item i starts as code i, and a merge keeps the first item's id),
    /// and an item holds its own code until it is merged away or suppressed, so the item
    /// `item` became is the one holding code `item`: one lookup, no chain of merges to follow
    /// (following chains was a quarter of an m = 3 run).
    #[inline]
    pub(crate) fn resolve(&self, item: usize) -> Option<usize> {
        self.item_of[item]
    }

    /// The alive items `p`'s items became, ascending, into `out`.
    pub(crate) fn resolve_into(&self, p: &[usize], out: &mut Vec<usize>) {
        out.clear();
        for &i in p {
            if let Some(j) = self.resolve(i) {
                out.push(j);
            }
        }
        if let [a, b] = out[..] {
            // Pairs are nearly all of Q: no sort call for them.
            match a.cmp(&b) {
                std::cmp::Ordering::Greater => out.swap(0, 1),
                std::cmp::Ordering::Equal => out.truncate(1),
                std::cmp::Ordering::Less => {}
            }
        } else {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// Whether p's image already has support ≥ k, for p of at most three items without
    /// building the image (most of Q is satisfied by the time it is reached); None when p is
    /// larger or a singleton that was suppressed (Steps 4–14 decide those).
    ///
    /// Asked only in Q's order: by then every proper subset of a pair or triple p has been
    /// processed or had support ≥ k (a subset has at least p's support, and within a support
    /// smaller sets come first), so an image of p with fewer items than p (an item suppressed,
    /// or two codes in one item) is a subset's image and satisfied, with no count (in a
    /// cluster of fewer than k records every item is suppressed by then, and nothing is left
    /// to do either).
    #[inline]
    pub(crate) fn satisfied_small(&self, p: &[usize], k: usize) -> Option<bool> {
        match *p {
            [a] => {
                let x = self.resolve(a)?;
                Some(self.item_recs[x].len() >= k)
            }
            [a, b] => Some(match (self.resolve(a), self.resolve(b)) {
                (Some(x), Some(y)) if x != y => self.support_pair(x, y) >= k,
                _ => true,
            }),
            [a, b, c] => Some(match (self.resolve(a), self.resolve(b), self.resolve(c)) {
                (Some(x), Some(y), Some(z)) if x != y && y != z && x != z => {
                    let mut t = [x, y, z];
                    t.sort_unstable();
                    self.support_up_to(&t, k) >= k
                }
                _ => true,
            }),
            _ => None,
        }
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
    pub(crate) fn merge(&mut self, u: usize, v: usize) {
        self.fresh = false;
        let moved = std::mem::take(&mut self.items[v]);
        for &c in &moved {
            self.item_of[c] = Some(u);
        }
        self.items[u].extend(moved);
        self.items[u].sort_unstable();
        self.size[u] += std::mem::take(&mut self.size[v]);
        self.first[u] = self.first[u].min(std::mem::replace(&mut self.first[v], u32::MAX));
        let w = self.words;
        for i in 0..w {
            self.bits[u * w + i] |= self.bits[v * w + i];
        }
        let vr = std::mem::take(&mut self.item_recs[v]);
        let ur = std::mem::take(&mut self.item_recs[u]);
        self.item_recs[u] = union_sorted(&ur, &vr);
        self.unlist(v);
        self.alive[v] = false;
    }

    /// Steps 11–12: suppress e from every record of the cluster, counting the codes each loses.
    pub(crate) fn suppress(&mut self, e: usize) {
        self.fresh = false;
        for &c in &self.items[e] {
            self.item_of[c] = None;
            self.suppressed_total += self.code_recs[c].len() as u64;
            for &r in &self.code_recs[c] {
                self.suppressed[r as usize] += 1;
            }
        }
        self.item_recs[e] = Vec::new();
        let w = self.words;
        self.bits[e * w..(e + 1) * w].fill(0);
        self.unlist(e);
        self.alive[e] = false;
    }
}

/// Per local code its constraint code set (dense ids), per set its codes, and each code's
/// position in its set's list.
#[allow(clippy::type_complexity)]
fn code_sets(codes: &[u32], set_of_code: &[Option<u32>]) -> (Vec<Option<usize>>, Vec<Vec<usize>>, Vec<usize>) {
    let mut set_ids: HashMap<u32, usize> = HashMap::new();
    let mut set_items: Vec<Vec<usize>> = Vec::new();
    let mut set_pos = vec![0; codes.len()];
    let item_set = codes
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
    (item_set, set_items, set_pos)
}

/// The union of two ascending lists.
fn union_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    crate::sorted::merge_by_key(a, b, |&x| x, |x, _| x)
}
