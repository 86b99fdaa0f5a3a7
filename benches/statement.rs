//! Whole SQL statements on NPS-like rows (issue 36, points 1 and 4): `kanon_anonymize`'s
//! statement beside its own report's passes (the goal: the statement within 1.5x aggregate +
//! search, materialize <= aggregate), and the Arrow bytes per row of the source and of each
//! release (kanon, hceil, IPA), summed with `get_array_memory_size`.
//!
//! Rows: `ANONFUSION_BENCH_ROWS` (default 100,000, so CI's test-mode run stays short; the
//! numbers in docs/results/scaling.md are at 5,000,000 in the release build).
//!
//! Run: `ANONFUSION_BENCH_ROWS=5000000 cargo bench --bench statement`

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
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

/// The median of five calls' report passes, beside the goal's ratios.
fn passes(rt: &tokio::runtime::Runtime, ctx: &SessionContext, sql: &str) {
    let names = ["time_ms", "aggregate_ms", "search_ms", "materialize_ms"];
    let mut seen: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..5 {
        ctx.deregister_table("nps_k").unwrap();
        run(rt, ctx, sql);
        let report = collect(rt, ctx, &format!("SELECT {} FROM nps_k_report", names.join(", ")));
        for (i, s) in seen.iter_mut().enumerate() {
            let v = cast(report[0].column(i), &DataType::Float64).unwrap();
            s.push(v.as_primitive::<Float64Type>().value(0));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let m: Vec<f64> = seen.iter_mut().map(median).collect();
    eprintln!(
        "kanon report, median of 5: time_ms {:.0}, aggregate_ms {:.0}, search_ms {:.0}, materialize_ms {:.0}; \
         time / (aggregate + search) {:.2}, materialize / aggregate {:.2}",
        m[0],
        m[1],
        m[2],
        m[3],
        m[0] / (m[1] + m[2]),
        m[3] / m[1]
    );
}

/// Arrow memory of a registered table's batches, and its rows. A release is one batch, so
/// its label values are counted once.
fn footprint(rt: &tokio::runtime::Runtime, ctx: &SessionContext, table: &str) -> (usize, usize) {
    let batches = collect(rt, ctx, &format!("SELECT * FROM {table}"));
    let bytes = batches.iter().flat_map(|b| b.columns().iter().map(|c| c.get_array_memory_size())).sum();
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
