//! Local k-anonymity (`kanon_anonymize(..., 'local=suppression|recoding|iterative')`): every release is
//! checked by `verify_release` and by an independent checker written here from the definition
//! (a class is the set of records whose released quasi-identifier columns are identical; a record
//! with every label `*` and NULL bounds is suppressed), which shares no code with the product.

mod common;

use common::{rows, run};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use std::collections::HashMap;

/// The independent checker: the size of the smallest class of the release's rows over the
/// columns `qis` (each label, plus `_lo`/`_hi` where the release has them), suppressed records
/// left out; `None` when every record is suppressed.
fn smallest_class(batches: &[RecordBatch], qis: &[String]) -> Option<u64> {
    let mut counts: HashMap<Vec<Option<String>>, u64> = HashMap::new();
    for b in batches {
        let schema = b.schema();
        let mut columns = Vec::new();
        for q in qis {
            for name in [q.clone(), format!("{q}_lo"), format!("{q}_hi")] {
                if let Ok(i) = schema.index_of(&name) {
                    columns.push((name == *q, cast(b.column(i), &DataType::Utf8).unwrap()));
                }
            }
        }
        for r in 0..b.num_rows() {
            let key: Vec<Option<String>> =
                columns.iter().map(|(_, c)| c.is_valid(r).then(|| c.as_string::<i32>().value(r).to_string())).collect();
            let suppressed = columns.iter().zip(&key).all(|((label, _), v)| match label {
                true => v.as_deref() == Some("*"),
                false => v.is_none(),
            });
            if !suppressed {
                *counts.entry(key).or_default() += 1;
            }
        }
    }
    counts.values().copied().min()
}

fn holds(ctx: &SessionContext, checks: &str) -> (bool, String) {
    let b = run(ctx, &format!("SELECT holds, detail FROM verify_release('t', 'r', '{checks}')")).unwrap();
    (b[0].column(0).as_boolean().value(0), b[0].column(1).as_string::<i32>().value(0).to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, .. ProptestConfig::default() })]

    /// verify_release and the checker agree on k for every local release: the claimed k holds,
    /// and k one above the smallest class fails in both.
    #[test]
    fn verify_release_and_an_independent_checker_agree_on_local_releases(
        shapes in prop::collection::vec((1usize..6, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..40),
        k in 1u64..5,
        method in 0usize..3,
        model in 0usize..3,
        reversed in any::<bool>(),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, 3);
        prop_assume!(k <= ft.total());
        let ctx = SessionContext::new();
        let registry = anonfusion::register_all(&ctx);
        common::register_random(&ctx, &registry, &ft);
        let qis: Vec<String> = ft.qis.iter().map(|q| q.name.clone()).collect();
        let mut order = qis.clone();
        if reversed {
            order.reverse();
        }
        let suppression = format!("local=suppression, suppression=30, importance={}", order.join("|"));
        let mode = [suppression, "local=recoding".to_string(), "local=iterative".to_string()][method].clone();
        let model = [None, Some("distinct_l=2"), Some("t=0.4")][model];
        let options = model.map_or(mode.clone(), |m| format!("{mode}, {m}"));
        let sql = format!("SELECT COUNT(*) FROM kanon_anonymize('t', 'r', {k}, '{options}')");
        match run(&ctx, &sql) {
            Err(e) => prop_assert!(e.to_string().contains("no generalization satisfies"), "{}", e),
            Ok(_) => {
                let release = run(&ctx, "SELECT * FROM r").unwrap();
                let smallest = smallest_class(&release, &qis);
                let (ok, detail) = holds(&ctx, &format!("k={k}"));
                prop_assert!(ok, "{}", detail);
                prop_assert!(smallest.is_none_or(|s| s >= k), "checker: smallest class {:?} < k = {}", smallest, k);
                if let Some(s) = smallest {
                    let (ok, detail) = holds(&ctx, &format!("k={}", s + 1));
                    prop_assert!(!ok, "verify_release passes k = {} but the checker's smallest class is {}: {}", s + 1, s, detail);
                }
                if let Some(m) = model {
                    let (ok, detail) = holds(&ctx, m);
                    prop_assert!(ok, "{}: {}", m, detail);
                }
            }
        }
    }
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    common::texts(ctx, sql).await.remove(0)
}

async fn float(ctx: &SessionContext, sql: &str) -> f64 {
    let b = rows(ctx, sql).await;
    cast(b[0].column(0), &DataType::Float64).unwrap().as_primitive::<Float64Type>().value(0)
}

async fn adult(ctx: &SessionContext) {
    rows(ctx, "SELECT * FROM load_dataset('adult', 5000, 1, 'adult_5k')").await;
}

async fn report(ctx: &SessionContext, output: &str, column: &str) -> f64 {
    float(ctx, &format!("SELECT {column} FROM {output}_report")).await
}

/// Local suppression on Adult: cells, not records, are suppressed; the release keeps every
/// record, passes verify_release, and its suppressed cells are `*` in one column at a time.
#[tokio::test]
async fn local_suppression_keeps_records_and_passes_verification() {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    adult(&ctx).await;
    let sql = "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'ls', 5, 'local=suppression, suppression=5, \
               importance=age|sex|education')";
    rows(&ctx, sql).await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'full', 5, 'suppression=5')").await;
    let cells = report(&ctx, "ls", "suppressed_cells").await;
    let whole = report(&ctx, "ls", "suppressed_records").await;
    let full_whole = report(&ctx, "full", "suppressed_records").await;
    assert!(cells > 0.0, "no cell suppressed");
    assert!(whole < full_whole, "local suppression deleted {whole} records, the full-domain release {full_whole}");
    // The records that lose cells fit the limit (5 % of 5,000).
    let losing = "SELECT suppressed_records + records_with_suppressed_cells FROM ls_report";
    assert!(common::int(&ctx, losing).await <= 250);
    let ok = text(&ctx, "SELECT CAST(holds AS VARCHAR) || detail FROM verify_release('adult_5k', 'ls', 'k=5')").await;
    assert!(ok.starts_with("true"), "{ok}");
    assert_eq!(common::int(&ctx, "SELECT COUNT(*) FROM ls").await, 5000);
    // Cells starred alone: records with `*` in one column and a value in another.
    let partial = "SELECT COUNT(*) FROM ls WHERE (race = '*' OR native_country = '*') AND sex <> '*'";
    assert!(common::int(&ctx, partial).await > 0);
}

/// Local recoding on Adult: classes at different levels in one column, every one of them at
/// least k, and less information lost than the best full-domain release.
#[tokio::test]
async fn local_recoding_mixes_levels_and_loses_less() {
    let ctx = adult_releases(&[("lr", "local=recoding"), ("full", "")]).await;
    // Age is published as exact years in some classes and as bands or `*` in others.
    let widths = common::int(&ctx, "SELECT COUNT(DISTINCT age_hi - age_lo) FROM lr").await;
    assert!(widths >= 2, "every class has the same age width");
    loses_less(&ctx, "lr", "full").await;
}

/// A session with adult_5k released at k = 5 with each (output, options); the first release
/// passes `verify_release`.
async fn adult_releases(releases: &[(&str, &str)]) -> SessionContext {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    adult(&ctx).await;
    for (output, options) in releases {
        rows(&ctx, &format!("SELECT COUNT(*) FROM kanon_anonymize('adult_5k', '{output}', 5, '{options}')")).await;
    }
    let verify =
        format!("SELECT CAST(holds AS VARCHAR) || detail FROM verify_release('adult_5k', '{}', 'k=5')", releases[0].0);
    let ok = text(&ctx, &verify).await;
    assert!(ok.starts_with("true"), "{ok}");
    ctx
}

/// Release `better` of adult_5k has a lower LM and a higher two-way-marginal score than
/// `worse`, and its report's `local_loss` is the metric's LM.
async fn loses_less(ctx: &SessionContext, better: &str, worse: &str) {
    for (metric, lower) in [("lm", true), ("two_way_marginal", false)] {
        let value = |t: &str| format!("SELECT value FROM metric_value('adult_5k', '{t}', '{metric}')");
        let (b, w) = (float(ctx, &value(better)).await, float(ctx, &value(worse)).await);
        assert!(if lower { b < w } else { b > w }, "{metric}: {b} ({better}) vs {w} ({worse})");
        if lower {
            assert!((report(ctx, better, "local_loss").await - b).abs() < 1e-9, "the report's LM is the metric's");
        }
    }
}

/// Iterative local recoding on Adult: every class at least k, exact values where classes of k
/// exist at the bottom, and less lost than the top-down partitioning (`local=recoding`) by
/// LM and the two-way-marginal score.
#[tokio::test]
async fn iterative_recoding_keeps_exact_values_and_loses_less_than_partitioning() {
    let ctx = adult_releases(&[("it", "local=iterative"), ("lr", "local=recoding")]).await;
    assert_eq!(common::int(&ctx, "SELECT COUNT(*) FROM it").await, 5000, "no record is suppressed");
    // The first round is the bottom node: some records keep an exact age.
    assert!(common::int(&ctx, "SELECT COUNT(*) FROM it WHERE age_lo = age_hi").await > 0);
    loses_less(&ctx, "it", "lr").await;
}

/// The query harness spreads a `*` cell over its attribute's domain: grouped by a column with
/// suppressed cells, no group is `*`, every group's estimate is at least the records that show
/// its value and some more, and the estimates add up to the release's records (records
/// suppressed whole are spread too, as the harness always did).
#[tokio::test]
async fn query_error_spreads_suppressed_cells() {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    adult(&ctx).await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'ls', 5, 'local=suppression, suppression=5')").await;
    let starred = common::int(&ctx, "SELECT COUNT(*) FROM ls WHERE race = '*' AND sex <> '*'").await;
    assert!(starred > 0, "no race cell suppressed alone");
    let q = "SELECT race, COUNT(*) FROM adult_5k GROUP BY race";
    let groups = format!("(SELECT * FROM query_error('{q}', 'adult_5k', 'ls') WHERE group_key NOT LIKE 'SUMMARY%')");
    assert_eq!(common::int(&ctx, &format!("SELECT COUNT(*) FROM {groups} WHERE group_key = '*'")).await, 0);
    let sum = float(&ctx, &format!("SELECT SUM(estimate) FROM {groups}")).await;
    assert!((sum - 5000.0).abs() < 1e-6, "estimates add up to {sum}");
    let shown = "(SELECT race, COUNT(*) AS n FROM ls WHERE race <> '*' GROUP BY race)";
    let joined = format!("{groups} g JOIN {shown} s ON g.group_key = s.race");
    assert_eq!(common::int(&ctx, &format!("SELECT COUNT(*) FROM {joined} WHERE g.estimate < s.n - 1e-9")).await, 0);
    let spread = float(&ctx, &format!("SELECT SUM(g.estimate - s.n) FROM {joined}")).await;
    assert!(spread > starred as f64 * 0.5, "the starred race cells added {spread} to the shown values");
}

/// A local option that cannot be honoured is an error naming it, and registers nothing.
#[tokio::test]
async fn bad_local_options_are_errors_naming_the_option() {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    adult(&ctx).await;
    let call = |options: &str| format!("SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'x', 5, '{options}')");
    let e = common::err(&ctx, &call("local=suppression")).await;
    assert!(e.contains("'local'") && e.contains("suppression=X%"), "{e}");
    let e = common::err(&ctx, &call("local=recoding, importance=age|postcode")).await;
    assert!(e.contains("'importance'") && e.contains("'postcode' is not a declared quasi-identifier"), "{e}");
    let e = common::err(&ctx, &call("local=iterative, importance=age")).await;
    assert!(e.contains("'importance'") && e.contains("not local=iterative"), "{e}");
    let e = common::err(&ctx, &call("local=cells")).await;
    // The declaration's error: the option and its values, never the value given.
    assert!(
        e.contains("'local'") && e.contains("none, suppression, recoding, iterative") && !e.contains("cells"),
        "{e}"
    );
    assert!(ctx.table("x").await.is_err(), "a failed call registered its output");
}
