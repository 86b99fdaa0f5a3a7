//! Globally optimal full-domain search with pruning.
//!
//! Nodes are visited in ascending order of a lower bound of their loss (for LM and NCP the
//! generalization-only loss, which is separable by attribute and monotone along the lattice;
//! for DM, bottom-up by height). Three facts prune the rest:
//! - once a release with loss `best` is known, any node whose bound is at least `best` cannot
//!   beat it, and neither can its generalizations (the bound is monotone);
//! - for monotone privacy models, a node below a known non-anonymous node is not anonymous
//!   (predictive tagging, as in Flash / OLA), so it is never grouped;
//! - without suppression the loss of an anonymous LM/NCP node equals its bound, so the first
//!   anonymous node in bound order is optimal.
//!
//! [`exhaustive`] evaluates every node and is the reference the tests compare against.

use super::loss::{LossTable, Metric};
use super::models::{Models, SensitiveContext, class_ok};
use crate::encode::{Cached, FrequencyTable, Grouping, NodeCache};
use crate::error::Result;
use crate::lattice::{Lattice, NodeId};
use std::sync::Arc;

/// Relative tolerance when comparing losses computed along different paths.
const EPS: f64 = 1e-9;

/// The outcome of checking one node.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub node: NodeId,
    pub anonymous: bool,
    pub loss: f64,
    pub suppressed_records: u64,
    /// Classes that fail the models (suppressed when the node is anonymous).
    pub failing: Vec<u32>,
    pub classes: usize,
    /// DM without suppression: a lower bound of DM for this node and its generalizations.
    dm_bound: f64,
}

/// Checks nodes against the models, rolling each up from the cheapest cached specialization.
pub struct Evaluator<'a> {
    nodes: NodeCache<'a>,
    pub lattice: Lattice,
    scorer: Scorer<'a>,
    pub evaluated: usize,
}

/// Everything that judges a grouped node, apart from the cache so that threads can share it
/// while the cache is borrowed for a batch.
struct Scorer<'a> {
    ft: &'a FrequencyTable,
    models: Models,
    budget: u64,
    loss: LossTable,
    sensitive: Option<SensitiveContext>,
    width: usize,
}

impl<'a> Evaluator<'a> {
    /// `budget`: the most records that may be suppressed.
    pub fn new(ft: &'a FrequencyTable, models: Models, metric: Metric, budget: u64) -> Result<Self> {
        let hs = ft.hierarchies();
        let nodes = NodeCache::new(ft, models.need_sensitive())?;
        let lattice = nodes.lattice.clone();
        let marginals: Vec<Vec<u64>> = ft
            .qis
            .iter()
            .map(|q| {
                let mut m = vec![0u64; q.hierarchy.leaf_count()];
                for (r, &leaf) in q.codes.iter().enumerate() {
                    m[leaf as usize] += ft.counts[r];
                }
                m
            })
            .collect();
        let loss = LossTable::new(metric, &hs, &marginals, ft.total());
        let sensitive = match (&ft.sensitive, models.need_sensitive()) {
            (Some(s), true) => {
                let mut counts = vec![0u64; s.values.len()];
                for (r, &v) in s.codes.iter().enumerate() {
                    counts[v as usize] += ft.counts[r];
                }
                Some(SensitiveContext::new(&s.values, &counts))
            }
            _ => None,
        };
        let width = nodes.width();
        let scorer = Scorer { ft, models, budget, loss, sensitive, width };
        Ok(Evaluator { nodes, lattice, scorer, evaluated: 0 })
    }

    /// Classes of a node (cached for roll-ups).
    pub fn classes(&mut self, node: NodeId) -> Result<Arc<Cached>> {
        self.nodes.classes(node)
    }

    /// Check a node: group it, find the classes failing the models, and score the release.
    pub fn evaluate(&mut self, node: NodeId) -> Result<Evaluation> {
        let c = self.nodes.classes(node)?;
        self.evaluated += 1;
        Ok(self.scorer.check(node, &c))
    }

    /// Evaluate several nodes on all cores (the nodes are independent), then cache their
    /// groupings. Results come back in the order of `nodes`.
    pub fn evaluate_batch(&mut self, nodes: &[NodeId]) -> Result<Vec<Evaluation>> {
        let scorer = &self.scorer;
        let out = self.nodes.map_batch(nodes, |n, c| Ok(scorer.check(n, c)))?;
        self.evaluated += out.len();
        Ok(out)
    }

    pub fn loss(&self) -> &LossTable {
        &self.scorer.loss
    }

    pub fn budget(&self) -> u64 {
        self.scorer.budget
    }

    pub fn monotone(&self) -> bool {
        self.scorer.budget == 0 || self.scorer.models.monotone_with_suppression()
    }
}

impl Scorer<'_> {
    fn check(&self, node: NodeId, cached: &Cached) -> Evaluation {
        let g = &cached.g;
        let hist = (!cached.hist.is_empty()).then_some(&cached.hist);
        let width = self.width;
        let mut failing = Vec::new();
        let mut suppressed = 0u64;
        for c in 0..g.len() {
            let h = hist.as_ref().map(|h| &h[c * width..(c + 1) * width]);
            if !class_ok(&self.models, g.sizes[c], h, self.sensitive.as_ref()) {
                failing.push(c as u32);
                suppressed += g.sizes[c];
            }
        }
        let dm_bound: f64 = g.sizes.iter().map(|&s| (s as f64) * (s as f64)).sum();
        let loss = self.score(g, &failing, suppressed);
        Evaluation {
            node,
            anonymous: suppressed <= self.budget,
            loss,
            suppressed_records: suppressed,
            failing,
            classes: g.len(),
            dm_bound,
        }
    }

    fn score(&self, g: &Grouping, failing: &[u32], suppressed: u64) -> f64 {
        let n = self.ft.total() as f64;
        let mut is_failing = vec![false; g.len()];
        for &c in failing {
            is_failing[c as usize] = true;
        }
        match self.loss.metric {
            Metric::Dm => {
                let kept: f64 =
                    (0..g.len()).filter(|&c| !is_failing[c]).map(|c| (g.sizes[c] as f64) * (g.sizes[c] as f64)).sum();
                kept + suppressed as f64 * n
            }
            _ => {
                let kept: f64 = (0..g.len())
                    .filter(|&c| !is_failing[c])
                    .map(|c| g.sizes[c] as f64 * self.loss.record_loss(&g.levels, |a| g.codes[a][c]))
                    .sum();
                (kept + suppressed as f64) / n.max(1.0)
            }
        }
    }
}

fn better(a: &Evaluation, b: &Evaluation, lattice: &Lattice) -> bool {
    let tol = EPS * a.loss.abs().max(b.loss.abs()).max(1.0);
    if (a.loss - b.loss).abs() > tol {
        return a.loss < b.loss;
    }
    (lattice.height(a.node), a.node) < (lattice.height(b.node), b.node)
}

/// The optimal anonymous node, or `None` when no node satisfies the models within budget.
pub fn optimal(ev: &mut Evaluator) -> Result<Option<Evaluation>> {
    let lattice = ev.lattice.clone();
    let bounds: Vec<f64> =
        (0..lattice.size()).map(|id| ev.loss().lower_bound(&lattice.levels(id)).unwrap_or(0.0)).collect();
    let mut order: Vec<NodeId> = (0..lattice.size()).collect();
    order.sort_by(|&a, &b| {
        bounds[a].total_cmp(&bounds[b]).then(lattice.height(a).cmp(&lattice.height(b))).then(a.cmp(&b))
    });
    let mut s = Search {
        by_bound: ev.loss().metric != Metric::Dm,
        monotone: ev.monotone(),
        bounds,
        lattice,
        best: None,
        not_anonymous: Vec::new(),
        anonymous: Vec::new(),
        bounded: Vec::new(),
    };
    if !s.monotone {
        return s.scan(ev, &order);
    }
    for node in order {
        if s.beyond_best(node) {
            break;
        }
        if s.skip(node) {
            continue;
        }
        let e = ev.evaluate(node)?;
        let anonymous = e.anonymous;
        s.record(e);
        if anonymous && s.by_bound && ev.budget() == 0 {
            // Without suppression an LM/NCP node's loss is its bound: nothing later beats it.
            break;
        }
        if !anonymous && s.monotone {
            s.climb(ev, node)?;
        }
    }
    Ok(s.best)
}

/// State of one search: the best release so far and what is known about other nodes.
struct Search {
    by_bound: bool,
    monotone: bool,
    bounds: Vec<f64>,
    lattice: Lattice,
    best: Option<Evaluation>,
    /// Known non-anonymous nodes: everything below them is not anonymous either.
    not_anonymous: Vec<NodeId>,
    /// Known anonymous nodes: everything above them is anonymous (monotone models).
    anonymous: Vec<NodeId>,
    /// DM: nodes whose generalizations all cost at least the best.
    bounded: Vec<NodeId>,
}

impl Search {
    fn beyond_best(&self, node: NodeId) -> bool {
        self.by_bound && self.best.as_ref().is_some_and(|b| self.bounds[node] > b.loss + EPS * b.loss.abs().max(1.0))
    }

    fn known_not_anonymous(&self, node: NodeId) -> bool {
        self.monotone && self.not_anonymous.iter().any(|&x| self.lattice.generalizes(x, node))
    }

    fn known_anonymous(&self, node: NodeId) -> bool {
        self.monotone && self.anonymous.iter().any(|&x| self.lattice.generalizes(node, x))
    }

    fn skip(&self, node: NodeId) -> bool {
        self.bounded.iter().any(|&x| self.lattice.generalizes(node, x)) || self.known_not_anonymous(node)
    }

    fn record(&mut self, e: Evaluation) {
        if self.best.as_ref().is_some_and(|b| e.dm_bound >= b.loss) && !self.by_bound {
            self.bounded.push(e.node);
        }
        if e.anonymous {
            self.anonymous.push(e.node);
            if self.best.as_ref().is_none_or(|b| better(&e, b, &self.lattice)) {
                self.best = Some(e);
            }
        } else {
            self.not_anonymous.push(e.node);
        }
    }

    /// Without monotone models nothing can be inferred between nodes: evaluate in bound order,
    /// a batch at a time on all cores, until the bound passes the best loss.
    fn scan(mut self, ev: &mut Evaluator, order: &[NodeId]) -> Result<Option<Evaluation>> {
        const BATCH: usize = 32;
        let mut next = 0;
        while next < order.len() {
            let mut batch = Vec::with_capacity(BATCH);
            while next < order.len() && batch.len() < BATCH {
                let node = order[next];
                if self.beyond_best(node) {
                    next = order.len();
                    break;
                }
                next += 1;
                if !self.skip(node) {
                    batch.push(node);
                }
            }
            for e in ev.evaluate_batch(&batch)? {
                self.record(e);
            }
        }
        Ok(self.best)
    }

    /// From a non-anonymous node, walk up while the nodes stay non-anonymous (cheapest
    /// bound first) and tag everything below the highest one reached: one path of checks
    /// rules out a whole down-set, as Flash does. Anonymous nodes met on the way are scored.
    fn climb(&mut self, ev: &mut Evaluator, start: NodeId) -> Result<()> {
        let mut cur = start;
        'up: loop {
            let mut next: Vec<NodeId> = self.lattice.successors(cur).map(|(_, s)| s).collect();
            next.sort_by(|&a, &b| self.bounds[a].total_cmp(&self.bounds[b]).then(a.cmp(&b)));
            for s in next {
                if self.known_not_anonymous(s) {
                    cur = s;
                    continue 'up;
                }
                if self.known_anonymous(s) || self.beyond_best(s) {
                    continue;
                }
                let e = ev.evaluate(s)?;
                let anonymous = e.anonymous;
                self.record(e);
                if !anonymous {
                    cur = s;
                    continue 'up;
                }
            }
            return Ok(());
        }
    }
}

/// Every node evaluated, the best anonymous one returned: the reference for tests.
pub fn exhaustive(ev: &mut Evaluator) -> Result<Option<Evaluation>> {
    let lattice = ev.lattice.clone();
    let mut best: Option<Evaluation> = None;
    for node in 0..lattice.size() {
        let e = ev.evaluate(node)?;
        if e.anonymous && best.as_ref().is_none_or(|b| better(&e, b, &lattice)) {
            best = Some(e);
        }
    }
    Ok(best)
}
