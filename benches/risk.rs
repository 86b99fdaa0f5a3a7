//! risk_report (issue 35's targets, release build): the whole report on the NPS-like table raw
//! (1,375,900 rows, its declared quasi-identifiers), with a population (fraction 0.1, so every
//! population model runs): < 1 s; beside it the DataFusion GROUP BY the report's classes were
//! once counted with, for the ratio in one run. And SUDA on Adult's seven quasi-identifiers:
//! the report with `suda=true` beside the report without.
//!
//! Run: `cargo bench --bench risk` (the dev profile: `cargo bench --bench risk --profile dev`)

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

/// Time `sql`, collected, as `name` in `group`.
fn case(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &tokio::runtime::Runtime,
    ctx: &SessionContext,
    name: &str,
    sql: &str,
) {
    g.bench_function(name, |b| b.iter(|| rt.block_on(async { ctx.sql(sql).await?.collect().await }).unwrap()));
}

fn session(rt: &tokio::runtime::Runtime, dataset: &str) -> SessionContext {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    let load = format!("SELECT * FROM load_dataset('{dataset}')");
    rt.block_on(async { ctx.sql(&load).await?.collect().await }).unwrap();
    ctx
}

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = session(&rt, "nps");
    let mut g = c.benchmark_group("risk_report_nps");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    case(&mut g, &rt, &ctx, "raw_fraction_0.1", "SELECT * FROM risk_report('nps', '', 'fraction=0.1')");
    case(
        &mut g,
        &rt,
        &ctx,
        "group_by_alone",
        "SELECT COUNT(*) FROM (SELECT age, sex, length_of_stay, location, surgery, COUNT(*) FROM nps GROUP BY 1, 2, 3, 4, 5)",
    );
    g.finish();
}

fn adult_suda(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = session(&rt, "adult");
    let mut g = c.benchmark_group("risk_report_adult");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    case(&mut g, &rt, &ctx, "suda", "SELECT * FROM risk_report('adult', '', 'suda=true')");
    case(&mut g, &rt, &ctx, "without_suda", "SELECT * FROM risk_report('adult')");
    g.finish();
}

criterion_group!(benches, nps, adult_suda);
criterion_main!(benches);
