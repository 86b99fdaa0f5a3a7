//! dp_synthesize (issue 33 targets, release build): the NPS-like table at 1,375,900 rows,
//! ε = 1, under 10 s and 2 GB. Rows: the method alone on the encoded table (`method`: noisy
//! marginals, tree selection over all pairs, the model, 1.4 M records drawn) and the whole SQL
//! call (`sql_call`: aggregation of the rows, the above, the release's rows and tables). Peak
//! memory is measured on the CLI with `/usr/bin/time -v` (docs/results/synth.md), not here.
//!
//! Run: `cargo bench --bench synth`

use anonfusion::encode::frequency_table;
use anonfusion::methods::ipa::domain::{informative_domain, public_table};
use anonfusion::methods::synth::{Encoded, SynthConfig, synthesize};
use anonfusion::progress::Silent;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn nps(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    // The SQL row is seeded (comparable runs): a test fixture, which the session must allow.
    rt.block_on(async { ctx.sql("SET anonfusion.seeded_dp = true").await?.collect().await }).unwrap();
    rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps')").await?.collect().await }).unwrap();
    let meta = registry.require("nps").unwrap();
    let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, Some("disease"))).unwrap();
    let domain = informative_domain("bench", "nps", &meta, "disease", None).unwrap();
    let public = public_table("bench", "nps", &ft, &domain).unwrap();
    // The SQL call's default levels on this table: age by year, length of stay in 5-day bands.
    let levels = [0usize, 0, 1, 0, 0];
    let mut sizes: Vec<usize> = public.qis.iter().zip(levels).map(|(q, l)| q.hierarchy.width(l)).collect();
    let mut columns: Vec<Vec<u32>> = public
        .qis
        .iter()
        .zip(levels)
        .map(|(q, l)| q.codes.iter().map(|&c| q.hierarchy.up(l)[c as usize]).collect())
        .collect();
    sizes.push(domain.len());
    columns.push(public.sensitive.as_ref().unwrap().codes.clone());
    let data = Encoded::new(sizes, columns, public.counts.clone()).unwrap();
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
