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

/// A COPY to one file writes the rows in the order the table holds them, every time: a seeded
/// release's CSV is the same file on every run. Before, DataFusion read a one-partition table
/// of several batches as several partitions (and dealt batches round-robin to the cores ahead
/// of a projection: the list columns' conversion to text, a computed column), and the file
/// interleaved them as they finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_to_one_file_keeps_the_tables_row_order() {
    use datafusion::arrow::array::{Int64Array, ListBuilder, StringBuilder};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::datasource::MemTable;
    use std::sync::Arc;
    let dir = TestDir::new("order");
    let ctx = anonfusion::new_session();
    // More partitions than this machine may have cores, so the table's batches would be cut
    // between partitions on any machine.
    rows(&ctx, "SET datafusion.execution.target_partitions = 4").await;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("codes", DataType::new_list(DataType::Utf8, true), true),
    ]));
    // One partition of 32 batches, ids in order, as a release is held; more rows than a batch
    // holds (8,192), or DataFusion would not spread them.
    let batches: Vec<RecordBatch> = (0..32i64)
        .map(|b| {
            let ids: Vec<i64> = (b * 1000..(b + 1) * 1000).collect();
            let mut codes = ListBuilder::new(StringBuilder::new());
            for id in &ids {
                codes.values().append_value(format!("c{id}"));
                codes.values().append_value("x");
                codes.append(true);
            }
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(ids)), Arc::new(codes.finish())])
                .unwrap()
        })
        .collect();
    ctx.register_table("c", Arc::new(MemTable::try_new(schema, vec![batches]).unwrap())).unwrap();
    let expected: Vec<String> = (0..32_000).map(|id| format!("{id},c{id};x")).collect();
    let twice: Vec<String> = (0..32_000).map(|id| format!("{id},{}", 2 * id)).collect();
    for (sql, want) in [
        ("COPY c TO '{}'", &expected),
        ("COPY (SELECT * FROM c) TO '{}'", &expected),
        ("COPY (SELECT id, id * 2 AS twice FROM c) TO '{}'", &twice),
    ] {
        for run in 0..3 {
            let csv = dir.file(&format!("c{run}.csv"));
            rows(&ctx, &sql.replace("{}", &csv)).await;
            let text = std::fs::read_to_string(&csv).unwrap();
            let lines: Vec<&str> = text.lines().skip(1).collect();
            assert_eq!(lines.len(), want.len(), "{sql}");
            assert!(
                lines.iter().zip(want.iter()).all(|(a, b)| a == b),
                "{sql}, run {run}: rows out of the table's order"
            );
        }
    }
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
    // The same through a view: counted by a query, not from the in-memory table's arrays.
    rows(&ctx, "CREATE VIEW pv AS SELECT * FROM p").await;
    rows(&ctx, "SELECT * FROM declare_roles('pv', 'age=qi, d=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('pv', 'age', '5,10,*', 0, 99)").await;
    let e = err(&ctx, "SELECT * FROM kanon_anonymize('pv', 'o', 2)").await;
    assert!(e.contains("'d'") && e.contains("NULLs in 1 record"), "{e}");
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
    // DataFusion plans a COPY under EXPLAIN ANALYZE with its own planner, which would skip the
    // COPY's checks (the file of a registered table, a partial directory): refused, nothing written.
    let target = std::env::temp_dir().join(format!("anonfusion-explain-copy-{}.csv", std::process::id()));
    let sql = format!("EXPLAIN ANALYZE COPY g TO '{}'", target.display());
    let e = anonfusion::sql::run(&ctx, &sql).await.expect_err("EXPLAIN ANALYZE COPY ran").to_string();
    assert!(e.contains("not run under EXPLAIN ANALYZE"), "{e}");
    assert!(!target.exists());
}

// ---- Issue 37: no record's value in any error -------------------------------------------------

/// The CSV parser's error quotes the malformed cell and its whole row; every table function
/// that reads the table passes it through the scrubber, which keeps the column, the line and
/// the type and drops the values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_csv_cell_is_named_by_column_and_line_never_by_value() {
    let dir = TestDir::new("malformed");
    let csv = dir.file("s.csv");
    let clean = "name,age,zip,dx\nSECRETNAME1,34,02139,SECRETDX1\nSECRETNAME2,41,02140,SECRETDX2\n";
    std::fs::write(&csv, clean).unwrap();
    let ctx = anonfusion::new_session();
    let create = format!(
        "CREATE EXTERNAL TABLE s (name VARCHAR, age INT, zip VARCHAR, dx VARCHAR) STORED AS CSV LOCATION '{csv}' \
         OPTIONS ('format.has_header' 'true')"
    );
    rows(&ctx, &create).await;
    rows(&ctx, "SELECT * FROM declare_roles('s', 'name=identifier, age=qi, zip=qi, dx=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('s', 'age', '10,*', 0, 120)").await;
    rows(&ctx, "SELECT * FROM masking_hierarchy('s', 'zip')").await;
    std::fs::write(&csv, clean.replace(",41,", ",SECRETAGE,")).unwrap();
    for call in [
        "set_privacy_budget('s', 1.0)",
        "interval_hierarchy('s', 'age', '10,*', 0, 120)",
        "kanon_anonymize('s', 'o', 2)",
        "generalize('s', 'o', '1,1')",
    ] {
        let sql = format!("SELECT * FROM {call}");
        let e = err(&ctx, &sql).await;
        let shown = anonfusion::error::describe(&ctx.sql(&sql).await.expect_err("fails at planning"));
        for message in [&e, &shown] {
            assert!(message.contains("column 1") && message.contains("at line"), "{call}: {message}");
            assert!(message.contains("Int32"), "{call}: the type is kept: {message}");
            for value in ["SECRET", "02139", "02140"] {
                assert!(!message.contains(value), "{call}: '{value}' shown: {message}");
            }
        }
    }
}

/// `hierarchy_from_table` over a table whose column gives a node two parents says which lines
/// disagree, not the labels (here the hierarchy table is the patients' own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hierarchy_with_two_parents_names_lines_not_labels() {
    let ctx = anonfusion::new_session();
    rows(
        &ctx,
        "CREATE TABLE s (zip VARCHAR, city VARCHAR, dx VARCHAR) AS VALUES \
         ('02139', 'SECRETCITY1', 'SECRETDX1'), ('02139', 'SECRETCITY2', 'SECRETDX2'), ('02140', '*', 'SECRETDX3')",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('s', 'zip=qi, dx=sensitive')").await;
    let e = err(&ctx, "SELECT * FROM hierarchy_from_table('s', 'zip', 's')").await;
    assert!(e.contains("two parents") && e.contains("line"), "{e}");
    for value in ["SECRET", "02139", "02140"] {
        assert!(!e.contains(value), "'{value}' shown: {e}");
    }
}

/// The scrubber on Arrow's and DataFusion's messages that quote a value, or name it without
/// quotes, as they read today; what says where the fault is stays.
#[test]
fn the_scrubber_removes_every_value_and_keeps_the_place() {
    use anonfusion::error::scrub;
    let cases = [
        (
            "Arrow error: Parser error: Error while parsing value 'SECRET' as type 'Int32' for column 1 at line 2. \
             Row data: '[SECRETNAME,SECRET,02140,SECRETDX]'",
            &["as type 'Int32' for column 1 at line 2"][..],
        ),
        ("Arrow error: Cast error: Cannot cast string 'SECRET' to value of Int64 type", &["Int64 type"][..]),
        (
            "Arrow error: Parser error: Error while parsing value 'O'SECRET' as type 'Int32' for column 0 at line 7",
            &["line 7"][..],
        ),
        ("Arrow error: Cast error: Can't cast value 4711SECRET to type Int8", &["to type Int8"][..]),
        ("Arrow error: Cast error: Cannot cast to Int8. Overflowing on 4711SECRET", &["Cannot cast to Int8"][..]),
        ("Arrow error: Parser error: Error parsing timestamp from 'SECRET': error parsing date", &["timestamp"][..]),
        ("Arrow error: Cast error: Cannot cast string 'SECRET\nSECRET' to value of Date32 type", &["Date32"][..]),
        (
            "cannot read 'data.csv': Parser error: Failed to parse SECRET as interval amount",
            &["cannot read 'data.csv'"][..],
        ),
    ];
    for (message, kept) in cases {
        let clean = scrub(message);
        assert!(!clean.contains("SECRET"), "{message} -> {clean}");
        for k in kept {
            assert!(clean.contains(k), "{message} -> {clean}: lost '{k}'");
        }
    }
    // An apostrophe inside a word pairs with no quote: the message reads, the name goes.
    assert_eq!(
        scrub("Execution error: Table 'out' doesn't exist."),
        "Execution error: Table <value not shown> doesn't exist."
    );
    // Our own messages, which quote names and never values, are left alone.
    let ours = "column 'age' of table 's': 3 distinct value(s) not covered by the hierarchy";
    assert_eq!(scrub(ours), ours);
}

/// Markers planted in every cell of a random CSV table (a malformed cell in a numeric column
/// too), then every registered table function called with argument lists that make it fail,
/// many after reading the table: no error of any of them holds a marker.
#[test]
fn no_table_function_error_holds_a_value_of_the_table() {
    use proptest::prelude::*;
    // A case calls every function 28 times (about a minute and a half in the dev build): one
    // case of random shape and markers per run.
    let config = ProptestConfig { cases: 1, failure_persistence: None, ..ProptestConfig::default() };
    proptest!(config, |(n in 4usize..12, seed in any::<u32>(), bad_row in 0usize..12, bad_col in 0usize..2)| {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(every_function_scrubbed(n, seed, bad_row % n, bad_col));
    });
}

/// One case of [`no_table_function_error_holds_a_value_of_the_table`].
async fn every_function_scrubbed(n: usize, seed: u32, bad_row: usize, bad_col: usize) {
    let dir = TestDir::new(&format!("markers-{seed}-{n}"));
    let csv = dir.file("s.csv");
    // Every cell a marker: text cells MK<seed><row><col>Q, numbers of seven digits that no
    // count, line or column number of a message can match by chance.
    let text = |r: usize, c: usize| format!("MK{seed}R{r}C{c}Q");
    let number = |r: usize, c: usize| 7_300_000 + (seed as usize % 1000) * 100 + r * 3 + c;
    let mut values: Vec<String> = Vec::new();
    let mut lines = vec!["name,age,weight,zip,dx".to_string()];
    for r in 0..n {
        let cells = [text(r, 0), number(r, 1).to_string(), number(r, 2).to_string(), text(r, 3), text(r, 4)];
        values.extend(cells.iter().cloned());
        lines.push(cells.join(","));
    }
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let ctx = anonfusion::new_session();
    rows(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE s (name VARCHAR, age BIGINT, weight DOUBLE, zip VARCHAR, dx VARCHAR) STORED AS CSV \
             LOCATION '{csv}' OPTIONS ('format.has_header' 'true')"
        ),
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('s', 'name=identifier, age=qi, zip=qi, dx=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('s', 'age', '1000000,*', 0, 10000000)").await;
    rows(&ctx, "SELECT * FROM masking_hierarchy('s', 'zip')").await;
    rows(&ctx, "SELECT COUNT(*) FROM generalize('s', 'r', '1,1')").await;
    // Argument lists that fit the functions' shapes, wrongly: on the clean table first, then
    // with one numeric cell malformed, so every read of the table fails in the CSV parser.
    let args = [
        "'s'",
        "'s', 'age'",
        "'s', 'zip', 's'",
        "'s', 'age', '10,*'",
        "'s', 'o', 99",
        "'s', 'o', 2, 'suppression=1%, distinct_l=9'",
        "'s', 'o', 2, 0.5",
        "'s', 'o', 1.0, '0,0'",
        "'s', 'o', '0,0'",
        "'s', 'o', 2, 2, 0.5, 10",
        "'s', 'r', 'k=99'",
        "'SELECT AVG(age) FROM s', 's', 'r'",
        "'s', 'W1', 3",
        "'s', 1.0",
    ];
    let mut functions: Vec<String> = ctx.state().table_functions().keys().cloned().collect();
    functions.sort();
    assert!(functions.len() > 30 && functions.contains(&"kanon_anonymize".to_string()), "{functions:?}");
    let mut failures = 0;
    for round in ["clean", "malformed"] {
        if round == "malformed" {
            let mut bad = lines.clone();
            let mut cells: Vec<String> = bad[bad_row + 1].split(',').map(String::from).collect();
            cells[1 + bad_col] = format!("MK{seed}BADQ");
            values.push(cells[1 + bad_col].clone());
            bad[bad_row + 1] = cells.join(",");
            std::fs::write(&csv, bad.join("\n") + "\n").unwrap();
        }
        for f in &functions {
            // Never the bundled datasets' loaders (they would succeed on a name, slowly).
            if f == "load_dataset" || f == "load_constraints" {
                continue;
            }
            for a in args {
                let sql = format!("SELECT * FROM {f}({a})");
                let error = match ctx.sql(&sql).await {
                    Err(e) => Some(e),
                    Ok(df) => df.collect().await.err(),
                };
                let Some(error) = error else { continue };
                failures += 1;
                for message in [error.to_string(), anonfusion::error::describe(&error)] {
                    if let Some(v) = values.iter().find(|v| message.contains(v.as_str())) {
                        panic!("{round}: {sql} shows the value '{v}': {message}");
                    }
                }
            }
        }
    }
    assert!(failures > 50, "the calls must fail: {failures}");
}

// ---- Issue 37: COPY to a target that cannot be written ---------------------------------------

/// Run a COPY in a child thread with its own runtime and give up after 30 s, so a COPY that
/// never returns fails the test instead of hanging it.
fn copy_error(target: &str) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    let sql = format!("COPY (SELECT 1 AS a) TO '{target}'");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let out = runtime.block_on(async {
            let ctx = anonfusion::new_session();
            match ctx.sql(&sql).await {
                Err(e) => Err(anonfusion::error::describe(&e)),
                Ok(df) => df.collect().await.map(|_| ()).map_err(|e| anonfusion::error::describe(&e)),
            }
        });
        let _ = tx.send(out);
    });
    match rx.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(Ok(())) => panic!("COPY TO '{target}' succeeded"),
        Ok(Err(e)) => e,
        Err(_) => panic!("COPY TO '{target}' did not return within 30 s"),
    }
}

/// Every unwritable target is a clear error naming the path and the reason, at once: `/proc`
/// (used to loop forever), `/sys`, a path under a file, a directory given as a file. These
/// fail for root too; permission bits do not stop root, so the read-only cases below are
/// checked only when the tests do not run as root (CI runs them as root).
#[test]
fn copy_to_an_unwritable_target_names_the_path_and_the_cause() {
    let dir = TestDir::new("copy-unwritable");
    let file = dir.file("plain.txt");
    std::fs::write(&file, "x").unwrap();
    let under_file = format!("{file}/o.csv");
    let a_dir = dir.file("sub");
    std::fs::create_dir_all(&a_dir).unwrap();
    let dir_as_file = format!("{a_dir}.csv");
    std::fs::create_dir_all(&dir_as_file).unwrap();
    let mut cases = vec![
        ("/proc/self/nope.csv".to_string(), "cannot create a file"),
        ("/sys/nope.csv".to_string(), "cannot create a file"),
        (under_file.clone(), "Not a directory"),
        (dir_as_file.clone(), "is a directory"),
    ];
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { nix::libc::geteuid() } == 0;
    if !root {
        use std::os::unix::fs::PermissionsExt;
        let locked = dir.file("locked");
        std::fs::create_dir_all(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        let read_only = dir.file("ro.csv");
        std::fs::write(&read_only, "old").unwrap();
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
        cases.push((format!("{locked}/o.csv"), "Permission denied"));
        cases.push((read_only, "Permission denied"));
    }
    for (target, cause) in cases {
        let e = copy_error(&target);
        assert!(e.contains(&format!("'{target}'")) && e.contains(cause), "{target}: {e}");
        assert!(!e.contains("Internal error"), "{target}: {e}");
    }
    // Nothing was written anywhere: the directory holds what the test made.
    let mut expected = vec!["plain.txt".to_string(), "sub".to_string(), "sub.csv".to_string()];
    if !root {
        expected.extend(["locked".to_string(), "ro.csv".to_string()]);
        expected.sort();
    }
    assert_eq!(dir.listing(), expected);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

// ---- COPY over a registered table's files; a directory COPY that fails midway -------------

/// A COPY onto the file of a registered table (`CREATE EXTERNAL TABLE ... LOCATION`) is
/// refused, naming the table, and the original's bytes stay as they were: before, the release
/// silently replaced the original data. So is any spelling of that path (`sub/..`), a path in
/// a table's directory (the new file would become part of the table) and a directory holding
/// a table's files. An unrelated target still works; a table in memory has no files to guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_never_writes_over_a_registered_tables_files() {
    let dir = TestDir::new("copy-tables");
    let ctx = anonfusion::new_session();
    let original = "id,age\n1,34\n2,51\n";
    let patients = dir.file("patients.csv");
    std::fs::write(&patients, original).unwrap();
    std::fs::create_dir_all(dir.file("sub")).unwrap();
    let visits = dir.file("visits");
    std::fs::create_dir_all(&visits).unwrap();
    let visit_file = format!("{visits}/v1.csv");
    std::fs::write(&visit_file, "id\n1\n").unwrap();
    rows(
        &ctx,
        &format!("CREATE EXTERNAL TABLE patients STORED AS CSV LOCATION '{patients}' OPTIONS ('has_header' 'true')"),
    )
    .await;
    rows(
        &ctx,
        &format!("CREATE EXTERNAL TABLE visits STORED AS CSV LOCATION '{visits}/' OPTIONS ('has_header' 'true')"),
    )
    .await;
    rows(&ctx, "CREATE TABLE release AS VALUES (9, 99)").await;
    let cases = [
        (patients.clone(), &["patients"][..]),
        (dir.file("sub/../patients.csv"), &["patients"]),
        (format!("file://{patients}"), &["patients"]),
        (format!("{visits}/"), &["visits"]),
        (format!("{visits}/new.csv"), &["visits"]),
        (format!("{visits}/part/"), &["visits"]),
        // Holds both; either may be named.
        (format!("{}/", dir.0.display()), &["patients", "visits"]),
    ];
    for (target, tables) in cases {
        let e = err(&ctx, &format!("COPY release TO '{target}' STORED AS CSV")).await;
        let path = target.trim_start_matches("file://");
        let named = tables.iter().any(|t| e.contains(&format!("table '{t}'")));
        assert!(e.contains(&format!("'{path}'")) && named, "{target}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&patients).unwrap(), original, "the original was overwritten");
    assert_eq!(std::fs::read_to_string(&visit_file).unwrap(), "id\n1\n");
    let visit_files: Vec<_> = std::fs::read_dir(&visits).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(visit_files, vec!["v1.csv"], "a file was added to the table's directory");
    assert_eq!(dir.listing(), vec!["patients.csv", "sub", "visits"]);
    assert_eq!(int(&ctx, "SELECT SUM(age) FROM patients").await, 85);
    // Beside the tables, and from a table in memory, COPY writes as before.
    let elsewhere = dir.file("sub/release.csv");
    rows(&ctx, &format!("COPY release TO '{elsewhere}'")).await;
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "column1,column2\n9,99\n");
}

/// A COPY to a directory that fails midway leaves the disk as it was: no target directory if
/// there was none, an existing one with only what it held, no hidden directory beside it.
/// Before, DataFusion wrote the target's files directly and the ones written before the
/// failure stayed. Plain and `PARTITIONED BY` directories; a successful COPY then writes its
/// files into the target (and partition subdirectories) and leaves nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_directory_copy_leaves_the_target_as_it_was() {
    let dir = TestDir::new("copy-dir");
    let ctx = anonfusion::new_session();
    // Rows are written before row 900,000 fails to cast.
    let failing = "SELECT CAST(CASE WHEN value < 900000 THEN '1' ELSE 'x' END AS INT) AS v, value % 3 AS p \
                   FROM generate_series(1, 1000000)";
    let kept = dir.file("kept");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(format!("{kept}/old.csv"), "v\n1\n").unwrap();
    let absent = dir.file("absent");
    for target in [format!("{absent}/"), format!("{kept}/"), absent.clone()] {
        for partitioned in ["", " PARTITIONED BY (p)"] {
            let sql = format!("COPY ({failing}) TO '{target}' STORED AS CSV{partitioned}");
            let e = err(&ctx, &sql).await;
            assert!(e.contains("ast"), "{sql}: {e}");
            assert_eq!(dir.listing(), vec!["kept"], "{sql}: files were left");
            let in_kept: Vec<_> = std::fs::read_dir(&kept).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert_eq!(in_kept, vec!["old.csv"], "{sql}: files were left in the existing directory");
        }
    }
    let ok = "SELECT value AS v, value % 2 AS p FROM generate_series(1, 10)";
    rows(&ctx, &format!("COPY ({ok}) TO '{kept}/' STORED AS CSV")).await;
    rows(&ctx, &format!("COPY ({ok}) TO '{absent}/' STORED AS CSV PARTITIONED BY (p)")).await;
    assert_eq!(dir.listing(), vec!["absent", "kept"], "a hidden directory was left");
    let in_kept: Vec<_> = std::fs::read_dir(&kept).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(in_kept.len() >= 2 && in_kept.iter().all(|n| !n.to_string_lossy().starts_with('.')), "{in_kept:?}");
    let mut parts: Vec<String> =
        std::fs::read_dir(&absent).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    parts.sort();
    assert_eq!(parts, vec!["p=0", "p=1"]);
    rows(&ctx, &format!("CREATE EXTERNAL TABLE back STORED AS CSV LOCATION '{absent}/' OPTIONS ('has_header' 'true')"))
        .await;
    assert_eq!(int(&ctx, "SELECT SUM(v) FROM back").await, 55);
}

// ---- Issue 37: arguments that gave wrong results with no error -------------------------------

/// Each was accepted and gave a silently wrong result: roles on a system view, a counterfeit
/// limit above 100%, a negative refinement threshold, more Adult rows than the file has, zero
/// rows, and `diagnostics=yes` read as true.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_meant_nothing_are_refused() {
    let ctx = anonfusion::new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult', 200)").await;
    let cases = [
        ("SELECT * FROM declare_roles('anon_roles', 'table_name=qi')", "system view"),
        ("SELECT * FROM declare_roles('information_schema.tables', 'table_name=qi')", "system view"),
        ("SELECT * FROM hceil_anonymize('adult', 'o', 5, 0.5, 'max_counterfeits=150%')", "'max_counterfeits'"),
        (
            "SELECT * FROM ipa_release('adult', 'o', 1.0, 'values=a|b, partition=adaptive, root=1:1:1:1:1:1:1:1, \
             steps=age:0, theta=-1')",
            "'theta'",
        ),
        ("SELECT * FROM load_dataset('adult', 99999999, NULL, 'a2')", "'rows'"),
        ("SELECT * FROM load_dataset('adult', 0, NULL, 'a3')", "'rows'"),
        ("SELECT * FROM hceil_anonymize('adult', 'o', 5, 0.5, 'diagnostics=yes')", "'diagnostics'"),
        ("SELECT * FROM kanon_anonymize('adult', 'o', 5, 'keep_insensitive=1')", "'keep_insensitive'"),
    ];
    for (sql, named) in cases {
        let e = err(&ctx, sql).await;
        assert!(e.contains(named), "{sql}: {e}");
    }
    let e = err(&ctx, "SELECT * FROM load_dataset('adult', 99999999, NULL, 'a2')").await;
    assert!(e.contains("30162"), "the size is said: {e}");
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_roles WHERE table_name <> 'adult'").await, 0);
    for t in ["a2", "a3", "o"] {
        assert!(!ctx.table_exist(t).unwrap(), "{t} registered");
    }
}
