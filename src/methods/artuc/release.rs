//! The published table: `class_id` (the cluster), the demographics generalized per Definition 2
//! and the anonymized diagnosis codes.
//!
//! As every release (docs/architecture.md): a numeric attribute `age` becomes `age` (label `37`
//! or `[35-37]`), `age_lo`, `age_hi` (inclusive bounds in the source type); a categorical one
//! holds its node's label, and a date one also `_lo`/`_hi`, the first and last day that label
//! names (read from the label alone, as every method's release:
//! [`date_bounds`](crate::encode::publish::date_bounds)); the codes column is a `List<Utf8View>` (see [`codes_column`]) whose elements are codes or
//! generalized codes `(053.20,053.71)`, which `src/release/cover.rs` and the verifiers read
//! back as the listed codes. Clusters are local recodings, so two may publish the same labels;
//! `class_id` tells them apart. Within a cluster rows are sorted by their codes, so a row's
//! position says nothing about the source order.

use super::data::RtTable;
use super::run::ArtucResult;
use crate::encode::node_label;
use crate::encode::publish::{date_bounds_by_level, push_date_bounds, range_label};
use crate::error::{AnonError, Result};
use crate::release::labels::{label_array, label_field};
use crate::release::{Cell, Published};
use datafusion::arrow::array::{
    Array, ArrayRef, Float64Array, Int64Array, ListArray, ListBuilder, RecordBatch, StringViewBuilder,
};
use datafusion::arrow::buffer::Buffer;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

/// One published row: its cluster and its record's index within the cluster.
type Row = (usize, usize);

/// The label of every item of a cluster: a code, or `(a,b,...)` for a generalized code. Built
/// once per item, not per record holding it: a generalized item of a large constraint code set
/// has a label of ~1,000 characters and is held by most records of its cluster, so per-record
/// label strings (as first written) cost several times the release itself (EHRD 208,387: 3.2 GB).
fn item_labels(table: &RtTable, items: &[Vec<u32>]) -> Vec<String> {
    let h = &table.codes.hierarchy;
    items
        .iter()
        .map(|codes| match codes.as_slice() {
            [one] => h.label(0, *one).to_string(),
            many => format!("({})", many.iter().map(|&c| h.label(0, c)).collect::<Vec<_>>().join(",")),
        })
        .collect()
}

/// Build the release of `result` (cluster i gets class id i + 1).
/// ArtUC reads only the declared demographics and code set ([`RtTable`]), so its release lists
/// no dropped columns.
pub fn release(table: &RtTable, result: &ArtucResult) -> Result<Published> {
    let mut rows: Vec<Row> = Vec::new();
    let mut labels: Vec<Vec<String>> = Vec::with_capacity(result.clusters.len());
    for (i, c) in result.clusters.iter().enumerate() {
        let own = item_labels(table, &c.diag.items);
        let row_labels = |r: usize| c.diag.records[r].iter().map(|&item| own[item as usize].as_str());
        // Rows of a cluster in the order of their label lists, so position says nothing of the source.
        let mut order: Vec<usize> = (0..c.diag.records.len()).collect();
        order.sort_by(|&a, &b| row_labels(a).cmp(row_labels(b)));
        rows.extend(order.into_iter().map(|r| (i, r)));
        labels.push(own);
    }
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0 as i64 + 1)))];
    for (a, q) in table.demographics.iter().enumerate() {
        let h = &q.hierarchy;
        let cells: Vec<Cell> = rows.iter().map(|r| result.clusters[r.0].hull.0[a]).collect();
        let labels: Vec<String> = cells
            .iter()
            .map(|c| match *c {
                Cell::Range { lo, hi } => range_label(lo, hi),
                Cell::Node { level, code } => node_label(h, level as usize, code),
                Cell::Suppressed => "*".to_string(),
            })
            .collect();
        fields.push(label_field(&q.name));
        cols.push(label_array(labels.iter().map(String::as_str)));
        if h.is_numeric() {
            let bound = |lower: bool| -> Vec<f64> {
                cells
                    .iter()
                    .map(|c| match *c {
                        Cell::Range { lo, hi } => {
                            if lower {
                                lo
                            } else {
                                hi
                            }
                        }
                        _ => f64::NAN,
                    })
                    .collect()
            };
            let ty = match &table.types[a] {
                t if t.is_numeric() => t.clone(),
                _ => DataType::Float64,
            };
            for (suffix, v) in [("lo", bound(true)), ("hi", bound(false))] {
                fields.push(Field::new(format!("{}_{suffix}", q.name), ty.clone(), false));
                cols.push(cast(&(Arc::new(Float64Array::from(v)) as ArrayRef), &ty)?);
            }
        } else if let Some(nodes) = date_bounds_by_level(&table.types[a], h) {
            let bounds: Vec<_> = cells
                .iter()
                .map(|c| match *c {
                    Cell::Node { level, code } => nodes[level as usize][code as usize].clone(),
                    Cell::Range { .. } | Cell::Suppressed => None,
                })
                .collect();
            push_date_bounds(&Field::new(&q.name, table.types[a].clone(), true), &bounds, &mut fields, &mut cols)?;
        }
    }
    let codes = codes_column(table, &rows, labels, |r| &result.clusters[r.0].diag.records[r.1])?;
    fields.push(Field::new(&table.codes.name, codes.data_type().clone(), false));
    cols.push(Arc::new(codes));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), cols)?;
    Ok(Published { schema, batches: vec![batch], dropped: Vec::new() })
}

/// The codes column: a `List<Utf8View>` whose every occurrence of an item is a view into the one
/// copy of its label. A `List<Utf8>` would copy a generalized item's label (up to ~1,000
/// characters) into every record holding it: at EHRD's full size that column alone was most of
/// the call's 2.3 GB peak, and the adapter's shuffle (`take`) copied it once more. Views make
/// the column ~16 bytes per code occurrence plus each cluster's labels once, and `take` copies
/// only the views. Readers cast it to `List<Utf8>` as before (every reader casts).
fn codes_column<'a>(
    table: &RtTable,
    rows: &[Row],
    labels: Vec<Vec<String>>,
    items_of: impl Fn(&Row) -> &'a Vec<u32>,
) -> Result<ListArray> {
    // Every label once, in one block; (offset, len) per (cluster, item).
    let mut bytes: Vec<u8> = Vec::with_capacity(labels.iter().flatten().map(String::len).sum());
    let spans: Vec<Vec<(u32, u32)>> = labels
        .iter()
        .map(|own| {
            own.iter()
                .map(|l| {
                    let at = bytes.len();
                    bytes.extend_from_slice(l.as_bytes());
                    Ok((u32::try_from(at)?, u32::try_from(l.len())?))
                })
                .collect::<std::result::Result<Vec<_>, std::num::TryFromIntError>>()
        })
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| AnonError::column(&table.name, &table.codes.name, "the release's code labels exceed 4 GiB"))?;
    drop(labels);
    let occurrences: usize = rows.iter().map(|r| items_of(r).len()).sum();
    let mut values = StringViewBuilder::with_capacity(occurrences);
    let block = values.append_block(Buffer::from_vec(bytes));
    let mut codes =
        ListBuilder::with_capacity(values, rows.len()).with_field(Field::new_list_field(DataType::Utf8View, false));
    for r in rows {
        for &item in items_of(r) {
            let (offset, len) = spans[r.0][item as usize];
            codes.values().try_append_view(block, offset, len)?;
        }
        codes.append(true);
    }
    Ok(codes.finish())
}
