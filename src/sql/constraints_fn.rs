//! ArtUC's utility-constraint tables, in the shape `verify_release(..., 'constraints=T')` and
//! `artuc` read (src/methods/artuc/build.rs; docs/artuc.md, "Utility constraints"):
//! - `load_constraints(dataset, set [, as_table])`: one of the ArtUC paper's sets (Table 6,
//!   UC1..UC9 for `ehrd` and `informs`, adapted to the synthetic demographics;
//!   docs/datasets.md). The default name is `<dataset>_<set>`, e.g. `ehrd_uc1`.
//! - `utility_constraints(table, as_table, demographics, codes)`: a custodian's own set for
//!   their table, demographic bands (`'age=10, gender=*'`) crossed with code sets (`'chapter'`,
//!   `'section'`, `'category'`, `'level=N'` or `'list: 250, 401; 428'`).
//!
//! Both register the table and return the constraints.

use super::args::Args;
use super::glue::check_output_name;
use super::glue::mem_table;
use super::glue::session_context;
use crate::datasets::rt::{RtPreset, utility_constraints};
use crate::error::AnonError;
use crate::session::Registry;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "load_constraints";
pub(super) const SIGNATURE: &str = "load_constraints(dataset ('ehrd' | 'informs'), set ('UC1'..'UC9') [, as_table])";
const BUILD: &str = "utility_constraints";
pub(super) const BUILD_SIGNATURE: &str = "utility_constraints(table, as_table, 'age=10, gender=*', \
                                          'chapter'|'section'|'category'|'level=N'|'list: 250, 401; 428')";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, F, load_constraints);
    super::glue::register_fn(ctx, &registry, BUILD, build_constraints);
}

fn build_constraints(
    registry: &Registry,
    args: TableFunctionArgs,
) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new(BUILD, BUILD_SIGNATURE, args.exprs(), 4, 4)?;
    let (table, as_table) = (a.str(0, "table")?, a.str(1, "as_table")?);
    let (demographics, codes) = (a.str(2, "demographics")?, a.str(3, "codes")?);
    check_output_name(BUILD, &as_table)?;
    let meta =
        registry.get(&table).ok_or_else(|| AnonError::table(&table, "has no declared roles: declare_roles first"))?;
    let batch = crate::methods::artuc::build::build(&table, &meta, &demographics, &codes)?;
    publish(registry, &args, BUILD, &as_table, batch)
}

/// Register the constraints `batch` as `as_table` under the output-name rule of
/// src/session/outputs.rs (a repeat registers the same rows again; any other table of that name is
/// kept), and return it.
fn publish(
    registry: &Registry,
    args: &TableFunctionArgs,
    function: &'static str,
    as_table: &str,
    batch: datafusion::arrow::array::RecordBatch,
) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let names = [crate::session::outputs::normalize(as_table)];
    let table = mem_table(batch.schema(), vec![batch])?;
    let ctx = session_context(args)?;
    registry.check_outputs(&ctx, function, "", &names)?;
    registry.outputs().publish(&ctx, function, vec![(names[0].clone(), table.clone())], true)?;
    Ok(table)
}

fn load_constraints(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new(F, SIGNATURE, args.exprs(), 2, 3)?;
    let dataset = a.str(0, "dataset")?.to_ascii_lowercase();
    let set = a.str(1, "set")?;
    let preset = match dataset.as_str() {
        "ehrd" => RtPreset::Ehrd,
        "informs" => RtPreset::Informs,
        _ => return Err(AnonError::argument(F, "dataset", format!("'{dataset}' is not ehrd or informs")).into()),
    };
    let as_table = a.opt_str(2, "as_table")?.unwrap_or_else(|| format!("{dataset}_{}", set.to_ascii_lowercase()));
    check_output_name(F, &as_table)?;
    // Deterministic and cheap, so a repeat registers the same rows again.
    publish(registry, &args, F, &as_table, utility_constraints(preset, &set)?)
}
