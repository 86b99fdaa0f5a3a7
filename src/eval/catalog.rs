//! Counterfeit-aware estimates (h-ceiling paper, Fig. 4): a catalog row says that `count` of
//! the records with sensitive value s in classes `class_ids` are counterfeit, so each such
//! record is real with probability 1 - count / (records with value s in those classes).

use super::estimate::RealProb;
use crate::error::{AnonError, Result};
use crate::release::{self, ClassValueCounts, decode_catalog};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::cast as cast_expr;
use datafusion::prelude::{SessionContext, ident, lit};

/// The probability that a release record is real, per (class id, sensitive value); records
/// of pairs not listed are real. The catalog is read and weighted as `anon_metrics` reads and
/// weights it ([`crate::release::catalog`], Fig. 4 and its edge cases).
pub(crate) async fn real_probabilities(
    ctx: &SessionContext,
    catalog: &str,
    release: &str,
    sensitive: &str,
) -> Result<RealProb> {
    let df = ctx.table(catalog).await.map_err(|_| AnonError::table(catalog, "not found"))?;
    let rows = decode_catalog(catalog, &df.collect().await?)?;
    let counts = release_counts(ctx, release, sensitive).await?;
    release::catalog::real_probabilities(&rows, &counts, (catalog, release))
}

async fn release_counts(ctx: &SessionContext, release: &str, sensitive: &str) -> Result<ClassValueCounts> {
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
    let mut out = ClassValueCounts::new();
    for b in &batches {
        let (c, s, n) = (
            b.column(0).as_primitive::<Int64Type>(),
            b.column(1).as_string::<i32>(),
            b.column(2).as_primitive::<Int64Type>(),
        );
        for r in 0..b.num_rows() {
            if !c.is_null(r) && !s.is_null(r) {
                out.insert((c.value(r), s.value(r).to_string()), n.value(r).max(0) as u64);
            }
        }
    }
    Ok(out)
}
