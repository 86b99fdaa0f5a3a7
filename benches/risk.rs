//! risk_report (issue 35's target, release build): the whole report on the NPS-like table raw
//! (1,375,900 rows, its declared quasi-identifiers), with a population (fraction 0.1, so every
//! population model runs): < 1 s.
//!
//! Run: `cargo bench --bench risk`

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await }).unwrap();
    let mut g = c.benchmark_group("risk_report_nps");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("raw_fraction_0.1", |b| {
        b.iter(|| {
            rt.block_on(async {
                ctx.sql("SELECT * FROM risk_report('nps', '', 'fraction=0.1')").await?.collect().await
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, nps);
criterion_main!(benches);
