//! One quasi-identifier value of one released record, as every reader and ArtUC's clustering
//! see it: a hierarchy node, a numeric range, or suppressed.

use crate::hierarchy::Hierarchy;

/// One quasi-identifier value of one released record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell {
    /// A categorical hierarchy node.
    Node { level: u8, code: u32 },
    /// A numeric range with inclusive bounds.
    Range { lo: f64, hi: f64 },
    /// The record is suppressed: the value could be anything in the domain.
    Suppressed,
}

impl Cell {
    /// Number of hierarchy leaves the value covers (the support of its uniform pdf). A range
    /// that contains no leaf counts as one value.
    pub(crate) fn leaves(&self, h: &Hierarchy) -> f64 {
        match *self {
            Cell::Node { level, code } => h.leaves_under(level as usize, code) as f64,
            Cell::Range { lo, hi } => {
                let v = h.leaf_values();
                let n = v.partition_point(|&x| x <= hi) - v.partition_point(|&x| x < lo);
                n.max(1) as f64
            }
            Cell::Suppressed => h.leaf_count() as f64,
        }
    }

    /// Does the value cover leaf `leaf` of `h`?
    pub(crate) fn covers(&self, h: &Hierarchy, leaf: u32) -> bool {
        match *self {
            Cell::Node { level, code } => h.up(level as usize)[leaf as usize] == code,
            Cell::Range { lo, hi } => h.leaf_value(leaf).is_some_and(|v| lo <= v && v <= hi),
            Cell::Suppressed => true,
        }
    }

    /// Generalization degree (h-ceiling Eqs. 1–2; Iyengar's LM per attribute): 1 when suppressed.
    pub(crate) fn degree(&self, h: &Hierarchy) -> f64 {
        match *self {
            Cell::Node { level, code } => h.degree(level as usize, code),
            Cell::Range { lo, hi } => h.range_degree(lo, hi),
            Cell::Suppressed => 1.0,
        }
    }

    /// The value as a hashable key (ranges by their bits): equal keys, equal values.
    pub(crate) fn key(&self) -> [u64; 2] {
        match *self {
            Cell::Node { level, code } => [level as u64, code as u64],
            Cell::Range { lo, hi } => [lo.to_bits(), hi.to_bits()],
            Cell::Suppressed => [u64::MAX, u64::MAX],
        }
    }
}
