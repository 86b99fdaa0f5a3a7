//! kanon_anonymize on Adult (7 quasi-identifiers, occupation sensitive), data already loaded
//! and aggregated (issue targets, release build, 2-core machine): k = 5 without suppression
//! < 40 ms (ARX: ~43 ms CPU for the same search); with a 2 % suppression limit < 150 ms (ARX:
//! ~190 ms); with distinct 3-diversity or t-closeness (t = 0.15) added < 300 ms. The whole SQL
//! call (aggregation, search, release plan) is measured too, for information.
//!
//! Run: `cargo bench --bench kanon`

use anonfusion::encode::frequency_table;
use anonfusion::methods::kanon::{KanonConfig, search};
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('adult')").await?.collect().await }).unwrap();
    let meta = registry.require("adult").unwrap();
    let plain = rt.block_on(frequency_table(&ctx, "adult", &meta, None)).unwrap();
    let with_sensitive = rt.block_on(frequency_table(&ctx, "adult", &meta, Some("occupation"))).unwrap();

    let mut g = c.benchmark_group("kanon_adult_k5");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    for (name, options, ft) in [
        ("no_suppression", "", &plain),
        ("suppression_2pct", "suppression=2", &plain),
        ("distinct_l3_suppression_2pct", "suppression=2, distinct_l=3", &with_sensitive),
        ("t_0.15_suppression_2pct", "suppression=2, t=0.15", &with_sensitive),
        ("distinct_l3", "distinct_l=3", &with_sensitive),
        ("t_0.15", "t=0.15", &with_sensitive),
    ] {
        let config = KanonConfig::new(5).with_options(options).unwrap();
        g.bench_function(name, |b| b.iter(|| search(ft, &config).unwrap().unwrap().loss));
    }
    g.bench_function("sql_call_no_suppression", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo, so every call aggregates, searches and
            // materializes again.
            ctx.deregister_table("adult_k").unwrap();
            rt.block_on(async {
                ctx.sql("SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_k', 5)").await?.collect().await
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
