//! hceil_anonymize (issue targets, release build, 2-core machine):
//! - Adult (7 quasi-identifiers, occupation sensitive), k = 5, h = 0.3, the whole pruned
//!   lattice with counterfeits, catalog and RCE built for every node (`search=exhaustive`,
//!   no counterfeit limit): < 2 s. The default bounded search is measured beside it.
//! - NPS-like, 1,375,900 rows, k = 10, h = 0.2, the whole SQL call (aggregation, search,
//!   release and catalog tables): < 15 s. Peak memory (< 2 GB) is measured on the CLI with
//!   `/usr/bin/time -v` (docs/results/hceil.md), not here.
//!
//! Run: `cargo bench --bench hceil`

use anonfusion::encode::frequency_table;
use anonfusion::methods::hceil::{HceilConfig, search};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn adult(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('adult')").await?.collect().await }).unwrap();
    let meta = registry.require("adult").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "adult", &meta, Some("occupation"))).unwrap();
    let mut g = c.benchmark_group("hceil_adult_k5_h0.3");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, options) in [
        ("whole_pruned_lattice", "seed=1, search=exhaustive, max_counterfeits=none"),
        ("bounded_default_limit", "seed=1"),
    ] {
        let config = HceilConfig::new(5, Some(0.3)).with_options(options).unwrap();
        g.bench_function(name, |b| b.iter(|| search(&ft, &config, &Silent).unwrap().rce()));
    }
    g.finish();
}

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await }).unwrap();
    let mut g = c.benchmark_group("hceil_nps_k10_h0.2");
    g.sample_size(10).measurement_time(Duration::from_secs(60));
    g.bench_function("sql_call", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo: every call aggregates, searches and builds.
            ctx.deregister_table("nps_h").unwrap();
            rt.block_on(async {
                ctx.sql("SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')")
                    .await?
                    .collect()
                    .await
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, adult, nps);
criterion_main!(benches);
