//! Arrow between the engine and Python through the Arrow PyCapsule interface: a result leaves
//! as an `ArrowArrayStream` over the engine's own batches, and a registered table arrives as
//! one. Buffers are shared both ways; nothing is copied or serialized.

use crate::Error;
use anonfusion::datafusion::arrow::array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use anonfusion::datafusion::arrow::datatypes::SchemaRef;
use anonfusion::datafusion::arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use anonfusion::datafusion::arrow::util::pretty::pretty_format_batches_with_schema;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use std::ffi::CStr;

/// The capsule name the PyCapsule interface fixes for a stream.
const STREAM: &CStr = c"arrow_array_stream";

/// Rows `repr()` shows; the rest is counted.
const REPR_ROWS: usize = 10;

/// The result of a statement: its schema and batches, held by the engine until Python reads
/// them (`to_arrow`, `to_pandas`, `to_polars`, or any reader of `__arrow_c_stream__`).
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
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        // The capsule owns the stream; its destructor releases it unless a reader moved it out.
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(Box::new(reader)), STREAM)
    }

    /// A `pyarrow.Table` sharing the result's buffers.
    fn to_arrow<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = import_module(slf.py(), "pyarrow", "to_arrow()")?;
        pyarrow.call_method1("table", (slf,))
    }

    /// A pandas DataFrame (through pyarrow; numeric columns without nulls are not copied).
    fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        import_module(slf.py(), "pandas", "to_pandas()")?;
        Self::to_arrow(slf)?.call_method0("to_pandas")
    }

    /// A Polars DataFrame sharing the result's buffers where Polars' types allow.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let polars = import_module(slf.py(), "polars", "to_polars()")?;
        polars.call_method1("from_arrow", (Self::to_arrow(slf)?,))
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
        let table = pretty_format_batches_with_schema(self.schema.clone(), &shown)
            .map_err(|e| Error::new_err(e.to_string()))?;
        let rows = self.rows();
        let more = if rows > REPR_ROWS { format!(" ({REPR_ROWS} shown)") } else { String::new() };
        Ok(format!("{table}\n{rows} row{}{more}", if rows == 1 { "" } else { "s" }))
    }
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
    let reader = unsafe { ArrowArrayStreamReader::from_raw(ptr.as_ptr().cast()) }
        .map_err(|e| Error::new_err(format!("cannot read the Arrow stream: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::new_err(format!("cannot read the Arrow stream: {e}")))?;
    Ok((schema, batches))
}

/// An optional Python dependency, or an ImportError saying what needs it.
pub fn import_module<'py>(py: Python<'py>, name: &str, needed_by: &str) -> PyResult<Bound<'py, PyModule>> {
    PyModule::import(py, name)
        .map_err(|e| PyImportError::new_err(format!("{needed_by} needs the Python package {name} ({e})")))
}
