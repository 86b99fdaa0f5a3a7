//! An output name never replaces an original, a declared table, a constraints table, a system
//! view, another function's release or another release's side table (src/releases.rs); a
//! release of the same function is replaced with all its side tables. Each case was a defect:
//! `kanon_anonymize('adult', 'ADULT', 5)` used to replace `adult` with its own release.

use anonfusion::new_session;
use datafusion::catalog::TableProvider;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

async fn run(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<()> {
    ctx.sql(sql).await?.collect().await.map(|_| ())
}

/// A session with two originals, a constraints table, a release with side tables, and the
/// system views.
async fn session() -> SessionContext {
    let ctx = new_session();
    for sql in [
        "SELECT * FROM load_dataset('adult')",
        "SELECT * FROM load_dataset('nps', 7000, 1)",
        "SELECT * FROM load_dataset('informs', 400, 1)",
        "SELECT COUNT(*) FROM load_constraints('informs', 'UC1')",
        "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 5, 0.3, 'seed=1')",
    ] {
        run(&ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    ctx
}

/// Every table of the default schema by name, with the registered provider.
async fn tables(ctx: &SessionContext) -> BTreeMap<String, Arc<dyn TableProvider>> {
    let state = ctx.state();
    let schema = state.catalog_list().catalog("datafusion").unwrap().schema("public").unwrap();
    let mut out = BTreeMap::new();
    for name in schema.table_names() {
        out.insert(name.clone(), schema.table(&name).await.unwrap().unwrap());
    }
    out
}

/// Same names, each still the very same provider (tables are never mutated in place).
fn unchanged(
    before: &BTreeMap<String, Arc<dyn TableProvider>>,
    after: &BTreeMap<String, Arc<dyn TableProvider>>,
) -> bool {
    before.len() == after.len() && before.iter().all(|(name, t)| after.get(name).is_some_and(|u| Arc::ptr_eq(t, u)))
}

async fn refused(ctx: &SessionContext, sql: &str) -> String {
    let before = tables(ctx).await;
    let err = run(ctx, sql).await.expect_err(sql).to_string();
    assert!(unchanged(&before, &tables(ctx).await), "{sql} changed the catalog");
    err
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_never_replaces_a_table_it_does_not_own() {
    let ctx = session().await;
    let cases = [
        ("SELECT * FROM kanon_anonymize('adult', 'ADULT', 5)", "source table"),
        ("SELECT * FROM kanon_anonymize('adult', 'Adult', 5)", "source table"),
        ("SELECT * FROM kanon_anonymize('adult', 'nps', 5)", "declared roles"),
        ("SELECT * FROM kanon_anonymize('adult', 'informs_uc1', 5)", "load_constraints"),
        ("SELECT * FROM kanon_anonymize('adult', 'nps_h', 5)", "a release of hceil_anonymize"),
        ("SELECT * FROM kanon_anonymize('adult', 'nps_h_catalog', 5)", "side table of hceil_anonymize"),
        ("SELECT * FROM generalize('adult', 'nps_h_report', '0,0,0,0,0,0,0')", "side table of hceil_anonymize"),
        ("SELECT * FROM kanon_anonymize('adult', 'anon_roles', 5)", "did not create"),
        ("SELECT * FROM kanon_anonymize('adult', 'ANON_PRIVACY_LEDGER', 5)", "did not create"),
        ("SELECT * FROM entropy_anonymize('nps', 'anon_hierarchies', 5)", "did not create"),
        // The release's name is free but one of its side tables is not.
        ("SELECT * FROM hceil_anonymize('adult', 'nps', 5, 0.3, 'seed=1')", "declared roles"),
    ];
    for (sql, why) in cases {
        let err = refused(&ctx, sql).await;
        assert!(err.contains(why), "{sql}: {err}");
        assert!(err.contains("choose another output name") || err.contains("must differ"), "{sql}: {err}");
    }
    // `adult` is still the original: the next call on it works.
    run(&ctx, "SELECT * FROM kanon_anonymize('adult', 'adult_k5', 5)").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_table_name_taken_by_a_user_table_is_refused() {
    let ctx = session().await;
    run(&ctx, "CREATE TABLE mine_report AS SELECT 1 AS x").await.unwrap();
    let err = refused(&ctx, "SELECT * FROM kanon_anonymize('nps', 'MINE', 5)").await;
    assert!(err.contains("'mine_report' is kept"), "{err}");
    // A user table created where a release stood is the user's, not the engine's.
    run(&ctx, "DROP TABLE nps_h").await.unwrap();
    run(&ctx, "CREATE TABLE nps_h AS SELECT 1 AS x").await.unwrap();
    let err = refused(&ctx, "SELECT * FROM hceil_anonymize('nps', 'nps_h', 5, 0.3, 'seed=2')").await;
    assert!(err.contains("did not create"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_of_the_same_function_is_replaced_with_its_side_tables() {
    let ctx = session().await;
    let old = tables(&ctx).await;
    run(&ctx, "SELECT * FROM hceil_anonymize('nps', 'NPS_H', 10, 0.3, 'seed=2')").await.unwrap();
    let new = tables(&ctx).await;
    for name in ["nps_h", "nps_h_catalog", "nps_h_report"] {
        assert!(!Arc::ptr_eq(&old[name], &new[name]), "{name} was not replaced");
    }
    let k: i64 = {
        let b = ctx.sql("SELECT k FROM nps_h_report").await.unwrap().collect().await.unwrap();
        b[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Int64Array>().unwrap().value(0)
    };
    assert_eq!(k, 10, "the report is the new call's");
    for name in ["nps", "adult", "informs", "informs_uc1", "anon_roles"] {
        assert!(Arc::ptr_eq(&old[name], &new[name]), "{name} changed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_options_are_refused() {
    let ctx = session().await;
    for sql in [
        "SELECT * FROM hceil_anonymize('nps', 'x', 5, 0.3, 'seed=1, seed=2')",
        "SELECT * FROM kanon_anonymize('nps', 'x', 5, 'metric=lm, metric=dm')",
        "SELECT * FROM entropy_anonymize('nps', 'x', 5, 'seed=1, SEED=1')",
    ] {
        let err = refused(&ctx, sql).await;
        assert!(err.contains("more than once"), "{sql}: {err}");
    }
}

/// Every case of every existing name (and its side-table names) as an output: nothing changes.
fn cased(name: &str, mask: u64) -> String {
    name.chars().enumerate().map(|(i, c)| if mask >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c }).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn property_no_existing_table_changes_whatever_the_output_name(
        pick in 0usize..64, mask in any::<u64>(), function in 0usize..4
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let ctx = session().await;
            let before = tables(&ctx).await;
            let names: Vec<&String> = before.keys().collect();
            let target = cased(names[pick % names.len()], mask);
            let sql = match function {
                0 => format!("SELECT * FROM kanon_anonymize('nps', '{target}', 5)"),
                1 => format!("SELECT * FROM hceil_anonymize('adult', '{target}', 5, 0.3, 'seed=1')"),
                2 => format!("SELECT * FROM entropy_anonymize('nps', '{target}', 5, 'seed=1')"),
                _ => format!("SELECT * FROM generalize('nps', '{target}', '1,1,1,1,1')"),
            };
            let result = run(&ctx, &sql).await;
            let after = tables(&ctx).await;
            let lower = target.to_ascii_lowercase();
            // Only an hceil call over hceil's own release may succeed, and it changes only that
            // release's tables.
            let own = function == 1 && lower == "nps_h";
            prop_assert!(own || result.is_err(), "{sql} succeeded");
            for (name, t) in &before {
                let replaced = own && name.starts_with("nps_h");
                prop_assert!(replaced || Arc::ptr_eq(t, &after[name]), "{sql} changed {name}");
            }
            Ok(())
        })?;
    }
}
