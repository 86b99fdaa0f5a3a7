//! The published tables: the release (Table 5) and the catalog (Table 8).
//!
//! The release has the paper's schema: `class_id`, the quasi-identifiers and the sensitive
//! attribute. A numeric quasi-identifier `age` is published as its class's min–max range,
//! `age_lo`/`age_hi` in the column's type with the label `[35-37]` (or `35` when the class
//! holds one value), which is the range D(r) is measured on; a categorical one as its
//! hierarchy node's label. Rows are built from the chosen node's classes and their sensitive
//! histograms, class by class and value by value, so a counterfeit row is identical to the
//! genuine rows of its class with the same value and nothing (position included) tells them
//! apart. For that reason the release carries no other column: a counterfeit has no value to
//! show for an insensitive column, and a NULL there would mark it.

use super::counterfeit::NodeCatalog;
use crate::encode::publish::{class_rows, dropped_columns, push_bounds, range_label, sensitive_values};
use crate::encode::{Cached, FrequencyTable};
use crate::error::{AnonError, Result};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{Array, ArrayRef, Int64Array, Int64Builder, ListBuilder, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::Arc;

/// Field metadata on the catalog's `sensitive_value` naming the release's sensitive column, so
/// `truthful_view` needs no third argument.
pub const SENSITIVE_COLUMN_KEY: &str = "anonfusion.sensitive_column";

/// Class ids (1-based) in the order of the classes' generalized values.
pub fn class_ids(cached: &Cached) -> Vec<i64> {
    let g = &cached.g;
    let mut order: Vec<usize> = (0..g.len()).collect();
    order.sort_by(|&a, &b| g.codes.iter().map(|c| c[a]).cmp(g.codes.iter().map(|c| c[b])));
    let mut ids = vec![0i64; g.len()];
    for (rank, &c) in order.iter().enumerate() {
        ids[c] = rank as i64 + 1;
    }
    ids
}

/// Which class and sensitive value each release row has, in class-id order.
fn rows(cached: &Cached, width: usize, catalog: &NodeCatalog, ids: &[i64]) -> (Vec<u32>, Vec<u32>) {
    let mut by_id: Vec<usize> = (0..ids.len()).collect();
    by_id.sort_by_key(|&c| ids[c]);
    let (mut classes, mut values) = (Vec::new(), Vec::new());
    for c in by_id {
        for (s, &n) in cached.class_hist(c, width).iter().enumerate() {
            let n = n + catalog.counterfeits_of(c as u32, s as u32);
            classes.extend(std::iter::repeat_n(c as u32, n as usize));
            values.extend(std::iter::repeat_n(s as u32, n as usize));
        }
    }
    (classes, values)
}

/// One release column per class (class-level arrays), with its field.
fn class_columns(
    ft: &FrequencyTable,
    meta: &TableMeta,
    table: &str,
    source: &Schema,
    cached: &Cached,
    ids: &[i64],
) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let g = &cached.g;
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    for f in source.fields() {
        if meta.role(f.name()) != Some(Role::QuasiIdentifier) {
            continue;
        }
        let a = ft.qis.iter().position(|q| q.name == *f.name()).ok_or_else(|| {
            AnonError::column(table, f.name(), "is a declared quasi-identifier missing from the frequency table")
        })?;
        let h = &ft.qis[a].hierarchy;
        if h.is_numeric() {
            let v = h.leaf_values();
            let (lo, hi): (Vec<f64>, Vec<f64>) =
                g.ranges[a].iter().map(|&(l, u)| (v[l as usize], v[u as usize])).unzip();
            let labels: Vec<String> = lo.iter().zip(&hi).map(|(&l, &u)| range_label(l, u)).collect();
            fields.push(Field::new(f.name(), DataType::Utf8, false));
            cols.push(Arc::new(StringArray::from(labels)));
            push_bounds(f, lo, hi, &mut fields, &mut cols)?;
        } else {
            let level = g.levels[a] as usize;
            let labels: Vec<&str> = g.codes[a].iter().map(|&c| h.label(level, c)).collect();
            fields.push(Field::new(f.name(), DataType::Utf8, false));
            cols.push(Arc::new(StringArray::from(labels)));
        }
    }
    Ok((fields, cols))
}

/// The release's schema and batches, and the source columns it leaves out.
pub fn release(
    ft: &FrequencyTable,
    meta: &TableMeta,
    table: &str,
    source: &Schema,
    cached: &Cached,
    catalog: &NodeCatalog,
) -> Result<(SchemaRef, Vec<RecordBatch>, Vec<String>)> {
    let sens = ft.sensitive.as_ref().ok_or_else(|| AnonError::table(table, "no sensitive attribute declared"))?;
    let ids = class_ids(cached);
    let (mut fields, class_cols) = class_columns(ft, meta, table, source, cached, &ids)?;
    let (field, values) = sensitive_values(table, sens, source)?;
    fields.push(field);
    let schema = Arc::new(Schema::new(fields));
    let (row_class, row_value) = rows(cached, sens.values.len(), catalog, &ids);
    let batches = class_rows(&schema, &class_cols, &values, &row_class, &row_value)?;
    let dropped = dropped_columns(source, meta);
    Ok((schema, batches, dropped))
}

/// The catalog table: `class_ids` List<Int64>, `sensitive_value` Utf8, `count` Int64.
pub fn catalog_batch(catalog: &NodeCatalog, ids: &[i64], values: &[String], sensitive: &str) -> Result<RecordBatch> {
    let mut rows: Vec<(Vec<i64>, &str, i64)> = catalog
        .entries
        .iter()
        .map(|e| {
            let mut group: Vec<i64> = e.classes.iter().map(|&c| ids[c as usize]).collect();
            group.sort_unstable();
            (group, values[e.value as usize].as_str(), e.count as i64)
        })
        .collect();
    rows.sort();
    let mut lists = ListBuilder::new(Int64Builder::new());
    for (group, _, _) in &rows {
        lists.values().append_slice(group);
        lists.append(true);
    }
    let lists = lists.finish();
    let meta = HashMap::from([(SENSITIVE_COLUMN_KEY.to_string(), sensitive.to_string())]);
    let schema = Schema::new(vec![
        Field::new("class_ids", lists.data_type().clone(), false),
        Field::new("sensitive_value", DataType::Utf8, false).with_metadata(meta),
        Field::new("count", DataType::Int64, false),
    ]);
    let cols: Vec<ArrayRef> = vec![
        Arc::new(lists),
        Arc::new(StringArray::from(rows.iter().map(|r| r.1).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())),
    ];
    Ok(RecordBatch::try_new(Arc::new(schema), cols)?)
}
