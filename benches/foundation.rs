//! Foundation benchmarks (issue targets, release build on the 2-core reference machine):
//! grouping all 2,160 Adult nodes < 1 s; grouping every node of the NPS-like lattice
//! (1.4M rows, frequency-table pass included) < 5 s; generating the NPS-like table < 5 s;
//! generating EHRD-like < 20 s.
//!
//! Run: `cargo bench --bench foundation`

use anonfusion::datasets::{nps, rt};
use anonfusion::encode::{FrequencyTable, for_each_node, frequency_table};
use anonfusion::lattice::Lattice;
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::SessionContext;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

/// Load a bundled dataset into a fresh session; returns the session and its declarations.
fn loaded(rt: &tokio::runtime::Runtime, name: &str) -> (SessionContext, anonfusion::TableMeta) {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rt.block_on(async { ctx.sql(&format!("SELECT * FROM load_dataset('{name}')")).await?.collect().await }).unwrap();
    let meta = registry.require(name).unwrap();
    (ctx, meta)
}

fn group_all(ft: &FrequencyTable) -> usize {
    let lattice = Lattice::new(&ft.heights());
    let mut classes = 0;
    for_each_node(ft, &lattice, |_, g| {
        classes += g.len();
        Ok(())
    })
    .unwrap();
    classes
}

fn bench_grouping(c: &mut Criterion) {
    let rt = runtime();
    let (ctx, meta) = loaded(&rt, "adult");
    let ft = rt.block_on(frequency_table(&ctx, "adult", &meta, None)).unwrap();
    let mut g = c.benchmark_group("grouping");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("adult_all_2160_nodes", |b| b.iter(|| group_all(&ft)));

    let (ctx, meta) = loaded(&rt, "nps");
    g.bench_function("nps_1.4M_all_nodes_with_frequency_pass", |b| {
        b.iter(|| {
            let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, None)).unwrap();
            group_all(&ft)
        })
    });
    let ft = rt.block_on(frequency_table(&ctx, "nps", &meta, None)).unwrap();
    g.bench_function("nps_1.4M_all_nodes_rollups_only", |b| b.iter(|| group_all(&ft)));
    g.finish();
}

fn bench_generators(c: &mut Criterion) {
    let mut g = c.benchmark_group("generate");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("nps_1375900_rows", |b| b.iter(|| nps::nps_like(nps::DEFAULT_ROWS, 7).unwrap().num_rows()));
    g.bench_function("ehrd_208387_records", |b| {
        b.iter(|| rt::rt_dataset(rt::RtPreset::Ehrd, None, 7).unwrap().num_rows())
    });
    g.finish();
}

criterion_group!(benches, bench_grouping, bench_generators);
criterion_main!(benches);
