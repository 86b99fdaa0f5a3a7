//! Reading a release's Arrow columns by name and as plain values, with errors that name the
//! table and the column: shared by the release readers (src/metrics/decode.rs) and the catalog
//! reader ([`super::catalog`]).

use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{ArrowPrimitiveType, DataType, Float64Type, Int64Type};
use datafusion::arrow::error::ArrowError;

/// Column `col` of every batch, or an error naming the release and the column.
pub(crate) fn required_column(table: &str, col: &str, batches: &[RecordBatch]) -> Result<Vec<ArrayRef>> {
    optional_column(table, col, batches)?.ok_or_else(|| {
        AnonError::column(table, col, "is missing; the release does not match the original's declarations")
    })
}

/// Column `col` of every batch, `None` when the table has no such column.
pub(crate) fn optional_column(table: &str, col: &str, batches: &[RecordBatch]) -> Result<Option<Vec<ArrayRef>>> {
    let Some(first) = batches.first() else { return Ok(Some(Vec::new())) };
    if first.schema().column_with_name(col).is_none() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        let c = b.column_by_name(col).ok_or_else(|| AnonError::column(table, col, "is missing from a batch"))?;
        out.push(c.clone());
    }
    Ok(Some(out))
}

/// Values cast to Utf8 (NULL as `None`).
pub(crate) fn str_values(table: &str, col: &str, parts: &[ArrayRef]) -> Result<Vec<Option<String>>> {
    let mut out = Vec::new();
    for a in parts {
        let v = cast(a, &DataType::Utf8)
            .map_err(|_| AnonError::column(table, col, format!("has type {}, expected text", a.data_type())))?;
        let v = v.as_string::<i32>();
        out.extend((0..v.len()).map(|r| v.is_valid(r).then(|| v.value(r).to_string())));
    }
    Ok(out)
}

/// Values cast to Float64 (NULL as `None`).
pub(crate) fn f64_values(table: &str, col: &str, parts: &[ArrayRef]) -> Result<Vec<Option<f64>>> {
    primitive_values::<Float64Type>(parts, |a, _| {
        AnonError::column(table, col, format!("has type {}, expected a number", a.data_type()))
    })
}

/// Values cast to Int64 (NULL as `None`).
pub(crate) fn int_values(parts: &[ArrayRef]) -> Result<Vec<Option<i64>>> {
    primitive_values::<Int64Type>(parts, |_, e| e.into())
}

/// Values cast to `T` (NULL as `None`); `error` says why a part does not cast.
fn primitive_values<T: ArrowPrimitiveType>(
    parts: &[ArrayRef],
    error: impl Fn(&ArrayRef, ArrowError) -> AnonError,
) -> Result<Vec<Option<T::Native>>> {
    let mut out = Vec::new();
    for a in parts {
        let v = cast(a, &T::DATA_TYPE).map_err(|e| error(a, e))?;
        out.extend(v.as_primitive::<T>().iter());
    }
    Ok(out)
}
