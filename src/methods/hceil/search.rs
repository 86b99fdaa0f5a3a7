//! Algorithm 1: over the lattice nodes whose every record has D(r) ≤ h, insert counterfeits,
//! group the catalog and keep the node of minimum RCE.
//!
//! The traversal is the shared search driver's ([`crate::lattice::search`]); hceil supplies its
//! evaluators (line 1's grouping with degrees and bound, [`Line1`] or [`Lazy`]; lines 4–20's
//! counterfeits and catalog, [`Score`]), its criteria and bound ([`Rules`]: the ceiling, which
//! fails upward; a scored node not rejected; the objective's bound and stop rule).
//!
//! Line 1 (the pruned lattice) is built bottom-up ([`driver::down_set`]): generalizing never
//! lowers a class's degree (categorical nodes only gain leaves, numeric classes only merge, so
//! their min–max ranges only widen), so a node is a candidate only when all of its direct
//! specializations are, and a node over h prunes every generalization without being grouped.
//! Lines 3–20 then run in ascending order of a lower bound of the objective
//! ([`super::score::bound`]), a batch of nodes at a time on all cores, until the bound passes
//! the best value found ([`driver::by_sorted_bound`]): the same node as evaluating all of them
//! (`exhaustive`), which the tests check.
//!
//! With a suppression limit, each node's smallest classes below k leave the release first, as
//! many as the limit allows ([`super::score::suppressed`]); the remaining ones are padded.
//!
//! Best-first ([`best_first`], the default where it is valid): with the paper's objective and
//! no suppression the bound is monotone along the lattice (below), so lines 1–21 run on the
//! driver's best-first traversal ([`driver::best_first`]): a taken node's successors are
//! queued at its bound and grouped only when one is the cheapest entry left, not the whole
//! pruned lattice, and the search stops where the cheapest entry left passes the best value,
//! with the same node as the scan above. Those nodes are grouped without histograms (a bound
//! reads the classes only); a taken node gets its histograms and
//! catalog only when its class sizes do not already reject it ([`rejected_by_sizes`]).
//!
//! Why monotone: a kept class of n records at cell probability P costs n − max(n, k)·P in the
//! bound. Raising a level merges classes S into one of N = Σ n_i records whose cell covers
//! every merged cell's leaves (a numeric min–max range widens), so P ≤ min P_i, and
//! Σ max(n_i, k) ≥ max(N, k); hence Σ (n_i − max(n_i, k) P_i) ≤ N − max(N, k) P. Not for the
//! other cases, which keep the scan: with suppression a finer node may suppress small classes
//! at cost n that a coarser one keeps at less; `charged` adds the deficit Σ (k − n)⁺ and
//! `fewest` orders by it first, and merging small classes lowers it (two classes of one record
//! at k = 10 need 18 counterfeits, merged 9).

use super::counterfeit::{self, Classes, NodeCatalog, ValueDraw};
use super::score::{self, Key, Objective};
use crate::encode::{Cached, NodeCache, cheapest_source, class_degrees};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::lattice::search::{self as driver, Bound, Criterion, Evaluator, Scorer, Tag, compare};
use crate::lattice::{Lattice, NodeId};
use crate::progress::Progress;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// What the search needs to know.
#[derive(Debug, Clone)]
pub struct Params {
    pub k: u64,
    /// The ceiling; 1 searches every node (no h given).
    pub ceiling: f64,
    pub draw: ValueDraw,
    pub seed: u64,
    /// Most counterfeit records a node may need.
    pub max_counterfeits: Option<u64>,
    /// Most records a node may suppress.
    pub suppression: u64,
    pub objective: Objective,
    pub exhaustive: bool,
}

/// A node of the pruned lattice, before any counterfeit is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub node: NodeId,
    /// The greatest D(r); 0 without a ceiling, where it rules nothing out.
    pub max_degree: f64,
    pub bound: Key,
    /// [`evaluate`] rejects the node whatever it draws ([`rejected_by_sizes`]).
    pub rejected: bool,
}

/// A node with its counterfeits, catalog and costs.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub(crate) node: NodeId,
    /// The objective's value.
    pub(crate) key: Key,
    pub(crate) rce: f64,
    /// Mean D(r) over the published records (min–max ranges).
    pub(crate) lm: f64,
    /// The same with numeric attributes at their hierarchy intervals.
    pub(crate) lm_intervals: f64,
    pub(crate) max_degree: f64,
    pub(crate) catalog: NodeCatalog,
    /// Published classes.
    pub(crate) classes: usize,
    /// Which classes are suppressed (left out of the release).
    pub(crate) suppressed: Vec<bool>,
    pub(crate) suppressed_records: u64,
    /// The node's classes and histograms, kept for the release: the node cache may have let
    /// them go by the time the search ends, and grouping the node again was a serial pass.
    pub(crate) grouping: Arc<Cached>,
}

/// How much of the lattice the search touched.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub(crate) nodes_total: usize,
    /// Nodes of the pruned lattice (every record within the ceiling) that were grouped: all
    /// of them, but in a best-first search ([`best_first`]) that stops before the top.
    pub(crate) candidates: usize,
    /// Nodes whose counterfeits and catalog were built.
    pub(crate) evaluated: usize,
    /// Evaluated nodes whose catalog could not be grouped safely or that needed more
    /// counterfeits than allowed.
    pub(crate) rejected: usize,
}

/// Line 1: every node within the ceiling, with its bound, bottom-up (by height, then id),
/// through the driver's [`driver::down_set`]: a node over the ceiling rules out its
/// generalizations without grouping them, so a node is a candidate when it and every node
/// below it are within the ceiling (the same down-set as requiring every direct
/// specialization to be a candidate).
pub fn candidates(nodes: &mut NodeCache, p: &Params, progress: &dyn Progress) -> Result<Vec<Candidate>> {
    let lattice = nodes.lattice.clone();
    let hs = nodes.hierarchies().to_vec();
    progress.begin("h-ceiling: grouping the lattice", lattice.size() as u64);
    let out = driver::down_set(&lattice, &mut Line1 { nodes, hs: &hs, p, progress }, &Rules(p))?;
    progress.finish();
    Ok(out)
}

/// Line 1's evaluator: a batch of nodes grouped (with histograms, for the scoring after) on
/// all cores, each judged by its degrees and bound.
struct Line1<'n, 'a, 'h> {
    nodes: &'n mut NodeCache<'a>,
    hs: &'h [Arc<Hierarchy>],
    p: &'h Params,
    progress: &'h dyn Progress,
}

impl Evaluator for Line1<'_, '_, '_> {
    type Judged = Candidate;

    fn node(c: &Candidate) -> NodeId {
        c.node
    }

    fn evaluate(&mut self, batch: &[NodeId]) -> Result<Vec<Candidate>> {
        let (hs, p) = (self.hs, self.p);
        let found = self.nodes.map_batch(batch, |node, c| Ok(candidate(hs, p, node, c)))?;
        self.progress.tick(found.len() as u64)?;
        Ok(found)
    }
}

/// hceil's criteria and bound for the driver: the ceiling (failing upward), acceptance of a
/// scored node (not rejected), the objective's bound and the stop rule.
struct Rules<'p>(&'p Params);

impl Criterion<Candidate> for Rules<'_> {
    fn accepted(&self, _: &Candidate) -> Option<(NodeId, driver::Key)> {
        None
    }

    /// Over the ceiling: every generalization is over it too.
    fn tag(&self, c: &Candidate) -> Option<Tag> {
        (!c.within(self.0)).then_some(Tag::FailsAbove)
    }
}

impl Criterion<Option<Scored>> for Rules<'_> {
    fn accepted(&self, s: &Option<Scored>) -> Option<(NodeId, driver::Key)> {
        s.as_ref().map(|s| (s.node, s.key))
    }
}

impl Bound<Candidate> for Rules<'_> {
    fn of_judged(&self, c: &Candidate) -> driver::Key {
        c.bound
    }

    /// An exhaustive search scores every candidate.
    fn open(&self, bound: driver::Key, best: driver::Key) -> bool {
        self.0.exhaustive || compare(bound, best).is_le()
    }
}

/// A grouped node's greatest degree and bound.
fn candidate(hs: &[Arc<Hierarchy>], p: &Params, node: NodeId, c: &Cached) -> Candidate {
    // Without a ceiling (h = 1) every node is within it (each D(r) is a mean of ratios ≤ 1):
    // the degrees are not computed.
    let max_degree = if p.ceiling >= 1.0 { 0.0 } else { class_degrees(hs, &c.g).into_iter().fold(0.0, f64::max) };
    let suppressed = score::suppressed(&c.g.sizes, p.k, p.suppression);
    let bound = score::bound(&c.g, &score::cell_probabilities(hs, &c.g), p.k, &suppressed, p.objective);
    Candidate { node, max_degree, bound, rejected: rejected_by_sizes(&c.g.sizes, &suppressed, p) }
}

impl Candidate {
    /// Every record within the ceiling (monotone: once over, every generalization is over).
    fn within(&self, p: &Params) -> bool {
        self.max_degree <= p.ceiling + 1e-12
    }
}

/// Does [`evaluate`] reject a node with classes of these sizes before drawing anything: more
/// counterfeits than allowed, or every record suppressed? Both read the class sizes only, so
/// the search knows them from a grouping without histograms and skips the node's catalog.
/// Without suppression the first is monotone too: merging classes never raises the deficit
/// Σ (k − n)⁺ (the merged class needs at most what its parts needed), so a node over the cap
/// has every specialization over it.
fn rejected_by_sizes(sizes: &[u64], suppressed: &[bool], p: &Params) -> bool {
    let deficit = score::deficit(sizes, p.k, suppressed);
    let kept = sizes.iter().zip(suppressed).any(|(&n, &s)| !s && n > 0);
    p.max_counterfeits.is_some_and(|m| deficit > m) || !kept
}

/// Lines 4–15 for one node: suppression, counterfeits, catalog, RCE. `None` when the node is
/// rejected.
pub(crate) fn evaluate(
    hs: &[Arc<Hierarchy>],
    width: usize,
    node: NodeId,
    cached: &Arc<Cached>,
    p: &Params,
) -> Option<Scored> {
    let g = &cached.g;
    let suppressed = score::suppressed(&g.sizes, p.k, p.suppression);
    if rejected_by_sizes(&g.sizes, &suppressed, p) {
        return None;
    }
    let suppressed_records: u64 = g.sizes.iter().zip(&suppressed).filter(|(_, s)| **s).map(|(&n, _)| n).sum();
    let catalog = || {
        let mut rng = StdRng::seed_from_u64(node_seed(p.seed, node));
        if suppressed_records == 0 {
            counterfeit::build(&Classes { sizes: &g.sizes, hist: &cached.hist, width }, p.k, p.draw, &mut rng)
        } else {
            // The catalog sees only the kept classes: a suppressed record conceals nothing.
            let kept: Vec<u32> = (0..g.len() as u32).filter(|&c| !suppressed[c as usize]).collect();
            let sizes: Vec<u64> = kept.iter().map(|&c| g.sizes[c as usize]).collect();
            let hist: Vec<u32> =
                kept.iter().flat_map(|&c| cached.class_hist(c as usize, width).iter().copied()).collect();
            counterfeit::build(&Classes { sizes: &sizes, hist: &hist, width }, p.k, p.draw, &mut rng)
                .map(|c| c.renumber(&kept))
        }
    };
    // The catalog's draws are one serial stream; the node's measures need only its classes, so
    // they are computed beside it (the largest node's catalog is most of a search's wait).
    let measures = || (score::cell_probabilities(hs, g), class_degrees(hs, g), score::interval_degrees(hs, g));
    let (catalog, (probabilities, degrees, interval_degrees)) = crate::parallel::join(catalog, measures);
    let catalog = catalog?;
    let mut published = score::published_sizes(g, &catalog);
    for (n, _) in published.iter_mut().zip(&suppressed).filter(|(_, s)| **s) {
        *n = 0;
    }
    let rce = score::rce(&published, &cached.hist, width, &probabilities, &catalog);
    let lm = score::lm(&degrees, &published);
    let lm_intervals = score::lm(&interval_degrees, &published);
    let max_degree = degrees.iter().zip(&published).filter(|(_, n)| **n > 0).map(|(&d, _)| d).fold(0.0, f64::max);
    let key = p.objective.key(rce, catalog.total, suppressed_records);
    let classes = published.iter().filter(|&&n| n > 0).count();
    Some(Scored {
        node,
        key,
        rce,
        lm,
        lm_intervals,
        max_degree,
        catalog,
        classes,
        suppressed,
        suppressed_records,
        grouping: cached.clone(),
    })
}

/// Each node draws from its own stream of the call's seed, so a node's counterfeits do not
/// depend on the order (or the thread) in which nodes are evaluated.
fn node_seed(seed: u64, node: NodeId) -> u64 {
    // SplitMix64 finalizer over the pair.
    let mut z = seed ^ (node as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Nodes taken and scored at once, on all cores. A constant, not a multiple of the cores: the
/// batches decide how many nodes are evaluated past the optimum, which the report counts, so
/// the report must not depend on the machine.
const TAKEN: usize = 32;

/// Most nodes [`best_first`] groups at once: a grouping of the order is short (a few thousand
/// classes, ~0.2 ms), so many at once keep the cores busy (the same nodes are taken, in the
/// same batches: [`driver::best_first`]).
const GROUPED: usize = 256;

/// Lines 4–20: the nodes the order takes, scored on all cores ([`evaluate`]), the rejected
/// counted. Nodes known to be rejected by their sizes ([`rejected_by_sizes`], kept in
/// `rejected` when they were grouped) are counted as [`evaluate`] would count them, without
/// their histograms or catalog.
struct Score<'n, 'a, 'h> {
    nodes: &'n mut NodeCache<'a>,
    p: &'h Params,
    progress: &'h dyn Progress,
    rejected: HashSet<NodeId>,
    stats: Stats,
}

impl Scorer for Score<'_, '_, '_> {
    type Scored = Option<Scored>;

    fn score(&mut self, batch: &[NodeId]) -> Result<Vec<Option<Scored>>> {
        let (hs, width, p) = (self.nodes.hierarchies().to_vec(), self.nodes.width(), self.p);
        let known: Vec<bool> = batch.iter().map(|n| self.rejected.remove(n)).collect();
        let open: Vec<NodeId> = batch.iter().zip(&known).filter(|(_, k)| !**k).map(|(&n, _)| n).collect();
        let mut scored = self.nodes.map_batch(&open, |node, c| Ok(evaluate(&hs, width, node, c, p)))?.into_iter();
        self.progress.tick(batch.len() as u64)?;
        self.stats.evaluated += batch.len();
        let out: Vec<Option<Scored>> =
            known.iter().map(|&k| if k { None } else { scored.next().expect("one per open node") }).collect();
        self.stats.rejected += out.iter().filter(|s| s.is_none()).count();
        Ok(out)
    }
}

/// Is the bound monotone along the lattice, so that [`best_first`] finds the optimum? Only for
/// the paper's objective without suppression (module doc); an exhaustive search scores every
/// candidate anyway.
pub(crate) fn bound_is_monotone(p: &Params) -> bool {
    p.objective == Objective::Rce && p.suppression == 0 && !p.exhaustive
}

/// Lines 1–21: the node of least objective and what the search touched, best-first where the
/// bound allows it ([`bound_is_monotone`]), else over the whole pruned lattice. No candidate
/// at all (`stats.candidates == 0`): the bottom is over the ceiling.
pub(crate) fn run(nodes: &mut NodeCache, p: &Params, progress: &dyn Progress) -> Result<(Option<Scored>, Stats)> {
    if bound_is_monotone(p) {
        return best_first(nodes, p, progress);
    }
    let cands = candidates(nodes, p, progress)?;
    best(nodes, cands, p, progress)
}

/// Lines 1–21 on the driver's [`driver::best_first`]: group the frontier (dropping nodes
/// over the ceiling, whose generalizations are all over), score the cheapest nodes a batch at
/// a time, until the cheapest bound left passes the best value. `stats.candidates` counts the
/// grouped nodes within the ceiling: every one when nothing passes.
pub(crate) fn best_first(
    nodes: &mut NodeCache,
    p: &Params,
    progress: &dyn Progress,
) -> Result<(Option<Scored>, Stats)> {
    debug_assert!(bound_is_monotone(p));
    let lattice = nodes.lattice.clone();
    let hs = nodes.hierarchies().to_vec();
    // The frontier's bounds and degrees need the classes only: grouped without histograms
    // (most of a grouping's cost), in a cache of their own. Only taken nodes that need a
    // catalog are grouped with histograms, in `nodes`.
    let frontier = NodeCache::new(nodes.frequency_table(), false)?;
    let stats = Stats { nodes_total: lattice.size(), ..Stats::default() };
    let score = Score { nodes, p, progress, rejected: HashSet::new(), stats };
    let mut lazy = Lazy { frontier, hs, offered: Offered::default(), score };
    progress.begin("h-ceiling: best-first search", lattice.size() as u64);
    let rules = Rules(p);
    let best = driver::best_first(&lattice, &mut lazy, (&rules, &rules), &rules, (TAKEN, GROUPED))?;
    progress.finish();
    Ok((best.flatten(), lazy.score.stats))
}

/// [`best_first`]'s evaluator: the nodes the order hands it grouped without histograms, each
/// rolled up from the grouped predecessor with the fewest classes that is still kept (or from
/// the cache's bottom when none is); the taken nodes scored by [`Score`].
struct Lazy<'n, 'a, 'h> {
    frontier: NodeCache<'a>,
    hs: Vec<Arc<Hierarchy>>,
    /// Groupings of grouped nodes, taken or not, for their successors to roll up from.
    offered: Offered,
    score: Score<'n, 'a, 'h>,
}

impl Evaluator for Lazy<'_, '_, '_> {
    type Judged = Candidate;

    fn node(c: &Candidate) -> NodeId {
        c.node
    }

    /// Nodes within the ceiling are kept for the order: their groupings (for their
    /// successors) and whether their sizes reject them.
    fn evaluate(&mut self, batch: &[NodeId]) -> Result<Vec<Candidate>> {
        let (cache, kept, hs, p) = (&self.frontier, &self.offered, &self.hs, self.score.p);
        let grouped: Vec<Result<_>> = crate::parallel::map(batch, |&node| {
            let c = match kept.source(&cache.lattice, node) {
                Some(src) => Arc::new(cache.group_from(src, node)?),
                None => cache.get(node)?,
            };
            Ok((candidate(hs, p, node, &c), c))
        });
        let mut out = Vec::with_capacity(batch.len());
        for g in grouped {
            let (c, grouping) = g?;
            if c.within(p) {
                self.score.stats.candidates += 1;
                self.offered.insert(&cache.lattice, c.node, c.bound, grouping);
                if c.rejected {
                    self.score.rejected.insert(c.node);
                }
            }
            out.push(c);
        }
        Ok(out)
    }
}

impl Scorer for Lazy<'_, '_, '_> {
    type Scored = Option<Scored>;

    fn score(&mut self, batch: &[NodeId]) -> Result<Vec<Option<Scored>>> {
        self.score.score(batch)
    }
}

/// Bytes of groupings [`best_first`] keeps (without histograms).
const OFFERED_BYTES: usize = 64 << 20;

/// Groupings of the nodes grouped for the best-first order, taken or not, the cheapest kept
/// when they exceed [`OFFERED_BYTES`]: the order takes the cheapest next, and their
/// successors, queued at their bound, are grouped from them. A cache by recency would have
/// dropped a node grouped long before its successors are, and they would be grouped from far
/// below.
#[derive(Default)]
struct Offered {
    slots: HashMap<NodeId, (Key, usize, Arc<Cached>)>,
    bytes: usize,
}

impl Offered {
    fn insert(&mut self, lattice: &Lattice, node: NodeId, bound: Key, c: Arc<Cached>) {
        self.bytes += c.bytes();
        self.slots.insert(node, (bound, lattice.height(node), c));
        while self.bytes > OFFERED_BYTES {
            let costliest = self
                .slots
                .iter()
                .max_by(|a, b| {
                    let (x, y) = (a.1, b.1);
                    (x.0.0.total_cmp(&y.0.0)).then(x.0.1.total_cmp(&y.0.1)).then(x.1.cmp(&y.1)).then(a.0.cmp(b.0))
                })
                .map(|(&n, _)| n);
            let Some(n) = costliest else { return };
            self.take(n);
        }
    }

    /// The kept grouping to group `node` from ([`cheapest_source`]), `None` for the bottom.
    /// Not only direct predecessors: on Adult's 9-attribute bench 24,897 of 25,544 groupings
    /// found none kept and rolled up 21,093 bottom classes; from the nearest kept
    /// specialization they start from 7,446 classes on average (docs/hceil.md).
    fn source(&self, lattice: &Lattice, node: NodeId) -> Option<&Arc<Cached>> {
        let kept = |q: NodeId| self.get(q).map(|c| &**c);
        let every = || self.slots.iter().map(|(&q, (_, _, c))| (q, &**c));
        cheapest_source(lattice, node, kept, every).and_then(|q| self.get(q))
    }

    fn get(&self, node: NodeId) -> Option<&Arc<Cached>> {
        self.slots.get(&node).map(|(_, _, c)| c)
    }

    fn take(&mut self, node: NodeId) -> Option<Arc<Cached>> {
        let (_, _, c) = self.slots.remove(&node)?;
        self.bytes -= c.bytes();
        Some(c)
    }
}

/// Lines 2–21: the candidate of least objective, or `None` when every candidate is rejected,
/// through the driver's [`driver::by_sorted_bound`].
pub(crate) fn best(
    nodes: &mut NodeCache,
    cands: Vec<Candidate>,
    p: &Params,
    progress: &dyn Progress,
) -> Result<(Option<Scored>, Stats)> {
    let lattice = nodes.lattice.clone();
    let stats = Stats { nodes_total: lattice.size(), candidates: cands.len(), ..Stats::default() };
    let rejected = cands.iter().filter(|c| c.rejected).map(|c| c.node).collect();
    let bounds = cands.iter().map(|c| (c.node, c.bound)).collect();
    progress.begin("h-ceiling: counterfeits and catalogs", cands.len() as u64);
    let mut score = Score { nodes, p, progress, rejected, stats };
    let rules = Rules(p);
    let best = driver::by_sorted_bound(&lattice, bounds, &mut score, &rules, |b, k| rules.open(b, k), TAKEN)?;
    progress.finish();
    Ok((best.flatten(), score.stats))
}
