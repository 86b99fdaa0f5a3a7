//! The options string every method takes: `key=value, key=value`.

use crate::error::{AnonError, Result};

/// Split `options` into (lower-cased key, value) pairs, naming the part that is malformed.
pub fn pairs(function: &str, options: &str) -> Result<Vec<(String, String)>> {
    options
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| {
            part.split_once('=').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())).ok_or_else(|| {
                AnonError::argument(function, "options", format!("'{part}' is not of the form key=value"))
            })
        })
        .collect()
}

/// A `seed=` value.
pub fn seed(function: &str, value: &str) -> Result<u64> {
    value.parse().map_err(|_| AnonError::argument(function, "seed", format!("'{value}' is not a non-negative integer")))
}
