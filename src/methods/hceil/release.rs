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
//! show for an insensitive column, and a NULL there would mark it. Suppressed classes have no
//! rows and no class id.

use super::counterfeit::NodeCatalog;
use crate::encode::publish::{ClassCells, Source, date_bounds, push_bounds, push_date_bounds, range_label};
use crate::encode::{Cached, Grouping};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::release::labels::{label_array_by, label_field};
use datafusion::arrow::array::{Array, ArrayRef, Int64Array, Int64Builder, ListBuilder, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::collections::HashMap;
use std::sync::Arc;

/// Field metadata on the catalog's `sensitive_value` naming the release's sensitive column, so
/// `truthful_view` needs no third argument.
pub(crate) const SENSITIVE_COLUMN_KEY: &str = "anonfusion.sensitive_column";

/// Class ids (1-based) of the published classes in the order of their generalized values; a
/// suppressed class gets 0 and no row. Numbering only what is published leaves no gap where a
/// suppressed class would sort.
pub(crate) fn class_ids(cached: &Cached, suppressed: &[bool]) -> Vec<i64> {
    let g = &cached.g;
    let mut order: Vec<usize> = (0..g.len()).filter(|&c| !suppressed[c]).collect();
    crate::parallel::sort_by(&mut order, |&a, &b| g.codes.iter().map(|c| c[a]).cmp(g.codes.iter().map(|c| c[b])));
    let mut ids = vec![0i64; g.len()];
    for (rank, &c) in order.iter().enumerate() {
        ids[c] = rank as i64 + 1;
    }
    ids
}

/// The release's cells: (class, sensitive value, rows), genuine plus counterfeit, for every
/// non-empty cell, in class-id order and value by value. A release is its cells expanded, in
/// the client ([`ClassCells::batch_in`]) or by a plan ([`ClassCells::expand`]); the cells are as many
/// as the chosen node's (class, value) pairs, so they stay in the client whatever the rows.
fn cells(cached: &Cached, width: usize, catalog: &NodeCatalog, ids: &[i64]) -> Vec<(u32, u32, u64)> {
    // Ids number the published classes 1, 2, ... ([`class_ids`]): the order is their inverse.
    let mut by_id = vec![0usize; ids.iter().filter(|&&id| id > 0).count()];
    for (c, &id) in ids.iter().enumerate().filter(|(_, id)| **id > 0) {
        by_id[id as usize - 1] = c;
    }
    // Ranges of classes on the pool, laid end to end in id order.
    let ranges: Vec<&[usize]> = by_id.chunks(CELL_CLASSES).collect();
    let parts = crate::parallel::map(&ranges, |classes| {
        let mut out = Vec::new();
        for &c in *classes {
            let mut fake = catalog.counterfeits_in(c as u32).iter().peekable();
            for (s, &n) in cached.class_hist(c, width).iter().enumerate() {
                let n = n + fake.next_if(|f| f.1 == s as u32).map_or(0, |f| f.2);
                if n > 0 {
                    out.push((c as u32, s as u32, u64::from(n)));
                }
            }
        }
        out
    });
    parts.concat()
}

/// Classes a job of [`cells`] reads.
const CELL_CLASSES: usize = 1 << 12;

/// One release column per class (class-level arrays), with its field; each quasi-identifier's
/// columns built by a job on the pool.
fn class_columns(src: &Source<'_>, cached: &Cached, ids: &[i64]) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    let qis: Vec<(&Field, &Hierarchy, usize)> =
        src.qis()?.into_iter().map(|(f, a)| (f, &*src.ft.qis[a].hierarchy, a)).collect();
    for qi in crate::parallel::map(&qis, |&(f, h, a)| qi_columns(f, h, &cached.g, a)) {
        let (f, c) = qi?;
        fields.extend(f);
        cols.extend(c);
    }
    Ok((fields, cols))
}

/// Quasi-identifier `a`'s class-level columns: its labels (a label written once per distinct
/// range or node, [`label_array_by`]) and, for a numeric or date one, its bounds.
fn qi_columns(f: &Field, h: &Hierarchy, g: &Grouping, a: usize) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let (mut fields, mut cols) = (vec![label_field(f.name())], Vec::new());
    if h.is_numeric() {
        let v = h.leaf_values();
        cols.push(label_array_by(g.ranges[a].iter(), |&&(l, u)| range_label(v[l as usize], v[u as usize])));
        let (lo, hi): (Vec<f64>, Vec<f64>) = g.ranges[a].iter().map(|&(l, u)| (v[l as usize], v[u as usize])).unzip();
        push_bounds(f, lo, hi, &mut fields, &mut cols)?;
    } else {
        let level = g.levels[a] as usize;
        cols.push(label_array_by(g.codes[a].iter(), |&&c| h.label(level, c)));
        if let Some(nodes) = date_bounds(f.data_type(), h, level) {
            let b: Vec<_> = g.codes[a].iter().map(|&c| nodes[c as usize].clone()).collect();
            push_date_bounds(f, &b, &mut fields, &mut cols)?;
        }
    }
    Ok((fields, cols))
}

/// The release of the chosen node: its schema, class-level columns and cells (`ids`: its
/// classes' [`class_ids`]).
pub(crate) fn release(src: &Source<'_>, cached: &Cached, catalog: &NodeCatalog, ids: &[i64]) -> Result<ClassCells> {
    let (fields, class_cols) = class_columns(src, cached, ids)?;
    let (schema, values) = src.release_schema(fields)?;
    let cells = cells(cached, src.sensitive_column()?.values.len(), catalog, ids);
    let dropped = src.dropped_columns();
    let values = Some((schema.fields().len() - 1, values));
    Ok(ClassCells::new(schema, class_cols, values, cells, dropped))
}

/// The catalog table: `class_ids` List<Int64>, `sensitive_value` Utf8, `count` Int64.
pub(crate) fn catalog_batch(
    catalog: &NodeCatalog,
    ids: &[i64],
    values: &[String],
    sensitive: &str,
) -> Result<RecordBatch> {
    let mut rows: Vec<(Vec<i64>, &str, i64)> = catalog
        .entries
        .iter()
        .map(|e| {
            let mut group: Vec<i64> = e.classes.iter().map(|&c| ids[c as usize]).collect();
            group.sort_unstable();
            (group, values[e.value as usize].as_str(), e.count as i64)
        })
        .collect();
    crate::parallel::sort_by(&mut rows, Ord::cmp);
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
