//! `anonfusion._anonfusion`: the engine's session for Python. Nothing here reimplements the
//! engine: a [`Session`] is the CLI's session (same registry, table functions and ledger), a
//! statement's result is handed to Python as Arrow C data (no copies), and a table given to
//! [`Session::register`] is read the same way. The pure-Python package `anonfusion` wraps
//! these classes (conversions, display) and defines the exception classes (`anonfusion._errors`).

mod arrow_stream;
mod errors;
mod params;
mod progress;
mod wait;

use anonfusion::datafusion::dataframe::DataFrame;
use anonfusion::datafusion::error::Result as DfResult;
use anonfusion::datafusion::prelude::SessionContext;
use anonfusion::dp::ledger::Ledger;
use anonfusion::sql::mem_table;
use arrow_stream::{Relation, Stream};
use errors::{Error, TableError, engine_error};
use progress::StderrBar;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A session of the engine: the SQL of the command-line tool, every table function, the
/// registry of roles and hierarchies, and the privacy ledger.
#[pyclass(module = "anonfusion._anonfusion", frozen)]
struct Session {
    ctx: SessionContext,
    bar: Arc<StderrBar>,
    calls: wait::Calls,
    closed: AtomicBool,
}

/// Plan one statement as the CLI does, with its parameters bound. Table functions run here
/// (at planning), so `planned` is raised once their effects have happened: an interrupt after
/// that cannot undo them ([`wait`]).
async fn plan(
    ctx: SessionContext,
    query: String,
    params: Option<params::Values>,
    planned: Arc<AtomicBool>,
) -> DfResult<DataFrame> {
    // Through sql::run, as the CLI: a plain EXPLAIN plans without publishing or charging.
    let df = anonfusion::sql::run(&ctx, &query).await?;
    planned.store(true, Ordering::SeqCst);
    match params {
        Some(values) => df.with_param_values(values),
        None => Ok(df),
    }
}

impl Session {
    /// The session, unless [`Session::close`] was called.
    fn open(&self) -> PyResult<SessionContext> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::new_err("the session is closed; start a new anonfusion.Session()"));
        }
        Ok(self.ctx.clone())
    }

    /// The session's default schema, where `register` and the table functions put tables.
    fn schema(&self) -> PyResult<Arc<dyn anonfusion::datafusion::catalog::SchemaProvider>> {
        let state = self.ctx.state();
        let options = &state.config().options().catalog;
        self.ctx
            .catalog(&options.default_catalog)
            .and_then(|c| c.schema(&options.default_schema))
            .ok_or_else(|| Error::new_err("the session has no default schema"))
    }
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
            None => Ledger::standard().map_err(|e| errors::ArgumentError::new_err(e.to_string()))?,
        };
        let (ctx, registry) = anonfusion::session_with_ledger(ledger);
        let bar = Arc::new(StderrBar::new(progress));
        registry.set_progress(bar.clone());
        Ok(Session { ctx, bar, calls: wait::Calls::default(), closed: AtomicBool::new(false) })
    }

    /// Run one SQL statement and return its whole result (a table function's outputs are
    /// registered in the session when this returns). `params` binds `$1, $2, ...` (a sequence)
    /// or `$name` (a mapping) as typed values through DataFusion, never by editing the text.
    /// Ctrl-C cancels the statement, waits for it to stop, then raises KeyboardInterrupt.
    #[pyo3(signature = (query, params = None))]
    fn sql(&self, py: Python<'_>, query: &str, params: Option<&Bound<'_, PyAny>>) -> PyResult<Relation> {
        let (ctx, query, params) = (self.open()?, query.to_string(), params.map(params::values).transpose()?);
        let _showing = self.bar.show();
        let (schema, batches) = self.calls.run(py, &self.bar.cancel, move |planned| async move {
            let df = plan(ctx, query, params, planned).await?;
            let schema = df.schema().inner().clone();
            Ok((schema, df.collect().await?))
        })?;
        Ok(Relation::new(schema, batches))
    }

    /// As [`Session::sql`], but the result is a stream computed batch by batch as it is read
    /// (the statement is planned now: a table function runs and registers its outputs here).
    #[pyo3(signature = (query, params = None))]
    fn stream(&self, py: Python<'_>, query: &str, params: Option<&Bound<'_, PyAny>>) -> PyResult<Stream> {
        let (ctx, query, params) = (self.open()?, query.to_string(), params.map(params::values).transpose()?);
        let _showing = self.bar.show();
        let batches = self.calls.run(py, &self.bar.cancel, move |planned| async move {
            plan(ctx, query, params, planned).await?.execute_stream().await
        })?;
        Ok(Stream::new(batches))
    }

    /// Register `data` as table `name`: a pandas or Polars DataFrame, a pyarrow Table or
    /// RecordBatchReader, or any object with `__arrow_c_stream__`. Arrow data is shared, not
    /// copied (pandas goes through `pyarrow.Table.from_pandas`, which converts what pandas
    /// does not hold as Arrow). An existing table of that name is an error: nothing is replaced.
    fn register(&self, py: Python<'_>, name: &str, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let ctx = self.open()?;
        if ctx.table_exist(name).map_err(engine_error)? {
            return Err(TableError::new_err(format!(
                "table '{name}' already exists; drop it first (DROP TABLE {name}) or choose another name"
            )));
        }
        let stream = arrow_stream_of(py, data)?;
        let (schema, batches) = arrow_stream::import(&stream)?;
        let table = mem_table(schema, batches).map_err(|e| Error::new_err(e.to_string()))?;
        ctx.register_table(name, table).map_err(engine_error)?;
        Ok(())
    }

    /// Remove table `name` from the session, as `DROP TABLE name` does (its declarations stay
    /// with the name, as after DROP TABLE). An unknown name is an error.
    fn deregister(&self, name: &str) -> PyResult<()> {
        match self.open()?.deregister_table(name).map_err(engine_error)? {
            Some(_) => Ok(()),
            None => Err(TableError::new_err(format!("table '{name}': not found"))),
        }
    }

    /// The names of the session's tables (the originals, releases, side tables and system
    /// views such as `anon_roles`), sorted.
    fn tables(&self) -> PyResult<Vec<String>> {
        self.open()?;
        let mut names = self.schema()?.table_names();
        names.sort();
        Ok(names)
    }

    /// Drop every table and refuse further statements; waits for an interrupted statement
    /// that is still stopping. The ledger file is kept (it is the privacy budgets' record).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.calls.finish_interrupted(py)?;
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let schema = self.schema()?;
        for name in schema.table_names() {
            schema.deregister_table(&name).map_err(engine_error)?;
        }
        Ok(())
    }

    /// Whether [`Session::close`] was called.
    #[getter]
    fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
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
    m.add_class::<Stream>()?;
    // One version for the crate and the Python package (pyproject.toml takes it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
