//! Scale-out on a DataFusion Ballista cluster (cargo feature `ballista`, docs/scale-out.md).
//!
//! The engine touches raw rows only in DataFusion plans (the aggregation into the frequency
//! table and the materialization of a release), so a session whose query planner is Ballista's
//! runs those passes as cluster jobs while searches stay in the client on the frequency table.
//! Table functions are planned on the client (Ballista plans UDTFs there) and return in-memory
//! tables; [`MemTableCodec`] ships those inside the serialized plan so the scheduler and the
//! executors can read them. Tables too large for a plan message belong in Parquet
//! ([`to_parquet`]), which executors read themselves.

mod codec;

pub use codec::MemTableCodec;

use crate::error::{AnonError, Result};
use crate::meta::Registry;
use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
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
/// [`crate::session`] does locally) and in-memory tables shipped by [`MemTableCodec`].
///
/// The functions are registered before the session is upgraded for Ballista, so the
/// standalone scheduler and executor, which are built from this state, know them too. A remote
/// scheduler is a separate process: it needs the same codec to decode shipped tables (see
/// docs/scale-out.md).
pub async fn session(cluster: &Cluster) -> Result<(SessionContext, Arc<Registry>)> {
    let config = SessionConfig::new_with_ballista()
        .with_information_schema(true)
        .with_ballista_logical_extension_codec(Arc::new(MemTableCodec::default()));
    let state = SessionStateBuilder::new().with_default_features().with_config(config).build();
    let local = SessionContext::new_with_state(state);
    let registry = crate::register_all(&local);
    let state = local.state();
    let ctx = match cluster {
        Cluster::Standalone => SessionContext::standalone_with_state(state).await?,
        Cluster::Remote(url) => SessionContext::remote_with_state(url, state).await?,
    };
    Ok((ctx, registry))
}

/// Write table `name` as Parquet files under `dir` (a directory the executors can reach) and
/// register the files under the same name, so executors read them instead of receiving the
/// rows inside every plan. The write itself runs on the cluster.
pub async fn to_parquet(ctx: &SessionContext, name: &str, dir: &str) -> Result<()> {
    let df = ctx.table(name).await.map_err(|_| AnonError::table(name, "not found"))?;
    let schema = df.schema().inner().clone();
    std::fs::create_dir_all(dir).map_err(|e| AnonError::io(dir, e))?;
    df.write_parquet(dir, Default::default(), None).await?;
    let url = ListingTableUrl::parse(dir)?;
    let options = ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config = ListingTableConfig::new(url).with_listing_options(options).with_schema(schema);
    crate::sql::replace_table(ctx, name, Arc::new(ListingTable::try_new(config)?))
}
