//! The privacy ledger on disk: it survives a restart, a copy or rename of a table shares its
//! account, two processes cannot overspend a budget, a process killed mid-write leaves the last
//! good ledger, and a release without a budget is refused before anything is registered.

mod common;

use anonfusion::dp::ledger::{Account, Charge, Ledger, grid_units};
use common::{err, int, rows};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

/// A fresh directory for one test's ledger file, removed when the test ends.
struct TestDir(PathBuf);

impl TestDir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("anonfusion-ledger-test-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }

    fn ledger(&self) -> PathBuf {
        self.0.join("ledger.tsv")
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A session on the ledger in `path` with the random table `t` of tests/ipa_sql.rs.
fn session(path: &Path) -> (SessionContext, Arc<anonfusion::Registry>) {
    let rows: Vec<(u32, u64)> = (0..60u32).map(|i| (i.wrapping_mul(2_654_435_761), 1 + (i % 3) as u64)).collect();
    let ft = common::random_table(&[(6, 2, true), (5, 2, false)], &[1, 2, 3], &rows, 3);
    let (ctx, registry) = anonfusion::session_with_ledger(Ledger::open(path));
    common::register_random(&ctx, &registry, &ft);
    common::allow_seeded_dp(&ctx);
    (ctx, registry)
}

async fn float(ctx: &SessionContext, sql: &str) -> f64 {
    let b = rows(ctx, sql).await;
    cast(b[0].column(0), &DataType::Float64).unwrap().as_primitive::<Float64Type>().value(0)
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let b = rows(ctx, sql).await;
    cast(b[0].column(0), &DataType::Utf8).unwrap().as_string::<i32>().value(0).to_string()
}

const HISTOGRAM: &str = "SELECT COUNT(*) FROM dp_histogram('t', 'h', 0.6, '1,1', 'values=s0|s1|s2')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_what_was_spent() {
    let dir = TestDir::new("restart");
    let path = dir.ledger();
    {
        let (ctx, _) = session(&path);
        rows(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await;
        rows(&ctx, HISTOGRAM).await;
    }
    // A new session (a new registry, the same rows) on the same file.
    let (ctx, _) = session(&path);
    let e = err(&ctx, HISTOGRAM).await;
    assert!(e.contains("would be exceeded"), "{e}");
    assert!(!ctx.table_exist("h").unwrap());
    let spent = float(&ctx, "SELECT MAX(spent) FROM anon_privacy_ledger WHERE table_name = 't'").await;
    assert!(spent <= 0.6 && spent > 0.6 - 1e-9, "{spent}");
    assert_eq!(
        text(&ctx, "SELECT ledger_path FROM anon_privacy_ledger WHERE event = 'ledger'").await,
        path.display().to_string()
    );
    assert_eq!(
        text(&ctx, "SELECT parts FROM anon_privacy_ledger WHERE event = 'ledger'").await,
        "kept across sessions"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_or_a_rename_shares_the_budget_and_a_changed_table_does_not() {
    let dir = TestDir::new("copy");
    let path = dir.ledger();
    let (ctx, registry) = session(&path);
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await;
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('t', 'h', 0.6, '1,1', 'values=s0|s1|s2')").await;
    // A copy in another row order, and a rename: the same rows, the same account.
    rows(&ctx, "CREATE TABLE t_copy AS SELECT * FROM t ORDER BY s DESC, q1, q0").await;
    let meta = registry.get("t").unwrap();
    registry.set("t_copy", meta.clone());
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('t_copy', 'h2', 0.2, '1,1', 'values=s0|s1|s2')").await;
    let e = err(&ctx, "SELECT COUNT(*) FROM dp_histogram('t_copy', 'h2', 0.6, '1,1', 'values=s0|s1|s2')").await;
    assert!(e.contains("budget of table 't_copy' would be exceeded"), "{e}");
    let provider = ctx.deregister_table("t").unwrap().unwrap();
    ctx.register_table("renamed", provider).unwrap();
    registry.set("renamed", meta.clone());
    let e = err(&ctx, "SELECT * FROM set_privacy_budget('renamed', 5.0)").await;
    assert!(e.contains("'force=true'"), "a raise through a rename still needs force: {e}");
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('renamed', 'h3', 0.2, '1,1', 'values=s0|s1|s2')").await;
    let seen = text(&ctx, "SELECT seen_as FROM anon_privacy_ledger WHERE release = 'h3'").await;
    assert_eq!(seen, "renamed, t, t_copy");
    assert_eq!(int(&ctx, "SELECT COUNT(DISTINCT fingerprint) FROM anon_privacy_ledger").await, 1);
    // One row fewer: another account, which has no budget (a documented limitation).
    rows(&ctx, "CREATE TABLE t_less AS SELECT * FROM renamed LIMIT 59").await;
    registry.set("t_less", meta);
    let e = err(&ctx, "SELECT COUNT(*) FROM dp_histogram('t_less', 'h4', 0.1, '1,1', 'values=s0|s1|s2')").await;
    assert!(e.contains("no privacy budget"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_without_a_budget_is_refused_and_a_seeded_one_is_listed_as_not_private() {
    let dir = TestDir::new("missing");
    let path = dir.ledger();
    let (ctx, _) = session(&path);
    for sql in [HISTOGRAM, "SELECT * FROM ipa_release('t', 'h', 0.6, 'values=s0|s1|s2')"] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("has no privacy budget") && e.contains("SELECT * FROM set_privacy_budget('t', 1.0)"), "{e}");
        assert!(!ctx.table_exist("h").unwrap() && !ctx.table_exist("h_report").unwrap());
    }
    assert!(!path.exists(), "a refusal writes nothing");
    // A seeded call is not private: it needs no budget, spends nothing and says so.
    rows(&ctx, "SELECT COUNT(*) FROM dp_histogram('t', 'h', 0.6, '1,1', 'values=s0|s1|s2, seed=4')").await;
    assert_eq!(
        text(&ctx, "SELECT guarantee FROM anon_privacy_ledger WHERE release = 'h'").await,
        "seeded (not private)"
    );
    assert_eq!(float(&ctx, "SELECT spent + epsilon FROM anon_privacy_ledger WHERE release = 'h'").await, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_is_raised_only_with_force_and_the_raise_is_recorded() {
    let dir = TestDir::new("force");
    let path = dir.ledger();
    let (ctx, _) = session(&path);
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await;
    rows(&ctx, HISTOGRAM).await;
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('t', 0.5)").await.contains("already spent"));
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 0.75)").await;
    let e = err(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0)").await;
    assert!(e.contains("SELECT * FROM set_privacy_budget('t', 2, 'force=true')"), "{e}");
    let shown = rows(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0, 'delta=1e-6, force=true')").await;
    assert_eq!(shown[0].num_rows(), 4, "the call returns the account's records");
    let events = text(&ctx, "SELECT string_agg(event, '; ' ORDER BY seq) FROM anon_privacy_ledger WHERE seq > 0").await;
    assert_eq!(events, "budget set; release; budget lowered; budget raised (force)");
    let delta = float(&ctx, "SELECT budget_delta FROM anon_privacy_ledger WHERE event LIKE 'budget raised%'").await;
    assert!(delta <= 1e-6 && delta > 1e-6 - 1e-18, "rounded down onto 2^-64: {delta}");
    for (sql, needle) in [
        ("SELECT * FROM set_privacy_budget('t', 1e308, 'force=true')", "2^20 (1048576)"),
        ("SELECT * FROM set_privacy_budget('t', 1e-300)", "2^-32"),
        ("SELECT * FROM set_privacy_budget('t', 1.0, 'delta=1')", "delta"),
        ("SELECT * FROM set_privacy_budget('t', 1.0, 'forse')", "forse"),
        ("SELECT * FROM set_privacy_budget('nope', 1.0)", "nope"),
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains(needle) && e.len() < 400, "{sql}: {e}");
    }
}

// --- Several processes on one file. The children are this test binary run again on one test
// --- whose body acts only when LEDGER_CHILD names a ledger file.

const CHILD: &str = "LEDGER_CHILD";

fn account() -> Account {
    Account { fingerprint: "0123456789abcdef0123456789abcdef".into(), rows: 1, table: "t".into() }
}

fn child(test: &str, path: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", test, "--nocapture", "--test-threads=1"]).env(CHILD, path).stdout(Stdio::piped());
    c
}

/// Child: try 20 times to spend 0.25; print how many succeeded.
#[test]
fn child_spender() {
    let Some(path) = std::env::var_os(CHILD) else { return };
    let ledger = Arc::new(Ledger::open(path));
    let mut won = 0;
    for _ in 0..20 {
        if let Ok(r) = ledger.reserve("child", &account(), Charge::epsilon(grid_units(0.25))) {
            std::thread::sleep(std::time::Duration::from_millis(2));
            r.commit(&format!("p{}-{won}", std::process::id()), "child", "").unwrap();
            won += 1;
        }
    }
    println!("SPENT {won}");
}

#[test]
fn two_processes_cannot_overspend() {
    let dir = TestDir::new("processes");
    let path = dir.ledger();
    Ledger::open(&path).set_budget(&account(), 3.0, 0.0, false).unwrap();
    let kids: Vec<_> = (0..2).map(|_| child("child_spender", &path).spawn().unwrap()).collect();
    let won: usize = kids
        .into_iter()
        .map(|k| {
            let out = k.wait_with_output().unwrap();
            assert!(out.status.success());
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let line = stdout.lines().find_map(|l| l.split("SPENT ").nth(1)).unwrap_or_else(|| panic!("{stdout}"));
            line.trim().parse::<usize>().unwrap()
        })
        .sum();
    // 3.0 / 0.25 = 12 releases fit: exactly 12 succeed, and every one is in the file.
    let rows = Ledger::open(&path).rows().unwrap();
    let releases = rows.iter().filter(|r| r.event == "release").count();
    assert_eq!((won, releases), (12, 12), "{rows:#?}");
    assert_eq!(rows.last().unwrap().spent, 3.0);
    assert!(rows.iter().all(|r| r.spent <= 3.0));
}

/// Child: spend 1.0 per release, named r1, r2, ... after those already in the file, forever.
#[test]
fn child_writer() {
    let Some(path) = std::env::var_os(CHILD) else { return };
    let ledger = Arc::new(Ledger::open(path));
    let mut i = ledger.rows().unwrap().iter().filter(|r| r.event == "release").count();
    loop {
        i += 1;
        let r = ledger.reserve("child", &account(), Charge::epsilon(grid_units(1.0))).unwrap();
        r.commit(&format!("r{i}"), "child", "").unwrap();
    }
}

#[test]
#[cfg(unix)]
fn kill_9_during_writes_leaves_the_last_good_ledger() {
    let dir = TestDir::new("kill");
    let path = dir.ledger();
    Ledger::open(&path).set_budget(&account(), 1_000_000.0, 0.0, false).unwrap();
    let mut delays = 0x9e37_79b9u32;
    let mut reserved_before = 0;
    for round in 0..6 {
        let mut kid = child("child_writer", &path).stdout(Stdio::null()).spawn().unwrap();
        delays = delays.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        std::thread::sleep(std::time::Duration::from_millis(150 + u64::from(delays >> 24)));
        kid.kill().unwrap(); // SIGKILL
        kid.wait().unwrap();
        // The file parses and holds a prefix: r1..rk in order, each charged 1, plus at most
        // the one reservation the child held when it died, which stays counted as spent.
        let rows = Ledger::open(&path).rows().unwrap_or_else(|e| panic!("round {round}: {e}"));
        let releases: Vec<&str> =
            rows.iter().filter(|r| r.event == "release").map(|r| r.release.as_deref().unwrap()).collect();
        let expected: Vec<String> = (1..=releases.len()).map(|i| format!("r{i}")).collect();
        assert_eq!(releases, expected, "round {round}");
        let reserved = rows.iter().filter(|r| r.event.starts_with("reserved")).count();
        assert!((reserved_before..=reserved_before + 1).contains(&reserved), "round {round}: {rows:#?}");
        reserved_before = reserved;
        assert_eq!(rows.last().unwrap().spent, (releases.len() + reserved) as f64, "round {round}");
        eprintln!("round {round}: {} releases, {reserved} interrupted reservations", releases.len());
    }
}

/// The CLI keeps its ledger where ANONFUSION_LEDGER says, across runs.
#[test]
fn the_cli_uses_anonfusion_ledger_across_runs() {
    let dir = TestDir::new("cli");
    let path = dir.ledger();
    let run = |sql: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_anonfusion"))
            .args(["--format", "csv", "-c", sql])
            .env("ANONFUSION_LEDGER", &path)
            .env("ANONFUSION_HISTORY", "/nonexistent/dir/history")
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // The account covers the columns a DP release reads, so the roles come first.
    let roles = "SELECT * FROM declare_roles('{t}', 'column1=qi, column2=sensitive');";
    let (out, e) = run(&format!(
        "CREATE TABLE a AS VALUES (1, 'x'), (2, 'y'); {} SELECT event FROM set_privacy_budget('a', 1.0);",
        roles.replace("{t}", "a")
    ));
    assert!(out.contains("budget set"), "{out}{e}");
    // Another process, the same rows in another order under another name.
    let (out, e) = run(&format!(
        "CREATE TABLE b AS VALUES (2, 'y'), (1, 'x'); {} SELECT * FROM set_privacy_budget('b', 2.0);",
        roles.replace("{t}", "b")
    ));
    assert!(e.contains("'force=true'"), "{out}{e}");
    let (out, _) = run("SELECT ledger_path, parts FROM anon_privacy_ledger WHERE event = 'ledger';");
    assert!(out.contains(&path.display().to_string()) && out.contains("kept across sessions"), "{out}");
}

/// A bundled dataset loaded twice under two names is one account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_dataset_shares_the_budget() {
    let dir = TestDir::new("reload");
    let (ctx, _) = anonfusion::session_with_ledger(Ledger::open(dir.ledger()));
    rows(&ctx, "SELECT COUNT(*) FROM load_dataset('nps', 8000, 7)").await;
    rows(&ctx, "SELECT COUNT(*) FROM load_dataset('nps', 8000, 7, 'nps_copy')").await;
    rows(&ctx, "SELECT * FROM set_privacy_budget('nps', 1.0)").await;
    assert!(err(&ctx, "SELECT * FROM set_privacy_budget('nps_copy', 2.0)").await.contains("'force=true'"));
    rows(&ctx, "SELECT * FROM set_privacy_budget('nps_copy', 0.5)").await;
    let seen = text(&ctx, "SELECT seen_as FROM anon_privacy_ledger WHERE event = 'budget lowered'").await;
    assert_eq!(seen, "nps, nps_copy");
}

/// `EXPLAIN SELECT ... FROM ipa_release(...)` used to perform the release and charge the
/// budget. Through the session's entry point a plain EXPLAIN runs nothing: no table, no charge,
/// no ledger record; EXPLAIN ANALYZE runs the release and charges it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_explain_of_a_dp_release_charges_nothing() {
    let dir = TestDir::new("explain");
    let (ctx, _) = session(&dir.ledger());
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await;
    let records = || async { int(&ctx, "SELECT COUNT(*) FROM anon_privacy_ledger").await };
    let before = records().await;
    let explain = |sql: String| {
        let ctx = ctx.clone();
        async move { anonfusion::sql::run(&ctx, &sql).await?.collect().await }
    };
    for sql in [
        "EXPLAIN SELECT * FROM ipa_release('t', 'h', 0.5)".to_string(),
        format!("EXPLAIN {}", HISTOGRAM.replace("COUNT(*)", "*")),
        "EXPLAIN SELECT * FROM set_privacy_budget('t', 0.9)".to_string(),
    ] {
        let e = explain(sql.clone()).await.expect_err(&sql).to_string();
        assert!(e.contains("EXPLAIN without ANALYZE has no effect"), "{sql}: {e}");
        assert!(!ctx.table_exist("h").unwrap() && !ctx.table_exist("h_report").unwrap(), "{sql}");
        assert_eq!(records().await, before, "{sql} wrote to the ledger");
    }
    explain(format!("EXPLAIN ANALYZE {HISTOGRAM}")).await.unwrap();
    assert!(ctx.table_exist("h").unwrap());
    let spent = float(&ctx, "SELECT spent FROM anon_privacy_ledger WHERE release = 'h'").await;
    assert!((spent - 0.6).abs() < 1e-9, "0.6 on the grid: {spent}");
}

/// Epsilons the exact grid cannot hold are errors naming the limits, for a release as for a
/// budget, seeded or not (1e308 used to be clamped silently); tiny ones print in exponent
/// form, not 300 digits. set_privacy_budget parses its options like every function.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn epsilons_off_the_grid_are_refused_with_the_limits() {
    let dir = TestDir::new("grid");
    let (ctx, _) = session(&dir.ledger());
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 1.0)").await;
    for sql in [
        "SELECT * FROM ipa_release('t', 'h', 1e308)",
        "SELECT * FROM ipa_release('t', 'h', 1e308, 'seed=1')",
        "SELECT * FROM dp_histogram('t', 'h', 1e308, '1,1', 'values=s0|s1|s2, seed=1')",
        "SELECT * FROM dp_histogram('t', 'h', 1e-300, '1,1', 'values=s0|s1|s2')",
        "SELECT * FROM ipa_release('t', 'h', 1e-300, 'seed=1')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("2^-32") && e.contains("2^20 (1048576)"), "{sql}: {e}");
        assert!(e.len() < 400 && !e.contains("0000000000"), "{sql}: {e}");
        assert!(!ctx.table_exist("h").unwrap());
    }
    for (sql, needle) in [
        ("SELECT * FROM set_privacy_budget('t', 2.0, 'force')", "key=value"),
        ("SELECT * FROM set_privacy_budget('t', 2.0, 'delta=1e-6, delta=1e-7')", "more than once"),
        ("SELECT * FROM set_privacy_budget('t', 2.0, 'force=maybe')", "true or false"),
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains(needle), "{sql}: {e}");
    }
    rows(&ctx, "SELECT * FROM set_privacy_budget('t', 2.0, 'force=true')").await;
}
