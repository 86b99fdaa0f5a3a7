//! Generalization hierarchies: categorical taxonomies, numeric interval hierarchies and
//! set-valued code hierarchies (ICD-9-CM).
//!
//! All three share one representation: `levels[0]` holds the leaves (the values that may
//! occur in the data), each higher level holds the nodes one generalization step up, and the
//! last level holds the single root (usually `*`). Every node has exactly one parent, and every
//! leaf has the same height, which is what full-domain generalization needs: generalizing an
//! attribute "to level j" maps every leaf to its ancestor at level j.
//!
//! A hierarchy is built from ARX-format rows (`leaf;level1;...;*`, one row per leaf), from a
//! table with the same shape, or (numeric only) from band widths. Validation rejects what would
//! make generalization ambiguous: ragged rows, a node with two parents, several roots.

mod build;
mod code_sets;
mod generated;
mod load;
mod numeric;

pub use build::HierarchyBuilder;
pub(crate) use code_sets::{UnknownCodes, code_lists, leaf_sets, leaf_sets_with};
pub(crate) use generated::{MaskFrom, date_domain, date_hierarchy, flat_hierarchy, masked_domain, masking_hierarchy};
pub use load::{from_rows, load_arx_file, parse_arx_text, rows_from_batches};
pub use numeric::{format_number, parse_interval_label, parse_widths, widths_hierarchy};

/// Refuse to publish a numeric quasi-identifier through a hierarchy derived from the data: its
/// nodes' bounds are hulls of the data's own values, so a release would print the column's
/// exact minimum and maximum as the bounds of `*` (`age_lo 18, age_hi 92`). The same
/// provenance ([`Hierarchy::derived_from_data`]) that the DP functions refuse outright.
pub(crate) fn check_publishable_bounds(table: &str, column: &str, h: &Hierarchy) -> crate::error::Result<()> {
    match h.derived_from_data() {
        Some(how) if h.is_numeric() => Err(crate::error::AnonError::hierarchy(
            column,
            format!(
                "was derived from the data ({how}), so a release would publish the column's exact minimum and \
                 maximum as the bounds of '*'; declare its public domain instead: \
                 interval_hierarchy('{table}', '{column}', widths, min, max) with public bounds (e.g. 0 and 120 for \
                 an age)"
            ),
        )),
        _ => Ok(()),
    }
}

use crate::error::{AnonError, Result};
use std::collections::HashMap;

/// What kind of values a hierarchy generalizes; decides how its leaves are matched to data
/// and how its generalization degree (h-ceiling paper, Eqs. 1–2) is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HierarchyKind {
    /// Unordered values (sex, occupation, province). Degree = (|M_p| - 1) / (|M| - 1).
    Categorical,
    /// Ordered numbers generalized to intervals (age, length of stay). Degree =
    /// (U_q - L_q) / (U - L) over the published range.
    Numeric,
    /// Codes of a set-valued attribute (diagnosis codes): the items of a transaction are
    /// generalized through this tree; no full-domain lattice is built over it.
    Codes,
}

impl HierarchyKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            HierarchyKind::Categorical => "categorical",
            HierarchyKind::Numeric => "numeric",
            HierarchyKind::Codes => "codes",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        crate::keyword::parse(
            &[
                (HierarchyKind::Categorical, &["categorical", "cat", "taxonomy"]),
                (HierarchyKind::Numeric, &["numeric", "num", "interval", "intervals"]),
                (HierarchyKind::Codes, &["codes", "code", "set", "set-valued", "set_valued"]),
            ],
            s,
        )
    }
}

/// The label of the leaf to which NULLs in the data are mapped. A hierarchy without this leaf
/// makes a NULL in its attribute an error (the same rule in every method).
pub(crate) const NULL_LEAF: &str = "NULL";

/// One level of a hierarchy.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    /// Node labels, as published (`30-34`, `Europe`, `*`).
    pub(crate) labels: Vec<String>,
    /// Index of each node's parent in the next level (empty for the root level).
    pub(crate) parent: Vec<u32>,
    /// Number of leaves under each node (|M_p| of Eq. 2).
    leaf_count: Vec<u32>,
    /// Numeric hierarchies only: inclusive bounds of each node, the hull of its label's interval
    /// and its leaves' values.
    bounds: Vec<(f64, f64)>,
}

/// A validated generalization hierarchy for one attribute.
#[derive(Debug, Clone)]
pub struct Hierarchy {
    attribute: String,
    kind: HierarchyKind,
    levels: Vec<Level>,
    /// `up[j][leaf]` = the node at level j that generalizes `leaf`; `up[0]` is the identity.
    up: Vec<Vec<u32>>,
    /// Leaf lookup for categorical and code hierarchies (label → leaf code).
    leaf_by_label: HashMap<String, u32>,
    /// Numeric hierarchies: leaf values, ascending (leaf code order is value order).
    leaf_values: Vec<f64>,
    /// Numeric hierarchies: (L, U), the whole domain used by Eq. 1.
    domain: Option<(f64, f64)>,
    /// `Some(how)` when the leaves or bounds were read from the data the hierarchy is
    /// attached to (e.g. an interval hierarchy's min and max). Differentially private
    /// releases refuse such a hierarchy: its domain would reveal the data (docs/dp.md).
    derived_from_data: Option<String>,
    /// Code hierarchies: what every reader of a code column does with a code that is not a
    /// leaf (`load_hierarchy(..., 'unknown_codes=suppress')`): refuse the column (false, the
    /// default) or drop the code from its record before any method sees it, counted
    /// ([`leaf_sets`]).
    suppress_unknown: bool,
}

impl Hierarchy {
    pub fn attribute(&self) -> &str {
        &self.attribute
    }
    pub(crate) fn kind(&self) -> HierarchyKind {
        self.kind
    }
    pub fn is_numeric(&self) -> bool {
        self.kind == HierarchyKind::Numeric
    }
    /// Height: number of generalization steps from leaf to root.
    pub fn height(&self) -> usize {
        self.levels.len() - 1
    }
    /// The finest level a value is read at by default: a numeric attribute's first declared band
    /// (level 1) when it has one above its leaves, the leaves otherwise. Raw numbers spread a
    /// count over far more cells than the bands a custodian declared as the resolution that
    /// matters; the two-way-marginal score bins at it and `dp_synthesize` measures no finer.
    pub(crate) fn finest_band(&self) -> usize {
        usize::from(self.is_numeric() && self.height() > 1)
    }
    pub(crate) fn levels(&self) -> &[Level] {
        &self.levels
    }
    pub(crate) fn level(&self, j: usize) -> &Level {
        &self.levels[j]
    }
    pub fn leaf_count(&self) -> usize {
        self.levels[0].labels.len()
    }
    /// Number of nodes at level j.
    pub fn width(&self, j: usize) -> usize {
        self.levels[j].labels.len()
    }
    /// Lookup table leaf → ancestor at level j.
    pub fn up(&self, j: usize) -> &[u32] {
        &self.up[j]
    }
    /// Parent of node `code` at level j (j < height).
    pub(crate) fn parent(&self, j: usize, code: u32) -> u32 {
        self.levels[j].parent[code as usize]
    }
    /// The node at level `to` above node `code` of level `from` (from ≤ to).
    pub(crate) fn ancestor(&self, from: usize, to: usize, code: u32) -> u32 {
        (from..to).fold(code, |c, j| self.parent(j, c))
    }
    pub fn label(&self, j: usize, code: u32) -> &str {
        &self.levels[j].labels[code as usize]
    }
    /// Leaves under node `code` of level j (|M_p|).
    pub(crate) fn leaves_under(&self, j: usize, code: u32) -> u32 {
        self.levels[j].leaf_count[code as usize]
    }
    /// Numeric only: the value of a leaf.
    pub fn leaf_value(&self, leaf: u32) -> Option<f64> {
        self.leaf_values.get(leaf as usize).copied()
    }
    pub(crate) fn leaf_values(&self) -> &[f64] {
        &self.leaf_values
    }
    /// Numeric only: inclusive bounds of node `code` at level j.
    pub(crate) fn bounds(&self, j: usize, code: u32) -> Option<(f64, f64)> {
        self.levels[j].bounds.get(code as usize).copied()
    }
    /// Numeric only: (L, U) of Eq. 1.
    pub(crate) fn domain(&self) -> Option<(f64, f64)> {
        self.domain
    }

    /// Leaf code of a categorical or code label.
    pub fn leaf_of_label(&self, label: &str) -> Option<u32> {
        self.leaf_by_label.get(label).copied()
    }

    /// Leaf code of a numeric value (exact match; leaves are the domain's values).
    pub fn leaf_of_value(&self, v: f64) -> Option<u32> {
        let i = self.leaf_values.partition_point(|&x| x < v);
        (i < self.leaf_values.len() && self.leaf_values[i] == v).then_some(i as u32)
    }

    /// Leaf code of the NULL entry, when the hierarchy has one.
    pub(crate) fn null_leaf(&self) -> Option<u32> {
        self.leaf_by_label.get(NULL_LEAF).copied()
    }

    /// Node at level j whose label is `label` (first match), used to resolve constraints
    /// and query predicates written against generalized labels.
    pub(crate) fn node_by_label(&self, j: usize, label: &str) -> Option<u32> {
        self.levels[j].labels.iter().position(|l| l == label).map(|i| i as u32)
    }

    /// Generalization degree of one node (Eq. 2 for categorical; Eq. 1 over the node's own
    /// bounds for numeric). Methods that publish a class's min–max range use
    /// [`Hierarchy::range_degree`] instead.
    pub(crate) fn degree(&self, j: usize, code: u32) -> f64 {
        match self.kind {
            HierarchyKind::Numeric => {
                let (lo, hi) = self.levels[j].bounds[code as usize];
                self.range_degree(lo, hi)
            }
            _ => {
                let m = self.leaf_count();
                if m <= 1 {
                    return 0.0;
                }
                (self.leaves_under(j, code) as f64 - 1.0) / (m as f64 - 1.0)
            }
        }
    }

    /// Eq. 1 of the h-ceiling paper: (U_q - L_q) / (U - L) for a published range [lo, hi].
    pub(crate) fn range_degree(&self, lo: f64, hi: f64) -> f64 {
        match self.domain {
            Some((l, u)) if u > l => ((hi - lo) / (u - l)).clamp(0.0, 1.0),
            _ => 0.0,
        }
    }

    /// How the hierarchy was derived from the data, when it was (see [`Hierarchy::derived_from`]).
    pub(crate) fn derived_from_data(&self) -> Option<&str> {
        self.derived_from_data.as_deref()
    }

    /// Mark the hierarchy as derived from the data (`how`: e.g. "min and max of the column").
    /// Kept with the hierarchy so that every later DP call can refuse it.
    pub(crate) fn derived_from(mut self, how: &str) -> Self {
        self.derived_from_data = Some(how.to_string());
        self
    }

    /// Whether codes outside this code hierarchy are dropped from their records (counted) rather
    /// than refused; one setting read by every function that reads the column's code sets.
    pub(crate) fn suppresses_unknown_codes(&self) -> bool {
        self.suppress_unknown
    }

    /// Drop (and count) codes outside the hierarchy instead of refusing them.
    pub fn suppressing_unknown_codes(mut self) -> Self {
        self.suppress_unknown = true;
        self
    }

    /// Rename the attribute (a hierarchy file read for one column attached to another).
    pub fn with_attribute(mut self, attribute: &str) -> Self {
        self.attribute = attribute.to_string();
        self
    }

    /// Override the numeric domain (L, U) of Eq. 1, e.g. Age 0–99 in the h-ceiling paper's
    /// Table 1 while the data only spans 35–66. The domain must contain every leaf.
    pub fn with_domain(mut self, lo: f64, hi: f64) -> Result<Self> {
        if !self.is_numeric() {
            return Err(AnonError::hierarchy(&self.attribute, "a domain applies to numeric hierarchies only"));
        }
        let (a, b) = (self.leaf_values[0], *self.leaf_values.last().unwrap_or(&self.leaf_values[0]));
        if !(lo <= a && b <= hi) {
            return Err(AnonError::hierarchy(
                &self.attribute,
                format!("domain [{lo}, {hi}] does not contain the leaves, which span [{a}, {b}]"),
            ));
        }
        self.domain = Some((lo, hi));
        // The root stands for the whole domain, so `*` publishes the domain's bounds.
        if let Some(root) = self.levels.last_mut() {
            root.bounds = vec![(lo, hi)];
        }
        Ok(self)
    }

    /// Rows in ARX shape: one per leaf, its label at every level.
    pub(crate) fn arx_rows(&self) -> Vec<Vec<&str>> {
        (0..self.leaf_count() as u32)
            .map(|leaf| (0..self.levels.len()).map(|j| self.label(j, self.up[j][leaf as usize])).collect())
            .collect()
    }
}
