//! The one lattice search every node-choosing method runs: a driver that owns the traversal
//! (which node next, what is pruned, what is tagged, when to stop, the work budget), fed by
//! three parts a method supplies, as ARX splits its checker, algorithm and criteria:
//!
//! - an [`Evaluator`] groups nodes and judges them, a batch at a time on the pool (kanon's
//!   anonymity check and loss, hceil's ceiling and bound, then its counterfeits and catalog,
//!   IPA's scores);
//! - a [`Criterion`] says whether a judged node is accepted (a solution, with its objective
//!   key) and what it proves about other nodes ([`Tag`]): the driver keeps those proofs in
//!   [`Antichain`]s and never evaluates a node they decide;
//! - a [`Bound`] gives a lower bound of a node's key, known from its levels before grouping
//!   (kanon's loss bound, [`BoundOrder`](super::BoundOrder)) or only after grouping (hceil's
//!   RCE bound, [`BestFirst`] when it never falls upward), and the stop rule comparing a bound
//!   to the best.
//!
//! The traversals, by what the bound allows:
//! - [`every`]: no bound can prune (IPA: the exponential mechanism needs every node's score),
//!   so every node inside a public up-closed rule, in id order;
//! - [`Levels`] (in `levels.rs`): nodes cheapest level bound first, Flash's binary-searched
//!   paths up from failing nodes, predictive tagging both ways, a heuristic start and a budget
//!   of node checks, stopping where the bound passes the best (kanon);
//! - [`best_first`]: a bound known after grouping that never falls upward: nodes taken
//!   cheapest first, a node grouped only once its taken predecessor's bound makes it the
//!   cheapest entry left, the rest never (hceil's default);
//! - [`down_set`] then [`by_sorted_bound`]: a bound known after grouping that may fall
//!   upward: every node of a criterion's down-set grouped bottom-up (hceil's line 1, the
//!   up-sets of failing nodes skipped), then judged cheapest bound first until the bound passes
//!   the best.
//!
//! Ties between accepted nodes of equal key go to the lower node (height, then id), the same
//! in every traversal ([`better`]).

mod levels;

pub(crate) use levels::Levels;

use super::{Antichain, BestFirst, BottomUp, Lattice, NodeId, Toward};
use crate::error::Result;
use std::cmp::Ordering;

/// An objective's value or bound: compared first on `.0`, then on `.1`.
pub(crate) type Key = (f64, f64);

/// Relative tolerance when comparing keys computed along different paths.
pub(crate) const EPS: f64 = 1e-9;

/// `a` against `b`, each part within a relative tolerance: Less, Equal or Greater.
pub(crate) fn compare(a: Key, b: Key) -> Ordering {
    for (x, y) in [(a.0, b.0), (a.1, b.1)] {
        let tol = EPS * x.abs().max(y.abs()).max(1.0);
        if (x - y).abs() > tol {
            return x.total_cmp(&y);
        }
    }
    Ordering::Equal
}

/// Does accepted node `a` beat `b`: a smaller key, or an equal one lower in the lattice?
pub(crate) fn better(lattice: &Lattice, a: (NodeId, Key), b: (NodeId, Key)) -> bool {
    match compare(a.1, b.1) {
        Ordering::Equal => (lattice.height(a.0), a.0) < (lattice.height(b.0), b.0),
        o => o.is_lt(),
    }
}

/// Groups nodes and judges them: the part of a search that reads the data.
pub(crate) trait Evaluator {
    /// One judged node.
    type Judged: Send;

    /// The node a judged node is about.
    fn node(j: &Self::Judged) -> NodeId;

    /// Judge several nodes (independent, so on all cores); results in the order of `nodes`.
    fn evaluate(&mut self, nodes: &[NodeId]) -> Result<Vec<Self::Judged>>;

    /// Judge one node on its own, where a single node allows shortcuts a batch does not.
    fn evaluate_one(&mut self, node: NodeId) -> Result<Self::Judged> {
        Ok(self.evaluate(&[node])?.pop().expect("one result per node"))
    }

    /// Nodes judged so far: the unit of the work budget, never the clock.
    fn checks(&self) -> usize {
        0
    }
}

/// The second stage of a search whose bound is known only after grouping: judging the nodes
/// the order takes (hceil's counterfeits and catalog), once [`Evaluator::evaluate`] has
/// grouped them for their bound.
pub(crate) trait Scorer {
    /// One scored node.
    type Scored: Send;

    /// Score several nodes on all cores; results in the order of `nodes`.
    fn score(&mut self, nodes: &[NodeId]) -> Result<Vec<Self::Scored>>;
}

/// What a judged node proves about others, by a property monotone along the lattice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    /// The node and its specializations fail (are never accepted).
    FailsBelow,
    /// The node and its generalizations pass the tagged property: accepted when the
    /// criterion is [`Criterion::monotone`], still to be judged otherwise.
    PassesAbove,
    /// The node and its generalizations fail (hceil's ceiling).
    FailsAbove,
}

/// Is a judged node accepted, and what does it prove about other nodes?
pub(crate) trait Criterion<J> {
    /// The node and its objective key when it is accepted, `None` when it is not.
    fn accepted(&self, j: &J) -> Option<(NodeId, Key)>;

    /// What the node proves about others; `None`: nothing.
    fn tag(&self, _j: &J) -> Option<Tag> {
        None
    }

    /// Is acceptance itself the tagged property, so a node above a passing one is accepted?
    fn monotone(&self) -> bool {
        false
    }
}

/// Lower bounds of a node's key and the stop rule.
pub(crate) trait Bound<J> {
    /// Before grouping: a lower bound from the levels alone that never falls when a level is
    /// raised (a constant qualifies: then the order is by height).
    fn of_levels(&self, _levels: &[u8]) -> f64 {
        0.0
    }

    /// After grouping: a lower bound of the node's key.
    fn of_judged(&self, _j: &J) -> Key {
        (0.0, 0.0)
    }

    /// After grouping: a lower bound of the key of every generalization of the node, when
    /// one is known (DM's, from its class sizes): once it reaches the best, the whole up-set
    /// is pruned.
    fn above(&self, _j: &J) -> Option<f64> {
        None
    }

    /// Can a node whose bound is `bound` still beat the best key? The stop rule.
    fn open(&self, bound: Key, best: Key) -> bool;

    /// Does an accepted node's key equal its level bound, so that the first accepted node in
    /// bound order is optimal?
    fn exact(&self) -> bool {
        false
    }
}

/// The best accepted node so far, as [`better`] ranks them.
pub(crate) struct Best<J> {
    pub(crate) node: Option<(J, NodeId, Key)>,
}

impl<J> Best<J> {
    pub(crate) fn new() -> Self {
        Best { node: None }
    }

    /// The best key so far.
    pub(crate) fn key(&self) -> Option<Key> {
        self.node.as_ref().map(|(_, _, k)| *k)
    }

    /// Keep `j` when the criterion accepts it and it beats the best; whether it is accepted.
    pub(crate) fn offer<C: Criterion<J>>(&mut self, lattice: &Lattice, criterion: &C, j: J) -> bool {
        let Some((node, key)) = criterion.accepted(&j) else { return false };
        if self.node.as_ref().is_none_or(|&(_, n, k)| better(lattice, (node, key), (n, k))) {
            self.node = Some((j, node, key));
        }
        true
    }

    pub(crate) fn into_inner(self) -> Option<J> {
        self.node.map(|(j, _, _)| j)
    }
}

/// Every node inside `wanted` (a public rule closed upward: a node's generalizations are
/// wanted when it is), judged, in id order. No bound prunes this traversal: it serves a choice
/// that needs every node's score (an exponential mechanism's probabilities are normalized over
/// all of them, so leaving one out would change every probability). `Err` from the evaluator
/// only; an empty answer is the caller's to judge.
pub(crate) fn every<E: Evaluator>(
    lattice: &Lattice,
    ev: &mut E,
    wanted: impl Fn(&[u8]) -> bool,
) -> Result<Vec<E::Judged>> {
    let nodes: Vec<NodeId> = (0..lattice.size()).filter(|&n| wanted(&lattice.levels(n))).collect();
    ev.evaluate(&nodes)
}

/// Line 1 of a search whose criterion fails upward ([`Tag::FailsAbove`]): the judged nodes
/// of its down-set, bottom-up (by height, ids ascending within a height). A failing node
/// rules out its generalizations without their being grouped, so a node is kept when it and
/// every node below it pass.
pub(crate) fn down_set<E: Evaluator, C: Criterion<E::Judged>>(
    lattice: &Lattice,
    ev: &mut E,
    criterion: &C,
) -> Result<Vec<E::Judged>> {
    let mut fails_above = Antichain::new(Toward::Up, lattice.dims());
    let mut scan = BottomUp::new(lattice);
    let mut out = Vec::new();
    loop {
        let batch = scan.next_batch(&fails_above, BottomUp::BATCH);
        if batch.is_empty() {
            return Ok(out);
        }
        for j in ev.evaluate(&batch)? {
            if criterion.tag(&j) == Some(Tag::FailsAbove) {
                fails_above.insert(&lattice.levels(E::node(&j)));
            } else {
                out.push(j);
            }
        }
    }
}

/// Score `nodes` (each with its bound), cheapest bound first (ties by height,
/// then id), `batch` at a time, until the cheapest bound left cannot beat the best: the best
/// accepted node, the same as judging them all.
pub(crate) fn by_sorted_bound<S: Scorer, C: Criterion<S::Scored>>(
    lattice: &Lattice,
    mut nodes: Vec<(NodeId, Key)>,
    scorer: &mut S,
    criterion: &C,
    open: impl Fn(Key, Key) -> bool,
    batch: usize,
) -> Result<Option<S::Scored>> {
    nodes.sort_by(|a, b| {
        (a.1.0.total_cmp(&b.1.0).then(a.1.1.total_cmp(&b.1.1)))
            .then(lattice.height(a.0).cmp(&lattice.height(b.0)))
            .then(a.0.cmp(&b.0))
    });
    let mut best = Best::new();
    for chunk in nodes.chunks(batch.max(1)) {
        let todo: Vec<NodeId> =
            chunk.iter().filter(|(_, b)| best.key().is_none_or(|k| open(*b, k))).map(|&(n, _)| n).collect();
        if todo.is_empty() {
            break;
        }
        for j in scorer.score(&todo)? {
            best.offer(lattice, criterion, j);
        }
    }
    Ok(best.into_inner())
}

/// Best-first on a bound known after grouping that never falls when a level is raised: a
/// node enters the order at its taken predecessor's bound and is grouped by
/// [`Evaluator::evaluate`] only once it is the cheapest entry left (nodes failing upward are
/// dropped there, and their generalizations never reached through them); the cheapest `batch`
/// grouped nodes are then taken and scored by [`Scorer::score`], until the cheapest entry left
/// cannot beat the best. Every node whose bound is at most the optimum is reached through
/// nodes whose bounds are too, so the result is the optimum of scoring every node of the
/// down-set ([`down_set`] then [`by_sorted_bound`]), and the batches taken are those of
/// grouping every successor of every taken node first ([`BestFirst`]).
///
/// `batch` is (nodes taken and scored at once, most nodes grouped at once). Grouping more at
/// once keeps the cores busy when each grouping is short; it can only group a node earlier
/// than needed (one whose stand-in bound a better node, grouped in the same call, would have
/// kept below the top of the order), never change which nodes are taken, or in which batches:
/// a node is taken only while no ungrouped entry is cheaper, and an entry's stand-in is a lower
/// bound of its own.
pub(crate) fn best_first<E, CG, CS>(
    lattice: &Lattice,
    ev: &mut E,
    (grouped, scored): (&CG, &CS),
    bound: &impl Bound<E::Judged>,
    (batch, group): (usize, usize),
) -> Result<Option<E::Scored>>
where
    E: Evaluator + Scorer,
    CG: Criterion<E::Judged>,
    CS: Criterion<E::Scored>,
{
    let mut order = BestFirst::new(lattice);
    let mut best = Best::new();
    loop {
        let key = best.key();
        let open = |b: Key| key.is_none_or(|k| bound.open(b, k));
        let mut taken = Vec::new();
        while taken.len() < batch {
            let todo = order.ungrouped(group.max(1), open);
            if todo.is_empty() {
                let more = order.take(batch - taken.len(), open);
                if more.is_empty() {
                    break;
                }
                taken.extend(more);
                continue;
            }
            for j in ev.evaluate(&todo)? {
                if grouped.tag(&j) != Some(Tag::FailsAbove) {
                    order.offer(E::node(&j), bound.of_judged(&j));
                }
            }
        }
        if taken.is_empty() {
            return Ok(best.into_inner());
        }
        order.expand(&taken);
        let nodes: Vec<NodeId> = taken.iter().map(|&(n, _)| n).collect();
        for j in ev.score(&nodes)? {
            best.offer(lattice, scored, j);
        }
    }
}

#[cfg(test)]
mod tests;
