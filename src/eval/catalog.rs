//! Counterfeit-aware estimates (h-ceiling paper, Fig. 4): a catalog row says that `count` of
//! the records with sensitive value s in classes `class_ids` are counterfeit, so each such
//! record is real with probability 1 - count / (records with value s in those classes).

use super::estimate::RealProb;
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::cast as cast_expr;
use datafusion::prelude::{SessionContext, ident, lit};
use std::collections::{BTreeSet, HashMap};

/// One catalog row.
struct Entry {
    classes: Vec<i64>,
    value: String,
    count: i64,
}

/// The probability that a release record is real, per (class id, sensitive value); records
/// of pairs not listed are real.
pub async fn real_probabilities(
    ctx: &SessionContext,
    catalog: &str,
    release: &str,
    sensitive: &str,
) -> Result<RealProb> {
    let entries = read_catalog(ctx, catalog).await?;
    let counts = release_counts(ctx, release, sensitive).await?;
    let classes: BTreeSet<i64> = counts.keys().map(|(c, _)| *c).collect();
    let unknown: BTreeSet<i64> =
        entries.iter().flat_map(|e| e.classes.iter().copied()).filter(|c| !classes.contains(c)).collect();
    if !unknown.is_empty() {
        let shown: Vec<String> = unknown.iter().take(3).map(i64::to_string).collect();
        return Err(AnonError::table(
            catalog,
            format!(
                "refers to {} class id(s) ({}{}) that release '{release}' does not have: a catalog of another release?",
                unknown.len(),
                shown.join(", "),
                if unknown.len() > 3 { ", ..." } else { "" }
            ),
        ));
    }
    let mut real = RealProb::new();
    for (i, e) in entries.iter().enumerate() {
        let n: i64 = e.classes.iter().map(|&c| counts.get(&(c, e.value.clone())).copied().unwrap_or(0)).sum();
        if e.count < 0 || e.count > n {
            return Err(AnonError::table(
                catalog,
                format!(
                    "row {} lists {} counterfeit records but its classes hold {n} records with its sensitive value \
                     in release '{release}': a catalog of another release?",
                    i + 1,
                    e.count
                ),
            ));
        }
        let p = if n == 0 { 1.0 } else { 1.0 - e.count as f64 / n as f64 };
        for &c in &e.classes {
            *real.entry((c, e.value.clone())).or_insert(1.0) *= p;
        }
    }
    Ok(real)
}

async fn read_catalog(ctx: &SessionContext, catalog: &str) -> Result<Vec<Entry>> {
    let df = ctx.table(catalog).await.map_err(|_| AnonError::table(catalog, "not found"))?;
    for c in ["class_ids", "sensitive_value", "count"] {
        if df.schema().inner().field_with_name(c).is_err() {
            return Err(AnonError::column(catalog, c, "is missing: a catalog has class_ids, sensitive_value, count"));
        }
    }
    let batches = df
        .select(vec![
            ident("class_ids"),
            cast_expr(ident("sensitive_value"), DataType::Utf8),
            cast_expr(ident("count"), DataType::Int64),
        ])?
        .collect()
        .await?;
    let mut out = Vec::new();
    for b in &batches {
        let ids = b.column(0);
        let (vals, cnt) = (b.column(1).as_string::<i32>(), b.column(2).as_primitive::<Int64Type>());
        for r in 0..b.num_rows() {
            if ids.is_null(r) || vals.is_null(r) || cnt.is_null(r) {
                return Err(AnonError::table(catalog, format!("row {} has a NULL", out.len() + 1)));
            }
            let list = match ids.data_type() {
                DataType::List(_) => ids.as_list::<i32>().value(r),
                DataType::LargeList(_) => ids.as_list::<i64>().value(r),
                other => return Err(AnonError::column(catalog, "class_ids", format!("is {other}, not a list of ids"))),
            };
            let list = cast(&list, &DataType::Int64)?;
            let list = list.as_primitive::<Int64Type>();
            out.push(Entry {
                classes: list.iter().flatten().collect(),
                value: vals.value(r).to_string(),
                count: cnt.value(r),
            });
        }
    }
    Ok(out)
}

async fn release_counts(ctx: &SessionContext, release: &str, sensitive: &str) -> Result<HashMap<(i64, String), i64>> {
    let df = ctx.table(release).await.map_err(|_| AnonError::table(release, "not found"))?;
    for c in ["class_id", sensitive] {
        if df.schema().inner().field_with_name(c).is_err() {
            return Err(AnonError::column(
                release,
                c,
                "is missing: a counterfeit-aware estimate needs class_id and the sensitive column",
            ));
        }
    }
    let keys = vec![
        cast_expr(ident("class_id"), DataType::Int64).alias("c"),
        cast_expr(ident(sensitive), DataType::Utf8).alias("s"),
    ];
    let batches = df.aggregate(keys, vec![count(lit(1)).alias("n")])?.collect().await?;
    let mut out = HashMap::new();
    for b in &batches {
        let (c, s, n) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_string::<i32>(),
            b.column(2).as_primitive::<Int64Type>(),
        );
        for r in 0..b.num_rows() {
            if !c.is_null(r) && !s.is_null(r) {
                out.insert((c.value(r), s.value(r).to_string()), n.value(r));
            }
        }
    }
    Ok(out)
}
