//! The default `ipa_release` on tables it was never tuned for (issue 32). A table without a
//! declared plan gets the automatic adaptive plan: its root chosen privately (a DP output),
//! everything else a function of that root and the public domain (the same root gives the same
//! plan on a small and a large table with the same hierarchies, every run), and a release with
//! about as many rows as the table has records; the adaptive coarse level no longer turns
//! empty root cells into counterfeits.

mod common;

use anonfusion::encode::FrequencyTable;
use anonfusion::methods::ipa::adaptive::{self, AdaptiveConfig};
use anonfusion::methods::ipa::domain::public_table;
use common::random_table;
use std::collections::HashMap;

/// Four quasi-identifiers (categorical and numeric, 2–4 levels) and six informative values.
const SHAPES: [(usize, usize, bool); 4] = [(12, 3, false), (10, 3, true), (5, 2, false), (24, 4, true)];
const CUTS: [u8; 7] = [2, 7, 4, 1, 6, 8, 3];

/// A random table over the same public domain: 600 distinct rows drawn from `salt`, with
/// skewed counts times `scale`.
fn table(scale: u64, salt: u32) -> FrequencyTable {
    let rows: Vec<(u32, u64)> = (0..600u32)
        .map(|i| {
            let seed = (i ^ salt).wrapping_mul(2_654_435_761).rotate_left(7) ^ 0x5bd1_e995;
            (seed, scale * (1 + u64::from(i % 17 == 0) * 40 + u64::from(i % 5 == 0) * 6))
        })
        .collect();
    let ft = random_table(&SHAPES, &CUTS, &rows, 6);
    let domain: Vec<String> = (0..6).map(|i| format!("s{i}")).collect();
    public_table("test", "t", &ft, &domain).unwrap()
}

fn records(ft: &FrequencyTable) -> u64 {
    ft.counts.iter().sum()
}

#[test]
fn automatic_plan_given_its_root_is_public_and_releases_about_n_rows_at_any_size() {
    // Root → the rest of the plan (steps, θ) the first run with that root had.
    let mut plans: HashMap<String, String> = HashMap::new();
    let mut sizes = Vec::new();
    for (scale, salt) in [(1u64, 0u32), (1, 77), (100, 0), (100, 4242)] {
        let ft = table(scale, salt);
        let n = records(&ft);
        for seed in 0..3u64 {
            let r = adaptive::release(&ft, &AdaptiveConfig::automatic(1.0).with_seed(seed)).unwrap();
            let ratio = r.released_records as f64 / n as f64;
            eprintln!(
                "{n} records (salt {salt}), seed {seed}: {} classes, {ratio:.3} N; {}",
                r.classes.len(),
                r.plan_text()
            );
            assert!((0.9..1.1).contains(&ratio), "{n} records, seed {seed}: {} rows released", r.released_records);
            assert!(r.epsilon_root() > 0.09 && r.epsilon_root() <= 0.1, "{}", r.epsilon_root());
            let text = r.plan_text();
            let (root, rest) = text.split_once(", steps=").expect("root=..., steps=...");
            let first = plans.entry(root.to_string()).or_insert_with(|| rest.to_string());
            // Steps and θ read the root, the hierarchies, V and ε only.
            assert_eq!(first, rest, "root {root}: two plans");
            assert!(rest.contains(":0"), "a plan that never reaches a leaf: {text}");
            sizes.push((n, r.classes.len()));
        }
    }
    // The root is bounded by a noisy record count, at most N̂ / θ₀ combinations (θ₀ = 6 · E|X|
    // / 0.02 = 986 at ε_cells = 0.3): 2 for the small tables, whose classes (2,760 records)
    // are too few for θ to let a step refine them; the 100-fold ones refine to hundreds.
    for (n, classes) in &sizes {
        assert!(if *n < 10_000 { *classes <= 2 } else { *classes > 100 }, "{n} records: {classes} classes");
    }
}

/// The adaptive release from a root far finer than the data (7,200 root combinations × 6
/// values for 2,760 records; most root cells empty) releases about as many rows as there are
/// records: an empty root cell whose coarse noise is positive no longer becomes counterfeits.
#[test]
fn adaptive_coarse_level_adds_no_counterfeits_for_empty_root_cells() {
    let ft = table(1, 0);
    let n = records(&ft);
    let steps = vec![("q3".to_string(), 0)];
    for seed in 0..5u64 {
        let config = AdaptiveConfig::new(1.0, vec![0, 0, 0, 1], steps.clone()).with_theta(vec![3.0]).with_seed(seed);
        let r = adaptive::release(&ft, &config).unwrap();
        let ratio = r.released_records as f64 / n as f64;
        eprintln!("seed {seed}: {} released for {n} records ({ratio:.3})", r.released_records);
        assert!(ratio < 1.3, "seed {seed}: {} released for {n} records", r.released_records);
    }
}
