//! kanon_anonymize and hceil_anonymize (the whole SQL call: aggregation, search,
//! materialization) on 20,000 NPS-like rows, locally and on a standalone in-process Ballista
//! cluster. Small enough for CI's single test-mode run; the 1.4M and 14M row measurements,
//! pass by pass with the client's memory, come from `examples/scale_passes.rs` and are in
//! docs/scale-out.md. On a standalone cluster the same two cores run the client, scheduler
//! and executor, so this shows Ballista's overhead (planning, shipping, Parquet), not a
//! speed-up; the gain of a cluster is machines and memory beyond the client's.
//!
//! Run: `cargo bench --features ballista --bench scale`

use anonfusion::scale::{Cluster, session};
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let local = anonfusion::new_session();
    let cluster = rt.block_on(session(&Cluster::Standalone)).unwrap().0;
    for ctx in [&local, &cluster] {
        rt.block_on(async { ctx.sql("SELECT * FROM load_dataset('nps', 20000, 1)").await?.collect().await }).unwrap();
    }
    let mut g = c.benchmark_group("scale_nps_20k");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let calls = [
        ("kanon_k10", "nps_k", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10)"),
        ("hceil_k10_h0.2", "nps_h", "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2, 'seed=1')"),
    ];
    for (engine, ctx) in [("local", &local), ("standalone", &cluster)] {
        for (name, output, sql) in calls {
            g.bench_function(format!("{engine}/{name}"), |b| b.iter(|| call(&rt, ctx, output, sql)));
        }
    }
    g.finish();
}

/// One call, recomputed: dropping the output defeats the memo. The call runs as a task on a
/// runtime worker, as in the tests: run on the thread that called `block_on`, the in-process
/// cluster's tasks hang (seen with the standalone session).
fn call(rt: &tokio::runtime::Runtime, ctx: &SessionContext, output: &str, sql: &str) {
    ctx.deregister_table(output).unwrap();
    let (ctx, sql) = (ctx.clone(), sql.to_string());
    rt.block_on(rt.spawn(async move { ctx.sql(&sql).await?.collect().await })).unwrap().unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
