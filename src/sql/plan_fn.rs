//! `declare_release_plan(table, 'options')`: declare the public plan `ipa_release` uses on a
//! table when a call names no `partition=` of its own (e.g. an adaptive partition's root,
//! steps, theta and shares, chosen from the questions the release must answer, never from the
//! data). `''` withdraws it. Returns the table's plan.

use super::args::Args;
use super::glue::mem_table;
use crate::error::{AnonError, Result};
use crate::methods::ipa::adaptive::AdaptiveConfig;
use crate::methods::ipa::call::{COARSE, FLOOR, PARTITION, ROOT, SELECTION, STEPS, THETA};
use crate::methods::options::Options;
use crate::session::Registry;
use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "declare_release_plan";
pub(super) const SIGNATURE: &str = "declare_release_plan(table, options)";

/// The options a plan may hold: `ipa_release`'s public parameters of the release, nothing per call.
pub(super) const OPTIONS: Options =
    Options { function: F, specs: &[PARTITION, ROOT, STEPS, THETA, COARSE, SELECTION, FLOOR] };

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, F, declare_plan);
}

/// Check a plan against the table's quasi-identifiers: only plan options, an adaptive
/// partition whose root has one level per quasi-identifier and whose steps name them.
pub(crate) fn check_plan(qis: &[&str], text: &str) -> Result<()> {
    OPTIONS.parse(text)?;
    // The plan is read by ipa_release's option reader, whose errors name ipa_release: the
    // function the user called is this one.
    let c = AdaptiveConfig::from_options(1.0, text).map_err(|e| match e {
        AnonError::Argument { function, argument, message } if function == "ipa_release" => {
            AnonError::Argument { function: F.into(), argument, message }
        }
        e => e,
    })?;
    if c.root.len() != qis.len() {
        return Err(AnonError::argument(
            F,
            "root",
            format!("needs one level per quasi-identifier ({}), got {}", qis.join(", "), c.root.len()),
        ));
    }
    if let Some((name, _)) = c.steps.iter().find(|(n, _)| !qis.contains(&n.as_str())) {
        return Err(AnonError::argument(
            F,
            "steps",
            format!("'{name}' is not a quasi-identifier ({})", qis.join(", ")),
        ));
    }
    Ok(())
}

fn declare_plan(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::with_options(F, SIGNATURE, Some(&OPTIONS), args.exprs(), 2, 2)?;
    let table = a.str(0, "table")?;
    let text = a.str(1, "plan")?;
    let meta = registry.require(&table)?;
    let plan = if text.trim().is_empty() {
        None
    } else {
        check_plan(&meta.quasi_identifiers(), &text)?;
        Some(text.trim().to_string())
    };
    registry.set_release_plan(&table, plan.clone());
    let schema = Arc::new(Schema::new(vec![
        Field::new("table_name", DataType::Utf8, false),
        Field::new("release_plan", DataType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![Arc::new(StringArray::from(vec![table])), Arc::new(StringArray::from(vec![plan]))];
    let batch = RecordBatch::try_new(schema.clone(), cols).map_err(|e| AnonError::table(F, e.to_string()))?;
    Ok(mem_table(schema, vec![batch])?)
}
