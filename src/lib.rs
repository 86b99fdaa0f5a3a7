//! # anonfusion
//!
//! A SQL-queryable anonymization engine for health data on Apache DataFusion. Every method is a
//! table function; its outputs (the release, and for counterfeit methods a catalog beside it)
//! are ordinary tables of the session, so analysts go on with plain SQL.
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! let ctx = anonfusion::new_session();
//! ctx.sql("SELECT * FROM load_dataset('adult')").await?.show().await?;
//! ctx.sql("SELECT * FROM generalize('adult', 'adult_g', '1,0,0,1,1,1,1')").await?.show().await?;
//! ctx.sql("SELECT age, COUNT(*) FROM adult_g GROUP BY age ORDER BY age").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! Embedding in an existing session:
//!
//! ```
//! use datafusion::prelude::SessionContext;
//! let ctx = SessionContext::new();
//! let registry = anonfusion::register_all(&ctx);
//! assert!(registry.get("adult").is_none()); // nothing declared yet
//! ```
//!
//! ## The embedding API
//!
//! Everything `pub` below is what a Rust service, the Python package (`python/`), the
//! binaries, benchmarks, examples and integration tests call; everything else is
//! `pub(crate)`. The surface was cut by the compiler, not by hand: every item was made
//! crate-private and made `pub` again only where one of those targets reaches it.
//! - Sessions: [`new_session`], [`session`], [`session_with_ledger`], [`register_all`];
//!   declarations: [`Registry`], [`TableMeta`], [`Role`]; errors: [`AnonError`], [`Result`],
//!   [`error::describe`]; [`progress`] reporters.
//! - [`sql`]: running statements ([`sql::run`]), registering tables ([`sql::replace_table`],
//!   [`sql::mem_table`]), Parquet output for releases ([`sql::ParquetOutput`]).
//! - [`methods`]: each paper's library call beside its table function (`kanon`, `hceil`,
//!   `ipa`, `artuc`, `rmr`, `entropy`): a config, the call, its result.
//! - [`datasets`] (bundled and synthetic tables), [`hierarchy`] (builders and loaders),
//!   [`encode`] (frequency tables the methods run on), [`lattice`].
//! - [`dp`]: the exact samplers, the exponential mechanism and the privacy ledger.
//! - Measuring and checking: [`formulas`], [`metrics`], [`release`] (catalog reader),
//!   [`eval`] (query error), [`verify`] (independent checks).
//! - `scale` (feature `ballista`): sessions on a Ballista cluster, its scheduler and executor.
//!
//! Some `pub` items serve only the integration tests, which drive internals (the
//! entropy reference oracle, lattice and frequency-table builders) from outside the crate;
//! they are not a promise of stability.

pub mod datasets;
pub mod dp;
pub mod encode;
pub mod error;
pub mod eval;
pub mod formulas;
pub mod hierarchy;
pub(crate) mod keyword;
pub mod lattice;
pub mod meta;
pub mod methods;
pub mod metrics;
pub(crate) mod numbers;
pub(crate) mod parallel;
pub mod progress;
pub mod release;
pub(crate) mod risk;
#[cfg(feature = "ballista")]
pub mod scale;
pub mod session;
pub(crate) mod sorted;
pub mod sql;
pub mod stamp;
pub mod verify;

pub use datafusion;
pub use error::{AnonError, Result};
pub use meta::{Role, TableMeta};
pub use session::Registry;

use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;

/// Register every function and system table of the engine on `ctx`. Returns the registry of
/// attribute roles and hierarchies that the functions share, for embedders who want to
/// declare them from Rust.
///
/// The registry's privacy ledger is a temporary one, removed when the session ends, so tests
/// and scratch sessions never write to a user's ledger. A session whose budgets must survive
/// restarts chooses its file: [`session_with_ledger`], or
/// `registry.set_ledger(Ledger::standard()?)` (`$ANONFUSION_LEDGER` or the user's data
/// directory, what the CLI uses) or `Ledger::open(path)`.
pub fn register_all(ctx: &SessionContext) -> Arc<Registry> {
    let registry = Registry::new();
    sql::register(ctx, registry.clone());
    registry
}

/// A ready session with every function registered and identifiers kept as written
/// (`marital_status`, not folded), information_schema on.
pub fn new_session() -> SessionContext {
    session().0
}

/// As [`new_session`], also returning the registry (to install a progress reporter, or to
/// declare tables from Rust). Its privacy ledger is temporary (see [`register_all`]). `COPY ...
/// TO 'file'` replaces the file only when the write succeeds ([`sql::copy`]).
pub fn session() -> (SessionContext, Arc<Registry>) {
    let mut config = SessionConfig::new().with_information_schema(true);
    // A Parquet file read back keeps its Arrow fields' metadata (DataFusion drops it by
    // default): a counterfeit catalog written with COPY still names its sensitive column.
    config.options_mut().execution.parquet.skip_metadata = false;
    let state = datafusion::execution::SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_query_planner(Arc::new(sql::copy::SafeCopyPlanner))
        .build();
    let ctx = SessionContext::new_with_state(state);
    let registry = register_all(&ctx);
    (ctx, registry)
}

/// As [`session`], with the privacy budgets kept in `ledger`, e.g.
/// `dp::ledger::Ledger::open("/srv/anon/ledger.tsv")` or `Ledger::standard()?`.
pub fn session_with_ledger(ledger: dp::ledger::Ledger) -> (SessionContext, Arc<Registry>) {
    let (ctx, registry) = session();
    registry.set_ledger(ledger);
    (ctx, registry)
}
