//! Safety of a counterfeit catalog (Kim et al. 2017, Def. 3, Lemma 1, Algorithm 2).
//!
//! A catalog row (class_ids G, value s, count c) says: the classes of group G jointly hold c
//! counterfeit records with sensitive value s. Lemma 1: with p_t(s) the counterfeits of s in
//! class E_t of G and o_t(s) the genuine records of s in the other classes of G, an adversary
//! cannot single out counterfeits in E_t when p_t(s) <= o_t(s).
//!
//! The verifier sees n_t(s), the published records of s in E_t (genuine + counterfeit), and
//! c(s) = Σ_t p_t(s), but not the p_t(s). With N(s) = Σ_{t∈G} n_t(s):
//!   o_t(s) = (N(s) - n_t(s)) - (c(s) - p_t(s)),
//! so p_t(s) <= o_t(s)  ⇔  c(s) <= N(s) - n_t(s). The unknown p_t(s) cancels: the condition is
//! exactly Lemma 1, for every way the counterfeits may be spread. It binds only for classes
//! that can hold a counterfeit of s (n_t(s) >= 1; otherwise p_t(s) = 0 and it holds
//! trivially). Checked: for every group G, value s with c(s) >= 1 and class t ∈ G with
//! n_t(s) >= 1: Σ_{t'∈G, t'≠t} n_{t'}(s) >= c(s).
//!
//! Also checked (Def. 3's structure): every class id exists in the release, each class belongs
//! to at most one group, counts are positive, and c(s) <= N(s).

use super::Verdict;
use super::classes::texts;
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use datafusion::prelude::SessionContext;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// One catalog row.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogRow {
    class_ids: Vec<i64>,
    value: String,
    count: i64,
}

/// Records of each (class id, sensitive value) in the release.
pub(crate) type ClassCounts = HashMap<(i64, String), u64>;

/// Structural problems: unknown ids, a class in two groups, bad counts.
fn structure(
    rows: &[CatalogRow],
    counts: &ClassCounts,
    problems: &mut Vec<String>,
) -> BTreeMap<Vec<i64>, BTreeMap<String, i128>> {
    let known: BTreeSet<i64> = counts.keys().map(|k| k.0).collect();
    // Summed in i128: rows of the same group and value add up, and no number of i64 counts
    // (fewer than 2^64 rows) can overflow it. A wrapping i64 sum of two i64::MAX counts was -2,
    // neither above N(s) nor >= 1, so the check passed a catalog claiming 1.8e19 counterfeits.
    let mut groups: BTreeMap<Vec<i64>, BTreeMap<String, i128>> = BTreeMap::new();
    let mut owner: HashMap<i64, Vec<i64>> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let g: Vec<i64> = r.class_ids.iter().copied().collect::<BTreeSet<_>>().into_iter().collect();
        if g.is_empty() {
            problems.push(format!("catalog row {} has an empty class_ids list", i + 1));
            continue;
        }
        for id in &g {
            if !known.contains(id) {
                problems.push(format!("class {id} of catalog row {} is not in the release", i + 1));
            }
            match owner.get(id) {
                Some(other) if *other != g => problems.push(format!("class {id} is in two groups {other:?} and {g:?}")),
                Some(_) => {}
                None => {
                    owner.insert(*id, g.clone());
                }
            }
        }
        if r.count < 1 {
            problems.push(format!("catalog row {} has count {} < 1", i + 1, r.count));
        }
        *groups.entry(g).or_default().entry(r.value.clone()).or_default() += i128::from(r.count);
    }
    groups
}

/// The whole check, pure: see the module doc for the conditions.
pub(crate) fn check_catalog(rows: &[CatalogRow], counts: &ClassCounts) -> Verdict {
    let mut problems = Vec::new();
    let groups = structure(rows, counts, &mut problems);
    let structural = problems.len();
    for (g, values) in &groups {
        for (s, &c) in values {
            let n: Vec<u64> = g.iter().map(|id| counts.get(&(*id, s.clone())).copied().unwrap_or(0)).collect();
            let total: u64 = n.iter().sum();
            if c > i128::from(total) {
                problems.push(format!("group {g:?} claims {c} counterfeit '{s}' records but holds {total}"));
                continue;
            }
            for (id, &nt) in g.iter().zip(&n) {
                if nt >= 1 && c >= 1 && i128::from(total - nt) < c {
                    problems.push(format!(
                        "class {id} of group {g:?}: the other classes hold {} '{s}' records < {c} counterfeit (Lemma 1)",
                        total - nt
                    ));
                }
            }
        }
    }
    let summary = format!("{} catalog rows in {} groups", rows.len(), groups.len());
    match problems.first() {
        None => Verdict::holds(format!("{summary}; every class's counterfeits are concealed (Lemma 1)")),
        Some(p) => Verdict::fails(
            problems.len() as i64,
            format!("{} problems ({} structural); first: {p}; {summary}", problems.len(), structural),
        ),
    }
}

/// Read the catalog table (`class_ids` List<Int64>, `sensitive_value`, `count`).
///
/// Strict: a class id that is not an integer, a NULL id inside a list, or a count that is not
/// a whole number in i64's range refuses the catalog, naming the row and the column. Reading
/// them leniently (Arrow's casts turn `'[1'` into NULL and `0.5` into 0) would check a
/// different catalog than the one written: `'1;a'` became the group {1}, `'[1, 2]'` an empty
/// list, a count of 0.5 a count of 0. Errors never quote a cell (only positions).
async fn read_catalog(ctx: &SessionContext, table: &str) -> Result<Vec<CatalogRow>> {
    let df = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found (the catalog argument)"))?;
    for c in ["class_ids", "sensitive_value", "count"] {
        if df.schema().field_with_unqualified_name(c).is_err() {
            return Err(AnonError::column(table, c, "is missing: a catalog has class_ids, sensitive_value, count"));
        }
    }
    let batches = df.select_columns(&["class_ids", "sensitive_value", "count"])?.collect().await?;
    let mut rows = Vec::new();
    for b in &batches {
        let ids = id_lists(table, b.column(0))?;
        let values = texts(b.column(1))?;
        let counts = whole_numbers(table, b.column(2))?;
        for (r, value) in values.into_iter().enumerate() {
            let n = rows.len() + 1;
            let class_ids = match &ids[r] {
                None => vec![],
                Some(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| parse_id(item.as_deref()).ok_or_else(|| bad_id(table, n, i + 1)))
                    .collect::<Result<Vec<i64>>>()?,
            };
            let value = value.ok_or_else(|| AnonError::column(table, "sensitive_value", "holds a NULL"))?;
            let count = match counts[r] {
                Count::Null => 0,
                Count::Whole(c) => c,
                Count::NotWhole => {
                    return Err(AnonError::column(
                        table,
                        "count",
                        format!("catalog row {n}: the count is not a whole number in the range of a 64-bit integer"),
                    ));
                }
            };
            rows.push(CatalogRow { class_ids, value, count });
        }
    }
    Ok(rows)
}

/// Each row's class ids as text items (None for a NULL list), from a list column (any element
/// type) or a delimited string such as a catalog read back from CSV (`1;14`, split by the one
/// splitter, src/verify/mod.rs). A single integer is a one-class group.
fn id_lists(table: &str, a: &ArrayRef) -> Result<Vec<Option<Vec<Option<String>>>>> {
    let wrong = || {
        AnonError::column(
            table,
            "class_ids",
            format!("has type {}, expected a list of integer class ids (or a string such as '1;2')", a.data_type()),
        )
    };
    let lists: ArrayRef = match a.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            Arc::new(crate::hierarchy::code_lists(table, "class_ids", a)?)
        }
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            cast(a, &DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))).map_err(|_| wrong())?
        }
        t if t.is_integer() => {
            cast(a, &DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)))).map_err(|_| wrong())?
        }
        _ => return Err(wrong()),
    };
    let lists = lists.as_list::<i32>();
    Ok((0..lists.len())
        .map(|r| {
            lists.is_valid(r).then(|| {
                let items = lists.value(r);
                items.as_string::<i32>().iter().map(|v| v.map(str::to_string)).collect()
            })
        })
        .collect())
}

/// `12`, or a decimal's `12.00`; None for a fraction, a number outside i64 or other text.
fn whole(x: &str) -> Option<i64> {
    match x.split_once('.') {
        Some((int, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => int.parse().ok(),
        Some(_) => None,
        None => x.parse().ok(),
    }
}

/// A class id written as an integer (`2`, ` 2 `); None for anything else, NULL included.
fn parse_id(item: Option<&str>) -> Option<i64> {
    item?.trim().parse::<i64>().ok()
}

fn bad_id(table: &str, row: usize, item: usize) -> AnonError {
    AnonError::column(
        table,
        "class_ids",
        format!(
            "catalog row {row}: item {item} of the list is not an integer class id (write a list of integers, \
             or a string such as '1;2')"
        ),
    )
}

/// A catalog count as read: NULL, a whole number, or anything else (a fraction, text, a
/// number outside i64).
#[derive(Clone, Copy)]
enum Count {
    Null,
    Whole(i64),
    NotWhole,
}

fn whole_numbers(table: &str, a: &ArrayRef) -> Result<Vec<Count>> {
    let t = a.data_type();
    if t.is_floating() {
        let f = cast(a, &DataType::Float64)?;
        let f = f.as_primitive::<Float64Type>();
        // 2^63 is the first float above i64::MAX; every float below it in magnitude that is
        // whole converts exactly.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        return Ok(f
            .iter()
            .map(|v| match v {
                None => Count::Null,
                Some(x) if x.is_finite() && x.fract() == 0.0 && (-LIMIT..LIMIT).contains(&x) => Count::Whole(x as i64),
                Some(_) => Count::NotWhole,
            })
            .collect());
    }
    // Integers, decimals and text: through text, so nothing is truncated or wrapped on the way
    // (an unsigned count above i64::MAX, a decimal 0.50, the string '1.5' are not whole i64s).
    let s = cast(a, &DataType::Utf8)
        .map_err(|_| AnonError::column(table, "count", format!("has type {t}, expected an integer")))?;
    Ok(s.as_string::<i32>()
        .iter()
        .map(|v| match v {
            None => Count::Null,
            Some(x) => whole(x.trim()).map_or(Count::NotWhole, Count::Whole),
        })
        .collect())
}

/// Records per (class_id, sensitive value), counted here row by row: eval's counterfeit-aware
/// estimate has DataFusion aggregate the same pairs, and the check does not share that path.
async fn class_counts(ctx: &SessionContext, release: &str, sensitive: &str) -> Result<ClassCounts> {
    let df = ctx.table(release).await?;
    if let Some(c) = ["class_id", sensitive].into_iter().find(|c| df.schema().field_with_unqualified_name(c).is_err()) {
        return Err(AnonError::column(
            release,
            c,
            "is missing: the catalog check needs class ids and the sensitive value",
        ));
    }
    let mut out = ClassCounts::new();
    for b in df.select_columns(&["class_id", sensitive])?.collect().await? {
        let ids = cast(b.column(0), &DataType::Int64)?;
        let ids = ids.as_primitive::<Int64Type>();
        for (r, s) in texts(b.column(1))?.into_iter().enumerate() {
            // Rows without a class id (suppressed) belong to no catalog group.
            if ids.is_valid(r) {
                *out.entry((ids.value(r), s.unwrap_or_else(|| "NULL".into()))).or_default() += 1;
            }
        }
    }
    Ok(out)
}

pub(crate) async fn verify_catalog(
    ctx: &SessionContext,
    release: &str,
    catalog: &str,
    sensitive: &str,
) -> Result<Verdict> {
    let rows = read_catalog(ctx, catalog).await?;
    let counts = class_counts(ctx, release, sensitive).await?;
    Ok(check_catalog(&rows, &counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kim et al. Table 5: class 1 = {Pneumonia, Diabetes, Anemia, Diabetes}, class 2 =
    /// {Pneumonia, Diabetes, Diabetes, Pneumonia}.
    fn table5() -> ClassCounts {
        let mut c = ClassCounts::new();
        for (id, s, n) in
            [(1, "Pneumonia", 1), (1, "Diabetes", 2), (1, "Anemia", 1), (2, "Pneumonia", 2), (2, "Diabetes", 2)]
        {
            c.insert((id, s.to_string()), n);
        }
        c
    }

    fn row(ids: &[i64], s: &str, n: i64) -> CatalogRow {
        CatalogRow { class_ids: ids.to_vec(), value: s.into(), count: n }
    }

    #[test]
    fn table8_is_safe_table7_is_not() {
        assert!(check_catalog(&[row(&[1, 2], "Diabetes", 1)], &table5()).holds);
        let o = check_catalog(&[row(&[1], "Diabetes", 1)], &table5());
        assert!(!o.holds && o.detail.contains("Lemma 1"), "{}", o.detail);
    }

    #[test]
    fn structure_problems() {
        let o = check_catalog(&[row(&[1, 3], "Diabetes", 1)], &table5());
        assert!(!o.holds && o.detail.contains("class 3"));
        let o = check_catalog(&[row(&[1, 2], "Diabetes", 1), row(&[1], "Anemia", 1)], &table5());
        assert!(!o.holds && o.detail.contains("two groups"));
        let o = check_catalog(&[row(&[1, 2], "Anemia", 2)], &table5());
        assert!(!o.holds && o.detail.contains("holds 1"));
    }
}
