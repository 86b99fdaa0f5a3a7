//! Arrow between the engine and Python through the Arrow PyCapsule interface: a result leaves
//! as an `ArrowArrayStream` over the engine's own batches, and a registered table arrives as
//! one. Buffers are shared both ways; nothing is copied or serialized.

use crate::errors::{Error, engine_error};
use crate::wait::runtime;
use anonfusion::datafusion::arrow::array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use anonfusion::datafusion::arrow::datatypes::SchemaRef;
use anonfusion::datafusion::arrow::error::ArrowError;
use anonfusion::datafusion::arrow::ffi::FFI_ArrowSchema;
use anonfusion::datafusion::arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use anonfusion::datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use anonfusion::datafusion::arrow::util::pretty::pretty_format_batches_with_schema;
use anonfusion::datafusion::error::DataFusionError;
use anonfusion::datafusion::execution::SendableRecordBatchStream;
use anonfusion::error::describe;
use anonfusion::eval::plot::escape;
use futures::StreamExt;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use std::ffi::CStr;
use std::fmt::Write;
use std::sync::Mutex;

/// The capsule names the PyCapsule interface fixes.
const STREAM: &CStr = c"arrow_array_stream";
const SCHEMA: &CStr = c"arrow_schema";

/// Rows `repr()` and `_repr_html_()` show; the rest is counted.
const REPR_ROWS: usize = 10;

/// The result of a statement: its schema and batches, held by the engine until Python reads
/// them (any reader of `__arrow_c_stream__`; `anonfusion.Relation` wraps this).
#[pyclass(module = "anonfusion._anonfusion", frozen)]
pub struct Relation {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl Relation {
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Self {
        Relation { schema, batches }
    }

    fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The first [`REPR_ROWS`] rows.
    fn head(&self) -> Vec<RecordBatch> {
        let mut shown = Vec::new();
        let mut left = REPR_ROWS;
        for batch in &self.batches {
            if left == 0 {
                break;
            }
            let take = left.min(batch.num_rows());
            shown.push(batch.slice(0, take));
            left -= take;
        }
        shown
    }

    /// "3 rows", "1 row", "25 rows (10 shown)".
    fn count_line(&self) -> String {
        let rows = self.rows();
        let more = if rows > REPR_ROWS { format!(" ({REPR_ROWS} shown)") } else { String::new() };
        format!("{rows} row{}{more}", if rows == 1 { "" } else { "s" })
    }
}

#[pymethods]
impl Relation {
    /// The Arrow PyCapsule interface: a stream over the result's batches. A requested schema
    /// is not applied (the interface lets a producer decline); readers cast if they must.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        stream_capsule(py, Box::new(RecordBatchIterator::new(batches, self.schema.clone())))
    }

    /// The result's schema through the PyCapsule interface (`pyarrow.schema(rel)`).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    fn __len__(&self) -> usize {
        self.rows()
    }

    fn __repr__(&self) -> PyResult<String> {
        let table = pretty_format_batches_with_schema(self.schema.clone(), &self.head()).map_err(arrow_error)?;
        Ok(format!("{table}\n{}", self.count_line()))
    }

    /// An HTML table of the first rows, for Jupyter; every name and value is escaped.
    fn _repr_html_(&self) -> PyResult<String> {
        let options = FormatOptions::default().with_null("NULL");
        let mut html = String::from("<table>\n<thead><tr>");
        for field in self.schema.fields() {
            let _ = write!(html, "<th>{}</th>", escape(field.name()));
        }
        html.push_str("</tr></thead>\n<tbody>\n");
        for batch in self.head() {
            let formatters = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .map_err(arrow_error)?;
            for row in 0..batch.num_rows() {
                html.push_str("<tr>");
                for f in &formatters {
                    let _ = write!(html, "<td>{}</td>", escape(&f.value(row).to_string()));
                }
                html.push_str("</tr>\n");
            }
        }
        let _ = write!(html, "</tbody>\n</table>\n<p>{}</p>", self.count_line());
        Ok(html)
    }
}

/// A statement's result computed batch by batch as it is read (`Session.stream`): one
/// `__arrow_c_stream__` export, whose reader runs the plan on the engine's runtime.
#[pyclass(module = "anonfusion._anonfusion", frozen)]
pub struct Stream {
    schema: SchemaRef,
    stream: Mutex<Option<SendableRecordBatchStream>>,
}

impl Stream {
    pub fn new(stream: SendableRecordBatchStream) -> Self {
        Stream { schema: stream.schema(), stream: Mutex::new(Some(stream)) }
    }
}

#[pymethods]
impl Stream {
    /// The Arrow PyCapsule interface. A stream is read once: a second export is an error.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let stream = self
            .stream
            .lock()
            .expect("stream lock")
            .take()
            .ok_or_else(|| Error::new_err("this stream has already been read; run the statement again"))?;
        stream_capsule(py, Box::new(Lazy { schema: self.schema.clone(), stream }))
    }

    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }
}

/// A plan's stream as a blocking reader: each `next` computes one batch on the runtime. An
/// error computing a batch (a cast that fails on a cell) reaches Python through the Arrow C
/// stream, not as an exception of ours, so it is scrubbed here ([`describe`]) like every
/// other message: DataFusion's own quotes the cell.
struct Lazy {
    schema: SchemaRef,
    stream: SendableRecordBatchStream,
}

impl Iterator for Lazy {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = runtime().block_on(self.stream.next())?;
        Some(next.map_err(|e| ArrowError::ExternalError(describe(&e).into())))
    }
}

impl RecordBatchReader for Lazy {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// An Arrow error as the exception of its kind, its message scrubbed as every engine error is.
fn arrow_error(e: ArrowError) -> PyErr {
    engine_error(DataFusionError::ArrowError(Box::new(e), None))
}

/// A capsule owning an Arrow C stream over `reader`; its destructor releases the stream unless
/// a reader moved it out.
fn stream_capsule<'py>(py: Python<'py>, reader: Box<dyn RecordBatchReader + Send>) -> PyResult<Bound<'py, PyCapsule>> {
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), STREAM)
}

fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(arrow_error)?;
    PyCapsule::new_with_value(py, ffi, SCHEMA)
}

/// Read a whole Arrow C stream from `obj.__arrow_c_stream__()`. The batches keep the producer's
/// buffers alive (the stream's release callbacks free them when the engine drops them).
pub fn import(obj: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>()?;
    let ptr = capsule.pointer_checked(Some(STREAM))?;
    // SAFETY: the capsule is named "arrow_array_stream", so by the PyCapsule interface it
    // points to an ArrowArrayStream; `from_raw` moves it out and marks the original released,
    // so the capsule's destructor does not release it again.
    let unreadable = |e: ArrowError| {
        Error::new_err(format!("cannot read the Arrow stream: {}", describe(&DataFusionError::from(e))))
    };
    let reader = unsafe { ArrowArrayStreamReader::from_raw(ptr.as_ptr().cast()) }.map_err(unreadable)?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(unreadable)?;
    Ok((schema, batches))
}

/// An optional Python dependency, or an ImportError saying what needs it.
pub fn import_module<'py>(py: Python<'py>, name: &str, needed_by: &str) -> PyResult<Bound<'py, PyModule>> {
    PyModule::import(py, name)
        .map_err(|e| PyImportError::new_err(format!("{needed_by} needs the Python package {name} ({e})")))
}
