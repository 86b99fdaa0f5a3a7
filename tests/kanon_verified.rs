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
