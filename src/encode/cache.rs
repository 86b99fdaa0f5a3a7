//! Groupings of lattice nodes, cached for roll-ups, with optional per-class histograms of the
//! sensitive attribute. Every lattice method (k-anonymity, h-ceiling) groups its nodes here, so
//! a node is always grouped from its cheapest already-grouped specialization and no node but
//! the bottom goes back to the frequency rows.
//!
//! The cache holds a bounded number of bytes: a search that scans thousands of nodes with
//! histograms would otherwise keep every grouping (411 MiB for t-closeness on Adult, mostly
//! page faults of memory used once). When full, the least recently used grouping goes; the
//! bottom always stays, so every node can still be grouped.

use super::group::SizesProbe;
use super::{FrequencyTable, Grouping, LatticeKeys, generalize_to, group};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::lattice::{Lattice, NodeId};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of groupings kept for roll-ups, all cached nodes together. Searches mostly roll up
/// from nodes grouped shortly before, so a small cache loses little speed.
const CACHE_BYTES: usize = 48 << 20;

/// The estimated share of a source's classes above which [`NodeCache::sample_class_sizes`]
/// does not probe. A class the probe rejects costs a lookup or two, one it looks up costs its
/// key and a hash probe, about three times what grouping a class costs (keys moved and
/// numbered, docs/kanon.md): past a quarter looked up, grouping is cheaper. At 5 M NPS-like
/// rows every sampled code covered its attribute (nodes of 4 to 1,280 classes), and each probe
/// took 6–8 ms against 2 ms for grouping the node.
const MAX_PASSING_SHARE: f64 = 0.25;

/// One grouped node.
pub struct Cached {
    pub g: Grouping,
    /// Sensitive histograms, class-major (`classes × values`); empty when the cache was built
    /// without them. A generalization's histograms are sums of these, so they roll up with the
    /// classes.
    pub(crate) hist: Vec<u32>,
    /// The classes' keys ([`LatticeKeys`]), from which a generalization's keys follow in one
    /// pass per raised attribute; empty where the lattice's keys do not fit in 64 bits.
    pub(crate) keys: Vec<u64>,
}

/// Its size, not its contents: a grouping is millions of numbers.
impl std::fmt::Debug for Cached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cached").field("classes", &self.g.len()).finish_non_exhaustive()
    }
}

impl Cached {
    /// Approximate heap bytes: codes, sizes and ranges per class, and the histograms.
    pub(crate) fn bytes(&self) -> usize {
        let per_class = self.g.codes.len() * 4 + 8 + self.g.ranges.iter().filter(|r| !r.is_empty()).count() * 8;
        self.g.len() * per_class + self.hist.len() * 4 + self.keys.len() * 8
    }

    /// The sensitive histogram of class `c` (`width` values).
    pub(crate) fn class_hist(&self, c: usize, width: usize) -> &[u32] {
        &self.hist[c * width..(c + 1) * width]
    }
}

/// Of the groupings `kept` holds (`kept` looks one up, `every` lists them all), the one to
/// group `node` from: its direct predecessor with the fewest classes (almost always the
/// cheapest), else its specialization with the fewest, ties to the smaller id; `None` when no
/// specialization is held. Shared by [`NodeCache`] and h-ceiling's best-first order, which
/// keeps its own groupings.
pub(crate) fn cheapest_source<'c, I: Iterator<Item = (NodeId, &'c Cached)>>(
    lattice: &Lattice,
    node: NodeId,
    kept: impl Fn(NodeId) -> Option<&'c Cached>,
    every: impl FnOnce() -> I,
) -> Option<NodeId> {
    let fewest = |(id, c): &(NodeId, &Cached)| (c.g.len(), *id);
    let direct = lattice.predecessors(node).filter_map(|(_, p)| kept(p).map(|c| (p, c))).min_by_key(fewest);
    direct
        .or_else(|| {
            // A held grouping carries its levels: comparing them is a few bytes, where
            // `Lattice::generalizes` takes two divisions an attribute (hundreds of held
            // groupings each time hceil's frontier finds no direct predecessor).
            let levels = lattice.levels(node);
            let below = |c: &Cached| c.g.levels.iter().zip(&levels).all(|(s, n)| s <= n);
            every().filter(|(_, c)| below(c)).min_by_key(fewest)
        })
        .map(|(id, _)| id)
}

pub struct NodeCache<'a> {
    ft: &'a FrequencyTable,
    hs: Vec<Arc<Hierarchy>>,
    pub lattice: Lattice,
    /// How classes are keyed when a node is grouped from a cached one.
    keys: Option<LatticeKeys>,
    /// Histogram width: the number of sensitive values, 0 without histograms.
    width: usize,
    cache: HashMap<NodeId, Slot>,
    bytes: usize,
    /// Ticks of the use clock, for least-recently-used eviction.
    clock: AtomicU64,
}

/// A cached grouping and when it was last used.
struct Slot {
    c: Arc<Cached>,
    used: AtomicU64,
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
        let keys = LatticeKeys::new(&hs);
        let mut nc =
            NodeCache { ft, hs, lattice, keys, width, cache: HashMap::new(), bytes: 0, clock: AtomicU64::new(0) };
        let bottom = nc.lattice.bottom();
        let (g, row_class) = group(ft, &nc.lattice.levels(bottom))?;
        let hist = nc.bottom_histograms(&g, &row_class);
        let keys = nc.keys.as_ref().map_or_else(Vec::new, |k| k.of(&g));
        let c = Arc::new(Cached { g, hist, keys });
        nc.bytes = c.bytes();
        nc.cache.insert(bottom, Slot { c, used: AtomicU64::new(0) });
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

    /// The cheapest cached specialization of an uncached node, to group it from.
    fn source(&self, node: NodeId) -> Arc<Cached> {
        let kept = |p: NodeId| self.cache.get(&p).map(|s| &*s.c);
        let every = || self.cache.iter().map(|(&id, s)| (id, &*s.c));
        let id = cheapest_source(&self.lattice, node, kept, every).expect("the bottom node is always cached");
        self.touch(&self.cache[&id]).clone()
    }

    /// Sizes of the classes of an uncached node that `sample` classes of its source, spread
    /// evenly over it, fall in ([`super::class_sizes_of`]), when the source has at least
    /// `min_source` classes and four per sampled one, and the sampled classes' codes would
    /// reject most of the source ([`MAX_PASSING_SHARE`]); `None` otherwise (grouping is cheap
    /// then, or the sample would be most of it, or the pass would cost more than grouping).
    pub(crate) fn sample_class_sizes(
        &self,
        node: NodeId,
        sample: usize,
        min_source: usize,
    ) -> Result<Option<Vec<u64>>> {
        if self.cache.contains_key(&node) {
            return Ok(None);
        }
        let src = self.source(node);
        let n = src.g.len();
        if n < min_source || sample.saturating_mul(4) > n {
            return Ok(None);
        }
        let members: Vec<usize> = (0..sample).map(|i| i * n / sample).collect();
        let probe = SizesProbe::new(&self.hs, &src.g, &self.lattice.levels(node), &members)?;
        // A pass that rejects few classes looks each up, which costs more than grouping.
        if probe.passing_share() > MAX_PASSING_SHARE {
            return Ok(None);
        }
        Ok(Some(probe.sizes(&src.g)))
    }

    /// Group a node without changing the cache, so several threads can share it.
    pub fn get(&self, node: NodeId) -> Result<Arc<Cached>> {
        if let Some(s) = self.cache.get(&node) {
            return Ok(self.touch(s).clone());
        }
        Ok(Arc::new(self.group_from(&self.source(node), node)?))
    }

    /// Group a node (with its histograms) from an already grouped specialization `src`.
    pub(crate) fn group_from(&self, src: &Cached, node: NodeId) -> Result<Cached> {
        let levels = self.lattice.levels(node);
        let (g, map, keys) = match &self.keys {
            Some(k) if src.keys.len() == src.g.len() => k.generalize(&self.hs, &src.g, &src.keys, &levels)?,
            _ => {
                let (g, map) = generalize_to(&self.hs, &src.g, &levels)?;
                (g, map, Vec::new())
            }
        };
        let width = self.width;
        let mut hist = vec![0u32; if src.hist.is_empty() { 0 } else { g.len() * width }];
        if !hist.is_empty() {
            for (from, &to) in src.hist.chunks_exact(width).zip(&map) {
                for (h, &n) in hist[to as usize * width..][..width].iter_mut().zip(from) {
                    *h += n;
                }
            }
        }
        Ok(Cached { g, hist, keys })
    }

    fn touch<'s>(&self, s: &'s Slot) -> &'s Arc<Cached> {
        s.used.store(self.clock.fetch_add(1, Ordering::Relaxed) + 1, Ordering::Relaxed);
        &s.c
    }

    /// Cache a grouping, evicting the least recently used ones (never the bottom) to stay
    /// within [`CACHE_BYTES`]; a grouping larger than the whole budget is not kept.
    pub(crate) fn remember(&mut self, node: NodeId, c: &Arc<Cached>) {
        let bytes = c.bytes();
        if self.cache.contains_key(&node) || bytes > CACHE_BYTES {
            return;
        }
        let bottom = self.lattice.bottom();
        while self.bytes + bytes > CACHE_BYTES {
            let oldest = self
                .cache
                .iter()
                .filter(|(id, _)| **id != bottom)
                .min_by_key(|(id, s)| (s.used.load(Ordering::Relaxed), **id))
                .map(|(id, _)| *id);
            let Some(id) = oldest else { return };
            let s = self.cache.remove(&id).expect("present");
            self.bytes -= s.c.bytes();
        }
        self.bytes += bytes;
        let used = AtomicU64::new(self.clock.fetch_add(1, Ordering::Relaxed) + 1);
        self.cache.insert(node, Slot { c: c.clone(), used });
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
        // The bottom node's rows come class by class (`row_class` ascends), so a range of
        // classes is a range of rows, and each range's histograms are one job on the pool.
        debug_assert!(row_class.is_sorted());
        let (width, counts) = (self.width, &self.ft.counts);
        let mut hist = vec![0u32; g.len() * width];
        crate::parallel::in_ranges(&mut hist, width, HIST_CLASSES, |classes, part| {
            let from = row_class.partition_point(|&c| (c as usize) < classes.start);
            let to = row_class.partition_point(|&c| (c as usize) < classes.end);
            for r in from..to {
                part[(row_class[r] as usize - classes.start) * width + s.codes[r] as usize] += counts[r] as u32;
            }
        });
        hist
    }
}

/// Classes a job of [`NodeCache::bottom_histograms`] counts.
const HIST_CLASSES: usize = 1 << 14;
