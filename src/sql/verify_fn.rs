//! `verify_release(original, release, checks [, catalog])`: check a release against its claims,
//! one row per check (`check`, `holds`, `detail`, `violations`). Roles and hierarchies come from
//! the original table's declarations; `checks` is an options string such as
//! `'k=5, distinct_l=3, entropy_l=2, recursive_cl=3:2, t=0.15, h=0.3, catalog, km=2:2'`.
//! The verifiers live in `crate::verify` and share no code with the methods.

use super::args::Args;
use super::glue::mem_table;
use super::glue::session_context;
use crate::error::Result;
use crate::session::Registry;
use crate::session::runtime::block_on;
use crate::verify::{Check, CheckRow, Request, parse_checks, verify};
use datafusion::arrow::array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const SIGNATURE: &str =
    "verify_release(original, release, 'k=5, distinct_l=3, t=0.2, h=0.3, catalog, km=2:2' [, catalog])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, "verify_release", verify_release);
}

fn verify_release(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("verify_release", SIGNATURE, args.exprs(), 3, 4)?;
    let (original, release) = (a.str(0, "original")?, a.str(1, "release")?);
    let mut checks = parse_checks(&a.str(2, "checks")?)?;
    let catalog = a.opt_str(3, "catalog")?;
    // A catalog passed without the key is a request to check it.
    if catalog.is_some() && !checks.contains(&Check::Catalog) {
        checks.push(Check::Catalog);
    }
    let meta = registry.require(&original)?;
    let ctx = session_context(&args)?;
    let req = Request { original: &original, release: &release, catalog: catalog.as_deref(), checks };
    let rows = block_on(verify(&ctx, &meta, &req))?;
    Ok(result_table(&rows)?)
}

fn result_table(rows: &[CheckRow]) -> Result<Arc<dyn TableProvider>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("check", DataType::Utf8, false),
        Field::new("holds", DataType::Boolean, false),
        Field::new("detail", DataType::Utf8, false),
        Field::new("violations", DataType::Int64, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.check.as_str()))),
        Arc::new(BooleanArray::from(rows.iter().map(|r| r.holds).collect::<Vec<_>>())),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.detail.as_str()))),
        Arc::new(Int64Array::from(rows.iter().map(|r| r.violations).collect::<Vec<_>>())),
    ];
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
