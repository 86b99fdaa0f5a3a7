//! The query-error harness: hand-computed goldens on the h-ceiling paper's Tables 1–2, the
//! papers' Q1–Q4 against a generalized NPS-like release, bad input, and the CLI.

mod common;

use common::{err, rows as run};

use anonfusion::new_session;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Float64Type, Int64Type};
use datafusion::prelude::SessionContext;
use std::collections::BTreeMap;

type Rows = BTreeMap<String, (Option<f64>, Option<f64>, Option<f64>)>;

fn call(query: &str, release: &str, catalog: Option<&str>) -> String {
    let cat = catalog.map(|c| format!(", '{c}'")).unwrap_or_default();
    format!("SELECT * FROM query_error('{}', 't', '{release}'{cat})", query.replace('\'', "''"))
}

/// group_key → (original, estimate, rel_error).
fn rows(batches: &[RecordBatch]) -> Rows {
    let mut out = Rows::new();
    for b in batches {
        let key = b.column(0).as_string::<i32>();
        let f = |i: usize, r: usize| {
            let c = b.column(i).as_primitive::<Float64Type>();
            (!c.is_null(r)).then(|| c.value(r))
        };
        for r in 0..b.num_rows() {
            out.insert(key.value(r).to_string(), (f(1, r), f(2, r), f(4, r)));
        }
    }
    out
}

async fn estimate(ctx: &SessionContext, query: &str, release: &str, catalog: Option<&str>) -> Rows {
    rows(&run(ctx, &call(query, release, catalog)).await)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

const TABLE1: &str = "('Mary', 37, 'F', 22071, 'Pneumonia'), ('Alice', 35, 'F', 22098, 'Diabetes'), \
    ('Betsy', 36, 'F', 23061, 'Anemia'), ('David', 61, 'M', 55107, 'Pneumonia'), ('Tom', 63, 'M', 55099, 'Diabetes'), \
    ('James', 66, 'M', 55324, 'Diabetes'), ('Eric', 62, 'M', 55229, 'Pneumonia')";

/// Table 1 as `t` with roles and hierarchies; Table 2 as release `r`; a copy `rc` with class
/// ids (classes 1 and 2 of 4 records) for the catalog; `r_nosex` lacking a quasi-identifier.
async fn table2_session() -> SessionContext {
    let ctx = new_session();
    for sql in [
        format!(
            "CREATE TABLE t AS SELECT column1 AS name, column2 AS age, column3 AS sex, column4 AS zipcode, \
             column5 AS disease FROM (VALUES {TABLE1})"
        ),
        "SELECT * FROM declare_roles('t', 'name=identifier, age=qi, sex=qi, zipcode=qi, disease=sensitive')".into(),
        "SELECT * FROM interval_hierarchy('t', 'age', '', 0, 99)".into(),
        "SELECT * FROM interval_hierarchy('t', 'zipcode', '', 20000, 59999)".into(),
        "CREATE TABLE sex_h AS VALUES ('F', '*'), ('M', '*')".into(),
        "SELECT * FROM hierarchy_from_table('t', 'sex', 'sex_h')".into(),
        "CREATE TABLE r AS SELECT '35-66' AS age, 35 AS age_lo, 66 AS age_hi, '*' AS sex, '22071-55324' AS zipcode, \
         22071 AS zipcode_lo, 55324 AS zipcode_hi, column1 AS disease FROM (VALUES ('Pneumonia'), ('Diabetes'), \
         ('Anemia'), ('Pneumonia'), ('Diabetes'), ('Diabetes'), ('Pneumonia'))"
            .into(),
        "CREATE TABLE rc AS SELECT '35-66' AS age, 35 AS age_lo, 66 AS age_hi, '*' AS sex, '22071-55324' AS zipcode, \
         22071 AS zipcode_lo, 55324 AS zipcode_hi, column1 AS disease, column2 AS class_id FROM (VALUES \
         ('Pneumonia', 1), ('Diabetes', 1), ('Anemia', 1), ('Pneumonia', 1), ('Diabetes', 2), ('Diabetes', 2), \
         ('Pneumonia', 2))"
            .into(),
        "CREATE TABLE r_nosex AS SELECT age, age_lo, age_hi, zipcode, zipcode_lo, zipcode_hi, disease FROM r".into(),
    ] {
        run(&ctx, &sql).await;
    }
    ctx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table2_goldens() {
    let ctx = table2_session().await;
    // Every record covers ages 35..66 (32 leaves), 5 of them in 35..39: 7 × 5/32.
    let got = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE age BETWEEN 35 AND 39", "r", None).await;
    assert!(close(got["ALL"].0, 3.0) && close(got["ALL"].1, 7.0 * 5.0 / 32.0), "{got:?}");
    assert!(close(got["SUMMARY"].2, (3.0 - 7.0 * 5.0 / 32.0) / 3.0), "{got:?}");

    // A FLOOR bucket splits each record's mass: 35-39, 40-49, 50-59, 60-66.
    let got =
        estimate(&ctx, "SELECT FLOOR(age/10)*10 AS g, COUNT(*) FROM t GROUP BY FLOOR(age/10)*10", "r", None).await;
    for (g, o, leaves) in [("30", 3.0, 5.0), ("40", 0.0, 10.0), ("50", 0.0, 10.0), ("60", 4.0, 7.0)] {
        assert!(close(got[g].0, o) && close(got[g].1, 7.0 * leaves / 32.0), "{g}: {got:?}");
    }
    // Group 40 answers 0 on the original: relative error over max(0, 1).
    assert!(close(got["40"].2, 7.0 * 10.0 / 32.0), "{got:?}");

    // AVG of a generalized measure: the mean of its covered leaves, given the predicate.
    let got = estimate(&ctx, "SELECT AVG(age) FROM t WHERE disease = 'Diabetes'", "r", None).await;
    assert!(close(got["ALL"].0, (35.0 + 63.0 + 66.0) / 3.0) && close(got["ALL"].1, 50.5), "{got:?}");
    let got = estimate(&ctx, "SELECT AVG(age) FROM t WHERE age >= 60", "r", None).await;
    assert!(close(got["ALL"].0, 63.0) && close(got["ALL"].1, 63.0), "{got:?}");
    let got = estimate(&ctx, "SELECT SUM(age) FROM t WHERE age > 64", "r", None).await;
    assert!(close(got["ALL"].1, 7.0 * (65.0 + 66.0) / 32.0), "{got:?}");

    // Categorical IN over a suppressed sex ('*' covers F and M); OR across attributes.
    let got = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE sex IN ('F') AND disease <> 'Anemia'", "r", None).await;
    assert!(close(got["ALL"].0, 2.0) && close(got["ALL"].1, 3.0), "{got:?}");
    let got = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE sex = 'F' OR age < 40", "r", None).await;
    assert!(close(got["ALL"].1, 7.0 * (1.0 - 0.5 * 27.0 / 32.0)), "{got:?}");
    // A predicate on the grouped attribute: the split follows the predicate (40..44 only).
    let q = "SELECT FLOOR(age/10)*10, COUNT(*) FROM t WHERE age < 45 GROUP BY FLOOR(age/10)*10";
    let got = estimate(&ctx, q, "r", None).await;
    assert!(close(got["30"].1, 7.0 * 5.0 / 32.0) && close(got["40"].1, 7.0 * 5.0 / 32.0), "{got:?}");
    assert!(!got.contains_key("50") && close(got["30"].0, 3.0), "{got:?}");
    // AVG of the grouped attribute itself: the mean of the group's covered leaves.
    let q = "SELECT FLOOR(age/10)*10 AS decade, AVG(age) FROM t GROUP BY decade";
    let got = estimate(&ctx, q, "r", None).await;
    assert!(close(got["30"].0, 36.0) && close(got["30"].1, 37.0), "{got:?}");
    assert!(close(got["60"].0, 63.0) && close(got["60"].1, 63.0) && got["40"].0.is_none(), "{got:?}");
    // COUNT(col) and a second numeric quasi-identifier (zip codes 20000..59999 as leaves).
    let got = estimate(&ctx, "SELECT COUNT(disease) FROM t WHERE zipcode >= 50000", "r", None).await;
    assert!(close(got["ALL"].0, 4.0) && close(got["ALL"].1, 7.0 * 5325.0 / 33254.0), "{got:?}");
    let got = estimate(&ctx, "SELECT sex, COUNT(*) FROM t GROUP BY 1 ORDER BY sex", "r", None).await;
    assert!(close(got["F"].1, 3.5) && close(got["M"].1, 3.5) && close(got["M"].0, 4.0), "{got:?}");
}

/// A release whose ages are all 35-44 (`r_shift`): against Table 1's decades 30 (3 patients)
/// and 60 (4), it puts 3.5 in group 30, invents group 40 (3.5) and misses group 60.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summary_separates_the_originals_groups_missing_and_spurious_ones() {
    let ctx = table2_session().await;
    run(&ctx, "CREATE TABLE r_shift AS SELECT '35-44' AS age, 35 AS age_lo, 44 AS age_hi, sex, zipcode, zipcode_lo, zipcode_hi, disease FROM r")
        .await;
    let q = "SELECT FLOOR(age/10)*10 AS decade, COUNT(*) FROM t GROUP BY FLOOR(age/10)*10";
    let batches = run(&ctx, &call(q, "r_shift", None)).await;
    println!("{}", datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap());
    // group_key → (original, estimate, abs_error, rel_error, status, groups, est_records).
    let mut got = BTreeMap::new();
    for b in &batches {
        let f = |i: usize, r: usize| {
            let c = b.column(i).as_primitive::<Float64Type>();
            (!c.is_null(r)).then(|| c.value(r))
        };
        let groups = b.column(6).as_primitive::<Int64Type>();
        for r in 0..b.num_rows() {
            let status = b.column(5).as_string::<i32>().value(r).to_string();
            let n = (!groups.is_null(r)).then(|| groups.value(r));
            let row = (f(1, r), f(2, r), f(3, r), f(4, r), status, n, f(7, r));
            got.insert(b.column(0).as_string::<i32>().value(r).to_string(), row);
        }
    }
    let check = |key: &str, want: [Option<f64>; 4], status: &str, groups: Option<i64>, records: f64| {
        let (o, e, a, rel, s, n, m) = &got[key];
        for (x, w) in [o, e, a, rel].into_iter().zip(want) {
            assert!(
                x.zip(w).is_some_and(|(x, w)| (x - w).abs() < 1e-9) || (x.is_none() && w.is_none()),
                "{key}: {got:?}"
            );
        }
        assert!(s == status && *n == groups && close(*m, records), "{key}: {got:?}");
    };
    check("30", [Some(3.0), Some(3.5), Some(0.5), Some(0.5 / 3.0)], "both", None, 3.5);
    check("40", [Some(0.0), Some(3.5), Some(3.5), Some(3.5)], "spurious", None, 3.5);
    check("60", [Some(4.0), Some(0.0), Some(4.0), Some(1.0)], "missing", None, 0.0);
    // Headline, over the original's groups 30 and 60: (1/6 + 1) / 2; the estimate there is 3.5.
    check("SUMMARY", [Some(7.0), Some(3.5), Some(2.25), Some(7.0 / 12.0)], "original", Some(2), 3.5);
    check("SUMMARY missing", [Some(4.0), Some(0.0), Some(4.0), Some(1.0)], "missing", Some(1), 0.0);
    check("SUMMARY spurious", [Some(0.0), Some(3.5), Some(3.5), Some(3.5)], "spurious", Some(1), 3.5);
    // The union of all three groups: (1/6 + 3.5 + 1) / 3, the figure that hid the difference.
    check("SUMMARY union", [Some(7.0), Some(7.0), Some(8.0 / 3.0), Some(14.0 / 9.0)], "union", Some(3), 7.0);

    // workload_error carries the same parts per query and sums them for the workload.
    let w = run(&ctx, "SELECT are, union_are, missing_groups, spurious_groups, spurious_records FROM workload_error('t', 'r_shift', 'attribute', 3, 4)").await;
    let b = &w[0];
    let last = b.num_rows() - 1;
    for i in [2, 3] {
        let c = b.column(i).as_primitive::<Int64Type>();
        assert_eq!(c.value(last), (0..last).map(|r| c.value(r)).sum::<i64>(), "column {i}");
    }
    let records = b.column(4).as_primitive::<Float64Type>();
    assert!(close(Some(records.value(last)), (0..last).map(|r| records.value(r)).sum::<f64>()));
    // Every release age is 35-44: a decade query invents group 40 somewhere in the workload.
    assert!(b.column(3).as_primitive::<Int64Type>().value(last) > 0, "{w:?}");
}

/// Issue 18: a query naming another table was answered silently from the original.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_query_must_read_the_original() {
    let ctx = table2_session().await;
    let e = err(&ctx, &call("SELECT COUNT(*) FROM nosuch WHERE age > 40", "r", None)).await;
    assert!(e.contains("nosuch") && e.contains("'t'") && e.contains("original"), "{e}");
    let e = err(&ctx, &call("SELECT COUNT(*) FROM r WHERE age > 40", "r", None)).await;
    assert!(e.contains("FROM r ") && e.contains("original"), "{e}");
    // Names resolve as DataFusion resolves them: unquoted T is t, quoted "T" is not.
    let got = estimate(&ctx, "SELECT COUNT(*) FROM T WHERE age > 40", "r", None).await;
    assert!(close(got["ALL"].0, 4.0), "{got:?}");
    let e = err(&ctx, &call("SELECT COUNT(*) FROM \"T\" WHERE age > 40", "r", None)).await;
    assert!(e.contains("\"T\""), "{e}");
    // The issue's reproduction: FROM nosuch against adult.
    run(&ctx, "SELECT * FROM load_dataset('adult', 500)").await;
    let e =
        err(&ctx, "SELECT * FROM query_error('SELECT sex, COUNT(*) FROM nosuch GROUP BY sex', 'adult', 'adult')").await;
    assert!(e.contains("FROM nosuch") && e.contains("'adult'"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_weighted_count() {
    let ctx = table2_session().await;
    let cls = run(&ctx, "SELECT class_id, COUNT(*) AS n FROM rc WHERE disease = 'Diabetes' GROUP BY 1").await;
    let n: i64 = cls
        .iter()
        .map(|b| b.column(1).as_primitive::<datafusion::arrow::datatypes::Int64Type>().iter().flatten().sum::<i64>())
        .sum();
    assert_eq!(n, 3);
    // One of the three Diabetes records of classes 1 and 2 is counterfeit: each is real with 2/3.
    run(
        &ctx,
        "CREATE TABLE cat AS SELECT make_array(CAST(1 AS BIGINT), CAST(2 AS BIGINT)) AS class_ids, \
               'Diabetes' AS sensitive_value, CAST(1 AS BIGINT) AS count",
    )
    .await;
    let got = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE disease = 'Diabetes'", "rc", Some("cat")).await;
    assert!(close(got["ALL"].1, 2.0), "{got:?}");
    let plain = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE disease = 'Diabetes'", "rc", None).await;
    assert!(close(plain["ALL"].1, 3.0), "{plain:?}");
    // Records of other values are untouched by the catalog.
    let got = estimate(&ctx, "SELECT COUNT(*) FROM t WHERE disease = 'Anemia'", "rc", Some("cat")).await;
    assert!(close(got["ALL"].1, 1.0), "{got:?}");

    // A catalog of another release: class ids the release does not have.
    run(
        &ctx,
        "CREATE TABLE cat2 AS SELECT make_array(CAST(7 AS BIGINT), CAST(8 AS BIGINT)) AS class_ids, \
               'Diabetes' AS sensitive_value, CAST(1 AS BIGINT) AS count",
    )
    .await;
    let e = err(&ctx, &call("SELECT COUNT(*) FROM t", "rc", Some("cat2"))).await;
    assert!(e.contains("class id") && e.contains("7, 8") && e.contains("another release"), "{e}");
    // A catalog on a release without class ids.
    let e = err(&ctx, &call("SELECT COUNT(*) FROM t", "r", Some("cat"))).await;
    assert!(e.contains("class_id"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named() {
    let ctx = table2_session().await;
    for (q, construct) in [
        ("SELECT COUNT(*) FROM t JOIN r ON t.age = r.age_lo", "JOIN"),
        ("SELECT COUNT(*) OVER () FROM t", "window function"),
        ("SELECT sex, COUNT(*) FROM t GROUP BY sex HAVING COUNT(*) > 2", "HAVING"),
        ("SELECT COUNT(*) FROM t WHERE age IN (SELECT age FROM t)", "subquery"),
        ("SELECT COUNT(*) FROM (SELECT * FROM t)", "subquery in FROM"),
        ("SELECT MIN(age) FROM t", "min()"),
    ] {
        let e = err(&ctx, &call(q, "r", None)).await;
        assert!(e.contains("unsupported construct") && e.contains(construct), "{q}: {e}");
    }
    let e = err(&ctx, &call("SELECT COUNT(*) FROM t WHERE age > 40", "r_nosex", None)).await;
    assert!(e.contains("'sex'") && e.contains("r_nosex") && e.contains("missing"), "{e}");
    let e = err(&ctx, &call("SELECT COUNT(*) FROM t WHERE name = 'x'", "r", None)).await;
    assert!(e.contains("identifier"), "{e}");
    let e = err(&ctx, &call("SELECT COUNT(*) FROM t WHERE nope = 1", "r", None)).await;
    assert!(e.contains("nope") && e.contains("not a column"), "{e}");
    // Errors never quote the data: an original value (the patient's name) is not in the message.
    assert!(!e.contains("Mary"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nps_q1_to_q4_through_the_harness() {
    let ctx = new_session();
    run(&ctx, "SELECT * FROM load_dataset('nps', 200000, 1)").await;
    run(&ctx, "SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')").await;
    let registry_sql = |q: &str| call(q, "nps_g", None).replace("'t'", "'nps'");
    for (name, q) in [
        ("q1", include_str!("../sql/q1.sql")),
        ("q2", include_str!("../sql/q2.sql")),
        ("q3", include_str!("../sql/q3.sql")),
        ("q4", include_str!("../sql/q4.sql")),
        ("q3_10y", include_str!("../sql/q3_10y.sql")),
        ("q4_10y", include_str!("../sql/q4_10y.sql")),
    ] {
        let batches = run(&ctx, &registry_sql(q)).await;
        println!("{name}:\n{}", datafusion::arrow::util::pretty::pretty_format_batches(&batches).unwrap());
        let got = rows(&batches);
        let summary = got["SUMMARY"];
        assert!(summary.2.is_some_and(|are| are.is_finite() && are >= 0.0), "{name}: {summary:?}");
        if name == "q1" || name == "q2" {
            // Sex, surgery and disease are released as they are: every patient's mass lands
            // in some age group, so the totals over all groups agree.
            let union = got["SUMMARY union"];
            let (o, e) = (union.0.unwrap(), union.1.unwrap());
            assert!((o - e).abs() < 1e-6 * o.max(1.0), "{name}: {o} vs {e}");
            assert!(got.contains_key("60") && got.contains_key("65"), "{name}: {got:?}");
        } else {
            // Averages: 10-year age bands mix neighbouring 5-year groups and length of stay is
            // in 5-day bands, so only the order of magnitude is held.
            assert!(summary.2.unwrap() < 1.0, "{name}: ARE {summary:?}");
            assert!(got.values().all(|(_, e, _)| e.is_none_or(|e| (0.0..=30.0).contains(&e))), "{name}: {got:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workloads_are_queries_the_harness_answers() {
    let ctx = table2_session().await;
    let batches = run(&ctx, "SELECT * FROM workload_queries('t', 'W1', 5, 7)").await;
    let queries: Vec<String> = batches
        .iter()
        .flat_map(|b| b.column(1).as_string::<i32>().iter().flatten().map(String::from).collect::<Vec<_>>())
        .collect();
    assert_eq!(queries.len(), 5);
    let again = run(&ctx, "SELECT * FROM workload_queries('t', 'W1', 5, 7)").await;
    assert_eq!(batches[0].column(1).as_string::<i32>().value(0), again[0].column(1).as_string::<i32>().value(0));
    for q in &queries {
        let got = estimate(&ctx, q, "r", None).await;
        assert!(got["ALL"].0.unwrap() >= 1.0, "{q}: {got:?}");
    }
    let batches = run(&ctx, "SELECT * FROM workload_queries('t', 'attribute', 3, 1)").await;
    let q = batches[0].column(1).as_string::<i32>().value(0).to_string();
    assert!(q.contains("GROUP BY"), "{q}");
    estimate(&ctx, &q, "r", None).await;
    let e = err(&ctx, "SELECT * FROM workload_queries('t', 'W3', 5)").await;
    assert!(e.contains("set-valued"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_valued_membership() {
    let ctx = new_session();
    for sql in [
        "CREATE TABLE s AS SELECT column1 AS id, column2 AS codes FROM (VALUES \
         (1, make_array('493.2', '494.1', '053.20')), (2, make_array('493.2', '494.1', '053.71')), \
         (3, make_array('494.1', '053.20')), (4, make_array('493.2', '494.1', '053.71')))",
        "SELECT * FROM declare_roles('s', 'id=identifier, codes=set_valued')",
        "CREATE TABLE icd AS VALUES ('053.20', '053', '*'), ('053.71', '053', '*'), ('493.2', '49x', '*'), \
         ('494.1', '49x', '*')",
        "SELECT * FROM hierarchy_from_table('s', 'codes', 'icd', 'codes')",
        // ArtUC's Table 3 shape: 053.20 and 053.71 generalized to (053.20, 053.71); one record's
        // asthma codes generalized to their node 49x.
        "CREATE TABLE s_r AS SELECT column1 AS codes FROM (VALUES \
         (make_array('493.2', '494.1', '(053.20, 053.71)')), (make_array('493.2', '494.1', '(053.20, 053.71)')), \
         (make_array('494.1', '(053.20, 053.71)')), (make_array('49x', '(053.20, 053.71)')))",
    ] {
        run(&ctx, sql).await;
    }
    let q = |w: &str| {
        format!("SELECT * FROM query_error('SELECT COUNT(*) FROM s WHERE {}', 's', 's_r')", w.replace('\'', "''"))
    };
    let got = rows(&run(&ctx, &q("array_has(codes, '053.20')")).await);
    assert!(close(got["ALL"].0, 2.0) && close(got["ALL"].1, 2.0), "{got:?}");
    let got = rows(&run(&ctx, &q("array_has(codes, '493.2')")).await);
    assert!(close(got["ALL"].0, 3.0) && close(got["ALL"].1, 2.5), "{got:?}");
    // Two codes: independent under the model, 1/2 × 1/2 for the record with 49x.
    let got = rows(&run(&ctx, &q("array_has(codes, '493.2') AND NOT array_has(codes, '053.71')")).await);
    assert!(close(got["ALL"].0, 1.0) && close(got["ALL"].1, 2.0 * 0.5 + 0.25), "{got:?}");
    let e = err(&ctx, &q("codes = 'x'")).await;
    assert!(e.contains("set-valued"), "{e}");
}

/// One meaning of a released code in both readers (src/release/cover.rs): the query harness and
/// anon_metrics resolve a code up to its dots, and both refuse a code the hierarchy does not
/// have, naming the column. Before, the harness let an unknown code stand for itself (and so
/// estimated from a release of another table) while anon_metrics refused it, and anon_metrics
/// refused `05320` where the harness read `053.20`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn released_codes_mean_the_same_to_both_readers() {
    let ctx = new_session();
    for sql in [
        "CREATE TABLE s AS SELECT column1 AS sex, column2 AS codes FROM (VALUES \
         ('m', make_array('493.2', '053.20')), ('f', make_array('053.71')), ('m', make_array('493.2')))",
        "SELECT * FROM declare_roles('s', 'sex=qi, codes=set_valued')",
        "SELECT * FROM flat_hierarchy('s', 'sex')",
        "CREATE TABLE icd AS VALUES ('053.20', '053', '*'), ('053.71', '053', '*'), ('493.2', '49x', '*')",
        "SELECT * FROM hierarchy_from_table('s', 'codes', 'icd', 'codes')",
        // The codes without their dots, as the CMS files write them.
        "CREATE TABLE bare AS SELECT column1 AS sex, column2 AS codes FROM (VALUES \
         ('m', make_array('4932', '(05320, 05371)')), ('f', make_array('(05320, 05371)')), ('m', make_array('4932')))",
        "CREATE TABLE other AS SELECT column1 AS sex, column2 AS codes FROM (VALUES \
         ('m', make_array('493.2', '999.9')), ('f', make_array('053.71')), ('m', make_array('493.2')))",
    ] {
        run(&ctx, sql).await;
    }
    let q = "SELECT * FROM query_error('SELECT COUNT(*) FROM s WHERE array_has(codes, ''053.20'')', 's', 'bare')";
    let got = rows(&run(&ctx, q).await);
    assert!(close(got["ALL"].0, 1.0) && close(got["ALL"].1, 1.0), "{got:?}");
    let ul = "SELECT value FROM anon_metrics('s', 'bare') WHERE metric = 'ul_gen(codes)'";
    let ul = run(&ctx, ul).await;
    // ArtUC Def. 6 per record: 4932 + (05320, 05371) is 3/7, (05320, 05371) alone 3/3, 4932 0.
    let v = ul[0].column(0).as_primitive::<Float64Type>().value(0);
    assert!((v - (3.0 / 7.0 + 1.0) / 3.0).abs() < 1e-12, "{v}");
    let q = "SELECT * FROM query_error('SELECT COUNT(*) FROM s WHERE array_has(codes, ''999.9'')', 's', 'other')";
    for e in [err(&ctx, q).await, err(&ctx, "SELECT * FROM anon_metrics('s', 'other')").await] {
        assert!(e.contains("'codes'") && e.contains("1 element(s)") && !e.contains("999.9"), "{e}");
    }
}

#[test]
fn cli_evaluate_writes_a_chart() {
    let dir = std::env::temp_dir().join(format!("anonfusion_qe_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("q1.svg");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_anonfusion"))
        .args(["evaluate", "--original", "nps", "--release", "nps_g"])
        .args(["--load", "SELECT * FROM load_dataset('nps', 200000, 1)"])
        .args(["--load", "SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')"])
        .arg("--plot")
        .arg(&svg)
        .args(["sql/q1.sql", "sql/q3_10y.sql"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    println!("{stdout}");
    assert!(stdout.contains("SUMMARY") && stdout.contains("workload ARE over 2 queries"), "{stdout}");
    assert!(stdout.contains("two-way-marginal score: ") && stdout.contains("over 15 attribute pairs"), "{stdout}");
    let chart = std::fs::read_to_string(dir.join("q1_1.svg")).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains(">60</text>") && chart.contains(">85</text>"), "{chart}");
    assert!(chart.contains("Q1: number of male stroke patients") && chart.contains(">estimate (ARE "));
    let chart = std::fs::read_to_string(dir.join("q1_2.svg")).unwrap();
    assert!(chart.contains("AVG(length_of_stay)") && chart.contains(">90</text>"));
    // An unsupported query fails with the construct named and a nonzero exit.
    std::fs::write(dir.join("bad.sql"), "SELECT COUNT(*) FROM nps a JOIN nps b ON a.age = b.age").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_anonfusion"))
        .args(["evaluate", "--original", "nps", "--release", "nps_g"])
        .args(["--load", "SELECT * FROM load_dataset('nps', 10000, 1)"])
        .args(["--load", "SELECT * FROM generalize('nps', 'nps_g', '2,0,1,1,0')"])
        .arg(dir.join("bad.sql"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("JOIN"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The workloads on an RT release from `generalize`: W1 (demographics) is answered; W2 and W3
/// read the codes, which only artuc publishes, so they are refused with that reason (the
/// generalized release leaves the code set out; a_workload_reads_the_release_once... answers
/// them on artuc's release).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_workloads_on_an_rt_release() {
    let ctx = new_session();
    run(&ctx, "SELECT * FROM load_dataset('informs', 3000, 1)").await;
    run(&ctx, "SELECT * FROM generalize('informs', 'informs_g', '1,1,1,1,1')").await;
    for kind in ["W1", "W2", "W3"] {
        let batches = run(&ctx, &format!("SELECT * FROM workload_queries('informs', '{kind}', 4, 3)")).await;
        for b in &batches {
            for q in b.column(1).as_string::<i32>().iter().flatten() {
                assert!(kind == "W1" || q.contains("array_has(codes, '"), "{q}");
                let sql = format!("SELECT * FROM query_error('{}', 'informs', 'informs_g')", q.replace('\'', "''"));
                if kind == "W1" {
                    let got = rows(&run(&ctx, &sql).await);
                    assert!(got["ALL"].0.unwrap() >= 1.0, "{q}: {got:?}");
                } else {
                    let e = err(&ctx, &sql).await;
                    assert!(e.contains("'codes'") && e.contains("only artuc publishes code sets"), "{e}");
                }
            }
        }
    }
}

/// workload_error reads the release once per workload; every query's ARE must still be the
/// one query_error gives alone, on a release with generalized codes (ArtUC's Baseline).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_reads_the_release_once_and_answers_as_single_queries() {
    let ctx = new_session();
    run(&ctx, "SELECT * FROM load_dataset('informs', 2000, 1)").await;
    run(&ctx, "SELECT * FROM load_constraints('informs', 'UC1')").await;
    run(&ctx, "SELECT * FROM artuc('informs', 'informs_a', 'informs_uc1', 5, 2, 1.0, 1000000000, 'variant=baseline, small_groups=withhold')")
        .await;
    let codes = run(&ctx, "SELECT COUNT(*) FROM (SELECT unnest(codes) AS c FROM informs_a) WHERE c LIKE '(%'").await;
    assert!(codes[0].column(0).as_primitive::<Int64Type>().value(0) > 0, "the release has generalized codes");
    for kind in ["W2", "W3"] {
        let batches =
            run(&ctx, &format!("SELECT sql, are FROM workload_error('informs', 'informs_a', '{kind}', 8, 5)")).await;
        let mut checked = 0;
        for b in &batches {
            let (sql, are) = (b.column(0).as_string::<i32>(), b.column(1).as_primitive::<Float64Type>());
            for r in (0..b.num_rows()).filter(|&r| !sql.value(r).starts_with("SUMMARY")) {
                let q = format!(
                    "SELECT * FROM query_error('{}', 'informs', 'informs_a')",
                    sql.value(r).replace('\'', "''")
                );
                let alone = rows(&run(&ctx, &q).await)["SUMMARY"].2;
                // Equal up to the order DataFusion's partitions sum in.
                assert!(
                    close(alone, are.value(r)),
                    "{}: {alone:?} alone, {} in the workload",
                    sql.value(r),
                    are.value(r)
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 8);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workload_error_reports_the_workload_are() {
    let ctx = table2_session().await;
    let batches = run(&ctx, "SELECT * FROM workload_error('t', 'r', 'W1', 6, 2)").await;
    let b = &batches[0];
    assert_eq!(b.num_rows(), 7);
    let are = b.column(2).as_primitive::<Float64Type>();
    let mean = (0..6).map(|r| are.value(r)).sum::<f64>() / 6.0;
    assert!(b.column(0).is_null(6) && (are.value(6) - mean).abs() < 1e-12, "{mean}");
    assert!(b.column(1).as_string::<i32>().value(6).starts_with("SUMMARY"));
}

/// The issue's acceptance run: Q1-Q4 through `anonfusion evaluate` against the 10-anonymous
/// baseline release of the full NPS-like table, per-group tables and one chart per query.
#[test]
fn cli_evaluate_q1_to_q4_against_the_k10_baseline() {
    let dir = std::env::temp_dir().join(format!("anonfusion_qe_k10_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_anonfusion"))
        .args(["evaluate", "--original", "nps", "--release", "nps_k10"])
        .args(["--load", "SELECT * FROM load_dataset('nps')"])
        .args(["--load", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k10', 10)"])
        .arg("--plot")
        .arg(dir.join("q.svg"))
        .args(["sql/q1.sql", "sql/q2.sql", "sql/q3_10y.sql", "sql/q4_10y.sql"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    println!("{stdout}");
    // Counts are estimated with their totals intact: 3,134 male and 2,912 female patients.
    let union = |total: &str| stdout.lines().any(|l| l.starts_with("| SUMMARY union") && l.contains(total));
    assert!(union("| 3134.0 ") && union("| 2912.0 "), "{stdout}");
    assert!(stdout.contains("over the original's groups") && stdout.contains("spurious"), "{stdout}");
    for i in 1..=4 {
        let chart = std::fs::read_to_string(dir.join(format!("q_{i}.svg"))).unwrap();
        assert!(chart.starts_with("<svg") && chart.contains(">original</text>"), "chart {i}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
