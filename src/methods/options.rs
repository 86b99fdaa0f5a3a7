//! The options string every method takes: `key=value, key=value`.

use crate::error::{AnonError, Result};

/// Split `options` into (lower-cased key, value) pairs, naming the part that is malformed. A
/// key given twice (`seed=1, seed=2`) is an error rather than a silent last-one-wins.
pub(crate) fn pairs(function: &str, options: &str) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in options.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            AnonError::argument(function, "options", format!("'{part}' is not of the form key=value"))
        })?;
        let key = k.trim().to_ascii_lowercase();
        if out.iter().any(|(seen, _)| *seen == key) {
            return Err(AnonError::argument(function, "options", format!("option '{key}' is given more than once")));
        }
        out.push((key, v.trim().to_string()));
    }
    Ok(out)
}

/// A `seed=` value.
pub(crate) fn seed(function: &str, value: &str) -> Result<u64> {
    value.parse().map_err(|_| AnonError::argument(function, "seed", format!("'{value}' is not a non-negative integer")))
}

/// A `true|false` option: those two words only, so `yes`, `1` or a typo is an error rather
/// than a guess (a `diagnostics=` read wrongly registers exact, unpublishable tables).
pub(crate) fn flag(function: &str, key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(AnonError::argument(function, key, format!("'{value}' is not true or false"))),
    }
}
