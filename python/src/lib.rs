//! `anonfusion._anonfusion`: the engine's session for Python. Nothing here reimplements the
//! engine: a [`Session`] is the CLI's session (same registry, table functions and ledger), a
//! statement's result is handed to Python as Arrow C data (no copies), and a table given to
//! [`Session::register`] is read the same way.

mod arrow_stream;
mod progress;
mod wait;

use anonfusion::datafusion::prelude::SessionContext;
use anonfusion::dp::ledger::Ledger;
use anonfusion::sql::mem_table;
use arrow_stream::Relation;
use progress::StderrBar;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

create_exception!(
    _anonfusion,
    Error,
    PyException,
    "A statement the engine refused or that failed; the message names the argument, column or \
     table at fault, as the command-line tool prints it."
);

/// The engine's message for a DataFusion error, as a Python `anonfusion.Error`.
pub(crate) fn engine_error(e: anonfusion::datafusion::error::DataFusionError) -> PyErr {
    Error::new_err(anonfusion::error::describe(&e))
}

/// A session of the engine: the SQL of the command-line tool, every table function, the
/// registry of roles and hierarchies, and the privacy ledger.
#[pyclass(module = "anonfusion._anonfusion", frozen)]
struct Session {
    ctx: SessionContext,
    bar: Arc<StderrBar>,
    calls: wait::Calls,
}

#[pymethods]
impl Session {
    /// `ledger`: the file that keeps privacy budgets across sessions; by default the CLI's
    /// (`$ANONFUSION_LEDGER` or the user's data directory), so a notebook and the CLI spend from
    /// one budget. `progress=False` hides the progress bars of long searches.
    #[new]
    #[pyo3(signature = (ledger = None, progress = true))]
    fn new(ledger: Option<PathBuf>, progress: bool) -> PyResult<Self> {
        let ledger = match ledger {
            Some(path) => Ledger::open(path),
            None => Ledger::standard().map_err(|e| Error::new_err(e.to_string()))?,
        };
        let (ctx, registry) = anonfusion::session_with_ledger(ledger);
        let bar = Arc::new(StderrBar::new(progress));
        registry.set_progress(bar.clone());
        Ok(Session { ctx, bar, calls: wait::Calls::default() })
    }

    /// Run one SQL statement and return its result (a table function's outputs are registered
    /// in the session when this returns). Ctrl-C interrupts the wait with KeyboardInterrupt.
    fn sql(&self, py: Python<'_>, query: &str) -> PyResult<Relation> {
        let ctx = self.ctx.clone();
        let query = query.to_string();
        let _showing = self.bar.show();
        let (schema, batches) = self.calls.run(py, &self.bar.cancel, async move {
            // Through sql::run, as the CLI: a plain EXPLAIN plans without publishing or charging.
            let df = anonfusion::sql::run(&ctx, &query).await?;
            let schema = df.schema().inner().clone();
            let batches = df.collect().await?;
            Ok((schema, batches))
        })?;
        Ok(Relation::new(schema, batches))
    }

    /// Register `data` as table `name`: a pandas or Polars DataFrame, a pyarrow Table or
    /// RecordBatchReader, or any object with `__arrow_c_stream__`. Arrow data is shared, not
    /// copied (pandas goes through `pyarrow.Table.from_pandas`, which converts what pandas
    /// does not hold as Arrow). An existing table of that name is an error: nothing is replaced.
    fn register(&self, py: Python<'_>, name: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.ctx.table_exist(name).map_err(engine_error)? {
            return Err(Error::new_err(format!(
                "table '{name}' already exists; drop it first (DROP TABLE {name}) or choose another name"
            )));
        }
        let stream = arrow_stream_of(py, data)?;
        let (schema, batches) = arrow_stream::import(&stream)?;
        let table = mem_table(schema, batches).map_err(|e| Error::new_err(e.to_string()))?;
        self.ctx.register_table(name, table).map_err(engine_error)?;
        Ok(())
    }
}

/// The object to read an Arrow C stream from: pandas frames through pyarrow (without their
/// index), everything else as it is, or through its `to_arrow()`.
fn arrow_stream_of<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let module: String = data.get_type().module()?.extract()?;
    if module.split('.').next() == Some("pandas") {
        let pyarrow = arrow_stream::import_module(py, "pyarrow", "register a pandas DataFrame")?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("preserve_index", false)?;
        return pyarrow.getattr("Table")?.call_method("from_pandas", (data,), Some(&kwargs));
    }
    if data.hasattr("__arrow_c_stream__")? {
        return Ok(data.clone());
    }
    if data.hasattr("to_arrow")? {
        return data.call_method0("to_arrow");
    }
    Err(PyTypeError::new_err(format!(
        "register() takes a pandas or Polars DataFrame, a pyarrow Table or an object with \
         __arrow_c_stream__, not {}",
        data.get_type().name()?
    )))
}

#[pymodule]
fn _anonfusion(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Session>()?;
    m.add_class::<Relation>()?;
    m.add("Error", m.py().get_type::<Error>())?;
    Ok(())
}
