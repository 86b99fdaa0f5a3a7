//! kanon's node search: globally optimal full-domain search with pruning, and a heuristic
//! for lattices too large to prove optimality on, as a client of the shared driver
//! ([`crate::lattice::search::Levels`], which owns the traversal: bound order, Flash's paths,
//! predictive tagging, the heuristic start and the work budget). kanon supplies:
//!
//! - the evaluator ([`Evaluator`]): group a node from its cheapest cached specialization,
//!   find the classes failing the models, score the release;
//! - the bound: for LM and NCP the generalization-only loss, separable
//!   by attribute and monotone along the lattice; for DM none (bottom-up by height), with DM's
//!   bound of the up-set from the class sizes; without suppression an anonymous LM/NCP node's
//!   loss equals its bound, so the first anonymous node in bound order is optimal;
//! - the criterion: anonymity, tagged both ways when the models are monotone (always without
//!   suppression); otherwise, with suppression and non-monotone models (entropy or recursive
//!   diversity, t-closeness), a node whose classes must, split however, suppress more records
//!   than the limit allows ([`failing_share`]: all of a class failing k or distinct l, a share
//!   of one failing t-closeness or entropy diversity by convexity) rules out its
//!   specializations: that need is monotone, so it is tagged both ways like anonymity, though
//!   passing it proves nothing.
//!
//! Heuristic mode (lattices above `max_nodes`, or asked for) starts from a good node and
//! proves as much as the work budget allows. The budget counts node checks
//! ([`Evaluator::evaluated`]), never time: the checks a search makes depend only on its
//! inputs, so one input gives one release on any machine, at any load (a wall-clock budget
//! made the release depend on how busy the machine was). Where it ends, the next bound in the
//! order is a proven lower bound of the optimum, reported beside the result (the bound gap).
//!
//! [`exhaustive`] evaluates every node and is the reference the tests compare against.

use super::loss::{LossTable, Metric};
use super::models::{Models, SensitiveContext, class_ok, failing_share};
use crate::encode::{Cached, FrequencyTable, Grouping, NodeCache};
use crate::error::Result;
use crate::lattice::search::{self as driver, Bound, Criterion, EPS, Key, Levels, Tag, better};
use crate::lattice::{Lattice, NodeId};
use std::sync::Arc;

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
    /// ([`NodeCache::sample_class_sizes`], unless the sample's codes would reject little of
    /// the source, when grouping costs less); when the sampled classes smaller than k already
    /// hold more records than may be suppressed, the node and all below it fail, ungrouped.
    pub(crate) fn evaluate_node(&mut self, node: NodeId) -> Result<Evaluation> {
        self.evaluated += 1;
        if let Some(e) = self.probe(node)? {
            return Ok(e);
        }
        let c = self.nodes.classes(node)?;
        Ok(self.scorer.check(node, &c))
    }

    /// The sampled failure test of [`Evaluator::evaluate_node`]. Its cost is one pass over the
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

    pub(crate) fn loss(&self) -> &LossTable {
        &self.scorer.loss
    }

    pub(crate) fn budget(&self) -> u64 {
        self.scorer.budget
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
    let by_bound = ev.loss().metric != Metric::Dm;
    let rules =
        Rules { by_bound, monotone: ev.monotone(), exact: by_bound && ev.budget() == 0, loss: ev.loss().clone() };
    let lattice = ev.lattice.clone();
    let found = Levels::new(&lattice, (&mut *ev, &rules, &rules), check_limit, cancelled).run(heuristic)?;
    let lower_bound = match (found.stopped_at, &found.best) {
        (None, Some(b)) => Some(b.loss),
        (None, None) => None,
        (Some(lb), best) if by_bound => Some(best.as_ref().map_or(lb, |b| lb.min(b.loss))),
        // DM's order has no bound; every kept record is in a class of at least k and a
        // suppressed one costs |D| >= k, so DM >= k |D|.
        (Some(_), _) => Some(ev.dm_floor()),
    };
    let proven = found.stopped_at.is_none();
    Ok(SearchOutcome { best: found.best, heuristic, proven, lower_bound, check_limit })
}

/// kanon's criterion and bound for the driver (module doc).
struct Rules {
    /// LM and NCP: ordered and stopped by the loss bound; DM: by height, stopped by DM's
    /// bound of the up-set.
    by_bound: bool,
    /// Anonymity itself is tagged (monotone models, or no suppression).
    monotone: bool,
    /// Without suppression an anonymous LM/NCP node's loss is its bound.
    exact: bool,
    loss: LossTable,
}

impl driver::Evaluator for Evaluator<'_> {
    type Judged = Evaluation;

    fn node(e: &Evaluation) -> NodeId {
        e.node
    }

    /// On all cores (the nodes are independent), then their groupings cached.
    fn evaluate(&mut self, nodes: &[NodeId]) -> Result<Vec<Evaluation>> {
        let scorer = &self.scorer;
        let out = self.nodes.map_batch(nodes, |n, c| Ok(scorer.check(n, c)))?;
        self.evaluated += out.len();
        Ok(out)
    }

    /// With the sampled probe of [`Evaluator::evaluate_node`].
    fn evaluate_one(&mut self, node: NodeId) -> Result<Evaluation> {
        self.evaluate_node(node)
    }

    fn checks(&self) -> usize {
        self.evaluated
    }
}

impl Criterion<Evaluation> for Rules {
    fn accepted(&self, e: &Evaluation) -> Option<(NodeId, Key)> {
        e.anonymous.then_some((e.node, (e.loss, 0.0)))
    }

    /// What is tagged both ways is a property monotone along the lattice: anonymity itself
    /// when the models are monotone; otherwise "must suppress more than the limit" by
    /// [`failing_share`], whose failing nodes are not anonymous and rule out their down-sets,
    /// while its passing nodes still have to be checked.
    fn tag(&self, e: &Evaluation) -> Option<Tag> {
        let fails = if self.monotone { !e.anonymous } else { e.rules_out_below };
        Some(if fails { Tag::FailsBelow } else { Tag::PassesAbove })
    }

    fn monotone(&self) -> bool {
        self.monotone
    }
}

impl Bound<Evaluation> for Rules {
    /// The lower bound of the node's loss that orders the search (0 for DM).
    fn of_levels(&self, levels: &[u8]) -> f64 {
        self.loss.lower_bound(levels).unwrap_or(0.0)
    }

    /// DM without suppression: a lower bound of DM for the node and its generalizations.
    fn above(&self, e: &Evaluation) -> Option<f64> {
        (!self.by_bound).then_some(e.dm_bound)
    }

    fn open(&self, bound: Key, best: Key) -> bool {
        !self.by_bound || bound.0 <= best.0 + EPS * best.0.abs().max(1.0)
    }

    fn exact(&self) -> bool {
        self.exact
    }
}

/// Every node evaluated, the best anonymous one returned: the reference for tests.
pub fn exhaustive(ev: &mut Evaluator) -> Result<Option<Evaluation>> {
    let lattice = ev.lattice.clone();
    let mut best: Option<Evaluation> = None;
    for node in 0..lattice.size() {
        let e = ev.evaluate_node(node)?;
        let key = |e: &Evaluation| (e.node, (e.loss, 0.0));
        if e.anonymous && best.as_ref().is_none_or(|b| better(&lattice, key(&e), key(b))) {
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
