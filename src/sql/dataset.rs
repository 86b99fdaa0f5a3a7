//! `load_dataset(name [, rows [, seed [, as_table]]])`: register a bundled dataset with its
//! hierarchies and roles in one statement. Returns one summary row.

use super::args::Args;
use super::glue::Memo;
use super::glue::check_output_name_as;
use super::glue::session_context;
use crate::datasets::{self, DatasetTable};
use crate::error::Result;
use crate::lattice::Lattice;
use crate::session::Registry;
use crate::session::outputs::replace_table;
use datafusion::arrow::array::RecordBatch;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const SIGNATURE: &str = "load_dataset(name [, rows [, seed [, as_table]]])";

#[derive(Debug)]
struct LoadDataset {
    registry: Arc<Registry>,
    memo: Memo,
}

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf("load_dataset", Arc::new(LoadDataset { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for LoadDataset {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new("load_dataset", SIGNATURE, args.exprs(), 1, 4)?;
        let name = a.str(0, "name")?;
        let rows = a.opt_u64(1, "rows")?.map(|r| r as usize);
        let seed = a.opt_u64(2, "seed")?;
        let ctx = session_context(&args)?;
        let as_table = a.opt_str(3, "as_table")?.unwrap_or_else(|| name.to_ascii_lowercase());
        let key = format!("{name}|{rows:?}|{seed:?}|{as_table}");
        if let Some(summary) = self.memo.get(&ctx, &key, &[]) {
            return Ok(summary);
        }
        check_output_name_as("load_dataset", "as_table", &as_table)?;
        let as_table = crate::session::outputs::normalize(&as_table);
        let ds = datasets::load(&name, rows, seed)?;
        // A repeat of the same call was answered by the memo; anything else under an existing
        // name would silently replace a table (an original, with its declarations).
        if crate::session::outputs::registered(&ctx, &as_table).is_some() {
            return Err(crate::error::AnonError::argument(
                "load_dataset",
                "as_table",
                format!("a table '{as_table}' exists and is kept; load under another name (the 4th argument) or DROP TABLE {as_table} first"),
            )
            .into());
        }
        let (table, summary) = install(&ctx, &self.registry, ds, &as_table)?;
        self.memo.put(key, &as_table, &table, Some(summary.clone()), &[], Vec::new());
        Ok(summary)
    }
}

/// Register a dataset's table and declarations, and build its summary row.
pub(crate) fn install(
    ctx: &SessionContext,
    registry: &Registry,
    ds: DatasetTable,
    as_table: &str,
) -> Result<(Arc<dyn TableProvider>, Arc<dyn TableProvider>)> {
    let rows = ds.num_rows();
    let schema = ds.batches.first().map(|b| b.schema()).expect("a dataset has at least one batch");
    let parts = ctx.state().config().target_partitions().max(1);
    // Each partition a contiguous run of batches, so reading partition after partition gives
    // the dataset's row order back (a scan re-chunks each partition's rows into `batch_size`
    // batches, so dealing batches in turn could not be undone; ArtUC depends on record order).
    let (len, n) = (ds.batches.len(), parts.min(ds.batches.len()).max(1));
    let mut partitions: Vec<Vec<RecordBatch>> = vec![Vec::new(); n];
    for (i, b) in ds.batches.into_iter().enumerate() {
        partitions[i * n / len.max(1)].push(b);
    }
    let table: Arc<dyn TableProvider> = Arc::new(MemTable::try_new(schema, partitions)?);
    let qis = ds.meta.quasi_identifiers().join(", ");
    let sensitive = ds.meta.columns_with(crate::meta::Role::Sensitive).join(", ");
    let set_valued = ds.meta.columns_with(crate::meta::Role::SetValued).join(", ");
    let heights: Vec<u8> = ds
        .meta
        .quasi_identifiers()
        .iter()
        .filter_map(|q| ds.meta.hierarchies.get(*q))
        .map(|h| h.height() as u8)
        .collect();
    let nodes = Lattice::new(&heights).size() as i64;
    // Declared first, so a table with declarations is refused before the catalog changes.
    registry.declare_new("load_dataset", as_table, ds.meta)?;
    replace_table(ctx, as_table, table.clone())?;

    use super::report::Value::*;
    let summary = super::report::one_row(vec![
        ("table_name", Text(as_table.to_string())),
        ("rows", Int(rows as i64)),
        ("quasi_identifiers", Text(qis)),
        ("sensitive", Text(sensitive)),
        ("set_valued", Text(set_valued)),
        ("lattice_nodes", Int(nodes)),
    ])?;
    Ok((table, summary))
}
