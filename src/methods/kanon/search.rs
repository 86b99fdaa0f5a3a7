//! Globally optimal full-domain search with pruning, and a heuristic for lattices too large
//! to prove optimality on.
//!
//! Nodes are visited in ascending order of a lower bound of their loss (for LM and NCP the
//! generalization-only loss, which is separable by attribute and monotone along the lattice;
//! for DM, bottom-up by height), produced lazily by [`BoundOrder`], which jumps over the
//! regions already ruled out. These facts prune the rest:
//! - once a release with loss `best` is known, any node whose bound is at least `best` cannot
//!   beat it, and neither can its generalizations (the bound is monotone);
//! - for monotone privacy models, a node below a known non-anonymous node is not anonymous
//!   and a node above a known anonymous node is anonymous (predictive tagging both ways, as in
//!   Flash), so neither is grouped to learn that;
//! - with suppression and non-monotone models (entropy or recursive diversity, t-closeness),
//!   a node whose classes must, split however, suppress more records than the limit allows
//!   ([`failing_share`]: all of a class failing k or distinct l, a share of one failing
//!   t-closeness or entropy diversity by convexity) rules out its specializations: that need
//!   is monotone, so it is tagged both ways like anonymity, though passing it proves nothing;
//! - without suppression the loss of an anonymous LM/NCP node equals its bound, so the first
//!   anonymous node in bound order is optimal, even when it is only known to be anonymous.
//!
//! Which node to check: when the node next in bound order fails, the search does not walk on
//! node by node. Like Flash (Kohlmayer et al. 2012) it lays a path from that node towards the
//! top, cheapest bound first, and binary-searches the path for its last failing node, whose
//! whole down-set is then known to fail; from there it lays the next path, until every
//! successor is known to pass. A few checks per path rule out the nodes the bound order
//! would otherwise check one by one, and the passing nodes met on the way bound the optimum
//! from above. The bound order still decides which nodes are left to check, so the result is
//! the optimum of exhaustive search.
//!
//! Heuristic mode (lattices above `max_nodes`, or asked for): one path from the bottom,
//! binary-searched for its first passing node, then greedy descent to a minimal passing node
//! (largest loss saving first); then the optimal search runs from that incumbent until the
//! work budget ends. Where it ends, the next bound in the order is a proven lower bound of
//! the optimum, reported beside the result (the bound gap); when the order is exhausted
//! first, the result is proven optimal.
//!
//! The budget counts node checks ([`Evaluator::evaluated`]), never time: the checks a search
//! makes depend only on its inputs, so one input gives one release on any machine, at any
//! load (a wall-clock budget made the release depend on how busy the machine was).
//!
//! [`exhaustive`] evaluates every node and is the reference the tests compare against.

use super::loss::{LossTable, Metric};
use super::models::{Models, SensitiveContext, class_ok, failing_share};
use crate::encode::{Cached, FrequencyTable, Grouping, NodeCache};
use crate::error::{AnonError, Result};
use crate::lattice::{Antichain, BoundOrder, Lattice, NodeId, Toward};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Relative tolerance when comparing losses computed along different paths.
const EPS: f64 = 1e-9;

/// The outcome of checking one node.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub(crate) node: NodeId,
    anonymous: bool,
    pub loss: f64,
    pub(crate) suppressed_records: u64,
    /// Classes that fail the models (suppressed when the node is anonymous).
    pub(crate) failing: Vec<u32>,
    pub(crate) classes: usize,
    /// DM without suppression: a lower bound of DM for this node and its generalizations.
    dm_bound: f64,
    /// Every specialization (and the node) must suppress more records than the limit allows,
    /// by [`failing_share`], which is monotone whatever the models: none of them passes.
    rules_out_below: bool,
}

/// Checks nodes against the models, rolling each up from the cheapest cached specialization.
pub struct Evaluator<'a> {
    nodes: NodeCache<'a>,
    pub(crate) lattice: Lattice,
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
        let loss = LossTable::new(metric, &hs, &ft.leaf_marginals(), ft.total());
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
    pub(crate) fn classes(&mut self, node: NodeId) -> Result<Arc<Cached>> {
        self.nodes.classes(node)
    }

    /// Check a node: group it, find the classes failing the models, and score the release.
    /// A node whose grouping would relabel many classes is first probed on a sample of them
    /// ([`NodeCache::sample_class_sizes`]); when the sampled classes smaller than k already
    /// hold more records than may be suppressed, the node and all below it fail, ungrouped.
    pub(crate) fn evaluate(&mut self, node: NodeId) -> Result<Evaluation> {
        self.evaluated += 1;
        if let Some(e) = self.probe(node)? {
            return Ok(e);
        }
        let c = self.nodes.classes(node)?;
        Ok(self.scorer.check(node, &c))
    }

    /// The sampled failure test of [`Evaluator::evaluate`]. Its cost is one pass over the
    /// source with a few lookups per class; grouping hashes every class.
    fn probe(&self, node: NodeId) -> Result<Option<Evaluation>> {
        /// Below this many source classes grouping is cheap enough not to probe.
        const PROBE_SOURCE: usize = 100_000;
        let (k, budget) = (self.scorer.models.k, self.scorer.budget);
        // A small class holds at least one record: more than the limit needs that many.
        let sample = 64 + 4 * budget as usize;
        let Some(sizes) = self.nodes.sample_class_sizes(node, sample, PROBE_SOURCE)? else { return Ok(None) };
        let small: u64 = sizes.iter().filter(|&&s| s < k).sum();
        if small <= budget {
            return Ok(None);
        }
        // Records in classes smaller than k fail at every specialization (share 1), so this
        // also rules out the down-set. Only what the search reads of a failing node is set.
        Ok(Some(Evaluation {
            node,
            anonymous: false,
            loss: f64::INFINITY,
            suppressed_records: small,
            failing: Vec::new(),
            classes: 0,
            dm_bound: 0.0,
            rules_out_below: true,
        }))
    }

    /// Evaluate several nodes on all cores (the nodes are independent), then cache their
    /// groupings. Results come back in the order of `nodes`.
    pub(crate) fn evaluate_batch(&mut self, nodes: &[NodeId]) -> Result<Vec<Evaluation>> {
        let scorer = &self.scorer;
        let out = self.nodes.map_batch(nodes, |n, c| Ok(scorer.check(n, c)))?;
        self.evaluated += out.len();
        Ok(out)
    }

    pub(crate) fn loss(&self) -> &LossTable {
        &self.scorer.loss
    }

    pub(crate) fn budget(&self) -> u64 {
        self.scorer.budget
    }

    /// The lower bound of the node's loss that orders the search (0 for DM).
    pub(crate) fn bound(&self, levels: &[u8]) -> f64 {
        self.scorer.loss.lower_bound(levels).unwrap_or(0.0)
    }

    /// A lower bound of DM for every release: k times the number of records.
    pub(crate) fn dm_floor(&self) -> f64 {
        self.scorer.models.k as f64 * self.scorer.ft.total() as f64
    }

    pub(crate) fn monotone(&self) -> bool {
        self.scorer.budget == 0 || self.scorer.models.monotone_with_suppression()
    }
}

impl Scorer<'_> {
    fn check(&self, node: NodeId, cached: &Cached) -> Evaluation {
        let g = &cached.g;
        let hist = (!cached.hist.is_empty()).then_some(&cached.hist);
        let width = self.width;
        let mut failing = Vec::new();
        let (mut suppressed, mut must_suppress) = (0u64, 0.0f64);
        for c in 0..g.len() {
            let h = hist.as_ref().map(|h| &h[c * width..(c + 1) * width]);
            if !class_ok(&self.models, g.sizes[c], h, self.sensitive.as_ref()) {
                failing.push(c as u32);
                suppressed += g.sizes[c];
                must_suppress +=
                    g.sizes[c] as f64 * failing_share(&self.models, g.sizes[c], h, self.sensitive.as_ref());
            }
        }
        // Rounding of the float sum: rule out only beyond a margin of a record per million.
        let margin = 1e-6 * (1.0 + self.ft.total() as f64);
        let dm_bound: f64 = g.sizes.iter().map(|&s| (s as f64) * (s as f64)).sum();
        let anonymous = suppressed <= self.budget;
        // Only an anonymous node's loss is ever compared.
        let loss = if anonymous { self.score(g, &failing, suppressed) } else { f64::INFINITY };
        Evaluation {
            node,
            anonymous,
            loss,
            suppressed_records: suppressed,
            failing,
            classes: g.len(),
            dm_bound,
            rules_out_below: must_suppress > self.budget as f64 + margin,
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

/// How the lattice is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Optimal up to `max_nodes` nodes; above, heuristic, whose proof still reaches the
    /// optimum whenever the work budget suffices.
    Auto,
    /// Proven optimal, however many checks it takes (unless `max_checks` is set).
    Optimal,
    /// A good node fast, then as much of the proof as the work budget allows.
    Heuristic,
}

impl Strategy {
    pub(crate) fn parse(s: &str) -> Option<Strategy> {
        crate::keyword::parse(
            &[
                (Strategy::Auto, &["auto"]),
                (Strategy::Optimal, &["optimal", "exhaustive"]),
                (Strategy::Heuristic, &["heuristic"]),
            ],
            s,
        )
    }
}

/// ARX switches to its heuristic above 100,000 nodes; so do we by default.
pub(crate) const DEFAULT_MAX_NODES: usize = 100_000;
/// Work budget of the heuristic mode when none is given: node checks times `t^(4/3)`, `t`
/// the frequency table's distinct tuples. A check groups a node from a cached
/// specialization, whose cost grows with the table: measured in one build and load, 1.3 ms a
/// check at 21 K tuples and ~250 ms at 10^6 (`benches/lattice_wide.rs`,
/// `benches/kanon_wide.rs`), an exponent of 1.36. So the default allows many checks on a
/// small table and few on a wide one, about the same time on both: 15 checks at 10^6 tuples,
/// what the former 1 s wall-clock budget allowed an idle machine's release build there
/// (9–16), and 2,633 at 21 K (docs/kanon.md, "Heuristic mode").
pub(crate) const DEFAULT_HEURISTIC_WORK: u64 = 1_500_000_000;
/// The fewest checks the default allows however wide the table.
pub(crate) const MIN_HEURISTIC_CHECKS: usize = 8;

/// The default number of checks for a table of `tuples` distinct tuples
/// ([`DEFAULT_HEURISTIC_WORK`]), in integers so that every machine computes the same.
fn default_checks(tuples: usize) -> usize {
    let t = tuples.max(1) as u64;
    // The integer cube root: the largest r with r^3 <= t.
    let mut r = (t as f64).cbrt() as u64 + 1;
    while r.saturating_mul(r).saturating_mul(r) > t {
        r -= 1;
    }
    let checks = DEFAULT_HEURISTIC_WORK / t.saturating_mul(r.max(1));
    usize::try_from(checks).unwrap_or(usize::MAX).max(MIN_HEURISTIC_CHECKS)
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    pub strategy: Strategy,
    /// `Auto` searches lattices with more nodes than this heuristically.
    pub max_nodes: usize,
    /// Stop proving optimality after this many node checks and report the gap. `None`: no
    /// limit for the optimal search, [`DEFAULT_HEURISTIC_WORK`] over the table's size for
    /// the heuristic.
    pub max_checks: Option<usize>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { strategy: Strategy::Auto, max_nodes: DEFAULT_MAX_NODES, max_checks: None }
    }
}

impl SearchOptions {
    /// Does this lattice get the heuristic?
    pub(crate) fn heuristic(&self, lattice_size: usize) -> bool {
        match self.strategy {
            Strategy::Auto => lattice_size > self.max_nodes,
            Strategy::Optimal => false,
            Strategy::Heuristic => true,
        }
    }

    /// The most node checks a search of this lattice over `tuples` distinct tuples may make;
    /// `None`: no limit. A function of the inputs only, never of the machine.
    pub(crate) fn check_limit(&self, lattice_size: usize, tuples: usize) -> Option<usize> {
        self.max_checks.or_else(|| self.heuristic(lattice_size).then(|| default_checks(tuples)))
    }
}

/// What a search found and how far it got in proving it optimal.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub(crate) best: Option<Evaluation>,
    /// The heuristic ran first.
    pub(crate) heuristic: bool,
    /// Every node that could beat `best` was ruled out (or checked).
    pub(crate) proven: bool,
    /// A proven lower bound of the optimal loss: the best loss when proven, else the next
    /// bound in the order where the budget ended (for DM, k |D|). `None` when nothing passed.
    pub(crate) lower_bound: Option<f64>,
    /// The work budget the search ran under, in node checks (`None`: unlimited).
    pub(crate) check_limit: Option<usize>,
}

/// The optimal anonymous node, or `None` when no node satisfies the models within budget.
pub fn optimal(ev: &mut Evaluator) -> Result<Option<Evaluation>> {
    let opts = SearchOptions { strategy: Strategy::Optimal, ..SearchOptions::default() };
    Ok(run(ev, &opts)?.best)
}

/// Search with the given strategy and budget.
pub fn run(ev: &mut Evaluator, opts: &SearchOptions) -> Result<SearchOutcome> {
    run_cancellable(ev, opts, &|| false)
}

/// [`run`], stopping with [`AnonError::Cancelled`] once `cancelled()` says so (the CLI's and
/// the Python package's Ctrl-C, through `Progress::cancelled`). It is read wherever the work
/// budget is, so a search stops within one node's evaluation (or one batch's).
pub(crate) fn run_cancellable(
    ev: &mut Evaluator,
    opts: &SearchOptions,
    cancelled: &dyn Fn() -> bool,
) -> Result<SearchOutcome> {
    let heuristic = opts.heuristic(ev.lattice.size());
    let check_limit = opts.check_limit(ev.lattice.size(), ev.scorer.ft.len());
    // Counted from here: an evaluator may have checked nodes before (tests reuse one).
    let limit = check_limit.map(|n| ev.evaluated.saturating_add(n));
    let by_bound = ev.loss().metric != Metric::Dm;
    let dims = ev.lattice.dims();
    let mut s = Search {
        by_bound,
        monotone: ev.monotone(),
        exact_bound: by_bound && ev.budget() == 0,
        lattice: ev.lattice.clone(),
        best: None,
        fails: Antichain::new(Toward::Down, dims),
        passes: Antichain::new(Toward::Up, dims),
        bounded: Antichain::new(Toward::Up, dims),
        checked: HashMap::new(),
        limit,
        cancelled,
    };
    if heuristic {
        s.heuristic(ev)?;
    }
    let stopped_at = s.prove(ev)?;
    if cancelled() {
        return Err(AnonError::Cancelled);
    }
    let proven = stopped_at.is_none();
    let lower_bound = match (stopped_at, &s.best) {
        (None, Some(b)) => Some(b.loss),
        (None, None) => None,
        (Some(lb), best) if by_bound => {
            let lb = lb.max(s.escape_bound(ev));
            Some(best.as_ref().map_or(lb, |b| lb.min(b.loss)))
        }
        // DM's order has no bound; every kept record is in a class of at least k and a
        // suppressed one costs |D| >= k, so DM >= k |D|.
        (Some(_), _) => Some(ev.dm_floor()),
    };
    Ok(SearchOutcome { best: s.best, heuristic, proven, lower_bound, check_limit })
}

/// State of one search: the best release so far and what is known about other nodes.
///
/// What is tagged both ways is a property that is monotone along the lattice: anonymity
/// itself when the models are monotone (always without suppression); otherwise "must
/// suppress more than the limit" by [`failing_share`], whose failing nodes are not anonymous
/// and rule out their down-sets, while its passing nodes still have to be checked.
struct Search<'a> {
    by_bound: bool,
    monotone: bool,
    /// Without suppression an anonymous LM/NCP node's loss is its bound.
    exact_bound: bool,
    lattice: Lattice,
    best: Option<Evaluation>,
    /// Nodes failing the tagged property: everything below them fails it and is not anonymous.
    fails: Antichain,
    /// Nodes passing the tagged property: everything above passes it (and is anonymous when
    /// the models are monotone).
    passes: Antichain,
    /// DM: nodes whose generalizations all cost at least the best.
    bounded: Antichain,
    /// Nodes checked so far and whether each is anonymous, so none is checked twice.
    checked: HashMap<NodeId, bool>,
    /// The search stops once the evaluator has made this many checks (the work budget).
    limit: Option<usize>,
    cancelled: &'a dyn Fn() -> bool,
}

impl Search<'_> {
    /// A lower bound of the loss of every anonymous node from the known failing ones: an
    /// anonymous node lies outside each one's down-set, so it exceeds each in some attribute,
    /// and its bound is at least that of the bottom raised in that attribute alone.
    fn escape_bound(&self, ev: &Evaluator) -> f64 {
        let bottom = vec![0u8; self.lattice.dims()];
        let heights = self.lattice.heights();
        let raised = |a: usize, l: u8| {
            let mut v = bottom.clone();
            v[a] = l;
            ev.bound(&v)
        };
        self.fails
            .iter()
            .map(|n| {
                (0..n.len()).filter(|&a| n[a] < heights[a]).map(|a| raised(a, n[a] + 1)).fold(f64::INFINITY, f64::min)
            })
            .fold(ev.bound(&bottom), f64::max)
    }

    /// Checks left in the work budget (`usize::MAX`: unlimited).
    fn checks_left(&self, ev: &Evaluator) -> usize {
        self.limit.map_or(usize::MAX, |l| l.saturating_sub(ev.evaluated))
    }

    /// Past the work budget, or cancelled by the user (then [`run_cancellable`] fails).
    fn out_of_budget(&self, ev: &Evaluator) -> bool {
        self.checks_left(ev) == 0 || (self.cancelled)()
    }

    fn beyond_best(&self, bound: f64) -> bool {
        self.by_bound && self.best.as_ref().is_some_and(|b| bound > b.loss + EPS * b.loss.abs().max(1.0))
    }

    /// Only nodes whose failure is inherited downward are kept, so no monotonicity test here.
    fn known_not_anonymous(&self, levels: &[u8]) -> bool {
        self.fails.covers(levels)
    }

    fn known_anonymous(&self, levels: &[u8]) -> bool {
        self.monotone && self.passes.covers(levels)
    }

    fn record(&mut self, e: Evaluation) {
        let levels = self.lattice.levels(e.node);
        if self.best.as_ref().is_some_and(|b| e.dm_bound >= b.loss) && !self.by_bound {
            self.bounded.insert(&levels);
        }
        let fails = if self.monotone { !e.anonymous } else { e.rules_out_below };
        if fails {
            self.fails.insert(&levels);
        } else {
            self.passes.insert(&levels);
        }
        if e.anonymous && self.best.as_ref().is_none_or(|b| better(&e, b, &self.lattice)) {
            self.best = Some(e);
        }
    }

    /// Check a node (once), record what it shows, and say whether it is anonymous.
    fn check(&mut self, ev: &mut Evaluator, node: NodeId) -> Result<bool> {
        if let Some(&anonymous) = self.checked.get(&node) {
            return Ok(anonymous);
        }
        let e = ev.evaluate(node)?;
        let anonymous = e.anonymous;
        self.checked.insert(node, anonymous);
        self.record(e);
        Ok(anonymous)
    }

    /// Is the node anonymous: known by tagging, else checked.
    fn anonymous_at(&mut self, ev: &mut Evaluator, node: NodeId) -> Result<bool> {
        let levels = self.lattice.levels(node);
        if self.known_not_anonymous(&levels) {
            return Ok(false);
        }
        if self.known_anonymous(&levels) {
            return Ok(true);
        }
        self.check(ev, node)
    }

    /// Does the node pass the tagged property: known by tagging, else checked.
    fn passes_at(&mut self, ev: &mut Evaluator, node: NodeId) -> Result<bool> {
        let levels = self.lattice.levels(node);
        if self.fails.covers(&levels) {
            return Ok(false);
        }
        if self.passes.covers(&levels) {
            return Ok(true);
        }
        self.check(ev, node)?;
        Ok(!self.fails.covers(&levels))
    }

    /// The node next in bound order, or what the search returns when it stops there: `None`
    /// when nothing left can beat the best (proven), the bound where the work budget ended
    /// (a lower bound of every node not yet ruled out). Peeks only: the caller takes the node.
    fn next_or_stop<F: Fn(&[u8]) -> f64>(
        &self,
        ev: &Evaluator,
        order: &mut BoundOrder<F>,
    ) -> ControlFlow<Option<f64>, NodeId> {
        let Some((node, bound)) = order.peek_outside(&self.fails, &self.bounded) else {
            return ControlFlow::Break(None);
        };
        if self.beyond_best(bound) {
            return ControlFlow::Break(None);
        }
        if self.out_of_budget(ev) {
            return ControlFlow::Break(Some(bound));
        }
        ControlFlow::Continue(node)
    }

    /// Visit nodes in bound order until nothing left can beat the best, jumping over the
    /// down-sets of failing nodes. Returns `None` when that is proven, or the bound where the
    /// work budget ended (a lower bound of every node not yet ruled out).
    fn prove(&mut self, ev: &mut Evaluator) -> Result<Option<f64>> {
        let lattice = self.lattice.clone();
        let loss = ev.loss().clone();
        let mut order = BoundOrder::new(&lattice, move |lv| loss.lower_bound(lv).unwrap_or(0.0));
        if !self.monotone {
            return self.scan(ev, &mut order);
        }
        loop {
            let node = match self.next_or_stop(ev, &mut order) {
                ControlFlow::Continue(node) => node,
                ControlFlow::Break(stop) => return Ok(stop),
            };
            order.next_outside(&self.fails, &self.bounded);
            let levels = lattice.levels(node);
            if self.known_anonymous(&levels) {
                // Known to pass, but its loss needs its classes. Without suppression the loss
                // is its bound and every cheaper node fails: the optimum.
                self.check(ev, node)?;
                if self.exact_bound {
                    return Ok(None);
                }
                continue;
            }
            self.climb(ev, node, false)?;
            if self.exact_bound && self.known_anonymous(&levels) {
                // Checked on the way (the first node of its path to pass).
                return Ok(None);
            }
        }
    }

    /// Without monotone models, evaluate in bound order, a batch at a time on all cores,
    /// skipping what the suppression need rules out, until the bound passes the best loss.
    /// From every node that rules out its down-set, climb as for monotone models (on the
    /// need, which is monotone) so that whole regions above the order's front are ruled out
    /// by a few checks.
    fn scan<F: Fn(&[u8]) -> f64>(&mut self, ev: &mut Evaluator, order: &mut BoundOrder<F>) -> Result<Option<f64>> {
        const BATCH: usize = 32;
        loop {
            if let ControlFlow::Break(stop) = self.next_or_stop(ev, order) {
                return Ok(stop);
            }
            // A batch never runs past the budget, so the checks made are the budget's exactly.
            let size = BATCH.min(self.checks_left(ev));
            let mut batch = Vec::with_capacity(size);
            while batch.len() < size
                && let Some((node, bound)) = order.peek_outside(&self.fails, &self.bounded)
                && !self.beyond_best(bound)
            {
                order.next_outside(&self.fails, &self.bounded);
                if !self.checked.contains_key(&node) {
                    batch.push(node);
                }
            }
            let mut ruled_out = Vec::new();
            for e in ev.evaluate_batch(&batch)? {
                if e.rules_out_below {
                    ruled_out.push(e.node);
                }
                self.checked.insert(e.node, e.anonymous);
                self.record(e);
            }
            for node in ruled_out {
                self.climb(ev, node, true)?;
            }
        }
    }

    /// A chain from `from` towards the top: each step to the cheapest-bound successor not
    /// known to pass the tagged property.
    fn path_up(&self, ev: &Evaluator, from: NodeId) -> Vec<NodeId> {
        let mut path = vec![from];
        let mut cur = from;
        loop {
            let next = self
                .lattice
                .successors(cur)
                .map(|(_, s)| (s, self.lattice.levels(s)))
                .filter(|(_, lv)| !self.passes.covers(lv))
                .min_by(|(a, la), (b, lb)| ev.bound(la).total_cmp(&ev.bound(lb)).then(a.cmp(b)));
            match next {
                Some((s, _)) => {
                    path.push(s);
                    cur = s;
                }
                None => return path,
            }
        }
    }

    /// Binary search on a chain (the property is monotone along it) for its first node that
    /// passes, given that `path[..lo]` is known to fail: its index, or `path.len()` when no
    /// node of the path passes. The property is anonymity, or the tagged property when
    /// `tagged`. `None` when `budgeted` and the work budget ends first.
    fn first_passing(
        &mut self,
        ev: &mut Evaluator,
        path: &[NodeId],
        mut lo: usize,
        budgeted: bool,
        tagged: bool,
    ) -> Result<Option<usize>> {
        let mut hi = path.len();
        while lo < hi {
            if budgeted && self.out_of_budget(ev) {
                return Ok(None);
            }
            let mid = lo + (hi - lo) / 2;
            let passes = if tagged { self.passes_at(ev, path[mid])? } else { self.anonymous_at(ev, path[mid])? };
            if passes {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(Some(hi))
    }

    /// From `start` (known to fail, or unknown), binary-search paths upward for their last
    /// node failing the tagged property and move there, until every successor is known to
    /// pass: the down-set of a maximal failing node is then ruled out by a few checks per
    /// path. An unknown start is decided by the same search (it fails when any node of the
    /// path fails), which saves its own check whenever it fails.
    fn climb(&mut self, ev: &mut Evaluator, start: NodeId, start_fails: bool) -> Result<()> {
        let (mut cur, mut failing) = (start, start_fails as usize);
        loop {
            let path = self.path_up(ev, cur);
            let Some(first) = self.first_passing(ev, &path, failing, true, true)? else { return Ok(()) };
            if first == 0 || path.len() == 1 {
                // The start passes, or nothing above it is left to learn.
                return Ok(());
            }
            cur = path[first - 1];
            failing = 1;
        }
    }

    /// Heuristic mode: a passing node fast, as the incumbent for [`Search::prove`]. The path
    /// from the bottom is binary-searched for its first anonymous node (exact for monotone
    /// models, a guess otherwise), then lowered one attribute at a time while a cheaper
    /// predecessor passes.
    fn heuristic(&mut self, ev: &mut Evaluator) -> Result<()> {
        let path = self.path_up(ev, self.lattice.bottom());
        // Not cut by the budget: a handful of checks, and without them there is no result.
        let Some(first) = self.first_passing(ev, &path, 0, false, false)? else { return Ok(()) };
        let Some(&found) = path.get(first) else { return Ok(()) };
        let mut cur = found;
        'down: while !self.out_of_budget(ev) {
            let mut preds: Vec<(f64, NodeId)> = self
                .lattice
                .predecessors(cur)
                .map(|(_, p)| (ev.bound(&self.lattice.levels(p)), p))
                .filter(|&(_, p)| !self.known_not_anonymous(&self.lattice.levels(p)))
                .collect();
            preds.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (_, p) in preds {
                if self.out_of_budget(ev) {
                    break 'down;
                }
                if self.check(ev, p)? {
                    cur = p;
                    continue 'down;
                }
            }
            break;
        }
        // A node only known to pass has no loss yet.
        self.check(ev, cur)?;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The default budget falls with the table as a check's cost rises, the same on every
    /// machine (integers only), and never below the floor.
    #[test]
    fn default_budget_is_fewer_checks_on_wider_tables() {
        assert_eq!(default_checks(1_000_000), 15);
        assert_eq!(default_checks(21_093), 2_633);
        assert_eq!(default_checks(27), 1_500_000_000 / 81);
        assert_eq!(default_checks(0), 1_500_000_000);
        assert_eq!(default_checks(usize::MAX), MIN_HEURISTIC_CHECKS);
        let opts = SearchOptions::default();
        assert_eq!(opts.check_limit(DEFAULT_MAX_NODES, 21_093), None, "optimal below max_nodes: no limit");
        assert_eq!(opts.check_limit(DEFAULT_MAX_NODES + 1, 21_093), Some(2_633));
        let asked = SearchOptions { max_checks: Some(7), ..opts };
        assert_eq!(asked.check_limit(DEFAULT_MAX_NODES + 1, 21_093), Some(7));
    }
}
