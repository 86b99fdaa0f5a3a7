//! What a method reads: a declared source's rows and its declarations, apart from the session.
//!
//! The rows are a table provider together with the session state its plans run in, so a
//! method's raw-data passes (the aggregation into a frequency table, a release planned row by
//! row) are DataFusion plans that a distributed session runs on its cluster, while the method
//! never looks a table up by name or registers anything. The method adapter
//! (`sql::method`) reads a `Source` from the session; a test builds one from batches.

use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::datasource::{MemTable, provider_as_source};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::{LogicalPlanBuilder, UNNAMED_TABLE};
use datafusion::prelude::{DataFrame, SessionContext};
use std::sync::Arc;

/// A declared source as a method reads it.
#[derive(Clone)]
pub struct Source {
    /// The declared table's name: only what errors call it, never looked up.
    name: String,
    provider: Arc<dyn TableProvider>,
    /// Where plans over the source run (a Ballista session's state plans on its cluster).
    state: Arc<SessionState>,
    meta: TableMeta,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("name", &self.name).field("meta", &self.meta).finish_non_exhaustive()
    }
}

impl Source {
    /// `provider`'s rows declared by `meta`, planned in `state`.
    pub fn new(name: &str, provider: Arc<dyn TableProvider>, state: SessionState, meta: TableMeta) -> Self {
        Source { name: name.to_string(), provider, state: Arc::new(state), meta }
    }

    /// Rows held in memory, planned in a local session state of their own (no session).
    pub fn from_batches(name: &str, schema: SchemaRef, batches: Vec<RecordBatch>, meta: TableMeta) -> Result<Self> {
        let provider = Arc::new(MemTable::try_new(schema, vec![batches])?);
        Ok(Self::new(name, provider, SessionStateBuilder::new().with_default_features().build(), meta))
    }

    /// The table `name` of `ctx`, declared by `meta`.
    pub async fn of(ctx: &SessionContext, name: &str, meta: &TableMeta) -> Result<Self> {
        let provider = ctx.table_provider(name).await.map_err(|_| AnonError::table(name, "not found"))?;
        Ok(Self::new(name, provider, ctx.state(), meta.clone()))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }

    pub(crate) fn provider(&self) -> &Arc<dyn TableProvider> {
        &self.provider
    }

    /// Whether the rows are held in this process (an in-memory table): a method may then
    /// build from what it counted here, where any other source (files, a cluster's tables)
    /// keeps its passes in plans that run where the rows are.
    pub(crate) fn holds_rows(&self) -> bool {
        self.provider.downcast_ref::<MemTable>().is_some()
    }

    /// Whether the source's plans run on a cluster: a Ballista session, whose configuration
    /// carries Ballista's options (prefix `ballista`), told apart without the `ballista`
    /// feature.
    pub(crate) fn distributed(&self) -> bool {
        self.state.config_options().extensions.iter().any(|(prefix, _)| prefix == "ballista")
    }

    /// The session state's id (caches keep their entries apart per session).
    pub(crate) fn session_id(&self) -> String {
        self.state.session_id().to_string()
    }

    pub fn schema(&self) -> SchemaRef {
        self.provider.schema()
    }

    /// A plan scanning the source, as `SessionContext::table` plans it.
    pub(crate) fn frame(&self) -> Result<DataFrame> {
        self.scan(self.name.as_str(), self.provider.clone())
    }

    /// The source's rows in their stored order, partition by partition: `collect()` would
    /// interleave partitions in whatever order they finish, and ArtUC's and RmR's results depend
    /// on the order of their records, so the same seed would not always give the same release.
    /// Only the partitions can be trusted to keep their order: a scan hands a partition's rows
    /// out in batches of the session's `batch_size`, not in the batches they were stored in (so
    /// `load_dataset` gives each partition a contiguous run of the dataset's batches).
    pub(crate) async fn batches_in_order(&self) -> Result<Vec<RecordBatch>> {
        Ok(self.frame()?.collect_partitioned().await?.into_iter().flatten().collect())
    }

    /// A plan over `batch` in the source's session state (a small join side).
    pub(crate) fn read_batch(&self, batch: RecordBatch) -> Result<DataFrame> {
        self.scan(UNNAMED_TABLE, Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]])?))
    }

    fn scan(&self, name: &str, provider: Arc<dyn TableProvider>) -> Result<DataFrame> {
        let plan = LogicalPlanBuilder::scan(name, provider_as_source(provider), None)?.build()?;
        Ok(DataFrame::new(self.state.as_ref().clone(), plan))
    }
}
