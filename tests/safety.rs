//! Safe by default (issue 18): a failed `COPY` leaves the disk as it was, a release never
//! publishes bounds taken from the data, errors never echo an original value, drifted data and
//! NULL sensitive values are errors, and a plain `EXPLAIN` has no effect. Each test reproduces
//! a case of the issue that was a defect.

mod common;

use common::{err, int, rows, temp_file, texts};
use datafusion::prelude::SessionContext;
use std::path::PathBuf;

/// A fresh directory for one test's files, removed when the test ends.
struct TestDir(PathBuf);

impl TestDir {
    fn new(test: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("anonfusion-safety-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TestDir(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    /// Every file name in the directory, sorted.
    fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `COPY ... TO 'x.csv'` that fails at execution leaves no file (the issue: a 0-byte one) and
/// no temporary beside it, and an existing file at the target keeps its contents; Parquet too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_copy_leaves_no_file_and_keeps_an_existing_one() {
    let dir = TestDir::new("copy");
    let ctx = anonfusion::new_session();
    rows(&ctx, "CREATE TABLE n (v VARCHAR) AS VALUES ('1'), ('2'), ('x')").await;
    for ext in ["csv", "parquet", "json"] {
        let target = dir.file(&format!("x.{ext}"));
        // Fails while rows are written: 'x' is no integer.
        let e = err(&ctx, &format!("COPY (SELECT CAST(v AS INT) AS v FROM n) TO '{target}'")).await;
        assert!(e.contains("Cannot cast") || e.contains("cast"), "{ext}: {e}");
        assert_eq!(dir.listing(), Vec::<String>::new(), "{ext}: a failed COPY left files");
        std::fs::write(&target, "old").unwrap();
        err(&ctx, &format!("COPY (SELECT CAST(v AS INT) AS v FROM n) TO '{target}'")).await;
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old", "{ext}: the existing file was touched");
        assert_eq!(dir.listing(), vec![format!("x.{ext}")], "{ext}: a temporary file was left");
        // A successful COPY replaces it.
        rows(&ctx, &format!("COPY (SELECT v FROM n WHERE v <> 'x') TO '{target}'")).await;
        assert_ne!(std::fs::read(&target).unwrap(), b"old", "{ext}: the file was not replaced");
        assert_eq!(dir.listing(), vec![format!("x.{ext}")], "{ext}: a temporary file was left");
        std::fs::remove_file(&target).unwrap();
    }
}

/// A list column (code sets, a counterfeit catalog's `class_ids`) is written to CSV as a
/// `;`-delimited string instead of failing the write; Parquet keeps the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_column_is_written_to_csv_as_a_delimited_string() {
    let dir = TestDir::new("lists");
    let ctx = anonfusion::new_session();
    rows(&ctx, "CREATE TABLE c AS SELECT 1 AS id, make_array('E11', 'I10') AS codes").await;
    let csv = dir.file("c.csv");
    rows(&ctx, &format!("COPY (SELECT * FROM c) TO '{csv}'")).await;
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "id,codes\n1,E11;I10\n");
    let parquet = dir.file("c.parquet");
    rows(&ctx, &format!("COPY (SELECT * FROM c) TO '{parquet}'")).await;
    rows(&ctx, &format!("CREATE EXTERNAL TABLE back STORED AS PARQUET LOCATION '{parquet}'")).await;
    assert!(texts(&ctx, "SELECT arrow_typeof(codes) FROM back").await[0].starts_with("List"));
    // The counterfeit catalog of an h-ceiling release, the case.
    rows(&ctx, "SELECT * FROM load_dataset('nps', 7000, 1)").await;
    rows(&ctx, "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 5, 0.3, 'seed=1')").await;
    let catalog = dir.file("catalog.csv");
    rows(&ctx, &format!("COPY (SELECT * FROM nps_h_catalog) TO '{catalog}'")).await;
    assert!(std::fs::read_to_string(&catalog).unwrap().lines().count() > 1);
}

/// A numeric table for the hierarchy and drift cases: ages 18..=92, a sensitive `d`.
async fn ages(ctx: &SessionContext) {
    rows(ctx, "CREATE TABLE p (age BIGINT, d VARCHAR) AS VALUES (18, 'a'), (40, 'b'), (41, 'a'), (92, 'b')").await;
    rows(ctx, "SELECT * FROM declare_roles('p', 'age=qi, d=sensitive')").await;
}

/// `interval_hierarchy` without bounds takes them from the data: a release through it would
/// publish the exact minimum and maximum as the bounds of `*` (the issue: `age_lo 18, age_hi
/// 92`), so every publishing method refuses it and says why; the declared domain is published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_taken_from_the_data_are_never_published() {
    let ctx = anonfusion::new_session();
    ages(&ctx).await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '10,*')").await;
    for sql in [
        "SELECT * FROM generalize('p', 'g', '2')",
        "SELECT * FROM kanon_anonymize('p', 'g', 2, 'suppression=0')",
        "SELECT * FROM hceil_anonymize('p', 'g', 2, 0.5, 'seed=1')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("'age'") && e.contains("derived from the data") && e.contains("min"), "{sql}: {e}");
        assert!(!ctx.table_exist("g").unwrap(), "{sql}");
    }
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '10,*', 0, 120)").await;
    rows(&ctx, "SELECT COUNT(*) FROM generalize('p', 'g', '2')").await;
    assert_eq!(texts(&ctx, "SELECT DISTINCT concat(age, ' ', age_lo, ' ', age_hi) FROM g").await, ["* 0 120"]);
}

/// A value the hierarchy does not cover is counted, never quoted: the error must not tell
/// whoever may run SQL which values occur (a membership oracle).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coverage_error_names_the_column_and_a_count_not_the_values() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "CREATE TABLE z (zip VARCHAR, d VARCHAR) AS VALUES ('13053', 'a'), ('13068', 'b'), ('47906', 'a')")
        .await;
    rows(&ctx, "SELECT * FROM declare_roles('z', 'zip=qi, d=sensitive')").await;
    let h = temp_file("safety-zip.csv", "13053;1305*;*\n");
    let e = err(&ctx, &format!("SELECT * FROM load_hierarchy('z', 'zip', '{h}')")).await;
    assert!(e.contains("zip") && e.contains("2 distinct value(s) not covered"), "{e}");
    assert!(!e.contains("13068") && !e.contains("47906"), "an original value is echoed: {e}");
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('z', 'zip', '10', 13000, 13060)").await;
    assert!(e.contains("zip") && !e.contains("13068") && !e.contains("47906"), "{e}");
}

/// Data that changed after its hierarchy was loaded: generalize used to write NULL
/// quasi-identifiers; now it gives the error every other method gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generalize_on_drifted_data_is_an_error_not_null_labels() {
    let ctx = anonfusion::new_session();
    ages(&ctx).await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '10,*', 0, 99)").await;
    // kanon aggregates once per table and declarations (a cache): the cached table predates
    // the insert.
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('p', 'k', 1)").await;
    // generalize memoizes a call: the memoized release predates the insert.
    rows(&ctx, "SELECT COUNT(*) FROM generalize('p', 'g', '1')").await;
    rows(&ctx, "INSERT INTO p VALUES (150, 'a')").await;
    for sql in [
        "SELECT * FROM generalize('p', 'g', '1')",
        "SELECT * FROM generalize('p', 'g', '0')",
        "SELECT * FROM kanon_anonymize('p', 'k', 2)",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("age") && e.contains("1 distinct value(s) not covered"), "{sql}: {e}");
        assert!(!e.contains("150"), "{e}");
        assert_eq!(
            int(&ctx, "SELECT COUNT(*) FROM g").await + int(&ctx, "SELECT COUNT(*) FROM k").await,
            8,
            "{sql}: the earlier releases stay as they were"
        );
    }
}

/// README: "A NULL sensitive value is an error", in every method. kanon_anonymize without a
/// model on the sensitive attribute used to accept one and release it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_sensitive_value_is_refused_by_every_method() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "CREATE TABLE p (age BIGINT, d VARCHAR) AS VALUES (30, 'a'), (31, NULL), (32, 'b'), (33, 'a')").await;
    rows(&ctx, "SELECT * FROM declare_roles('p', 'age=qi, d=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10,*', 0, 99)").await;
    for sql in [
        "SELECT * FROM kanon_anonymize('p', 'o', 2)",
        "SELECT * FROM kanon_anonymize('p', 'o', 2, 'distinct_l=2')",
        "SELECT * FROM generalize('p', 'o', '1')",
        "SELECT * FROM hceil_anonymize('p', 'o', 2, 0.5, 'seed=1')",
        "SELECT * FROM entropy_anonymize('p', 'o', 2, 'seed=1')",
    ] {
        let e = err(&ctx, sql).await;
        assert!(e.contains("'d'") && e.contains("NULL"), "{sql}: {e}");
        assert!(!ctx.table_exist("o").unwrap(), "{sql}");
    }
    rows(&ctx, "CREATE TABLE q AS SELECT * FROM p WHERE d IS NOT NULL").await;
    rows(&ctx, "SELECT * FROM declare_roles('q', 'age=qi, d=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('q', 'age', '5,10,*', 0, 99)").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('q', 'o', 2)").await, 3);
}

/// A plain EXPLAIN (through the session's entry point) runs no side-effect function: nothing
/// is registered, no hierarchy changes; EXPLAIN ANALYZE runs the statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_explain_publishes_nothing() {
    let ctx = anonfusion::new_session();
    ages(&ctx).await;
    let run = |sql: &'static str| {
        let ctx = ctx.clone();
        async move { anonfusion::sql::run(&ctx, sql).await?.collect().await }
    };
    for sql in [
        "EXPLAIN SELECT * FROM interval_hierarchy('p', 'age', '10,*', 0, 120)",
        "EXPLAIN VERBOSE SELECT * FROM interval_hierarchy('p', 'age', '10,*', 0, 120)",
    ] {
        let e = run(sql).await.expect_err(sql).to_string();
        assert!(e.contains("EXPLAIN without ANALYZE has no effect"), "{e}");
    }
    assert!(err(&ctx, "SELECT * FROM generalize('p', 'g', '1')").await.contains("no hierarchy"));
    run("SELECT * FROM interval_hierarchy('p', 'age', '10,*', 0, 120)").await.unwrap();
    for sql in ["EXPLAIN SELECT * FROM generalize('p', 'g', '1')", "DESCRIBE SELECT * FROM generalize('p', 'g', '1')"] {
        let e = run(sql).await.expect_err(sql).to_string();
        assert!(e.contains("generalize") && e.contains("EXPLAIN ANALYZE runs it"), "{sql}: {e}");
        assert!(!ctx.table_exist("g").unwrap(), "{sql}");
    }
    run("EXPLAIN ANALYZE SELECT * FROM generalize('p', 'g', '1')").await.unwrap();
    assert!(ctx.table_exist("g").unwrap());
    // Other statements are as ctx.sql runs them.
    assert_eq!(run("SELECT 1").await.unwrap()[0].num_rows(), 1);
    run("EXPLAIN SELECT * FROM g").await.unwrap();
}
