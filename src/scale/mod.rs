//! Scale-out on a DataFusion Ballista cluster (cargo feature `ballista`, docs/scale-out.md).
//!
//! The engine touches raw rows only in DataFusion plans (the aggregation into the frequency
//! table and the materialization of a release), so a session whose query planner is Ballista's
//! runs those passes as cluster jobs while searches stay in the client on the frequency table.
//! Table functions are planned on the client (Ballista plans UDTFs there). Their small outputs
//! (reports, the materialization's lookup tables) are in-memory tables that [`MemTableCodec`]
//! ships inside the serialized plan; releases are written as Parquet by the executors
//! ([`crate::sql::ParquetOutput`], set by [`session`]) and read back by them, so rows never
//! pass through the client. What the client builds (an h-ceiling release's cells, catalogs)
//! it writes into the same directory itself: a plan message is capped at 16 MB. Source tables as large as the data belong
//! in Parquet too ([`to_parquet`], or registered from files).

mod codec;
pub mod server;

pub use codec::MemTableCodec;

use crate::error::{AnonError, Result};
use crate::session::Registry;
use crate::sql::ParquetOutput;
use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::path::Path;
use std::sync::Arc;

/// Where the engine's plans run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cluster {
    /// A scheduler and one executor started inside this process (tests, demos).
    Standalone,
    /// A running scheduler, e.g. `df://scheduler-host:50050`.
    Remote(String),
}

impl Cluster {
    /// `standalone` or a scheduler URL (`df://host:port`), as the CLI flag takes it.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim() {
            "standalone" | "" => Ok(Cluster::Standalone),
            url if url.contains("://") => Ok(Cluster::Remote(url.to_string())),
            other => Err(AnonError::argument(
                "ballista",
                "cluster",
                format!("'{other}' is neither 'standalone' nor a scheduler URL such as df://localhost:50050"),
            )),
        }
    }
}

/// A session whose plans run on `cluster`, with every anonfusion function registered (as
/// [`crate::session()`] does locally), in-memory tables shipped by [`MemTableCodec`], and
/// releases written as Parquet under [`ParquetOutput::temp`] (see [`session_with_output`]).
pub async fn session(cluster: &Cluster) -> Result<(SessionContext, Arc<Registry>)> {
    session_with_output(cluster, ParquetOutput::temp()).await
}

/// As [`session`], with releases and catalogs written under `output.dir`. On a remote cluster
/// that directory must be storage the client, the scheduler and every executor see at the
/// same path (a shared mount), since executors write there and the scheduler lists it.
///
/// The functions are registered before the session is upgraded for Ballista, so the
/// standalone scheduler and executor, which are built from this state, know them too. A remote
/// scheduler is a separate process: it needs the same codec to decode shipped tables
/// ([`server`], binaries `anonfusion-scheduler` and `anonfusion-executor`).
pub async fn session_with_output(cluster: &Cluster, output: ParquetOutput) -> Result<(SessionContext, Arc<Registry>)> {
    let config = SessionConfig::new_with_ballista()
        .with_information_schema(true)
        .with_ballista_logical_extension_codec(Arc::new(MemTableCodec::default()));
    let config = output.apply(config);
    let state = base_state(config);
    let local = SessionContext::new_with_state(state);
    let registry = crate::register_all(&local);
    let state = local.state();
    let ctx = match cluster {
        Cluster::Standalone => SessionContext::standalone_with_state(state).await?,
        Cluster::Remote(url) => SessionContext::remote_with_state(url, state).await?,
    };
    Ok((ctx, registry))
}

/// Write table `name` as Parquet files into `dir` (a directory the executors can reach, absent
/// or empty) and register the files under the same name, so executors read them instead of
/// receiving the rows inside every plan. The write runs where the session runs its plans.
pub async fn to_parquet(ctx: &SessionContext, name: &str, dir: &Path) -> Result<()> {
    let shown = dir.display().to_string();
    if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(AnonError::argument(
            "to_parquet",
            "dir",
            format!("{shown} is not empty; files already there would be read as part of table '{name}'"),
        ));
    }
    let df = ctx.table(name).await.map_err(|_| AnonError::table(name, "not found"))?;
    let table = crate::sql::output::write_dir(df, dir).await?;
    crate::sql::replace_table(ctx, name, table)
}

/// The state every anonfusion session starts from, client or executor: DataFusion's default
/// features, so every built-in function (nested ones included) is there.
/// DataFusion's default functions plus the engine's own aggregate `anon_fingerprint` (the
/// privacy ledger's account key, computed by a plan that may run on the executors).
fn base_state(config: SessionConfig) -> datafusion::execution::SessionState {
    use datafusion::execution::FunctionRegistry;
    let mut state = SessionStateBuilder::new().with_default_features().with_config(config).build();
    state.register_udaf(crate::dp::ledger::fingerprint_udaf()).expect("anon_fingerprint registers on a new state");
    state
}

/// The functions an executor must know to run the client's plans: those of [`base_state`].
pub fn function_registry() -> Arc<ballista_core::registry::BallistaFunctionRegistry> {
    Arc::new((&base_state(SessionConfig::new())).into())
}
