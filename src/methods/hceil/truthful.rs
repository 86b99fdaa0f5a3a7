//! The truthful version of a release (the paper's Table 9), for recipients who need every
//! record to be real.
//!
//! For a catalog row (group G, value s, count c), the counterfeits are among the s-records of
//! G's classes, at most c in any one class. So in each class of G, c of its s-records (all of
//! them when it has fewer) are suppressed: their quasi-identifiers become `*` and their class
//! id NULL. The suppressed records of (G, s) then hold every counterfeit of s in G, and c of
//! them are removed; the rest are real records that keep only their sensitive value. Table 5
//! with Table 8: one Diabetes record of class 1 and one of class 2 are suppressed, one of the
//! two removed, leaving `* * * * Diabetes`.

use crate::error::{AnonError, Result};
use crate::release::CatalogRow;
use crate::release::labels::{label_type, relabelled};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, RecordBatch, Scalar, StringArray, new_null_array,
};
use datafusion::arrow::compute::kernels::zip::zip;
use datafusion::arrow::compute::{cast, concat_batches, filter_record_batch, nullif};
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};
use std::collections::HashMap;

/// Rows to suppress and rows to remove, per the module doc.
fn marks(
    ids: &[Option<i64>],
    values: &[Option<String>],
    catalog: &[CatalogRow],
    names: (&str, &str),
) -> Result<(Vec<bool>, Vec<bool>)> {
    let mut rows_of: HashMap<(i64, &str), Vec<usize>> = HashMap::new();
    let wanted: std::collections::HashSet<(i64, &str)> =
        catalog.iter().flat_map(|r| r.class_ids.iter().map(move |&id| (id, r.sensitive_value.as_str()))).collect();
    for (r, (id, v)) in ids.iter().zip(values).enumerate() {
        if let (Some(id), Some(v)) = (id, v.as_deref())
            && wanted.contains(&(*id, v))
        {
            rows_of.entry((*id, v)).or_default().push(r);
        }
    }
    let (mut suppress, mut remove) = (vec![false; ids.len()], vec![false; ids.len()]);
    for row in catalog {
        let c = row.count as usize;
        let mut hit: Vec<usize> = Vec::new();
        for id in &row.class_ids {
            let rows = rows_of.get(&(*id, row.sensitive_value.as_str())).map_or(&[][..], |v| v.as_slice());
            hit.extend(rows.iter().take(c));
        }
        if hit.len() < c {
            return Err(AnonError::column(
                names.1,
                "count",
                format!(
                    "declares {c} counterfeit record(s) in classes {:?}, but release '{}' has only {} such record(s)",
                    row.class_ids,
                    names.0,
                    hit.len()
                ),
            ));
        }
        hit.sort_unstable();
        for (i, &r) in hit.iter().enumerate() {
            if i < c {
                remove[r] = true;
            } else {
                suppress[r] = true;
            }
        }
    }
    Ok((suppress, remove))
}

/// `batch` with each column in `schema`'s type: a Ballista cluster returns a release's
/// dictionary label columns as plain `Utf8`, while the release's schema keeps the dictionary.
fn conformed(schema: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    let cols = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| if c.data_type() == f.data_type() { Ok(c.clone()) } else { cast(c, f.data_type()) })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// The truthful table of a release (`class_id`, quasi-identifier columns, `sensitive`) and its
/// catalog. `names` = (release, catalog) for error messages.
pub(crate) fn truthful(
    schema: SchemaRef,
    batches: &[RecordBatch],
    catalog: &[CatalogRow],
    sensitive: &str,
    names: (&str, &str),
) -> Result<RecordBatch> {
    let batches = batches.iter().map(|b| conformed(&schema, b)).collect::<Result<Vec<_>>>()?;
    let all = concat_batches(&schema, &batches)?;
    let col = |name: &str| {
        all.column_by_name(name).cloned().ok_or_else(|| {
            AnonError::column(names.0, name, "is missing: a truthful view needs class ids and the sensitive value")
        })
    };
    let ids = cast(&col("class_id")?, &DataType::Int64)?;
    let ids: Vec<Option<i64>> = ids.as_primitive::<Int64Type>().iter().collect();
    let values = cast(&col(sensitive)?, &DataType::Utf8)?;
    let values: Vec<Option<String>> = values.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect();
    let (suppress, remove) = marks(&ids, &values, catalog, names)?;
    let mask = BooleanArray::from(suppress);
    let star = Scalar::new(StringArray::from(vec!["*"]));
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(all.num_columns());
    for (f, c) in schema.fields().iter().zip(all.columns()) {
        cols.push(if f.name() == sensitive {
            c.clone()
        } else if *f.data_type() == DataType::Utf8 {
            zip(&mask, &star, c)?
        } else if *f.data_type() == label_type() {
            relabelled(&zip(&mask, &star, &cast(c, &DataType::Utf8)?)?)?
        } else if c.null_count() == c.len() {
            new_null_array(f.data_type(), c.len())
        } else {
            nullif(c, &mask)?
        });
    }
    // Suppressed values are NULL: every column but the sensitive one becomes nullable.
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(f.is_nullable() || f.name() != sensitive))
        .collect();
    let out = RecordBatch::try_new(std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(fields)), cols)?;
    Ok(filter_record_batch(&out, &BooleanArray::from(remove.iter().map(|r| !r).collect::<Vec<_>>()))?)
}
