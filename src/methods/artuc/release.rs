//! The published table: `class_id` (the cluster), the demographics generalized per Definition 2
//! and the anonymized diagnosis codes.
//!
//! As every release (docs/architecture.md): a numeric attribute `age` becomes `age` (label `37`
//! or `[35-37]`), `age_lo`, `age_hi` (inclusive bounds in the source type); a categorical one
//! holds its node's label; the codes column is a `List<Utf8>` whose elements are codes or
//! generalized codes `(053.20,053.71)`, which `src/metrics/decode.rs` and the verifiers read
//! back as the listed codes. Clusters are local recodings, so two may publish the same labels;
//! `class_id` tells them apart. Within a cluster rows are sorted by their codes, so a row's
//! position says nothing about the source order.

use super::data::RtTable;
use super::run::ArtucResult;
use crate::encode::node_label;
use crate::encode::publish::range_label;
use crate::error::Result;
use crate::metrics::decode::Cell;
use datafusion::arrow::array::{
    Array, ArrayRef, Float64Array, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The release: schema and batches.
#[derive(Debug, Clone)]
pub struct Release {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

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
pub fn release(table: &RtTable, result: &ArtucResult) -> Result<Release> {
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
    let labels = &labels;
    let row_labels =
        |&(c, r): &Row| result.clusters[c].diag.records[r].iter().map(move |&i| labels[c][i as usize].as_str());
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
        fields.push(Field::new(&q.name, DataType::Utf8, false));
        cols.push(Arc::new(StringArray::from(labels)));
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
        }
    }
    // Sized exactly up front: a doubling buffer would hold up to twice the release's codes.
    let (values, bytes) = rows.iter().flat_map(&row_labels).fold((0, 0), |(n, b), l| (n + 1, b + l.len()));
    let mut codes = ListBuilder::with_capacity(StringBuilder::with_capacity(values, bytes), rows.len())
        .with_field(Field::new_list_field(DataType::Utf8, false));
    for r in &rows {
        for label in row_labels(r) {
            codes.values().append_value(label);
        }
        codes.append(true);
    }
    let codes = codes.finish();
    fields.push(Field::new(&table.codes.name, codes.data_type().clone(), false));
    cols.push(Arc::new(codes));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), cols)?;
    Ok(Release { schema, batches: vec![batch] })
}
