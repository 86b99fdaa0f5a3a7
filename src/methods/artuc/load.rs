//! Utility constraints read from a table, in the shape `verify_release` reads them
//! (docs/verify.md): per demographic `q`, `q_lo` and `q_hi` (numeric) or `q` (a node label), and
//! the set-valued column as a list of codes or code-hierarchy node labels. One row per
//! constraint, named `u1`, `u2`, ... in row order (as Table 4).

use super::F;
use super::constraints::{CodeElement, DemographicElement, UtilityConstraint};
use super::data::RtTable;
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type};
use std::sync::Arc;

fn col(table: &str, b: &RecordBatch, name: &str) -> Result<ArrayRef> {
    b.column_by_name(name)
        .cloned()
        .ok_or_else(|| AnonError::column(table, name, "is missing (a utility constraints table)"))
}

fn numbers(table: &str, b: &RecordBatch, name: &str) -> Result<Vec<Option<f64>>> {
    let a = cast(&col(table, b, name)?, &DataType::Float64)
        .map_err(|_| AnonError::column(table, name, "must hold numbers (a range bound)"))?;
    let a = a.as_primitive::<Float64Type>();
    Ok((0..a.len()).map(|r| a.is_valid(r).then(|| a.value(r))).collect())
}

fn texts(table: &str, a: &ArrayRef, name: &str) -> Result<Vec<Option<String>>> {
    let a = cast(a, &DataType::Utf8).map_err(|_| AnonError::column(table, name, "must hold text labels"))?;
    let a = a.as_string::<i32>();
    Ok((0..a.len()).map(|r| a.is_valid(r).then(|| a.value(r).to_string())).collect())
}

/// Read the constraints of `table` (its batches) for the RT-dataset `rt`.
pub fn constraints_from_batches(table: &str, rt: &RtTable, batches: &[RecordBatch]) -> Result<Vec<UtilityConstraint>> {
    let mut out = Vec::new();
    let list = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)));
    for b in batches {
        let mut rows: Vec<Vec<DemographicElement>> = vec![Vec::new(); b.num_rows()];
        for q in &rt.demographics {
            if q.hierarchy.is_numeric() {
                let (lo, hi) =
                    (numbers(table, b, &format!("{}_lo", q.name))?, numbers(table, b, &format!("{}_hi", q.name))?);
                for (row, (lo, hi)) in rows.iter_mut().zip(lo.into_iter().zip(hi)) {
                    let (Some(lo), Some(hi)) = (lo, hi) else {
                        return Err(AnonError::column(table, &format!("{}_lo", q.name), "holds a NULL bound"));
                    };
                    row.push(DemographicElement::Range { lo, hi });
                }
            } else {
                for (row, label) in rows.iter_mut().zip(texts(table, &col(table, b, &q.name)?, &q.name)?) {
                    let label = label.ok_or_else(|| AnonError::column(table, &q.name, "holds a NULL node label"))?;
                    row.push(DemographicElement::Node(label));
                }
            }
        }
        let name = &rt.codes.name;
        let codes = cast(&col(table, b, name)?, &list)
            .map_err(|_| AnonError::column(table, name, "must be a list of diagnosis codes"))?;
        let codes = codes.as_list::<i32>();
        for (r, demographics) in rows.into_iter().enumerate() {
            let items = if codes.is_valid(r) { texts(table, &codes.value(r), name)? } else { Vec::new() };
            let id = format!("u{}", out.len() + 1);
            out.push(UtilityConstraint::new(
                &id,
                demographics,
                CodeElement::Codes(items.into_iter().flatten().collect()),
            ));
        }
    }
    if out.is_empty() {
        return Err(AnonError::argument(F, "constraints", format!("table '{table}' holds no utility constraint")));
    }
    Ok(out)
}
