//! The code lists of an aggregated release, read once per workload. A workload asks many
//! `array_has` queries of the same release; what changes between them is only the code asked
//! for. So each distinct released element (a code, a node, a generalized `(a,b,...)`) is read
//! and expanded to its cover once, rows keep element ids, and a query first decides per
//! distinct element how likely it stands for the code, then multiplies per row.

use super::dist::{self, LabelIndex};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use std::collections::HashMap;

/// One set-valued column of the aggregated release batches.
pub(crate) struct CodeRows {
    /// Per batch: row r's elements are `ids[offsets[r]..offsets[r + 1]]`, in list order.
    offsets: Vec<Vec<usize>>,
    ids: Vec<Vec<u32>>,
    /// Distinct elements: released text and the leaf codes it covers.
    elements: Vec<(String, Vec<String>)>,
}

impl CodeRows {
    /// Read column `at` (`column` of release `release`) of every batch.
    pub(crate) fn new(
        h: &Hierarchy,
        index: &LabelIndex,
        batches: &[RecordBatch],
        at: usize,
        (release, column): (&str, &str),
    ) -> Result<Self> {
        let mut unknown = 0usize;
        let mut id_of: HashMap<String, u32> = HashMap::new();
        let mut elements = Vec::new();
        let (mut offsets, mut ids) = (Vec::with_capacity(batches.len()), Vec::with_capacity(batches.len()));
        for b in batches {
            let list = b.column(at);
            let (values, bounds) = flatten(list)?;
            let values = values.as_string::<i32>();
            let (mut off, mut batch_ids) = (vec![0], Vec::new());
            for row in 0..b.num_rows() {
                let present = if list.is_null(row) { 0..0 } else { bounds[row]..bounds[row + 1] };
                for e in present.filter(|&i| !values.is_null(i)).map(|i| values.value(i)) {
                    let id = match id_of.get(e) {
                        Some(&id) => id,
                        None => {
                            let id = elements.len() as u32;
                            let cover = dist::code_cover(h, index, e).unwrap_or_else(|| {
                                unknown += 1;
                                Vec::new()
                            });
                            elements.push((e.to_string(), cover));
                            id_of.insert(e.to_string(), id);
                            id
                        }
                    };
                    batch_ids.push(id);
                }
                off.push(batch_ids.len());
            }
            offsets.push(off);
            ids.push(batch_ids);
        }
        if unknown > 0 {
            // Never quoted: a code is a patient's original value.
            return Err(AnonError::column(
                release,
                column,
                format!(
                    "holds {unknown} element(s) that are neither codes nor generalized codes of its hierarchy: \
                     a release of another table?"
                ),
            ));
        }
        Ok(CodeRows { offsets, ids, elements })
    }

    /// Per distinct element, the probability that it stands for `code`.
    pub(crate) fn presence(&self, code: &str) -> Vec<f64> {
        self.elements.iter().map(|(text, cover)| dist::element_presence(cover, text, code)).collect()
    }

    /// P(row `row` of batch `batch` holds the code), from that code's [`presence`](Self::presence).
    pub(crate) fn has(&self, presence: &[f64], batch: usize, row: usize) -> f64 {
        let off = &self.offsets[batch];
        dist::any_of(self.ids[batch][off[row]..off[row + 1]].iter().map(|&e| presence[e as usize]))
    }
}

/// A list column's values as text, and where each row's list starts and ends.
fn flatten(list: &ArrayRef) -> Result<(ArrayRef, Vec<usize>)> {
    match list.data_type() {
        DataType::List(_) | DataType::LargeList(_) | DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {}
        other => {
            return Err(AnonError::argument(
                "query_error",
                "release",
                format!("a set-valued column is {other}, not a list"),
            ));
        }
    }
    // Lists as lists of text, delimited strings (a release read back from CSV) split: as every
    // reader reads a code column.
    let l = crate::hierarchy::code_lists("release", "codes", list)?;
    Ok((l.values().clone(), l.value_offsets().iter().map(|&o| o as usize).collect()))
}
