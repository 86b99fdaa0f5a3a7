//! The counterfeit catalog (h-ceiling paper, Def. 3): `Catalog(ClassID list, Sensitive value,
//! Count)`, one row per group of equivalence classes and sensitive value, saying how many of
//! the group's records with that value are counterfeit. One reader and one Fig. 4 weighting,
//! for `anon_metrics` (RCE, real records) and the query harness (counterfeit-aware estimates).
//! `src/verify` reads catalogs with its own code on purpose (src/verify/mod.rs).
//!
//! # Fig. 4: the probability that a released record is real
//! A record with sensitive value s in a class of catalog group G is counterfeit with
//! probability c / N, c the row's count and N the group's records with value s (Table 5 with
//! Table 8: one of the four Diabetes records of classes 1 and 2 is counterfeit, so each is real
//! with probability 3/4); every record no row names is real.
//!
//! Def. 3 groups the equivalence classes ("a group of equivalent classes G_i consists of several
//! equivalent classes") and Algorithm 2 merges a class into the group that conceals its
//! counterfeits, so a (class, value) pair belongs to ONE group, and c / N is that group's. Hence:
//! - a class in two different groups for one sensitive value is an error: the two Ns would
//!   count the same records and the probability is undetermined;
//! - rows repeating a group and value add up: together they declare the group's counterfeits
//!   of that value (a class id repeated within a row is the same group).
//!
//! Multiplying the probabilities of every row naming a class, as if the rows' counterfeits were
//! independent draws, would be wrong (two rows `[1,2] Diabetes 1` would give class 1
//! (1 − 1/4)² instead of 1 − 2/4). The rule above is the paper's; verify_release's catalog check, with its own code,
//! agrees on it (it sums repeated rows) and is stricter (a class in two groups is a problem
//! there whatever the values).

use super::columns::{int_values, str_values};
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// One catalog row.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogRow {
    pub(crate) class_ids: Vec<i64>,
    pub(crate) sensitive_value: String,
    pub(crate) count: u64,
}

/// The catalog's columns.
const COLUMNS: [&str; 3] = ["class_ids", "sensitive_value", "count"];

/// Read a catalog table's rows (`class_ids` a list of ids, `sensitive_value`, `count`).
pub fn decode_catalog(name: &str, batches: &[RecordBatch]) -> Result<Vec<CatalogRow>> {
    let mut out = Vec::new();
    for b in batches {
        let mut cols = Vec::with_capacity(COLUMNS.len());
        for c in COLUMNS {
            let col = b.column_by_name(c).ok_or_else(|| {
                AnonError::column(name, c, "is missing: a catalog has class_ids, sensitive_value, count")
            })?;
            cols.push(col.clone());
        }
        let ids = class_id_lists(name, &cols[0])?;
        let ids = ids.as_list::<i32>();
        let values = str_values(name, "sensitive_value", &cols[1..2])?;
        let counts = int_values(&cols[2..3])?;
        for (r, (v, c)) in values.into_iter().zip(counts).enumerate() {
            let row = out.len() + 1;
            let (Some(v), Some(c), true) = (v, c, ids.is_valid(r)) else {
                return Err(AnonError::table(name, format!("row {row} has a NULL")));
            };
            let class_ids: Vec<i64> = int_values(&[ids.value(r)])?.into_iter().flatten().collect();
            if c < 0 || class_ids.is_empty() {
                return Err(AnonError::column(
                    name,
                    "count",
                    format!("row {row} has a negative count or no class ids"),
                ));
            }
            out.push(CatalogRow { class_ids, sensitive_value: v, count: c as u64 });
        }
    }
    Ok(out)
}

/// `class_ids` as lists of ids: a list column, one id per row, or the ids joined by `;` as
/// the table printer, CSV output and `COPY ... TO '.csv'` write them (a catalog read back
/// from its CSV file).
fn class_id_lists(name: &str, col: &ArrayRef) -> Result<ArrayRef> {
    let list = DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true)));
    let wrong =
        || AnonError::column(name, "class_ids", format!("has type {}, expected a list of class ids", col.data_type()));
    if !matches!(col.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        return cast(col, &list).map_err(|_| wrong());
    }
    let split: ArrayRef = Arc::new(crate::hierarchy::code_lists(name, "class_ids", col)?);
    let ids = cast(&split, &list).map_err(|_| wrong())?;
    // A part that is no integer casts to NULL: refuse it rather than drop it.
    if ids.as_list::<i32>().values().null_count() > 0 {
        return Err(AnonError::column(name, "class_ids", "holds a part that is not an integer class id"));
    }
    Ok(ids)
}

/// Total counterfeit records the catalog declares.
pub(crate) fn counterfeits(catalog: &[CatalogRow]) -> u64 {
    catalog.iter().map(|r| r.count).sum()
}

/// Released records per (class id, sensitive value): the Ns of Fig. 4.
pub type ClassValueCounts = HashMap<(i64, String), u64>;

/// Fig. 4 (module doc): the probability that a released record of each (class id, sensitive
/// value) the catalog names is real; records of any other pair are real. `names` are the
/// catalog's and the release's, for the errors: class ids the release does not have, a class
/// in two groups for one value, more counterfeits than records.
pub(crate) fn real_probabilities(
    catalog: &[CatalogRow],
    counts: &ClassValueCounts,
    names: (&str, &str),
) -> Result<HashMap<(i64, String), f64>> {
    let (catalog_name, release) = names;
    let known: HashSet<i64> = counts.keys().map(|(c, _)| *c).collect();
    let unknown: BTreeSet<i64> =
        catalog.iter().flat_map(|r| r.class_ids.iter().copied()).filter(|c| !known.contains(c)).collect();
    if let Some(first) = unknown.first() {
        let shown: Vec<String> = unknown.iter().take(3).map(i64::to_string).collect();
        return Err(AnonError::column(
            catalog_name,
            "class_ids",
            format!(
                "lists class {first}, which release '{release}' does not have ({} unknown class id(s): {}{}); \
                 is it the catalog of another release?",
                unknown.len(),
                shown.join(", "),
                if unknown.len() > 3 { ", ..." } else { "" }
            ),
        ));
    }
    // (group, value) → counterfeits declared, in the order the catalog first names them.
    let mut declared: Vec<((Vec<i64>, &str), u64)> = Vec::new();
    let mut at: HashMap<(Vec<i64>, &str), usize> = HashMap::new();
    let mut group_of: HashMap<(i64, &str), Vec<i64>> = HashMap::new();
    for row in catalog {
        let group: Vec<i64> = row.class_ids.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
        let value = row.sensitive_value.as_str();
        for &id in &group {
            let owner = group_of.entry((id, value)).or_insert_with(|| group.clone());
            if *owner != group {
                return Err(AnonError::column(
                    catalog_name,
                    "class_ids",
                    format!(
                        "lists class {id} in two groups, {owner:?} and {group:?}, for one sensitive value; \
                         a class belongs to one group (h-ceiling paper, Def. 3)"
                    ),
                ));
            }
        }
        let i = *at.entry((group.clone(), value)).or_insert_with(|| {
            declared.push(((group, value), 0));
            declared.len() - 1
        });
        declared[i].1 += row.count;
    }
    let mut out = HashMap::new();
    for ((group, value), c) in declared {
        let n: u64 = group.iter().map(|&id| counts.get(&(id, value.to_string())).copied().unwrap_or(0)).sum();
        if n < c {
            return Err(AnonError::column(
                catalog_name,
                "count",
                format!(
                    "declares {c} counterfeit record(s) in classes {group:?}, which hold only {n} record(s) \
                     with that sensitive value in release '{release}'"
                ),
            ));
        }
        let real = if n == 0 { 1.0 } else { (n - c) as f64 / n as f64 };
        out.extend(group.iter().map(|&id| ((id, value.to_string()), real)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ids: &[i64], v: &str, count: u64) -> CatalogRow {
        CatalogRow { class_ids: ids.to_vec(), sensitive_value: v.into(), count }
    }

    fn counts(pairs: &[(i64, &str, u64)]) -> ClassValueCounts {
        pairs.iter().map(|&(c, v, n)| ((c, v.to_string()), n)).collect()
    }

    /// Table 5 with Table 8: each of the four Diabetes records of classes 1 and 2 is real
    /// with 3/4; the other values are untouched.
    #[test]
    fn table8_makes_each_diabetes_record_real_with_three_quarters() {
        let n = counts(&[(1, "Diabetes", 2), (2, "Diabetes", 2), (1, "Anemia", 1)]);
        let p = real_probabilities(&[row(&[1, 2], "Diabetes", 1)], &n, ("t8", "t5")).unwrap();
        assert_eq!(p[&(1, "Diabetes".to_string())], 0.75);
        assert_eq!(p[&(2, "Diabetes".to_string())], 0.75);
        assert!(!p.contains_key(&(1, "Anemia".to_string())));
    }

    /// The disagreement this module settled: two rows naming class 1 for Diabetes were
    /// multiplied by the query harness and refused by anon_metrics. Rows of one group add up;
    /// a class in two groups for one value is refused, saying why.
    #[test]
    fn a_class_named_twice_for_one_value() {
        let n = counts(&[(1, "Diabetes", 2), (2, "Diabetes", 2), (3, "Diabetes", 1)]);
        // The same group twice: 2 of its 4 Diabetes records are counterfeit, each real with 1/2
        // (the harness's product gave (3/4)² = 9/16).
        let same_group = [row(&[1, 2], "Diabetes", 1), row(&[2, 1], "Diabetes", 1)];
        let p = real_probabilities(&same_group, &n, ("cat", "rel")).unwrap();
        assert_eq!(p[&(1, "Diabetes".to_string())], 0.5);
        assert_eq!(p[&(2, "Diabetes".to_string())], 0.5);
        // A class id repeated within a row is the same group.
        let p = real_probabilities(&[row(&[1, 1], "Diabetes", 1)], &n, ("cat", "rel")).unwrap();
        assert_eq!(p[&(1, "Diabetes".to_string())], 0.5);
        // Class 1 in two groups for Diabetes: undetermined, an error naming both groups.
        let two_groups = [row(&[1, 2], "Diabetes", 1), row(&[1, 3], "Diabetes", 1)];
        let e = real_probabilities(&two_groups, &n, ("cat", "rel")).unwrap_err().to_string();
        assert!(e.contains("'class_ids'") && e.contains("class 1 in two groups") && e.contains("Def. 3"), "{e}");
        // One class in two groups for two values is two (class, value) pairs: fine.
        let n = counts(&[(1, "Diabetes", 2), (1, "Anemia", 2), (2, "Anemia", 1)]);
        let ok = [row(&[1], "Diabetes", 1), row(&[1, 2], "Anemia", 1)];
        assert_eq!(real_probabilities(&ok, &n, ("cat", "rel")).unwrap().len(), 3);
    }

    #[test]
    fn a_catalog_that_does_not_fit_the_release_is_named() {
        let n = counts(&[(1, "Diabetes", 1)]);
        let e = real_probabilities(&[row(&[1, 7, 8], "Diabetes", 1)], &n, ("cat", "rel")).unwrap_err().to_string();
        assert!(e.contains("class 7") && e.contains("7, 8") && e.contains("another release"), "{e}");
        let e = real_probabilities(&[row(&[1], "Diabetes", 2)], &n, ("cat", "rel")).unwrap_err().to_string();
        assert!(e.contains("'count'") && e.contains("only 1 record"), "{e}");
    }
}
