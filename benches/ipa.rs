//! ipa_release (issue targets, release build, 2-core machine): the NPS-like table at 1,375,900
//! rows, epsilon = 1. The sound default (every lattice node scored from the exact frequency
//! table, the node chosen by the exponential mechanism, the chosen node's histogram drawn and
//! the release built): under 15 s. Rows: the sound default (`pure`) and `approx` on the frequency table,
//! the whole SQL call (aggregation of the rows, the above, the tables), and the paper's mode
//! for comparison. Peak memory (< 2 GB) is measured on the CLI with `/usr/bin/time -v`
//! (docs/results/ipa.md), not here.
//!
//! Run: `cargo bench --bench ipa`

use anonfusion::encode::frequency_table;
use anonfusion::methods::ipa::domain::{informative_domain, public_table};
use anonfusion::methods::ipa::sound::{DpConfig, release};
use anonfusion::methods::ipa::{Guarantee, IpaConfig, search};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await }).unwrap();
    let meta = registry.require("nps").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, Some("disease"))).unwrap();
    let domain = informative_domain("bench", "nps", &meta, "disease", None).unwrap();
    let public = public_table("bench", "nps", &ft, &domain).unwrap();
    let mut g = c.benchmark_group("ipa_nps_1375900_eps1");
    g.sample_size(10).measurement_time(Duration::from_secs(40));
    for (name, guarantee) in [
        ("pure_default_whole_lattice", anonfusion::methods::ipa::call::DEFAULT_GUARANTEE),
        ("approx_whole_lattice", Guarantee::Approx { delta: anonfusion::methods::ipa::guarantee::DEFAULT_DELTA }),
    ] {
        let mut config = DpConfig::new(1.0, guarantee);
        config.seed = Some(1);
        g.bench_function(name, |b| b.iter(|| release(&public, &config, &Silent).unwrap().histogram.released_records));
    }
    g.bench_function("sql_call", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo: every call aggregates, scores, draws and builds.
            ctx.deregister_table("nps_ipa").unwrap();
            rt.block_on(async {
                ctx.sql("SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, 'seed=1')").await?.collect().await
            })
            .unwrap()
        })
    });
    let paper = IpaConfig::new(1.0).with_seed(1);
    g.bench_function("paper_whole_lattice", |b| b.iter(|| search(&ft, &paper, &Silent).unwrap().il()));
    g.finish();
}

criterion_group!(benches, nps);
criterion_main!(benches);
