//! `truthful_view(release, catalog [, sensitive_column])`: the release without counterfeit
//! records (the h-ceiling paper's Table 9). The sensitive column defaults to the one the
//! catalog was published for.

use super::args::Args;
use super::glue::mem_table;
use super::glue::session_context;
use crate::error::{AnonError, Result};
use crate::methods::hceil::release::SENSITIVE_COLUMN_KEY;
use crate::methods::hceil::truthful::truthful;
use crate::release::decode_catalog;
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "truthful_view";
pub(super) const SIGNATURE: &str = "truthful_view(release, catalog [, sensitive_column])";

#[derive(Debug)]
struct Truthful;

pub(crate) fn register(ctx: &SessionContext, _registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(Truthful));
}

impl TableFunctionImpl for Truthful {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 2, 3)?;
        let (release, catalog) = (a.str(0, "release")?, a.str(1, "catalog")?);
        let sensitive = a.opt_str(2, "sensitive_column")?;
        let ctx = session_context(&args)?;
        Ok(block_on(view(&ctx, &release, &catalog, sensitive))?)
    }
}

async fn view(
    ctx: &SessionContext,
    release: &str,
    catalog: &str,
    sensitive: Option<String>,
) -> Result<Arc<dyn TableProvider>> {
    let cat = ctx.table(catalog).await.map_err(|_| AnonError::table(catalog, "not found (the catalog argument)"))?;
    let sensitive = match sensitive {
        Some(s) => s,
        None => cat
            .schema()
            .field_with_unqualified_name("sensitive_value")
            .ok()
            .and_then(|f| f.metadata().get(SENSITIVE_COLUMN_KEY).cloned())
            .ok_or_else(|| {
                AnonError::argument(
                    F,
                    "sensitive_column",
                    format!("'{catalog}' does not say its sensitive column; pass it"),
                )
            })?,
    };
    let rows = decode_catalog(catalog, &cat.collect().await?)?;
    let rel = ctx.table(release).await.map_err(|_| AnonError::table(release, "not found (the release argument)"))?;
    let schema = rel.schema().inner().clone();
    let batches = rel.collect().await?;
    let out = truthful(schema, &batches, &rows, &sensitive, (release, catalog))?;
    mem_table(out.schema(), vec![out])
}
