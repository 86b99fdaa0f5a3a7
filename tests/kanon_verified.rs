//! Every baseline release passes the independent verifiers: kanon_anonymize on random tables,
//! hierarchies, k, models and suppression limits, then verify_release on the released table.

mod common;

use datafusion::arrow::array::AsArray;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;

use common::run;

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn baseline_releases_pass_the_verifiers(
        shapes in prop::collection::vec((1usize..6, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..40),
        k in 1u64..5,
        model in 0usize..6,
        suppression in prop::sample::select(vec![0u32, 10, 30]),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, 3);
        prop_assume!(k <= ft.total());
        let ctx = SessionContext::new();
        let registry = anonfusion::register_all(&ctx);
        common::register_random(&ctx, &registry, &ft);
        let population = format!("k_map=4, population={}", 20 * ft.total());
        let (options, checks) = match model {
            1 => ("distinct_l=2", format!("k={k}, distinct_l=2")),
            2 => ("entropy_l=1.5", format!("k={k}, entropy_l=1.5")),
            3 => ("recursive_cl=3:2", format!("k={k}, recursive_cl=3:2")),
            4 => ("t=0.4", format!("k={k}, t=0.4")),
            // A 5 % sample: λ = 0.2, and 3 records stand for 4 people (P(>= 3 | >= 1) = 0.0063).
            5 => (population.as_str(), format!("k={k}, kmap=4:{}", 20 * ft.total())),
            _ => ("", format!("k={k}")),
        };
        let sql = format!("SELECT COUNT(*) FROM kanon_anonymize('t', 'r', {k}, 'suppression={suppression}, {options}')");
        match run(&ctx, &sql) {
            Err(e) => prop_assert!(e.to_string().contains("no generalization satisfies"), "{}", e),
            Ok(_) => {
                let b = run(&ctx, &format!("SELECT check, holds, detail FROM verify_release('t', 'r', '{checks}')")).unwrap();
                for batch in &b {
                    for i in 0..batch.num_rows() {
                        let holds = batch.column(1).as_boolean().value(i);
                        prop_assert!(holds, "{}: {}", batch.column(0).as_string::<i32>().value(i), batch.column(2).as_string::<i32>().value(i));
                    }
                }
            }
        }
    }
}

/// The audit's repro: 200 ordinary patients and one outlier (Alice, 97, F, `hiv`) whom every
/// release with `suppression=1` suppresses. A suppressed record is withheld: its row is a
/// shell (every label `*`, NULL bounds, NULL sensitive value and kept columns), so an attacker
/// who finds no class for Alice's generalized tuple learns nothing of her disease. Her `hiv`
/// appears nowhere, and verify_release, reading the shell as suppressed, agrees with kanon on
/// every model it claims. The release-from-cells path (the default), the plan over the source
/// (`keep_insensitive=true`) and local suppression's plan each write the shell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suppressed_record_is_published_as_a_shell_that_carries_nothing() {
    use common::{int, rows, texts};
    let ctx = anonfusion::new_session();
    rows(
        &ctx,
        "CREATE TABLE p AS SELECT CAST(30 + v % 10 AS BIGINT) AS age, CASE WHEN v % 2 = 0 THEN 'F' ELSE 'M' END AS sex, \
         CASE v % 3 WHEN 0 THEN 'flu' WHEN 1 THEN 'asthma' ELSE 'diabetes' END AS disease, 'w1' AS ward \
         FROM generate_series(0, 199) AS t(v) \
         UNION ALL SELECT CAST(97 AS BIGINT), 'F', 'hiv', 'alice-ward'",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('p', 'age=qi, sex=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('p', 'age', '5,10,20,*', 0, 120)").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('p', 'sex', 'values=F|M')").await;
    for (name, options, checks) in [
        ("r_l", "suppression=1, distinct_l=2", "k=5, distinct_l=2"),
        ("r_t", "suppression=1, t=0.3", "k=5, t=0.3"),
        ("r_kept", "suppression=1, distinct_l=2, keep_insensitive=true", "k=5, distinct_l=2"),
        ("r_local", "local=suppression, suppression=1, distinct_l=2", "k=5, distinct_l=2"),
    ] {
        rows(&ctx, &format!("SELECT COUNT(*) FROM kanon_anonymize('p', '{name}', 5, '{options}')")).await;
        assert_eq!(int(&ctx, &format!("SELECT suppressed_records FROM {name}_report")).await, 1, "{options}");
        assert_eq!(int(&ctx, &format!("SELECT COUNT(*) FROM {name}")).await, 201, "{options}: the shell is a row");
        let shell = format!("{name} WHERE age = '*' AND sex = '*' AND age_lo IS NULL AND age_hi IS NULL");
        assert_eq!(texts(&ctx, &format!("SELECT disease FROM {shell}")).await, ["NULL"], "{options}");
        if options.contains("keep_insensitive") {
            assert_eq!(texts(&ctx, &format!("SELECT ward FROM {shell}")).await, ["NULL"], "{options}");
            assert_eq!(int(&ctx, &format!("SELECT COUNT(*) FROM {name} WHERE ward = 'alice-ward'")).await, 0);
        }
        assert_eq!(int(&ctx, &format!("SELECT COUNT(*) FROM {name} WHERE disease = 'hiv'")).await, 0, "{options}");
        // The sensitive column carries the shell's NULL: it is nullable in the release's schema.
        let df = ctx.table(name).await.unwrap();
        assert!(df.schema().field_with_unqualified_name("disease").unwrap().is_nullable(), "{options}");
        let verdicts =
            rows(&ctx, &format!("SELECT holds, detail FROM verify_release('p', '{name}', '{checks}')")).await;
        for b in &verdicts {
            for i in 0..b.num_rows() {
                let detail = b.column(1).as_string::<i32>().value(i);
                assert!(b.column(0).as_boolean().value(i), "{options}: {detail}");
                assert!(detail.contains("1 suppressed rows excluded"), "{options}: {detail}");
            }
        }
        // The release as it was published before (the shell carrying Alice's value): her row
        // is no suppressed record but a class of one, and the verifier says so.
        rows(
            &ctx,
            &format!(
                "CREATE TABLE {name}_leak AS SELECT age, age_lo, age_hi, sex, \
                 CASE WHEN age = '*' AND sex = '*' THEN 'hiv' ELSE CAST(disease AS VARCHAR) END AS disease FROM {name}"
            ),
        )
        .await;
        let verdicts =
            rows(&ctx, &format!("SELECT holds, detail FROM verify_release('p', '{name}_leak', '{checks}')")).await;
        let holds: Vec<bool> = verdicts.iter().flat_map(|b| b.column(0).as_boolean().iter().flatten()).collect();
        assert_eq!(holds, [false, false], "{options}: {verdicts:?}");
    }
}
