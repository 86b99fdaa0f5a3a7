//! The foundation's SQL surface: datasets, roles, hierarchies, lattice exploration and manual
//! generalization, including bad input that must fail cleanly and leave the catalog as it was.

mod common;

use common::{err, int, rows, temp_file, texts};

use anonfusion::new_session;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

async fn table_exists(ctx: &SessionContext, name: &str) -> bool {
    ctx.table_exist(name).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adult_loads_in_one_statement_with_roles_and_hierarchies() {
    let ctx = new_session();
    let b = rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    assert_eq!(b[0].num_rows(), 1);
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM adult").await, 30_162);
    assert_eq!(int(&ctx, "SELECT lattice_nodes FROM load_dataset('adult')").await, 2160);
    assert_eq!(
        int(&ctx, "SELECT COUNT(*) FROM anon_roles WHERE table_name = 'adult' AND role = 'quasi_identifier'").await,
        7
    );
    assert_eq!(
        int(&ctx, "SELECT height FROM anon_hierarchies WHERE table_name = 'adult' AND column_name = 'age'").await,
        4
    );
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM hierarchy('adult', 'workclass')").await, 8);
    assert_eq!(
        int(&ctx, "SELECT leaves FROM hierarchy_nodes('adult', 'education') WHERE label = 'Higher education'").await,
        7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lattice_nodes_and_generalize_work_from_sql() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM lattice_nodes('adult')").await, 2160);
    // The top node puts everyone in one class.
    assert_eq!(
        int(&ctx, "SELECT min_class_size FROM lattice_nodes('adult') WHERE node = '[4, 1, 1, 2, 3, 2, 2]'").await,
        30_162
    );
    rows(&ctx, "SELECT * FROM generalize('adult', 'adult_g', '1,0,0,1,1,1,1')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM adult_g").await, 30_162);
    // ARX's Adult file puts ages 36..40 under the label 35-39 (leaf 40 included, 35 not): the
    // published bounds are the hull of label and leaves, [35, 40], and hold exactly those records.
    assert_eq!(
        int(&ctx, "SELECT COUNT(*) FROM adult_g WHERE age = '35-39' AND age_lo = 35 AND age_hi = 40").await,
        int(&ctx, "SELECT COUNT(*) FROM adult WHERE age BETWEEN 36 AND 40").await
    );
    assert_eq!(int(&ctx, "SELECT COUNT(DISTINCT workclass) FROM adult_g").await, 3);
    // CREATE TABLE AS over a method call runs it once and snapshots the release.
    rows(&ctx, "CREATE TABLE snap AS SELECT * FROM generalize('adult', 'adult_g2', '4,1,1,2,3,2,2')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM snap WHERE age = '*' AND sex = '*'").await, 30_162);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_table_with_declared_roles_and_loaded_hierarchies() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE p (name VARCHAR, age BIGINT, zip VARCHAR, disease VARCHAR) AS VALUES \
        ('Mary', 37, '22071', 'Pneumonia'), ('Alice', 35, '22098', 'Diabetes'), ('Tom', 63, '55099', 'Diabetes')",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('p', 'name=identifier, age=qi, zip=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10,20,*', 0, 99)").await;
    let zip = temp_file("zip.csv", "22071;220**;*\n22098;220**;*\n55099;550**;*\n");
    rows(&ctx, &format!("SELECT * FROM load_hierarchy('p', 'zip', '{zip}')")).await;
    rows(&ctx, "SELECT * FROM generalize('p', 'p_g', '2,1')").await;
    let b = rows(&ctx, "SELECT age, age_lo, zip, disease FROM p_g ORDER BY age_lo").await;
    let s = datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap().to_string();
    assert!(s.contains("30-39") && s.contains("220**") && s.contains("60-69"), "{s}");
    assert!(!s.contains("Mary"));
    let cols =
        rows(&ctx, "SELECT * FROM p_g").await[0].schema().fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    assert_eq!(cols, vec!["age", "age_lo", "age_hi", "zip", "disease"], "identifier dropped, age as label and bounds");
    // Hierarchies are also loadable from tables.
    rows(&ctx, "CREATE TABLE zh (leaf VARCHAR, l1 VARCHAR, l2 VARCHAR) AS VALUES ('22071','2*','*'), ('22098','2*','*'), ('55099','5*','*')").await;
    rows(&ctx, "SELECT * FROM hierarchy_from_table('p', 'zip', 'zh')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM hierarchy_nodes('p', 'zip') WHERE level = 1").await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_clear_error_and_changes_nothing() {
    let ctx = new_session();
    rows(&ctx, "CREATE TABLE p (age VARCHAR, sex VARCHAR, d VARCHAR) AS VALUES ('30', 'F', 'x'), ('abc', 'M', 'y'), ('41', NULL, 'z')").await;

    // Unknown column.
    let e = err(&ctx, "SELECT * FROM declare_roles('p', 'agee=qi')").await;
    assert!(e.contains("'agee'") && e.contains("not a column"), "{e}");
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_roles").await, 0, "nothing declared after a failure");
    let e = err(&ctx, "SELECT * FROM declare_roles('p', 'age=quasi-thing')").await;
    assert!(e.contains("unknown role"), "{e}");

    // Missing file.
    rows(&ctx, "SELECT * FROM declare_roles('p', 'age=qi, sex=qi, d=sensitive')").await;
    let e = err(&ctx, "SELECT * FROM load_hierarchy('p', 'sex', '/no/such/file.csv')").await;
    assert!(e.contains("/no/such/file.csv") && e.contains("cannot read"), "{e}");

    // Malformed hierarchy line.
    let bad = temp_file("bad.csv", "F;*\nM;\n");
    let e = err(&ctx, &format!("SELECT * FROM load_hierarchy('p', 'sex', '{bad}')")).await;
    assert!(e.contains("'sex'") && e.contains("line 2"), "{e}");

    // Non-numeric value in a numeric attribute.
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10')").await;
    assert!(e.contains("'age'"), "{e}");
    let e = err(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10', 0, 99)").await;
    assert!(e.contains("'age'") && e.contains("not numbers"), "{e}");
    assert!(!e.contains("abc"), "the value itself stays private: {e}");

    // NULL in a quasi-identifier without a NULL leaf, then with one.
    let sex = temp_file("sex.csv", "F;*\nM;*\n");
    let e = err(&ctx, &format!("SELECT * FROM load_hierarchy('p', 'sex', '{sex}')")).await;
    assert!(e.contains("'sex'") && e.contains("NULL"), "{e}");
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_hierarchies").await, 0, "no hierarchy registered after failures");
    let sex = temp_file("sex2.csv", "F;*\nM;*\nNULL;*\n");
    rows(&ctx, &format!("SELECT * FROM load_hierarchy('p', 'sex', '{sex}')")).await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_hierarchies").await, 1);

    // Generalize without complete declarations, and with a bad node: no output registered.
    let e = err(&ctx, "SELECT * FROM generalize('p', 'out', '1,1')").await;
    assert!(e.contains("'age'") && e.contains("no hierarchy"), "{e}");
    assert!(!table_exists(&ctx, "out").await);
    rows(&ctx, "SELECT * FROM load_dataset('adult')").await;
    let e = err(&ctx, "SELECT * FROM generalize('adult', 'out', '9,0,0,0,0,0,0')").await;
    assert!(e.contains("age") && e.contains("height"), "{e}");
    let e = err(&ctx, "SELECT * FROM generalize('adult', 'out', '1,0')").await;
    assert!(e.contains("2 levels given for 7"), "{e}");
    let e = err(&ctx, "SELECT * FROM generalize('adult', 'bad name', '1,0,0,0,0,0,0')").await;
    assert!(e.contains("not a plain table name"), "{e}");
    assert!(!table_exists(&ctx, "out").await);

    // Unknown dataset and bad arguments.
    let e = err(&ctx, "SELECT * FROM load_dataset('nope')").await;
    assert!(e.contains("unknown dataset 'nope'") && e.contains("adult"), "{e}");
    let e = err(&ctx, "SELECT * FROM load_dataset('adult', 'many')").await;
    assert!(e.contains("'rows'") && e.contains("integer"), "{e}");
    let e = err(&ctx, "SELECT * FROM load_dataset()").await;
    assert!(e.contains("usage") || e.contains("expected"), "{e}");
}

/// One statement through the session's entry point (`sql::run`, as the CLI and Python run
/// them): planned, then its rows read.
async fn statement(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<usize> {
    let batches = anonfusion::sql::run(ctx, sql).await?.collect().await?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

/// The defect: table functions run while a statement is planned, so a statement that failed
/// after its call (a column not found, `CREATE TABLE t AS ...` over an existing `t`) still
/// registered the release and its side tables, replacing an earlier release of that name. Such
/// a statement now leaves the catalog as it was; a differentially private release keeps its
/// charge and the release it paid for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_that_fails_after_its_call_leaves_the_catalog_as_it_was() {
    let ctx = anonfusion::new_session();
    statement(&ctx, "SELECT * FROM load_dataset('nps', 7000, 1)").await.unwrap();
    statement(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('nps', 'k1', 5)").await.unwrap();
    let before = ctx.table_provider("k1").await.unwrap();
    let report = ctx.table_provider("k1_report").await.unwrap();
    let failing = [
        "SELECT nosuch FROM kanon_anonymize('nps', 'k1', 10)",
        "SELECT COUNT(*) FROM kanon_anonymize('nps', 'k2', 5) WHERE nosuch = 1",
        "CREATE TABLE k1_copy AS SELECT * FROM kanon_anonymize('nps', 'k3', 5)",
    ];
    statement(&ctx, "CREATE TABLE k1_copy AS VALUES (1)").await.unwrap();
    for sql in failing {
        assert!(statement(&ctx, sql).await.is_err(), "{sql} succeeded");
        let now = ctx.table_provider("k1").await.unwrap();
        assert!(Arc::ptr_eq(&now, &before), "{sql}: k1 was replaced");
        assert!(Arc::ptr_eq(&ctx.table_provider("k1_report").await.unwrap(), &report), "{sql}: k1_report replaced");
        for gone in ["k2", "k2_report", "k3", "k3_report"] {
            assert!(ctx.table_provider(gone).await.is_err(), "{sql}: {gone} was registered");
        }
    }
    // The same call, now succeeding, registers its outputs (the memo does not answer for the
    // undone ones), and a later failing statement does not undo an earlier statement's call.
    assert_eq!(statement(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('nps', 'k2', 5)").await.unwrap(), 1);
    assert!(ctx.table_provider("k2_report").await.is_ok());
    assert!(statement(&ctx, "SELECT nosuch FROM k2").await.is_err());
    assert!(ctx.table_provider("k2").await.is_ok());
    // A DP release's charge stands, and so does the release it paid for.
    statement(&ctx, "SELECT * FROM set_privacy_budget('nps', 2)").await.unwrap();
    let dp = "SELECT nosuch FROM dp_histogram('nps', 'd1', 1.0, '3,0,5,0,0')";
    assert!(statement(&ctx, dp).await.is_err());
    assert!(ctx.table_provider("d1").await.is_ok(), "the charged release was dropped");
}

/// The columns of a table, in order.
async fn columns(ctx: &SessionContext, table: &str) -> Vec<String> {
    ctx.table(table).await.unwrap().schema().fields().iter().map(|f| f.name().clone()).collect()
}

/// One table, one declaration, however a call spells its name. Before, declarations were keyed
/// by the string as written: `'T'` got roles of its own without `t`'s `identifier`, the release
/// from `'T'` published `id`, and `anon_roles` listed both `T` and `t`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_has_one_declaration_however_its_name_is_spelled() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE t (id VARCHAR, age BIGINT, sex VARCHAR, disease VARCHAR) AS VALUES \
        ('a', 31, 'F', 'flu'), ('b', 35, 'F', 'cold'), ('c', 42, 'M', 'flu'), ('d', 47, 'M', 'cold'), \
        ('e', 52, 'F', 'flu'), ('f', 58, 'F', 'cold')",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('t', 'id=identifier, age=qi, sex=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('t', 'age', '10,20,*', 0, 120)").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('t', 'sex', 'values=F|M')").await;
    // The same table under other spellings: merged into t's declaration, id stays an identifier.
    rows(&ctx, "SELECT * FROM declare_roles('T', 'age=qi, sex=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM declare_roles('public.t', 'age=qi')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('T', 'age', '10,20,*', 0, 120)").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('datafusion.public.t', 'sex', 'values=F|M')").await;
    rows(&ctx, "SELECT * FROM kanon_anonymize('T', 'o', 2, 'keep_insensitive=true')").await;
    let published = columns(&ctx, "o").await;
    assert!(!published.contains(&"id".to_string()), "the identifier is never published: {published:?}");
    assert_eq!(texts(&ctx, "SELECT DISTINCT table_name FROM anon_roles").await, vec!["t"]);
    assert_eq!(texts(&ctx, "SELECT role FROM anon_roles WHERE column_name = 'id'").await, vec!["identifier"]);
    // A quoted identifier keeps its case and names the same table as the unparseable bare name.
    rows(&ctx, r#"CREATE TABLE "My T" (a VARCHAR, b VARCHAR) AS VALUES ('x', 'y')"#).await;
    rows(&ctx, r#"SELECT * FROM declare_roles('"My T"', 'a=identifier, b=qi')"#).await;
    rows(&ctx, "SELECT * FROM declare_roles('My T', 'b=qi')").await;
    assert_eq!(
        texts(
            &ctx,
            "SELECT table_name || ':' || column_name || '=' || role FROM anon_roles WHERE table_name <> 't' ORDER BY 1"
        )
        .await,
        vec!["My T:a=identifier", "My T:b=quasi_identifier"]
    );
}

/// `load_dataset` registers its declarations under the table it creates, so a method reads them
/// whichever way the name is spelled. Before, `'A3'` declared `a3` and `kanon_anonymize('A3', ..)`
/// found no roles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_dataset_under_a_mixed_case_name_then_a_method_on_it() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('adult', 200, 1, 'A3')").await;
    rows(&ctx, "SELECT * FROM kanon_anonymize('A3', 'a3_k', 2)").await;
    assert!(int(&ctx, "SELECT COUNT(*) FROM a3_k").await > 0);
    assert_eq!(texts(&ctx, "SELECT DISTINCT table_name FROM anon_roles").await, vec!["a3"]);
}

/// A dropped table's declarations stay, and `load_dataset` under its name is refused instead of
/// replacing them with the dataset's (before, `patients` silently lost its `identifier`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_dataset_over_a_declared_name_is_refused() {
    let ctx = new_session();
    rows(&ctx, "CREATE TABLE patients (name VARCHAR, age BIGINT, disease VARCHAR) AS VALUES ('Mary', 37, 'flu')").await;
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'name=identifier, age=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('patients', 'age', '10,*', 0, 120)").await;
    let declared = "SELECT column_name || '=' || role FROM anon_roles ORDER BY 1";
    let hierarchies = "SELECT table_name || ':' || column_name || ':' || height FROM anon_hierarchies ORDER BY 1";
    let (roles_before, hierarchies_before) = (texts(&ctx, declared).await, texts(&ctx, hierarchies).await);
    rows(&ctx, "DROP TABLE patients").await;
    for name in ["patients", "PATIENTS"] {
        let e = err(&ctx, &format!("SELECT * FROM load_dataset('adult', 100, 1, '{name}')")).await;
        assert!(e.contains("'patients'") && e.contains("has declarations") && e.contains("another name"), "{e}");
    }
    assert!(!table_exists(&ctx, "patients").await, "nothing registered");
    assert_eq!(texts(&ctx, declared).await, roles_before);
    assert_eq!(texts(&ctx, hierarchies).await, hierarchies_before);
    // A dataset's own declarations, as loaded, are no one's: dropped and loaded again (a
    // smaller sample), it loads. Once a call changes them, they are the user's and are kept.
    rows(&ctx, "SELECT * FROM load_dataset('adult', 300, 1, 'a')").await;
    rows(&ctx, "DROP TABLE a").await;
    rows(&ctx, "SELECT * FROM load_dataset('adult', 200, 1, 'a')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM a").await, 200);
    rows(&ctx, "SELECT * FROM declare_roles('a', 'sex=identifier')").await;
    rows(&ctx, "DROP TABLE a").await;
    let e = err(&ctx, "SELECT * FROM load_dataset('adult', 200, 1, 'a')").await;
    assert!(e.contains("has declarations"), "{e}");
}
