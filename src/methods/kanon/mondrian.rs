//! Local recoding by top-down multidimensional partitioning under the declared hierarchies
//! (Mondrian, LeFevre et al. 2006, with hierarchy nodes as the cuts, as in top-down
//! specialization): every record starts at the root of every hierarchy, and a partition is
//! split on one attribute into the children of its node there. Children that satisfy the
//! models become partitions of their own; the rest stay together at the parent node (a
//! remainder, split further on the other attributes only). When the remainder alone would
//! fail, the smallest children join it until it passes. Of the attributes a partition can be
//! split on, the split that lowers LM (records × degree) the most is taken, ties to the more
//! important attribute. Dense regions so end at fine levels and sparse ones stay coarse.
//!
//! Partitions never share a released tuple: two of them differ in the attribute they were last
//! split apart on (two children, or a child and the remainder at the parent node, which no
//! later split of the remainder changes), and a later split only moves each to a node below
//! its own. So every partition is one class, and every class satisfies the models.

use super::judge::{Judge, Tally};
use super::models::Models;
use crate::encode::{FrequencyTable, RecodedRows};
use crate::error::{AnonError, Result};

/// A set of distinct quasi-identifier tuples published with one node per attribute.
struct Part {
    tuples: Vec<u32>,
    nodes: Vec<(u8, u32)>,
    /// Attributes this partition is not split on any more (a remainder's).
    done: u64,
}

/// The table's distinct quasi-identifier tuples: the frequency rows of each (they are adjacent,
/// rows being sorted by their codes) and their tally. Shared with [`super::iterative`].
pub(super) struct Tuples {
    pub(super) first_row: Vec<usize>,
    pub(super) tally: Vec<Tally>,
}

impl Tuples {
    pub(super) fn new(ft: &FrequencyTable, judge: &Judge) -> Self {
        let (mut first_row, mut tally): (Vec<usize>, Vec<Tally>) = (Vec::new(), Vec::new());
        for r in 0..ft.len() {
            if r == 0 || ft.qis.iter().any(|q| q.codes[r] != q.codes[r - 1]) {
                first_row.push(r);
                tally.push(Tally::default());
            }
            tally.last_mut().expect("a tuple is open").add(&judge.row(r));
        }
        Tuples { first_row, tally }
    }

    /// The frequency rows of tuple `t`.
    pub(super) fn rows(&self, t: u32, ft: &FrequencyTable) -> std::ops::Range<usize> {
        let first = self.first_row[t as usize];
        first..self.first_row.get(t as usize + 1).copied().unwrap_or(ft.len())
    }
}

/// A possible split of a partition on one attribute.
struct Split {
    gain: f64,
    /// (child node, its tuples) for the children that become partitions.
    children: Vec<(u32, Vec<u32>)>,
    rest: Vec<u32>,
}

/// Split `part` on attribute `a`, if it can be.
fn split(ft: &FrequencyTable, tuples: &Tuples, judge: &Judge, part: &Part, a: usize) -> Option<Split> {
    let (level, node) = part.nodes[a];
    if level == 0 || part.done >> a & 1 == 1 {
        return None;
    }
    let h = &ft.qis[a].hierarchy;
    let child_level = level as usize - 1;
    let up = h.up(child_level);
    // Tuples by child node: sorted pairs, then runs (no map: this is the hot loop).
    let mut keyed: Vec<(u32, u32)> =
        part.tuples.iter().map(|&t| (up[ft.qis[a].codes[tuples.first_row[t as usize]] as usize], t)).collect();
    keyed.sort_unstable();
    let mut by_child: Vec<(u32, (Vec<u32>, Tally))> = Vec::new();
    for (child, t) in keyed {
        if by_child.last().is_none_or(|(c, _)| *c != child) {
            by_child.push((child, (Vec::new(), Tally::default())));
        }
        let e = &mut by_child.last_mut().expect("a child is open").1;
        e.0.push(t);
        e.1.add(&tuples.tally[t as usize]);
    }
    let (mut kept, mut rest): (Vec<_>, Vec<_>) = by_child.into_iter().partition(|(_, (_, t))| judge.ok(t));
    let mut rest_tally = Tally::default();
    rest.iter().for_each(|(_, (_, t))| rest_tally.add(t));
    // The remainder must pass on its own: give it the smallest children until it does.
    kept.sort_by_key(|(c, (_, t))| (std::cmp::Reverse(t.size), *c));
    while !rest.is_empty() && !judge.ok(&rest_tally) {
        let child = kept.pop()?;
        rest_tally.add(&child.1.1);
        rest.push(child);
    }
    if kept.is_empty() {
        return None;
    }
    let parent = h.degree(level as usize, node);
    let gain = kept.iter().map(|(c, (_, t))| t.size as f64 * (parent - h.degree(child_level, *c))).sum();
    kept.sort_by_key(|(c, _)| *c);
    let rest = rest.into_iter().flat_map(|(_, (ts, _))| ts).collect();
    Some(Split { gain, children: kept.into_iter().map(|(c, (ts, _))| (c, ts)).collect(), rest })
}

/// Partition the table (see the module's doc). `importance`: attribute indices from the most
/// important. `None` when the whole table fails the models.
pub(crate) fn recode(
    ft: &FrequencyTable,
    models: &Models,
    importance: &[usize],
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<RecodedRows>> {
    if ft.qis.len() > 64 {
        return Err(AnonError::argument(
            "kanon_anonymize",
            "local",
            "local=recoding takes at most 64 quasi-identifiers",
        ));
    }
    let judge = Judge::new(ft, models);
    let tuples = Tuples::new(ft, &judge);
    let mut whole = Tally::default();
    tuples.tally.iter().for_each(|t| whole.add(t));
    if !judge.ok(&whole) {
        return Ok(None);
    }
    let root: Vec<(u8, u32)> = ft.qis.iter().map(|q| (q.hierarchy.height() as u8, 0)).collect();
    let mut cells = vec![Vec::new(); ft.len()];
    let mut work = vec![Part { tuples: (0..tuples.first_row.len() as u32).collect(), nodes: root, done: 0 }];
    while let Some(part) = work.pop() {
        if cancelled() {
            return Err(AnonError::Cancelled);
        }
        let mut best: Option<(usize, Split)> = None;
        for &a in importance {
            if let Some(s) = split(ft, &tuples, &judge, &part, a)
                && best.as_ref().is_none_or(|(_, b)| s.gain > b.gain)
            {
                best = Some((a, s));
            }
        }
        let Some((a, s)) = best else {
            for &t in &part.tuples {
                tuples.rows(t, ft).for_each(|r| cells[r] = part.nodes.clone());
            }
            continue;
        };
        let child_level = part.nodes[a].0 - 1;
        if !s.rest.is_empty() {
            work.push(Part { tuples: s.rest, nodes: part.nodes.clone(), done: part.done | 1 << a });
        }
        for (c, ts) in s.children {
            let mut nodes = part.nodes.clone();
            nodes[a] = (child_level, c);
            work.push(Part { tuples: ts, nodes, done: part.done });
        }
    }
    Ok(Some(RecodedRows { suppressed: vec![false; ft.len()], cells }))
}
