//! Grouping every node of a lattice, each node rolled up from an already-grouped direct
//! specialization: bottom-up by height ([`for_each_node`]), or depth-first on all cores with
//! histograms ([`NodeCache::map_every`], the evaluator [`EveryNode`] of the search driver's
//! traversal of every node, for methods that score every node).

use super::{Cached, FrequencyTable, Grouping, NodeCache, group, rollup};
use crate::error::Result;
use crate::lattice::search::Evaluator;
use crate::lattice::{Lattice, NodeId};
use crate::progress::Progress;
use std::collections::HashMap;

/// Call `f` with the grouping of every node of `lattice`, height by height from the bottom.
/// Only two heights of groupings are alive at a time.
pub fn for_each_node(
    ft: &FrequencyTable,
    lattice: &Lattice,
    mut f: impl FnMut(NodeId, &Grouping) -> Result<()>,
) -> Result<()> {
    let hs = ft.hierarchies();
    let (bottom, _) = group(ft, &lattice.levels(lattice.bottom()))?;
    f(lattice.bottom(), &bottom)?;
    let mut prev: HashMap<NodeId, Grouping> = HashMap::from([(lattice.bottom(), bottom)]);
    for ids in lattice.by_height().into_iter().skip(1) {
        let mut cur = HashMap::with_capacity(ids.len());
        for id in ids {
            // Fewest classes to relabel: the cheapest predecessor.
            let (attr, pred) = lattice
                .predecessors(id)
                .min_by_key(|(_, p)| prev[p].len())
                .expect("every node above the bottom has a predecessor");
            let (g, _) = rollup(&hs, &prev[&pred], attr)?;
            f(id, &g)?;
            cur.insert(id, g);
        }
        prev = cur;
    }
    Ok(())
}

/// Subtrees of [`NodeCache::map_every`] handed to the cores: enough to balance them.
const SUBTREES: usize = 64;

impl NodeCache<'_> {
    /// `f(node, classes)` for every node of the lattice for which `wanted` holds, in node-id
    /// order. `wanted` must be a public rule closed upward (a node's generalizations are
    /// wanted when it is): a node not wanted is grouped when it is the way to wanted nodes,
    /// and a subtree whose top is not wanted is skipped.
    ///
    /// Depth-first, so that the groupings alive are one path per core, not a height of the
    /// lattice (thousands of nodes of thousands of classes): each node is grouped from its
    /// parent in a spanning tree, the node with its first raised attribute lowered, which
    /// is a direct specialization. The last attributes split the lattice into subtrees (one
    /// per combination of their levels, all other levels 0), each grouped from the bottom at
    /// its root and walked on one core; the first attributes are walked inside them. Every
    /// node is grouped the same from any specialization ([`super::generalize_to`]), and
    /// results are sorted by node, so neither the split nor the threads change them.
    pub fn map_every<T: Send>(
        &self,
        progress: &dyn Progress,
        wanted: impl Fn(NodeId) -> bool + Sync,
        f: impl Fn(NodeId, &Cached) -> Result<T> + Sync,
    ) -> Result<Vec<(NodeId, T)>> {
        let heights = self.lattice.heights();
        // Walked inside the subtrees: the attributes before `inner`.
        let mut inner = heights.len();
        let mut roots = 1usize;
        while inner > 0 && roots < SUBTREES {
            inner -= 1;
            roots *= heights[inner] as usize + 1;
        }
        let stride = if inner < heights.len() { self.lattice.stride(inner) } else { 0 };
        let roots: Vec<NodeId> = (0..roots).map(|i| i * stride).collect();
        let walk = Walk { cache: self, inner, wanted: &wanted, f: &f };
        let done = crate::parallel::map_cancellable(&roots, progress, |&root| {
            let mut out = Vec::new();
            if wanted(walk.top(root, inner)) {
                walk.visit(root, &*self.get(root)?, &mut out)?;
            }
            progress.tick(out.len() as u64)?;
            Ok::<_, crate::error::AnonError>(out)
        })?;
        let mut out = Vec::new();
        for d in done {
            out.extend(d?);
        }
        out.sort_unstable_by_key(|(n, _)| *n);
        Ok(out)
    }
}

/// The evaluator of [`crate::lattice::search::every`]: the nodes it is handed (a set closed
/// upward) grouped by one depth-first walk ([`NodeCache::map_every`]) and passed to `f`, in id
/// order. Progress ticks as subtrees finish; Ctrl-C stops the walk.
pub(crate) struct EveryNode<'c, 'a, F> {
    pub(crate) cache: &'c NodeCache<'a>,
    pub(crate) progress: &'c dyn Progress,
    pub(crate) f: F,
}

impl<T: Send, F: Fn(NodeId, &Cached) -> Result<T> + Sync> Evaluator for EveryNode<'_, '_, F> {
    type Judged = (NodeId, T);

    fn node(j: &(NodeId, T)) -> NodeId {
        j.0
    }

    fn evaluate(&mut self, nodes: &[NodeId]) -> Result<Vec<(NodeId, T)>> {
        let mut wanted = vec![false; self.cache.lattice.size()];
        for &n in nodes {
            wanted[n] = true;
        }
        self.cache.map_every(self.progress, |n| wanted[n], &self.f)
    }
}

/// One depth-first walk of [`NodeCache::map_every`] over the attributes before `inner`.
struct Walk<'c, 'a, W, F> {
    cache: &'c NodeCache<'a>,
    inner: usize,
    wanted: &'c W,
    f: &'c F,
}

impl<T, W: Fn(NodeId) -> bool, F: Fn(NodeId, &Cached) -> Result<T>> Walk<'_, '_, W, F> {
    /// The node, then its children: the node with one attribute raised, at or before its
    /// first raised attribute (so that lowering a child's first raised attribute gives the
    /// node back: each node is reached once).
    fn visit(&self, node: NodeId, c: &Cached, out: &mut Vec<(NodeId, T)>) -> Result<()> {
        if (self.wanted)(node) {
            out.push((node, (self.f)(node, c)?));
        }
        let l = &self.cache.lattice;
        let first = (0..self.inner).find(|&a| l.level(node, a) > 0).unwrap_or(self.inner);
        for a in (0..self.inner).take(first + 1) {
            let child = node + l.stride(a);
            if l.level(node, a) < l.heights()[a] && (self.wanted)(self.top(child, a + 1)) {
                self.visit(child, &self.cache.group_from(c, child)?, out)?;
            }
        }
        Ok(())
    }

    /// The top of the subtree of `node` whose walk raises the attributes before `raised`.
    fn top(&self, node: NodeId, raised: usize) -> NodeId {
        let l = &self.cache.lattice;
        (0..raised).map(|a| (l.heights()[a] - l.level(node, a)) as usize * l.stride(a)).sum::<usize>() + node
    }
}
