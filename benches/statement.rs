//! Whole SQL statements on NPS-like rows (issue 36, points 1 and 4): `kanon_anonymize`'s
//! statement beside its own report's passes (the goal: the statement within 1.5x aggregate +
//! search, materialize <= aggregate), and the Arrow bytes per row of the source and of each
//! release (kanon, hceil, IPA), every buffer counted once.
//!
//! Rows: `ANONFUSION_BENCH_ROWS` (default 100,000, so CI's test-mode run stays short; the
//! numbers in docs/results/scaling.md are at 5,000,000 in the release build).
//!
//! Run: `ANONFUSION_BENCH_ROWS=5000000 cargo bench --bench statement`

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::{Array, ArrayData, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use std::collections::HashSet;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let rows: usize = std::env::var("ANONFUSION_BENCH_ROWS").ok().and_then(|r| r.parse().ok()).unwrap_or(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = anonfusion::new_session();
    run(&rt, &ctx, &format!("SELECT COUNT(*) FROM load_dataset('nps', {rows}, 1)"));
    let statements = [
        ("nps_k", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10)"),
        ("nps_h", "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2)"),
        ("nps_ipa", "SELECT COUNT(*) FROM set_privacy_budget('nps', 1.0)"),
        ("nps_ipa", "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0)"),
    ];
    for (_, sql) in statements {
        run(&rt, &ctx, sql);
    }
    eprintln!("kanon's first call (its frequency table aggregated): {}", report(&rt, &ctx).describe());
    eprintln!("Arrow bytes per source row ({rows} rows):");
    for table in ["nps", "nps_k", "nps_h", "nps_ipa"] {
        let (bytes, n) = footprint(&rt, &ctx, table);
        eprintln!("  {table}: {:.1} ({n} rows)", bytes as f64 / rows as f64);
    }

    let mut g = c.benchmark_group(format!("statement_nps_{rows}"));
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("kanon_k10", |b| {
        b.iter(|| {
            ctx.deregister_table("nps_k").unwrap();
            run(&rt, &ctx, statements[0].1)
        })
    });
    g.finish();
    passes(&rt, &ctx, statements[0].1);
}

/// A kanon report's passes, ms.
struct Passes {
    time: f64,
    aggregate: f64,
    search: f64,
    materialize: f64,
}

impl Passes {
    fn describe(&self) -> String {
        format!(
            "time_ms {:.0}, aggregate_ms {:.0}, search_ms {:.0}, materialize_ms {:.0}; \
             time / (aggregate + search) {:.2}, materialize / aggregate {:.2}",
            self.time,
            self.aggregate,
            self.search,
            self.materialize,
            self.time / (self.aggregate + self.search),
            self.materialize / self.aggregate
        )
    }
}

/// The passes of the last `kanon_anonymize` call's report (`nps_k_report`).
fn report(rt: &tokio::runtime::Runtime, ctx: &SessionContext) -> Passes {
    let b = collect(rt, ctx, "SELECT time_ms, aggregate_ms, search_ms, materialize_ms FROM nps_k_report");
    let v = |i: usize| cast(b[0].column(i), &DataType::Float64).unwrap().as_primitive::<Float64Type>().value(0);
    Passes { time: v(0), aggregate: v(1), search: v(2), materialize: v(3) }
}

/// The median of five later calls' passes (the frequency table is reused from the first).
fn passes(rt: &tokio::runtime::Runtime, ctx: &SessionContext, sql: &str) {
    let mut seen = Vec::new();
    for _ in 0..5 {
        ctx.deregister_table("nps_k").unwrap();
        run(rt, ctx, sql);
        seen.push(report(rt, ctx));
    }
    let median = |f: fn(&Passes) -> f64| {
        let mut v: Vec<f64> = seen.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let m = Passes {
        time: median(|p| p.time),
        aggregate: median(|p| p.aggregate),
        search: median(|p| p.search),
        materialize: median(|p| p.materialize),
    };
    eprintln!("kanon's later calls (frequency table reused), median of 5: {}", m.describe());
}

/// Arrow memory of a registered table, and its rows: every buffer counted once by its
/// allocation (a scan hands out slices of one batch, and a release's label values are shared).
fn footprint(rt: &tokio::runtime::Runtime, ctx: &SessionContext, table: &str) -> (usize, usize) {
    fn add(d: &ArrayData, seen: &mut HashSet<usize>, bytes: &mut usize) {
        for buf in d.buffers().iter().chain(d.nulls().map(|n| n.buffer())) {
            if seen.insert(buf.data_ptr().as_ptr() as usize) {
                *bytes += buf.capacity();
            }
        }
        for child in d.child_data() {
            add(child, seen, bytes);
        }
    }
    let batches = collect(rt, ctx, &format!("SELECT * FROM {table}"));
    let (mut seen, mut bytes) = (HashSet::new(), 0);
    for c in batches.iter().flat_map(|b| b.columns()) {
        add(&c.to_data(), &mut seen, &mut bytes);
    }
    (bytes, batches.iter().map(RecordBatch::num_rows).sum())
}

fn run(rt: &tokio::runtime::Runtime, ctx: &SessionContext, sql: &str) {
    collect(rt, ctx, sql);
}

fn collect(rt: &tokio::runtime::Runtime, ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    let (ctx, sql) = (ctx.clone(), sql.to_string());
    rt.block_on(rt.spawn(async move { ctx.sql(&sql).await?.collect().await })).unwrap().unwrap()
}

criterion_group!(benches, bench);
criterion_main!(benches);
