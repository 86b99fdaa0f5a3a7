//! Lattice nodes in ascending order of a bound known only once a node is grouped (hceil's
//! RCE bound needs each class's size and cell), found lazily from the bottom up.
//!
//! [`super::BoundOrder`] orders by a bound computed from the levels alone. Here a node enters
//! the order ungrouped, with its taken predecessor's bound as a stand-in; the caller groups the
//! ungrouped nodes the order hands it ([`BestFirst::ungrouped`]) and offers their bounds back
//! ([`BestFirst::offer`]); it takes grouped nodes cheapest first ([`BestFirst::take`]) and then
//! queues their successors ([`BestFirst::expand`]). A node is grouped only once it is the
//! cheapest entry left, so the nodes grouped are those whose predecessor's bound could still
//! beat the best, not every successor of every taken node.
//!
//! Valid only for a bound that does not decrease when a level is raised (a monotone bound):
//! then the stand-in is a lower bound of the node's own, every node whose bound is at most
//! `b` is reached from the bottom through nodes whose bounds are at most `b`, and a grouped
//! node at the top of the order is cheaper than every node left, grouped or not. So nodes are
//! taken in the order of grouping every successor first (the same nodes, in the same
//! batches), and when the cheapest entry left exceeds the best value found, no node not yet
//! taken can beat it. A criterion that is monotone the other way (a ceiling that, once
//! passed, stays passed upward) prunes too: a node the caller does not offer is never
//! expanded, and everything above it passes the ceiling as well.

use super::search::Key;
use super::{Lattice, NodeId};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The node's bound once grouped, else its taken predecessor's (a lower bound of it).
    bound: Key,
    height: usize,
    id: NodeId,
    grouped: bool,
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
    /// Nodes ever queued: a node is reached from several below it.
    seen: HashSet<NodeId>,
}

impl<'a> BestFirst<'a> {
    /// The bottom queued ungrouped, below every bound.
    pub(crate) fn new(lattice: &'a Lattice) -> Self {
        let bottom = lattice.bottom();
        let entry = Entry { bound: (f64::NEG_INFINITY, f64::NEG_INFINITY), height: 0, id: bottom, grouped: false };
        BestFirst { lattice, heap: BinaryHeap::from([entry]), seen: HashSet::from([bottom]) }
    }

    /// Up to `max` ungrouped nodes from the top of the order while `open(stand-in)` holds and
    /// no grouped node is cheaper: the caller must group them and [`offer`](BestFirst::offer)
    /// them (or drop them, when they fail a criterion monotone upward).
    pub(crate) fn ungrouped(&mut self, max: usize, open: impl Fn(Key) -> bool) -> Vec<NodeId> {
        let mut out = Vec::new();
        while out.len() < max
            && let Some(e) = self.heap.peek().copied()
            && !e.grouped
            && open(e.bound)
        {
            self.heap.pop();
            out.push(e.id);
        }
        out
    }

    /// A grouped node's bound.
    pub(crate) fn offer(&mut self, id: NodeId, bound: Key) {
        self.heap.push(Entry { bound, height: self.lattice.height(id), id, grouped: true });
    }

    /// Up to `max` cheapest grouped nodes, in order, while `open(bound)` holds and the top of
    /// the order is grouped; call [`ungrouped`](BestFirst::ungrouped) and take again until it
    /// returns nothing.
    pub(crate) fn take(&mut self, max: usize, open: impl Fn(Key) -> bool) -> Vec<(NodeId, Key)> {
        let mut out = Vec::new();
        while out.len() < max
            && let Some(e) = self.heap.peek().copied()
            && e.grouped
            && open(e.bound)
        {
            self.heap.pop();
            out.push((e.id, e.bound));
        }
        out
    }

    /// Queue the successors of taken nodes, ungrouped, each at the bound of the first taken
    /// node it follows. Called once a batch is taken, so that a batch is the one grouping every
    /// successor first would take.
    pub(crate) fn expand(&mut self, taken: &[(NodeId, Key)]) {
        for &(id, bound) in taken {
            for (_, s) in self.lattice.successors(id) {
                if self.seen.insert(s) {
                    self.heap.push(Entry { bound, height: self.lattice.height(s), id: s, grouped: false });
                }
            }
        }
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
                let mut taken = Vec::new();
                while taken.len() < max {
                    let todo = order.ungrouped(max, |_| true);
                    for &n in todo.iter().filter(|&&n| !dropped(n)) {
                        order.offer(n, bound(n));
                    }
                    if todo.is_empty() {
                        let more = order.take(max - taken.len(), |_| true);
                        if more.is_empty() {
                            break;
                        }
                        taken.extend(more);
                    }
                }
                if taken.is_empty() {
                    return got;
                }
                order.expand(&taken);
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
