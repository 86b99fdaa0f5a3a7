//! `dp_synthesize` (issue 33, point 1): synthetic records from a private tree of noisy
//! marginals (src/methods/synth, docs/dp.md "Synthetic records from a tree of marginals").
//!
//! - the neighbouring-table audit of the library call: D and D′ differ in one record whose
//!   value of one attribute and whose combination of two others nobody else has; events: that
//!   value in a synthetic record, that combination, the number of records, each tree edge.
//!   P_D(E) ≤ e^ε P_D′(E) in both directions up to sampling error (tests/common/audit.rs); the
//!   same audit of a release run at a far larger ε than the one claimed must fail;
//! - the sampler's exactness: one record's frequencies over independent seeds against the
//!   model's exact probabilities (chi-square at p = 1e-4), the balanced draw's edge counts
//!   within two records of the model's, and the model consistent with its marginals;
//! - through SQL: the ledger charge equal to the proof's sum, the report and the label; bad
//!   input refused with the argument named, nothing registered, nothing charged; a seeded
//!   call needs the session's setting and says it is not private.

mod common;

use anonfusion::methods::synth::model::Variances;
use anonfusion::methods::synth::sample::{Sampler, Weights};
use anonfusion::methods::synth::{Budget, DEFAULT_SPLIT, DEFAULT_TRIPLES, Encoded, SynthConfig, TreeModel, synthesize};
use anonfusion::progress::Silent;
use common::audit::Tally;
use common::{err, int, rows, texts};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Float64Type;
use datafusion::prelude::SessionContext;
use rand::{SeedableRng, rngs::StdRng};

/// Runs per table of the library audit.
const RUNS: u64 = 2000;

/// D′: 40 records over four attributes (domains 3, 2, 4, 3) in which attribute 2 always
/// equals attribute 0 and attribute 3 never takes the value 2; D adds the lone record
/// (0, 1, 2, 2): the only one with attribute 3 = 2 and the only one with (a0, a2) = (0, 2).
fn table(lone: bool) -> Encoded {
    let mut recs: Vec<[u32; 4]> = (0..40u32).map(|i| [i % 3, (i / 3) % 2, i % 3, (i / 2) % 2]).collect();
    if lone {
        recs.push([0, 1, 2, 2]);
    }
    let columns = (0..4).map(|a| recs.iter().map(|r| r[a]).collect()).collect();
    Encoded::new(vec![3, 2, 4, 3], columns, vec![1; recs.len()]).unwrap()
}

/// What a synthesis shows about the lone record.
fn events(columns: &[Vec<u32>], tree: &[(usize, usize)], triples: &[(usize, usize, usize)]) -> Vec<String> {
    let n = columns[0].len();
    let mut e = Vec::new();
    if columns[3].contains(&2) {
        e.push("lone value".to_string());
    }
    if (0..n).any(|i| columns[0][i] == 0 && columns[2][i] == 2) {
        e.push("lone combination".to_string());
    }
    e.extend((34..=48).step_by(2).filter(|&t| n >= t).map(|t| format!("records >= {t}")));
    e.extend(tree.iter().map(|(a, b)| format!("edge {a}-{b}")));
    e.extend(triples.iter().map(|(p, x, c)| format!("three-way {x}-{p}-{c}")));
    e
}

fn audit(run_epsilon: f64, claimed: f64) -> Vec<String> {
    let (d, d2) = (table(true), table(false));
    let mut tally = Tally::default();
    for run in 0..RUNS {
        for (on_d, t, seed) in [(true, &d, run), (false, &d2, RUNS + run)] {
            let config = SynthConfig { seed: Some(seed), ..SynthConfig::new(run_epsilon) };
            let s = synthesize(t, &config, &Silent).unwrap();
            tally.add(on_d, events(&s.columns, &s.tree, &s.triples));
        }
    }
    tally.violations_in(RUNS, &format!("dp_synthesize at {run_epsilon}, claimed {claimed}"), claimed, 0.0)
}

#[test]
fn audit_on_neighbouring_tables() {
    let v = audit(1.0, 1.0);
    assert!(v.is_empty(), "{v:?}");
    // The audit can fail: a release at ε = 40 is far from 0.5-DP on these events.
    assert!(!audit(40.0, 0.5).is_empty(), "the audit must catch a release run at a larger epsilon than claimed");
}

/// The model's exact probability of a record, from its real-valued marginals and joints.
fn model_probability(m: &TreeModel, record: &[u32]) -> f64 {
    let root = m.order[0];
    let mut p = m.marginals[root][record[root] as usize] / m.total;
    for &c in &m.order[1..] {
        let parent = m.parent[c].unwrap();
        let width = m.sizes[c];
        let mut row = &m.joints[c].as_ref().unwrap()[record[parent] as usize * width..][..width];
        if let (Some(e), Some(t)) = (m.extra[c], &m.triples[c]) {
            let given_both = &t[(record[parent] as usize * m.sizes[e] + record[e] as usize) * width..][..width];
            if given_both.iter().sum::<f64>() > 0.0 {
                row = given_both;
            }
        }
        p *= row[record[c] as usize] / row.iter().sum::<f64>();
    }
    p
}

/// Every record of a domain, in mixed radix.
fn all_records(sizes: &[usize]) -> Vec<Vec<u32>> {
    let total: usize = sizes.iter().product();
    (0..total)
        .map(|mut i| {
            sizes
                .iter()
                .map(|&s| {
                    let v = (i % s) as u32;
                    i /= s;
                    v
                })
                .collect()
        })
        .collect()
}

/// The domain sizes of [`path_model`].
const PATH_SIZES: [usize; 3] = [3, 4, 2];

/// A model from noisy measurements of a path 0 – 1 – 2 (domains [`PATH_SIZES`]).
fn path_model() -> TreeModel {
    let one_way = vec![vec![500, 300, -4], vec![100, 400, 250, 60], vec![700, 90]];
    let two_way = vec![vec![90, 200, 150, 40, 10, 180, 100, 12, -3, 2, 1, 0], vec![80, 30, 390, 20, 200, 40, 40, 11]];
    let var = Variances { one_way: 50.0, two_way: 8.0 };
    TreeModel::estimate(&PATH_SIZES, &one_way, &[(0, 1), (1, 2)], &two_way, var).unwrap()
}

/// The path model's sampled frequencies of its 24
/// records against its exact probabilities (which are the model's own up to 2^-50).
#[test]
fn the_sampler_draws_the_models_distribution_exactly() {
    let (sizes, m) = (PATH_SIZES, path_model());
    // Consistent and nonnegative: each joint's margins are the attributes' marginals.
    for c in 1..3 {
        let (p, t) = (m.parent[c].unwrap(), m.joints[c].as_ref().unwrap());
        assert!(t.iter().all(|&x| x >= 0.0));
        for (u, &target) in m.marginals[p].iter().enumerate() {
            let row: f64 = t[u * sizes[c]..][..sizes[c]].iter().sum();
            assert!((row - target).abs() < 1e-6 * m.total, "{c}: {row} vs {target}");
        }
        for (v, &target) in m.marginals[c].iter().enumerate() {
            let col: f64 = (0..sizes[p]).map(|u| t[u * sizes[c] + v]).sum();
            assert!((col - target).abs() < 1e-6 * m.total, "{c}: {col} vs {target}");
        }
    }
    let sampler = Sampler::new(&m);
    let records = all_records(&sizes);
    let probabilities: Vec<f64> = records.iter().map(|r| sampler.probability(r)).collect();
    for (r, &p) in records.iter().zip(&probabilities) {
        assert!((p - model_probability(&m, r)).abs() < 1e-12, "{r:?}");
    }
    let observed = one_record_over_seeds(&sampler, &probabilities, "tree sampler, one record over seeds");
    // And a wrong model is rejected by the same test (it can fail): every probability tilted.
    let tilted: Vec<f64> =
        probabilities.iter().enumerate().map(|(i, p)| p * if i % 2 == 0 { 1.1 } else { 0.9 }).collect();
    let sum: f64 = tilted.iter().sum();
    let tilted: Vec<f64> = tilted.iter().map(|p| p / sum).collect();
    let (stat, df) = common::chi_square(&observed, &tilted);
    assert!(stat > common::critical_value(df), "{stat}");
    // Balanced: in one draw, every edge's pair counts are within a few records of n times the
    // model's pair probability (each allotment rounds by less than one record per value; the
    // second edge's groups add the first's rounding), where independent draws would be off by
    // up to 200 (√(n p)).
    let n = 200_000u64;
    let columns = sampler.draw(n, &mut StdRng::seed_from_u64(11), &Silent).unwrap();
    for (p, c) in [(0usize, 1usize), (1, 2)] {
        let mut pair = vec![0.0f64; sizes[p] * sizes[c]];
        for (r, &q) in records.iter().zip(&probabilities) {
            pair[r[p] as usize * sizes[c] + r[c] as usize] += q;
        }
        let mut counts = vec![0u64; pair.len()];
        for (&u, &v) in columns[p].iter().zip(&columns[c]) {
            counts[u as usize * sizes[c] + v as usize] += 1;
        }
        for (&got, &q) in counts.iter().zip(&pair) {
            assert!((got as f64 - n as f64 * q).abs() <= 8.0, "edge {p}-{c}: {got} vs {}", n as f64 * q);
        }
    }
}

/// Each record follows the model exactly: the 4th of 7 records (7: the allotments' rounding
/// matters) of a model over domains 3, 4, 2, over independent seeds, is a multinomial sample
/// of the probabilities. The observed counts, in mixed radix.
fn one_record_over_seeds(sampler: &Sampler, probabilities: &[f64], what: &str) -> Vec<u64> {
    let mut observed = vec![0u64; probabilities.len()];
    for seed in 0..60_000u64 {
        let columns = sampler.draw(7, &mut StdRng::seed_from_u64(seed), &Silent).unwrap();
        let (a, b, c) = (columns[0][3], columns[1][3], columns[2][3]);
        observed[a as usize + 3 * (b as usize + 4 * c as usize)] += 1;
    }
    common::assert_fits(what, &observed, probabilities);
    observed
}

/// A three-way marginal: attribute 2 (parent 1) gains its grandparent 0 as a second parent.
/// The raked three-way table keeps the model's (1, 2) and (1, 0) tables, the sampler's exact
/// probabilities are the model's, and one record over seeds follows them.
#[test]
fn a_second_parent_is_drawn_exactly() {
    let (sizes, mut m) = (PATH_SIZES, path_model());
    // (1, 0, 2), row-major: attribute 2 leans on attribute 0 where the tree says it does not.
    let three: Vec<i64> = (0..24).map(|i| if (i / 2) % 3 == i % 2 { 60 } else { 4 }).collect();
    assert!(m.add_triple(2, 0, &three).is_err(), "0 is drawn from 2's ancestors, not the reverse");
    m.add_triple(0, 2, &three).unwrap();
    assert_eq!((m.extra[2], m.order.clone()), (Some(0), vec![0, 1, 2]));
    let t = m.triples[2].as_ref().unwrap();
    let at = |u: usize, w: usize, v: usize| t[(u * 3 + w) * 2 + v];
    let (pc, ep) = (m.joints[2].as_ref().unwrap(), m.joints[1].as_ref().unwrap());
    for u in 0..4 {
        for v in 0..2 {
            let sum: f64 = (0..3).map(|w| at(u, w, v)).sum();
            assert!((sum - pc[u * 2 + v]).abs() < 1e-6 * m.total, "(1, 2) margin {u} {v}");
        }
        for w in 0..3 {
            let sum: f64 = (0..2).map(|v| at(u, w, v)).sum();
            assert!((sum - ep[w * 4 + u]).abs() < 1e-6 * m.total, "(1, 0) margin {u} {w}");
        }
    }
    let sampler = Sampler::new(&m);
    let records = all_records(&sizes);
    let probabilities: Vec<f64> = records.iter().map(|r| sampler.probability(r)).collect();
    for (r, &p) in records.iter().zip(&probabilities) {
        assert!((p - model_probability(&m, r)).abs() < 1e-12, "{r:?}");
    }
    assert!((probabilities.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    one_record_over_seeds(&sampler, &probabilities, "sampler with a second parent, one record over seeds");
}

/// Balanced counts: ⌊n p⌋ or one more, summing to n, and for each value exactly n p on average.
#[test]
fn balanced_counts_round_n_p_at_random() {
    let w = Weights::new(&[0.0, 3.0, 1.0, 2.5]);
    let mut rng = StdRng::seed_from_u64(4);
    let n = 13u64;
    let mut sums = [0u64; 4];
    let runs = 20_000u64;
    for _ in 0..runs {
        let c = w.counts(n, &mut rng);
        assert_eq!(c.iter().sum::<u64>(), n);
        for (i, &x) in c.iter().enumerate() {
            let expect = n as f64 * w.probability(i);
            assert!(x as f64 >= expect.floor() && x as f64 <= expect.floor() + 1.0, "{i}: {x} vs {expect}");
            sums[i] += x;
        }
    }
    assert_eq!(sums[0], 0);
    for (i, &s) in sums.iter().enumerate().skip(1) {
        let mean = s as f64 / runs as f64;
        let expect = n as f64 * w.probability(i);
        // Each count varies by at most one around its mean: 20,000 runs pin the mean to ±0.02.
        assert!((mean - expect).abs() < 0.02, "{i}: {mean} vs {expect}");
    }
}

#[test]
fn integer_weights_are_exact_and_skip_zeros() {
    let w = Weights::new(&[0.0, 3.0, 0.0, 1.0]);
    assert_eq!((w.probability(0), w.probability(1), w.probability(3)), (0.0, 0.75, 0.25));
    let mut rng = StdRng::seed_from_u64(2);
    let mut seen = [0u64; 4];
    (0..40_000).for_each(|_| seen[w.sample(&mut rng) as usize] += 1);
    assert_eq!((seen[0], seen[2]), (0, 0));
    common::assert_fits("weights", &seen, &[0.0, 0.75, 0.0, 0.25].map(|p: f64| p.max(0.0)));
    assert_eq!(Weights::new(&[0.0, 0.0]).probability(1), 0.5);
}

/// The release draws as many records as its noisy estimate N̂, and finds the strong dependence.
#[test]
fn a_synthesis_keeps_the_table_size_and_its_strongest_pair() {
    let s = synthesize(&table(false), &SynthConfig { seed: Some(5), ..SynthConfig::new(50.0) }, &Silent).unwrap();
    assert_eq!(s.columns[0].len() as u64, s.records);
    assert!((38..=42).contains(&s.records), "{}", s.records);
    assert!(s.tree.contains(&(0, 2)), "{:?}", s.tree);
    // a2 = a0 in D′: a sharp model reproduces it.
    let same = (0..s.columns[0].len()).filter(|&i| s.columns[0][i] == s.columns[2][i]).count();
    assert!(same as f64 >= 0.9 * s.records as f64, "{same}");
    assert!(Encoded::check_size(&[5000, 5000]).unwrap_err().to_string().contains("levels"));
}

/// An 8-record table at a huge ε (budget 40000, ε 30000): every noise variance underflows to 0,
/// which made N̂ inf and the sampler ask for u64::MAX records ("capacity overflow"). Now the
/// exact measurements decide and the release draws the table's own 8 records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_epsilon_draws_the_tables_own_size() {
    let ctx = common::eight_records(40000).await;
    let n = int(&ctx, "SELECT COUNT(*) FROM dp_synthesize('t', 'o', 30000, 'values=s0|s1|s2, seed=1')").await;
    assert_eq!(n, 8);
    assert_eq!(int(&ctx, "SELECT released_records FROM o_report").await, 8);
}

async fn spent(ctx: &SessionContext) -> f64 {
    let b = rows(ctx, "SELECT COALESCE(MAX(spent), 0.0) FROM anon_privacy_ledger WHERE table_name = 'nps'").await;
    let c = datafusion::arrow::compute::cast(b[0].column(0), &datafusion::arrow::datatypes::DataType::Float64).unwrap();
    c.as_primitive::<Float64Type>().value(0)
}

async fn nps() -> SessionContext {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('nps', 8000, 4)").await;
    rows(&ctx, "SELECT * FROM set_privacy_budget('nps', 10.0)").await;
    ctx
}

/// What the ledger recorded for `release`, exactly: its own record (the table shows 9
/// significant digits); one record per release.
async fn recorded_spend(ctx: &SessionContext, release: &str) -> f64 {
    let path = texts(ctx, "SELECT DISTINCT ledger_path FROM anon_privacy_ledger").await;
    let ledger = anonfusion::dp::ledger::Ledger::open(&path[0]);
    let recorded =
        ledger.rows().unwrap().into_iter().filter(|r| r.release.as_deref() == Some(release)).collect::<Vec<_>>();
    assert_eq!(recorded.len(), 1);
    recorded[0].spent
}

/// The charge is the proof's sum on the grid (six attributes and t three-way marginals:
/// 6 ε₁ + (5 + t) (ε_s + ε₂)), the report and the label say what the release is, and the
/// release has the declared columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_is_charged_the_proofs_sum() {
    let ctx = nps().await;
    let n = int(&ctx, "SELECT COUNT(*) FROM dp_synthesize('nps', 's', 1.0)").await;
    assert_eq!(n, int(&ctx, "SELECT released_records FROM s_report").await);
    assert!((7700..=8300).contains(&n), "{n}");
    let units = Budget::with_declared(1.0, DEFAULT_SPLIT, 6, 0, DEFAULT_TRIPLES).unwrap().units();
    assert_ne!(units, Budget::new(1.0, DEFAULT_SPLIT, 6).unwrap().units(), "the three-way marginals' shares");
    assert_eq!(recorded_spend(&ctx, "s").await, units as f64 / 2f64.powi(32));
    let parts = texts(&ctx, "SELECT parts FROM anon_privacy_ledger WHERE release = 's'").await;
    assert!(
        parts[0].contains("one_way=") && parts[0].contains("(5 x ") && parts[0].contains("three_way="),
        "{parts:?}"
    );
    assert!(parts[0].contains(&format!("({DEFAULT_TRIPLES} x ")), "{parts:?}");
    let chosen = texts(&ctx, "SELECT three_way FROM s_report").await;
    assert_eq!(chosen[0].split(", ").count(), DEFAULT_TRIPLES, "{chosen:?}");
    // Default levels: age (numeric, 100 one-year leaves) at its first band, length of stay
    // (360 leaves) at its first band (72 nodes), the categorical ones at their leaves.
    let report = texts(&ctx, "SELECT guarantee || ' | ' || levels || ' | ' || tree FROM s_report").await;
    assert!(
        report[0].starts_with("epsilon-differentially private") && report[0].contains("| 1:0:1:0:0 |"),
        "{report:?}"
    );
    let sum = rows(
        &ctx,
        "SELECT epsilon_one_way + epsilon_selection + epsilon_two_way + epsilon_three_way - epsilon FROM s_report",
    )
    .await;
    assert!(sum[0].column(0).as_primitive::<Float64Type>().value(0).abs() < 1e-12);
    let schema = ctx.table("s").await.unwrap().schema().as_arrow().clone();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "age",
            "age_lo",
            "age_hi",
            "sex",
            "length_of_stay",
            "length_of_stay_lo",
            "length_of_stay_hi",
            "location",
            "surgery",
            "disease"
        ]
    );
    assert!(schema.metadata()["anonfusion.guarantee"].starts_with("epsilon-differentially private"));
    assert!(!ctx.table_exist("s_diagnostics").unwrap(), "diagnostics are opt-in");
}

/// A declared edge is in the tree and spends no selection budget: four private rounds of the
/// tree (and one per three-way marginal) share the selection's ε, and the charge is again the
/// proof's sum (6 ε₁ + (4 + t) ε_s + (5 + t) ε₂), exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_edge_is_charged_the_proofs_sum() {
    let ctx = nps().await;
    int(&ctx, "SELECT COUNT(*) FROM dp_synthesize('nps', 'e', 1.0, 'edges=length_of_stay-age')").await;
    let units = Budget::with_declared(1.0, DEFAULT_SPLIT, 6, 1, DEFAULT_TRIPLES).unwrap().units();
    let undeclared = Budget::with_declared(1.0, DEFAULT_SPLIT, 6, 0, DEFAULT_TRIPLES).unwrap().units();
    assert_ne!(units, undeclared, "the rounds' shares differ");
    assert_eq!(recorded_spend(&ctx, "e").await, units as f64 / 2f64.powi(32));
    let tree = texts(&ctx, "SELECT tree FROM e_report").await;
    assert!(tree[0].starts_with("age-length_of_stay, "), "{tree:?}");
    let parts = texts(&ctx, "SELECT parts FROM anon_privacy_ledger WHERE release = 'e'").await;
    assert!(parts[0].contains(&format!("({} x ", 4 + DEFAULT_TRIPLES)), "{parts:?}");
}

/// Bad input names its argument; a hierarchy read from the data is refused with the column
/// named; a seeded call needs the setting. Nothing registered, nothing charged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_before_anything_is_charged() {
    let ctx = nps().await;
    for (call, needle) in [
        ("dp_synthesize('nps', 'x', 0.0)", "epsilon"),
        ("dp_synthesize('nps', 'x', -1.0)", "epsilon"),
        ("dp_synthesize('nps', 'x', 1e-9)", "epsilon"),
        ("dp_synthesize('nps', 'x', 'one')", "epsilon"),
        ("dp_synthesize('nps', 'x', 1.0, 'levels=9:0:0:0:0')", "levels"),
        ("dp_synthesize('nps', 'x', 1.0, 'levels=1:0')", "levels"),
        ("dp_synthesize('nps', 'x', 1.0, 'levels=a')", "levels"),
        ("dp_synthesize('nps', 'x', 1.0, 'split=0.5:0.5:0.5')", "split"),
        ("dp_synthesize('nps', 'x', 1.0, 'edges=age-weight')", "edges"),
        ("dp_synthesize('nps', 'x', 1.0, 'edges=age-age')", "edges"),
        ("dp_synthesize('nps', 'x', 1.0, 'edges=age-sex|sex-disease|disease-age')", "edges"),
        ("dp_synthesize('nps', 'x', 1.0, 'split=0.5:0.5')", "split"),
        ("dp_synthesize('nps', 'x', 1.0, 'values=a|a')", "values"),
        ("dp_synthesize('nps', 'x', 1.0, 'values=flu')", "disease"),
        ("dp_synthesize('nps', 'x', 1.0, 'diagnostics=yes')", "diagnostics"),
        ("dp_synthesize('nps', 'x', 1.0, 'rounds=3')", "rounds"),
        ("dp_synthesize('nps', 'x', 1.0, 'max_rows=0')", "max_rows"),
        ("dp_synthesize('nps', 'x', 1e-6)", "max_rows="),
        ("dp_synthesize('nps', 'x', 1.0, 'max_rows=100')", "rows of noise"),
        ("dp_synthesize('nps', 'x', 1.0, 'seed=7')", "seeded_dp"),
        ("dp_synthesize('nowhere', 'x', 1.0)", "nowhere"),
    ] {
        let e = err(&ctx, &format!("SELECT * FROM {call}")).await;
        assert!(e.contains(needle), "{call}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{call}");
    }
    rows(&ctx, "SELECT * FROM interval_hierarchy('nps', 'age', '5,10,*')").await;
    let e = err(&ctx, "SELECT * FROM dp_synthesize('nps', 'x', 1.0)").await;
    assert!(e.contains("'age'") && e.contains("derived from the data"), "{e}");
    assert!(!ctx.table_exist("x").unwrap());
    assert_eq!(spent(&ctx).await, 0.0, "a refusal spends nothing");
}

/// A seeded call (tests only) with the setting: labelled not private, charged nothing, and the
/// same seed gives the same records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeded_call_is_labelled_not_private() {
    let ctx = nps().await;
    common::allow_seeded_dp(&ctx);
    let count = "SELECT COUNT(*) FROM dp_synthesize('nps', 's', 1.0, 'seed=3, diagnostics=true')";
    let n = int(&ctx, count).await;
    let report = texts(&ctx, "SELECT guarantee FROM s_report").await;
    assert!(report[0].starts_with("not differentially private"), "{report:?}");
    assert_eq!(spent(&ctx).await, 0.0);
    assert_eq!(int(&ctx, "SELECT original_records FROM s_diagnostics").await, 8000);
    let first = texts(&ctx, "SELECT c || a || d FROM (SELECT CAST(COUNT(*) AS VARCHAR) AS c, age AS a, disease AS d FROM s GROUP BY age, disease) ORDER BY 1").await;
    let other = nps().await;
    common::allow_seeded_dp(&other);
    assert_eq!(int(&other, count).await, n);
    let again = texts(&other, "SELECT c || a || d FROM (SELECT CAST(COUNT(*) AS VARCHAR) AS c, age AS a, disease AS d FROM s GROUP BY age, disease) ORDER BY 1").await;
    assert_eq!(first, again);
}

/// Ctrl-C after `calls` looks at the flag.
#[derive(Debug)]
struct CancelAfter(std::sync::atomic::AtomicUsize);

impl anonfusion::progress::Progress for CancelAfter {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
    fn cancelled(&self) -> bool {
        self.0
            .fetch_update(std::sync::atomic::Ordering::SeqCst, std::sync::atomic::Ordering::SeqCst, |n| {
                n.checked_sub(1)
            })
            .is_err()
    }
}

/// Ctrl-C before the first draw is `Cancelled` (the reservation is returned); after it,
/// `CancelledAfterNoise` (the adapter commits the charge), at every later checkpoint.
#[test]
fn ctrl_c_before_and_after_the_first_draw() {
    use anonfusion::AnonError;
    let config = SynthConfig { seed: Some(1), ..SynthConfig::new(1.0) };
    let run = |calls: usize| synthesize(&table(true), &config, &CancelAfter(calls.into())).unwrap_err();
    assert!(matches!(run(0), AnonError::Cancelled), "{:?}", run(0));
    for calls in 1..5 {
        assert!(matches!(run(calls), AnonError::CancelledAfterNoise), "{calls}: {:?}", run(calls));
    }
}
