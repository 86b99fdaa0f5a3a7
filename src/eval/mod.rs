//! The query-error harness: answer a query on the original table, estimate the same answer
//! from a release, and compare per group (docs/query_error.md).
//!
//! Estimates assume that a generalized value stands for a uniform distribution over the
//! hierarchy leaves it covers (a suppressed value covers the whole domain), attributes
//! independent of each other; this module is the only place that assumption is made.
//!
//! ```no_run
//! # async fn demo() -> anonfusion::Result<()> {
//! let ctx = datafusion::prelude::SessionContext::new();
//! let registry = anonfusion::register_all(&ctx);
//! ctx.sql("SELECT * FROM load_dataset('nps', 200000, 1)").await?.collect().await?;
//! ctx.sql("SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')").await?.collect().await?;
//! let sql = "SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = 'M' GROUP BY FLOOR(age/5)*5";
//! let report = anonfusion::eval::query_error(&ctx, &registry, sql, "nps", "nps_g", None).await?;
//! println!("{}", report.to_text());
//! # Ok(()) }
//! ```

mod catalog;
mod codes;
pub(crate) mod dist;
mod estimate;
mod parse;
mod plan;
pub mod plot;
mod prob;
mod report;
pub(crate) mod workload;

pub use parse::{Agg, GroupExpr, ParsedQuery, parse_query};
pub use report::{GroupError, Part, Presence, QueryReport, Summary};

use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use crate::session::Registry;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
pub(crate) use dist::Val;
use estimate::{Groups, ReleaseCache, Scan, group_key};
use plan::{Names, Plan};
use std::collections::HashMap;
use std::sync::Arc;

/// Compare `sql` on `original` with its estimate from `release` (and, counterfeit-aware,
/// `catalog`). The query's FROM must name `original` (as DataFusion resolves names): it is run
/// there and estimated from `release`.
pub async fn query_error(
    ctx: &SessionContext,
    registry: &Registry,
    sql: &str,
    original: &str,
    release: &str,
    catalog: Option<&str>,
) -> Result<QueryReport> {
    let mut reports = query_errors(ctx, registry, &[sql.to_string()], original, release, catalog).await?;
    Ok(reports.pop().expect("one report per query"))
}

/// [`query_error`] for a whole workload: the release is read (and the catalog's weights
/// computed) once per set of columns, not once per query.
pub(crate) async fn query_errors(
    ctx: &SessionContext,
    registry: &Registry,
    queries: &[String],
    original: &str,
    release: &str,
    catalog: Option<&str>,
) -> Result<Vec<QueryReport>> {
    let meta = registry.require(original)?;
    let answered = answer_all(ctx, &meta, queries, original, release, catalog).await?;
    Ok(answered
        .into_iter()
        .zip(queries)
        .map(|((q, answers, estimated), sql)| merge(sql, &q, answers, estimated))
        .collect())
}

/// One grouped query's answers per group, by the group's values (not its text key), on the
/// original and as estimated from the release: for scores that regroup the harness's answers
/// (the two-way-marginal score bins leaves into hierarchy nodes, src/metrics/marginals.rs).
pub(crate) struct GroupAnswers {
    pub(crate) original: Vec<(Vec<Val>, f64)>,
    /// The estimated count (non-null measure mass for COUNT(col)) of each group.
    pub(crate) estimated: Vec<(Vec<Val>, f64)>,
}

/// Answers before they are compared ([`answer_all`]), by group values.
pub(crate) fn group_answers(answered: Vec<Answered>) -> Vec<GroupAnswers> {
    // In group-key order, so sums over the groups are the same from run to run.
    let sorted = |mut v: Vec<(String, Vec<Val>, f64)>| -> Vec<(Vec<Val>, f64)> {
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v.into_iter().map(|(_, sort, n)| (sort, n)).collect()
    };
    answered
        .into_iter()
        .map(|(_, answers, estimated)| GroupAnswers {
            original: sorted(answers.into_iter().filter_map(|(k, (sort, v))| v.map(|v| (k, sort, v))).collect()),
            estimated: sorted(estimated.into_iter().map(|(k, g)| (k, g.sort, g.count)).collect()),
        })
        .collect()
}

/// Answers of the original and the release's estimates of every query.
pub(crate) type Answered = (ParsedQuery, HashMap<String, (Vec<Val>, Option<f64>)>, Groups);

/// Every query answered on `original` (declarations `meta`) and estimated from `release`.
pub(crate) async fn answer_all(
    ctx: &SessionContext,
    meta: &TableMeta,
    queries: &[String],
    original: &str,
    release: &str,
    catalog: Option<&str>,
) -> Result<Vec<Answered>> {
    let original_schema = ctx.table(original).await.map_err(|_| AnonError::table(original, "not found"))?;
    let original_schema = original_schema.schema().inner().clone();
    let release_df = ctx.table(release).await.map_err(|_| AnonError::table(release, "not found"))?;
    let release_schema = release_df.schema().inner().clone();
    let real = match catalog {
        Some(c) => {
            let sensitive = meta.sensitive(original)?.to_string();
            Some((sensitive.clone(), catalog::real_probabilities(ctx, c, release, &sensitive).await?))
        }
        None => None,
    };
    let scan = Scan { release, catalog: real.as_ref().map(|(s, r)| (s.as_str(), r)) };
    let names = Names { original, release };
    let mut cache = ReleaseCache::new();
    let mut out = Vec::with_capacity(queries.len());
    for sql in queries {
        let q = parse_query(sql)?;
        check_from(ctx, &q, original)?;
        let plan = Plan::new(&q, meta, &original_schema, &release_schema, &names)?;
        let estimated = estimate::estimate(ctx, &plan, &scan, &mut cache).await?;
        let answers = original_answers(ctx, &q, original).await?;
        out.push((q, answers, estimated));
    }
    Ok(out)
}

/// The query must be about the original: a FROM naming another table (or none that exists)
/// would otherwise be answered silently from `original`.
fn check_from(ctx: &SessionContext, q: &ParsedQuery, original: &str) -> Result<()> {
    let state = ctx.state();
    let defaults = &state.config_options().catalog;
    let resolve = |name: &str| TableReference::from(name).resolve(&defaults.default_catalog, &defaults.default_schema);
    if resolve(&q.from) == resolve(original) {
        return Ok(());
    }
    Err(AnonError::argument(
        "query_error",
        "query",
        format!("reads FROM {} but the original is '{original}': write the query against the original table", q.from),
    ))
}

/// Group key → (sort key, answer) of the query on the original table.
async fn original_answers(
    ctx: &SessionContext,
    q: &ParsedQuery,
    original: &str,
) -> Result<HashMap<String, (Vec<Val>, Option<f64>)>> {
    let batches = ctx.sql(&q.original_sql(original)).await?.collect().await?;
    let mut out = HashMap::new();
    for b in &batches {
        let parts: Vec<Vec<Val>> = (0..q.groups.len()).map(|i| key_values(b, i)).collect::<Result<_>>()?;
        let v = cast(b.column(q.groups.len()), &DataType::Float64)?;
        let v = v.as_primitive::<Float64Type>();
        for r in 0..b.num_rows() {
            let sort: Vec<Val> = parts.iter().map(|p| p[r].clone()).collect();
            let value = (!v.is_null(r)).then(|| v.value(r));
            out.insert(group_key(&sort), (sort, value));
        }
    }
    Ok(out)
}

/// Values of one grouping column as key parts: numbers as numbers (so `35` and `35.0` agree).
fn key_values(b: &RecordBatch, i: usize) -> Result<Vec<Val>> {
    let c = b.column(i);
    if c.data_type().is_numeric() {
        let f = cast(c, &DataType::Float64)?;
        let f = f.as_primitive::<Float64Type>();
        return Ok((0..f.len()).map(|r| if f.is_null(r) { Val::Null } else { Val::Num(f.value(r)) }).collect());
    }
    let s = cast(c, &DataType::Utf8)?;
    let s = s.as_string::<i32>();
    Ok((0..s.len()).map(|r| if s.is_null(r) { Val::Null } else { Val::Str(Arc::from(s.value(r))) }).collect())
}

fn merge(
    sql: &str,
    q: &ParsedQuery,
    original: HashMap<String, (Vec<Val>, Option<f64>)>,
    estimated: Groups,
) -> QueryReport {
    let zero = q.agg.missing_is_zero();
    let mut keys: Vec<(Vec<Val>, String)> = original.iter().map(|(k, (s, _))| (s.clone(), k.clone())).collect();
    keys.extend(estimated.iter().filter(|(k, _)| !original.contains_key(*k)).map(|(k, g)| (g.sort.clone(), k.clone())));
    keys.sort_by(|a, b| report::compare_keys(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    let estimate_of = |k: &str| -> Option<f64> {
        match (estimated.get(k), &q.agg) {
            (Some(g), Agg::Sum(_)) => Some(g.sum),
            (Some(g), Agg::Avg(_)) => (g.count > 0.0).then(|| g.sum / g.count),
            (Some(g), _) => Some(g.count),
            (None, _) => zero.then_some(0.0),
        }
    };
    let groups = keys
        .into_iter()
        .map(|(_, key)| {
            let in_original = original.get(&key);
            // A query without GROUP BY has its one group on both sides, whatever its answer.
            let presence = match (in_original.is_some(), estimated.contains_key(&key)) {
                _ if q.groups.is_empty() => Presence::Both,
                (true, true) => Presence::Both,
                (true, false) => Presence::Missing,
                (false, _) => Presence::Spurious,
            };
            let original = match in_original {
                Some((_, v)) => v.or(zero.then_some(0.0)),
                None => zero.then_some(0.0),
            };
            let mass = estimated.get(&key).map_or(0.0, |g| g.count);
            GroupError { estimate: estimate_of(&key), original, key, presence, mass }
        })
        .collect();
    QueryReport { query: sql.to_string(), groups, additive: zero }
}
