//! kanon_anonymize on wide synthetic tables (issue 21): 1,000,000 records with 12 and with 15
//! quasi-identifiers, lattices of millions to billions of nodes, far above the default
//! `max_nodes` (100,000), so `search=auto` runs the heuristic with its work budget (by default
//! 20,000,000 / distinct tuples node checks, at least 8) and reports how far the result is from
//! the proven lower bound. Goal: a result in < 2 s, the bound gap reported.
//!
//! The generator (below) is seeded and self-contained: every quasi-identifier gets a
//! hierarchy (numeric interval bands or categorical trees of fixed fan-out, heights 2–4) and
//! skewed values (a power law over the leaves, and a shared latent "profile" per record so
//! attributes are correlated, as in real registries). The rows are an in-memory table of
//! Int64 and Utf8 columns; each measurement is the call's work before the release: the
//! frequency table of the raw rows (`encode::frequency_table`), then the search.
//!
//! Run: `cargo bench --bench kanon_wide`

use anonfusion::encode::frequency_table;
use anonfusion::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind, widths_hierarchy};
use anonfusion::meta::{Role, TableMeta};
use anonfusion::methods::kanon::{KanonConfig, search};
use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: usize = 1_000_000;

/// One quasi-identifier of the generator.
enum Shape {
    /// Integers in [0, hi] with interval bands of these widths, then `*`.
    Numeric { hi: i64, widths: &'static [i64] },
    /// `leaves` values grouped `fanouts[0]` at a time, those groups `fanouts[1]` at a time, …, then `*`.
    Categorical { leaves: usize, fanouts: &'static [usize] },
}

/// Fifteen attribute shapes; the 12-QI table takes the first twelve.
const SHAPES: [Shape; 15] = [
    Shape::Numeric { hi: 99, widths: &[5, 10, 20] },        // age: height 4
    Shape::Categorical { leaves: 2, fanouts: &[] },         // sex: 1
    Shape::Categorical { leaves: 12, fanouts: &[4] },       // region: 2
    Shape::Numeric { hi: 9_999, widths: &[10, 100, 1000] }, // postcode: 4
    Shape::Categorical { leaves: 16, fanouts: &[4, 2] },    // education: 3
    Shape::Categorical { leaves: 7, fanouts: &[] },         // marital: 1
    Shape::Categorical { leaves: 40, fanouts: &[5, 4] },    // country: 3
    Shape::Categorical { leaves: 24, fanouts: &[6] },       // occupation: 2
    Shape::Numeric { hi: 59, widths: &[5, 15] },            // years insured: 3
    Shape::Categorical { leaves: 5, fanouts: &[] },         // ethnicity: 1
    Shape::Categorical { leaves: 30, fanouts: &[3, 5] },    // hospital: 3
    Shape::Numeric { hi: 11, widths: &[3, 6] },             // admission month: 3
    Shape::Categorical { leaves: 9, fanouts: &[3] },        // insurance: 2
    Shape::Numeric { hi: 19, widths: &[2, 10] },            // household size: 3
    Shape::Categorical { leaves: 50, fanouts: &[10] },      // language: 2
];

fn hierarchy(a: usize, shape: &Shape) -> Hierarchy {
    let name = format!("q{a}");
    match shape {
        Shape::Numeric { hi, widths } => widths_hierarchy(&name, 0, *hi, widths).unwrap(),
        Shape::Categorical { leaves, fanouts } => {
            let mut b = HierarchyBuilder::new(&name, HierarchyKind::Categorical);
            for leaf in 0..*leaves {
                let mut row = vec![format!("v{leaf}")];
                let mut group = leaf;
                for (j, f) in fanouts.iter().enumerate() {
                    group /= f;
                    row.push(format!("g{j}_{group}"));
                }
                row.push("*".into());
                b.row(leaf + 1, row);
            }
            b.build().unwrap()
        }
    }
}

/// A skewed leaf: mostly near the record's profile, power-law spread otherwise.
fn draw(rng: &mut StdRng, leaves: usize, profile: f64) -> u32 {
    let u: f64 = rng.random();
    let x = if rng.random_bool(0.6) { (profile + 0.15 * (u - 0.5)).clamp(0.0, 0.999) } else { u * u * u };
    ((x * leaves as f64) as usize).min(leaves - 1) as u32
}

/// A seeded 1M-record table with the first `qis` shapes, registered in `ctx` as `name` (an
/// in-memory table of Int64 and Utf8 columns, as a loaded CSV or Parquet file gives) with its
/// declarations.
fn wide_table(ctx: &SessionContext, name: &str, qis: usize, seed: u64) -> TableMeta {
    let hs: Vec<Arc<Hierarchy>> = SHAPES[..qis].iter().enumerate().map(|(a, s)| Arc::new(hierarchy(a, s))).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut codes: Vec<Vec<u32>> = vec![Vec::with_capacity(ROWS); qis];
    for _ in 0..ROWS {
        let profile: f64 = rng.random();
        for (a, h) in hs.iter().enumerate() {
            codes[a].push(draw(&mut rng, h.leaf_count(), profile));
        }
    }
    // A numeric shape's leaf i is the value i; a categorical one's is labelled `v{i}`.
    let columns: Vec<ArrayRef> = SHAPES[..qis]
        .iter()
        .zip(&codes)
        .map(|(shape, c)| -> ArrayRef {
            match shape {
                Shape::Numeric { .. } => Arc::new(Int64Array::from_iter_values(c.iter().map(|&v| v as i64))),
                Shape::Categorical { .. } => Arc::new(StringArray::from_iter_values(c.iter().map(|v| format!("v{v}")))),
            }
        })
        .collect();
    let schema = Arc::new(Schema::new(
        (0..qis)
            .map(|a| {
                let t = match SHAPES[a] {
                    Shape::Numeric { .. } => DataType::Int64,
                    Shape::Categorical { .. } => DataType::Utf8,
                };
                Field::new(format!("q{a}"), t, false)
            })
            .collect::<Vec<_>>(),
    ));
    let all = RecordBatch::try_new(schema.clone(), columns).unwrap();
    // Two partitions of 64K-row batches, as a session on this 2-core machine splits a load.
    let mut parts = vec![Vec::new(), Vec::new()];
    for (i, at) in (0..ROWS).step_by(1 << 16).enumerate() {
        parts[i % 2].push(all.slice(at, (1 << 16).min(ROWS - at)));
    }
    ctx.register_table(name, Arc::new(MemTable::try_new(schema, parts).unwrap())).unwrap();
    TableMeta {
        roles: (0..qis).map(|a| (format!("q{a}"), Role::QuasiIdentifier)).collect(),
        hierarchies: hs.iter().enumerate().map(|(a, h)| (format!("q{a}"), h.clone())).collect(),
        ..TableMeta::default()
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let ctx = SessionContext::new();
    let mut g = c.benchmark_group("kanon_wide_1m");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for qis in [12, 15] {
        let name = format!("wide{qis}");
        let meta = wide_table(&ctx, &name, qis, 21);
        // The whole call but the release: the frequency table of the raw rows, then the search.
        let call = |config: &KanonConfig| {
            let start = Instant::now();
            let ft = rt.block_on(frequency_table(&ctx, &name, &meta, None)).unwrap();
            let aggregate_ms = start.elapsed().as_secs_f64() * 1e3;
            let res = search(&ft, config).unwrap().unwrap();
            (ft.len(), aggregate_ms, start.elapsed().as_secs_f64() * 1e3 - aggregate_ms, res)
        };
        for options in ["", "suppression=2"] {
            let config = KanonConfig::new(5).with_options(options).unwrap();
            let (tuples, aggregate_ms, ms, res) = call(&config);
            println!(
                "\n{qis} QIs, {tuples} distinct tuples of {ROWS} records, k=5 '{options}': frequency table \
                 {aggregate_ms:.0} ms + {} search {ms:.0} ms = {:.0} ms, {} of {} nodes checked, node {:?}, \
                 LM {:.4}, proven lower bound {:.4}, gap {:.4}{}",
                if res.heuristic { "heuristic" } else { "optimal" },
                aggregate_ms + ms,
                res.nodes_evaluated,
                res.nodes_total,
                res.levels,
                res.loss,
                res.loss_lower_bound,
                res.loss - res.loss_lower_bound,
                if res.proven_optimal { " (proven optimal)" } else { "" }
            );
            let bench_name = format!("{qis}qi_k5{}", if options.is_empty() { "" } else { "_supp2" });
            g.bench_function(bench_name, |b| b.iter(|| call(&config).3.loss));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
