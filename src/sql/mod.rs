//! The SQL surface: DataFusion table functions, one small file per function, plus the shared
//! glue (argument parsing, reaching the live session, registering outputs).
//!
//! A table function runs at planning time and synchronously. It reaches the session through
//! `args.session()`, runs its async work through [`block_on`], and registers its outputs under
//! the names the user gave. DataFusion may call a function more than once for one statement
//! (`EXPLAIN`, several references), so functions with side effects memoize their result.

mod args;
mod artuc_fn;
mod constraints_fn;
pub mod copy;
mod dataset;
pub mod docs;
mod entropy_fn;
pub(crate) mod explain;
mod explore;
mod generalize;
mod glue;
mod hceil_fn;
mod hierarchies;
mod ipa_fn;
mod kanon_fn;
mod ledger_fn;
pub(crate) mod method;
mod metrics_fn;
pub mod output;
mod plan_fn;
mod query_error_fn;
mod records_fn;
pub mod report;
mod risk_fn;
mod rmr_fn;
mod roles;
pub(crate) mod settings;
mod synth_fn;
mod system;
mod truthful_fn;
mod verify_fn;

pub use crate::session::outputs::replace_table;
pub use explain::run;
pub use glue::mem_table;
pub use output::ParquetOutput;

use crate::session::Registry;
use datafusion::catalog::TableProvider;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// How one module registers its table functions.
type Registration = fn(&SessionContext, Arc<Registry>);

/// Every table function and system table, in the order a custodian meets them (the methods'
/// specs go through [`method::register`]).
const REGISTRATIONS: &[Registration] = &[
    dataset::register,
    constraints_fn::register,
    roles::register,
    plan_fn::register,
    hierarchies::register,
    explore::register,
    |ctx, r| method::register(ctx, r, generalize::Generalize),
    |ctx, r| method::register(ctx, r, kanon_fn::Kanon),
    |ctx, r| method::register(ctx, r, hceil_fn::Hceil),
    |ctx, r| method::register(ctx, r, entropy_fn::Entropy),
    truthful_fn::register,
    metrics_fn::register,
    verify_fn::register,
    risk_fn::register,
    query_error_fn::register,
    |ctx, r| method::register(ctx, r, records_fn::AsRecords),
    |ctx, r| method::register(ctx, r, artuc_fn::Artuc),
    |ctx, r| method::register(ctx, r, rmr_fn::Rmr),
    |ctx, r| method::register(ctx, r, ipa_fn::Ipa),
    |ctx, r| method::register(ctx, r, ipa_fn::Histogram),
    |ctx, r| method::register(ctx, r, synth_fn::Synthesize),
    ledger_fn::register,
    system::register,
];

/// Register every table function and system table on `ctx`, each function's errors passed
/// through the one scrubber ([`Scrubbed`]).
pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    settings::register(ctx);
    for register in REGISTRATIONS {
        register(ctx, registry.clone());
    }
    let functions: Vec<(String, Arc<dyn TableFunctionImpl>)> =
        ctx.state().table_functions().iter().map(|(name, f)| (name.clone(), f.function().clone())).collect();
    for (name, function) in functions {
        ctx.register_udtf(&name, Arc::new(Scrubbed(function)));
    }
}

/// A table function whose errors lose any value of a record they quote
/// ([`crate::error::scrub`]): table functions read whole tables while they are planned, so a
/// malformed CSV cell or a failed cast surfaces here with DataFusion's message, which quotes
/// the cell and, for CSV, its whole row. Wrapping at registration covers every function,
/// DataFusion's own included, whatever path its error takes.
#[derive(Debug)]
struct Scrubbed(Arc<dyn TableFunctionImpl>);

impl TableFunctionImpl for Scrubbed {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        self.0.call_with_args(args).map_err(crate::error::scrubbed)
    }
}
