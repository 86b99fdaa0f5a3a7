//! `COPY (...) TO 'file'` that fails leaves the disk as it was: the session's query planner
//! ([`SafeCopyPlanner`], installed by [`crate::session`]) writes a local single-file target
//! under a temporary name in the same directory and renames it over the target only when the
//! write succeeded. A failed or cancelled write removes the temporary file; an existing file
//! at the target is replaced only on success. (A process killed mid-write can leave the
//! hidden `.<name>.<pid>-<n>.partial`, never a truncated target.)
//!
//! A local directory target (`TO 'dir/'`, a path without an extension, `PARTITIONED BY`) is
//! written the same way: its files (and partition subdirectories) go into a fresh hidden
//! directory `.<name>.<pid>-<n>.partial`, created in the target when it exists, else in its
//! nearest existing ancestor (so the moves stay on one file system), and are moved into the
//! target only when the whole write succeeded. A file of the same name already in the target
//! fails the COPY before anything is moved; a failed or cancelled write removes the hidden
//! directory. Before, DataFusion wrote the target directly and a failure midway left the
//! files written so far.
//!
//! No COPY writes over a registered table's data: a local target that is a listing table's
//! file, lies in a listing table's directory, or is a directory holding one is refused before
//! anything is written, naming the table ([`check_not_a_table`]). Before, `COPY release TO
//! 'patients.csv'` replaced the original behind `CREATE EXTERNAL TABLE patients ...`.
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
//! Remote object stores are written as DataFusion writes them.

use async_trait::async_trait;
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::Session;
use datafusion::common::Column;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::listing::ListingTable;
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
        let Some(given) = local_path(&copy).map(str::to_string) else {
            return planner.create_physical_plan(&LogicalPlan::Copy(copy), session).await;
        };
        check_writable(&given)?;
        check_not_a_table(session, &given).await?;
        let (temp, target, output) = match local_single_file(&copy) {
            Some(target) => {
                let temp = temp_path(&target)?;
                copy.output_url = temp.to_str().ok_or_else(|| not_utf8(&temp))?.to_string();
                // The temporary name has no extension: say single file explicitly.
                copy.options.insert("single_file_output".into(), "true".into());
                (temp, target, Output::File)
            }
            None => {
                let target = std::path::absolute(&given)
                    .map_err(|e| DataFusionError::Plan(format!("COPY cannot write to '{given}': {e}")))?;
                let temp = temp_dir_path(&target)?;
                copy.output_url = format!("{}/", temp.to_str().ok_or_else(|| not_utf8(&temp))?);
                // A directory whatever the target's name looked like (`dir` without a slash, or
                // a `dir/` said to be one file). A value that is neither is left to DataFusion,
                // which names it.
                if copy.options.get("single_file_output").is_none_or(|v| v.trim() == "true") {
                    copy.options.insert("single_file_output".into(), "false".into());
                }
                (temp, target, Output::Dir)
            }
        };
        let plan = LogicalPlan::Copy(copy);
        let inner = match (output, in_table_order(session)) {
            (Output::File, Some(ordered)) => planner.create_physical_plan(&plan, &ordered).await?,
            _ => planner.create_physical_plan(&plan, session).await?,
        };
        Ok(Arc::new(ReplaceOnSuccess { inner, temp, target, output }))
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

/// Refuse a local target that would write over a registered table's data: the file of a
/// listing table (a `CREATE EXTERNAL TABLE`'s, a release written as Parquet), a path inside a
/// listing table's directory (the new files would become part of that table), or a directory
/// holding a listing table's files. Paths are compared resolved ([`resolved`]: symlinks, `..`),
/// so another spelling of the same place is caught. Tables that are not listing tables (in
/// memory, views, system views) have no files and need no check; remote locations are not
/// compared.
async fn check_not_a_table(session: &dyn Session, given: &str) -> Result<()> {
    // None of ours plans with another kind of session; such a one is left unchecked.
    let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
        return Ok(());
    };
    let fail = |why: String| DataFusionError::Plan(format!("COPY cannot write to '{given}': {why}"));
    let target = resolved(&std::path::absolute(given).map_err(|e| fail(e.to_string()))?);
    let defaults = &state.config().options().catalog;
    let catalogs = state.catalog_list();
    for catalog_name in catalogs.catalog_names() {
        let Some(catalog) = catalogs.catalog(&catalog_name) else { continue };
        for schema_name in catalog.schema_names() {
            let Some(schema) = catalog.schema(&schema_name) else { continue };
            for table_name in schema.table_names() {
                let Some(table) = schema.table(&table_name).await? else { continue };
                let Some(listing) = table.downcast_ref::<ListingTable>() else { continue };
                for url in listing.table_paths() {
                    if url.scheme() != "file" {
                        continue;
                    }
                    // A glob's URL is the directory before the glob: the whole directory counts.
                    let Ok(location) = url.get_url().to_file_path() else { continue };
                    let location = resolved(&location);
                    let how = if target == location {
                        "it is the location of"
                    } else if target.starts_with(&location) {
                        "it lies in the directory of"
                    } else if location.starts_with(&target) {
                        "it is a directory holding the files of"
                    } else {
                        continue;
                    };
                    let name = if catalog_name == defaults.default_catalog && schema_name == defaults.default_schema {
                        table_name.clone()
                    } else {
                        format!("{catalog_name}.{schema_name}.{table_name}")
                    };
                    return Err(fail(format!(
                        "{how} table '{name}' ({}); a COPY never writes over a registered table's data",
                        location.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `path` (absolute) with its longest existing prefix canonicalized (symlinks and `..`
/// resolved) and the rest, which does not exist yet, appended as written.
fn resolved(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = existing.canonicalize() {
            return missing.iter().rev().fold(real, |p: PathBuf, name| p.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(up), Some(name)) => {
                missing.push(name);
                existing = up;
            }
            // `..` at the end of a missing path, or the root: no better spelling than the given.
            _ => return path.to_path_buf(),
        }
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

/// `<dir>/.<name>.<pid>-<n>.partial`, where `<dir>` is the directory target itself when it
/// exists, else its nearest existing ancestor: a directory that exists is on the file system
/// the target's files will be on, so moving them out of it is a rename (a sibling of an
/// existing target could be across a mount point).
fn temp_dir_path(target: &Path) -> Result<PathBuf> {
    let name = match target.file_name() {
        Some(n) => n.to_str().ok_or_else(|| not_utf8(target))?,
        None => "copy",
    };
    let mut dir = target;
    while !dir.is_dir() {
        // check_writable found an existing directory above the target.
        dir = dir
            .parent()
            .ok_or_else(|| DataFusionError::Plan(format!("COPY: no directory above {}", target.display())))?;
    }
    let n = TEMPS.fetch_add(1, Ordering::Relaxed);
    Ok(dir.join(format!(".{name}.{}-{n}.partial", std::process::id())))
}

/// What a COPY writes locally: one file, or a directory of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    File,
    Dir,
}

/// Runs the write into `temp`, then moves it to `target` (renames the file; moves a
/// directory's files, [`move_into`]); on error or cancellation (the stream dropped) `temp` is
/// removed.
#[derive(Debug)]
struct ReplaceOnSuccess {
    inner: Arc<dyn ExecutionPlan>,
    temp: PathBuf,
    target: PathBuf,
    output: Output,
}

/// Removes the file or directory when dropped, unless disarmed: runs on error and when the
/// task is aborted.
struct RemoveOnDrop {
    path: Option<PathBuf>,
    output: Output,
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            // Best effort: the write's own error is the one to report.
            let _ = match self.output {
                Output::File => std::fs::remove_file(p),
                Output::Dir => std::fs::remove_dir_all(p),
            };
        }
    }
}

/// Moves every file under `temp` to the same path under `target`, creating `target` and the
/// subdirectories (partitions) it lacks. Nothing existing is replaced: if any destination
/// exists, nothing is moved. If a move fails midway, the files moved and the directories
/// created are removed again, so the target is as it was. `temp` itself is left to the caller.
fn move_into(temp: &Path, target: &Path) -> Result<()> {
    let fail = |what: &Path, e: std::io::Error| {
        DataFusionError::Execution(format!("COPY: cannot move the written files to {}: {e}", what.display()))
    };
    let mut files = Vec::new();
    if temp.exists() {
        files_under(temp, Path::new(""), &mut files).map_err(|e| fail(target, e))?;
    }
    files.sort();
    if let Some(taken) = files.iter().map(|f| target.join(f)).find(|t| t.symlink_metadata().is_ok()) {
        return Err(DataFusionError::Execution(format!(
            "COPY: {} already exists; no file was written to {}",
            taken.display(),
            target.display()
        )));
    }
    let mut created = Vec::new();
    let mut moved = Vec::new();
    let result = (|| {
        // An empty result writes no file; the target directory exists all the same.
        create_dirs(target, &mut created)?;
        for file in &files {
            let to = target.join(file);
            if let Some(up) = to.parent() {
                create_dirs(up, &mut created)?;
            }
            std::fs::rename(temp.join(file), &to).map_err(|e| fail(&to, e))?;
            moved.push(to);
        }
        Ok(())
    })();
    if result.is_err() {
        // Best effort: the error to report is the move's.
        for file in moved.iter().rev() {
            let _ = std::fs::remove_file(file);
        }
        for dir in created.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
    result
}

/// The files under `dir/rel`, as paths relative to `dir`.
fn files_under(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir.join(rel))? {
        let entry = entry?;
        let path = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            files_under(dir, &path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// Creates `dir` and its missing ancestors, recording each one created (outermost first) so a
/// failed move can remove them.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> Result<()> {
    let mut missing = Vec::new();
    let mut up = Some(dir);
    while let Some(d) = up {
        if d.is_dir() {
            break;
        }
        missing.push(d);
        up = d.parent();
    }
    for d in missing.into_iter().rev() {
        match std::fs::create_dir(d) {
            Ok(()) => created.push(d.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => {}
            Err(e) => {
                return Err(DataFusionError::Execution(format!("COPY: cannot create directory {}: {e}", d.display())));
            }
        }
    }
    Ok(())
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
        Ok(Arc::new(ReplaceOnSuccess {
            inner,
            temp: self.temp.clone(),
            target: self.target.clone(),
            output: self.output,
        }))
    }

    fn execute(&self, partition: usize, context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let (temp, target, output) = (self.temp.clone(), self.target.clone(), self.output);
        if output == Output::Dir {
            // Created here, not left to the writer, so that it is fresh: a leftover of the same
            // name (a killed process's) fails instead of mixing its files into this COPY's.
            std::fs::create_dir(&temp).map_err(|e| {
                DataFusionError::Execution(format!("COPY: cannot create the directory {}: {e}", temp.display()))
            })?;
        }
        let mut guard = RemoveOnDrop { path: Some(temp.clone()), output };
        let written = self.inner.execute(partition, context)?;
        let mut builder = RecordBatchReceiverStream::builder(self.schema(), 1);
        let tx = builder.tx();
        builder.spawn(async move {
            let counts = common::collect(written).await?;
            match output {
                Output::File => {
                    std::fs::rename(&temp, &target).map_err(|e| {
                        DataFusionError::Execution(format!(
                            "COPY: cannot move the written file to {}: {e}",
                            target.display()
                        ))
                    })?;
                    guard.path = None;
                }
                // The guard removes the emptied directory.
                Output::Dir => move_into(&temp, &target)?,
            }
            drop(guard);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test, removed at the end.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("anonfusion-copy-unit-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tree(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        files_under(dir, Path::new(""), &mut files).unwrap();
        files.sort();
        files
    }

    /// The written files, partition subdirectories included, end up under the target, which
    /// is created; the temporary directory keeps only empty directories.
    #[test]
    fn copy_dir_files_are_moved_into_a_new_target() {
        let d = Dir::new("move");
        let temp = d.0.join(".t.partial");
        std::fs::create_dir_all(temp.join("p=1")).unwrap();
        std::fs::write(temp.join("a_0.csv"), "a").unwrap();
        std::fs::write(temp.join("p=1/a_1.csv"), "b").unwrap();
        let target = d.0.join("out/deeper");
        move_into(&temp, &target).unwrap();
        assert_eq!(tree(&target), vec![PathBuf::from("a_0.csv"), PathBuf::from("p=1/a_1.csv")]);
        assert_eq!(std::fs::read_to_string(target.join("p=1/a_1.csv")).unwrap(), "b");
        assert!(tree(&temp).is_empty());
    }

    /// A file of the same name in the target fails the move before anything moves: the
    /// target's file keeps its bytes and no other file or directory appears there.
    #[test]
    fn copy_dir_never_replaces_an_existing_file() {
        let d = Dir::new("clash");
        let temp = d.0.join(".t.partial");
        std::fs::create_dir_all(temp.join("p=1")).unwrap();
        std::fs::write(temp.join("a_0.csv"), "new").unwrap();
        std::fs::write(temp.join("p=1/a_1.csv"), "new").unwrap();
        let target = d.0.join("out");
        std::fs::create_dir_all(target.join("p=1")).unwrap();
        std::fs::write(target.join("p=1/a_1.csv"), "old").unwrap();
        let e = move_into(&temp, &target).unwrap_err().to_string();
        assert!(e.contains("a_1.csv") && e.contains("already exists"), "{e}");
        assert_eq!(tree(&target), vec![PathBuf::from("p=1/a_1.csv")]);
        assert_eq!(std::fs::read_to_string(target.join("p=1/a_1.csv")).unwrap(), "old");
    }

    /// A move that fails midway (a partition directory's name taken by a file) takes back the
    /// files it moved and the directories it created.
    #[test]
    fn copy_dir_a_failed_move_is_undone() {
        let d = Dir::new("undo");
        let temp = d.0.join(".t.partial");
        std::fs::create_dir_all(temp.join("p=1")).unwrap();
        std::fs::create_dir_all(temp.join("q=2/r=3")).unwrap();
        std::fs::write(temp.join("a_0.csv"), "x").unwrap();
        std::fs::write(temp.join("p=1/a_1.csv"), "x").unwrap();
        std::fs::write(temp.join("q=2/r=3/a_2.csv"), "x").unwrap();
        let target = d.0.join("out");
        std::fs::create_dir_all(&target).unwrap();
        // Sorted, q=2/... moves last: its directory cannot be created over this file.
        std::fs::write(target.join("q=2"), "file").unwrap();
        assert!(move_into(&temp, &target).is_err());
        assert_eq!(tree(&target), vec![PathBuf::from("q=2")]);
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 1);
    }

    /// Another spelling of a path (`..`, a part not yet created) resolves to the same one.
    #[test]
    fn copy_paths_are_compared_resolved() {
        let d = Dir::new("resolve");
        std::fs::create_dir_all(d.0.join("a")).unwrap();
        let real = d.0.canonicalize().unwrap();
        assert_eq!(resolved(&d.0.join("a/../b.csv")), real.join("b.csv"));
        assert_eq!(resolved(&d.0.join("new/x/y.csv")), real.join("new/x/y.csv"));
    }
}
