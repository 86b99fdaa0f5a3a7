//! The catalog's weights per decoded row: the h-ceiling paper's Fig. 4 on a decoded release,
//! through the one reader and weighting of [`crate::release::catalog`] (which the query harness
//! uses too).

use super::decode::Decoded;
use crate::error::{AnonError, Result};
use crate::release::catalog::{CatalogRow, ClassValueCounts, real_probabilities};

/// Probability that each released record (per decoded row) is real (h-ceiling paper, Fig. 4;
/// the rule, with its edge cases, in [`crate::release::catalog`]): every record the catalog
/// does not name is real. Errors when the catalog does not fit the release.
pub fn real_weights(rel: &Decoded, catalog: &[CatalogRow], catalog_name: &str) -> Result<Vec<f64>> {
    if catalog.is_empty() {
        return Ok(vec![1.0; rel.len()]);
    }
    let ids = rel.class_ids.as_ref().ok_or_else(|| {
        AnonError::column(
            &rel.name,
            "class_id",
            "is missing, but a catalog refers to class ids; pass the catalog of this release",
        )
    })?;
    let sens = rel.sensitive.as_ref().ok_or_else(|| {
        AnonError::table(&rel.name, "has no sensitive attribute declared, but a catalog lists sensitive values")
    })?;
    // A suppressed record's value is withheld: it is no value a catalog can name.
    let value = |r: usize| sens.values.get(sens.codes[r] as usize).cloned().unwrap_or_default();
    let mut counts = ClassValueCounts::new();
    for (r, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            *counts.entry((*id, value(r))).or_default() += rel.weights[r];
        }
    }
    let real = real_probabilities(catalog, &counts, (catalog_name, &rel.name))?;
    Ok(ids
        .iter()
        .enumerate()
        .map(|(r, id)| id.and_then(|id| real.get(&(id, value(r))).copied()).unwrap_or(1.0))
        .collect())
}
