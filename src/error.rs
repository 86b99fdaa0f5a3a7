//! One error type for the whole engine. Every variant names what is at fault (argument,
//! column, attribute, file) so a user can fix the call without reading code. Messages never
//! quote a value read from a table's records (not even one missing from a hierarchy): they
//! name the column and counts, so an error cannot serve as a membership oracle.

use datafusion::error::DataFusionError;
use std::fmt;

#[derive(Debug)]
pub enum AnonError {
    /// A function argument is missing, of the wrong type or out of range.
    Argument { function: String, argument: String, message: String },
    /// A column is unknown, of the wrong type, or holds values a method cannot use.
    Column { table: String, column: String, message: String },
    /// A hierarchy is malformed or does not cover the data.
    Hierarchy { attribute: String, message: String },
    /// A file could not be read.
    Io { path: String, message: String },
    /// A table is unknown or lacks declarations it needs.
    Table { table: String, message: String },
    /// An error raised inside DataFusion while running one of our plans.
    DataFusion(Box<DataFusionError>),
    /// The user stopped the running statement (Ctrl-C in the CLI).
    Cancelled,
}

pub type Result<T, E = AnonError> = std::result::Result<T, E>;

impl AnonError {
    pub(crate) fn argument(function: &str, argument: &str, message: impl Into<String>) -> Self {
        AnonError::Argument { function: function.into(), argument: argument.into(), message: message.into() }
    }
    pub(crate) fn column(table: &str, column: &str, message: impl Into<String>) -> Self {
        AnonError::Column { table: table.into(), column: column.into(), message: message.into() }
    }
    pub(crate) fn hierarchy(attribute: &str, message: impl Into<String>) -> Self {
        AnonError::Hierarchy { attribute: attribute.into(), message: message.into() }
    }
    pub(crate) fn table(table: &str, message: impl Into<String>) -> Self {
        AnonError::Table { table: table.into(), message: message.into() }
    }
    pub(crate) fn io(path: &str, err: impl fmt::Display) -> Self {
        AnonError::Io { path: path.into(), message: err.to_string() }
    }
}

impl fmt::Display for AnonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnonError::Argument { function, argument, message } => {
                write!(f, "{function}: argument '{argument}': {message}")
            }
            AnonError::Column { table, column, message } => {
                write!(f, "column '{column}' of table '{table}': {message}")
            }
            AnonError::Hierarchy { attribute, message } => {
                write!(f, "hierarchy of attribute '{attribute}': {message}")
            }
            AnonError::Io { path, message } => write!(f, "cannot read '{path}': {message}"),
            AnonError::Table { table, message } => write!(f, "table '{table}': {message}"),
            AnonError::DataFusion(e) => write!(f, "{e}"),
            AnonError::Cancelled => write!(f, "cancelled by the user"),
        }
    }
}

impl std::error::Error for AnonError {}

/// The message a user sees for a failed statement (the CLI, the Python package). Our own errors
/// reach the user wrapped as DataFusion's `External`; that prefix ("External error: ") says
/// nothing useful, so the engine's own message (the argument or column at fault) is shown alone.
pub fn describe(e: &DataFusionError) -> String {
    match e.find_root() {
        DataFusionError::External(inner) => inner.to_string(),
        _ => e.to_string(),
    }
}

impl From<DataFusionError> for AnonError {
    fn from(e: DataFusionError) -> Self {
        // Unwrap our own errors that travelled through DataFusion so they keep their variant.
        match e {
            DataFusionError::External(inner) => match inner.downcast::<AnonError>() {
                Ok(ours) => *ours,
                Err(other) => AnonError::DataFusion(Box::new(DataFusionError::External(other))),
            },
            DataFusionError::Context(ctx, inner) => {
                let inner = AnonError::from(*inner);
                match inner {
                    AnonError::DataFusion(d) => AnonError::DataFusion(Box::new(DataFusionError::Context(ctx, d))),
                    ours => ours,
                }
            }
            other => AnonError::DataFusion(Box::new(other)),
        }
    }
}

impl From<datafusion::arrow::error::ArrowError> for AnonError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        AnonError::DataFusion(Box::new(DataFusionError::ArrowError(Box::new(e), None)))
    }
}

impl From<AnonError> for DataFusionError {
    fn from(e: AnonError) -> Self {
        match e {
            AnonError::DataFusion(inner) => *inner,
            ours => DataFusionError::External(Box::new(ours)),
        }
    }
}
