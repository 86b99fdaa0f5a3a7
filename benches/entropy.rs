//! entropy_anonymize (issue target, release build, 2-core machine): Adult, all of the ARX
//! file's attributes (8 quasi-identifiers with salary_class, occupation sensitive), k = 3,
//! under 30 s. Measured: the clustering with the paper's d and with CE alone, the paper's two
//! baselines as guarded Q-blocks (CE with entropy_l=3, CE with t=0.15), and the whole SQL call
//! (aggregation, clustering, release).
//!
//! Run: `cargo bench --bench entropy`

use anonfusion::encode::frequency_table;
use anonfusion::methods::entropy::{EntropyConfig, cluster};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

const ROLES: &str = "SELECT * FROM declare_roles('adult', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, \
    native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive')";

fn adult(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    for sql in ["SELECT * FROM load_dataset('adult')", ROLES] {
        rt.block_on(async { ctx.sql(sql).await?.collect().await }).unwrap();
    }
    let meta = registry.require("adult").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "adult", &meta, Some("occupation"))).unwrap();
    let mut g = c.benchmark_group("entropy_adult_k3");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    let runs = [
        ("d", "seed=1"),
        ("ce", "seed=1, distance=ce"),
        ("ce_entropy_l3", "seed=1, distance=ce, entropy_l=3"),
        ("ce_t015", "seed=1, distance=ce, t=0.15"),
    ];
    for (name, options) in runs {
        let config = EntropyConfig::new(3).with_options(options).unwrap();
        g.bench_function(name, |b| b.iter(|| cluster(&ft, &config, &Silent).unwrap().measures.total_information_loss));
    }
    g.bench_function("sql_call_d", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo: every call aggregates, clusters and builds.
            ctx.deregister_table("adult_e").unwrap();
            rt.block_on(async {
                ctx.sql("SELECT COUNT(*) FROM entropy_anonymize('adult', 'adult_e', 3, 'seed=1')")
                    .await?
                    .collect()
                    .await
            })
            .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, adult);
criterion_main!(benches);
