//! The published table: `class_id` (the Q-block), the quasi-identifiers generalized to the
//! block's closest common ancestors, and the sensitive attribute. A categorical attribute
//! holds the node's label; a numeric one `age` holds the node's label with `age_lo`/`age_hi`,
//! the node's bounds (an ungeneralized value is its own number), as every release does
//! (ARCHITECTURE.md); a date one, its label with `_lo`/`_hi`, the node's first and last dates. Rows are built block by block from the frequency table, so, as with the
//! h-ceiling release, columns that are neither quasi-identifying nor sensitive are left out.

use super::block::Block;
use crate::encode::node_label;
use crate::encode::publish::{Source, cell_rows, class_rows, date_bounds_by_level, push_bounds, push_date_bounds};
use crate::error::Result;
use crate::release::Published;
use crate::release::labels::{label_array, label_field};
use datafusion::arrow::array::{ArrayRef, Int64Array};
use datafusion::arrow::datatypes::{DataType, Field};
use std::sync::Arc;

/// Block-level columns: `class_id` and the quasi-identifiers, in the source's column order.
fn block_columns(src: &Source<'_>, blocks: &[Block]) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(1..=blocks.len() as i64))];
    for (f, a) in src.qis()? {
        let h = &src.ft.qis[a].hierarchy;
        let labels: Vec<String> = blocks.iter().map(|b| node_label(h, b.label[a].0 as usize, b.label[a].1)).collect();
        fields.push(label_field(f.name()));
        cols.push(label_array(labels.iter().map(String::as_str)));
        if h.is_numeric() {
            let (lo, hi): (Vec<f64>, Vec<f64>) = blocks
                .iter()
                .map(|b| h.bounds(b.label[a].0 as usize, b.label[a].1).unwrap_or((f64::NAN, f64::NAN)))
                .unzip();
            push_bounds(f, lo, hi, &mut fields, &mut cols)?;
        } else if let Some(nodes) = date_bounds_by_level(f.data_type(), h) {
            let b: Vec<_> =
                blocks.iter().map(|b| nodes[b.label[a].0 as usize][b.label[a].1 as usize].clone()).collect();
            push_date_bounds(f, &b, &mut fields, &mut cols)?;
        }
    }
    Ok((fields, cols))
}

/// Build the release of `blocks` (block i gets class id i + 1).
pub(crate) fn release(src: &Source<'_>, blocks: &[Block]) -> Result<Published> {
    let sens = src.sensitive_column()?;
    let (fields, block_cols) = block_columns(src, blocks)?;
    let (schema, values) = src.release_schema(fields)?;
    let cells = blocks.iter().enumerate().flat_map(|(i, b)| {
        let mut members: Vec<(u32, u64)> = b.members.iter().map(|&(row, c)| (sens.codes[row as usize], c)).collect();
        members.sort_unstable();
        members.into_iter().map(move |(z, c)| (i as u32, z, c))
    });
    let (row_block, row_value) = cell_rows(&cells.collect::<Vec<_>>());
    let batches = class_rows(&schema, &block_cols, &values, &row_block, &row_value)?;
    Ok(Published { schema, batches, dropped: src.dropped_columns() })
}
