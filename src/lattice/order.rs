//! Lattice nodes in ascending order of a monotone bound, produced lazily, skipping whole
//! regions a search has ruled out.
//!
//! Searches that prove optimality visit nodes cheapest-bound first and usually stop long
//! before the top; sorting the whole lattice up front costs memory and time proportional to
//! it (10^9 nodes at 15 quasi-identifiers). Instead a heap seeded with the bottom yields the
//! nodes in order, each pushing its successors: memory grows with the nodes the search
//! actually passes, not with the lattice.
//!
//! Known-failing regions (down-sets of an [`Antichain`]) are jumped over rather than walked:
//! a queued node inside the down-set of a kept node `f` is replaced by the nodes that leave it
//! in one attribute (that attribute set to `f`'s level + 1), the only ways out of the region
//! above it. So the next node outside, and with it a proven lower bound of everything not yet
//! ruled out, is found after a few jumps per kept node, however many nodes the region holds
//! (a branch and bound over the ruled-out regions; at 12 quasi-identifiers they hold millions).
//! Up-sets (nodes whose generalizations are all ruled out) are dropped with everything above.

use super::Antichain;
use super::{Lattice, NodeId};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

/// One queued node: ordered by (bound, height, id), the order the searches break ties in.
#[derive(Debug, Clone, Copy)]
struct Entry {
    bound: f64,
    height: usize,
    id: NodeId,
}

crate::sorted::eq_and_partial_ord_from_ord!(Entry);
impl Ord for Entry {
    /// Reversed: the heap's maximum is the cheapest node.
    fn cmp(&self, o: &Self) -> Ordering {
        o.bound.total_cmp(&self.bound).then(o.height.cmp(&self.height)).then(o.id.cmp(&self.id))
    }
}

/// Yields `(node, bound)` in ascending (bound, height, id). `bound` must not decrease when
/// a level is raised (every generalization-only loss qualifies, and a constant does): then a
/// node's key exceeds that of every node below it and the heap order is the sorted order.
pub(crate) struct BoundOrder<'a, F: Fn(&[u8]) -> f64> {
    lattice: &'a Lattice,
    bound: F,
    heap: BinaryHeap<Entry>,
    /// Nodes ever queued: a node is reached from several below it.
    queued: HashSet<NodeId>,
}

impl<'a, F: Fn(&[u8]) -> f64> BoundOrder<'a, F> {
    pub(crate) fn new(lattice: &'a Lattice, bound: F) -> Self {
        let mut order = BoundOrder { lattice, bound, heap: BinaryHeap::new(), queued: HashSet::new() };
        let bottom = lattice.bottom();
        order.push(bottom, &lattice.levels(bottom));
        order
    }

    fn push(&mut self, id: NodeId, levels: &[u8]) {
        if self.queued.insert(id) {
            self.heap.push(Entry { bound: (self.bound)(levels), height: levels.iter().map(|&l| l as usize).sum(), id });
        }
    }

    /// A lower bound of every node not yet yielded: the next node's bound.
    #[cfg(test)]
    fn peek_bound(&self) -> Option<f64> {
        self.heap.peek().map(|e| e.bound)
    }

    /// The next node outside the down-sets of `below` and the up-sets of `above`, without
    /// yielding it; ruled-out queued nodes are replaced by the ways out of their region.
    /// Afterwards [`BoundOrder::peek_bound`] is that node's bound, a lower bound of every node
    /// not ruled out and not yet yielded.
    pub(crate) fn peek_outside(&mut self, below: &Antichain, above: &Antichain) -> Option<(NodeId, f64)> {
        loop {
            let e = *self.heap.peek()?;
            let levels = self.lattice.levels(e.id);
            if above.covers(&levels) {
                // Everything above is ruled out too, and reached through here or another
                // ruled-out node, or through a node outside: nothing to queue.
                self.heap.pop();
                continue;
            }
            let Some(f) = below.cover(&levels) else { return Some((e.id, e.bound)) };
            let f = f.to_vec();
            self.heap.pop();
            let mut out = levels;
            for a in 0..out.len() {
                if f[a] < self.lattice.heights()[a] {
                    let l = out[a];
                    out[a] = f[a] + 1;
                    let id = self.lattice.id(&out).expect("within the heights");
                    self.push(id, &out);
                    out[a] = l;
                }
            }
        }
    }

    /// The next node outside the ruled-out regions (see [`BoundOrder::peek_outside`]).
    pub(crate) fn next_outside(&mut self, below: &Antichain, above: &Antichain) -> Option<(NodeId, f64)> {
        let (id, bound) = self.peek_outside(below, above)?;
        self.heap.pop();
        let mut levels = self.lattice.levels(id);
        for a in 0..levels.len() {
            if levels[a] < self.lattice.heights()[a] {
                levels[a] += 1;
                self.push(id + self.lattice.stride(a), &levels);
                levels[a] -= 1;
            }
        }
        Some((id, bound))
    }
}

/// The lattice bottom-up (by height, ids ascending within a height) in batches of nodes of one
/// height, skipping the up-sets of an [`Antichain`] the caller grows between batches: the scan
/// of methods whose node test only gets harder upward (hceil's ceiling), or that test every
/// node (IPA). A batch never holds a node above another, so each node is yielded after every
/// node below it has been tested, and none is yielded above a node already put in `above`.
/// Memory grows with the nodes passed, not with the lattice.
pub(crate) struct BottomUp<'a> {
    order: BoundOrder<'a, fn(&[u8]) -> f64>,
    lattice: &'a Lattice,
    none: Antichain,
}

impl<'a> BottomUp<'a> {
    /// Nodes per batch for callers grouping a batch on all cores: enough to keep the cores
    /// busy, few enough that the batch's groupings stay a small part of memory.
    pub(crate) const BATCH: usize = 256;

    pub(crate) fn new(lattice: &'a Lattice) -> Self {
        let flat: fn(&[u8]) -> f64 = |_| 0.0;
        BottomUp {
            order: BoundOrder::new(lattice, flat),
            lattice,
            none: Antichain::new(super::Toward::Down, lattice.dims()),
        }
    }

    /// The next nodes outside the up-sets of `above`, at most `max`, all of the same height;
    /// empty when none is left.
    pub(crate) fn next_batch(&mut self, above: &Antichain, max: usize) -> Vec<NodeId> {
        let mut batch = Vec::new();
        let mut height = None;
        while batch.len() < max.max(1)
            && let Some((id, _)) = self.order.peek_outside(&self.none, above)
            && height.is_none_or(|h| h == self.lattice.height(id))
        {
            height = Some(self.lattice.height(id));
            self.order.next_outside(&self.none, above);
            batch.push(id);
        }
        batch
    }
}

impl<F: Fn(&[u8]) -> f64> Iterator for BoundOrder<'_, F> {
    type Item = (NodeId, f64);

    fn next(&mut self) -> Option<(NodeId, f64)> {
        let none = Antichain::new(super::Toward::Down, self.lattice.dims());
        self.next_outside(&none, &Antichain::new(super::Toward::Up, self.lattice.dims()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_every_node_once_in_sorted_order() {
        let l = Lattice::new(&[2, 1, 3, 2]);
        let weights = [0.3, 0.05, 0.1, 0.2];
        let bound = |lv: &[u8]| lv.iter().zip(&weights).map(|(&x, w)| x as f64 * w).sum::<f64>();
        let got: Vec<NodeId> = BoundOrder::new(&l, bound).map(|(id, _)| id).collect();
        let mut want: Vec<NodeId> = (0..l.size()).collect();
        want.sort_by(|&a, &b| {
            bound(&l.levels(a)).total_cmp(&bound(&l.levels(b))).then(l.height(a).cmp(&l.height(b))).then(a.cmp(&b))
        });
        assert_eq!(got, want);
        // A constant bound gives the bottom-up order by height.
        let heights: Vec<usize> = BoundOrder::new(&l, |_| 0.0).map(|(id, _)| l.height(id)).collect();
        assert!(heights.windows(2).all(|w| w[0] <= w[1]) && heights.len() == l.size());
    }

    /// With regions ruled out (growing as it goes), the order yields exactly the nodes outside
    /// them, in the same sorted order, and its bound never passes a node still to come.
    #[test]
    fn skips_ruled_out_regions_and_keeps_the_order() {
        use crate::lattice::Toward;
        let l = Lattice::new(&[3, 1, 2, 4, 2]);
        let weights = [0.3, 0.05, 0.1, 0.2, 0.07];
        let bound = |lv: &[u8]| lv.iter().zip(&weights).map(|(&x, w)| x as f64 * w).sum::<f64>();
        let mut below = Antichain::new(Toward::Down, 5);
        let mut above = Antichain::new(Toward::Up, 5);
        below.insert(&[1, 1, 0, 2, 1]);
        above.insert(&[2, 0, 2, 3, 0]);
        let mut order = BoundOrder::new(&l, bound);
        let mut got = Vec::new();
        while let Some((id, b)) = order.next_outside(&below, &above) {
            got.push(id);
            // Rule out more as the search would: a down-set once a third of the way through.
            if got.len() == 40 {
                below.insert(&[3, 0, 1, 3, 0]);
                below.insert(&[0, 1, 2, 4, 0]);
            }
            let rest = order.peek_bound();
            assert!(rest.is_none_or(|r| r >= b), "the order never goes back");
        }
        let outside = |id: NodeId| !below.covers(&l.levels(id)) && !above.covers(&l.levels(id));
        let mut want: Vec<NodeId> = (0..l.size()).filter(|&id| outside(id) || got.contains(&id)).collect();
        want.sort_by(|&a, &b| {
            bound(&l.levels(a)).total_cmp(&bound(&l.levels(b))).then(l.height(a).cmp(&l.height(b))).then(a.cmp(&b))
        });
        assert_eq!(got, want);
        assert!(got.len() < l.size());
    }

    /// Every node a bottom-up scan yields, in batches of at most `max`, the up-set of each
    /// yielded node for which `over` holds put in `above` after its batch.
    fn bottom_up(l: &Lattice, max: usize, over: impl Fn(NodeId) -> bool) -> Vec<NodeId> {
        use crate::lattice::{BottomUp, Toward};
        let mut above = Antichain::new(Toward::Up, l.dims());
        let mut scan = BottomUp::new(l);
        let mut got = Vec::new();
        loop {
            let batch = scan.next_batch(&above, max);
            if batch.is_empty() {
                return got;
            }
            assert!(batch.len() <= max && batch.iter().all(|&n| l.height(n) == l.height(batch[0])));
            for &n in batch.iter().filter(|&&n| over(n)) {
                above.insert(&l.levels(n));
            }
            got.extend(batch);
        }
    }

    /// Bottom-up batches are the lattice by height with ids ascending, a batch never spans two
    /// heights, and the up-sets of nodes put in `above` between batches are never yielded,
    /// while everything else is.
    #[test]
    fn bottom_up_batches_follow_the_heights_and_skip_up_sets() {
        let l = Lattice::new(&[2, 1, 3, 2]);
        assert_eq!(bottom_up(&l, 5, |_| false), l.by_height().concat());
        let over = |id: NodeId| l.level(id, 0) + l.level(id, 2) >= 3;
        let got = bottom_up(&l, 3, over);
        // Kept: nodes with no node over the threshold strictly below them.
        let want: Vec<NodeId> = l
            .by_height()
            .concat()
            .into_iter()
            .filter(|&n| !(0..l.size()).any(|m| m != n && l.generalizes(n, m) && over(m)))
            .collect();
        assert_eq!(got, want);
        assert!(got.len() < l.size());
    }
}
