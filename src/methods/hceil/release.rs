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
use crate::encode::Cached;
use crate::encode::publish::{Source, cell_rows, date_bounds, push_bounds, push_date_bounds, range_label};
use crate::error::Result;
use crate::release::labels::{label_array, label_field};
use datafusion::arrow::array::{
    Array, ArrayRef, Int64Array, Int64Builder, ListBuilder, RecordBatch, RecordBatchOptions, StringArray, UInt32Array,
};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::functions_nested::expr_fn::range;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{DataFrame, col, ident, lit};
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
    order.sort_by(|&a, &b| g.codes.iter().map(|c| c[a]).cmp(g.codes.iter().map(|c| c[b])));
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
    let mut by_id: Vec<usize> = (0..ids.len()).filter(|&c| ids[c] > 0).collect();
    by_id.sort_by_key(|&c| ids[c]);
    let mut out = Vec::new();
    for c in by_id {
        for (s, &n) in cached.class_hist(c, width).iter().enumerate() {
            let n = n + catalog.counterfeits_of(c as u32, s as u32);
            if n > 0 {
                out.push((c as u32, s as u32, u64::from(n)));
            }
        }
    }
    out
}

/// One release column per class (class-level arrays), with its field.
fn class_columns(src: &Source<'_>, cached: &Cached, ids: &[i64]) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let g = &cached.g;
    let mut fields = vec![Field::new("class_id", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids.to_vec()))];
    for (f, a) in src.qis()? {
        let h = &src.ft.qis[a].hierarchy;
        if h.is_numeric() {
            let v = h.leaf_values();
            let (lo, hi): (Vec<f64>, Vec<f64>) =
                g.ranges[a].iter().map(|&(l, u)| (v[l as usize], v[u as usize])).unzip();
            let labels: Vec<String> = lo.iter().zip(&hi).map(|(&l, &u)| range_label(l, u)).collect();
            fields.push(label_field(f.name()));
            cols.push(label_array(labels.iter().map(String::as_str)));
            push_bounds(f, lo, hi, &mut fields, &mut cols)?;
        } else {
            let level = g.levels[a] as usize;
            fields.push(label_field(f.name()));
            cols.push(label_array(g.codes[a].iter().map(|&c| h.label(level, c))));
            if let Some(nodes) = date_bounds(f.data_type(), h, level) {
                let b: Vec<_> = g.codes[a].iter().map(|&c| nodes[c as usize].clone()).collect();
                push_date_bounds(f, &b, &mut fields, &mut cols)?;
            }
        }
    }
    Ok((fields, cols))
}

/// A release before its rows exist: class-level columns, the sensitive values and the cells
/// (class, value, rows). Expanded in the client ([`ClassCells::batch_in`]) it is the
/// [`crate::release::Published`] table every method returns; expanded by a plan
/// ([`ClassCells::expand`]) the client never holds the rows. Named for what it holds, since
/// it is a builder of the release, not the release.
pub(crate) struct ClassCells {
    pub(crate) schema: SchemaRef,
    class_cols: Vec<ArrayRef>,
    values: ArrayRef,
    cells: Vec<(u32, u32, u64)>,
    /// Source columns the release leaves out (neither identifier, quasi-identifier nor
    /// sensitive).
    pub(crate) dropped: Vec<String>,
}

impl ClassCells {
    /// How many rows the release has.
    pub(crate) fn rows(&self) -> usize {
        self.cells.iter().map(|c| c.2 as usize).sum()
    }

    /// The rows, built in the client, as one batch: row `i` is row `order[i]` of the cells laid
    /// out class by class and value by value (`order` a permutation of the rows). Each column is gathered once from the class-level arrays, on
    /// the process's pool, with no batches in the cells' order built first.
    pub(crate) fn batch_in(&self, order: &[u32]) -> Result<RecordBatch> {
        let (row_class, row_value) = cell_rows(self.cells.iter().copied());
        let permuted = |rows: &[u32]| UInt32Array::from_iter_values(order.iter().map(|&i| rows[i as usize]));
        let (classes, values) = (permuted(&row_class), permuted(&row_value));
        drop((row_class, row_value));
        let columns: Vec<(&ArrayRef, &UInt32Array)> =
            self.class_cols.iter().map(|c| (c, &classes)).chain([(&self.values, &values)]).collect();
        let columns = crate::parallel::map(&columns, |&(c, rows)| take(c, rows, None));
        let options = RecordBatchOptions::new().with_row_count(Some(order.len()));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns.into_iter().collect::<Result<_, _>>()?,
            &options,
        )?)
    }

    /// One row per cell: the release's columns and the cell's row count. As many rows as the
    /// chosen node has (class, value) pairs, however many records the release holds.
    pub(crate) fn cells(&self) -> Result<RecordBatch> {
        let classes = UInt32Array::from_iter_values(self.cells.iter().map(|c| c.0));
        let values = UInt32Array::from_iter_values(self.cells.iter().map(|c| c.1));
        let mut fields: Vec<Field> = self.schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut cols: Vec<ArrayRef> =
            self.class_cols.iter().map(|c| take(c, &classes, None)).collect::<Result<_, _>>()?;
        cols.push(take(&self.values, &values, None)?);
        fields.push(Field::new(N, DataType::Int64, false));
        cols.push(Arc::new(Int64Array::from_iter_values(self.cells.iter().map(|c| c.2 as i64))));
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
    }

    /// The rows as a plan over `cells` (a table of [`ClassCells::cells`]), each cell expanded to
    /// its rows by `unnest(range(n))`, so that a cluster's executors build them and the client
    /// never holds them. Rows come cell by cell, as in the client, so their order says nothing
    /// about source records.
    pub(crate) fn expand(&self, cells: DataFrame) -> Result<DataFrame> {
        let out: Vec<Expr> = self.schema.fields().iter().map(|f| ident(f.name())).collect();
        Ok(cells.with_column(I, range(lit(0i64), col(N), lit(1i64)))?.unnest_columns(&[I])?.select(out)?)
    }
}

/// The cells' row count and the unnested index: names no source column can take, since the
/// release's columns are the source's quasi-identifiers, `class_id` and the sensitive one.
const N: &str = "__anonfusion_rows";
const I: &str = "__anonfusion_row";

/// The release of the chosen node: its schema, class-level columns and cells.
pub(crate) fn release(
    src: &Source<'_>,
    cached: &Cached,
    catalog: &NodeCatalog,
    suppressed: &[bool],
) -> Result<ClassCells> {
    let ids = class_ids(cached, suppressed);
    let (fields, class_cols) = class_columns(src, cached, &ids)?;
    let (schema, values) = src.release_schema(fields)?;
    let cells = cells(cached, src.sensitive_column()?.values.len(), catalog, &ids);
    let dropped = src.dropped_columns();
    Ok(ClassCells { schema, class_cols, values, cells, dropped })
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
