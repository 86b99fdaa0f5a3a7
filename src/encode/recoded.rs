//! Releases whose quasi-identifiers are generalized cell by cell rather than one level per
//! column: local suppression (one attribute of a record written `*`) and local recoding (each
//! class at its own levels). A method decides, for every frequency row, the node each attribute
//! is published at ([`RecodedRows`]); the plan joins the source with one lookup table keyed by
//! the quasi-identifiers' leaves, so, as [`super::materialize_node`], it streams and keeps the
//! source's row order for the publisher to shuffle.
//!
//! A suppressed cell is the top of its hierarchy written `*` (its numeric or date bounds are the
//! root's: the whole domain), the marker every reader maps to the root
//! (`crate::release::cover`, rule 3). A record suppressed whole keeps the convention of
//! [`super::materialize_suppressed`]: a shell, every label `*`, NULL bounds, every other
//! column NULL (`materialize::select_release` says why).

use super::FrequencyTable;
use super::materialize::{leaf_key, select_release};
use super::publish::date_bounds_by_level;
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::release::SUPPRESSED;
use crate::release::labels::{label_array, label_field};
use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::JoinType;
use datafusion::prelude::{DataFrame, col, lit};
use std::sync::Arc;

/// The level written for a suppressed cell: the root, labelled `*`.
pub(crate) const STAR: u8 = u8::MAX;

/// What a local method publishes for each row of a frequency table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecodedRows {
    /// `cells[row][attribute]` = (level, node) of the attribute's hierarchy; level [`STAR`] for
    /// a suppressed cell. Rows with equal quasi-identifiers have equal cells.
    pub(crate) cells: Vec<Vec<(u8, u32)>>,
    /// Rows whose records are suppressed whole.
    pub(crate) suppressed: Vec<bool>,
}

/// One published cell: label and, for a numeric or date attribute, its bounds.
fn cell_label(h: &Hierarchy, (level, code): (u8, u32)) -> String {
    if level == STAR { SUPPRESSED.to_string() } else { super::node_label(h, level as usize, code) }
}

/// The node a cell's bounds are read from: a suppressed cell's are the root's.
fn bounds_node(h: &Hierarchy, (level, code): (u8, u32)) -> (usize, u32) {
    if level == STAR { (h.height(), 0) } else { (level as usize, code) }
}

/// The lookup side of the join: one row per distinct quasi-identifier tuple, with its leaf keys
/// `__k{i}`, labels `__l{i}` (label columns: [`crate::release::labels`]) and bounds `__lo{i}`,
/// `__hi{i}`; when some rows are suppressed whole, `__supp` marks them.
fn lookup_batch(ft: &FrequencyTable, rows: &RecodedRows, date_types: &[Option<DataType>]) -> Result<RecordBatch> {
    let distinct: Vec<usize> =
        (0..ft.len()).filter(|&r| r == 0 || ft.qis.iter().any(|q| q.codes[r] != q.codes[r - 1])).collect();
    let (mut fields, mut cols): (Vec<Field>, Vec<ArrayRef>) = (Vec::new(), Vec::new());
    for (i, q) in ft.qis.iter().enumerate() {
        let h = &q.hierarchy;
        let leaf = |r: usize| q.codes[r];
        let key: ArrayRef = if h.is_numeric() {
            Arc::new(distinct.iter().map(|&r| h.leaf_value(leaf(r))).collect::<Float64Array>())
        } else {
            Arc::new(distinct.iter().map(|&r| Some(h.label(0, leaf(r)))).collect::<StringArray>())
        };
        fields.push(Field::new(format!("__k{i}"), key.data_type().clone(), false));
        cols.push(key);
        let cell = |r: usize| rows.cells[r][i];
        let labels: Vec<String> = distinct
            .iter()
            .map(|&r| if rows.suppressed[r] { SUPPRESSED.to_string() } else { cell_label(h, cell(r)) })
            .collect();
        fields.push(label_field(&format!("__l{i}")));
        cols.push(label_array(labels.iter().map(String::as_str)));
        if h.is_numeric() {
            let bound = |r: usize, upper: bool| {
                (!rows.suppressed[r]).then(|| {
                    let (level, code) = bounds_node(h, cell(r));
                    let (lo, hi) = h.bounds(level, code).unwrap_or((f64::NAN, f64::NAN));
                    if upper { hi } else { lo }
                })
            };
            for (b, upper) in [("lo", false), ("hi", true)] {
                fields.push(Field::new(format!("__{b}{i}"), DataType::Float64, true));
                cols.push(Arc::new(distinct.iter().map(|&r| bound(r, upper)).collect::<Float64Array>()));
            }
        } else if let Some(days) = date_types[i].as_ref().and_then(|t| date_bounds_by_level(t, h)) {
            let day = |r: usize, upper: bool| {
                if rows.suppressed[r] {
                    return None;
                }
                let (level, code) = bounds_node(h, cell(r));
                days[level][code as usize].as_ref().map(|(lo, hi)| if upper { hi.clone() } else { lo.clone() })
            };
            for (b, upper) in [("lo", false), ("hi", true)] {
                fields.push(Field::new(format!("__{b}{i}"), DataType::Utf8, true));
                cols.push(Arc::new(distinct.iter().map(|&r| day(r, upper)).collect::<StringArray>()));
            }
        }
    }
    if rows.suppressed.iter().any(|&s| s) {
        fields.push(Field::new("__supp", DataType::Boolean, false));
        cols.push(Arc::new(distinct.iter().map(|&r| Some(rows.suppressed[r])).collect::<BooleanArray>()));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// Plan the release of `table` with every frequency row's cells as `rows` says. `ft` must be
/// the frequency table of `table` under `meta`'s declarations (as the method read it).
pub(crate) async fn materialize_recoded(
    source: &super::source::Source,
    ft: &FrequencyTable,
    rows: &RecodedRows,
    keep_insensitive: bool,
) -> Result<DataFrame> {
    let (df, meta, table) = (source.frame()?, source.meta(), source.name());
    let qis = meta.quasi_identifiers();
    if qis.len() != ft.qis.len() || rows.cells.len() != ft.len() || rows.suppressed.len() != ft.len() {
        return Err(AnonError::table(table, "internal: the recoded rows do not match its frequency table"));
    }
    let source_fields: Vec<(String, DataType)> =
        df.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
    let date_types: Vec<Option<DataType>> =
        qis.iter().map(|q| source_fields.iter().find(|(n, _)| n == q).map(|(_, t)| t.clone())).collect();
    let lookup = source.read_batch(lookup_batch(ft, rows, &date_types)?)?;
    let mut keys = Vec::new();
    for (i, name) in qis.iter().enumerate() {
        keys.push(leaf_key(meta.hierarchy(table, name)?, name).eq(col(format!("__k{i}"))));
    }
    let df = df.join_on(lookup, JoinType::Left, keys)?;
    let shell = rows.suppressed.iter().any(|&s| s).then(|| col("__supp").is_true());
    select_release(df, table, meta, &source_fields, keep_insensitive, |_| lit(SUPPRESSED), |e, _| e, shell)
}
