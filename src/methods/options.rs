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

/// A declared `a|b|c` list (`values=`, `extra_codes=`), split and checked with [`check_values`].
pub(crate) fn values(function: &str, key: &str, text: &str) -> Result<Vec<String>> {
    let values: Vec<String> = text.split('|').map(|v| v.trim().to_string()).collect();
    check_values(function, key, &values)?;
    Ok(values)
}

/// A declared domain's values must be distinct and non-empty (and at least one).
pub(crate) fn check_values(function: &str, key: &str, values: &[String]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    if values.is_empty() || values.iter().any(|v| v.is_empty() || !seen.insert(v.as_str())) {
        return Err(AnonError::argument(function, key, "needs distinct, non-empty values separated by '|'"));
    }
    Ok(())
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
