//! A counterfeit catalog (h-ceiling paper, Def. 3): `Catalog(ClassID list, Sensitive value,
//! Count)`, one row per group of equivalence classes and sensitive value, saying how many of
//! the group's records with that value are counterfeit.

use super::decode::{Release, int_values, required_column, str_values};
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct CatalogRow {
    pub class_ids: Vec<i64>,
    pub sensitive_value: String,
    pub count: u64,
}

/// Read a catalog table's rows (`class_ids` List<Int64>, `sensitive_value`, `count`).
pub fn decode_catalog(name: &str, batches: &[RecordBatch]) -> Result<Vec<CatalogRow>> {
    let ids = required_column(name, "class_ids", batches)?;
    let values = str_values(name, "sensitive_value", &required_column(name, "sensitive_value", batches)?)?;
    let counts = int_values(&required_column(name, "count", batches)?)?;
    let list = DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)));
    let mut id_lists = Vec::new();
    for a in &ids {
        let l = cast(a, &list).map_err(|_| {
            AnonError::column(name, "class_ids", format!("has type {}, expected a list of class ids", a.data_type()))
        })?;
        let l = l.as_list::<i32>();
        for r in 0..l.len() {
            let v = int_values(&[l.value(r)])?;
            id_lists.push(v.into_iter().flatten().collect::<Vec<i64>>());
        }
    }
    let mut out = Vec::with_capacity(values.len());
    for ((ids, v), c) in id_lists.into_iter().zip(values).zip(counts) {
        let (Some(v), Some(c)) = (v, c) else {
            return Err(AnonError::column(name, "count", "a catalog row has a NULL sensitive value or count"));
        };
        if c < 0 || ids.is_empty() {
            return Err(AnonError::column(name, "count", "a catalog row has a negative count or no class ids"));
        }
        out.push(CatalogRow { class_ids: ids, sensitive_value: v, count: c as u64 });
    }
    Ok(out)
}

/// Total counterfeit records the catalog declares.
pub fn counterfeits(catalog: &[CatalogRow]) -> u64 {
    catalog.iter().map(|r| r.count).sum()
}

/// Probability that each released record (per decoded row) is real (h-ceiling paper, Fig. 4): a record with
/// sensitive value s in a class of catalog group G is counterfeit with probability c / N, c
/// the group's counterfeit count for s and N the group's records with s (Table 5/8: 1 of the 4
/// Diabetes records of classes 1 and 2, so each is real with probability 3/4); every other
/// record is real. Errors when the catalog does not fit the release (unknown class ids, a
/// value the group does not hold, more counterfeits than records).
pub fn real_weights(rel: &Release, catalog: &[CatalogRow], catalog_name: &str) -> Result<Vec<f64>> {
    let mut w = vec![1.0; rel.len()];
    if catalog.is_empty() {
        return Ok(w);
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
    let mut rows_of: HashMap<(i64, &str), Vec<usize>> = HashMap::new();
    for (r, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            rows_of.entry((*id, sens.values[sens.codes[r] as usize].as_str())).or_default().push(r);
        }
    }
    let known: std::collections::HashSet<i64> = ids.iter().flatten().copied().collect();
    let mut seen: HashMap<(i64, &str), usize> = HashMap::new();
    for (g, row) in catalog.iter().enumerate() {
        if let Some(bad) = row.class_ids.iter().find(|id| !known.contains(id)) {
            return Err(AnonError::column(
                catalog_name,
                "class_ids",
                format!(
                    "lists class {bad}, which release '{}' does not have; is it the catalog of another release?",
                    rel.name
                ),
            ));
        }
        let mut members = Vec::new();
        for id in &row.class_ids {
            let key = (*id, row.sensitive_value.as_str());
            if seen.insert(key, g).is_some() {
                return Err(AnonError::column(
                    catalog_name,
                    "class_ids",
                    format!("lists class {id} twice for one sensitive value"),
                ));
            }
            members.extend(rows_of.get(&key).into_iter().flatten().copied());
        }
        let n: u64 = members.iter().map(|&r| rel.weights[r]).sum();
        if n < row.count {
            return Err(AnonError::column(
                catalog_name,
                "count",
                format!(
                    "declares {} counterfeit record(s) in classes {:?}, which hold only {} record(s) \
                     with that sensitive value in release '{}'",
                    row.count, row.class_ids, n, rel.name
                ),
            ));
        }
        let real = (n - row.count) as f64 / n.max(1) as f64;
        members.iter().for_each(|&r| w[r] = real);
    }
    Ok(w)
}
