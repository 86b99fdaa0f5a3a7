//! kanon_anonymize: the pruned search finds the optimum of exhaustive search, on Adult and on
//! many random inputs; releases are k-anonymous when checked from the released table alone.

mod common;
#[path = "wide/adult.rs"]
mod wide;

use common::{err, int, rows};

use anonfusion::encode::{cached_frequency_table, frequency_table};
use anonfusion::methods::kanon::search::{Evaluator, SearchOptions, Strategy, exhaustive, optimal};
use anonfusion::methods::kanon::{KanonConfig, Metric, search};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int32Type;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use std::sync::Arc;

/// Loss of the pruned search's optimum and of exhaustive search (None when nothing qualifies).
fn both(ft: &anonfusion::encode::FrequencyTable, config: &KanonConfig) -> (Option<f64>, Option<f64>, usize) {
    let budget = config.budget(ft.total());
    let mut ev = Evaluator::new(ft, config.models.clone(), config.metric, budget).unwrap();
    let fast = optimal(&mut ev).unwrap().map(|e| e.loss);
    let evaluated = ev.evaluated;
    let mut ev = Evaluator::new(ft, config.models.clone(), config.metric, budget).unwrap();
    let slow = exhaustive(&mut ev).unwrap().map(|e| e.loss);
    (fast, slow, evaluated)
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        (None, None) => true,
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adult_optimum_equals_exhaustive_search() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    ctx.sql("SELECT * FROM load_dataset('adult')").await.unwrap().collect().await.unwrap();
    let meta = registry.require("adult").unwrap();
    let ft = frequency_table(&ctx, "adult", &meta, Some("occupation")).await.unwrap();
    for options in
        ["", "suppression=2", "metric=dm", "metric=ncp, suppression=2", "distinct_l=3", "t=0.15, suppression=2"]
    {
        let config = KanonConfig::new(5).with_options(options).unwrap();
        let (fast, slow, evaluated) = both(&ft, &config);
        assert!(fast.is_some(), "{options}: Adult has a 5-anonymous node");
        assert!(same(fast, slow), "{options}: pruned {fast:?} vs exhaustive {slow:?}");
        // Suppression with t-closeness is not monotone, but the records every specialization
        // must suppress are: that prunes too (ARX's Flash checks 1,181 nodes here).
        assert!(evaluated < 1181, "{options}: pruning evaluated {evaluated} of 2160 nodes");
        println!("{options:>26}: loss {:.4}, {evaluated} of 2160 nodes evaluated", fast.unwrap());
    }
    let res = search(&ft, &KanonConfig::new(5)).unwrap().unwrap();
    assert_eq!(res.suppressed_records, 0);
    assert_eq!(res.nodes_total, 2160);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    /// On random tables, hierarchies, k, models, metrics and suppression limits, the pruned
    /// search's optimum has the loss of exhaustive search.
    #[test]
    fn pruned_search_is_optimal(
        shapes in prop::collection::vec((1usize..7, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..50),
        k in 1u64..6,
        model in 0usize..5,
        metric in 0usize..3,
        suppression in prop::sample::select(vec![0.0, 5.0, 20.0]),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, 4);
        prop_assume!(k <= ft.total());
        let mut config = KanonConfig::new(k);
        config.metric = [Metric::Lm, Metric::Ncp, Metric::Dm][metric];
        config.suppression_percent = suppression;
        match model {
            1 => config.models.distinct_l = Some(2),
            2 => config.models.entropy_l = Some(1.5),
            3 => config.models.recursive_cl = Some((3.0, 2)),
            4 => config.models.t = Some(0.4),
            _ => {}
        }
        let (fast, slow, _) = both(&ft, &config);
        prop_assert!(same(fast, slow), "pruned {:?} vs exhaustive {:?} for {:?}", fast, slow, config);
    }

    /// The heuristic's claims hold whatever its budget: its node passes the models, its loss
    /// is at least the optimum, and its proven lower bound is at most the optimum. With a
    /// budget it cannot exhaust on these lattices, it proves the optimum.
    #[test]
    fn heuristic_bounds_bracket_the_optimum(
        shapes in prop::collection::vec((1usize..7, 1usize..4, any::<bool>()), 1..5),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..50),
        k in 1u64..6,
        model in 0usize..3,
        metric in 0usize..3,
        suppression in prop::sample::select(vec![0.0, 5.0]),
        checks in prop::sample::select(vec![1usize, 1_000_000]),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, 4);
        prop_assume!(k <= ft.total());
        let mut config = KanonConfig::new(k);
        config.metric = [Metric::Lm, Metric::Ncp, Metric::Dm][metric];
        config.suppression_percent = suppression;
        config.search = SearchOptions { strategy: Strategy::Heuristic, max_checks: Some(checks), ..SearchOptions::default() };
        match model {
            1 => config.models.distinct_l = Some(2),
            2 => config.models.t = Some(0.4),
            _ => {}
        }
        let mut ev = Evaluator::new(&ft, config.models.clone(), config.metric, config.budget(ft.total())).unwrap();
        let optimum = exhaustive(&mut ev).unwrap().map(|e| e.loss);
        match (search(&ft, &config), optimum) {
            (Ok(Some(res)), Some(opt)) => {
                let tol = 1e-9 * opt.abs().max(1.0);
                prop_assert!(res.loss >= opt - tol && res.loss_lower_bound <= opt + tol, "{} <= {} <= {}", res.loss_lower_bound, opt, res.loss);
                prop_assert!(res.heuristic);
                if res.proven_optimal {
                    prop_assert!(same(Some(res.loss), optimum));
                }
                if checks == 1_000_000 {
                    prop_assert!(res.proven_optimal, "a budget above the lattice's size proves it");
                }
            }
            (Ok(None), opt) => prop_assert!(opt.is_none(), "heuristic found nothing, optimum {:?}", opt),
            (Err(e), _) => prop_assert!(checks == 1 && e.to_string().contains("work budget"), "{}", e),
            (Ok(Some(res)), None) => prop_assert!(false, "heuristic found {:?} where nothing passes", res.levels),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frequency_tables_are_reused_while_table_and_declarations_stay() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    let meta = registry.require("adult").unwrap();
    let a = cached_frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    let b = cached_frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    assert!(Arc::ptr_eq(&a, &b), "the same source and declarations reuse the aggregation");
    let s = cached_frequency_table(&ctx, "adult", &meta, Some("occupation")).await.unwrap();
    assert!(!Arc::ptr_eq(&a, &s) && s.sensitive.is_some());
    // Another hierarchy object for a quasi-identifier: aggregated again.
    let mut redeclared = meta.clone();
    let age = redeclared.hierarchies["age"].as_ref().clone();
    redeclared.hierarchies.insert("age".into(), Arc::new(age));
    let c = cached_frequency_table(&ctx, "adult", &redeclared, None).await.unwrap();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(c.counts, a.counts);
    // A replaced table (same name, new contents) is aggregated again.
    rows(&ctx, "CREATE OR REPLACE TABLE adult AS SELECT * FROM adult WHERE sex = 'Male'").await;
    let d = cached_frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    assert!(d.total() < a.total());
    // An update in place of a column other than the table's first (its arrays are new, the
    // first column's the same objects): aggregated again, from the rows as they are now.
    // Before, the first column's arrays stood for the table and `d` was answered.
    rows(&ctx, "UPDATE adult SET race = 'White' WHERE age < 40").await;
    let e = cached_frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    let fresh = frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    let codes = |ft: &anonfusion::encode::FrequencyTable| ft.qis.iter().map(|q| q.codes.clone()).collect::<Vec<_>>();
    assert!(codes(&e) == codes(&fresh) && e.counts == fresh.counts, "the rows as updated");
    assert!(codes(&e) != codes(&d));
    // The same call again after an update is made again, not answered by the memo with the
    // release of the rows before (the same release as one to a new name after the update).
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_k', 5)").await;
    rows(&ctx, "UPDATE adult SET education = 'HS-grad' WHERE age < 30").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'updated_k', 5)").await;
    let differ = |a: &str, b: &str| format!("SELECT COUNT(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})");
    assert!(int(&ctx, &differ("adult_k", "updated_k")).await > 0, "the update shows in the release");
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_k', 5)").await;
    assert_eq!(int(&ctx, &differ("adult_k", "updated_k")).await, 0);
    assert_eq!(int(&ctx, &differ("updated_k", "adult_k")).await, 0);
}

/// The report says how the lattice was searched and how far the result is from the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_states_search_mode_and_bound_gap() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'opt', 5)").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'heu', 5, 'search=heuristic, max_checks=100000')").await;
    let b = rows(&ctx, "SELECT search, proven_optimal, bound_gap, metric_value FROM opt_report").await;
    assert_eq!(b[0].column(0).as_string::<i32>().value(0), "optimal");
    let h = rows(&ctx, "SELECT search, proven_optimal, bound_gap, metric_value FROM heu_report").await;
    assert_eq!(h[0].column(0).as_string::<i32>().value(0), "heuristic");
    // The work the search was allowed: none for the optimal search, the option for the heuristic.
    let budget = |t: &str| format!("SELECT max_checks FROM {t}_report");
    assert!(rows(&ctx, &budget("opt")).await[0].column(0).is_null(0));
    assert_eq!(int(&ctx, &budget("heu")).await, 100_000);
    for r in [&b, &h] {
        assert_eq!(r[0].column(1).as_primitive::<datafusion::arrow::datatypes::Int64Type>().value(0), 1);
        assert_eq!(r[0].column(2).as_primitive::<datafusion::arrow::datatypes::Float64Type>().value(0), 0.0);
    }
    let loss = |r: &Vec<datafusion::arrow::array::RecordBatch>| {
        r[0].column(3).as_primitive::<datafusion::arrow::datatypes::Float64Type>().value(0)
    };
    assert_eq!(loss(&b), loss(&h), "a proven heuristic result is the optimum");
}

/// A search's result is a function of its inputs, never of the clock: the heuristic, cut by
/// its work budget part-way through its proof, returns the same node, loss, bound and number
/// of checks while every core is kept busy by spinning threads as on an idle machine (a
/// wall-clock budget checked fewer nodes under load and could return a worse node).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristic_result_depends_on_inputs_not_on_load() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    let meta = registry.require("adult").unwrap();
    let ft = frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    let runs = || {
        let mut out = Vec::new();
        for checks in [Some(2), Some(9), Some(40), None] {
            for options in ["", "suppression=2"] {
                let mut config = KanonConfig::new(5).with_options(options).unwrap();
                config.search =
                    SearchOptions { strategy: Strategy::Heuristic, max_checks: checks, ..SearchOptions::default() };
                let r = search(&ft, &config).unwrap().unwrap();
                assert!(checks.is_none_or(|n| r.nodes_evaluated <= n + 16), "the budget holds: {}", r.nodes_evaluated);
                out.push((r.levels, r.loss, r.loss_lower_bound, r.nodes_evaluated, r.proven_optimal, r.max_checks));
            }
        }
        out
    };
    let idle = runs();
    let loaded = with_every_core_busy(runs);
    assert_eq!(idle, loaded, "same inputs, same results, loaded or idle");
    assert!(idle.iter().any(|r| !r.4), "a small budget stops the proof part-way, so the budget is exercised");
    assert!(idle.iter().any(|r| r.4), "a large budget proves the optimum");
}

/// Issue 34's case: ten quasi-identifiers (147,456 nodes, above `max_nodes`, so `search=auto`
/// runs the heuristic under its default work budget) give the same node, loss, bound and checks
/// with every core kept busy as idle, with and without a suppression limit (at 10 % the
/// budget ends the proof part-way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_quasi_identifiers_give_one_release_loaded_or_idle() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    rows(&ctx, "SELECT * FROM load_dataset('adult_uci')").await;
    let meta = wide::deep_adult(&registry.require("adult_uci").unwrap(), None);
    assert_eq!(meta.quasi_identifiers().len(), 10);
    let ft = frequency_table(&ctx, "adult_uci", &meta, None).await.unwrap();
    let runs = || {
        ["", "suppression=10"].map(|options| {
            let r = search(&ft, &KanonConfig::new(5).with_options(options).unwrap()).unwrap().unwrap();
            (r.levels, r.loss, r.loss_lower_bound, r.nodes_evaluated, r.heuristic, r.proven_optimal)
        })
    };
    let idle = runs();
    let loaded = with_every_core_busy(runs);
    assert_eq!(idle, loaded, "same inputs, same release, loaded or idle");
    assert!(idle.iter().all(|r| r.4), "search=auto runs the heuristic above max_nodes");
    assert!(idle.iter().any(|r| !r.5), "the budget ends a proof part-way");
}

/// `f`'s result while eight threads spin on the machine's cores.
fn with_every_core_busy<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..8)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let out = f();
    stop.store(true, Ordering::Relaxed);
    spinners.into_iter().for_each(|t| t.join().unwrap());
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_release_is_k_anonymous_and_reports_its_node() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_k5', 5, 'suppression=2')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM adult_k5").await, 30_162);
    // Checked on the released table alone: every class of non-suppressed records has >= 5 rows.
    let smallest = int(
        &ctx,
        "SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM adult_k5 \
         WHERE NOT (age = '*' AND age_lo IS NULL) \
         GROUP BY age, sex, race, marital_status, education, native_country, workclass)",
    )
    .await;
    assert!(smallest >= 5, "smallest class {smallest}");
    let suppressed = int(&ctx, "SELECT COUNT(*) FROM adult_k5 WHERE age = '*' AND age_lo IS NULL").await;
    assert_eq!(suppressed, int(&ctx, "SELECT suppressed_records FROM adult_k5_report").await);
    assert!(suppressed as f64 <= 0.02 * 30_162.0);
    // Labels are dictionary-encoded, each stored once for the whole release (the suppressed
    // '*' included): no more labels stored than the source has values, plus '*' (a level
    // has at most as many nodes as leaves), however many batches the plan made.
    assert_eq!(
        common::texts(&ctx, "SELECT arrow_typeof(age) FROM adult_k5 LIMIT 1").await,
        ["Dictionary(Int32, Utf8)"]
    );
    for q in ["age", "race", "native_country"] {
        let leaves = int(&ctx, &format!("SELECT COUNT(DISTINCT {q}) FROM adult")).await as usize;
        for b in rows(&ctx, &format!("SELECT {q} FROM adult_k5")).await {
            let stored = b.column(0).as_dictionary::<Int32Type>().values().len();
            assert!(stored <= leaves + 1, "{q}: {stored} labels stored for {leaves} source values");
        }
    }
    let b = rows(&ctx, "SELECT node, metric, metric_value FROM adult_k5_report").await;
    let node = b[0].column(0).as_string::<i32>().value(0).to_string();
    assert!(node.starts_with('[') && node.matches(',').count() == 6, "{node}");
    // The released classes are exactly the report's: distinct quasi-identifier tuples of the
    // records that were not suppressed.
    let released = int(
        &ctx,
        "SELECT COUNT(*) FROM (SELECT DISTINCT age, sex, race, marital_status, education, native_country, workclass \
         FROM adult_k5 WHERE age_lo IS NOT NULL)",
    )
    .await;
    assert_eq!(released, int(&ctx, "SELECT classes FROM adult_k5_report").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diversity_and_closeness_hold_on_the_release() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_l3', 5, 'distinct_l=3')").await;
    let least_diverse = int(
        &ctx,
        "SELECT MIN(d) FROM (SELECT COUNT(DISTINCT occupation) AS d FROM adult_l3 \
         GROUP BY age, sex, race, marital_status, education, native_country, workclass)",
    )
    .await;
    assert!(least_diverse >= 3, "{least_diverse}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_clear_errors_and_register_nothing() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    for (sql, expect) in [
        ("SELECT * FROM kanon_anonymize('adult', 'o', 0)", "'k'"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 40000)", "larger than the table"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'distinct_l=0')", "distinct_l"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'recursive_cl=0:2')", "recursive_cl"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 't=1.5')", "'t'"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'suppression=120')", "suppression"),
        // The option is named with its values, from its declaration; the value is not echoed.
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'metric=xyz')", "'metric': must be one of lm, ncp, dm"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'colour=blue')", "unknown option 'colour'"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'search=fast')", "'search': must be one of auto, optimal"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'max_checks=0')", "max_checks"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'time_budget_ms=1000')", "replaced by max_checks"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'max_nodes=-3')", "max_nodes"),
        ("SELECT * FROM kanon_anonymize('nope', 'o', 5)", "'nope'"),
        ("SELECT * FROM kanon_anonymize('adult', 'adult', 5)", "must differ"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'distinct_l=20')", "no generalization satisfies"),
        // An integer too wide for k is out of range, not "not an integer", and shown readably.
        ("SELECT * FROM kanon_anonymize('adult', 'o', 18446744073709551616)", "'k': is out of range"),
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains(expect), "{sql}: {e}");
    }
    assert!(!ctx.table_exist("o").unwrap() && !ctx.table_exist("o_report").unwrap());
    rows(&ctx, "CREATE TABLE p (age BIGINT, d VARCHAR) AS VALUES (30, 'x'), (31, 'y')").await;
    rows(&ctx, "SELECT * FROM declare_roles('p', 'age=qi')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5', 0, 99)").await;
    let e = err(&ctx, "SELECT * FROM kanon_anonymize('p', 'o', 2, 'distinct_l=2')").await;
    assert!(e.contains("no sensitive attribute"), "{e}");
    // An empty table is named as such (k = 1 was "larger than the table (0 records)").
    rows(&ctx, "CREATE TABLE empty AS SELECT * FROM p WHERE age < 0").await;
    rows(&ctx, "SELECT * FROM declare_roles('empty', 'age=qi')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('empty', 'age', '5', 0, 99)").await;
    let e = err(&ctx, "SELECT * FROM kanon_anonymize('empty', 'o', 1)").await;
    assert!(e.contains("'k'") && e.contains("the table is empty"), "{e}");
    // load_dataset names its own argument for a bad table name.
    let e = err(&ctx, "SELECT * FROM load_dataset('nps', 100, 1, 'bad name')").await;
    assert!(e.contains("argument 'as_table'"), "{e}");
}

/// A kept column named like a bound the release writes (`age_lo` beside the quasi-identifier
/// `age`) is refused naming the column, the quasi-identifier and the way out; it was
/// DataFusion's "ambiguous field name" schema error. Every kanon mode and generalize.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_column_named_like_a_bound_is_refused_by_name() {
    let ctx = anonfusion::new_session();
    rows(
        &ctx,
        "CREATE TABLE cc AS SELECT CAST(20 + (value % 30) AS INT) AS age, CAST(value AS INT) AS age_lo, \
         CASE WHEN value % 3 = 0 THEN 'x' ELSE 'y' END AS d FROM range(60)",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('cc', 'age=qi, d=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('cc', 'age', '5,*', 0, 120)").await;
    for call in [
        "kanon_anonymize('cc', 'o', 3, 'keep_insensitive=true')",
        "kanon_anonymize('cc', 'o', 3, 'keep_insensitive=true, local=recoding')",
        "generalize('cc', 'o', '1', 'keep_insensitive=true')",
    ] {
        let e = err(&ctx, &format!("SELECT * FROM {call}")).await;
        assert!(
            e.contains("column 'age_lo' of table 'cc'")
                && e.contains("quasi-identifier 'age'")
                && e.contains("rename the column")
                && !e.contains("ambiguous"),
            "{call}: {e}"
        );
        assert!(!ctx.table_exist("o").unwrap(), "{call}");
    }
    // Not kept, the column is simply left out.
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('cc', 'o', 3)").await;
}

/// The search's own loss equals the metric recomputed from the released table alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reported_loss_equals_the_independent_metric() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    for metric in ["lm", "ncp", "dm"] {
        rows(
            &ctx,
            &format!(
                "SELECT COUNT(*) FROM kanon_anonymize('adult', 'a_{metric}', 5, 'suppression=2, metric={metric}')"
            ),
        )
        .await;
        let own = rows(&ctx, &format!("SELECT metric_value FROM a_{metric}_report")).await;
        let own = own[0].column(0).as_primitive::<datafusion::arrow::datatypes::Float64Type>().value(0);
        let b = rows(&ctx, &format!("SELECT value FROM anon_metrics('adult', 'a_{metric}') WHERE metric = '{metric}'"))
            .await;
        let independent = b[0].column(0).as_primitive::<datafusion::arrow::datatypes::Float64Type>().value(0);
        assert!(
            (own - independent).abs() <= 1e-9 * own.abs().max(1.0),
            "{metric}: search {own} vs release {independent}"
        );
    }
}
