//! Local recoding by rounds of full-domain generalization, bottom-up (ARX's iterative local
//! recoding, `optimizeIterativeFast`, with the node of each round chosen by its cost).
//!
//! Every round takes the records not yet released, picks one node of the lattice for them and
//! releases, at that node, the classes (of those records only) that satisfy the models; the
//! rest go on to the next round. The first round's node is the bottom when any class there
//! passes, so dense regions keep exact values, and each later round generalizes only what is
//! left. ARX picks each round's node by a search that prices suppression against
//! generalization (gsFactor); here a round takes the node whose released records cost least on
//! average (LM per released record, ties to more records, then the earlier node): a greedy
//! weighted set cover, which never pays a coarse node for records a finer one can place later.
//! A node whose failing records would fail the models as a whole keeps its smallest passing
//! classes back until they pass, so what is left can always be released (at worst at the root,
//! one class), and no record is suppressed.
//!
//! Classes of different rounds never share a released tuple: two rounds at the same node cannot
//! both release a tuple (the first released every passing class there, and the records left
//! only shrink), and two different nodes publish different (level, node) cells.

use super::judge::{Judge, Tally};
use super::models::Models;
use super::mondrian::Tuples;
use crate::encode::{FrequencyTable, Grouping, RecodedRows, generalize_to};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use std::cmp::Ordering;
use std::sync::Arc;

/// The records not yet released, as distinct tuples (ascending ids) grouped at the bottom node.
struct Rest {
    tuples: Vec<u32>,
    bottom: Grouping,
    total: Tally,
}

impl Rest {
    fn new(ft: &FrequencyTable, tuples: &Tuples, ids: Vec<u32>) -> Self {
        let m = ft.qis.len();
        let mut bottom = Grouping {
            levels: vec![0; m],
            codes: vec![Vec::with_capacity(ids.len()); m],
            sizes: Vec::with_capacity(ids.len()),
            ranges: vec![Vec::new(); m],
        };
        let mut total = Tally::default();
        for &t in &ids {
            let r = tuples.first_row[t as usize];
            for (a, q) in ft.qis.iter().enumerate() {
                let leaf = q.codes[r];
                bottom.codes[a].push(leaf);
                if q.hierarchy.is_numeric() {
                    bottom.ranges[a].push((leaf, leaf));
                }
            }
            bottom.sizes.push(tuples.tally[t as usize].size);
            total.add(&tuples.tally[t as usize]);
        }
        Rest { tuples: ids, bottom, total }
    }
}

/// The classes of one node over the records not yet released, brought up to date with the
/// rounds' releases when a round looks at the node (a round changes only the classes of the
/// records it releases, so a node is grouped once, not once a round, and a node no round looks
/// at again costs nothing more).
struct NodeState {
    /// How much of the log of released tuples the classes account for.
    applied: usize,
    /// The tuples grouped (ascending ids; some may have been released since) and their class.
    members: Vec<u32>,
    /// Members not released yet.
    live: usize,
    class_of: Vec<u32>,
    /// The classes' codes at the node.
    grouping: Grouping,
    /// Each class's records not yet released, and its LM degree.
    classes: Vec<Tally>,
    degree: Vec<f64>,
    /// The classes that pass: their records and LM (records × degree).
    passing: Tally,
    cost: f64,
}

impl NodeState {
    /// Group `rest` at `levels`; `applied`: the length of the release log so far.
    fn new(
        hs: &[Arc<Hierarchy>],
        judge: &Judge,
        tally: &[Tally],
        rest: &Rest,
        levels: &[u8],
        applied: usize,
    ) -> Result<Self> {
        let (grouping, class_of) = generalize_to(hs, &rest.bottom, levels)?;
        let mut classes = vec![Tally::default(); grouping.len()];
        for (i, &t) in rest.tuples.iter().enumerate() {
            classes[class_of[i] as usize].add(&tally[t as usize]);
        }
        let m = hs.len().max(1) as f64;
        let degree = (0..grouping.len())
            .map(|c| {
                hs.iter().enumerate().map(|(a, h)| h.degree(levels[a] as usize, grouping.codes[a][c])).sum::<f64>() / m
            })
            .collect();
        let mut state = NodeState {
            applied,
            members: rest.tuples.clone(),
            live: rest.tuples.len(),
            class_of,
            grouping,
            classes,
            degree,
            passing: Tally::default(),
            cost: 0.0,
        };
        for c in 0..state.classes.len() {
            state.count(judge, c, true);
        }
        Ok(state)
    }

    /// Add (or take out) class `c` to the passing sums, if it passes.
    fn count(&mut self, judge: &Judge, c: usize, add: bool) {
        let t = &self.classes[c];
        if t.size == 0 || !judge.ok(t) {
            return;
        }
        let cost = t.size as f64 * self.degree[c];
        if add {
            self.passing.add(t);
            self.cost += cost;
        } else {
            self.passing.sub(t);
            self.cost -= cost;
        }
    }

    /// Take the records released since the state was last brought up to date (`log`: every
    /// tuple released, in order; those after `applied` were members) out of their classes.
    fn catch_up(&mut self, judge: &Judge, tally: &[Tally], log: &[u32]) {
        for &t in &log[self.applied..] {
            let Ok(i) = self.members.binary_search(&t) else { continue };
            let c = self.class_of[i] as usize;
            self.live -= 1;
            self.count(judge, c, false);
            self.classes[c].sub(&tally[t as usize]);
            self.count(judge, c, true);
        }
        self.applied = log.len();
    }

    /// Which classes this node would release now: the passing ones, less the smallest of them
    /// while the records left would fail the models as a whole (so a later round can release
    /// them, at worst at the root). `None` when none is released.
    fn choice(&self, judge: &Judge, rest: &Tally) -> Option<Choice> {
        let mut left = rest.clone();
        left.sub(&self.passing);
        if left.size == 0 || judge.ok(&left) {
            let ratio = self.cost / self.passing.size as f64;
            return (self.passing.size > 0).then_some(Choice {
                ratio,
                released: self.passing.size,
                kept_back: Vec::new(),
            });
        }
        let ok = |c: usize| self.classes[c].size > 0 && judge.ok(&self.classes[c]);
        let mut passing: Vec<usize> = (0..self.classes.len()).filter(|&c| ok(c)).collect();
        passing.sort_by_key(|&c| (self.classes[c].size, c));
        let (mut released, mut cost, mut kept_back) = (self.passing.size, self.cost, Vec::new());
        for c in passing {
            if judge.ok(&left) {
                break;
            }
            left.add(&self.classes[c]);
            released -= self.classes[c].size;
            cost -= self.classes[c].size as f64 * self.degree[c];
            kept_back.push(c);
        }
        (released > 0 && judge.ok(&left)).then(|| Choice { ratio: cost / released as f64, released, kept_back })
    }

    /// Is class `c` released by `choice`?
    fn releases(&self, judge: &Judge, choice: &Choice, c: usize) -> bool {
        self.classes[c].size > 0 && judge.ok(&self.classes[c]) && !choice.kept_back.contains(&c)
    }
}

/// What a node would release in a round.
struct Choice {
    /// LM per released record.
    ratio: f64,
    released: u64,
    /// Passing classes held back for what is left.
    kept_back: Vec<usize>,
}

/// Better: cheaper per record, then more records, then the earlier node.
fn better(a: (&Choice, usize), b: (&Choice, usize)) -> bool {
    let by = a.0.ratio.partial_cmp(&b.0.ratio).unwrap_or(Ordering::Equal);
    by.then(b.0.released.cmp(&a.0.released)).then(a.1.cmp(&b.1)) == Ordering::Less
}

/// Every node of the lattice of `heights`, in lexicographic order.
fn lattice(heights: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![vec![0u8; heights.len()]];
    for (a, &h) in heights.iter().enumerate() {
        let prev = std::mem::take(&mut out);
        for node in prev {
            for l in 0..=h {
                let mut n = node.clone();
                n[a] = l;
                out.push(n);
            }
        }
    }
    out
}

/// `degrees[a][level][leaf]`: the LM degree of a leaf generalized to `level` (what
/// `local::summarize` and `metric_value` count).
fn leaf_degrees(hs: &[Arc<Hierarchy>]) -> Vec<Vec<Vec<f64>>> {
    hs.iter().map(|h| (0..=h.height()).map(|l| h.up(l).iter().map(|&c| h.degree(l, c)).collect()).collect()).collect()
}

/// The nodes in ascending order of a lower bound of their ratio for `rest`: the mean over
/// attributes of the cheapest degree any rest record has there (ties in node order).
fn bound_order(nodes: &[Vec<u8>], degrees: &[Vec<Vec<f64>>], rest: &Rest) -> Vec<(f64, usize)> {
    let floor: Vec<Vec<f64>> = degrees
        .iter()
        .enumerate()
        .map(|(a, by_level)| {
            by_level
                .iter()
                .map(|d| rest.bottom.codes[a].iter().map(|&leaf| d[leaf as usize]).fold(f64::INFINITY, f64::min))
                .collect()
        })
        .collect();
    let m = degrees.len().max(1) as f64;
    let bound = |n: usize| nodes[n].iter().enumerate().map(|(a, &l)| floor[a][l as usize]).sum::<f64>() / m;
    let mut order: Vec<(f64, usize)> = (0..nodes.len()).map(|n| (bound(n), n)).collect();
    order.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap_or(Ordering::Equal).then(x.1.cmp(&y.1)));
    order
}

/// Recode the table (see the module's doc). `None` when the whole table fails the models.
pub(crate) fn recode(
    ft: &FrequencyTable,
    models: &Models,
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<RecodedRows>> {
    let judge = Judge::new(ft, models);
    let tuples = Tuples::new(ft, &judge);
    let mut rest = Rest::new(ft, &tuples, (0..tuples.first_row.len() as u32).collect());
    if !judge.ok(&rest.total) {
        return Ok(None);
    }
    let hs = ft.hierarchies();
    let nodes = lattice(&ft.heights());
    let degrees = leaf_degrees(&hs);
    let mut states: Vec<Option<NodeState>> = (0..nodes.len()).map(|_| None).collect();
    let mut cells = vec![Vec::new(); ft.len()];
    let mut log: Vec<u32> = Vec::new();
    while !rest.tuples.is_empty() {
        if cancelled() {
            return Err(AnonError::Cancelled);
        }
        // Nodes in bound order, stopping at the first bound above the best ratio found: no
        // node left can beat or tie it. The top node releases every rest record in one class,
        // which passes (the invariant `choice` keeps), so a round always has a node.
        let mut best: Option<(Choice, usize)> = None;
        for (b, n) in bound_order(&nodes, &degrees, &rest) {
            if best.as_ref().is_some_and(|(c, _)| b > c.ratio) {
                break;
            }
            // Regrouped when most of its members are gone: `choice` may walk every class.
            let stale = states[n].as_mut().is_none_or(|s| {
                s.catch_up(&judge, &tuples.tally, &log);
                s.live * 4 < s.members.len()
            });
            if stale {
                states[n] = Some(NodeState::new(&hs, &judge, &tuples.tally, &rest, &nodes[n], log.len())?);
            }
            let state = states[n].as_ref().expect("grouped above");
            if let Some(c) = state.choice(&judge, &rest.total)
                && best.as_ref().is_none_or(|b| better((&c, n), (&b.0, b.1)))
            {
                best = Some((c, n));
            }
        }
        let Some((choice, n)) = best else {
            return Err(AnonError::argument(
                "kanon_anonymize",
                "local",
                "local=iterative found no node to release the records left",
            ));
        };
        let released =
            publish(ft, &tuples, &judge, &rest, states[n].as_ref().expect("chosen"), &nodes[n], &choice, &mut cells);
        log.extend_from_slice(&released);
        let left = rest.tuples.iter().copied().filter(|t| released.binary_search(t).is_err()).collect();
        rest = Rest::new(ft, &tuples, left);
    }
    Ok(Some(RecodedRows { suppressed: vec![false; ft.len()], cells }))
}

/// Write the cells of the records `choice` releases at node `levels`; returns their tuples
/// (ascending).
#[allow(clippy::too_many_arguments)]
fn publish(
    ft: &FrequencyTable,
    tuples: &Tuples,
    judge: &Judge,
    rest: &Rest,
    state: &NodeState,
    levels: &[u8],
    choice: &Choice,
    cells: &mut [Vec<(u8, u32)>],
) -> Vec<u32> {
    let mut released = Vec::new();
    for &t in &rest.tuples {
        let i = state.members.binary_search(&t).expect("a node groups every tuple left when it is grouped");
        let c = state.class_of[i] as usize;
        if !state.releases(judge, choice, c) {
            continue;
        }
        let published: Vec<(u8, u32)> = (0..levels.len()).map(|a| (levels[a], state.grouping.codes[a][c])).collect();
        tuples.rows(t, ft).for_each(|r| cells[r] = published.clone());
        released.push(t);
    }
    released
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lattice_is_every_node_in_lexicographic_order() {
        assert_eq!(lattice(&[1, 2]), vec![vec![0, 0], vec![0, 1], vec![0, 2], vec![1, 0], vec![1, 1], vec![1, 2]]);
    }

    /// k = 2 on (a, b): (x,z) and (y,z) hold two records each and keep their values (the first
    /// round is the bottom). Of the three single records left, [1, 0] would release (*,w) and
    /// [0, 1] (x,*), but each would leave one record, which no later round could release: both
    /// hold their class back, and the three form one class at the root.
    #[test]
    fn dense_classes_stay_exact_and_no_record_is_stranded() {
        let ft = crate::methods::kanon::local::tests::table();
        let rows = recode(&ft, &Models::k_only(2), &|| false).unwrap().unwrap();
        let label = |a: usize, r: usize| ft.qis[a].hierarchy.label(0, ft.qis[a].codes[r]).to_string();
        for r in 0..ft.len() {
            let dense = label(1, r) == "z";
            let want =
                if dense { vec![(0, ft.qis[0].codes[r]), (0, ft.qis[1].codes[r])] } else { vec![(1, 0), (1, 0)] };
            assert_eq!(rows.cells[r], want, "row ({}, {})", label(0, r), label(1, r));
        }
        assert!(rows.suppressed.iter().all(|&s| !s));
        assert!(recode(&ft, &Models::k_only(8), &|| false).unwrap().is_none(), "7 records cannot hold k = 8");
    }
}
