//! Query-error benchmark (issue 3 target, release build on the 2-core reference machine):
//! Q1 through the harness on the full 1,375,900-row NPS-like release in under 1 s (original
//! answer, aggregation of the release to distinct tuples, estimate and report).
//!
//! Run: `cargo bench --bench query_error`

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

const Q1: &str = include_str!("../sql/q1.sql");

fn bench_q1(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async {
        ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await?;
        ctx.sql("SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')").await?.collect().await
    })
    .unwrap();
    let mut g = c.benchmark_group("query_error");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("q1_nps_1.4M_release", |b| {
        b.iter(|| rt.block_on(anonfusion::eval::query_error(&ctx, &registry, Q1, "nps", "nps_g", None)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_q1);
criterion_main!(benches);
