//! ArtUC at the datasets' sizes: the paper's utility constraint sets (Table 6, through
//! `load_constraints`) are valid on the full synthetic EHRD and Informs tables.

#[path = "artuc/support.rs"]
mod support;

use anonfusion::methods::artuc::{ConstraintSet, RtTable, constraints_from_batches};
use support::collect;

/// Every UC1..UC9 of both datasets is accepted (no conflict, every record and code covered),
/// and every group has at least k = 10 records (the paper's default k), so Step 2 withholds
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_6_presets_cover_the_full_datasets() {
    let (ctx, registry) = anonfusion::session();
    for dataset in ["ehrd", "informs"] {
        collect(&ctx, &format!("SELECT * FROM load_dataset('{dataset}')")).await;
        let meta = registry.require(dataset).unwrap();
        let table =
            RtTable::from_batches(dataset, &meta, &collect(&ctx, &format!("SELECT * FROM {dataset}")).await).unwrap();
        for set in 1..=9 {
            let rows = collect(&ctx, &format!("SELECT * FROM load_constraints('{dataset}', 'UC{set}')")).await;
            let again = collect(&ctx, &format!("SELECT * FROM {dataset}_uc{set}")).await;
            assert_eq!(rows, again, "{dataset} UC{set}: the registered table is the returned one");
            let u = constraints_from_batches("u", &table, &rows).unwrap();
            let cs = ConstraintSet::new(&u, &table).unwrap_or_else(|e| panic!("{dataset} UC{set}: {e}"));
            let groups = cs.group(&table).unwrap();
            let smallest = groups.iter().map(|g| g.records.len()).min().unwrap();
            assert!(smallest >= 10, "{dataset} UC{set}: a group of {smallest} records");
            assert_eq!(groups.iter().map(|g| g.records.len()).sum::<usize>(), table.len());
        }
    }
}
