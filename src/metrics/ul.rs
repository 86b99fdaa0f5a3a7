//! Utility Loss of a set-valued attribute (Loukides et al.), as the ArtUC paper defines it
//! (Defs. 5–6), of a decoded release: bounds from what the release and the original determine.
//! The per-record formula is [`crate::formulas::ul`], the one ArtUC's GenDiag minimizes.

use super::decode::{Decoded, SetColumn};
use crate::formulas::ul::record_ul;
use crate::release::Cell;
use std::collections::{HashMap, HashSet};

/// Records containing each code, leaf code → count, over (codes, records that hold them)
/// pairs: each code counts once per record.
pub(crate) fn weighted_code_records<'a>(records: impl IntoIterator<Item = (&'a [u32], u64)>) -> HashMap<u32, u64> {
    let mut out = HashMap::new();
    for (r, w) in records {
        for c in r.iter().collect::<HashSet<_>>() {
            *out.entry(*c).or_insert(0) += w;
        }
    }
    out
}

/// The original table as UL reads it: per distinct record, its demographic leaves (one per
/// quasi-identifier, in the release's order), its diagnosis codes as leaves, and how many
/// records it stands for.
#[derive(Debug, Clone, Default)]
pub struct OriginalRecords {
    pub leaves: Vec<Vec<u32>>,
    pub codes: Vec<Vec<u32>>,
    pub weights: Vec<u64>,
}

impl OriginalRecords {
    /// Records holding each code, o(x).
    pub(crate) fn code_records(&self) -> HashMap<u32, u64> {
        weighted_code_records(self.codes.iter().map(|c| c.as_slice()).zip(self.weights.iter().copied()))
    }
    /// Code occurrences Σ_r |r| (each code once per record).
    pub(crate) fn occurrences(&self) -> u64 {
        self.codes.iter().zip(&self.weights).map(|(c, &w)| c.iter().collect::<HashSet<_>>().len() as u64 * w).sum()
    }
    pub(crate) fn records(&self) -> u64 {
        self.weights.iter().sum()
    }
}

/// UL of a release against its original (ArtUC Defs. 5–6), as far as the two determine it.
///
/// The generalization term Σ_r Σ_ũ UL(ũ)/(2^σ(r) − 1) is read from the release alone, exactly.
/// The suppression term Σ_r s(r) is not always determined by the release and the original: a
/// release carries no link from a released record to its original record, and two
/// anonymizations of one table can publish the same rows with different suppressions
/// (docs/metrics.md, "UL is bounded, not exact"). So it is reported as bounds, which meet
/// whenever the release pins it down (the artuc figures, and most real releases).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UlBounds {
    /// Σ_r UL(r) without its s(r) term, over released records.
    generalized: f64,
    /// Least and greatest Σ_r s(r) of any original-to-release assignment the bounds admit.
    pub suppressed: (u64, u64),
    /// |D|: released records.
    records: u64,
}

impl UlBounds {
    fn per(&self, x: f64) -> f64 {
        if self.records == 0 { 0.0 } else { x / self.records as f64 }
    }
    /// Bounds on Σ_r UL(r).
    pub fn sum(&self) -> (f64, f64) {
        (self.generalized + self.suppressed.0 as f64, self.generalized + self.suppressed.1 as f64)
    }
    /// Bounds on UL(D) = Σ_r UL(r) / |D|.
    pub(crate) fn ul(&self) -> (f64, f64) {
        let (lo, hi) = self.sum();
        (self.per(lo), self.per(hi))
    }
    /// UL(D) when the bounds meet.
    pub fn exact(&self) -> Option<f64> {
        (self.suppressed.0 == self.suppressed.1).then(|| self.ul().0)
    }
    /// UL_gen = the generalization term over |D| (exact).
    pub fn ul_gen(&self) -> f64 {
        self.per(self.generalized)
    }
}

/// One block of a release (a class, or the suppressed rows) as the suppression bounds read it.
#[derive(Default)]
struct Block {
    /// Leaf → the block's item (generalized code) that covers it: the kept codes K_C.
    item_of: HashMap<u32, u32>,
    /// The item sets its rows publish, each as its index among all blocks' rows.
    rows: HashMap<Vec<u32>, usize>,
    /// Two items of the block share a leaf: not ArtUC's model, so any cost is admitted.
    overlapping: bool,
}

impl Block {
    /// Add a released row standing for `weight` records; `released[i]` counts the records of
    /// every block's row i.
    fn add_row(&mut self, items: &[Vec<u32>], weight: u64, ids: &mut HashMap<Vec<u32>, u32>, released: &mut Vec<u64>) {
        let mut row: Vec<u32> = Vec::with_capacity(items.len());
        for item in items {
            let next = ids.len() as u32;
            let id = *ids.entry(item.clone()).or_insert(next);
            for &leaf in item {
                if *self.item_of.entry(leaf).or_insert(id) != id {
                    self.overlapping = true;
                }
            }
            row.push(id);
        }
        row.sort_unstable();
        row.dedup();
        let i = *self.rows.entry(row).or_insert_with(|| {
            released.push(0);
            released.len() - 1
        });
        released[i] += weight;
    }

    /// The rows of this block an original record could have become, each with the least and
    /// greatest s(r) it would cost: the one row {ũ : ũ ∩ r ≠ ∅}, if published, at |r \ K_C|.
    /// An overlapping block admits every row, at any cost from 0 to |r|.
    fn rows_for(&self, codes: &[u32]) -> Vec<(usize, u64, u64)> {
        if self.overlapping {
            return self.rows.values().map(|&row| (row, 0, codes.len() as u64)).collect();
        }
        let mut items: Vec<u32> = codes.iter().filter_map(|c| self.item_of.get(c).copied()).collect();
        let kept = codes.iter().filter(|c| self.item_of.contains_key(c)).count();
        items.sort_unstable();
        items.dedup();
        let s = (codes.len() - kept) as u64;
        self.rows.get(&items).map(|&row| (row, s, s)).into_iter().collect()
    }
}

/// Bounds on UL of set-valued column `col` of `rel` against the original records.
///
/// s(r) of an original record r in block C (a published class) is |r \ K_C|, K_C the codes
/// C's items cover, and r can only have become the row {ũ ∈ C : ũ ∩ r ≠ ∅} of a block whose
/// demographics cover r's. The exact bounds are the least and the greatest Σ s(r) over every
/// assignment of original records to released rows that fills each row with its records
/// (a min-cost flow, [`super::flow`]; records left over were withheld). Two relaxations of it,
/// each valid for every assignment, are intersected with it, and stand alone when no
/// assignment fills the release (then the release is not of this original, or not of this
/// model):
/// - per record: the least and greatest s(r) over the rows r could have become, summed;
/// - per release (when no record was withheld): kept codes are at most Σ_x min(o(x), c(x))
///   (c(x): released records covering x) and at most Σ σ(r), and at least one per published
///   item, so Σ s(r) = Σ|r| − kept lies between.
pub fn ul_bounds(rel: &Decoded, col: usize, original: &OriginalRecords) -> UlBounds {
    let set = &rel.sets[col];
    let generalized: f64 = (0..set.rows.len()).map(|r| record_ul(&set.sizes(r)) * rel.weights[r] as f64).sum();
    let records = rel.records();
    let suppressed = suppressed_bounds(rel, set, original);
    UlBounds { generalized, suppressed, records }
}

fn suppressed_bounds(rel: &Decoded, set: &SetColumn, original: &OriginalRecords) -> (u64, u64) {
    // Blocks: the classes, then the suppressed rows; each with its cells and kept codes.
    let sup_block = rel.class_sizes.len();
    let mut blocks: Vec<Block> = (0..=sup_block).map(|_| Block::default()).collect();
    let mut cells: Vec<Option<usize>> = vec![None; sup_block + 1];
    let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut released: Vec<u64> = Vec::new();
    for r in 0..rel.len() {
        let b = rel.class_of[r].map_or(sup_block, |c| c as usize);
        blocks[b].add_row(&set.rows[r], rel.weights[r], &mut ids, &mut released);
        cells[b].get_or_insert(r);
    }
    // Distinct demographic hulls, and the blocks of each.
    let mut hull_of: HashMap<Vec<[u64; 2]>, usize> = HashMap::new();
    let mut hulls: Vec<(usize, Vec<usize>)> = Vec::new();
    for (b, row) in cells.iter().enumerate() {
        let Some(row) = *row else { continue };
        let key: Vec<_> = rel.cells[row].iter().map(Cell::key).collect();
        let next = hulls.len();
        let h = *hull_of.entry(key).or_insert(next);
        if h == next {
            hulls.push((row, Vec::new()));
        }
        hulls[h].1.push(b);
    }
    // (quasi-identifier, leaf) → bitset of the hulls covering it, built as leaves are met.
    let words = hulls.len().div_ceil(64);
    let mut cover: HashMap<(usize, u32), Vec<u64>> = HashMap::new();
    let mut per_record: Vec<(u64, u64, u64)> = Vec::new(); // (lo, hi, weight) of matched records
    let mut edges: Vec<Edge> = Vec::new();
    let mut unmatched = 0u64;
    for ((leaves, codes), &w) in original.leaves.iter().zip(&original.codes).zip(&original.weights) {
        let mut codes = codes.clone();
        codes.sort_unstable();
        codes.dedup();
        let mut cand = vec![u64::MAX; words];
        for (q, &leaf) in leaves.iter().enumerate() {
            let bits = cover.entry((q, leaf)).or_insert_with(|| {
                let mut bits = vec![0u64; words];
                for (i, (row, _)) in hulls.iter().enumerate() {
                    if rel.cells[*row][q].covers(&rel.hierarchies[q], leaf) {
                        bits[i / 64] |= 1 << (i % 64);
                    }
                }
                bits
            });
            cand.iter_mut().zip(bits.iter()).for_each(|(a, b)| *a &= b);
        }
        let mut range: Option<(u64, u64)> = None;
        for i in (0..hulls.len()).filter(|&i| cand[i / 64] >> (i % 64) & 1 == 1) {
            for &b in &hulls[i].1 {
                for (row, lo, hi) in blocks[b].rows_for(&codes) {
                    range = Some(range.map_or((lo, hi), |(a, z)| (a.min(lo), z.max(hi))));
                    edges.push(Edge { original: per_record.len(), row, lo, hi });
                }
            }
        }
        match range {
            Some((lo, hi)) => per_record.push((lo, hi, w)),
            None => unmatched += w,
        }
    }
    let relaxed = relaxed_bounds(rel, set, original, &per_record, unmatched);
    let supply: Vec<u64> = per_record.iter().map(|r| r.2).collect();
    match assignment_bounds(&edges, &supply, &released) {
        Some((lo, hi)) => {
            let (lo, hi) = (lo.max(relaxed.0), hi.min(relaxed.1));
            (lo, hi.max(lo))
        }
        None => relaxed,
    }
}

/// Original record `original` (among the matched ones) may have become released row `row` at
/// a cost of s(r) from `lo` to `hi`.
struct Edge {
    original: usize,
    row: usize,
    lo: u64,
    hi: u64,
}

/// The least and greatest Σ s(r) over assignments of the originals (`supply[i]` records each)
/// to the released rows (`released[j]` records each) along `edges` that fill every row; None
/// when none fills them.
fn assignment_bounds(edges: &[Edge], supply: &[u64], released: &[u64]) -> Option<(u64, u64)> {
    let filled: u64 = released.iter().sum();
    let top = edges.iter().map(|e| e.hi).max().unwrap_or(0);
    let solve = |cost: &dyn Fn(&Edge) -> u64| -> Option<u64> {
        let (s, t, rows) = (0, 1, 2 + supply.len());
        let mut net = super::flow::Network::new(rows + released.len());
        for (i, &w) in supply.iter().enumerate() {
            net.edge(s, 2 + i, w, 0);
        }
        for (j, &w) in released.iter().enumerate() {
            net.edge(rows + j, t, w, 0);
        }
        for e in edges {
            net.edge(2 + e.original, rows + e.row, supply[e.original], cost(e) as i64);
        }
        let (flow, total) = net.min_cost_max_flow(s, t);
        (flow == filled).then_some(total as u64)
    };
    let lo = solve(&|e| e.lo)?;
    // The dearest assignment is the cheapest on costs top − hi: every unit crosses one edge.
    let hi = filled * top - solve(&|e| top - e.hi)?;
    Some((lo, hi))
}

/// The per-record and per-release relaxations of the bounds (see [`ul_bounds`]).
fn relaxed_bounds(
    rel: &Decoded,
    set: &SetColumn,
    original: &OriginalRecords,
    per_record: &[(u64, u64, u64)],
    unmatched: u64,
) -> (u64, u64) {
    let hi_sum: u64 = per_record.iter().map(|(_, hi, w)| hi * w).sum();
    let mut lo_sum: u64 = per_record.iter().map(|(lo, _, w)| lo * w).sum();
    // Records not released (withheld): the unmatched ones, and as many more as the counts say,
    // which for the lower bound are the costliest.
    let excess = original.records().saturating_sub(rel.records()).saturating_sub(unmatched);
    if excess > 0 {
        let mut costliest = per_record.to_vec();
        costliest.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
        let mut left = excess;
        for &(lo, _, w) in &costliest {
            let take = left.min(w);
            lo_sum -= lo * take;
            left -= take;
            if left == 0 {
                break;
            }
        }
    }
    if original.records() != rel.records() {
        return (lo_sum, hi_sum.max(lo_sum));
    }
    // Nothing withheld: the release-wide bounds apply too.
    let total = original.occurrences();
    let released: Vec<Vec<u32>> = set.rows.iter().map(|r| r.iter().flatten().copied().collect()).collect();
    let covered = weighted_code_records(released.iter().map(|v| v.as_slice()).zip(rel.weights.iter().copied()));
    let by_code: u64 = original.code_records().iter().map(|(x, &o)| o.min(covered.get(x).copied().unwrap_or(0))).sum();
    let sigma: u64 =
        set.rows.iter().zip(&rel.weights).map(|(r, &w)| r.iter().map(|u| u.len() as u64).sum::<u64>() * w).sum();
    let items: u64 = set.rows.iter().zip(&rel.weights).map(|(r, &w)| r.len() as u64 * w).sum();
    let lo = lo_sum.max(total.saturating_sub(by_code.min(sigma)));
    let hi = hi_sum.min(total.saturating_sub(items));
    (lo, hi.max(lo))
}
