//! `load_constraints(dataset, set [, as_table])`: register one of the ArtUC paper's utility
//! constraint sets (Table 6, UC1..UC9 for `ehrd` and `informs`, adapted to the synthetic
//! demographics; docs/datasets.md) as a table in the shape `verify_release(...,
//! 'constraints=T')` and `artuc` read. The default name is `<dataset>_<set>`, e.g.
//! `ehrd_uc1`. Returns the constraints.

use super::{Args, check_output_name, mem_table, replace_table, session_context};
use crate::datasets::rt::{RtPreset, utility_constraints};
use crate::error::AnonError;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "load_constraints";
const SIGNATURE: &str = "load_constraints(dataset ('ehrd' | 'informs'), set ('UC1'..'UC9') [, as_table])";

#[derive(Debug)]
struct LoadConstraints;

pub fn register(ctx: &SessionContext) {
    ctx.register_udtf(F, Arc::new(LoadConstraints));
}

impl TableFunctionImpl for LoadConstraints {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
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
        let batch = utility_constraints(preset, &set)?;
        let table = mem_table(batch.schema(), vec![batch])?;
        // Deterministic and cheap, so repeated calls simply register the same rows again.
        replace_table(&session_context(&args)?, &as_table, table.clone())?;
        Ok(table)
    }
}
