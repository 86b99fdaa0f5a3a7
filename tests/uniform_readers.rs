//! Two readers of a generalized release under the query harness's uniform reading:
//! - the two-way-marginal score (`two_way_marginal` in anon_metrics / metric_value): a
//!   hand-computed release, and random releases against a second implementation written here
//!   from the definition alone (plain records, HashMaps, the hierarchies as arithmetic), which
//!   shares nothing with the engine's (the harness's estimates, binned by hierarchy level);
//! - `as_records`: every drawn record inside its released cell, leaves uniform within a cell
//!   (chi-square at a fixed seed), same seed same records, and its refusals.

mod common;

use anonfusion::datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use anonfusion::datafusion::arrow::datatypes::Float64Type;
use anonfusion::datafusion::prelude::SessionContext;
use anonfusion::hierarchy::{HierarchyKind, parse_arx_text, widths_hierarchy};
use anonfusion::{Registry, Role, TableMeta, register_all};
use datafusion::arrow::array::AsArray;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

const REGIONS: [&str; 6] = ["r0", "r1", "r2", "r3", "r4", "r5"];
/// The group of each region (level 1 of its hierarchy).
fn region_group(r: &str) -> &'static str {
    match r {
        "r0" | "r1" => "g0",
        "r2" | "r3" | "r4" => "g1",
        _ => "g2",
    }
}

/// age 0-19 (5- and 10-year bands), sex, region (region -> group -> *) quasi-identifiers and
/// disease sensitive, declared on `p`.
fn declare(registry: &Registry) {
    let mut meta = TableMeta {
        roles: ["age", "sex", "region"].iter().map(|c| (c.to_string(), Role::QuasiIdentifier)).collect(),
        ..Default::default()
    };
    meta.roles.push(("disease".into(), Role::Sensitive));
    let h = &mut meta.hierarchies;
    h.insert("age".into(), Arc::new(widths_hierarchy("age", 0, 19, &[5, 10]).unwrap()));
    h.insert("sex".into(), Arc::new(parse_arx_text("F;*\nM;*\n", "sex", HierarchyKind::Categorical).unwrap()));
    let text: String = REGIONS.iter().map(|r| format!("{r};{};*\n", region_group(r))).collect();
    h.insert("region".into(), Arc::new(parse_arx_text(&text, "region", HierarchyKind::Categorical).unwrap()));
    registry.set("p", meta);
}

/// A plain record of the original.
#[derive(Debug, Clone)]
struct Rec {
    age: i64,
    sex: &'static str,
    region: &'static str,
    disease: &'static str,
}

/// A released record: age bounds (None: suppressed) with their label, sex and region labels.
#[derive(Debug, Clone)]
struct Rel {
    age: Option<(i64, i64)>,
    sex: String,
    region: String,
    disease: &'static str,
}

fn original_batch(recs: &[Rec]) -> RecordBatch {
    RecordBatch::try_from_iter(vec![
        ("age", Arc::new(Int64Array::from(recs.iter().map(|r| r.age).collect::<Vec<_>>())) as ArrayRef),
        ("sex", Arc::new(StringArray::from(recs.iter().map(|r| r.sex).collect::<Vec<_>>()))),
        ("region", Arc::new(StringArray::from(recs.iter().map(|r| r.region).collect::<Vec<_>>()))),
        ("disease", Arc::new(StringArray::from(recs.iter().map(|r| r.disease).collect::<Vec<_>>()))),
    ])
    .unwrap()
}

fn release_batch(rel: &[Rel]) -> RecordBatch {
    let label = |a: &Option<(i64, i64)>| match a {
        None => "*".to_string(),
        Some((lo, hi)) if lo == hi => lo.to_string(),
        Some((lo, hi)) => format!("{lo}-{hi}"),
    };
    RecordBatch::try_from_iter(vec![
        ("age", Arc::new(StringArray::from(rel.iter().map(|r| label(&r.age)).collect::<Vec<_>>())) as ArrayRef),
        ("age_lo", Arc::new(Int64Array::from(rel.iter().map(|r| r.age.map(|a| a.0)).collect::<Vec<_>>()))),
        ("age_hi", Arc::new(Int64Array::from(rel.iter().map(|r| r.age.map(|a| a.1)).collect::<Vec<_>>()))),
        ("sex", Arc::new(StringArray::from(rel.iter().map(|r| r.sex.clone()).collect::<Vec<_>>()))),
        ("region", Arc::new(StringArray::from(rel.iter().map(|r| r.region.clone()).collect::<Vec<_>>()))),
        ("disease", Arc::new(StringArray::from(rel.iter().map(|r| r.disease).collect::<Vec<_>>()))),
        // Undeclared, so kept as released: tells which released record a drawn one came from.
        ("rid", Arc::new(Int64Array::from((0..rel.len() as i64).collect::<Vec<_>>()))),
    ])
    .unwrap()
}

fn session(recs: &[Rec], rel: &[Rel]) -> SessionContext {
    let ctx = SessionContext::new();
    let registry = register_all(&ctx);
    ctx.register_batch("p", original_batch(recs)).unwrap();
    ctx.register_batch("p_g", release_batch(rel)).unwrap();
    declare(&registry);
    ctx
}

fn score(ctx: &SessionContext, options: &str) -> f64 {
    let sql = format!("SELECT value FROM metric_value('p', 'p_g', 'two_way_marginal', '', '{options}')");
    let b = common::run(ctx, &sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    b[0].column(0).as_primitive::<Float64Type>().value(0)
}

fn rel(age: Option<(i64, i64)>, sex: &str, region: &str, disease: &'static str) -> Rel {
    Rel { age, sex: sex.into(), region: region.into(), disease }
}

/// The hand example's table: age 0-9 (leaves, 5-year bands, *), sex, disease sensitive.
/// A released record of the hand example: age bounds (None: suppressed), sex, disease.
type HandRel<'a> = (Option<(i64, i64)>, &'a str, &'a str);

fn hand_session(recs: &[(i64, &str, &str)], rels: &[HandRel]) -> SessionContext {
    let ctx = SessionContext::new();
    let registry = register_all(&ctx);
    let original = RecordBatch::try_from_iter(vec![
        ("age", Arc::new(Int64Array::from(recs.iter().map(|r| r.0).collect::<Vec<_>>())) as ArrayRef),
        ("sex", Arc::new(StringArray::from(recs.iter().map(|r| r.1).collect::<Vec<_>>()))),
        ("disease", Arc::new(StringArray::from(recs.iter().map(|r| r.2).collect::<Vec<_>>()))),
    ])
    .unwrap();
    let label = |a: &Option<(i64, i64)>| a.map_or("*".to_string(), |(lo, hi)| format!("{lo}-{hi}"));
    let release = RecordBatch::try_from_iter(vec![
        ("age", Arc::new(StringArray::from(rels.iter().map(|r| label(&r.0)).collect::<Vec<_>>())) as ArrayRef),
        ("age_lo", Arc::new(Float64Array::from(rels.iter().map(|r| r.0.map(|a| a.0 as f64)).collect::<Vec<_>>()))),
        ("age_hi", Arc::new(Float64Array::from(rels.iter().map(|r| r.0.map(|a| a.1 as f64)).collect::<Vec<_>>()))),
        ("sex", Arc::new(StringArray::from(rels.iter().map(|r| r.1).collect::<Vec<_>>()))),
        ("disease", Arc::new(StringArray::from(rels.iter().map(|r| r.2).collect::<Vec<_>>()))),
    ])
    .unwrap();
    ctx.register_batch("p", original).unwrap();
    ctx.register_batch("p_g", release).unwrap();
    let mut meta = TableMeta {
        roles: vec![
            ("age".into(), Role::QuasiIdentifier),
            ("sex".into(), Role::QuasiIdentifier),
            ("disease".into(), Role::Sensitive),
        ],
        ..Default::default()
    };
    meta.hierarchies.insert("age".into(), Arc::new(widths_hierarchy("age", 0, 9, &[5]).unwrap()));
    let sex = parse_arx_text("F;*\nM;*\n", "sex", HierarchyKind::Categorical).unwrap();
    meta.hierarchies.insert("sex".into(), Arc::new(sex));
    registry.set("p", meta);
    ctx
}

/// Four records; bins: age in 5-year bands A = 0-4, B = 5-9 (the default: the hierarchy's
/// first level), sex and disease as they are.
///
/// Original: (1, F, flu), (2, F, flu), (6, M, cold), (7, M, flu).
/// Release:  age 0-9, F, flu | age 0-4, F, flu | age 5-9, *, cold | suppressed (*, *), flu.
/// Read uniformly (the suppressed record over the whole domain, ages 0-9), the release's
/// histograms are:
/// - age x sex: AF = .5 + 1 + .25 = 1.75, BF = .5 + .5 + .25 = 1.25, BM = .5 + .25 = .75,
///   AM = .25 (of 4); against AF = BM = 2: L1 = |.5 - .4375| + .3125 + |.5 - .1875| + .0625
///   = .75, score .625.
/// - age x disease: A flu = .5 + 1 + .5 = 2, B flu = .5 + .5 = 1, B cold = 1: the original's
///   2 / 1 / 1 exactly, score 1.
/// - sex x disease: F flu = 1 + 1 + .5 = 2.5, M flu = .5, F cold = .5, M cold = .5 against
///   F flu = 2, M cold = 1, M flu = 1: L1 = .125 + .125 + .125 + .125 = .5, score .75.
///
/// (.625 + 1 + .75) / 3 x 1000 = 791.666...
/// With age at level 2 (one bin, *), age x sex is the sex marginal (F 3 : M 1 against 2 : 2,
/// L1 = .5, score .75) and age x disease the disease marginal (3 : 1 on both sides, 1):
/// (.75 + 1 + .75) / 3 x 1000 = 833.333...
#[test]
fn hand_computed_release() {
    let ctx = hand_session(
        &[(1, "F", "flu"), (2, "F", "flu"), (6, "M", "cold"), (7, "M", "flu")],
        &[(Some((0, 9)), "F", "flu"), (Some((0, 4)), "F", "flu"), (Some((5, 9)), "*", "cold"), (None, "*", "flu")],
    );
    let s = score(&ctx, "");
    assert!((s - 2375.0 / 3.0).abs() < 1e-9, "{s}");
    let s = score(&ctx, "marginal_levels=age:2");
    assert!((s - 2500.0 / 3.0).abs() < 1e-9, "{s}");
    // anon_metrics computes it beside the other metrics; metric_value computes it alone.
    let sql =
        "SELECT value FROM anon_metrics('p', 'p_g', '', 'marginal_levels=age:2') WHERE metric = 'two_way_marginal'";
    let b = common::run(&ctx, sql).unwrap();
    assert_eq!(b[0].column(0).as_primitive::<Float64Type>().value(0), s);
    // The release against itself read back exactly: the original's own records, ungeneralized.
    let same =
        hand_session(&[(1, "F", "flu"), (6, "M", "cold")], &[(Some((1, 1)), "F", "flu"), (Some((6, 6)), "M", "cold")]);
    assert_eq!(score(&same, "marginal_levels=age:0"), 1000.0);
}

#[test]
fn bad_levels_name_the_option_and_the_attribute() {
    let ctx = hand_session(&[(1, "F", "flu")], &[(Some((0, 4)), "F", "flu")]);
    let run = |options: &str| {
        let sql = format!("SELECT * FROM metric_value('p', 'p_g', 'two_way_marginal', '', '{options}')");
        common::run(&ctx, &sql).unwrap_err().to_string()
    };
    let e = run("marginal_levels=age:3");
    assert!(e.contains("marginal_levels") && e.contains("'age'") && e.contains("0..=2"), "{e}");
    let e = run("marginal_levels=height:1");
    assert!(e.contains("'height' is not a scored attribute") && e.contains("age, sex, disease"), "{e}");
    let e = run("levels=age:1");
    assert!(e.contains("unknown option 'levels'"), "{e}");
}

/// The leaves a released label covers, from the hierarchies as written above.
fn region_cover(label: &str) -> Vec<&'static str> {
    REGIONS.iter().copied().filter(|x| label == "*" || label == *x || label == region_group(x)).collect()
}

fn sex_cover(label: &str) -> Vec<&'static str> {
    ["F", "M"].into_iter().filter(|s| label == "*" || label == *s).collect()
}

/// The score from its definition: every released record spread uniformly over the leaves each
/// value covers (ages as integer ranges, labels by the hierarchies written out above), binned,
/// 1 - L1/2 per pair of normalized histograms, mean x 1000.
fn naive_score(recs: &[Rec], rels: &[Rel], age_level: usize, region_level: usize) -> f64 {
    let age_bin = |a: i64| match age_level {
        0 => a.to_string(),
        1 => (a / 5).to_string(),
        2 => (a / 10).to_string(),
        _ => "*".into(),
    };
    let region_bin = |r: &str| match region_level {
        0 => r.to_string(),
        1 => region_group(r).to_string(),
        _ => "*".into(),
    };
    // Per record: each attribute's bins with their probabilities.
    let spread = |r: &Rel| -> Vec<Vec<(String, f64)>> {
        let ages: Vec<i64> = match r.age {
            Some((lo, hi)) => (lo..=hi).collect(),
            None => (0..=19).collect(),
        };
        let (sexes, regions) = (sex_cover(&r.sex), region_cover(&r.region));
        vec![
            ages.iter().map(|a| (age_bin(*a), 1.0 / ages.len() as f64)).collect(),
            sexes.iter().map(|s| (s.to_string(), 1.0 / sexes.len() as f64)).collect(),
            regions.iter().map(|x| (region_bin(x), 1.0 / regions.len() as f64)).collect(),
            vec![(r.disease.to_string(), 1.0)],
        ]
    };
    let point = |r: &Rec| vec![age_bin(r.age), r.sex.to_string(), region_bin(r.region), r.disease.to_string()];
    let mut total = 0.0;
    let mut pairs = 0;
    for i in 0..4 {
        for j in i + 1..4 {
            let mut p: HashMap<(String, String), f64> = HashMap::new();
            for r in recs {
                let v = point(r);
                *p.entry((v[i].clone(), v[j].clone())).or_default() += 1.0 / recs.len() as f64;
            }
            let mut q: HashMap<(String, String), f64> = HashMap::new();
            for r in rels {
                let s = spread(r);
                for (a, pa) in &s[i] {
                    for (b, pb) in &s[j] {
                        *q.entry((a.clone(), b.clone())).or_default() += pa * pb / rels.len() as f64;
                    }
                }
            }
            let mut l1 = 0.0;
            for (k, v) in &p {
                l1 += (v - q.get(k).copied().unwrap_or(0.0)).abs();
            }
            for (k, v) in &q {
                if !p.contains_key(k) {
                    l1 += v;
                }
            }
            total += 1.0 - l1 / 2.0;
            pairs += 1;
        }
    }
    1000.0 * total / pairs as f64
}

/// A random generalization of one record: age exact, in its 5- or 10-year band, or the whole
/// domain; sex exact or *; region exact, its group or *; or the whole record suppressed.
fn generalize(r: &Rec, g: u8) -> Rel {
    if g.is_multiple_of(11) {
        return rel(None, "*", "*", r.disease);
    }
    let age = match g % 4 {
        0 => (r.age, r.age),
        1 => (r.age / 5 * 5, r.age / 5 * 5 + 4),
        2 => (r.age / 10 * 10, r.age / 10 * 10 + 9),
        _ => (0, 19),
    };
    let sex = if (g / 4).is_multiple_of(2) { r.sex } else { "*" };
    let region = match (g / 8) % 3 {
        0 => r.region,
        1 => region_group(r.region),
        _ => "*",
    };
    rel(Some(age), sex, region, r.disease)
}

fn arb_rec() -> impl Strategy<Value = Rec> {
    (0i64..20, 0usize..2, 0usize..6, 0usize..3).prop_map(|(age, s, r, d)| Rec {
        age,
        sex: ["F", "M"][s],
        region: REGIONS[r],
        disease: ["flu", "cold", "asthma"][d],
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random originals, random generalizations (plus released records the original lacks:
    /// a release need not be of these very records), random levels: the engine's score equals
    /// the naive one.
    #[test]
    fn the_score_matches_a_second_implementation(
        recs in prop::collection::vec(arb_rec(), 1..30),
        gens in prop::collection::vec(any::<u8>(), 30),
        extra in prop::collection::vec(arb_rec(), 0..5),
        age_level in 0usize..4,
        region_level in 0usize..3,
    ) {
        let mut rels: Vec<Rel> = recs.iter().zip(gens.iter().cycle()).map(|(r, g)| generalize(r, *g)).collect();
        rels.extend(extra.iter().zip(gens.iter().rev()).map(|(r, g)| generalize(r, *g)));
        let ctx = session(&recs, &rels);
        let engine = score(&ctx, &format!("marginal_levels=age:{age_level},region:{region_level}"));
        let naive = naive_score(&recs, &rels, age_level, region_level);
        prop_assert!((engine - naive).abs() < 1e-9, "engine {} naive {}", engine, naive);
    }
}

/// `as_records` of `p_g` into `out`, as batches in the output's row order.
fn records(ctx: &SessionContext, out: &str, options: &str) -> Vec<RecordBatch> {
    let sql = format!("SELECT * FROM as_records('p', '{out}', 'p_g', '{options}')");
    common::run(ctx, &sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// (age, sex, region, disease, rid) of every drawn record.
fn drawn(batches: &[RecordBatch]) -> Vec<(i64, String, String, String, i64)> {
    let mut out = Vec::new();
    for b in batches {
        let col = |n: &str| b.column_by_name(n).unwrap_or_else(|| panic!("no column {n}")).clone();
        let (age, sex, region, disease, rid) = (col("age"), col("sex"), col("region"), col("disease"), col("rid"));
        let age = age.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        let rid = rid.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        for r in 0..b.num_rows() {
            out.push((
                age.value(r),
                sex.as_string::<i32>().value(r).to_string(),
                region.as_string::<i32>().value(r).to_string(),
                disease.as_string::<i32>().value(r).to_string(),
                rid.value(r),
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Every drawn record lies inside its released record's cell (ages within the bounds or,
    /// suppressed, the domain; labels over the leaves they cover; the sensitive value as
    /// released), one record per released record, suppressed ones dropped unless drawn.
    #[test]
    fn every_drawn_record_lies_in_its_released_cell(
        recs in prop::collection::vec(arb_rec(), 1..30),
        gens in prop::collection::vec(any::<u8>(), 30),
        seed in any::<u32>(),
    ) {
        let rels: Vec<Rel> = recs.iter().zip(gens.iter().cycle()).map(|(r, g)| generalize(r, *g)).collect();
        let ctx = session(&recs, &rels);
        let suppressed = rels.iter().filter(|r| r.age.is_none()).count();
        for (out, option, expected) in [("r_drop", "drop", rels.len() - suppressed), ("r_draw", "draw", rels.len())] {
            let rows = drawn(&records(&ctx, out, &format!("seed={seed}, suppressed={option}")));
            prop_assert_eq!(rows.len(), expected);
            let mut seen = vec![false; rels.len()];
            for (age, sex, region, disease, rid) in rows {
                let r = &rels[rid as usize];
                prop_assert!(!std::mem::replace(&mut seen[rid as usize], true), "record {} drawn twice", rid);
                let (lo, hi) = r.age.unwrap_or((0, 19));
                prop_assert!((lo..=hi).contains(&age), "age {} outside {}-{}", age, lo, hi);
                prop_assert!(sex_cover(&r.sex).contains(&sex.as_str()), "sex {} outside {}", sex, r.sex);
                prop_assert!(region_cover(&r.region).contains(&region.as_str()), "{} outside {}", region, r.region);
                prop_assert_eq!(disease.as_str(), r.disease);
            }
            let report = common::run(&ctx, &format!("SELECT suppressed, suppressed_records FROM {out}_report")).unwrap();
            let said = report[0].column(0).as_string::<i32>().value(0).to_string();
            prop_assert_eq!(said.as_str(), if option == "drop" { "dropped" } else { "drawn over the whole domain" });
        }
    }
}

/// One released cell many times: age 0-19 (20 leaves), region g1 (r2, r3, r4), sex *; and a
/// suppressed record drawn over the whole domain: each leaf of each attribute equally often,
/// by Pearson's chi-square at p = 1e-4 (seeded, so the test is the same every run).
#[test]
fn drawn_leaves_are_uniform_within_a_cell() {
    let n = 6000;
    let mut rels = vec![rel(Some((0, 19)), "*", "g1", "flu"); n];
    rels.extend(vec![rel(None, "*", "*", "cold"); n]);
    let ctx = session(&[Rec { age: 3, sex: "F", region: "r0", disease: "flu" }], &rels);
    let rows = drawn(&records(&ctx, "r", "seed=11, suppressed=draw"));
    for (disease, regions) in [("flu", vec!["r2", "r3", "r4"]), ("cold", REGIONS.to_vec())] {
        let cell: Vec<_> = rows.iter().filter(|r| r.3 == disease).collect();
        assert_eq!(cell.len(), n);
        let ages: Vec<u64> = (0..20).map(|a| cell.iter().filter(|r| r.0 == a).count() as u64).collect();
        common::assert_fits(&format!("{disease}: age"), &ages, &[1.0 / 20.0; 20]);
        let sexes: Vec<u64> = ["F", "M"].iter().map(|s| cell.iter().filter(|r| r.1 == *s).count() as u64).collect();
        common::assert_fits(&format!("{disease}: sex"), &sexes, &[0.5; 2]);
        let counts: Vec<u64> = regions.iter().map(|x| cell.iter().filter(|r| r.2 == *x).count() as u64).collect();
        assert_eq!(counts.iter().sum::<u64>(), n as u64, "{disease}: a region outside the cell");
        let p = vec![1.0 / regions.len() as f64; regions.len()];
        common::assert_fits(&format!("{disease}: region"), &counts, &p);
    }
}

#[test]
fn same_seed_same_records_and_no_seed_draws_afresh() {
    let recs: Vec<Rec> =
        (0..40).map(|i| Rec { age: i % 20, sex: "F", region: REGIONS[(i % 6) as usize], disease: "flu" }).collect();
    let rels: Vec<Rel> = recs.iter().enumerate().map(|(i, r)| generalize(r, (i * 37 + 1) as u8)).collect();
    let ctx = session(&recs, &rels);
    let a = drawn(&records(&ctx, "a", "seed=5"));
    let b = drawn(&records(&ctx, "b", "seed=5"));
    assert_eq!(a, b);
    // Unseeded: OS entropy. 40 records over wide cells: two draws agreeing is a 1-in-huge event.
    let c = drawn(&records(&ctx, "c", ""));
    let d = drawn(&records(&ctx, "d", ""));
    let sorted = |mut v: Vec<(i64, String, String, String, i64)>| {
        v.sort_by_key(|r| r.4);
        v
    };
    assert_ne!(sorted(c), sorted(d));
}

#[test]
fn refusals_name_the_argument_and_never_the_value() {
    let recs = [Rec { age: 3, sex: "F", region: "r0", disease: "flu" }];
    let ctx = session(&recs, &[rel(Some((0, 4)), "F", "Atlantis", "flu")]);
    let err = |sql: &str| common::run(&ctx, sql).unwrap_err().to_string();
    let e = err("SELECT * FROM as_records('p', 'r', 'p_g')");
    assert!(e.contains("region") && !e.contains("Atlantis"), "{e}");
    let ctx = session(&recs, &[rel(Some((0, 4)), "F", "r0", "flu")]);
    let err = |sql: &str| common::run(&ctx, sql).unwrap_err().to_string();
    let e = err("SELECT * FROM as_records('p', 'r', 'p_g', 'suppressed=keep')");
    assert!(e.contains("'suppressed': must be one of drop, draw") && !e.contains("keep"), "{e}");
    let e = err("SELECT * FROM as_records('p', 'r', 'p_g', 'sed=1')");
    assert!(e.contains("unknown option 'sed'"), "{e}");
    let e = err("SELECT * FROM as_records('p', 'p_g', 'p_g')");
    assert!(e.contains("output") && e.contains("differ from the release"), "{e}");
    // An existing table that is not an earlier as_records output is never replaced.
    ctx.register_batch("mine", original_batch(&recs)).unwrap();
    let e = err("SELECT * FROM as_records('p', 'mine', 'p_g')");
    assert!(e.contains("'mine' is kept"), "{e}");
    let e = err("SELECT * FROM as_records('p', 'r', 'nothing')");
    assert!(e.contains("nothing") && e.contains("not found"), "{e}");
    // The output is an ordinary catalog table, and a second call may replace its own output.
    common::run(&ctx, "SELECT * FROM as_records('p', 'r', 'p_g', 'seed=1')").unwrap();
    common::run(&ctx, "SELECT * FROM as_records('p', 'r', 'p_g', 'seed=2')").unwrap();
    let b = common::run(&ctx, "SELECT age, region FROM r").unwrap();
    assert_eq!(b[0].num_rows(), 1);
}

/// A set-valued column: each released element drawn to one code it covers (a generalized code
/// `(a, b)` to a or b, a node to one of its codes, a code to itself), a code drawn twice kept
/// once, and each covered code about equally often.
#[test]
fn set_valued_elements_are_drawn_to_a_code_they_cover() {
    use datafusion::arrow::array::{Array, ListBuilder, StringBuilder};
    let ctx = SessionContext::new();
    let registry = register_all(&ctx);
    let codes = |rows: &[&[&str]]| -> ArrayRef {
        let mut b = ListBuilder::new(StringBuilder::new());
        for row in rows {
            for c in *row {
                b.values().append_value(c);
            }
            b.append(true);
        }
        Arc::new(b.finish())
    };
    let original = RecordBatch::try_from_iter(vec![
        ("age", Arc::new(Int64Array::from(vec![3])) as ArrayRef),
        ("codes", codes(&[&["053.20"]])),
    ])
    .unwrap();
    let n = 4000;
    let released: Vec<&[&str]> = vec![&["(053.20,4011)", "401", "053.71"]; n];
    let release = RecordBatch::try_from_iter(vec![
        ("age", Arc::new(StringArray::from(vec!["0-4"; n])) as ArrayRef),
        ("age_lo", Arc::new(Int64Array::from(vec![0; n]))),
        ("age_hi", Arc::new(Int64Array::from(vec![4; n]))),
        ("codes", codes(&released)),
    ])
    .unwrap();
    ctx.register_batch("p", original).unwrap();
    ctx.register_batch("p_g", release).unwrap();
    let mut meta = TableMeta {
        roles: vec![("age".into(), Role::QuasiIdentifier), ("codes".into(), Role::SetValued)],
        ..Default::default()
    };
    meta.hierarchies.insert("age".into(), Arc::new(widths_hierarchy("age", 0, 9, &[5]).unwrap()));
    let text = "053.20;053;*\n053.71;053;*\n4019;401;*\n4011;401;*\n";
    meta.hierarchies.insert("codes".into(), Arc::new(parse_arx_text(text, "codes", HierarchyKind::Codes).unwrap()));
    registry.set("p", meta);
    let b = common::run(&ctx, "SELECT codes FROM as_records('p', 'r', 'p_g', 'seed=3')").unwrap();
    let mut count: HashMap<String, u64> = HashMap::new();
    let mut rows = 0;
    for batch in &b {
        let lists = batch.column(0).as_list::<i32>();
        for r in 0..lists.len() {
            let v = lists.value(r);
            let drawn: Vec<String> = v.as_string::<i32>().iter().map(|c| c.unwrap().to_string()).collect();
            // (053.20,4011) -> 053.20 | 4011; 401 -> 4019 | 4011; 053.71 stays.
            assert!(drawn.len() == 3 || (drawn.len() == 2 && drawn.contains(&"4011".to_string())), "{drawn:?}");
            assert!(["053.20", "4011"].contains(&drawn[0].as_str()), "{drawn:?}");
            assert!(drawn.contains(&"053.71".to_string()), "{drawn:?}");
            for c in drawn.iter().take(drawn.len() - 1).skip(1) {
                assert!(["4019", "4011"].contains(&c.as_str()), "{drawn:?}");
            }
            *count.entry(drawn[0].clone()).or_default() += 1;
            rows += 1;
        }
    }
    assert_eq!(rows, n);
    common::assert_fits("(053.20,4011)", &[count["053.20"], count["4011"]], &[0.5, 0.5]);
}
