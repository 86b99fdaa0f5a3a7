//! The RT-dataset ArtUC works on: per record, the leaf code of each demographic attribute
//! (relational quasi-identifiers, Section 3.1) and the sorted leaf codes of its diagnosis codes
//! in the code hierarchy. Dense `u32` codes, never strings (docs/architecture.md).

use crate::encode::QiColumn;
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, HierarchyKind};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use std::sync::Arc;

/// The set-valued attribute A_{l+1}: each record's diagnosis codes as leaf codes of `hierarchy`.
#[derive(Debug, Clone)]
pub struct CodeColumn {
    pub(crate) name: String,
    pub hierarchy: Arc<Hierarchy>,
    /// Per record, its distinct leaf codes, ascending.
    pub records: Vec<Vec<u32>>,
    /// Codes outside the hierarchy dropped before the method saw them (`unknown_codes=suppress`):
    /// (occurrences, distinct codes).
    pub(crate) unknown: (u64, u64),
}

/// An encoded RT-dataset.
#[derive(Debug, Clone)]
pub struct RtTable {
    pub(crate) name: String,
    /// Demographic attributes A_1..A_l, in declaration order; `codes[r]` is record r's leaf.
    pub demographics: Vec<QiColumn>,
    /// Arrow type of each demographic in the source (the release writes numeric bounds in it).
    pub(crate) types: Vec<DataType>,
    pub codes: CodeColumn,
}

impl RtTable {
    /// Assemble from encoded columns, checking that every code is a leaf of its hierarchy.
    pub(crate) fn from_parts(
        name: &str,
        demographics: Vec<QiColumn>,
        types: Vec<DataType>,
        codes: CodeColumn,
    ) -> Result<Self> {
        let n = codes.records.len();
        if demographics.is_empty() {
            return Err(AnonError::table(name, "an RT-dataset needs at least one demographic attribute"));
        }
        if types.len() != demographics.len() {
            return Err(AnonError::table(name, "one Arrow type per demographic attribute is needed"));
        }
        if codes.hierarchy.kind() != HierarchyKind::Codes {
            return Err(AnonError::column(name, &codes.name, "needs a code hierarchy (kind 'codes')"));
        }
        for q in &demographics {
            if q.codes.len() != n {
                return Err(AnonError::column(name, &q.name, "has a different number of records than the codes"));
            }
            if q.hierarchy.kind() == HierarchyKind::Codes {
                return Err(AnonError::column(name, &q.name, "is a demographic attribute with a code hierarchy"));
            }
            if q.codes.iter().any(|&c| c as usize >= q.hierarchy.leaf_count()) {
                return Err(AnonError::column(name, &q.name, "holds a leaf code outside its hierarchy"));
            }
        }
        let leaves = codes.hierarchy.leaf_count();
        let mut codes = codes;
        for r in &mut codes.records {
            r.sort_unstable();
            r.dedup();
            if r.iter().any(|&c| c as usize >= leaves) {
                return Err(AnonError::column(name, &codes.name, "holds a leaf code outside its code hierarchy"));
            }
        }
        Ok(RtTable { name: name.to_string(), demographics, types, codes })
    }

    /// Encode a table from its Arrow batches and its declarations: every quasi-identifier is a
    /// demographic attribute, the single set-valued column the diagnosis codes. Values missing
    /// from a hierarchy are errors that count them and never quote them.
    pub fn from_batches(name: &str, meta: &TableMeta, batches: &[RecordBatch]) -> Result<Self> {
        let qis = meta.quasi_identifiers();
        let set = match meta.columns_with(Role::SetValued).as_slice() {
            [one] => one.to_string(),
            [] => return Err(AnonError::table(name, "no set-valued column declared (the diagnosis codes)")),
            _ => return Err(AnonError::table(name, "ArtUC takes exactly one set-valued column")),
        };
        let (mut demographics, mut types) = (Vec::new(), Vec::new());
        for q in qis {
            let h = meta.hierarchy(name, q)?.clone();
            let parts = column(name, q, batches)?;
            types.push(parts.first().map_or(DataType::Utf8, |a| a.data_type().clone()));
            demographics.push(QiColumn { name: q.to_string(), codes: leaf_codes(name, q, &h, &parts)?, hierarchy: h });
        }
        let h = meta.hierarchy(name, &set)?.clone();
        let (records, unknown) = code_lists(name, &set, &h, &column(name, &set, batches)?)?;
        let codes = CodeColumn { name: set, hierarchy: h, records, unknown };
        RtTable::from_parts(name, demographics, types, codes)
    }

    /// Number of records |D|.
    pub fn len(&self) -> usize {
        self.codes.records.len()
    }
    pub fn is_empty(&self) -> bool {
        self.codes.records.is_empty()
    }
    /// Number of demographic attributes l.
    pub(crate) fn attributes(&self) -> usize {
        self.demographics.len()
    }
    /// The code sets of `records`, in their order: a cluster as GenDiag takes it.
    pub(crate) fn code_sets(&self, records: &[u32]) -> Vec<&[u32]> {
        records.iter().map(|&r| self.codes.records[r as usize].as_slice()).collect()
    }
}

fn column(table: &str, col: &str, batches: &[RecordBatch]) -> Result<Vec<ArrayRef>> {
    batches
        .iter()
        .map(|b| b.column_by_name(col).cloned().ok_or_else(|| AnonError::column(table, col, "is missing")))
        .collect()
}

/// Leaf code of every value of one demographic column.
fn leaf_codes(table: &str, col: &str, h: &Hierarchy, parts: &[ArrayRef]) -> Result<Vec<u32>> {
    let (mut out, mut missing) = (Vec::new(), 0usize);
    for a in parts {
        if h.is_numeric() {
            let v = cast(a, &DataType::Float64)
                .map_err(|_| AnonError::column(table, col, format!("has type {}, expected a number", a.data_type())))?;
            let v = v.as_primitive::<Float64Type>();
            for r in 0..v.len() {
                match v.is_valid(r).then(|| h.leaf_of_value(v.value(r))).flatten() {
                    Some(c) => out.push(c),
                    None => missing += 1,
                }
            }
        } else {
            let v = cast(a, &DataType::Utf8)
                .map_err(|_| AnonError::column(table, col, format!("has type {}, expected text", a.data_type())))?;
            let v = v.as_string::<i32>();
            for r in 0..v.len() {
                let label = if v.is_valid(r) { v.value(r) } else { crate::hierarchy::NULL_LEAF };
                match h.leaf_of_label(label) {
                    Some(c) => out.push(c),
                    None => missing += 1,
                }
            }
        }
    }
    if missing > 0 {
        // Never quote the values: they are patients' demographics.
        return Err(AnonError::column(table, col, format!("{missing} value(s) are not leaves of its hierarchy")));
    }
    Ok(out)
}

/// Codes dropped as outside the hierarchy: (occurrences, distinct).
type Dropped = (u64, u64);

/// Leaf codes of every record's diagnosis codes (a list or a delimited string), read as every
/// function reads them ([`crate::hierarchy::leaf_sets`]); codes outside the hierarchy are an
/// error unless it drops them (`unknown_codes=suppress`), then counted: (records, (occurrences,
/// distinct) dropped).
fn code_lists(table: &str, col: &str, h: &Hierarchy, parts: &[ArrayRef]) -> Result<(Vec<Vec<u32>>, Dropped)> {
    let (mut out, mut unknown) = (Vec::new(), crate::hierarchy::UnknownCodes::default());
    for a in parts {
        out.extend(crate::hierarchy::leaf_sets(table, col, h, a, &mut unknown)?);
    }
    unknown.check(table, col, h)?;
    Ok((out, (unknown.occurrences, unknown.distinct())))
}
