//! IPA (src/methods/ipa/): the paper's worked example (Table 5 → Tables 6, 7, 8), the
//! distributions Algorithm 1 and Eq. 12 promise (chi-square at p = 1e-4, fixed seeds), the
//! likelihood ratio of a released class size between neighbouring tables, agreement of the
//! scoring with `anon_metrics` on a materialized release, and bad input. Run with
//! `--nocapture` to see the statistics.

mod common;

use anonfusion::dp::{DiscreteLaplace, StreamKey};
use anonfusion::encode::source::Source;
use anonfusion::encode::{Cached, FrequencyTable, NodeCache, QiColumn, SensitiveColumn};
use anonfusion::hierarchy::widths_hierarchy;
use anonfusion::hierarchy::{HierarchyBuilder, HierarchyKind};
use anonfusion::methods::ipa::perturb::{self, Noise, Perturbation};
use anonfusion::methods::ipa::{Guarantee, IpaConfig, release, score, search};
use anonfusion::progress::Silent;
use common::{assert_fits, random_table};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use rand::{SeedableRng, rngs::StdRng};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Table 5: (age, gender, zipcode, disease).
const TABLE5: [(u32, &str, u32, &str); 7] = [
    (17, "M", 28912, "Gastritis"),
    (16, "M", 23512, "Pneumonia"),
    (13, "M", 24231, "Pneumonia"),
    (24, "F", 31891, "Anemia"),
    (29, "F", 34225, "Anemia"),
    (25, "F", 37756, "Diabetes"),
    (67, "M", 80061, "Stroke"),
];

/// Informative values, sorted (their codes).
const INF: [&str; 5] = ["Anemia", "Diabetes", "Gastritis", "Pneumonia", "Stroke"];

/// Table 5 as a frequency table, plus `extra` records. Age: decades of 0–99 (Fig. 1), Gender:
/// F, M under `*` (Fig. 2), Zipcode: ten-thousands of 0–99999 (Fig. 3).
fn table5(extra: &[(u32, &str, u32, &str)]) -> FrequencyTable {
    let age = Arc::new(widths_hierarchy("age", 0, 99, &[10]).unwrap());
    let zip = Arc::new(widths_hierarchy("zipcode", 0, 99_999, &[10_000]).unwrap());
    let mut b = HierarchyBuilder::new("gender", HierarchyKind::Categorical);
    b.row(1, vec!["F".into(), "*".into()]);
    b.row(2, vec!["M".into(), "*".into()]);
    let gender = Arc::new(b.build().unwrap());
    let rows: Vec<_> = TABLE5.iter().chain(extra).collect();
    let qis = vec![
        QiColumn { name: "age".into(), hierarchy: age, codes: rows.iter().map(|r| r.0).collect() },
        QiColumn {
            name: "gender".into(),
            hierarchy: gender.clone(),
            codes: rows.iter().map(|r| gender.leaf_of_label(r.1).unwrap()).collect(),
        },
        QiColumn { name: "zipcode".into(), hierarchy: zip, codes: rows.iter().map(|r| r.2).collect() },
    ];
    let codes = rows.iter().map(|r| INF.iter().position(|v| *v == r.3).unwrap() as u32).collect();
    let sens = SensitiveColumn { name: "disease".into(), values: INF.iter().map(|s| s.to_string()).collect(), codes };
    FrequencyTable::from_parts(qis, Some(sens), vec![1; rows.len()]).unwrap()
}

/// Table 6's node: Age at decades, Gender as is, Zipcode at ten-thousands.
fn table6_classes(nodes: &mut NodeCache) -> Arc<Cached> {
    let node = nodes.lattice.id(&[1, 0, 1]).unwrap();
    nodes.classes(node).unwrap()
}

fn paper_noise() -> Noise {
    IpaConfig::new(1.0).noise().unwrap()
}

/// Age decade (level-1 code) of a perturbed class, `None` for `*`.
fn decade(cached: &Cached, class: Option<u32>) -> Option<u32> {
    class.map(|c| cached.g.codes[0][c as usize])
}

/// Table 7 → Table 8: both classes of three kept with one counterfeit (Gastritis in the
/// teens, Anemia in the twenties), the Stroke class suppressed and released as is.
fn is_table8(p: &Perturbation, cached: &Cached) -> bool {
    let one = |v: usize| (0..5).map(|i| u32::from(i == v)).collect::<Vec<_>>();
    p.classes.len() == 3
        && decade(cached, p.classes[0].class) == Some(1)
        && decade(cached, p.classes[1].class) == Some(2)
        && p.classes[..2].iter().all(|c| c.kept == c.original)
        && p.classes[0].counterfeit == one(2)
        && p.classes[1].counterfeit == one(0)
        && p.classes[2].is_suppressed()
        && p.classes[2].kept == one(4)
        && p.classes[2].counterfeit == vec![0; 5]
}

/// Stream 0 of this seed's key draws Table 8 at Table 6's node (found by scanning seeds; the
/// outcome has probability about 1e-5).
const TABLE8_SEED: u64 = 148_204;

fn release_rows(ft: &FrequencyTable, cached: &Cached, p: &Perturbation) -> Vec<String> {
    let source = Schema::new(vec![
        Field::new("age", DataType::Int64, false),
        Field::new("gender", DataType::Utf8, false),
        Field::new("zipcode", DataType::Int64, false),
        Field::new("disease", DataType::Utf8, false),
    ]);
    let (schema, batches) = release::release(ft, &source, cached, p).unwrap();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["age", "age_lo", "age_hi", "gender", "zipcode", "zipcode_lo", "zipcode_hi", "disease"]);
    let mut out = Vec::new();
    for b in &batches {
        // Label columns are dictionaries (release::labels); read every column as text.
        let s = |i: usize| cast(b.column(i), &DataType::Utf8).unwrap().as_string::<i32>().clone();
        let (age, gender, zip, disease) = (s(0), s(3), s(4), s(7));
        let lo = b.column(1).as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        for r in 0..b.num_rows() {
            assert_eq!(lo.is_null(r), age.value(r) == "*", "NULL bounds exactly on suppressed rows");
            out.push(format!("{} {} {} {}", age.value(r), gender.value(r), zip.value(r), disease.value(r)));
        }
    }
    out
}

#[test]
fn worked_example_table5_to_table8() {
    let ft = table5(&[]);
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let cached = table6_classes(&mut nodes);
    // Table 6: three classes of 3, 3 and 1 records.
    let mut sizes = cached.g.sizes.clone();
    sizes.sort_unstable();
    assert_eq!(sizes, vec![1, 3, 3]);
    let noise = paper_noise();
    let key = StreamKey::new(Some(TABLE8_SEED)).unwrap();
    let p = search::perturb_node(&cached, 5, &noise, &key, 0).unwrap();
    assert!(is_table8(&p, &cached), "{p:?}");
    assert_eq!((p.suppressed_classes, p.suppressed_records, p.withheld_records, p.counterfeit_records), (1, 1, 0, 2));
    let mut rows = release_rows(&ft, &cached, &p);
    rows.sort();
    let mut table8 = vec![
        "10-19 M 20000-29999 Gastritis",
        "10-19 M 20000-29999 Pneumonia",
        "10-19 M 20000-29999 Pneumonia",
        "10-19 M 20000-29999 Gastritis",
        "20-29 F 30000-39999 Anemia",
        "20-29 F 30000-39999 Anemia",
        "20-29 F 30000-39999 Diabetes",
        "20-29 F 30000-39999 Anemia",
        "* * * Stroke",
    ];
    table8.sort();
    assert_eq!(rows, table8);
    // IL of Table 8 (docs/ipa.md): NCP = (8·(0.1 + 0 + 0.1)/3 + 1)/9, EMD = (1/6 + 1/12 + 0)/3,
    // Rate = (1/4 + 1/4 + 0)/3.
    let l = score::loss(nodes.hierarchies(), &cached.g, &p);
    let expected = [(8.0 * 0.2 / 3.0 + 1.0) / 9.0, (1.0 / 6.0 + 1.0 / 12.0) / 3.0, 0.5 / 3.0];
    for (got, want) in [l.ncp, l.emd, l.rate].iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "{l:?} vs {expected:?}");
    }
    eprintln!("Table 8: NCP {:.4}, EMD {:.4}, Rate {:.4}, IL {:.4}", l.ncp, l.emd, l.rate, l.il());
}

#[test]
fn worked_example_invariants_for_every_seed() {
    let ft = table5(&[]);
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let cached = table6_classes(&mut nodes);
    let noise = paper_noise();
    let mut table8 = 0;
    for seed in 0..3_000u64 {
        let p = perturb::perturb(&cached, 5, &noise, &mut StdRng::seed_from_u64(seed)).unwrap();
        table8 += usize::from(is_table8(&p, &cached));
        // Kept classes in Table 6's order, then `*`; every real record is kept, withheld, or
        // (in `*`) suppressed; a class either gains counterfeits or loses records, never both.
        assert!(p.classes.last().unwrap().is_suppressed());
        assert_eq!(p.classes.len(), 3 - p.suppressed_classes + 1);
        let decades: Vec<_> = p.classes.iter().map(|c| decade(&cached, c.class)).collect();
        assert!(decades.windows(2).all(|w| w[1].is_none() || w[0] < w[1]), "{decades:?}");
        let original: u64 = p.classes.iter().map(|c| c.original_size()).sum();
        assert_eq!(original, 7);
        let kept: u64 = p.classes.iter().map(|c| c.released_size() - c.counterfeits()).sum();
        assert_eq!(kept + p.withheld_records, 7);
        assert_eq!(p.classes.last().unwrap().original_size(), p.suppressed_records);
        for c in &p.classes {
            assert!(c.kept.iter().zip(&c.original).all(|(k, o)| k <= o));
            assert!(c.counterfeits() == 0 || c.kept == c.original);
        }
        let l = score::loss(nodes.hierarchies(), &cached.g, &p);
        assert!([l.ncp, l.emd, l.rate].iter().all(|x| (0.0..=1.0).contains(x)), "{l:?}");
        // The release has one row per released record, informative values from Inf only.
        let rows = release_rows(&ft, &cached, &p);
        assert_eq!(rows.len() as u64, p.classes.iter().map(|c| c.released_size()).sum::<u64>());
        assert!(rows.iter().all(|r| INF.iter().any(|v| r.ends_with(v))));
    }
    eprintln!("Table 8 exactly in {table8} of 3000 seeds");
}

/// Probability that Definition 3 suppresses a class of n records: P(n ≤ t + T).
fn suppression_probability(d: &DiscreteLaplace, n: i64, t: i64) -> f64 {
    (n - t..=n - t + 20_000).map(|x| d.pmf(x)).sum()
}

#[test]
fn one_record_class_is_suppressed_with_the_noisy_threshold_probability() {
    let ft = table5(&[]);
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let cached = table6_classes(&mut nodes);
    let noise = paper_noise();
    let expected = suppression_probability(&noise.threshold, 1, 2);
    let draws = 40_000u64;
    let key = StreamKey::new(Some(11)).unwrap();
    let mut suppressed = 0u64;
    for s in 0..draws {
        let p = search::perturb_node(&cached, 5, &noise, &key, s as usize).unwrap();
        suppressed += u64::from(p.classes.iter().all(|c| decade(&cached, c.class) != Some(6)));
    }
    let (f, sigma) = (suppressed as f64 / draws as f64, (expected * (1.0 - expected) / draws as f64).sqrt());
    eprintln!("Stroke class suppressed: {f:.4} vs P(1 <= 2 + Lap(10)) = {expected:.4} (sigma {sigma:.4})");
    assert!((f - expected).abs() < 5.0 * sigma);
    // The same law at t = 3 and n = 3 (scale (t − 1)/ε_suppression = 20), drawn directly.
    let noise3 = IpaConfig::new(1.0).with_options("t=3").unwrap().noise().unwrap();
    let expected3 = suppression_probability(&noise3.threshold, 3, 3);
    let mut rng = StdRng::seed_from_u64(12);
    let hits = (0..draws).filter(|_| perturb::is_suppressed(3, &noise3, &mut rng)).count();
    let f3 = hits as f64 / draws as f64;
    let sigma3 = (expected3 * (1.0 - expected3) / draws as f64).sqrt();
    eprintln!("n = 3, t = 3: {f3:.4} vs {expected3:.4} (sigma {sigma3:.4})");
    assert!((f3 - expected3).abs() < 5.0 * sigma3);
}

/// Eq. 4 with the scores of Eq. 3, written out from the paper (not from the crate).
fn eq4_probabilities(hist: &[u32], epsilon_value: f64) -> Vec<f64> {
    let n: u32 = hist.iter().sum();
    let absent = hist.iter().filter(|&&c| c == 0).count() as f64;
    let s: Vec<f64> =
        hist.iter().map(|&c| if c > 0 { c as f64 / (n + 1) as f64 } else { 1.0 / ((n + 1) as f64 * absent) }).collect();
    let w: Vec<f64> = s.iter().map(|x| (epsilon_value * x / 2.0).exp()).collect();
    let total: f64 = w.iter().sum();
    w.into_iter().map(|x| x / total).collect()
}

#[test]
fn counterfeit_values_follow_eq4() {
    let hist = [5u32, 0, 2, 0, 1, 0];
    for (epsilon, split) in [(1.0, "0.1:0.3:0.3:0.3"), (20.0, "0.1:0.3:0.5:0.1")] {
        let noise = IpaConfig::new(epsilon).with_options(&format!("split={split}")).unwrap().noise().unwrap();
        let mut counts = vec![0u64; hist.len()];
        let mut rng = StdRng::seed_from_u64(21);
        while counts.iter().sum::<u64>() < 60_000 {
            let c = perturb::insert(Some(0), hist.to_vec(), &noise, &mut rng).unwrap();
            counts.iter_mut().zip(&c.counterfeit).for_each(|(a, &b)| *a += u64::from(b));
        }
        let p = eq4_probabilities(&hist, noise.epsilon_value);
        assert_fits(&format!("counterfeit values, eps_value = {}", noise.epsilon_value), &counts, &p);
    }
}

#[test]
fn node_choice_follows_eq12() {
    let ft = random_table(&[(6, 3, false), (5, 2, false), (4, 2, true)], &[1, 2, 3, 4, 5], &rows(60), 4);
    let config = IpaConfig::new(30.0).with_seed(5);
    let res = anonfusion::methods::ipa::search(&ft, &config, &Silent).unwrap();
    let scores = &res.scores;
    assert_eq!(scores.len(), 3 * 4 * 3);
    let eps = res.spent.candidates;
    // Eq. 12 from the paper: ∝ exp(ε_candidates · (3 − IL) / (2 · 3)).
    let w: Vec<f64> = scores.iter().map(|s| (eps * (3.0 - s.loss.il()) / 6.0).exp()).collect();
    let total: f64 = w.iter().sum();
    let expected: Vec<f64> = w.iter().map(|x| x / total).collect();
    let mut counts = vec![0u64; scores.len()];
    let mut rng = StdRng::seed_from_u64(31);
    for _ in 0..100_000 {
        counts[search::choose(scores, eps, &mut rng).unwrap()] += 1;
    }
    assert_fits("node choice (Eq. 12)", &counts, &expected);
    // The call's own choice is a draw of the same mechanism from the choice stream.
    let again = search::choose(scores, eps, &mut StreamKey::new(Some(5)).unwrap().stream(search::CHOICE_STREAM));
    assert_eq!(scores[again.unwrap()].node, res.node);
}

/// Frequency rows (seed, count) for `random_table`.
fn rows(n: u32) -> Vec<(u32, u64)> {
    (0..n).map(|i| (i.wrapping_mul(2_654_435_761), 1 + (i % 7) as u64)).collect()
}

/// Released size of the teens class of Table 6's node (0 when it is suppressed or released
/// empty), over `draws` streams.
fn teens_sizes(ft: &FrequencyTable, noise: &Noise, seed: u64, draws: u64) -> BTreeMap<u64, u64> {
    let mut nodes = NodeCache::new(ft, true).unwrap();
    let cached = table6_classes(&mut nodes);
    let key = StreamKey::new(Some(seed)).unwrap();
    let mut hist = BTreeMap::new();
    for s in 0..draws {
        let p = search::perturb_node(&cached, 5, noise, &key, s as usize).unwrap();
        let size = p.classes.iter().find(|c| decade(&cached, c.class) == Some(1)).map_or(0, |c| c.released_size());
        *hist.entry(size).or_default() += 1;
    }
    hist
}

#[test]
fn neighbouring_tables_released_class_size_ratio_within_e_eps() {
    // D' = D plus one teenager in the same class.
    let (d, d2) = (table5(&[]), table5(&[(18, "M", 25_000, "Gastritis")]));
    let noise = paper_noise();
    let eps = 1.0;
    let draws = 300_000;
    let (a, b) = (teens_sizes(&d, &noise, 1, draws), teens_sizes(&d2, &noise, 2, draws));
    let (mut worst, mut compared) = (0.0f64, 0);
    for (size, &ca) in &a {
        let Some(&cb) = b.get(size) else { continue };
        if ca < 1_000 || cb < 1_000 {
            continue;
        }
        let log_ratio = (ca as f64 / cb as f64).ln();
        let se = (1.0 / ca as f64 + 1.0 / cb as f64).sqrt();
        assert!(log_ratio.abs() <= eps + 5.0 * se, "size {size}: |ln ratio| {log_ratio:.3} > {eps} + 5 se {se:.3}");
        worst = worst.max(log_ratio.abs());
        compared += 1;
    }
    eprintln!("neighbours (teens class 3 vs 4): {compared} sizes compared, max |ln ratio| = {worst:.3}, eps = {eps}");
    assert!(compared >= 8);
    // Suppression (0.1) and size (0.3) are the parts that see this class's size.
    assert!(worst <= 0.4 + 0.05, "{worst}");
}

/// A source schema for a random table: categorical attributes and `s` as Utf8, numeric ones
/// as Int64.
fn random_schema(ft: &FrequencyTable) -> Schema {
    let mut fields: Vec<Field> = ft
        .qis
        .iter()
        .map(|q| Field::new(&q.name, if q.hierarchy.is_numeric() { DataType::Int64 } else { DataType::Utf8 }, false))
        .collect();
    fields.push(Field::new("s", DataType::Utf8, false));
    Schema::new(fields)
}

#[test]
fn ncp_agrees_with_anon_metrics_on_every_node() {
    use anonfusion::metrics::{decode::decode_release, ncp::ncp};
    let ft = random_table(&[(7, 3, false), (5, 2, false)], &[2, 1, 4, 3], &rows(40), 5);
    let meta = common::meta_of(&ft);
    let noise = IpaConfig::new(1.0).noise().unwrap();
    let key = StreamKey::new(Some(8)).unwrap();
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let schema = random_schema(&ft);
    let mut worst: f64 = 0.0;
    for node in 0..nodes.lattice.size() {
        let cached = nodes.classes(node).unwrap();
        let p = search::perturb_node(&cached, 5, &noise, &key, node).unwrap();
        let (_, batches) = release::release(&ft, &schema, &cached, &p).unwrap();
        let rel = decode_release("t", &meta, "r", &batches).unwrap();
        assert_eq!(rel.records(), p.classes.iter().map(|c| c.released_size()).sum::<u64>());
        let ours = score::loss(nodes.hierarchies(), &cached.g, &p).ncp;
        if rel.records() > 0 {
            let (theirs, _) = ncp(&rel, None).unwrap();
            worst = worst.max((ours - theirs).abs());
        }
    }
    eprintln!("NCP vs anon_metrics over {} nodes: max difference {worst:e}", nodes.lattice.size());
    assert!(worst < 1e-12);
}

#[test]
fn emd_and_release_agree_with_the_decoded_release() {
    use anonfusion::formulas::emd::equal_emd;
    use anonfusion::metrics::decode::decode_release;
    let ft = random_table(&[(7, 3, false), (5, 2, false)], &[2, 1, 4, 3], &rows(40), 5);
    let meta = common::meta_of(&ft);
    let noise = IpaConfig::new(1.0).noise().unwrap();
    let key = StreamKey::new(Some(9)).unwrap();
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    // A node with several kept classes, none generalized to `*` everywhere.
    let node = nodes.lattice.id(&[1, 0]).unwrap();
    let cached = nodes.classes(node).unwrap();
    let p = search::perturb_node(&cached, 5, &noise, &key, node).unwrap();
    let (_, batches) = release::release(&ft, &random_schema(&ft), &cached, &p).unwrap();
    let rel = decode_release("t", &meta, "r", &batches).unwrap();
    let s = rel.sensitive.as_ref().unwrap();
    // Released histogram of each decoded class, keyed by its first row's cells.
    let mut released: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for rows in rel.class_members() {
        let key = format!("{:?}", rel.cells[rows[0]]);
        let h = released.entry(key).or_insert(vec![0; 5]);
        for r in rows {
            let v = s.values[s.codes[r] as usize].trim_start_matches('s').parse::<usize>().unwrap();
            h[v] += rel.weights[r] as u32;
        }
    }
    let classes: Vec<_> = p.classes.iter().filter(|c| c.released_size() > 0).collect();
    assert_eq!(released.len(), classes.len());
    // EMD recomputed from the decoded release with anon_metrics' ground distance.
    let mut emds = Vec::new();
    for c in &p.classes {
        let q = c.kept.iter().zip(&c.counterfeit).map(|(k, f)| k + f).collect::<Vec<u32>>();
        if c.released_size() > 0 {
            assert!(released.values().any(|h| *h == q), "{q:?} not released");
        }
        if c.original_size() + c.released_size() == 0 {
            continue;
        }
        let (n, m) = (c.original_size() as f64, c.released_size() as f64);
        emds.push(if n == 0.0 || m == 0.0 {
            1.0
        } else {
            let pd: Vec<f64> = c.original.iter().map(|&x| x as f64 / n).collect();
            let qd: Vec<f64> = q.iter().map(|&x| x as f64 / m).collect();
            equal_emd(&pd, &qd)
        });
    }
    let emd = emds.iter().sum::<f64>() / emds.len() as f64;
    let ours = score::loss(nodes.hierarchies(), &cached.g, &p);
    assert!((emd - ours.emd).abs() < 1e-12, "{emd} vs {ours:?}");
}

#[test]
fn same_seed_same_release_whatever_the_cache_holds() {
    let ft = random_table(&[(6, 3, false), (5, 2, false), (4, 2, true)], &[1, 2, 3, 4, 5], &rows(60), 4);
    let config = IpaConfig::new(1.0).with_seed(77);
    let a = anonfusion::methods::ipa::search(&ft, &config, &Silent).unwrap();
    let b = anonfusion::methods::ipa::search(&ft, &config, &Silent).unwrap();
    assert_eq!((a.node, a.scores.clone(), a.perturbation.clone()), (b.node, b.scores.clone(), b.perturbation.clone()));
    // The result's loss is that of its perturbation.
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let cached = nodes.classes(a.node).unwrap();
    assert_eq!(score::loss(nodes.hierarchies(), &cached.g, &a.perturbation), a.loss);
    assert_eq!(a.released_records, a.perturbation.classes.iter().map(|c| c.released_size()).sum::<u64>());
    // A node grouped straight from the bottom and one rolled up through its predecessors
    // (other class order) draw the same perturbation.
    let key = StreamKey::new(Some(77)).unwrap();
    let noise = config.noise().unwrap();
    let top = nodes.lattice.top();
    let fresh = NodeCache::new(&ft, true).unwrap().get(top).unwrap();
    let mut rolled = NodeCache::new(&ft, true).unwrap();
    for level in rolled.lattice.by_height() {
        rolled.map_batch(&level, |_, _| Ok(())).unwrap();
    }
    let rolled = rolled.get(top).unwrap();
    let strip =
        |p: Perturbation| p.classes.into_iter().map(|c| (c.original, c.kept, c.counterfeit)).collect::<Vec<_>>();
    let width = 4;
    assert_eq!(
        strip(search::perturb_node(&fresh, width, &noise, &key, top).unwrap()),
        strip(search::perturb_node(&rolled, width, &noise, &key, top).unwrap())
    );
    eprintln!(
        "seed 77: node {} IL {:.4} (NCP {:.4} EMD {:.4} Rate {:.4}), {} suppressed, {} withheld, {} counterfeit",
        a.node_label(),
        a.il(),
        a.loss.ncp,
        a.loss.emd,
        a.loss.rate,
        a.suppressed_records,
        a.withheld_records,
        a.counterfeit_records
    );
}

#[test]
fn bad_input_is_rejected_with_the_argument_named() {
    let msg = |c: &IpaConfig, records: u64, inf: Option<usize>| c.validate(records, inf).unwrap_err().to_string();
    for eps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(msg(&IpaConfig::new(eps), 10, Some(3)).contains("'epsilon'"), "{eps}");
    }
    let split = |s: &str, eps: f64| IpaConfig::new(eps).with_options(&format!("split={s}"));
    let e = msg(&split("0.1:0.1:0.1:0.1", 2.0).unwrap(), 10, Some(3));
    assert!(e.contains("'split'") && e.contains("sum"), "{e}");
    assert!(msg(&split("0.5:0.5:0.5:-0.5", 1.0).unwrap(), 10, Some(3)).contains("'split'"));
    assert!(split("0.1:0.3:0.6", 1.0).unwrap_err().to_string().contains("'split'"));
    assert!(split("a:b:c:d", 1.0).unwrap_err().to_string().contains("'split'"));
    // Budgets summing to epsilon are accepted as well as fractions.
    let abs = split("0.2:0.6:0.6:0.6", 2.0).unwrap();
    abs.validate(10, Some(3)).unwrap();
    let b = abs.budget().unwrap();
    assert!((b.total() - 2.0).abs() < 1e-8 && (b.suppression - 0.2).abs() < 1e-9, "{b:?}");
    assert_eq!(IpaConfig::new(2.0).budget().unwrap().insertion, abs.budget().unwrap().insertion);
    // t below 2 is refused by the options' declaration, naming the option.
    for t in [0, 1] {
        let e = IpaConfig::new(1.0).with_options(&format!("t={t}")).unwrap_err().to_string();
        assert!(e.contains("'t': must be an integer >= 2"), "{t}: {e}");
    }
    assert!(IpaConfig::new(1.0).with_options("t=-1").unwrap_err().to_string().contains("'t'"));
    assert!(IpaConfig::new(1.0).with_options("seed=x").unwrap_err().to_string().contains("'seed'"));
    assert!(IpaConfig::new(1.0).with_options("k=5").unwrap_err().to_string().contains("unknown option 'k'"));
    assert!(IpaConfig::new(1.0).with_options("split").unwrap_err().to_string().contains("'options'"));
    assert!(msg(&IpaConfig::new(1.0), 10, None).contains("informative attribute"));
    assert!(msg(&IpaConfig::new(1.0), 0, Some(3)).contains("no records"));
    // A table without an informative attribute, through the search itself.
    let ft = random_table(&[(4, 2, false)], &[1, 2], &rows(10), 0);
    let e = anonfusion::methods::ipa::search(&ft, &IpaConfig::new(1.0), &Silent).unwrap_err().to_string();
    assert!(e.contains("ipa_release") && e.contains("informative"), "{e}");
    // A threshold noise scale beyond the sampler's range is an error, not a panic.
    let huge = IpaConfig::new(1e-9).with_options("t=1000000000").unwrap();
    assert!(huge.validate(10, Some(3)).is_err() || huge.noise().is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymize_a_declared_table() {
    let ctx = anonfusion::new_session();
    let registry = anonfusion::Registry::new();
    let ft = random_table(&[(6, 3, false), (8, 2, true)], &[3, 1, 2], &rows(50), 6);
    common::register_random(&ctx, &registry, &ft);
    let meta = registry.require("t").unwrap();
    let config = IpaConfig::new(1.0).with_seed(3);
    let (res, published) =
        anonfusion::methods::ipa::anonymize(&Source::of(&ctx, "t", &meta).await.unwrap(), &config, &Silent)
            .await
            .unwrap();
    let n: usize = published.batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n as u64, res.released_records);
    let names: Vec<&str> = published.schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["q0", "q1", "q1_lo", "q1_hi", "s"]);
    assert!(published.dropped.is_empty());
    // The same seed on the same frequency table: the same node and loss.
    let again = anonfusion::methods::ipa::search(&ft, &config, &Silent).unwrap();
    assert_eq!((again.node, again.loss), (res.node, res.loss));
    let total = res.spent.total();
    assert!(total <= 1.0 && total > 1.0 - 1e-8, "{:?}", res.spent);
}

#[test]
fn dp_histogram_noises_every_cell_of_the_node() {
    use anonfusion::methods::ipa::baseline::dp_histogram;
    let ft = table5(&[]);
    let levels = [1u8, 0, 1];
    let real: Vec<(u32, u32, u32, u32)> = TABLE5
        .iter()
        .map(|r| (r.0 / 10, u32::from(r.1 == "M"), r.2 / 10_000, INF.iter().position(|v| *v == r.3).unwrap() as u32))
        .collect();
    let d = DiscreteLaplace::for_epsilon(1.0, 1).unwrap();
    let positive: f64 = (1..200).map(|x| d.pmf(x)).sum();
    let (runs, mut hits, mut il) = (300u64, 0u64, 0.0);
    let empty_cells = 10 * 2 * 10 * 5 - 6; // Table 6 fills six (class, value) cells
    for seed in 0..runs {
        let r = dp_histogram(&ft, &levels, 1.0, Guarantee::Pure, Some(1), Some(seed)).unwrap();
        let (h, loss) = (&r.histogram, r.realized.loss);
        assert_eq!(h.released_records, h.cells.iter().map(|c| c.count).sum::<u64>());
        assert!([loss.ncp, loss.emd, loss.rate].iter().all(|x| (0.0..=1.0).contains(x)));
        hits += h
            .cells
            .iter()
            .filter(|c| !real.iter().any(|r| (r.0, r.1, r.2, r.3) == (c.codes[0], c.codes[1], c.codes[2], c.value)))
            .count() as u64;
        il += loss.il();
    }
    let n = (runs * empty_cells) as f64;
    let (f, sigma) = (hits as f64 / n, (positive * (1.0 - positive) / n).sqrt());
    eprintln!("dp_histogram: empty cells published {f:.4} vs P(Lap >= 1) = {positive:.4} (sigma {sigma:.4})");
    assert!((f - positive).abs() < 5.0 * sigma);
    // IL at Table 6's node, against IPA's chosen node on the same table (the paper's Fig. 6
    // compares them on NPS: 0.69 and 0.28).
    let ipa: f64 = (0..runs)
        .map(|s| anonfusion::methods::ipa::search(&ft, &IpaConfig::new(1.0).with_seed(s), &Silent).unwrap().il())
        .sum::<f64>()
        / runs as f64;
    eprintln!("Table 5, eps = 1: mean IL of dp_histogram at [1, 0, 1] {:.3}, of IPA {ipa:.3}", il / runs as f64);
    // Errors: no informative attribute, bad epsilon, a domain too large to draw.
    let no_inf = random_table(&[(4, 2, false)], &[1, 2], &rows(10), 0);
    let pure = Guarantee::Pure;
    assert!(dp_histogram(&no_inf, &[0], 1.0, pure, None, None).unwrap_err().to_string().contains("informative"));
    assert!(dp_histogram(&ft, &levels, 0.0, pure, None, None).unwrap_err().to_string().contains("'epsilon'"));
    assert!(dp_histogram(&ft, &[0, 0, 0], 1.0, pure, None, None).unwrap_err().to_string().contains("'node'"));
}

/// Adult (30,162 records, 2160 nodes): the whole lattice perturbed and scored, and the release
/// built, in one call; the same seed gives the same result. Prints the time and the choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adult_whole_lattice() {
    let (ctx, registry) = anonfusion::session();
    common::rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    let meta = registry.require("adult").unwrap();
    let config = IpaConfig::new(1.0).with_seed(4);
    let start = std::time::Instant::now();
    let (res, published) =
        anonfusion::methods::ipa::anonymize(&Source::of(&ctx, "adult", &meta).await.unwrap(), &config, &Silent)
            .await
            .unwrap();
    let took = start.elapsed();
    assert_eq!(res.scores.len(), 2160);
    let n: usize = published.batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n as u64, res.released_records);
    let best = res.scores.iter().map(|s| s.loss.il()).fold(f64::MAX, f64::min);
    eprintln!(
        "adult, eps 1: {took:.2?}; node {} IL {:.3} (NCP {:.3} EMD {:.3} Rate {:.3}; best node IL {best:.3}), {} released, \
         {} suppressed, {} withheld, {} counterfeit",
        res.node_label(),
        res.il(),
        res.loss.ncp,
        res.loss.emd,
        res.loss.rate,
        res.released_records,
        res.suppressed_records,
        res.withheld_records,
        res.counterfeit_records
    );
}

/// The exponential mechanism's candidates from the shared bottom-up scan are exactly those of
/// the scan it replaced (every node with at most `max_cells` cells, in node-id order), with the
/// same utilities: the seeded draw over them is unchanged. Adult's 7 quasi-identifiers with
/// occupation sensitive, under caps that keep the fewest-cell nodes, a third and all of the lattice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_scoring_keeps_the_nodes_within_the_cell_cap_in_id_order() {
    use anonfusion::encode::frequency_table;
    use anonfusion::methods::ipa::histogram::{CellNoise, cell_count};
    use anonfusion::methods::ipa::select::{NcpTotals, Utility, score_lattice};
    let ctx = datafusion::prelude::SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    ctx.sql("SELECT * FROM load_dataset('adult')").await.unwrap().collect().await.unwrap();
    let ft = frequency_table(&ctx, "adult", &registry.require("adult").unwrap(), Some("occupation")).await.unwrap();
    let noise = DiscreteLaplace::for_epsilon(1.0, 1).unwrap();
    let u = Utility::new(CellNoise::Pure { floor: 1 }, &noise, 1.0, 1.0);
    let mut nodes = NodeCache::new(&ft, true).unwrap();
    let lattice = nodes.lattice.clone();
    let hs = nodes.hierarchies().to_vec();
    let width = nodes.width();
    let ncp = NcpTotals::new(&ft);
    let cells = |n: usize| cell_count(&hs, &lattice.levels(n), width).unwrap();
    let mut all: Vec<u64> = (0..lattice.size()).map(cells).collect();
    all.sort_unstable();
    for cap in [all[0], all[all.len() / 3], all[all.len() - 1]] {
        let got = score_lattice(&mut nodes, &u, cap, &Silent).unwrap();
        let want: Vec<usize> = (0..lattice.size()).filter(|&n| cells(n) <= cap).collect();
        assert_eq!(got.iter().map(|c| c.node).collect::<Vec<_>>(), want, "cap {cap}");
        for c in &got {
            let alone = u.score(&ncp, &nodes.get(c.node).unwrap(), cells(c.node), width, c.node);
            assert_eq!(c.utility.to_bits(), alone.utility.to_bits(), "node {}", c.node);
        }
    }
    assert!(score_lattice(&mut nodes, &u, all[0] - 1, &Silent).is_err(), "no node under the smallest count");
}
