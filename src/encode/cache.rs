//! Groupings of lattice nodes, cached for roll-ups, with optional per-class histograms of the
//! sensitive attribute. Every lattice method (k-anonymity, h-ceiling) groups its nodes here, so
//! a node is always grouped from its cheapest already-grouped specialization and no node but
//! the bottom goes back to the frequency rows.

use super::{FrequencyTable, Grouping, generalize_to, group};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::lattice::{Lattice, NodeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Largest number of cached entries (classes plus their histogram cells, all cached nodes
/// together) kept for roll-ups: about 200 MB.
const CACHE_ENTRIES: usize = 50_000_000;

/// One grouped node.
pub struct Cached {
    pub g: Grouping,
    /// Sensitive histograms, class-major (`classes × values`); empty when the cache was built
    /// without them. A generalization's histograms are sums of these, so they roll up with the
    /// classes.
    pub hist: Vec<u32>,
}

impl Cached {
    /// The sensitive histogram of class `c` (`width` values).
    pub fn class_hist(&self, c: usize, width: usize) -> &[u32] {
        &self.hist[c * width..(c + 1) * width]
    }
}

pub struct NodeCache<'a> {
    ft: &'a FrequencyTable,
    hs: Vec<Arc<Hierarchy>>,
    pub lattice: Lattice,
    /// Histogram width: the number of sensitive values, 0 without histograms.
    width: usize,
    cache: HashMap<NodeId, Arc<Cached>>,
    entries: usize,
}

impl<'a> NodeCache<'a> {
    /// Group the bottom node. With `histograms`, every node also carries its classes'
    /// sensitive histograms (the frequency table must have a sensitive column).
    pub fn new(ft: &'a FrequencyTable, histograms: bool) -> Result<Self> {
        let hs = ft.hierarchies();
        let lattice = Lattice::new(&ft.heights());
        let width = match (&ft.sensitive, histograms) {
            (Some(s), true) => s.values.len(),
            _ => 0,
        };
        let mut nc = NodeCache { ft, hs, lattice, width, cache: HashMap::new(), entries: 0 };
        let bottom = nc.lattice.bottom();
        let (g, row_class) = group(ft, &nc.lattice.levels(bottom))?;
        let hist = nc.bottom_histograms(&g, &row_class);
        nc.entries = g.len() + hist.len();
        nc.cache.insert(bottom, Arc::new(Cached { g, hist }));
        Ok(nc)
    }

    pub fn frequency_table(&self) -> &'a FrequencyTable {
        self.ft
    }

    pub fn hierarchies(&self) -> &[Arc<Hierarchy>] {
        &self.hs
    }

    pub fn width(&self) -> usize {
        self.width
    }

    /// Classes of a node; the grouping is cached while the cache has room.
    pub fn classes(&mut self, node: NodeId) -> Result<Arc<Cached>> {
        let c = self.get(node)?;
        self.remember(node, &c);
        Ok(c)
    }

    /// Group a node without touching the cache, so several threads can share it.
    pub fn get(&self, node: NodeId) -> Result<Arc<Cached>> {
        if let Some(c) = self.cache.get(&node) {
            return Ok(c.clone());
        }
        // A cached direct predecessor is almost always the cheapest source; scanning the
        // whole cache for the best specialization is the fallback.
        let src = self
            .lattice
            .predecessors(node)
            .filter_map(|(_, p)| self.cache.get(&p).map(|c| (p, c)))
            .min_by_key(|(id, c)| (c.g.len(), *id))
            .or_else(|| {
                self.cache
                    .iter()
                    .filter(|(id, _)| self.lattice.generalizes(node, **id))
                    .min_by_key(|(id, c)| (c.g.len(), **id))
                    .map(|(id, c)| (*id, c))
            })
            .map(|(_, c)| c.clone())
            .expect("the bottom node is always cached");
        let (g, map) = generalize_to(&self.hs, &src.g, &self.lattice.levels(node))?;
        let width = self.width;
        let mut hist = vec![0u32; if src.hist.is_empty() { 0 } else { g.len() * width }];
        if !hist.is_empty() {
            for (c, &to) in map.iter().enumerate() {
                let (from, to) = (src.class_hist(c, width), to as usize * width);
                for (v, &n) in from.iter().enumerate() {
                    hist[to + v] += n;
                }
            }
        }
        Ok(Arc::new(Cached { g, hist }))
    }

    pub fn remember(&mut self, node: NodeId, c: &Arc<Cached>) {
        let entries = c.g.len() + c.hist.len();
        if !self.cache.contains_key(&node) && self.entries + entries <= CACHE_ENTRIES {
            self.entries += entries;
            self.cache.insert(node, c.clone());
        }
    }

    /// Group several nodes and apply `f` to each on all cores (the nodes are independent),
    /// then cache their groupings. Results come back in the order of `nodes`.
    pub fn map_batch<T: Send>(
        &mut self,
        nodes: &[NodeId],
        f: impl Fn(NodeId, &Arc<Cached>) -> Result<T> + Sync,
    ) -> Result<Vec<T>> {
        let this = &*self;
        let results: Vec<Result<(NodeId, T, Arc<Cached>)>> = crate::parallel::map(nodes, |&n| {
            let c = this.get(n)?;
            Ok((n, f(n, &c)?, c))
        });
        let mut out = Vec::with_capacity(nodes.len());
        for r in results {
            let (n, t, c) = r?;
            self.remember(n, &c);
            out.push(t);
        }
        Ok(out)
    }

    /// The bottom node's sensitive histograms from the frequency rows.
    fn bottom_histograms(&self, g: &Grouping, row_class: &[u32]) -> Vec<u32> {
        let Some(s) = self.ft.sensitive.as_ref().filter(|_| self.width > 0) else {
            return Vec::new();
        };
        let mut hist = vec![0u32; g.len() * self.width];
        for (r, &c) in row_class.iter().enumerate() {
            hist[c as usize * self.width + s.codes[r] as usize] += self.ft.counts[r] as u32;
        }
        hist
    }
}
