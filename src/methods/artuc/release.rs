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

/// One published row: its cluster and its code labels.
struct Row {
    cluster: usize,
    codes: Vec<String>,
}

/// The labels of a record's items: a code, or `(a,b,...)` for a generalized code.
fn item_labels(table: &RtTable, items: &[Vec<u32>], record: &[u32]) -> Vec<String> {
    let h = &table.codes.hierarchy;
    record
        .iter()
        .map(|&i| {
            let codes = &items[i as usize];
            match codes.as_slice() {
                [one] => h.label(0, *one).to_string(),
                many => format!("({})", many.iter().map(|&c| h.label(0, c)).collect::<Vec<_>>().join(",")),
            }
        })
        .collect()
}

/// Build the release of `result` (cluster i gets class id i + 1).
pub fn release(table: &RtTable, result: &ArtucResult) -> Result<Release> {
    let mut rows: Vec<Row> = Vec::new();
    for (i, c) in result.clusters.iter().enumerate() {
        let mut own: Vec<Vec<String>> = c.diag.records.iter().map(|r| item_labels(table, &c.diag.items, r)).collect();
        own.sort();
        rows.extend(own.into_iter().map(|codes| Row { cluster: i, codes }));
    }
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.cluster as i64 + 1)))];
    for (a, q) in table.demographics.iter().enumerate() {
        let h = &q.hierarchy;
        let cells: Vec<Cell> = rows.iter().map(|r| result.clusters[r.cluster].hull.0[a]).collect();
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
    let mut codes = ListBuilder::new(StringBuilder::new()).with_field(Field::new_list_field(DataType::Utf8, false));
    for r in &rows {
        for c in &r.codes {
            codes.values().append_value(c);
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
