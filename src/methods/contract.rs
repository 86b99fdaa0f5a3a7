//! The one contract of a publishing method: a read [`Source`](crate::encode::source::Source)
//! in, one [`Release`] out, pure of the session.
//!
//! A method reads the source's rows and declarations from the `Source` and returns what it
//! publishes: the release's rows (a plan over the source, batches built in the client, or class
//! cells), the report's cells, its side tables and the time of its passes. It looks no table up
//! by name and registers nothing. The method adapter (`sql::method`) does the rest, the same
//! for every method: reading the source, building the rows where the session's output option
//! says (memory or Parquet, `sql::output`) in a random order drawn once while they are built,
//! publishing only the metadata the engine defines, registering and memoizing.

use super::PassTimes;
use crate::encode::publish::ClassCells;
use crate::error::Result;
use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::prelude::DataFrame;
use std::sync::Arc;

/// A report cell.
pub(crate) enum Value {
    Text(String),
    /// Text that may be absent (NULL).
    OptText(Option<String>),
    Float(f64),
    Int(i64),
    OptInt(Option<i64>),
    Bool(bool),
}

/// First column of every diagnostics table (opt-in exact numbers of the original).
pub(crate) const NOT_FOR_PUBLICATION: &str = "NOT FOR PUBLICATION: exact statistics of the original data";

/// The report's `seeded` cell: whether the call was seeded, never the seed: a published seed
/// would let anyone replay the randomness (which records became counterfeits, which node was
/// drawn).
pub(crate) fn seeded(seed: Option<u64>) -> (&'static str, Value) {
    ("seeded", Value::Bool(seed.is_some()))
}

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

/// A release's rows before the adapter builds them.
pub(crate) enum Rows {
    /// A plan over the source, run where the session runs plans (a cluster's executors).
    Plan(DataFrame),
    /// Rows built in the client.
    Batches(SchemaRef, Vec<RecordBatch>),
    /// Rows expanded from class cells: in the client, or by a plan when the release is written
    /// as Parquet ([`ClassCells::expand`]).
    Classes(ClassCells),
}

/// A side table `<output>_<suffix>`.
pub(crate) enum Side {
    /// Rows built in the client, written like the release (a catalog: Parquet with Parquet
    /// output).
    Rows(SchemaRef, Vec<RecordBatch>),
    /// One row in memory (opt-in diagnostics).
    Row(Vec<(&'static str, Value)>),
    /// Rows in memory (opt-in diagnostics).
    Memory(SchemaRef, Vec<RecordBatch>),
}

/// What one call publishes.
pub(crate) struct Release {
    pub(crate) rows: Rows,
    /// The report's cells after `method` and `source`; `None`: the call has no report.
    pub(crate) report: Option<Vec<(&'static str, Value)>>,
    pub(crate) side: Vec<(&'static str, Side)>,
    /// Whether the report ends with the call's `time_ms` (and the passes', when timed): a
    /// differentially private release keeps its time out of the report.
    pub(crate) timed: bool,
    pub(crate) passes: Option<PassTimes>,
}

impl Release {
    /// A release of `rows` with its report's cells, reporting its running time.
    pub(crate) fn timed(rows: Rows, report: Vec<(&'static str, Value)>, passes: Option<PassTimes>) -> Self {
        Release { rows, report: Some(report), side: Vec::new(), timed: true, passes }
    }

    /// A release of `rows` with its report's cells, its time kept out of the report (a
    /// differentially private release keeps it in the opt-in diagnostics).
    pub(crate) fn untimed(rows: Rows, report: Vec<(&'static str, Value)>) -> Self {
        Release { rows, report: Some(report), side: Vec::new(), timed: false, passes: None }
    }

    /// A release of `rows` and nothing else (no report).
    pub(crate) fn bare(rows: Rows) -> Self {
        Release { rows, report: None, side: Vec::new(), timed: false, passes: None }
    }

    /// Add the side table `<output>_<suffix>`.
    pub(crate) fn with(mut self, suffix: &'static str, table: Side) -> Self {
        self.side.push((suffix, table));
        self
    }

    /// The report cell `name` (tests read a release without a session).
    #[cfg(test)]
    pub(crate) fn cell(&self, name: &str) -> Option<&Value> {
        self.report.iter().flatten().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// What the methods' tests read: a bundled table as a [`Source`](crate::encode::source::Source),
/// with no session.
#[cfg(test)]
pub(crate) mod testing {
    use crate::encode::source::Source;

    /// The NPS-like table (7,000 records, seed 7) with its declarations.
    pub(crate) fn nps() -> Source {
        let nps = crate::datasets::nps::nps_like(7000, 7).unwrap();
        Source::from_batches("nps", nps.batches[0].schema(), nps.batches, nps.meta).unwrap()
    }
}
