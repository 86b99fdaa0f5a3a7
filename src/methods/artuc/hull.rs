//! Definition 2 on the demographic attributes of a cluster, and its NCP (Definitions 3–4).
//!
//! A cluster's generalized value per attribute is the range [min, max] of its numeric values or
//! the closest common ancestor of its categorical values. Values are the release's own cells
//! ([`Cell`]) and their NCP is [`ncp_value`] of `src/formulas/ncp.rs`, so what the algorithm
//! optimizes and bounds by δ is exactly what `anon_metrics` measures on the release.

use super::data::RtTable;
use crate::formulas::ncp::ncp_value;
use crate::hierarchy::Hierarchy;
use crate::release::Cell;

/// The generalized demographics of a set of records: one cell per attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Hull(pub(crate) Vec<Cell>);

impl Hull {
    /// A single record, ungeneralized.
    pub(crate) fn of_record(table: &RtTable, r: u32) -> Hull {
        Hull(table.demographics.iter().map(|q| leaf_cell(&q.hierarchy, q.codes[r as usize])).collect())
    }

    /// The hull of a non-empty set of records.
    pub fn of_records(table: &RtTable, records: &[u32]) -> Hull {
        let mut h = Hull::of_record(table, records[0]);
        for &r in &records[1..] {
            h.add(table, r);
        }
        h
    }

    /// Widen the hull to cover record `r`.
    pub(crate) fn add(&mut self, table: &RtTable, r: u32) {
        let other = Hull::of_record(table, r);
        *self = self.merge(table, &other);
    }

    /// The hull of the union of two clusters.
    pub(crate) fn merge(&self, table: &RtTable, other: &Hull) -> Hull {
        Hull(
            self.0
                .iter()
                .zip(&other.0)
                .zip(&table.demographics)
                .map(|((a, b), q)| join(&q.hierarchy, *a, *b))
                .collect(),
        )
    }

    /// `self.merge(table, other).ncp(table, weights)` without building the merged hull: the
    /// same terms summed in the same order, so the same value.
    pub(crate) fn merged_ncp(&self, table: &RtTable, other: &Hull, weights: &[f64]) -> f64 {
        self.0
            .iter()
            .zip(&other.0)
            .zip(&table.demographics)
            .zip(weights)
            .map(|(((a, b), q), w)| w * ncp_value(&join(&q.hierarchy, *a, *b), &q.hierarchy))
            .sum()
    }

    /// A hashable key: equal keys are equal generalized values (Step 17).
    pub(crate) fn key(&self) -> Vec<u64> {
        self.0
            .iter()
            .flat_map(|c| match *c {
                Cell::Range { lo, hi } => [0, lo.to_bits(), hi.to_bits()],
                Cell::Node { level, code } => [1, level as u64, code as u64],
                Cell::Suppressed => [2, 0, 0],
            })
            .collect()
    }

    /// NCP(r) of a record generalized to this hull (Definition 4): Σ_i w_i · NCP_{A_i}.
    pub fn ncp(&self, table: &RtTable, weights: &[f64]) -> f64 {
        self.0.iter().zip(&table.demographics).zip(weights).map(|((c, q), w)| w * ncp_value(c, &q.hierarchy)).sum()
    }
}

fn leaf_cell(h: &Hierarchy, leaf: u32) -> Cell {
    match h.leaf_value(leaf) {
        Some(v) if h.is_numeric() => Cell::Range { lo: v, hi: v },
        _ => Cell::Node { level: 0, code: leaf },
    }
}

/// Definition 2 for two generalized values: the range hull, or the closest common ancestor.
fn join(h: &Hierarchy, a: Cell, b: Cell) -> Cell {
    match (a, b) {
        (Cell::Range { lo: a, hi: b }, Cell::Range { lo: c, hi: d }) => Cell::Range { lo: a.min(c), hi: b.max(d) },
        (Cell::Node { level: mut i, code: mut x }, Cell::Node { level: mut j, code: mut y }) => {
            while i < j {
                x = h.parent(i as usize, x);
                i += 1;
            }
            while j < i {
                y = h.parent(j as usize, y);
                j += 1;
            }
            while x != y && (i as usize) < h.height() {
                x = h.parent(i as usize, x);
                y = h.parent(i as usize, y);
                i += 1;
            }
            Cell::Node { level: i, code: x }
        }
        _ => Cell::Suppressed,
    }
}
