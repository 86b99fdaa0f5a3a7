//! Lattice nodes in ascending order of a bound known only once a node is grouped (hceil's
//! RCE bound needs each class's size and cell), found lazily from the bottom up.
//!
//! [`super::BoundOrder`] orders by a bound computed from the levels alone. Here the caller
//! groups the nodes this order hands it ([`BestFirst::frontier`]) and offers their bounds back
//! ([`BestFirst::offer`]); it takes nodes cheapest first ([`BestFirst::take`]). A node's
//! successors are handed out for grouping only once it has been taken, so the nodes grouped
//! are the nodes taken and their successors, not the lattice.
//!
//! Valid only for a bound that does not decrease when a level is raised (a monotone bound):
//! then every node whose bound is at most `b` is reached from the bottom through nodes whose
//! bounds are at most `b`, so when the cheapest node left exceeds the best value found, no
//! node not yet taken can beat it: the same optimum as ordering every node. A criterion that
//! is monotone the other way (a ceiling that, once passed, stays passed upward) prunes too:
//! a node the caller does not offer is never expanded, and everything above it passes the
//! ceiling as well.

use super::{Lattice, NodeId};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

/// A bound compared lexicographically (an objective's key, e.g. hceil's (RCE, 0) or
/// (counterfeits, RCE)).
pub(crate) use super::search::Key as Bound;

#[derive(Debug, Clone, Copy)]
struct Entry {
    bound: Bound,
    height: usize,
    id: NodeId,
}

crate::sorted::eq_and_partial_ord_from_ord!(Entry);
impl Ord for Entry {
    /// Reversed: the heap's maximum is the cheapest node, ties by (height, id).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.bound.0.total_cmp(&self.bound.0))
            .then(o.bound.1.total_cmp(&self.bound.1))
            .then(o.height.cmp(&self.height))
            .then(o.id.cmp(&self.id))
    }
}

/// The best-first order over one lattice.
pub(crate) struct BestFirst<'a> {
    lattice: &'a Lattice,
    heap: BinaryHeap<Entry>,
    /// Nodes ever handed out for grouping: a node is reached from several below it.
    seen: HashSet<NodeId>,
    /// Nodes to group next: the bottom, then the successors of taken nodes.
    frontier: Vec<NodeId>,
}

impl<'a> BestFirst<'a> {
    pub(crate) fn new(lattice: &'a Lattice) -> Self {
        let bottom = lattice.bottom();
        BestFirst { lattice, heap: BinaryHeap::new(), seen: HashSet::from([bottom]), frontier: vec![bottom] }
    }

    /// The nodes the caller must group and [`offer`](BestFirst::offer) (or drop, when they
    /// fail a criterion monotone upward) before taking more; ascending ids.
    pub(crate) fn frontier(&mut self) -> Vec<NodeId> {
        let mut out = std::mem::take(&mut self.frontier);
        out.sort_unstable();
        out
    }

    /// A grouped node's bound.
    pub(crate) fn offer(&mut self, id: NodeId, bound: Bound) {
        self.heap.push(Entry { bound, height: self.lattice.height(id), id });
    }

    /// Up to `max` cheapest nodes, in order, while `open(bound)` holds; their successors join
    /// the frontier. Call only with an empty frontier, so that no node cheaper than those
    /// taken is still ungrouped.
    pub(crate) fn take(&mut self, max: usize, open: impl Fn(Bound) -> bool) -> Vec<(NodeId, Bound)> {
        debug_assert!(self.frontier.is_empty(), "group the frontier first");
        let mut out = Vec::new();
        while out.len() < max
            && let Some(e) = self.heap.peek().copied()
            && open(e.bound)
        {
            self.heap.pop();
            for (_, s) in self.lattice.successors(e.id) {
                if self.seen.insert(s) {
                    self.frontier.push(s);
                }
            }
            out.push((e.id, e.bound));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a monotone bound, nodes taken one at a time come out in the order of sorting the
    /// whole lattice (in batches, the same nodes), and a node dropped from the frontier takes
    /// its whole up-set with it.
    #[test]
    fn yields_the_sorted_lattice_and_drops_up_sets() {
        let l = Lattice::new(&[2, 1, 3, 2]);
        let w = [0.3, 0.05, 0.1, 0.2];
        let bound = |id: NodeId| {
            let lv = l.levels(id);
            let b: f64 = lv.iter().zip(&w).map(|(&x, w)| x as f64 * w).sum();
            (b.floor(), b)
        };
        let run = |max: usize, dropped: &dyn Fn(NodeId) -> bool| {
            let mut order = BestFirst::new(&l);
            let mut got = Vec::new();
            loop {
                for n in order.frontier() {
                    if !dropped(n) {
                        order.offer(n, bound(n));
                    }
                }
                let taken = order.take(max, |_| true);
                if taken.is_empty() {
                    return got;
                }
                got.extend(taken.into_iter().map(|(n, _)| n));
            }
        };
        let key = |&n: &NodeId| {
            let (a, b) = bound(n);
            (a, b, l.height(n), n)
        };
        let mut want: Vec<NodeId> = (0..l.size()).collect();
        want.sort_by(|x, y| key(x).partial_cmp(&key(y)).unwrap());
        assert_eq!(run(1, &|_| false), want);
        let mut batched = run(3, &|_| false);
        batched.sort_by(|x, y| key(x).partial_cmp(&key(y)).unwrap());
        assert_eq!(batched, want);
        let over = |n: NodeId| l.level(n, 2) >= 2;
        let kept: Vec<NodeId> = want.iter().copied().filter(|&n| !over(n)).collect();
        assert_eq!(run(1, &over), kept);
    }
}
