//! Tables built in code from named, typed columns: one-row reports (`<output>_report`) and the
//! small result tables of the SQL functions and the shell. A column's variant gives its Arrow
//! type and whether it is nullable, so a table's schema and data come from one list.

use super::glue::mem_table;
use crate::error::Result;
use datafusion::catalog::TableProvider;
use std::sync::Arc;

pub use crate::methods::contract::{Column, batch};
pub(crate) use crate::methods::contract::{Value, seeded};

/// [`batch`] as an in-memory table.
pub(crate) fn table<N: AsRef<str>>(columns: Vec<(N, Column)>) -> Result<Arc<dyn TableProvider>> {
    let b = batch(columns)?;
    mem_table(b.schema(), vec![b])
}

/// A one-row table with one column per (name, value), in order.
pub(crate) fn one_row(cells: Vec<(&str, Value)>) -> Result<Arc<dyn TableProvider>> {
    table(cells.into_iter().map(|(name, v)| (name, v.into())).collect())
}
