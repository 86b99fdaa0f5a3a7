//! `generalize(source, output, node)`: release `source` generalized at a lattice node chosen
//! by hand (`'1,0,2,...'`, one level per quasi-identifier in declaration order), as ARX lets a
//! custodian pick a node. Registers the release as `output` and returns it.

use super::{Args, Memo, block_on, replace_table, session_context};
use crate::encode::materialize_node;
use crate::error::AnonError;
use crate::lattice::parse_levels;
use crate::meta::Registry;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const SIGNATURE: &str = "generalize(source, output, 'l1,l2,...')";

#[derive(Debug)]
struct Generalize {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf("generalize", Arc::new(Generalize { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for Generalize {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new("generalize", SIGNATURE, args.exprs(), 3, 3)?;
        let (source, output) = a.source_output()?;
        let node = a.str(2, "node")?;
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument("generalize", "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        let key = format!("{:p}|{output}|{levels:?}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if let Some(t) = self.memo.get(&ctx, &key) {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let table = release(&ctx, &source, &output, &meta, &levels)?;
        replace_table(&ctx, &output, table.clone())?;
        self.memo.put(key, &output, table.clone(), table.clone());
        Ok(table)
    }
}

fn release(
    ctx: &SessionContext,
    source: &str,
    output: &str,
    meta: &crate::meta::TableMeta,
    levels: &[u8],
) -> crate::error::Result<Arc<dyn TableProvider>> {
    block_on(async {
        let df = materialize_node(ctx, source, meta, levels).await?;
        super::output::publish(ctx, output, df).await
    })
}
