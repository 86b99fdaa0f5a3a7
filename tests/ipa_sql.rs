//! ipa_release and dp_histogram through SQL: the tables they register, the privacy-budget
//! ledger they charge, and bad input that registers nothing and spends nothing.

mod common;

use common::{err, int, rows};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Float64Type;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;

/// A small random table `t` (two quasi-identifiers, one numeric; sensitive `s`, 3 values).
fn table() -> SessionContext {
    let rows: Vec<(u32, u64)> = (0..60u32).map(|i| (i.wrapping_mul(2_654_435_761), 1 + (i % 3) as u64)).collect();
    let ft = common::random_table(&[(6, 2, true), (5, 2, false)], &[1, 2, 3], &rows, 3);
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    common::register_random(&ctx, &registry, &ft);
    ctx
}

async fn float(ctx: &SessionContext, sql: &str) -> f64 {
    let b = rows(ctx, sql).await;
    let c = datafusion::arrow::compute::cast(b[0].column(0), &datafusion::arrow::datatypes::DataType::Float64).unwrap();
    c.as_primitive::<Float64Type>().value(0)
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&rows(ctx, sql).await).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipa_release_registers_release_report_and_nodes() {
    let ctx = table();
    let n = int(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'r', 1.0, 'seed=3')").await;
    assert_eq!(n, int(&ctx, "SELECT released_records FROM r_report").await);
    // The report's parts add up to at most epsilon (each is rounded down onto the exact grid).
    let parts = float(
        &ctx,
        "SELECT epsilon_suppression + epsilon_insertion + epsilon_value + epsilon_candidates FROM r_report",
    )
    .await;
    assert!(parts <= 1.0 && parts > 1.0 - 1e-8, "{parts}");
    let il = float(&ctx, "SELECT il - (ncp + emd + rate) FROM r_report").await;
    assert!(il.abs() < 1e-12);
    // Every node of the lattice is a candidate; Eq. 12's probabilities sum to 1; one is chosen,
    // and it is the report's node with the report's loss.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM r_nodes").await, int(&ctx, "SELECT nodes_scored FROM r_report").await);
    assert!((float(&ctx, "SELECT SUM(probability) FROM r_nodes").await - 1.0).abs() < 1e-9);
    assert_eq!(int(&ctx, "SELECT SUM(chosen) FROM r_nodes").await, 1);
    let same = int(
        &ctx,
        "SELECT COUNT(*) FROM r_nodes n CROSS JOIN r_report r WHERE n.chosen = 1 AND n.node = r.node AND n.il = r.il",
    )
    .await;
    assert_eq!(same, 1);
    // The release is the perturbed classes: no class_id, the dimension attributes and s.
    let cols = text(&ctx, "SELECT * FROM r LIMIT 1").await;
    assert!(cols.contains("q0_lo") && cols.contains("| s ") && !cols.contains("class_id"), "{cols}");
    // Seeded calls are reproducible.
    let first = text(&ctx, "SELECT * FROM r ORDER BY 1, 2, 3, 4, 5").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'r2', 1.0, 'seed=3')").await;
    assert_eq!(first, text(&ctx, "SELECT * FROM r2 ORDER BY 1, 2, 3, 4, 5").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_charges_each_release_and_refuses_past_the_budget() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0)").await;
    // A seeded call is not private: listed, charged nothing; a memoized repeat is not listed.
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a', 1.0, 'seed=1')").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a', 1.0, 'seed=1')").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a2', 1.0)").await;
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('t', 'h', 0.5, '1,1')").await;
    let spent = float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!(spent > 1.5 - 1e-8 && spent <= 1.5, "{spent}");
    // The budget, the seeded call and the two charged releases.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_privacy_ledger WHERE table_name = 't'").await, 4);
    // 1.5 + 1.0 > 2: refused before any noise, nothing registered, nothing spent.
    let e = err(&ctx, "SELECT * FROM ipa_release('t', 'b', 1.0)").await;
    assert!(e.contains("privacy budget of table 't' would be exceeded"), "{e}");
    assert!(!ctx.table_exist("b").unwrap() && !ctx.table_exist("b_report").unwrap());
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'b', 0.5)").await;
    let remaining = float(&ctx, "SELECT MIN(remaining) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!((0.0..1e-8).contains(&remaining), "{remaining}");
    // A budget below what is spent, and a budget for a table that does not exist.
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await.contains("already spent"));
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('nope', 1.0)").await.contains("nope"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dp_histogram_releases_every_noisy_cell() {
    let ctx = table();
    let n = int(&ctx, "SELECT COUNT(*) FROM dp_histogram('t', 'h', 1.0, '1,1', 'seed=9')").await;
    assert_eq!(n, int(&ctx, "SELECT released_records FROM h_report").await);
    let il = float(&ctx, "SELECT il - (ncp + emd + rate) FROM h_report").await;
    assert!(il.abs() < 1e-12);
    assert!(text(&ctx, "SELECT node FROM h_report").await.contains("[1, 1]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_registers_nothing_and_spends_nothing() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 5.0)").await;
    let cases = [
        ("SELECT * FROM ipa_release('t', 'x', 0)", "epsilon"),
        ("SELECT * FROM ipa_release('t', 'x', -1)", "epsilon"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'split=0.5:0.3:0.3:0.3')", "split"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 't=1')", "t"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'colour=red')", "colour"),
        ("SELECT * FROM ipa_release('nope', 'x', 1.0)", "nope"),
        ("SELECT * FROM ipa_release('t', 't', 1.0)", "output"),
        ("SELECT * FROM ipa_release('t', 'x', 6.0)", "would be exceeded"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '9,9')", "node"),
        ("SELECT * FROM dp_histogram('t', 'x', 0, '1,1')", "epsilon"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, 'top')", "node"),
    ];
    for (sql, needle) in cases {
        let e = err(&ctx, sql).await;
        assert!(e.contains(needle), "{sql}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{sql}");
    }
    assert_eq!(float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await, 0.0);
    // No informative attribute declared.
    rows(&ctx, "SELECT * FROM declare_roles('t', 'q0=qi, q1=qi')").await;
    let e = err(&ctx, "SELECT * FROM ipa_release('t', 'x', 1.0)").await;
    assert!(e.contains("sensitive"), "{e}");
}
