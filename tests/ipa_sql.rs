//! ipa_release and dp_histogram through SQL: the tables they register (and what the report may
//! hold), the privacy-budget ledger they charge, and bad input that registers nothing and
//! spends nothing.

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
    common::allow_seeded_dp(&ctx);
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

/// The informative attribute's declared domain of the test table (it has no hierarchy).
const VALUES: &str = "values=s0|s1|s2";

/// Column names of a table.
async fn columns(ctx: &SessionContext, table: &str) -> Vec<String> {
    let df = ctx.table(table).await.unwrap();
    df.schema().fields().iter().map(|f| f.name().clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paper_mode_registers_release_report_and_diagnostics() {
    let ctx = table();
    let n =
        int(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'r', 1.0, 'guarantee=paper, seed=3, diagnostics=true')").await;
    assert_eq!(n, int(&ctx, "SELECT released_records FROM r_report").await);
    assert_eq!(n, int(&ctx, "SELECT released_records FROM r_diagnostics").await);
    // The report's parts add up to at most epsilon (each is rounded down onto the exact grid).
    let parts = float(
        &ctx,
        "SELECT epsilon_suppression + epsilon_insertion + epsilon_value + epsilon_candidates FROM r_report",
    )
    .await;
    assert!(parts <= 1.0 && parts > 1.0 - 1e-8, "{parts}");
    // The paper's mode says what it is, in the report and in the release's schema metadata.
    assert!(text(&ctx, "SELECT guarantee FROM r_report").await.contains("not differentially private"));
    let release = ctx.table("r").await.unwrap();
    let meta = release.schema().inner().metadata().clone();
    assert!(meta["anonfusion.guarantee"].contains("not differentially private"), "{meta:?}");
    // Exact statistics live in the diagnostics only, marked not for publication.
    let il = float(&ctx, "SELECT il - (ncp + emd + rate) FROM r_diagnostics").await;
    assert!(il.abs() < 1e-12);
    for t in ["r_diagnostics", "r_diagnostics_nodes"] {
        assert_eq!(columns(&ctx, t).await[0], "not_for_publication");
    }
    // Every node of the lattice is a candidate; Eq. 12's probabilities sum to 1; one is chosen,
    // and it is the report's node.
    assert_eq!(
        int(&ctx, "SELECT COUNT(*) FROM r_diagnostics_nodes").await,
        int(&ctx, "SELECT nodes_scored FROM r_diagnostics").await
    );
    assert!((float(&ctx, "SELECT SUM(probability) FROM r_diagnostics_nodes").await - 1.0).abs() < 1e-9);
    let same = int(
        &ctx,
        "SELECT COUNT(*) FROM r_diagnostics_nodes n CROSS JOIN r_report r WHERE n.chosen = 1 AND n.node = r.node",
    )
    .await;
    assert_eq!(same, 1);
    // The release is the perturbed classes: no class_id, the dimension attributes and s.
    let cols = text(&ctx, "SELECT * FROM r LIMIT 1").await;
    assert!(cols.contains("q0_lo") && cols.contains("| s ") && !cols.contains("class_id"), "{cols}");
    // Seeded calls are reproducible.
    let first = text(&ctx, "SELECT * FROM r ORDER BY 1, 2, 3, 4, 5").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'r2', 1.0, 'guarantee=paper, seed=3')").await;
    assert_eq!(first, text(&ctx, "SELECT * FROM r2 ORDER BY 1, 2, 3, 4, 5").await);
    assert!(!ctx.table_exist("r2_diagnostics").unwrap() && !ctx.table_exist("r2_nodes").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sound_modes_publish_only_parameters_and_release_numbers() {
    let ctx = table();
    for (g, delta) in [("approx", 1e-9), ("pure", 0.0)] {
        let sql = format!(
            "SELECT COUNT(*) FROM ipa_release('t', 'r', 1.0, 'guarantee={g}, partition=node, {VALUES}, seed=5')"
        );
        let n = int(&ctx, &sql).await;
        assert_eq!(n, int(&ctx, "SELECT released_records FROM r_report").await);
        // Only the guarantee, epsilon and its parts, delta, the node, the parameters and numbers
        // of the release itself; no seed, no exact counts, no IL against the original.
        let cols = columns(&ctx, "r_report").await;
        let allowed = [
            "method",
            "source",
            "guarantee",
            "epsilon",
            "epsilon_selection",
            "epsilon_counts",
            "delta",
            "threshold",
            "node",
            "selection",
            "noise_weight",
            "class_weight",
            "max_cells",
            "candidates",
            "released_cells",
            "privacy_unit",
            "max_rows_per_unit",
            "released_records",
            "dropped_columns",
        ];
        assert!(cols.iter().all(|c| allowed.contains(&c.as_str())), "{cols:?}");
        assert_eq!(float(&ctx, "SELECT delta FROM r_report").await, delta);
        let parts = float(&ctx, "SELECT epsilon_selection + epsilon_counts FROM r_report").await;
        assert!(parts <= 1.0 && parts > 1.0 - 1e-8, "{parts}");
        let said = text(&ctx, "SELECT guarantee FROM r_report").await;
        assert!(said.contains("| not differentially private: seeded") && said.contains("otherwise"), "{said}");
        let meta = ctx.table("r").await.unwrap().schema().inner().metadata().clone();
        assert!(meta["anonfusion.guarantee"].starts_with("not differentially private: seeded"), "{meta:?}");
        // Released cells are rows of the node's public domain: each row once per released record.
        assert_eq!(int(&ctx, "SELECT SUM(1) FROM r").await, n);
        assert!(!ctx.table_exist("r_nodes").unwrap() && !ctx.table_exist("r_diagnostics").unwrap());
    }
    // The ledger lists the seeded calls as such.
    let ledger = text(&ctx, "SELECT * FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!(
        ledger.contains("seeded (not private)") && ledger.contains("guarantee=approx") && ledger.contains("delta=1e-9"),
        "{ledger}"
    );
    // Diagnostics on request, marked not for publication.
    rows(
        &ctx,
        &format!(
            "SELECT COUNT(*) FROM ipa_release('t', 'd', 1.0, 'partition=node, diagnostics=true, {VALUES}, seed=5')"
        ),
    )
    .await;
    assert_eq!(columns(&ctx, "d_diagnostics").await[0], "not_for_publication");
    assert!((float(&ctx, "SELECT SUM(probability) FROM d_diagnostics_nodes").await - 1.0).abs() < 1e-9);
    assert_eq!(int(&ctx, "SELECT SUM(chosen) FROM d_diagnostics_nodes").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_charges_each_release_and_refuses_past_the_budget() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0, 'delta=1e-6')").await;
    // A seeded call is not private: listed, charged nothing; a memoized repeat is not listed.
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a', 1.0, 'values=s0|s1|s2, seed=1')").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a', 1.0, 'values=s0|s1|s2, seed=1')").await;
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'a2', 1.0, 'values=s0|s1|s2')").await;
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('t', 'h', 0.5, '1,1', 'values=s0|s1|s2')").await;
    let spent = float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!(spent > 1.5 - 1e-8 && spent <= 1.5, "{spent}");
    // The budget, the seeded call and the two charged releases.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_privacy_ledger WHERE table_name = 't'").await, 4);
    // 1.5 + 1.0 > 2: refused before any noise, nothing registered, nothing spent.
    let e = err(&ctx, "SELECT * FROM ipa_release('t', 'b', 1.0, 'values=s0|s1|s2')").await;
    assert!(e.contains("privacy budget of table 't' would be exceeded"), "{e}");
    assert!(!ctx.table_exist("b").unwrap() && !ctx.table_exist("b_report").unwrap());
    rows(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'b', 0.5, 'values=s0|s1|s2')").await;
    let remaining = float(&ctx, "SELECT MIN(remaining) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!((0.0..1e-8).contains(&remaining), "{remaining}");
    // A budget below what is spent, and a budget for a table that does not exist.
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await.contains("already spent"));
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('nope', 1.0)").await.contains("nope"));
}

/// A release whose delta alone overruns the budget blames `delta`, not `epsilon`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_exceeded_by_delta_names_delta() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 50.0, 'delta=1e-6')").await;
    let e =
        err(&ctx, "SELECT * FROM dp_histogram('t', 'h', 1.0, '1,1', 'values=s0|s1|s2, guarantee=approx, delta=0.5')")
            .await;
    assert!(e.contains("argument 'delta'") && e.contains("would be exceeded"), "{e}");
    let e = err(&ctx, "SELECT * FROM dp_histogram('t', 'h', 60.0, '1,1', 'values=s0|s1|s2')").await;
    assert!(e.contains("argument 'epsilon'") && e.contains("would be exceeded"), "{e}");
}

/// An 8-record table at a huge ε (budget 40000, ε 30000) with the default automatic adaptive
/// plan: every noise variance underflows to 0, which made the coarse cells' targets NaN and so
/// 0, and the release empty. Now the exact counts decide and all 8 records are released. The
/// ledger's parts name no step count the charge could not know ("1 steps" before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_epsilon_releases_every_record_of_a_small_table() {
    let ctx = common::eight_records(40000).await;
    let n = int(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'r', 30000, 'values=s0|s1|s2, seed=1')").await;
    assert_eq!(n, 8);
    assert_eq!(int(&ctx, "SELECT released_records FROM r_report").await, 8);
    let parts = text(&ctx, "SELECT parts FROM anon_privacy_ledger WHERE release = 'r'").await;
    assert!(parts.contains("automatic plan's steps") && !parts.contains("1 steps"), "{parts}");
}

/// `partition=adaptive`: the release mixes generalization levels, the report holds the plan,
/// the budgets and counts read off the release, the ledger is charged the three stages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_partition_registers_release_report_and_diagnostics() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0)").await;
    let plan = "partition=adaptive, root=2:2, steps=q0:1|q0:0|q1:1, theta=2, values=s0|s1|s2, diagnostics=true";
    let n = int(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'r', 1.0, '{plan}')")).await;
    assert_eq!(n, int(&ctx, "SELECT released_records FROM r_report").await);
    assert_eq!(n, int(&ctx, "SELECT released_records FROM r_diagnostics").await);
    let parts = float(&ctx, "SELECT epsilon_partition + epsilon_coarse + epsilon_cells FROM r_report").await;
    let total = float(&ctx, "SELECT epsilon FROM r_report").await;
    assert!((parts - total).abs() < 1e-12 && total <= 1.0 && total > 1.0 - 1e-8, "{parts} {total}");
    let report = text(&ctx, "SELECT node, steps, theta, classes_by_depth FROM r_report").await;
    assert!(report.contains("adaptive from [2, 2]") && report.contains("q0:1|q0:0|q1:1"), "{report}");
    assert!(text(&ctx, "SELECT guarantee FROM r_report").await.contains("epsilon-differentially private"));
    let il = float(&ctx, "SELECT il - (ncp + emd + rate) FROM r_diagnostics").await;
    assert!(il.abs() < 1e-12);
    assert!(!columns(&ctx, "r_report").await.iter().any(|c| c == "il" || c == "seed" || c == "withheld_records"));
    assert!(!ctx.table_exist("r_diagnostics_nodes").unwrap());
    // Charged the three stages: at most 1.0, within the grid's rounding.
    let spent = float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!(spent <= 1.0 && spent > 1.0 - 1e-8, "{spent}");
    let parts = text(&ctx, "SELECT parts FROM anon_privacy_ledger WHERE table_name = 't' AND release = 'r'").await;
    assert!(parts.contains("3 steps") && parts.contains("coarse="), "{parts}");
    // Every released label is a node of the declared hierarchy, at any level.
    let labels = text(&ctx, "SELECT DISTINCT q0 FROM r").await;
    assert!(!labels.contains("NULL"), "{labels}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dp_histogram_releases_every_noisy_cell() {
    let ctx = table();
    for g in ["pure", "approx"] {
        let sql = format!(
            "SELECT COUNT(*) FROM dp_histogram('t', 'h', 1.0, '1,1', 'guarantee={g}, {VALUES}, diagnostics=true, seed=9')"
        );
        let n = int(&ctx, &sql).await;
        assert_eq!(n, int(&ctx, "SELECT released_records FROM h_report").await);
        let il = float(&ctx, "SELECT il - (ncp + emd + rate) FROM h_diagnostics").await;
        assert!(il.abs() < 1e-12);
        assert!(text(&ctx, "SELECT node FROM h_report").await.contains("[1, 1]"));
        assert!(!columns(&ctx, "h_report").await.iter().any(|c| c == "il" || c == "seed"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_registers_nothing_and_spends_nothing() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 5.0, 'delta=1e-6')").await;
    let cases = [
        ("SELECT * FROM ipa_release('t', 'x', 0)", "epsilon"),
        ("SELECT * FROM ipa_release('t', 'x', -1)", "epsilon"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=paper, split=0.5:0.3:0.3:0.3')", "split"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=paper, t=1')", "t"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 't=3')", "applies to guarantee=paper only"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=strong')", "unknown guarantee"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=approx, delta=0')", "delta"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=approx, delta=1')", "delta"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=approx, delta=-0.5, values=s0|s1|s2')", "delta"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'class_weight=-1, values=s0|s1|s2')", "class_weight"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=pure, delta=1e-9')", "delta"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=paper, delta=1e-9')", "delta"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0)", "no declared domain"),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'values=s0|s1')",
            "outside the informative attribute's declared domain",
        ),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1', 'guarantee=paper, values=s0|s1|s2')", "unknown guarantee"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1', 'guarantee=approx, delta=2, values=s0|s1|s2')", "delta"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1', 'guarantee=approx, delta=0, values=s0|s1|s2')", "delta"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1', 'guarantee=strong, values=s0|s1|s2')", "unknown guarantee"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'colour=red')", "colour"),
        ("SELECT * FROM ipa_release('nope', 'x', 1.0)", "nope"),
        ("SELECT * FROM ipa_release('t', 't', 1.0)", "output"),
        ("SELECT * FROM ipa_release('t', 'x', 6.0, 'values=s0|s1|s2')", "would be exceeded"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '9,9', 'values=s0|s1|s2')", "node"),
        ("SELECT * FROM dp_histogram('t', 'x', 0, '1,1', 'values=s0|s1|s2')", "epsilon"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, 'top', 'values=s0|s1|s2')", "node"),
        ("SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1')", "no declared domain"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=sideways, values=s0|s1|s2')", "partition"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, steps=q0:1, values=s0|s1|s2')", "root"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, values=s0|s1|s2')", "steps"),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=9:9, steps=q0:1, values=s0|s1|s2')",
            "root",
        ),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2, steps=q0:1, values=s0|s1|s2')", "root"),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, steps=zz:1, values=s0|s1|s2')",
            "steps",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, steps=q0:2, values=s0|s1|s2')",
            "steps",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, steps=q0, values=s0|s1|s2')",
            "steps",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, steps=q0:1, theta=1|2, values=s0|s1|s2')",
            "theta",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=adaptive, root=2:2, steps=q0:1, coarse=0.95, values=s0|s1|s2')",
            "coarse",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=approx, partition=adaptive, root=2:2, steps=q0:1, values=s0|s1|s2')",
            "partition",
        ),
        (
            "SELECT * FROM ipa_release('t', 'x', 1.0, 'partition=node, root=2:2, values=s0|s1|s2')",
            "applies to partition=adaptive only",
        ),
        // Without a declared plan a pure call is adaptive: a root needs its steps.
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'root=2:2, values=s0|s1|s2')", "steps"),
        ("SELECT * FROM ipa_release('t', 'x', 1.0, 'guarantee=paper, partition=adaptive')", "pure and approx"),
    ];
    for (sql, needle) in cases {
        let e = err(&ctx, sql).await;
        assert!(e.contains(needle), "{sql}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{sql}");
    }
    assert_eq!(float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await, 0.0);
    // An out-of-domain error counts the records and never echoes their value.
    let e = err(&ctx, "SELECT * FROM ipa_release('t', 'x', 1.0, 'values=s0|s1')").await;
    assert!(e.contains("outside the informative attribute's declared domain") && !e.contains("s2"), "{e}");
    // A hierarchy whose bounds were read from the data is refused by DP calls, with the fix.
    rows(&ctx, "SELECT * FROM interval_hierarchy('t', 'q0', '2,4')").await;
    for sql in [
        "SELECT * FROM ipa_release('t', 'x', 1.0, 'values=s0|s1|s2')",
        "SELECT * FROM dp_histogram('t', 'x', 1.0, '1,1', 'values=s0|s1|s2')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("q0") && e.contains("derived from the data") && e.contains("min, max"), "{sql}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{sql}");
    }
    assert_eq!(float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await, 0.0);
    // The paper's mode too: no release publishes bounds taken from the data (issue 18).
    let e = err(&ctx, "SELECT COUNT(*) FROM ipa_release('t', 'x', 1.0, 'guarantee=paper, seed=1')").await;
    assert!(e.contains("q0") && e.contains("derived from the data"), "{e}");
    rows(&ctx, "SELECT * FROM interval_hierarchy('t', 'q0', '2,4', 0, 15)").await;
    // No informative attribute declared.
    rows(&ctx, "SELECT * FROM declare_roles('t', 'q0=qi, q1=qi', 'reset')").await;
    let e = err(&ctx, "SELECT * FROM ipa_release('t', 'x', 1.0)").await;
    assert!(e.contains("sensitive"), "{e}");
}

/// `declare_release_plan`: the table's plan is what `ipa_release` runs when a call names no
/// `partition=`; `partition=node` and `approx` calls do not use it; bad plans are refused with
/// the option named; `''` withdraws the plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_plan_is_the_default_release() {
    let ctx = table();
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 10.0, 'delta=1e-6')").await;
    let plan = text(
        &ctx,
        "SELECT release_plan FROM declare_release_plan('t', 'partition=adaptive, root=2:2, steps=q0:1|q1:0, theta=2')",
    )
    .await;
    assert!(plan.contains("root=2:2"), "{plan}");
    assert!(
        text(&ctx, "SELECT release_plan FROM anon_release_plans WHERE table_name = 't'").await.contains("q0:1|q1:0")
    );
    let node = |name: &str| format!("SELECT node FROM {name}_report");
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'a', 1.0, '{VALUES}, seed=1')")).await;
    assert!(text(&ctx, &node("a")).await.contains("adaptive from [2, 2]"));
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'b', 1.0, 'partition=node, {VALUES}, seed=1')")).await;
    assert!(!text(&ctx, &node("b")).await.contains("adaptive"));
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'c', 1.0, 'guarantee=approx, {VALUES}, seed=1')")).await;
    assert!(!text(&ctx, &node("c")).await.contains("adaptive"));
    // The call's own options override the plan's.
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'd', 1.0, 'theta=5, {VALUES}, seed=1')")).await;
    assert!(text(&ctx, "SELECT theta FROM d_report").await.contains('5'));
    for (plan, needle) in [
        ("partition=adaptive, root=2:2, steps=q0:1, seed=3", "seed"),
        ("partition=adaptive, root=2, steps=q0:1", "root"),
        ("partition=adaptive, root=2:2, steps=zz:1", "zz"),
        ("root=2:2, steps=q0:1", "partition"),
        ("partition=node", "adaptive"),
        ("partition=node, root=9:9", "root"),
    ] {
        let e = err(&ctx, &format!("SELECT * FROM declare_release_plan('t', '{plan}')")).await;
        // The function called is named, not ipa_release whose option reader checks the plan.
        assert!(e.contains(needle) && e.contains("declare_release_plan: argument"), "{plan}: {e}");
    }
    assert!(err(&ctx, "SELECT * FROM declare_release_plan('nope', 'partition=adaptive')").await.contains("nope"));
    rows(&ctx, "SELECT * FROM declare_release_plan('t', '')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_release_plans").await, 0);
    // Without a plan: the automatic one (root chosen privately among nodes of at most N̂ / θ₀
    // combinations: on this small table the top node; θ from V and ε, not the plan's 2),
    // or the node release when the call gives the node release's own options.
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'e', 1.0, '{VALUES}, seed=1')")).await;
    assert!(text(&ctx, &node("e")).await.contains("adaptive from [2, 2]"));
    assert!(float(&ctx, "SELECT CAST(theta AS DOUBLE) FROM e_report").await > 2.0);
    rows(&ctx, &format!("SELECT COUNT(*) FROM ipa_release('t', 'f', 1.0, 'class_weight=10, {VALUES}, seed=1')")).await;
    assert!(!text(&ctx, &node("f")).await.contains("adaptive"));
}
