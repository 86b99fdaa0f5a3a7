//! Query-error functions (the logic lives in `crate::eval`):
//! - `query_error(sql, original, release [, catalog])`: the query's answer on `original` next
//!   to its estimate from `release` per group, with absolute and relative errors, and summary
//!   rows: `SUMMARY` (ARE over the original's groups, the headline), `SUMMARY missing`,
//!   `SUMMARY spurious` and `SUMMARY union` (docs/query_error.md);
//! - `workload_queries(table, 'W1'|'W2'|'W3'|'attribute', n [, seed])`: random COUNT queries of
//!   the papers' workloads as rows (query_id, sql);
//! - `workload_error(original, release, 'W1'|'W2'|'W3'|'attribute', n [, seed [, catalog]])`: every
//!   query of such a workload through the harness, one row per query (its ARE over the
//!   original's groups, the union ARE, missing and spurious groups with the release's records
//!   in the spurious ones) and a final row with query_id NULL: the workload's ARE (ArtUC paper,
//!   Def. 7), the mean union ARE and the summed counts.

use super::args::Args;
use super::glue::session_context;
use super::report::{self, Column::*};
use crate::eval::{QueryReport, Summary, query_errors, workload};
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const QUERY_ERROR_SIG: &str = "query_error(sql, original, release [, catalog])";
pub(super) const WORKLOAD_QUERIES_SIG: &str = "workload_queries(table, 'W1'|'W2'|'W3'|'attribute', n [, seed])";
pub(super) const WORKLOAD_ERROR_SIG: &str =
    "workload_error(original, release, 'W1'|'W2'|'W3'|'attribute', n [, seed [, catalog]])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, "query_error", query_error);
    super::glue::register_fn(ctx, &registry, "workload_queries", workload_queries);
    super::glue::register_fn(ctx, &registry, "workload_error", workload_error);
}

fn query_error(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("query_error", QUERY_ERROR_SIG, args.exprs(), 3, 4)?;
    let (sql, original, release) = (a.str(0, "sql")?, a.str(1, "original")?, a.str(2, "release")?);
    let catalog = a.opt_str(3, "catalog")?;
    let ctx = session_context(&args)?;
    let report = block_on(crate::eval::query_error(&ctx, registry, &sql, &original, &release, catalog.as_deref()))?;
    Ok(super::glue::mem_table(QueryReport::schema(), vec![report.to_batch()?])?)
}

fn workload_queries(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("workload_queries", WORKLOAD_QUERIES_SIG, args.exprs(), 3, 4)?;
    let (table, kind) = (a.str(0, "table")?, a.str(1, "workload")?);
    let n = a.opt_u64(2, "n")?.unwrap_or(100) as usize;
    let seed = a.opt_u64(3, "seed")?;
    let kind = workload::Workload::parse(&kind)?;
    let ctx = session_context(&args)?;
    let queries = block_on(workload::generate(&ctx, registry, &table, kind, n, seed))?;
    Ok(report::table(vec![("query_id", Int((1..=queries.len() as i64).collect())), ("sql", Text(queries))])?)
}

fn workload_error(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("workload_error", WORKLOAD_ERROR_SIG, args.exprs(), 4, 6)?;
    let (original, release, kind) = (a.str(0, "original")?, a.str(1, "release")?, a.str(2, "workload")?);
    let n = a.opt_u64(3, "n")?.unwrap_or(100) as usize;
    let (seed, catalog) = (a.opt_u64(4, "seed")?, a.opt_str(5, "catalog")?);
    let kind = workload::Workload::parse(&kind)?;
    let ctx = session_context(&args)?;
    let reg = registry;
    let (queries, summaries) = block_on(async {
        let queries = workload::generate(&ctx, reg, &original, kind, n, seed).await?;
        let reports = query_errors(&ctx, reg, &queries, &original, &release, catalog.as_deref()).await?;
        let summaries: Vec<Summary> = reports.iter().map(QueryReport::summary).collect();
        Ok::<_, crate::error::AnonError>((queries, summaries))
    })?;
    let ids: Vec<Option<i64>> = (1..=queries.len() as i64).map(Some).chain([None]).collect();
    let sql: Vec<String> = queries.into_iter().chain([format!("SUMMARY: workload {kind:?}")]).collect();
    // Per query, then the workload: mean AREs (of the queries that have one), summed counts.
    let ares = |f: &dyn Fn(&Summary) -> Option<f64>| {
        let per: Vec<Option<f64>> = summaries.iter().map(f).collect();
        let answered: Vec<f64> = per.iter().flatten().copied().collect();
        let mean = (!answered.is_empty()).then(|| answered.iter().sum::<f64>() / answered.len() as f64);
        OptFloat(per.into_iter().chain([mean]).collect())
    };
    let counts = |f: &dyn Fn(&Summary) -> usize| {
        let per: Vec<i64> = summaries.iter().map(|s| f(s) as i64).collect();
        let total = per.iter().sum();
        Int(per.into_iter().chain([total]).collect())
    };
    let mass: Vec<f64> = summaries.iter().map(|s| s.spurious.mass).collect();
    let mass = Float(mass.iter().copied().chain([mass.iter().sum()]).collect());
    Ok(report::table(vec![
        ("query_id", OptInt(ids)),
        ("sql", Text(sql)),
        ("are", ares(&Summary::are)),
        ("union_are", ares(&|s| s.union.are)),
        ("missing_groups", counts(&|s| s.missing.groups)),
        ("spurious_groups", counts(&|s| s.spurious.groups)),
        ("spurious_records", mass),
    ])?)
}
