//! One-row report tables (`<output>_report`), built from named values.

use super::mem_table;
use crate::error::Result;
use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use std::sync::Arc;

/// A report cell.
pub enum Value {
    Text(String),
    /// Text that may be absent (NULL).
    OptText(Option<String>),
    Float(f64),
    Int(i64),
    OptInt(Option<i64>),
    Bool(bool),
}

/// A one-row table with one column per (name, value), in order.
pub fn one_row(cells: Vec<(&str, Value)>) -> Result<Arc<dyn TableProvider>> {
    let mut fields = Vec::with_capacity(cells.len());
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(cells.len());
    for (name, v) in cells {
        let (ty, nullable, col): (DataType, bool, ArrayRef) = match v {
            Value::Text(s) => (DataType::Utf8, false, Arc::new(StringArray::from(vec![s]))),
            Value::OptText(s) => (DataType::Utf8, true, Arc::new(StringArray::from(vec![s]))),
            Value::Float(x) => (DataType::Float64, false, Arc::new(Float64Array::from(vec![x]))),
            Value::Int(x) => (DataType::Int64, false, Arc::new(Int64Array::from(vec![x]))),
            Value::OptInt(x) => (DataType::Int64, true, Arc::new(Int64Array::from(vec![x]))),
            Value::Bool(x) => (DataType::Boolean, false, Arc::new(BooleanArray::from(vec![x]))),
        };
        fields.push(Field::new(name, ty, nullable));
        cols.push(col);
    }
    let schema = Arc::new(Schema::new(fields));
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
