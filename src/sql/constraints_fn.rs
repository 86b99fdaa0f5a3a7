//! `load_constraints(dataset, set [, as_table])`: register one of the ArtUC paper's utility
//! constraint sets (Table 6, UC1..UC9 for `ehrd` and `informs`, adapted to the synthetic
//! demographics; docs/datasets.md) as a table in the shape `verify_release(...,
//! 'constraints=T')` and `artuc` read. The default name is `<dataset>_<set>`, e.g.
//! `ehrd_uc1`. Returns the constraints.

use super::{Args, check_output_name, mem_table, session_context};
use crate::datasets::rt::{RtPreset, utility_constraints};
use crate::error::AnonError;
use crate::meta::Registry;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "load_constraints";
pub(super) const SIGNATURE: &str = "load_constraints(dataset ('ehrd' | 'informs'), set ('UC1'..'UC9') [, as_table])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::register_fn(ctx, &registry, F, load_constraints);
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
    let names = [crate::releases::normalize(&as_table)];
    let batch = utility_constraints(preset, &set)?;
    let table = mem_table(batch.schema(), vec![batch])?;
    // Deterministic and cheap, so a repeat registers the same rows again; any other table
    // under that name is kept (the output-name rule of src/releases.rs).
    let ctx = session_context(&args)?;
    let releases = registry.releases();
    releases.check(&ctx, F, "", &names, registry)?;
    releases.publish(&ctx, F, vec![(names[0].clone(), table.clone())])?;
    Ok(table)
}
