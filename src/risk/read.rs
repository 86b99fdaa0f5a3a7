//! Counting the classes of a table or a release, as an attacker sees them: one class per
//! distinct combination of the published quasi-identifier values (a release's labels, a raw
//! table's values), counted by DataFusion's GROUP BY. A release's suppressed records (every
//! quasi-identifier label `*`) form no class: ARX leaves them out of every risk model, and so
//! does this; they are counted apart.

use super::Class;
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::dataframe::DataFrame;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{Expr, cast};
use datafusion::prelude::{SessionContext, ident, lit};

/// The label every quasi-identifier of a suppressed record shows.
const SUPPRESSED: &str = "*";

/// Class sizes of `df` over `keys`, and how many records were suppressed (all keys `*`; only
/// looked for in a release).
pub(crate) async fn class_sizes(df: DataFrame, keys: &[String], release: bool) -> Result<(Vec<u64>, u64)> {
    let suppressed = if release {
        keys.iter()
            .map(|k| cast(ident(k), DataType::Utf8).eq(lit(SUPPRESSED)))
            .reduce(Expr::and)
            .map_or(lit(false), |e| e.is_true())
    } else {
        lit(false)
    };
    let mut group: Vec<Expr> = keys.iter().map(ident).collect();
    group.push(suppressed.alias("__suppressed"));
    let batches = df.aggregate(group, vec![count(lit(1)).alias("__n")])?.collect().await?;
    let (mut sizes, mut hidden) = (Vec::new(), 0u64);
    for b in &batches {
        let n = counts(b, "__n");
        let s = b.column_by_name("__suppressed").expect("aggregate output").as_boolean();
        for (i, size) in n.into_iter().enumerate() {
            let size = size.unwrap_or(0);
            if s.is_valid(i) && s.value(i) {
                hidden += size;
            } else {
                sizes.push(size);
            }
        }
    }
    Ok((sizes, hidden))
}

fn counts(b: &RecordBatch, column: &str) -> Vec<Option<u64>> {
    let c = b.column_by_name(column).expect("aggregate output").as_primitive::<Int64Type>();
    (0..c.len()).map(|i| c.is_valid(i).then(|| c.value(i) as u64)).collect()
}

/// A SQL identifier, quoted.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The classes of `sample` with each one's size in `population` (the journalist's linking
/// table), matched on equal quasi-identifier values (NULL matching NULL). Every class of the
/// sample must be at least as large in the population: the sample is drawn from it.
pub(crate) async fn linked_classes(
    ctx: &SessionContext,
    sample: &str,
    population: &str,
    keys: &[String],
) -> Result<Vec<Class>> {
    let cols = keys.iter().map(|k| quoted(k)).collect::<Vec<_>>().join(", ");
    let on = keys
        .iter()
        .map(|k| format!("(s.{q} IS NOT DISTINCT FROM p.{q})", q = quoted(k)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let sql = format!(
        "SELECT s.__n AS sample, p.__n AS population \
         FROM (SELECT {cols}, COUNT(*) AS __n FROM {s} GROUP BY {cols}) s \
         LEFT JOIN (SELECT {cols}, COUNT(*) AS __n FROM {p} GROUP BY {cols}) p ON {on}",
        s = quoted(sample),
        p = quoted(population),
    );
    let batches = ctx.sql(&sql).await?.collect().await?;
    let mut out = Vec::new();
    for b in &batches {
        for (s, p) in counts(b, "sample").into_iter().zip(counts(b, "population")) {
            let s = s.unwrap_or(0);
            match p {
                Some(p) if p >= s => out.push(Class { sample: s, population: p }),
                _ => {
                    return Err(AnonError::argument(
                        "risk_report",
                        "options",
                        format!(
                            "population_table '{population}' has fewer records than '{sample}' in some class: \
                             '{sample}' must be a sample of it"
                        ),
                    ));
                }
            }
        }
    }
    Ok(out)
}
