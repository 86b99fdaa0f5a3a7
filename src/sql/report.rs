//! Tables built in code from named, typed columns: one-row reports (`<output>_report`) and the
//! small result tables of the SQL functions and the shell. A column's variant gives its Arrow
//! type and whether it is nullable, so a table's schema and data come from one list.

use super::glue::mem_table;
use crate::error::Result;
use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use std::sync::Arc;


pub(crate) use crate::methods::contract::{NOT_FOR_PUBLICATION, Value, seeded};

/// A column's values; the `Opt` variants are nullable.
pub enum Column {
    Text(Vec<String>),
    OptText(Vec<Option<String>>),
    Float(Vec<f64>),
    OptFloat(Vec<Option<f64>>),
    Int(Vec<i64>),
    OptInt(Vec<Option<i64>>),
    Bool(Vec<bool>),
}

impl Column {
    fn field_and_array(self, name: &str) -> (Field, ArrayRef) {
        let (ty, nullable, array): (DataType, bool, ArrayRef) = match self {
            Column::Text(v) => (DataType::Utf8, false, Arc::new(StringArray::from(v))),
            Column::OptText(v) => (DataType::Utf8, true, Arc::new(StringArray::from(v))),
            Column::Float(v) => (DataType::Float64, false, Arc::new(Float64Array::from(v))),
            Column::OptFloat(v) => (DataType::Float64, true, Arc::new(Float64Array::from(v))),
            Column::Int(v) => (DataType::Int64, false, Arc::new(Int64Array::from(v))),
            Column::OptInt(v) => (DataType::Int64, true, Arc::new(Int64Array::from(v))),
            Column::Bool(v) => (DataType::Boolean, false, Arc::new(BooleanArray::from(v))),
        };
        (Field::new(name, ty, nullable), array)
    }
}

impl From<Value> for Column {
    fn from(v: Value) -> Column {
        match v {
            Value::Text(s) => Column::Text(vec![s]),
            Value::OptText(s) => Column::OptText(vec![s]),
            Value::Float(x) => Column::Float(vec![x]),
            Value::Int(x) => Column::Int(vec![x]),
            Value::OptInt(x) => Column::OptInt(vec![x]),
            Value::Bool(x) => Column::Bool(vec![x]),
        }
    }
}

/// A batch with one column per (name, values), in order (all of the same length).
pub fn batch<N: AsRef<str>>(columns: Vec<(N, Column)>) -> Result<RecordBatch> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) =
        columns.into_iter().map(|(name, c)| c.field_and_array(name.as_ref())).unzip();
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

/// [`batch`] as an in-memory table.
pub(crate) fn table<N: AsRef<str>>(columns: Vec<(N, Column)>) -> Result<Arc<dyn TableProvider>> {
    let b = batch(columns)?;
    mem_table(b.schema(), vec![b])
}

/// A one-row table with one column per (name, value), in order.
pub(crate) fn one_row(cells: Vec<(&str, Value)>) -> Result<Arc<dyn TableProvider>> {
    table(cells.into_iter().map(|(name, v)| (name, v.into())).collect())
}
