//! Counting the classes of a table or a release, as an attacker sees them: one class per
//! distinct combination of the published quasi-identifier values (a release's labels, a raw
//! table's values), counted by DataFusion's GROUP BY. A release's suppressed records (every
//! quasi-identifier label `*`) form no class: ARX leaves them out of every risk model, and so
//! does this; they are counted apart.

use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{Expr, cast};
use datafusion::prelude::{SessionContext, ident, lit};

/// The label every quasi-identifier of a suppressed record shows.
const SUPPRESSED: &str = "*";

/// Class sizes of `table` over `keys`, and how many records were suppressed (all keys `*`;
/// only asked for a release).
pub(crate) async fn class_sizes(
    ctx: &SessionContext,
    table: &str,
    keys: &[String],
    release: bool,
) -> Result<(Vec<u64>, u64)> {
    let df = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found"))?;
    let suppressed = if release {
        keys.iter()
            .map(|k| cast(ident(k), datafusion::arrow::datatypes::DataType::Utf8).eq(lit(SUPPRESSED)))
            .reduce(Expr::and)
            .map_or(lit(false), |e| e.is_true())
    } else {
        lit(false)
    };
    let mut group: Vec<Expr> = keys.iter().map(|k| ident(k)).collect();
    group.push(suppressed.alias("__suppressed"));
    let batches = df.aggregate(group, vec![count(lit(1)).alias("__n")])?.collect().await?;
    let (mut sizes, mut hidden) = (Vec::new(), 0u64);
    for b in &batches {
        let n = b.column_by_name("__n").expect("aggregate output").as_primitive::<Int64Type>();
        let s = b.column_by_name("__suppressed").expect("aggregate output").as_boolean();
        for i in 0..b.num_rows() {
            let size = n.value(i) as u64;
            if s.is_valid(i) && s.value(i) {
                hidden += size;
            } else {
                sizes.push(size);
            }
        }
    }
    Ok((sizes, hidden))
}
