//! The traversal for a bound known from the levels alone (kanon's): globally optimal with
//! pruning, with a heuristic start and a work budget for lattices too large to prove on.
//!
//! Nodes are visited in ascending order of the bound ([`BoundOrder`], which jumps over the
//! regions already ruled out). These facts prune the rest:
//! - once an accepted node with key `best` is known, any node whose bound cannot beat it
//!   ([`Bound::open`]) cannot, and neither can its generalizations (the bound is monotone);
//! - a node tagged [`Tag::FailsBelow`] rules out its specializations, and one tagged
//!   [`Tag::PassesAbove`] its generalizations' checks of the tagged property (predictive
//!   tagging both ways, as in Flash): for a [`Criterion::monotone`] criterion those nodes are
//!   accepted unchecked; otherwise passing proves nothing, but failing still rules out;
//! - a bound of the up-set known after grouping ([`Bound::above`], DM's) at or past the best
//!   rules out the up-set;
//! - when an accepted node's key is its bound ([`Bound::exact`]), the first accepted node in
//!   bound order is optimal, even when it is only known to be accepted.
//!
//! Which node to check: when the node next in bound order fails, the search does not walk on
//! node by node. Like Flash (Kohlmayer et al. 2012) it lays a path from that node towards the
//! top, cheapest bound first, and binary-searches the path for its last failing node, whose
//! whole down-set is then known to fail; from there it lays the next path, until every
//! successor is known to pass. A few checks per path rule out the nodes the bound order
//! would otherwise check one by one, and the passing nodes met on the way bound the optimum
//! from above. The bound order still decides which nodes are left to check, so the result is
//! the optimum of exhaustive search. For a criterion that is not monotone, nodes are judged in
//! bound order a batch at a time on all cores, and climbs start from the nodes that fail below.
//!
//! Heuristic start: one path from the bottom, binary-searched for its first accepted node,
//! then greedy descent to a minimal accepted node (cheapest bound first); then the optimal
//! search runs from that incumbent until the work budget ends. Where it ends, the next bound
//! in the order is a proven lower bound of the optimum; when the order is exhausted first,
//! the result is proven optimal. The budget counts node checks ([`Evaluator::checks`]), never
//! time, so one input gives one result on any machine, at any load.

use super::{Best, Bound, Criterion, Evaluator, Tag};
use crate::error::{AnonError, Result};
use crate::lattice::{Antichain, BoundOrder, Lattice, NodeId, Toward};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Nodes judged at once in the batched scan of a criterion that is not monotone.
const BATCH: usize = 32;

/// The level-bound search over one lattice with one client's evaluator, criterion and bound.
pub(crate) struct Levels<'a, E: Evaluator, C, B> {
    lattice: &'a Lattice,
    ev: &'a mut E,
    criterion: &'a C,
    bound: &'a B,
    best: Best<E::Judged>,
    /// Nodes failing the tagged property: everything below them fails it and is not accepted.
    fails: Antichain,
    /// Nodes passing the tagged property: everything above passes it (and is accepted when
    /// the criterion is monotone).
    passes: Antichain,
    /// Nodes whose generalizations cannot beat the best ([`Bound::above`]).
    bounded: Antichain,
    /// Nodes checked so far and whether each is accepted, so none is checked twice.
    checked: HashMap<NodeId, bool>,
    /// The search stops once the evaluator has made this many checks (the work budget).
    limit: Option<usize>,
    cancelled: &'a dyn Fn() -> bool,
}

/// What a level-bound search found and how far it got in proving it optimal.
pub(crate) struct Found<J> {
    pub(crate) best: Option<J>,
    /// `None` when every node that could beat `best` was ruled out (or checked); else a proven
    /// lower bound of every node not ruled out: the next bound in the order where the budget
    /// ended, raised by what the failing nodes prove ([`Levels::escape_bound`]).
    pub(crate) stopped_at: Option<f64>,
}

impl<'a, E, C, B> Levels<'a, E, C, B>
where
    E: Evaluator,
    C: Criterion<E::Judged>,
    B: Bound<E::Judged>,
{
    /// A search allowed `checks` more node checks (`None`: unlimited), stopping with
    /// [`AnonError::Cancelled`] once `cancelled()` says so (read wherever the budget is, so
    /// within one check or one batch).
    pub(crate) fn new(
        lattice: &'a Lattice,
        (ev, criterion, bound): (&'a mut E, &'a C, &'a B),
        checks: Option<usize>,
        cancelled: &'a dyn Fn() -> bool,
    ) -> Self {
        // Counted from here: an evaluator may have checked nodes before (tests reuse one).
        let limit = checks.map(|n| ev.checks().saturating_add(n));
        let dims = lattice.dims();
        Levels {
            lattice,
            ev,
            criterion,
            bound,
            best: Best::new(),
            fails: Antichain::new(Toward::Down, dims),
            passes: Antichain::new(Toward::Up, dims),
            bounded: Antichain::new(Toward::Up, dims),
            checked: HashMap::new(),
            limit,
            cancelled,
        }
    }

    /// Run the search, after the heuristic start when `heuristic`.
    pub(crate) fn run(mut self, heuristic: bool) -> Result<Found<E::Judged>> {
        if heuristic {
            self.heuristic()?;
        }
        let stopped_at = self.prove()?;
        if (self.cancelled)() {
            return Err(AnonError::Cancelled);
        }
        let stopped_at = stopped_at.map(|lb| lb.max(self.escape_bound()));
        Ok(Found { best: self.best.into_inner(), stopped_at })
    }

    fn bound_of(&self, levels: &[u8]) -> f64 {
        self.bound.of_levels(levels)
    }

    /// A lower bound of the key of every accepted node from the known failing ones: an
    /// accepted node lies outside each one's down-set, so it exceeds each in some attribute,
    /// and its bound is at least that of the bottom raised in that attribute alone.
    fn escape_bound(&self) -> f64 {
        let bottom = vec![0u8; self.lattice.dims()];
        let heights = self.lattice.heights();
        let raised = |a: usize, l: u8| {
            let mut v = bottom.clone();
            v[a] = l;
            self.bound_of(&v)
        };
        self.fails
            .iter()
            .map(|n| {
                (0..n.len()).filter(|&a| n[a] < heights[a]).map(|a| raised(a, n[a] + 1)).fold(f64::INFINITY, f64::min)
            })
            .fold(self.bound_of(&bottom), f64::max)
    }

    /// Checks left in the work budget (`usize::MAX`: unlimited).
    fn checks_left(&self) -> usize {
        self.limit.map_or(usize::MAX, |l| l.saturating_sub(self.ev.checks()))
    }

    /// Past the work budget, or cancelled (then [`Levels::run`] fails).
    fn out_of_budget(&self) -> bool {
        self.checks_left() == 0 || (self.cancelled)()
    }

    fn beyond_best(&self, bound: f64) -> bool {
        self.best.key().is_some_and(|best| !self.bound.open((bound, 0.0), best))
    }

    /// Only nodes whose failure is inherited downward are kept, so no monotonicity test here.
    fn known_not_accepted(&self, levels: &[u8]) -> bool {
        self.fails.covers(levels)
    }

    fn known_accepted(&self, levels: &[u8]) -> bool {
        self.criterion.monotone() && self.passes.covers(levels)
    }

    /// Keep what a judged node proves and whether it is the best; whether it is accepted.
    fn record(&mut self, j: E::Judged) -> bool {
        let levels = self.lattice.levels(E::node(&j));
        if let (Some(above), Some(best)) = (self.bound.above(&j), self.best.key())
            && above >= best.0
        {
            self.bounded.insert(&levels);
        }
        match self.criterion.tag(&j) {
            Some(Tag::FailsBelow) => self.fails.insert(&levels),
            Some(Tag::PassesAbove) => self.passes.insert(&levels),
            Some(Tag::FailsAbove) | None => {}
        }
        self.best.offer(self.lattice, self.criterion, j)
    }

    /// Check a node (once), record what it shows, and say whether it is accepted.
    fn check(&mut self, node: NodeId) -> Result<bool> {
        if let Some(&accepted) = self.checked.get(&node) {
            return Ok(accepted);
        }
        let j = self.ev.evaluate_one(node)?;
        let accepted = self.record(j);
        self.checked.insert(node, accepted);
        Ok(accepted)
    }

    /// Is the node accepted: known by tagging, else checked.
    fn accepted_at(&mut self, node: NodeId) -> Result<bool> {
        let levels = self.lattice.levels(node);
        if self.known_not_accepted(&levels) {
            return Ok(false);
        }
        if self.known_accepted(&levels) {
            return Ok(true);
        }
        self.check(node)
    }

    /// Does the node pass the tagged property: known by tagging, else checked.
    fn passes_at(&mut self, node: NodeId) -> Result<bool> {
        let levels = self.lattice.levels(node);
        if self.fails.covers(&levels) {
            return Ok(false);
        }
        if self.passes.covers(&levels) {
            return Ok(true);
        }
        self.check(node)?;
        Ok(!self.fails.covers(&levels))
    }

    /// The node next in bound order, or what the search returns when it stops there: `None`
    /// when nothing left can beat the best (proven), the bound where the work budget ended.
    /// Peeks only: the caller takes the node.
    fn next_or_stop<F: Fn(&[u8]) -> f64>(&self, order: &mut BoundOrder<F>) -> ControlFlow<Option<f64>, NodeId> {
        let Some((node, bound)) = order.peek_outside(&self.fails, &self.bounded) else {
            return ControlFlow::Break(None);
        };
        if self.beyond_best(bound) {
            return ControlFlow::Break(None);
        }
        if self.out_of_budget() {
            return ControlFlow::Break(Some(bound));
        }
        ControlFlow::Continue(node)
    }

    /// Visit nodes in bound order until nothing left can beat the best, jumping over the
    /// down-sets of failing nodes. Returns `None` when that is proven, or the bound where the
    /// work budget ended (a lower bound of every node not yet ruled out).
    fn prove(&mut self) -> Result<Option<f64>> {
        let lattice = self.lattice;
        let bound = self.bound;
        let mut order = BoundOrder::new(lattice, |lv: &[u8]| bound.of_levels(lv));
        if !self.criterion.monotone() {
            return self.scan(&mut order);
        }
        loop {
            let node = match self.next_or_stop(&mut order) {
                ControlFlow::Continue(node) => node,
                ControlFlow::Break(stop) => return Ok(stop),
            };
            order.next_outside(&self.fails, &self.bounded);
            let levels = lattice.levels(node);
            if self.known_accepted(&levels) {
                // Known to pass, but its key needs its classes. With an exact bound the key
                // is its bound and every cheaper node fails: the optimum.
                self.check(node)?;
                if self.bound.exact() {
                    return Ok(None);
                }
                continue;
            }
            self.climb(node, false)?;
            if self.bound.exact() && self.known_accepted(&levels) {
                // Checked on the way (the first node of its path to pass).
                return Ok(None);
            }
        }
    }

    /// A criterion that is not monotone: judge in bound order, a batch at a time on all
    /// cores, skipping what failing nodes rule out, until the bound passes the best. From
    /// every node that fails below, climb as for monotone criteria (on the tagged property,
    /// which is monotone) so that whole regions above the order's front are ruled out by a few
    /// checks.
    fn scan<F: Fn(&[u8]) -> f64>(&mut self, order: &mut BoundOrder<F>) -> Result<Option<f64>> {
        loop {
            if let ControlFlow::Break(stop) = self.next_or_stop(order) {
                return Ok(stop);
            }
            // A batch never runs past the budget, so the checks made are the budget's exactly.
            let size = BATCH.min(self.checks_left());
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
            for (node, j) in batch.iter().zip(self.ev.evaluate(&batch)?) {
                if self.criterion.tag(&j) == Some(Tag::FailsBelow) {
                    ruled_out.push(*node);
                }
                let accepted = self.record(j);
                self.checked.insert(*node, accepted);
            }
            for node in ruled_out {
                self.climb(node, true)?;
            }
        }
    }

    /// A chain from `from` towards the top: each step to the cheapest-bound successor not
    /// known to pass the tagged property.
    fn path_up(&self, from: NodeId) -> Vec<NodeId> {
        let mut path = vec![from];
        let mut cur = from;
        loop {
            let next = self
                .lattice
                .successors(cur)
                .map(|(_, s)| (s, self.lattice.levels(s)))
                .filter(|(_, lv)| !self.passes.covers(lv))
                .min_by(|(a, la), (b, lb)| self.bound_of(la).total_cmp(&self.bound_of(lb)).then(a.cmp(b)));
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
    /// node of the path passes. The property is acceptance, or the tagged property when
    /// `tagged`. `None` when `budgeted` and the work budget ends first.
    fn first_passing(&mut self, path: &[NodeId], mut lo: usize, budgeted: bool, tagged: bool) -> Result<Option<usize>> {
        let mut hi = path.len();
        while lo < hi {
            if budgeted && self.out_of_budget() {
                return Ok(None);
            }
            let mid = lo + (hi - lo) / 2;
            let passes = if tagged { self.passes_at(path[mid])? } else { self.accepted_at(path[mid])? };
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
    fn climb(&mut self, start: NodeId, start_fails: bool) -> Result<()> {
        let (mut cur, mut failing) = (start, start_fails as usize);
        loop {
            let path = self.path_up(cur);
            let Some(first) = self.first_passing(&path, failing, true, true)? else { return Ok(()) };
            if first == 0 || path.len() == 1 {
                // The start passes, or nothing above it is left to learn.
                return Ok(());
            }
            cur = path[first - 1];
            failing = 1;
        }
    }

    /// The heuristic start: an accepted node fast, as the incumbent for [`Levels::prove`].
    /// The path from the bottom is binary-searched for its first accepted node (exact for
    /// monotone criteria, a guess otherwise), then lowered one attribute at a time while a
    /// cheaper predecessor is accepted.
    fn heuristic(&mut self) -> Result<()> {
        let path = self.path_up(self.lattice.bottom());
        // Not cut by the budget: a handful of checks, and without them there is no result.
        let Some(first) = self.first_passing(&path, 0, false, false)? else { return Ok(()) };
        let Some(&found) = path.get(first) else { return Ok(()) };
        let mut cur = found;
        'down: while !self.out_of_budget() {
            let mut preds: Vec<(f64, NodeId)> = self
                .lattice
                .predecessors(cur)
                .map(|(_, p)| (self.bound_of(&self.lattice.levels(p)), p))
                .filter(|&(_, p)| !self.known_not_accepted(&self.lattice.levels(p)))
                .collect();
            preds.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (_, p) in preds {
                if self.out_of_budget() {
                    break 'down;
                }
                if self.check(p)? {
                    cur = p;
                    continue 'down;
                }
            }
            break;
        }
        // A node only known to be accepted has no key yet.
        self.check(cur)?;
        Ok(())
    }
}
