//! SQL parameters from Python: `sql(q, [a, b])` binds `$1, $2`, `sql(q, {"n": 5})` binds `$n`.
//! Values become DataFusion scalars and are bound by DataFusion (`DataFrame::with_param_values`)
//! in the planned statement, never spliced into its text, so a value cannot change the SQL.

use anonfusion::datafusion::common::ParamValues;
use anonfusion::datafusion::scalar::ScalarValue;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString};
use std::collections::HashMap;

pub type Values = ParamValues;

/// `params`: a sequence (positional, `$1` first) or a mapping of names (with or without the
/// leading `$`) to values.
pub fn values(params: &Bound<'_, PyAny>) -> PyResult<ParamValues> {
    if let Ok(map) = params.cast::<PyDict>() {
        let mut named = HashMap::new();
        for (key, value) in map.iter() {
            let key: String = key.extract().map_err(|_| PyTypeError::new_err("parameter names must be strings"))?;
            let name = key.strip_prefix('$').unwrap_or(&key).to_string();
            named.insert(name.clone(), scalar(&format!("${name}"), &value)?.into());
        }
        return Ok(ParamValues::Map(named));
    }
    if params.is_instance_of::<PyString>() || params.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("params must be a sequence or a mapping of values, not a string"));
    }
    let mut list = Vec::new();
    for (i, value) in params.try_iter()?.enumerate() {
        list.push(scalar(&format!("${}", i + 1), &value?)?);
    }
    Ok(list.into())
}

/// One value as a scalar: None, bool, int (64-bit), float, str or bytes.
fn scalar(name: &str, value: &Bound<'_, PyAny>) -> PyResult<ScalarValue> {
    if value.is_none() {
        return Ok(ScalarValue::Null);
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(ScalarValue::Boolean(Some(value.extract()?)));
    }
    if value.is_instance_of::<PyInt>() {
        return value
            .extract::<i64>()
            .map(|v| ScalarValue::Int64(Some(v)))
            .map_err(|_| PyTypeError::new_err(format!("parameter {name}: an integer outside the 64-bit range")));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(ScalarValue::Float64(Some(value.extract()?)));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(ScalarValue::Utf8(Some(value.extract()?)));
    }
    if value.is_instance_of::<PyBytes>() {
        return Ok(ScalarValue::Binary(Some(value.extract()?)));
    }
    Err(PyTypeError::new_err(format!(
        "parameter {name}: a {} cannot be bound; pass None, bool, int, float, str or bytes",
        value.get_type().name()?
    )))
}
