//! kanon_anonymize on wide synthetic tables (issue 21): 1,000,000 records with 12 and with 15
//! quasi-identifiers, lattices of millions to billions of nodes, far above the default
//! `max_nodes` (100,000), so `search=auto` runs the heuristic with its time budget (1 s by
//! default) and reports how far the result is from the proven lower bound. Goal: a result in
//! < 2 s, the bound gap reported.
//!
//! The generator (below) is seeded and self-contained: every quasi-identifier gets a
//! hierarchy (numeric interval bands or categorical trees of fixed fan-out, heights 2–4) and
//! skewed values (a power law over the leaves, and a shared latent "profile" per record so
//! attributes are correlated, as in real registries). The frequency table is counted
//! directly; `aggregate` in the printout is that counting, not a DataFusion plan.
//!
//! Run: `cargo bench --bench kanon_wide`

use anonfusion::encode::{FrequencyTable, QiColumn};
use anonfusion::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind, widths_hierarchy};
use anonfusion::methods::kanon::{KanonConfig, search};
use criterion::{Criterion, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
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

/// The frequency table of a seeded 1M-record table with the first `qis` shapes.
fn wide_table(qis: usize, seed: u64) -> FrequencyTable {
    let hs: Vec<Arc<Hierarchy>> = SHAPES[..qis].iter().enumerate().map(|(a, s)| Arc::new(hierarchy(a, s))).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut counts: HashMap<Vec<u32>, u64> = HashMap::new();
    for _ in 0..ROWS {
        let profile: f64 = rng.random();
        let tuple: Vec<u32> = hs.iter().map(|h| draw(&mut rng, h.leaf_count(), profile)).collect();
        *counts.entry(tuple).or_default() += 1;
    }
    let mut cols: Vec<Vec<u32>> = vec![Vec::with_capacity(counts.len()); qis];
    let mut freq = Vec::with_capacity(counts.len());
    for (tuple, n) in counts {
        for (a, c) in tuple.into_iter().enumerate() {
            cols[a].push(c);
        }
        freq.push(n);
    }
    let qis = hs
        .iter()
        .zip(cols)
        .enumerate()
        .map(|(a, (h, codes))| QiColumn { name: format!("q{a}"), hierarchy: h.clone(), codes })
        .collect();
    FrequencyTable::from_parts(qis, None, freq).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("kanon_wide_1m");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    for qis in [12, 15] {
        let start = Instant::now();
        let ft = wide_table(qis, 21);
        let aggregate_ms = start.elapsed().as_secs_f64() * 1e3;
        println!("\n{qis} QIs: {} distinct tuples of {ROWS} records, counted in {aggregate_ms:.0} ms", ft.len());
        for options in ["", "suppression=2"] {
            let config = KanonConfig::new(5).with_options(options).unwrap();
            let start = Instant::now();
            let res = search(&ft, &config).unwrap().unwrap();
            let ms = start.elapsed().as_secs_f64() * 1e3;
            println!(
                "\n{qis} QIs, {} distinct tuples (counted in {aggregate_ms:.0} ms), k=5 '{options}': {} search, \
                 {ms:.0} ms, {} of {} nodes checked, node {:?}, LM {:.4}, proven lower bound {:.4}, gap {:.4}{}",
                ft.len(),
                if res.heuristic { "heuristic" } else { "optimal" },
                res.nodes_evaluated,
                res.nodes_total,
                res.levels,
                res.loss,
                res.loss_lower_bound,
                res.loss - res.loss_lower_bound,
                if res.proven_optimal { " (proven optimal)" } else { "" }
            );
            let name = format!("{qis}qi_k5{}", if options.is_empty() { "" } else { "_supp2" });
            g.bench_function(name, |b| b.iter(|| search(&ft, &config).unwrap().unwrap().loss));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
