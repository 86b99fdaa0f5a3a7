//! `risk_report` against its definitions, recomputed here by a second, naive path that shares
//! no code with `src/risk`: class sizes by a HashMap over the rows, each attacker's risk record
//! by record (a record's risk is 1 / its class's size), uniques and pairs by counting, Zayatz's
//! estimate from hypergeometric probabilities built from log-factorials, and Dankar's rule
//! applied to the report's own model rows. Then the release-aware cases (suppressed records)
//! and the bad inputs, each with an error that names the argument and echoes no value.

mod common;

use common::{err, rows};

use anonfusion::new_session;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Float64Type;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use std::collections::HashMap;

/// measure → value of a `risk_report` call.
async fn report(ctx: &SessionContext, call: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for b in rows(ctx, &format!("SELECT measure, value FROM {call}")).await {
        let m = b.column(0).as_string::<i32>();
        let v = b.column(1).as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            out.insert(m.value(i).to_string(), v.value(i));
        }
    }
    out
}

/// A table `t` of (a, b, c) rows, a and b declared quasi-identifiers.
async fn table(ctx: &SessionContext, name: &str, records: &[(u8, u8)]) {
    let values: Vec<String> = records.iter().map(|(a, b)| format!("('a{a}', 'b{b}', 'x')")).collect();
    rows(
        ctx,
        &format!(
            "CREATE TABLE {name} AS SELECT column1 AS a, column2 AS b, column3 AS c FROM (VALUES {})",
            values.join(", ")
        ),
    )
    .await;
    rows(ctx, &format!("SELECT * FROM declare_roles('{name}', 'a=qi, b=qi, c=insensitive')")).await;
}

/// A release `r` of such a table: its (a, b) labels as given, c = 'x'.
async fn release(ctx: &SessionContext, labels: &[(&str, &str)]) {
    let values: Vec<String> = labels.iter().map(|(a, b)| format!("('{a}', '{b}', 'x')")).collect();
    let sql = format!(
        "CREATE TABLE r AS SELECT column1 AS a, column2 AS b, column3 AS c FROM (VALUES {})",
        values.join(", ")
    );
    rows(ctx, &sql).await;
}

fn ln_factorial(m: u64) -> f64 {
    (1..=m).map(|i| (i as f64).ln()).sum()
}

fn ln_choose(m: u64, k: u64) -> f64 {
    ln_factorial(m) - ln_factorial(k) - ln_factorial(m - k)
}

/// P(X = 1), X hypergeometric: one of `successes` among `draws` from `population`.
fn hypergeometric_one(population: u64, successes: u64, draws: u64) -> f64 {
    if population - successes < draws - 1 {
        return 0.0;
    }
    (ln_choose(successes, 1) + ln_choose(population - successes, draws - 1) - ln_choose(population, draws)).exp()
}

fn close(ours: f64, naive: f64, what: &str) {
    assert!((ours - naive).abs() <= 1e-9 * naive.abs().max(1.0), "{what}: report {ours}, definition {naive}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_report_equals_the_definitions(
        records in prop::collection::vec((0u8..4, 0u8..5), 1..60),
        threshold in prop::sample::select(vec![0.1, 0.2, 0.34, 0.5, 1.0]),
        factor in 1u64..30,
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let ctx = new_session();
            table(&ctx, "t", &records).await;
            let n = records.len() as u64;
            let population = n * factor;
            let got = report(&ctx, &format!("risk_report('t', '', 'threshold={threshold}, population={population}')")).await;

            let mut size: HashMap<(u8, u8), u64> = HashMap::new();
            for r in &records {
                *size.entry(*r).or_default() += 1;
            }
            // Each record's risk is 1 / its class's size.
            let risks: Vec<f64> = records.iter().map(|r| 1.0 / size[r] as f64).collect();
            let nf = n as f64;
            let at_risk = risks.iter().filter(|&&r| r > threshold).count() as f64 / nf;
            let highest = risks.iter().cloned().fold(0.0, f64::max);
            let lowest = risks.iter().cloned().fold(1.0, f64::min);
            let mean = risks.iter().sum::<f64>() / nf;
            let uniques = size.values().filter(|&&s| s == 1).count() as f64;
            let pairs = 2.0 * size.values().filter(|&&s| s == 2).count() as f64;
            close(got["records"], nf, "records");
            close(got["classes"], size.len() as f64, "classes");
            for who in ["prosecutor", "journalist"] {
                close(got[&format!("{who}_records_at_risk")], at_risk, "records at risk");
                close(got[&format!("{who}_highest_risk")], highest, "highest risk");
                close(got[&format!("{who}_lowest_risk")], lowest, "lowest risk");
                close(got[&format!("{who}_success_rate")], mean, "success rate");
            }
            close(got["marketer_success_rate"], mean, "marketer");
            close(got["sample_uniques"], uniques / nf, "sample uniques");
            close(got["sample_pairs"], pairs / nf, "sample pairs");

            // Zayatz: the sample's class sizes stand for the population's.
            let u = size.len() as f64;
            let weighted: f64 = size.values().map(|&s| hypergeometric_one(population, s, n) / u).sum();
            let zayatz = if uniques == 0.0 {
                0.0
            } else {
                let share = uniques / u * hypergeometric_one(population, 1, n) / weighted;
                uniques * share / (nf / population as f64) / population as f64
            };
            close(got["zayatz_uniques"], zayatz, "Zayatz");

            // Dankar's rule over the report's own estimates.
            let f = nf / population as f64;
            let valid = |m: &str| Some(got[m]).filter(|v| v.is_finite() && *v != 0.0);
            let dankar = if uniques == 0.0 {
                0.0
            } else if f <= 0.1 {
                valid("pitman_uniques").unwrap_or(got["zayatz_uniques"])
            } else {
                match valid("snb_uniques") {
                    Some(s) if s <= got["zayatz_uniques"] => s,
                    _ => got["zayatz_uniques"],
                }
            };
            close(got["population_uniques"], dankar, "Dankar's rule");
            // An estimate is a share of the population.
            for m in ["pitman_uniques", "zayatz_uniques", "snb_uniques", "population_uniques"] {
                let v = got[m];
                prop_assert!(v.is_nan() || (0.0..=1.0).contains(&v), "{m} = {v}");
            }
            Ok(())
        })?;
    }
}

/// A table `s` of four quasi-identifiers q0..q3 (`None` a NULL) and one other column.
async fn wide_table(ctx: &SessionContext, records: &[[Option<u8>; 4]]) {
    let cell = |v: &Option<u8>| v.map_or("NULL".to_string(), |v| format!("'v{v}'"));
    let values: Vec<String> =
        records.iter().map(|r| format!("({}, 'x')", r.iter().map(cell).collect::<Vec<_>>().join(", "))).collect();
    rows(
        ctx,
        &format!(
            "CREATE TABLE s AS SELECT column1 AS q0, column2 AS q1, column3 AS q2, column4 AS q3, column5 AS c \
             FROM (VALUES {})",
            values.join(", ")
        ),
    )
    .await;
    rows(ctx, "SELECT * FROM declare_roles('s', 'q0=qi, q1=qi, q2=qi, q3=qi, c=insensitive')").await;
}

/// SUDA by its definitions, record by record: a set S of quasi-identifiers (non-empty, at most
/// `max_size`, no NULL of the record in it) is a minimal sample unique when no other record has
/// the record's values on S and, on each S minus one column, some other record does.
struct NaiveSuda {
    /// msus[i][k - 1]: record i's MSUs of k quasi-identifiers.
    msus: Vec<Vec<u32>>,
    scores: Vec<f64>,
    dis_scores: Vec<f64>,
    dis: f64,
}

fn naive_suda(records: &[[Option<u8>; 4]], max_size: usize, fraction: f64) -> NaiveSuda {
    let m = 4usize;
    let shares = |i: usize, set: &[usize]| {
        records.iter().enumerate().any(|(t, other)| t != i && set.iter().all(|&j| other[j] == records[i][j]))
    };
    let mut msus = vec![vec![0u32; max_size]; records.len()];
    for (i, r) in records.iter().enumerate() {
        for mask in 1u32..16 {
            let set: Vec<usize> = (0..m).filter(|j| mask >> j & 1 == 1).collect();
            if set.len() > max_size || set.iter().any(|&j| r[j].is_none()) || shares(i, &set) {
                continue;
            }
            let minimal = set.len() == 1
                || set.iter().all(|&drop| shares(i, &set.iter().copied().filter(|&j| j != drop).collect::<Vec<_>>()));
            if minimal {
                msus[i][set.len() - 1] += 1;
            }
        }
    }
    // Elliot et al.'s weight of an MSU of size k: (m − k)(m − k − 1)…(m − min(K, m − 1)).
    let weight = |k: usize| (k..=max_size.min(m - 1)).map(|i| (m - i) as f64).product::<f64>();
    let scores: Vec<f64> =
        msus.iter().map(|c| c.iter().enumerate().map(|(k, &n)| n as f64 * weight(k + 1)).sum()).collect();
    let mut classes: HashMap<[Option<u8>; 4], u64> = HashMap::new();
    for r in records {
        *classes.entry(*r).or_default() += 1;
    }
    let uniques = classes.values().filter(|&&s| s == 1).count() as f64;
    let pairs = 2.0 * classes.values().filter(|&&s| s == 2).count() as f64;
    let dis = if uniques > 0.0 { uniques * fraction / (uniques * fraction + pairs * (1.0 - fraction)) } else { 0.0 };
    let q = 1.0 + (8.0 - m as f64) / 20.0;
    let total: f64 = scores.iter().filter(|&&s| s > 0.0).map(|s| 1.0 / s.powf(q)).sum();
    let dis_scores = scores
        .iter()
        .map(|&s| if s > 0.0 { 1.0 / (1.0 + (uniques / dis - uniques) / (s.powf(q) * total)) } else { 0.0 })
        .collect();
    NaiveSuda { msus, scores, dis_scores, dis }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn suda_equals_its_definitions(
        records in prop::collection::vec(prop::array::uniform4(prop::option::weighted(0.9, 0u8..3)), 1..40),
        max_size in 1usize..=4,
        factor in prop::sample::select(vec![0u64, 2, 50]),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let ctx = new_session();
            wide_table(&ctx, &records).await;
            let n = records.len() as u64;
            // No population declared: sdcMicro's default sampling fraction, 0.01.
            let (population, fraction) = match factor {
                0 => (String::new(), 0.01),
                f => (format!(", population={}", n * f), 1.0 / f as f64),
            };
            let got = report(&ctx, &format!("risk_report('s', '', 'suda=true, suda_max_size={max_size}{population}')")).await;
            let naive = naive_suda(&records, max_size, fraction);
            let nf = n as f64;
            for k in 1..=max_size {
                let total: u32 = naive.msus.iter().map(|c| c[k - 1]).sum();
                close(got[&format!("suda_msus_size_{k}")], total as f64, "MSUs of one size");
            }
            let beyond = format!("suda_msus_size_{}", max_size + 1);
            prop_assert!(!got.contains_key(&beyond), "{beyond} is past suda_max_size");
            let with = naive.scores.iter().filter(|&&s| s > 0.0).count() as f64;
            close(got["suda_records_with_msus"], with / nf, "records with an MSU");
            let highest = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
            close(got["suda_score_highest"], highest(&naive.scores), "highest SUDA score");
            close(got["suda_score_mean"], naive.scores.iter().sum::<f64>() / nf, "mean SUDA score");
            close(got["dis"], naive.dis, "DIS");
            close(got["dis_suda_score_highest"], highest(&naive.dis_scores), "highest DIS-SUDA score");
            close(got["dis_suda_score_mean"], naive.dis_scores.iter().sum::<f64>() / nf, "mean DIS-SUDA score");
            // sdcMicro's table: 0, then (0, 0.1], …, (0.6, 0.7], then above 0.7, its breaks the
            // tenths plus machine epsilon (`print.suda2`): a score of 1e-17 is "0", as there.
            let brk = |i: u32| f64::from(i) / 10.0 + f64::EPSILON;
            let in_range = |low: f64, high: f64| {
                naive.dis_scores.iter().filter(|&&x| x > low && x <= high).count() as f64 / nf
            };
            close(got["dis_suda_records_0"], in_range(-1.0, brk(0)), "DIS-SUDA 0");
            for i in 1..=7 {
                let (low, high) = ((i - 1) as f64 / 10.0, i as f64 / 10.0);
                close(got[&format!("dis_suda_records_{low:.1}_{high:.1}")], in_range(brk(i - 1), brk(i)), "DIS-SUDA tenth");
            }
            close(got["dis_suda_records_above_0.7"], in_range(brk(7), f64::INFINITY), "DIS-SUDA above 0.7");
            Ok(())
        })?;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suda_reads_a_suppressed_cell_as_saying_nothing() {
    let ctx = new_session();
    table(&ctx, "t", &[(0, 0), (1, 1), (1, 2), (2, 2)]).await;
    // A release with one cell suppressed (a0, *) and one record suppressed (*, *).
    release(&ctx, &[("a0", "*"), ("a1", "b1"), ("a1", "b2"), ("*", "*")]).await;
    let got = report(&ctx, "risk_report('t', 'r', 'suda=true')").await;
    // Each of the three records is unique on one value: a0, b1, b2. The `*` of the first is no
    // value of it (sdcMicro's missing), so {b} is no MSU of it; the suppressed record is in no
    // class and has no MSU.
    assert_eq!(got["suda_msus_size_1"], 3.0);
    assert_eq!(got["suda_msus_size_2"], 0.0);
    assert_eq!(got["suda_records_with_msus"], 1.0);
    // Two quasi-identifiers: an MSU of one weighs (2 − 1)! = 1.
    assert_eq!(got["suda_score_highest"], 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_s_suppressed_records_form_no_class() {
    let ctx = new_session();
    table(&ctx, "t", &[(0, 0), (0, 0), (1, 1), (2, 2)]).await;
    // A release of t: two records suppressed (every quasi-identifier `*`), a class of two.
    release(&ctx, &[("a0", "*"), ("a0", "*"), ("*", "*"), ("*", "*")]).await;
    let got = report(&ctx, "risk_report('t', 'r')").await;
    assert_eq!(got["records"], 2.0);
    assert_eq!(got["suppressed_records"], 2.0);
    assert_eq!(got["classes"], 1.0);
    assert_eq!(got["prosecutor_highest_risk"], 0.5);
    // The raw table: classes of 2, 1, 1.
    let raw = report(&ctx, "risk_report('t')").await;
    assert_eq!((raw["classes"], raw["sample_uniques"]), (3.0, 0.5));
    assert!(raw["population_uniques"].is_nan(), "no population declared: no estimate");
}

/// Every record suppressed: the counts over no class are 0, never -0.0 (an empty f64 sum).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_all_suppressed_release_reports_no_negative_zero() {
    let ctx = new_session();
    table(&ctx, "t", &[(0, 0), (1, 1)]).await;
    release(&ctx, &[("*", "*"), ("*", "*")]).await;
    for (measure, value) in report(&ctx, "risk_report('t', 'r')").await {
        assert!(!(value == 0.0 && value.is_sign_negative()), "{measure} is -0.0");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_naming_the_argument() {
    let ctx = new_session();
    table(&ctx, "t", &[(0, 0), (0, 1), (1, 1)]).await;
    rows(&ctx, "CREATE TABLE other AS SELECT 'secret-value' AS z, 'b0' AS b").await;
    let cases = [
        ("risk_report('t', '', 'population=2')", "options", "smaller than the sample"),
        ("risk_report('t', 'other')", "release", "release of another table"),
        ("risk_report('t', '', 'qis=a c')", "options", "'c' is not a declared quasi-identifier"),
        ("risk_report('t', '', 'population=10, fraction=0.5')", "options", "not both"),
        ("risk_report('t', 'missing')", "release", "not found"),
        ("risk_report('nowhere')", "nowhere", "no attribute roles"),
        ("risk_report('t', '', 'suda_max_size=2')", "suda_max_size", "needs suda=true"),
    ];
    for (call, argument, says) in cases {
        let e = err(&ctx, &format!("SELECT * FROM {call}")).await;
        assert!(e.contains(argument) && e.contains(says), "{call}: {e}");
        assert!(!e.contains("secret-value"), "{call} echoes a value: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journalist_links_against_a_population_table() {
    let ctx = new_session();
    // t is a sample of p: class (a0, b0) has 2 records in t and 4 in p, (a1, b1) 1 and 3.
    table(&ctx, "t", &[(0, 0), (0, 0), (1, 1)]).await;
    table(&ctx, "p", &[(0, 0), (0, 0), (0, 0), (0, 0), (1, 1), (1, 1), (1, 1), (2, 2)]).await;
    let got = report(&ctx, "risk_report('t', '', 'population_table=p, threshold=0.3')").await;
    // Record risks 1/4, 1/4, 1/3: one above 0.3.
    assert_eq!(got["journalist_records_at_risk"], 1.0 / 3.0);
    assert_eq!(got["journalist_highest_risk"], 1.0 / 3.0);
    assert_eq!(got["journalist_lowest_risk"], 0.25);
    let marketer = (2.0 / 4.0 + 1.0 / 3.0) / 3.0;
    assert_eq!(got["marketer_success_rate"], marketer);
    assert_eq!(got["journalist_success_rate"], (2.0f64 / 7.0).max(marketer));
    // The prosecutor still reads the sample: classes of 2 and 1.
    assert_eq!(got["prosecutor_highest_risk"], 1.0);

    // A "population" missing one of the sample's classes is not one.
    table(&ctx, "q", &[(0, 0), (0, 0), (0, 0)]).await;
    let e = err(&ctx, "SELECT * FROM risk_report('t', '', 'population_table=q')").await;
    assert!(e.contains("options") && e.contains("must be a sample of it"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dp_release_is_refused() {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::datasource::MemTable;
    use std::sync::Arc;
    let ctx = new_session();
    table(&ctx, "t", &[(0, 0), (1, 1)]).await;
    // A table labelled as DP releases are (src/methods/ipa/guarantee.rs).
    let label = [("anonfusion.guarantee".to_string(), "(1, 0)-differential privacy".to_string())];
    let schema = Arc::new(Schema::new_with_metadata(
        vec![Field::new("a", DataType::Utf8, false), Field::new("b", DataType::Utf8, false)],
        label.into_iter().collect(),
    ));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(StringArray::from(vec!["a0"])), Arc::new(StringArray::from(vec!["b0"]))],
    )
    .unwrap();
    ctx.register_table("dp", Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap())).unwrap();
    let e = err(&ctx, "SELECT * FROM risk_report('t', 'dp')").await;
    assert!(e.contains("release") && e.contains("differentially private"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_h_ceiling_release_read_with_its_catalog() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    rows(&ctx, "SELECT COUNT(*) FROM hceil_anonymize('adult', 'h', 5, 0.3, 'seed=1')").await;
    let published = report(&ctx, "risk_report('adult', 'h')").await;
    let read = report(&ctx, "risk_report('adult', 'h', 'catalog=h_catalog')").await;
    // As published every class has 5 or more records (counterfeits included).
    assert!(published["prosecutor_highest_risk"] <= 0.2);
    assert_eq!(published["suppressed_records"], 0.0);
    // The catalog's reader sets aside the records that may be counterfeit; the rest are
    // certainly genuine, and their classes are smaller.
    let genuine = common::int(
        &ctx,
        "SELECT COUNT(*) FROM truthful_view('h', 'h_catalog') WHERE NOT (age = '*' AND sex = '*' AND race = '*' \
         AND marital_status = '*' AND education = '*' AND native_country = '*' AND workclass = '*')",
    )
    .await;
    assert_eq!(read["records"], genuine as f64);
    assert!(read["suppressed_records"] > 0.0);
    assert!(read["prosecutor_highest_risk"] > published["prosecutor_highest_risk"]);
}

#[test]
fn cli_evaluate_prints_the_risk_of_the_original_and_the_release() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_anonfusion"))
        .args(["evaluate", "--original", "nps", "--release", "nps_g", "--risk", "fraction=0.1"])
        .args(["--load", "SELECT * FROM load_dataset('nps', 20000, 1)"])
        .args(["--load", "SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')"])
        .arg("sql/q1.sql")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let original = stdout.find("re-identification risk of the original").expect("original's report");
    let release = stdout.find("re-identification risk of the release").expect("release's report");
    assert!(original < release, "{stdout}");
    // Each report has every measure, the population models included.
    for part in [&stdout[original..release], &stdout[release..]] {
        for measure in ["prosecutor_records_at_risk", "sample_uniques", "pitman_uniques", "population_uniques"] {
            assert!(part.contains(measure), "{measure} missing from {part}");
        }
    }
}

/// Scores summed over the release's classes are the same floats however many partitions the
/// session reads with. The defect: the classes came in the hash aggregate's arrival order, so
/// SUDA's DIS scores (and anon_metrics' two_way_marginal) differed in their last digits from
/// run to run; an empty bin of the DIS table printed as -0.0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summed_scores_do_not_depend_on_the_partitions() {
    let mut seen: Vec<(Vec<(String, u64)>, u64)> = Vec::new();
    for partitions in [1, 3, 8] {
        let config = datafusion::prelude::SessionConfig::new().with_target_partitions(partitions).with_batch_size(64);
        let ctx = SessionContext::new_with_config(config.with_information_schema(true));
        anonfusion::register_all(&ctx);
        rows(&ctx, "SELECT * FROM load_dataset('adult', 3000, 1)").await;
        rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'a_k', 5)").await;
        let mut got: Vec<(String, u64)> = report(&ctx, "risk_report('adult', '', 'suda=true, suda_max_size=3')")
            .await
            .into_iter()
            .map(|(m, v)| {
                assert!(!(v == 0.0 && v.is_sign_negative()), "{m} is -0.0");
                (m, v.to_bits())
            })
            .collect();
        got.sort();
        let marginal =
            rows(&ctx, "SELECT value FROM anon_metrics('adult', 'a_k') WHERE metric = 'two_way_marginal'").await;
        let marginal = marginal[0].column(0).as_primitive::<Float64Type>().value(0).to_bits();
        if let Some(first) = seen.first() {
            assert_eq!(first.0, got, "risk_report with {partitions} partitions");
            assert_eq!(first.1, marginal, "two_way_marginal with {partitions} partitions");
        }
        seen.push((got, marginal));
    }
}
