//! dp_synthesize (issue 33 targets, release build): the NPS-like table at 1,375,900 rows,
//! ε = 1, under 10 s and 2 GB. Rows: the method alone on the encoded table (`method`: noisy
//! marginals, tree selection over all pairs, the model, the three-way selection and marginal,
//! 1.4 M records drawn) and the whole SQL
//! call (`sql_call`: aggregation of the rows, the above, the release's rows and tables). Peak
//! memory is measured on the CLI with `/usr/bin/time -v` (docs/results/synth.md), not here.
//!
//! Run: `cargo bench --bench synth`

mod common;

use anonfusion::methods::synth::{Encoded, SynthConfig, synthesize};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let common::Nps { rt, ctx, public, .. } = common::nps();
    // The SQL call's default levels on this table: age in 5-year bands, length of stay in 5-day
    // bands.
    let data = Encoded::from_table(&public, &[1, 0, 1, 0, 0]).unwrap();
    let mut g = c.benchmark_group("synth_nps_1375900_eps1");
    g.sample_size(10).measurement_time(Duration::from_secs(40));
    let config = SynthConfig { seed: Some(1), ..SynthConfig::new(1.0) };
    g.bench_function("method", |b| b.iter(|| synthesize(&data, &config, &Silent).unwrap().records));
    g.bench_function("sql_call", |b| {
        b.iter(|| {
            // Dropping the output defeats the memo: every call aggregates, measures, draws and builds.
            ctx.deregister_table("nps_syn").unwrap();
            let sql = "SELECT COUNT(*) FROM dp_synthesize('nps', 'nps_syn', 1.0, 'seed=1')";
            rt.block_on(async { ctx.sql(sql).await?.collect().await }).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, nps);
criterion_main!(benches);
