//! `COPY (...) TO 'file'` that fails leaves the disk as it was: the session's query planner
//! ([`SafeCopyPlanner`], installed by [`crate::session`]) writes a local single-file target
//! under a temporary name in the same directory and renames it over the target only when the
//! write succeeded. A failed or cancelled write removes the temporary file; an existing file
//! at the target is replaced only on success. (A process killed mid-write can leave the
//! hidden `.<name>.<pid>-<n>.partial`, never a truncated target.)
//!
//! CSV has no list type: a list column (code sets, a catalog's `class_ids`) is written as a
//! `;`-delimited string, the convention of the CLI's `--format csv`, instead of failing the
//! write. Parquet and JSON keep lists.
//!
//! A local single-file target holds the rows in the order the table holds them, every time. By
//! default DataFusion reads a one-partition table as several (its batches, or a file's byte
//! ranges, cut between the cores) or deals its batches round-robin to the cores ahead of a
//! projection (the list columns' conversion, a computed column), then the writer takes them as
//! they finish: a seeded release's CSV differed from run to run (ArtUC's, whose codes are a
//! list, in one run of three; an h-ceiling catalog's in every run). Such a COPY is planned
//! without those two ([`in_table_order`]); one writer writes the file anyway.
//!
//! Directory targets (`TO 'dir/'`, `PARTITIONED BY`) and remote object stores are written as
//! DataFusion writes them.

use async_trait::async_trait;
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::Session;
use datafusion::common::Column;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::dml::CopyTo;
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, lit};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream, common,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The CSV list delimiter, shared with the CLI's CSV output.
pub const CSV_LIST_DELIMITER: &str = ";";

/// DataFusion's planner, with `COPY` made atomic and CSV-safe.
#[derive(Debug, Default)]
pub(crate) struct SafeCopyPlanner;

#[async_trait]
impl QueryPlanner for SafeCopyPlanner {
    async fn create_physical_plan(&self, plan: &LogicalPlan, session: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        let planner = DefaultPhysicalPlanner::default();
        let LogicalPlan::Copy(copy) = plan else {
            return planner.create_physical_plan(plan, session).await;
        };
        let mut copy = copy.clone();
        if copy.file_type.get_ext().eq_ignore_ascii_case("csv") {
            copy.input = Arc::new(lists_as_text(&copy.input)?);
        }
        if let Some(path) = local_path(&copy) {
            check_writable(path)?;
        }
        let Some(target) = local_single_file(&copy) else {
            return planner.create_physical_plan(&LogicalPlan::Copy(copy), session).await;
        };
        let temp = temp_path(&target)?;
        copy.output_url = temp.to_str().ok_or_else(|| not_utf8(&temp))?.to_string();
        // The temporary name has no extension: say single file explicitly.
        copy.options.insert("single_file_output".into(), "true".into());
        let plan = LogicalPlan::Copy(copy);
        let inner = match in_table_order(session) {
            Some(ordered) => planner.create_physical_plan(&plan, &ordered).await?,
            None => planner.create_physical_plan(&plan, session).await?,
        };
        Ok(Arc::new(ReplaceOnSuccess { inner, temp, target }))
    }
}

/// `session` planning without splitting a partition's rows between cores (a scan cut into
/// ranges, a round-robin exchange), so that a single writer receives every partition's rows in
/// order. Exchanges by hash (an aggregate's, a join's) and sorts are planned as before. `None`
/// for a session that is not DataFusion's own state (none of ours), planned as it is.
fn in_table_order(session: &dyn Session) -> Option<SessionState> {
    let state = session.as_any().downcast_ref::<SessionState>()?;
    // A clone shares the catalog; only this plan's copy of the options changes. (Rebuilding the
    // state from a cloned config instead would register a fresh default catalog over the
    // session's tables.)
    let mut state = state.clone();
    let optimizer = &mut state.config_mut().options_mut().optimizer;
    optimizer.repartition_file_scans = false;
    optimizer.enable_round_robin_repartition = false;
    Some(state)
}

fn not_utf8(path: &Path) -> DataFusionError {
    DataFusionError::Plan(format!("COPY target {} is not valid UTF-8", path.display()))
}

/// `input` with every list column as a `;`-delimited string under its own name.
fn lists_as_text(input: &LogicalPlan) -> Result<LogicalPlan> {
    let schema = input.schema();
    let is_list = |t: &DataType| matches!(t, DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..));
    if !schema.fields().iter().any(|f| is_list(f.data_type())) {
        return Ok(input.clone());
    }
    let exprs: Vec<Expr> = schema
        .iter()
        .map(|(qualifier, field)| {
            let column = Expr::Column(Column::new(qualifier.cloned(), field.name()));
            if is_list(field.data_type()) {
                datafusion::functions_nested::expr_fn::array_to_string(column, lit(CSV_LIST_DELIMITER))
                    .alias(field.name())
            } else {
                column
            }
        })
        .collect();
    LogicalPlanBuilder::from(input.clone()).project(exprs)?.build()
}

/// The local path a COPY writes (a file or a directory), as given; `None` for an object store.
fn local_path(copy: &CopyTo) -> Option<&str> {
    let url = copy.output_url.as_str();
    match url.strip_prefix("file://") {
        Some(p) => Some(p),
        None if url.contains("://") => None,
        None => Some(url),
    }
}

/// The absolute path of a COPY that writes one local file (DataFusion's rule: a path with an
/// extension, not ending in `/`, unless `single_file_output` says otherwise).
fn local_single_file(copy: &CopyTo) -> Option<PathBuf> {
    if !copy.partition_by.is_empty() {
        return None;
    }
    let path = local_path(copy)?;
    if path.ends_with('/') {
        return None;
    }
    let single = match copy.options.get("single_file_output").map(|v| v.trim()) {
        Some("true") => true,
        Some(_) => false,
        None => Path::new(path).extension().is_some(),
    };
    if !single {
        return None;
    }
    std::path::absolute(path).ok()
}

/// Refuse, before anything is written, a target this process cannot write, with the path and
/// the operating system's reason. Without it DataFusion's object store fails late with
/// "Internal error: ... finalizing writes" (no path, no cause) and, where creating a file
/// reports "not found" in a directory that exists (`/proc/self`), retries forever.
///
/// The test is the one that cannot lie, whoever runs it (root passes permission bits): create
/// a probe file in the directory that will hold the output (the nearest one that exists,
/// since DataFusion creates missing ones) and remove it. An existing target must be a file
/// (a directory target, `dir/`, a directory) that `access(2)` says is writable.
fn check_writable(given: &str) -> Result<()> {
    let fail = |why: String| DataFusionError::Plan(format!("COPY cannot write to '{given}': {why}"));
    let path = std::path::absolute(given).map_err(|e| fail(e.to_string()))?;
    let dir_target = given.ends_with('/');
    match std::fs::metadata(&path) {
        Ok(m) if dir_target && !m.is_dir() => return Err(fail("it is a file, not a directory".into())),
        Ok(m) if !dir_target && m.is_dir() => {
            return Err(fail("it is a directory (end the path with '/' to write files into it)".into()));
        }
        Ok(_) => {
            nix::unistd::access(&path, nix::unistd::AccessFlags::W_OK).map_err(|e| fail(e.desc().to_string()))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail(e.to_string())),
    }
    // The directory the output goes in (the target itself for a directory that exists).
    let mut dir = if dir_target { path.clone() } else { path.parent().map(Path::to_path_buf).unwrap_or_default() };
    loop {
        match std::fs::metadata(&dir) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => return Err(fail(format!("'{}' is a file, not a directory", dir.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match dir.parent() {
                Some(up) => dir = up.to_path_buf(),
                None => return Err(fail(e.to_string())),
            },
            Err(e) => return Err(fail(format!("'{}': {e}", dir.display()))),
        }
    }
    let n = TEMPS.fetch_add(1, Ordering::Relaxed);
    let probe = dir.join(format!(".anonfusion-probe.{}-{n}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(fail(format!("cannot create a file in '{}': {e}", dir.display()))),
    }
}

/// Distinguishes temporary files of one process.
static TEMPS: AtomicU64 = AtomicU64::new(0);

/// `<dir>/.<name>.<pid>-<n>.partial`: hidden, in the target's directory so the final rename
/// stays on one file system (and is atomic).
fn temp_path(target: &Path) -> Result<PathBuf> {
    let name = target.file_name().and_then(|n| n.to_str()).ok_or_else(|| not_utf8(target))?;
    let n = TEMPS.fetch_add(1, Ordering::Relaxed);
    Ok(target.with_file_name(format!(".{name}.{}-{n}.partial", std::process::id())))
}

/// Runs the write into `temp`, then renames it to `target`; on error or cancellation (the
/// stream dropped) the temporary file is removed.
#[derive(Debug)]
struct ReplaceOnSuccess {
    inner: Arc<dyn ExecutionPlan>,
    temp: PathBuf,
    target: PathBuf,
}

/// Removes the file when dropped, unless disarmed: runs on error and when the task is aborted.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            // Best effort: the write's own error is the one to report.
            let _ = std::fs::remove_file(p);
        }
    }
}

impl DisplayAs for ReplaceOnSuccess {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "ReplaceOnSuccess: {} (written as {})", self.target.display(), self.temp.display())
    }
}

impl ExecutionPlan for ReplaceOnSuccess {
    fn name(&self) -> &str {
        "ReplaceOnSuccess"
    }

    /// No expressions of its own.
    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn with_new_children(self: Arc<Self>, children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        let [inner] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("ReplaceOnSuccess takes one child".into()))?;
        Ok(Arc::new(ReplaceOnSuccess { inner, temp: self.temp.clone(), target: self.target.clone() }))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let written = self.inner.execute(partition, context)?;
        let (temp, target) = (self.temp.clone(), self.target.clone());
        let mut builder = RecordBatchReceiverStream::builder(self.schema(), 1);
        let tx = builder.tx();
        builder.spawn(async move {
            let mut guard = RemoveOnDrop(Some(temp.clone()));
            let counts = common::collect(written).await?;
            std::fs::rename(&temp, &target).map_err(|e| {
                DataFusionError::Execution(format!("COPY: cannot move the written file to {}: {e}", target.display()))
            })?;
            guard.0 = None;
            for batch in counts {
                if tx.send(Ok(batch)).await.is_err() {
                    break;
                }
            }
            Ok(())
        });
        Ok(builder.build())
    }
}
