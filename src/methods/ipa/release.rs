//! The released table of the chosen node (Table 8), built from its perturbed classes.
//!
//! Columns: the dimension attributes in declaration order, then the informative attribute.
//! Generalized values are the hierarchy's nodes (IPA's boundaries come from the taxonomy, not
//! from the data, which is why generalization costs no budget): a numeric attribute `age` is
//! published as the node's label (`10-19`, or the value itself at level 0) with the node's
//! bounds in `age_lo`/`age_hi`; a categorical one as its node label, and a date one also with
//! the first and last day that label names in `_lo`/`_hi` (read from the label alone, as every
//! method's release: [`date_bounds`](crate::encode::publish::date_bounds)). The `*` class has `*`
//! everywhere and NULL bounds (the suppressed-record convention of `anon_metrics`). There is no
//! `class_id`: the paper publishes none. Rows are laid out class by class and value by value,
//! so a counterfeit row is identical to the real rows of its class with the same value, in
//! content and position.

use super::adaptive::AdaptiveRelease;
use super::guarantee::{Guarantee, METADATA_KEY};
use super::histogram::DpHistogram;
use super::perturb::Perturbation;
use crate::encode::publish::{
    ClassCells, cell_rows, class_rows, date_bounds_by_level, push_date_bounds, release_schema,
};
use crate::encode::{Cached, FrequencyTable, node_label};
use crate::error::{AnonError, Result};
use crate::release::labels::{label_array, label_field};
use datafusion::arrow::array::{ArrayRef, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use std::collections::HashMap;
use std::sync::Arc;

/// The label of a suppressed value.
pub(crate) const SUPPRESSED: &str = "*";

/// A class of the release: its levels and its node codes at them; `None` is the `*` class.
type ClassKey<'a> = Option<(&'a [u8], Vec<u32>)>;

/// One column per dimension attribute value (class-level arrays, one entry per class), with
/// their fields. Classes may be at different levels (an adaptive partition).
fn class_columns(ft: &FrequencyTable, source: &Schema, classes: &[ClassKey]) -> Result<(Vec<Field>, Vec<ArrayRef>)> {
    let (mut fields, mut cols) = (Vec::new(), Vec::<ArrayRef>::new());
    for (a, q) in ft.qis.iter().enumerate() {
        let h = &q.hierarchy;
        let labels: Vec<String> = classes
            .iter()
            .map(|c| {
                c.as_ref().map_or(SUPPRESSED.to_string(), |(levels, codes)| node_label(h, levels[a] as usize, codes[a]))
            })
            .collect();
        fields.push(label_field(&q.name));
        cols.push(label_array(labels.iter().map(String::as_str)));
        if h.is_numeric() {
            let ty = source.field_with_name(&q.name).map_or(DataType::Float64, |f| f.data_type().clone());
            let bounds: Vec<Option<(f64, f64)>> =
                classes.iter().map(|c| c.as_ref().and_then(|(l, codes)| h.bounds(l[a] as usize, codes[a]))).collect();
            for (suffix, pick) in [("lo", 0usize), ("hi", 1)] {
                let v: Float64Array =
                    bounds.iter().map(|b| b.map(|(lo, hi)| if pick == 0 { lo } else { hi })).collect();
                let name = format!("{}_{suffix}", q.name);
                let arr = cast(&(Arc::new(v) as ArrayRef), &ty)
                    .map_err(|_| AnonError::column("release", &name, format!("cannot be written as {ty}")))?;
                fields.push(Field::new(name, ty.clone(), true));
                cols.push(arr);
            }
        } else if let Some((f, nodes)) =
            source.field_with_name(&q.name).ok().and_then(|f| Some((f, date_bounds_by_level(f.data_type(), h)?)))
        {
            let bounds: Vec<_> = classes
                .iter()
                .map(|c| c.as_ref().and_then(|(levels, codes)| nodes[levels[a] as usize][codes[a] as usize].clone()))
                .collect();
            push_date_bounds(f, &bounds, &mut fields, &mut cols)?;
        }
    }
    Ok((fields, cols))
}

/// Which perturbed class and informative value each released row has.
fn rows(p: &Perturbation) -> (Vec<u32>, Vec<u32>) {
    let cells: Vec<(u32, u32, u64)> = p
        .classes
        .iter()
        .enumerate()
        .flat_map(|(i, pc)| {
            let per_value = pc.kept.iter().zip(&pc.counterfeit).enumerate();
            per_value.map(move |(v, (&k, &f))| (i as u32, v as u32, u64::from(k + f)))
        })
        .collect();
    cell_rows(&cells)
}

/// The release's schema and batches. `source` gives the column types (a numeric attribute's
/// bounds and the informative attribute keep their source type; Float64 and Utf8 when the
/// source does not have the column).
pub fn release(
    ft: &FrequencyTable,
    source: &Schema,
    cached: &Cached,
    p: &Perturbation,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let g = &cached.g;
    let classes: Vec<ClassKey> = p
        .classes
        .iter()
        .map(|pc| pc.class.map(|c| (&g.levels[..], g.codes.iter().map(|col| col[c as usize]).collect())))
        .collect();
    let (row_class, row_value) = rows(p);
    build(ft, source, &classes, &row_class, &row_value)
}

/// Released cells: the classes they belong to (levels and codes) and (class, value, count).
pub(crate) trait Cells {
    fn classes(&self) -> Vec<ClassKey<'_>>;
    fn cells(&self) -> impl Iterator<Item = (u32, u32, u64)>;
}

/// A node's histogram: each cell is its own class, all at the node's levels.
impl Cells for DpHistogram {
    fn classes(&self) -> Vec<ClassKey<'_>> {
        self.cells.iter().map(|c| Some((&self.levels[..], c.codes.clone()))).collect()
    }
    fn cells(&self) -> impl Iterator<Item = (u32, u32, u64)> {
        self.cells.iter().enumerate().map(|(i, c)| (i as u32, c.value, c.count))
    }
}

/// An adaptive partition: each class at its own depth's levels.
impl Cells for AdaptiveRelease {
    fn classes(&self) -> Vec<ClassKey<'_>> {
        self.classes.iter().map(|c| Some((&self.levels[c.depth][..], c.codes.clone()))).collect()
    }
    fn cells(&self) -> impl Iterator<Item = (u32, u32, u64)> {
        self.cells.iter().map(|c| (c.class, c.value, c.count))
    }
}

/// The release of released cells as class cells: the adapter builds its rows once, straight
/// in their drawn order, instead of batches in the cells' order shuffled afterwards (a second
/// copy of every row, whose freed batches the allocator then keeps). The cells are laid out
/// as [`cell_rows`] lays them out, so the rows and their order are those of the batches.
pub(crate) fn cells_release(
    ft: &FrequencyTable,
    source: &Schema,
    released: &impl Cells,
    dropped: Vec<String>,
) -> Result<ClassCells> {
    let inf = informative(ft)?;
    let (fields, class_cols) = class_columns(ft, source, &released.classes())?;
    let at = fields.len();
    let (schema, values) = release_schema("release", inf, source, fields)?;
    Ok(ClassCells::new(schema, class_cols, Some((at, values)), released.cells().collect(), dropped))
}

fn informative(ft: &FrequencyTable) -> Result<&crate::encode::SensitiveColumn> {
    ft.sensitive.as_ref().ok_or_else(|| AnonError::table("release", "no informative attribute"))
}

fn build(
    ft: &FrequencyTable,
    source: &Schema,
    classes: &[ClassKey],
    row_class: &[u32],
    row_value: &[u32],
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let inf = informative(ft)?;
    let (fields, class_cols) = class_columns(ft, source, classes)?;
    let (schema, values) = release_schema("release", inf, source, fields)?;
    let batches = class_rows(&schema, &class_cols, &values, row_class, row_value)?;
    Ok((schema, batches))
}

/// The release labelled with the call's guarantee statement in the Arrow schema metadata
/// (`anonfusion.guarantee`, plus `anonfusion.epsilon` and `anonfusion.delta`), so the label
/// travels with the table and into a Parquet export; a seeded call's statement says it is not
/// private.
pub(crate) fn labelled(
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    guarantee: Guarantee,
    statement: String,
    epsilon: f64,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let schema = with_guarantee(&schema, guarantee, statement, epsilon);
    let batches = batches
        .into_iter()
        .map(|b| b.with_schema(schema.clone()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| AnonError::table("release", e.to_string()))?;
    Ok((schema, batches))
}

/// [`labelled`] for a release of class cells.
pub(crate) fn labelled_cells(
    mut cells: ClassCells,
    guarantee: Guarantee,
    statement: String,
    epsilon: f64,
) -> ClassCells {
    cells.schema = with_guarantee(&cells.schema, guarantee, statement, epsilon);
    cells
}

fn with_guarantee(schema: &SchemaRef, guarantee: Guarantee, statement: String, epsilon: f64) -> SchemaRef {
    let metadata: HashMap<String, String> = [
        (METADATA_KEY.to_string(), statement),
        ("anonfusion.epsilon".to_string(), epsilon.to_string()),
        ("anonfusion.delta".to_string(), guarantee.delta().to_string()),
    ]
    .into();
    Arc::new(schema.as_ref().clone().with_metadata(metadata))
}
