//! ipa_release (issue target, release build, 2-core machine): the NPS-like table at the IPA
//! paper's size, 1,361,000 rows, epsilon = 1 with the paper's split, every lattice node
//! perturbed (Algorithm 1) and scored (IL = NCP + EMD + Rate), the node chosen by Eq. 12 and
//! the release built: under 15 s. Peak memory (< 2 GB) is measured on the CLI with
//! `/usr/bin/time -v` (docs/results/ipa.md), not here.
//!
//! Run: `cargo bench --bench ipa`

use anonfusion::encode::frequency_table;
use anonfusion::methods::ipa::{IpaConfig, search};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps', 1361000)").await?.collect().await }).unwrap();
    let meta = registry.require("nps").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, Some("disease"))).unwrap();
    let mut g = c.benchmark_group("ipa_nps_1361000_eps1");
    g.sample_size(10).measurement_time(Duration::from_secs(40));
    let config = IpaConfig::new(1.0).with_seed(1);
    g.bench_function("whole_lattice", |b| b.iter(|| search(&ft, &config, &Silent).unwrap().il()));
    g.bench_function("sql_call", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo: every call aggregates, perturbs, scores and builds.
            ctx.deregister_table("nps_ipa").unwrap();
            rt.block_on(async {
                ctx.sql("SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, 'seed=1')").await?.collect().await
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, nps);
criterion_main!(benches);
