//! Contribution bounding: a table where one person (a *privacy unit*, e.g. a patient id) may
//! hold several rows, cut down to at most `rows` rows per person before any DP mechanism reads
//! it, as Tumult Analytics, PipelineDP and OpenDP do. Which rows a person keeps depends on
//! that person's rows alone (a random order among them, or for a seeded test call a keyed
//! hash of each row's read values), so adding or removing one person adds or removes at most
//! `rows` rows of the bounded table and changes nobody else's: a mechanism that is ε′-DP for
//! one row is then (rows·ε′)-DP for one person (group privacy; docs/dp.md, "A privacy unit").

use super::FrequencyTable;
use super::source::Source;
use crate::error::{AnonError, Result};
use datafusion::arrow::datatypes::DataType;
use datafusion::functions::expr_fn::{concat_ws, md5, random};
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::{ExprFunctionExt, cast};
use datafusion::prelude::{ident, lit};

/// The bound: at most `rows` rows per value of `column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Contribution {
    pub(crate) column: String,
    pub(crate) rows: u64,
    /// Tests only: the rows kept are chosen by a hash keyed with the seed instead of at random.
    pub(crate) seed: Option<u64>,
}

/// The name of the per-person row number (never published: the bounded table lives only
/// inside the aggregation).
const RANK: &str = "__anonfusion_unit_rank";

/// The frequency table of `table` after bounding each person's rows to `bound.rows`.
pub(crate) async fn bounded_frequency_table(
    source: &Source,
    sensitive: &str,
    bound: &Contribution,
) -> Result<FrequencyTable> {
    let (table, meta) = (source.name(), source.meta());
    let df = source.frame()?;
    if df.schema().field_with_unqualified_name(&bound.column).is_err() {
        return Err(AnonError::column(table, &bound.column, "is not a column of the table (privacy_unit=)"));
    }
    // Rows without a unit would be pooled into one "person" bounded at `rows` rows. A new
    // patient whose id is missing then changes which of the others' NULL rows are kept: up to
    // `rows` rows out and as many in, twice the bound the charge assumes. So every row must
    // name its unit.
    if super::null_count(source, &bound.column).await? > 0 {
        return Err(AnonError::column(
            table,
            &bound.column,
            "holds NULLs, and every row must name its privacy unit (privacy_unit=): fill them with ids of their \
             own persons or leave those rows out",
        ));
    }
    let qis = meta.quasi_identifiers();
    let order = match bound.seed {
        None => random(),
        Some(seed) => {
            let mut parts = vec![lit(seed.to_string())];
            parts.extend(qis.iter().chain([&sensitive]).map(|c| cast(ident(*c), DataType::Utf8)));
            md5(concat_ws(lit("|"), parts))
        }
    };
    let rank = row_number()
        .partition_by(vec![ident(&bound.column)])
        .order_by(vec![order.sort(true, false)])
        .build()?
        .alias(RANK);
    let bounded = df.window(vec![rank])?.filter(ident(RANK).lt_eq(lit(bound.rows)))?;
    super::aggregate(bounded, table, meta, &qis, Some(sensitive)).await
}
