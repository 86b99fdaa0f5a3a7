//! The full-domain generalization lattice (Samarati; Sweeney; LeFevre et al.'s Incognito).
//!
//! A node fixes one generalization level per quasi-identifier; its successors raise one
//! attribute by one level, its predecessors lower one. The height of a node is the sum of
//! its levels; the bottom is all zeros, the top all attributes at their root. Node ids are the
//! mixed-radix numbers of the level vectors, so a node and its neighbours are found by
//! arithmetic, without storing edges.
//!
//! Every method that chooses a node (kanon, hceil, IPA) runs the one search driver,
//! [`search`]: the method supplies an evaluator (group and judge nodes), a criterion (is a node
//! accepted, what it proves above or below) and a bound (from the levels, or after grouping;
//! the stop rule), and the driver owns the traversal. Its machinery lives beside it:
//! [`order::BoundOrder`] yields nodes cheapest bound first without sorting the lattice,
//! [`order::BottomUp`] by height in batches, [`antichain::Antichain`] holds what monotone
//! criteria let a search infer (predictive tagging) in memory proportional to the frontier, not
//! the lattice, and [`best_first::BestFirst`] orders by a bound known only once a node is
//! grouped (hceil's), grouping a node only once its predecessor's bound puts it at the top.

pub(crate) mod antichain;
pub(crate) mod best_first;
pub(crate) mod order;
pub(crate) mod search;

pub(crate) use antichain::{Antichain, Toward};
pub(crate) use best_first::BestFirst;
pub(crate) use order::{BottomUp, BoundOrder};

#[derive(Debug, Clone)]
pub struct Lattice {
    heights: Vec<u8>,
    strides: Vec<usize>,
    size: usize,
}

pub(crate) type NodeId = usize;

impl Lattice {
    /// A lattice over attributes with the given hierarchy heights.
    pub fn new(heights: &[u8]) -> Self {
        let mut strides = Vec::with_capacity(heights.len());
        let mut size = 1usize;
        for &h in heights {
            strides.push(size);
            size = size.checked_mul(h as usize + 1).expect("lattice size overflows usize");
        }
        Lattice { heights: heights.to_vec(), strides, size }
    }

    pub fn size(&self) -> usize {
        self.size
    }
    pub(crate) fn dims(&self) -> usize {
        self.heights.len()
    }
    /// Hierarchy height of each attribute (the top node's levels).
    pub(crate) fn heights(&self) -> &[u8] {
        &self.heights
    }
    /// Height of the lattice: the top node's height.
    pub(crate) fn max_height(&self) -> usize {
        self.heights.iter().map(|&h| h as usize).sum()
    }
    pub fn bottom(&self) -> NodeId {
        0
    }
    pub fn top(&self) -> NodeId {
        self.size - 1
    }

    pub fn levels(&self, id: NodeId) -> Vec<u8> {
        self.strides.iter().zip(&self.heights).map(|(&s, &h)| ((id / s) % (h as usize + 1)) as u8).collect()
    }

    /// How much a node id grows when attribute `attr` is raised one level.
    pub(crate) fn stride(&self, attr: usize) -> usize {
        self.strides[attr]
    }

    pub(crate) fn level(&self, id: NodeId, attr: usize) -> u8 {
        ((id / self.strides[attr]) % (self.heights[attr] as usize + 1)) as u8
    }

    /// Node id of a level vector; `None` when a level exceeds its attribute's height.
    pub fn id(&self, levels: &[u8]) -> Option<NodeId> {
        if levels.len() != self.heights.len() || levels.iter().zip(&self.heights).any(|(l, h)| l > h) {
            return None;
        }
        Some(levels.iter().zip(&self.strides).map(|(&l, &s)| l as usize * s).sum())
    }

    pub(crate) fn height(&self, id: NodeId) -> usize {
        (0..self.dims()).map(|a| self.level(id, a) as usize).sum()
    }

    /// Direct generalizations: one attribute one level up. Each comes with the attribute raised.
    pub(crate) fn successors(&self, id: NodeId) -> impl Iterator<Item = (usize, NodeId)> + '_ {
        (0..self.dims()).filter(move |&a| self.level(id, a) < self.heights[a]).map(move |a| (a, id + self.strides[a]))
    }

    /// Direct specializations: one attribute one level down, with the attribute lowered.
    pub fn predecessors(&self, id: NodeId) -> impl Iterator<Item = (usize, NodeId)> + '_ {
        (0..self.dims()).filter(move |&a| self.level(id, a) > 0).map(move |a| (a, id - self.strides[a]))
    }

    /// All nodes, grouped by height from the bottom up (ids ascending within a height).
    pub fn by_height(&self) -> Vec<Vec<NodeId>> {
        let mut out = vec![Vec::new(); self.max_height() + 1];
        for id in 0..self.size {
            out[self.height(id)].push(id);
        }
        out
    }

    /// Does `a` generalize `b` (every level of a at least b's)? Tests' oracle; the cache
    /// compares a held grouping's levels instead ([`crate::encode::cheapest_source`]).
    #[cfg(test)]
    pub(crate) fn generalizes(&self, a: NodeId, b: NodeId) -> bool {
        (0..self.dims()).all(|i| self.level(a, i) >= self.level(b, i))
    }
}

/// Format a node as ARX does: `[1, 0, 2]`.
pub(crate) fn format_levels(levels: &[u8]) -> String {
    let parts: Vec<String> = levels.iter().map(|l| l.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Parse a node written as `1,0,2` or `[1, 0, 2]`.
pub(crate) fn parse_levels(s: &str) -> Option<Vec<u8>> {
    s.trim().trim_start_matches('[').trim_end_matches(']').split(',').map(|p| p.trim().parse::<u8>().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adult_lattice_has_2160_nodes() {
        // age 4, sex 1, race 1, marital 2, education 3, country 2, workclass 2
        let l = Lattice::new(&[4, 1, 1, 2, 3, 2, 2]);
        assert_eq!(l.size(), 2160);
        assert_eq!(l.max_height(), 15);
        assert_eq!(l.levels(l.top()), vec![4, 1, 1, 2, 3, 2, 2]);
        assert_eq!(l.by_height().iter().map(Vec::len).sum::<usize>(), 2160);
    }

    #[test]
    fn neighbours_are_one_step_apart() {
        let l = Lattice::new(&[2, 1, 3]);
        for id in 0..l.size() {
            assert_eq!(l.id(&l.levels(id)), Some(id));
            for (a, s) in l.successors(id) {
                assert_eq!(l.height(s), l.height(id) + 1);
                assert_eq!(l.level(s, a), l.level(id, a) + 1);
                assert!(l.predecessors(s).any(|(_, p)| p == id));
                assert!(l.generalizes(s, id));
            }
        }
        assert_eq!(l.successors(l.top()).count(), 0);
        assert_eq!(l.predecessors(l.bottom()).count(), 0);
        assert_eq!(parse_levels("[1, 0, 2]"), Some(vec![1, 0, 2]));
        assert_eq!(format_levels(&[1, 0, 2]), "[1, 0, 2]");
    }
}
