//! Algorithm 1: over the lattice nodes whose every record has D(r) ≤ h, insert counterfeits,
//! group the catalog and keep the node of minimum RCE.
//!
//! Line 1 (the pruned lattice) is built bottom-up: generalizing never lowers a class's degree
//! (categorical nodes only gain leaves, numeric classes only merge, so their min–max ranges only
//! widen), so a node is a candidate only when all of its direct specializations are, and a node
//! over h prunes every generalization without being grouped. Lines 3–20 then run in ascending
//! order of the RCE lower bound ([`super::score::rce_bound`]), a batch of nodes at a time on all
//! cores, until the bound passes the best RCE found: the same node as evaluating all of them
//! (`exhaustive`), which the tests check.

use super::counterfeit::{self, Classes, NodeCatalog, ValueDraw};
use super::score;
use crate::encode::{Cached, NodeCache, class_degrees};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::lattice::NodeId;
use crate::progress::Progress;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::sync::Arc;

/// Relative tolerance when comparing RCE values.
const EPS: f64 = 1e-9;

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
    pub exhaustive: bool,
}

/// A node of the pruned lattice, before any counterfeit is drawn.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub node: NodeId,
    pub max_degree: f64,
    pub bound: f64,
}

/// A node with its counterfeits, catalog and costs.
#[derive(Debug, Clone)]
pub struct Scored {
    pub node: NodeId,
    pub rce: f64,
    pub lm: f64,
    pub max_degree: f64,
    pub catalog: NodeCatalog,
    pub classes: usize,
}

/// How much of the lattice the search touched.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub nodes_total: usize,
    /// Nodes of the pruned lattice (every record within the ceiling).
    pub candidates: usize,
    /// Nodes whose counterfeits and catalog were built.
    pub evaluated: usize,
    /// Evaluated nodes whose catalog could not be grouped safely or that needed more
    /// counterfeits than allowed.
    pub rejected: usize,
}

/// Line 1: every node within the ceiling, with its bound.
pub fn candidates(nodes: &mut NodeCache, p: &Params, progress: &dyn Progress) -> Result<Vec<Candidate>> {
    let lattice = nodes.lattice.clone();
    let mut inside = vec![false; lattice.size()];
    let mut out = Vec::new();
    let hs = nodes.hierarchies().to_vec();
    progress.begin("h-ceiling: grouping the lattice", lattice.size() as u64);
    for level in lattice.by_height() {
        let eligible: Vec<NodeId> =
            level.into_iter().filter(|&n| lattice.predecessors(n).all(|(_, q)| inside[q])).collect();
        let found = nodes.map_batch(&eligible, |node, c| {
            let max_degree = class_degrees(&hs, &c.g).into_iter().fold(0.0, f64::max);
            let bound = score::rce_bound(&c.g, &score::cell_probabilities(&hs, &c.g), p.k);
            Ok(Candidate { node, max_degree, bound })
        })?;
        progress.tick(found.len() as u64)?;
        for c in found.into_iter().filter(|c| c.max_degree <= p.ceiling + 1e-12) {
            inside[c.node] = true;
            out.push(c);
        }
    }
    progress.finish();
    Ok(out)
}

/// Lines 4–15 for one node: counterfeits, catalog, RCE. `None` when the node is rejected.
pub fn evaluate(hs: &[Arc<Hierarchy>], width: usize, node: NodeId, cached: &Cached, p: &Params) -> Option<Scored> {
    let g = &cached.g;
    let deficit: u64 = g.sizes.iter().map(|&n| p.k.saturating_sub(n)).sum();
    if p.max_counterfeits.is_some_and(|m| deficit > m) {
        return None;
    }
    let mut rng = StdRng::seed_from_u64(node_seed(p.seed, node));
    let classes = Classes { sizes: &g.sizes, hist: &cached.hist, width };
    let catalog = counterfeit::build(&classes, p.k, p.draw, &mut rng)?;
    let probabilities = score::cell_probabilities(hs, g);
    let degrees = class_degrees(hs, g);
    let published = score::published_sizes(g, &catalog);
    let rce = score::rce(&published, &cached.hist, width, &probabilities, &catalog);
    let lm = score::lm(&degrees, &published);
    let max_degree = degrees.iter().copied().fold(0.0, f64::max);
    Some(Scored { node, rce, lm, max_degree, catalog, classes: g.len() })
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

fn better(a: &Scored, b: &Scored, height: impl Fn(NodeId) -> usize) -> bool {
    let tol = EPS * a.rce.abs().max(b.rce.abs()).max(1.0);
    if (a.rce - b.rce).abs() > tol {
        return a.rce < b.rce;
    }
    (height(a.node), a.node) < (height(b.node), b.node)
}

/// Lines 2–21: the candidate of minimum RCE, or `None` when every candidate is rejected.
pub fn best(
    nodes: &mut NodeCache,
    mut cands: Vec<Candidate>,
    p: &Params,
    progress: &dyn Progress,
) -> Result<(Option<Scored>, Stats)> {
    let lattice = nodes.lattice.clone();
    let mut stats = Stats { nodes_total: lattice.size(), candidates: cands.len(), ..Stats::default() };
    cands.sort_by(|a, b| {
        a.bound.total_cmp(&b.bound).then(lattice.height(a.node).cmp(&lattice.height(b.node))).then(a.node.cmp(&b.node))
    });
    let batch = 4 * std::thread::available_parallelism().map_or(1, |n| n.get());
    let (hs, width) = (nodes.hierarchies().to_vec(), nodes.width());
    let mut best: Option<Scored> = None;
    progress.begin("h-ceiling: counterfeits and catalogs", cands.len() as u64);
    for chunk in cands.chunks(batch) {
        let open: Vec<NodeId> = chunk
            .iter()
            .filter(|c| p.exhaustive || best.as_ref().is_none_or(|b| c.bound <= b.rce + EPS * b.rce.abs().max(1.0)))
            .map(|c| c.node)
            .collect();
        if open.is_empty() {
            break;
        }
        let scored = nodes.map_batch(&open, |node, c| Ok(evaluate(&hs, width, node, c, p)))?;
        stats.evaluated += scored.len();
        progress.tick(scored.len() as u64)?;
        for s in scored {
            match s {
                None => stats.rejected += 1,
                Some(s) if best.as_ref().is_none_or(|b| better(&s, b, |n| lattice.height(n))) => best = Some(s),
                Some(_) => {}
            }
        }
    }
    progress.finish();
    Ok((best, stats))
}
