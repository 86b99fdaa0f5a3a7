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
    /// The user stopped a differentially private call after it had drawn noise: nothing is
    /// published, and its privacy budget is charged (docs/dp.md, "Cancelling a release").
    CancelledAfterNoise,
    /// A DataFusion, Arrow or Parquet error whose message quoted a record's value, as
    /// [`scrub`] left it.
    Scrubbed(String),
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
            AnonError::CancelledAfterNoise => write!(
                f,
                "cancelled by the user after noise was drawn: nothing was published, and the privacy budget \
                 is charged (anon_privacy_ledger)"
            ),
            AnonError::Scrubbed(message) => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for AnonError {}

/// The message a user sees for a failed statement (the CLI, the Python package). Our own errors
/// reach the user wrapped as DataFusion's `External`; that prefix ("External error: ") says
/// nothing useful, so the engine's own message (the argument or column at fault) is shown alone.
/// Every message goes through [`scrub`].
pub fn describe(e: &DataFusionError) -> String {
    match e.find_root() {
        DataFusionError::External(inner) => scrub(&inner.to_string()),
        _ => scrub(&e.to_string()),
    }
}

/// `e` with any value of a record removed from its message ([`scrub`]); unchanged when there
/// was none, so our own errors keep their variant. Every table function's error passes here
/// ([`crate::sql`] wraps them all), so embedders see the same message as the CLI.
pub fn scrubbed(e: DataFusionError) -> DataFusionError {
    let text = e.to_string();
    let clean = scrub(&text);
    if clean == text { e } else { DataFusionError::External(Box::new(AnonError::Scrubbed(clean))) }
}

/// What opens the part of a message that Arrow, Parquet or DataFusion wrote while reading,
/// casting or parsing records: from there on it may quote a cell (a CSV parser error quotes the
/// value and the whole row; a cast quotes the string it could not cast).
const DATA_ERRORS: &[&str] = &[
    "Parser error:",
    "Cast error:",
    "Compute error:",
    "Arithmetic overflow:",
    "Invalid argument error:",
    "Csv error:",
    "Json error:",
    "Parquet error:",
    "Execution error:",
];

/// Arrow's messages that name a value without quotes: the value runs from the prefix to the
/// first of the words that follow it in the message's template (or the line's end).
const UNQUOTED: &[&str] = &[
    "Overflowing on ",
    "Can't cast value ",
    "can't parse the string value ",
    "Failed to parse ",
    "Cannot parse decimal format: ",
    "parse decimal overflow (",
    "Unknown interval type: ",
    "Invalid input syntax for type interval: ",
    "Cannot cast Date64 value ",
    "Overflow converting ",
    "Cannot convert ",
    "Failed to convert ",
    "Unable to represent ",
];
const UNQUOTED_END: &[&str] = &[" to ", " as ", " is ", " exceeds ", ". ", ": ", ")", "\n"];

/// What stands for a removed value.
const HIDDEN: &str = "<value not shown>";

/// The one scrubber: `message` without any value a table's records could have put in it, and
/// with what says where the fault is (the column, the line, the type, our own context before
/// DataFusion's message). Our own messages never quote a record's value (they name columns and
/// counts); DataFusion's, Arrow's and Parquet's data errors do, so from the first of
/// [`DATA_ERRORS`] on: the CSV parser's `Row data: '[...]'` is cut, every quoted text that is
/// not a data type is replaced, and so are the unquoted values of [`UNQUOTED`].
pub fn scrub(message: &str) -> String {
    let Some(start) = DATA_ERRORS.iter().filter_map(|p| message.find(p)).min() else {
        return message.to_string();
    };
    let (ours, theirs) = message.split_at(start);
    let mut tail = theirs.to_string();
    // The CSV parser's row: everything from "Row data:" to the end of its line.
    while let Some(i) = tail.find("Row data:") {
        let end = tail[i..].find('\n').map_or(tail.len(), |n| i + n);
        tail.replace_range(i..end, "(row not shown)");
    }
    tail = hide_quoted(&tail);
    for prefix in UNQUOTED {
        let mut from = 0;
        while let Some(i) = tail[from..].find(prefix).map(|i| from + i + prefix.len()) {
            let rest = &tail[i..];
            let end = UNQUOTED_END.iter().filter_map(|e| rest.find(e)).min().unwrap_or(rest.len());
            if end > 0 && !rest[..end].starts_with(HIDDEN) {
                tail.replace_range(i..i + end, HIDDEN);
            }
            // Past what was just looked at (a char boundary either way).
            from = if tail[i..].starts_with(HIDDEN) { i + HIDDEN.len() } else { i };
        }
    }
    format!("{ours}{tail}")
}

/// Every `'...'` or `"..."` span of `text` replaced by [`HIDDEN`], except one that names a data
/// type (`as type 'Int32'`). The apostrophe of an English "n't" (`doesn't`, `can't`) opens
/// and closes nothing: DataFusion's "Table 'out' doesn't exist." paired the quote after `out`
/// with the one in `doesn't` and came out as "Table <value not shown>t exist." (only that
/// pattern: a quote after any letter may be a value's opening one). A value with a quote in
/// it (`O'Brien`) can split into spans, so the text between the first and the last quote of a
/// run of non-type spans goes as a whole.
fn hide_quoted(text: &str) -> String {
    let is_type = |s: &str| s.parse::<datafusion::arrow::datatypes::DataType>().is_ok();
    let bytes = text.as_bytes();
    let contraction = |i: usize| {
        i > 0
            && bytes[i - 1] == b'n'
            && bytes.get(i + 1) == Some(&b't')
            && !bytes.get(i + 2).is_some_and(u8::is_ascii_alphanumeric)
    };
    let quotes: Vec<usize> =
        text.char_indices().filter(|&(i, c)| c == '"' || (c == '\'' && !contraction(i))).map(|(i, _)| i).collect();
    // Pair quotes left to right; a span that is a type ends a run of hidden spans.
    let mut hidden: Vec<(usize, usize)> = Vec::new();
    let mut k = 0;
    while k + 1 < quotes.len() {
        let (a, b) = (quotes[k], quotes[k + 1]);
        if is_type(&text[a + 1..b]) {
            k += 2;
            continue;
        }
        // Extend over the following spans up to the next type span (or the last quote).
        let mut end = b;
        let mut m = k + 2;
        while m + 1 < quotes.len() && !is_type(&text[quotes[m] + 1..quotes[m + 1]]) {
            end = quotes[m + 1];
            m += 2;
        }
        if m < quotes.len() && m + 1 >= quotes.len() {
            // An odd quote left over belongs to a value.
            end = quotes[m];
            m += 1;
        }
        hidden.push((a, end));
        k = m;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, b) in hidden {
        out.push_str(&text[at..a]);
        out.push_str(HIDDEN);
        at = b + 1;
    }
    out.push_str(&text[at..]);
    out
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
