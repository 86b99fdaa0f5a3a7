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
use super::hceil::release::ClassCells;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::prelude::DataFrame;

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
