//! What the table functions share: reaching the live session from a call, in-memory tables,
//! memoized results, the output-name check, and registering a function whose only state is
//! the session's registry.

use crate::error::{AnonError, Result};
use crate::session::Registry;
use crate::stamp::ContentStamp;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl};
use datafusion::datasource::MemTable;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionContext;
use std::sync::{Arc, Weak};

/// The body of a table function whose only state is the session's registry.
type RegistryCall = fn(&Registry, TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>>;

/// A table function whose only state is the session's registry.
#[derive(Debug)]
struct RegistryFn {
    registry: Arc<Registry>,
    call: RegistryCall,
}

impl TableFunctionImpl for RegistryFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        (self.call)(&self.registry, args)
    }
}

/// Register `call` as the table function `name`.
pub(crate) fn register_fn(ctx: &SessionContext, registry: &Arc<Registry>, name: &str, call: RegistryCall) {
    ctx.register_udtf(name, Arc::new(RegistryFn { registry: registry.clone(), call }));
}

/// A context over the live session of a table-function call. It shares the session's catalog,
/// so tables registered through it are visible to the caller's statements.
pub(crate) fn session_context(args: &TableFunctionArgs) -> Result<SessionContext> {
    let state = args
        .session()
        .as_any()
        .downcast_ref::<SessionState>()
        .ok_or_else(|| AnonError::table("session", "table functions need a DataFusion SessionState"))?;
    Ok(SessionContext::new_with_state(state.clone()))
}

/// An in-memory table from batches (all with the schema of the first; an empty result needs
/// the schema given).
pub fn mem_table(
    schema: datafusion::arrow::datatypes::SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<Arc<dyn TableProvider>> {
    Ok(Arc::new(MemTable::try_new(schema, vec![batches])?))
}

/// Is `provider` (by identity) still registered as `name`? Memoized results of side-effect
/// functions are reused only while their outputs are still in the catalog.
pub(crate) fn still_registered(ctx: &SessionContext, name: &str, provider: &Arc<dyn TableProvider>) -> bool {
    crate::session::outputs::registered(ctx, name).is_some_and(|t| Arc::ptr_eq(&t, provider))
}

/// Memoized results of a side-effect function: key → (output name, registered provider,
/// result, the side tables registered with it, the stamps of the tables it read). A result is
/// reused only while its output and every side table are still the registered tables and the
/// tables it read are the same objects with the same rows ([`ContentStamp`]), so a second
/// reference or `EXPLAIN` does not recompute, while a dropped output is rebuilt and an updated
/// source is not answered with the release of its old rows. A dropped side table counts as a
/// dropped output: before, the same seeded call after `DROP TABLE h_catalog` returned the
/// memoized release and left it without its catalog.
///
/// The registered tables are held weakly, and so is a result that is the registered table (a
/// method's release): the memo never keeps a dropped or replaced table's rows alive. It held
/// them strongly, under keys that name the declarations' generation, so every release of a
/// session stayed in memory after `DROP TABLE` (about 20 MB a call on Adult ×10) once a
/// hierarchy was reloaded or the parameters changed. Entries whose table is gone are removed
/// whenever one is added.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    entries: std::sync::Mutex<std::collections::HashMap<String, MemoEntry>>,
}

#[derive(Debug)]
struct MemoEntry {
    output: String,
    registered: Weak<dyn TableProvider>,
    /// The result when it is another table than the registered one.
    result: Option<Arc<dyn TableProvider>>,
    /// The side tables registered with the output, by name.
    side: Vec<(String, Weak<dyn TableProvider>)>,
    stamps: Vec<ContentStamp>,
}

/// Whether `table` is still registered as `name`.
fn held(ctx: &SessionContext, name: &str, table: &Weak<dyn TableProvider>) -> bool {
    table.upgrade().is_some_and(|t| still_registered(ctx, name, &t))
}

impl Memo {
    /// The result for `key`, where it was made from `inputs` as they are now.
    pub(crate) fn get(
        &self,
        ctx: &SessionContext,
        key: &str,
        inputs: &[Arc<dyn TableProvider>],
    ) -> Option<Arc<dyn TableProvider>> {
        let entries = self.entries.lock().expect("memo lock");
        let e = entries.get(key)?;
        if e.stamps.len() != inputs.len() || !e.stamps.iter().zip(inputs).all(|(s, t)| s.holds_for(t)) {
            return None;
        }
        if !e.side.iter().all(|(name, table)| held(ctx, name, table)) {
            return None;
        }
        let registered = e.registered.upgrade()?;
        still_registered(ctx, &e.output, &registered).then(|| e.result.clone().unwrap_or(registered))
    }

    /// Remember `result` for `key` while `registered` is `output`'s table, each of `side` is
    /// still registered under its name, and the tables read hold their `stamps` (taken before
    /// they were read); `result` `None`: the result is `registered` itself.
    pub(crate) fn put(
        &self,
        key: String,
        output: &str,
        registered: &Arc<dyn TableProvider>,
        result: Option<Arc<dyn TableProvider>>,
        side: &[(String, Arc<dyn TableProvider>)],
        stamps: Vec<ContentStamp>,
    ) {
        let mut entries = self.entries.lock().expect("memo lock");
        entries.retain(|_, e| e.registered.strong_count() > 0);
        let side = side.iter().map(|(n, t)| (n.clone(), Arc::downgrade(t))).collect();
        let entry =
            MemoEntry { output: output.to_string(), registered: Arc::downgrade(registered), result, side, stamps };
        entries.insert(key, entry);
    }

    /// Entries held (tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().expect("memo lock").len()
    }
}

/// Validate an output table name: a plain identifier, so the release can be queried unquoted.
pub(crate) fn check_output_name(function: &str, name: &str) -> Result<()> {
    check_output_name_as(function, "output", name)
}

/// [`check_output_name`] for an output named by argument `argument` (`load_dataset`'s
/// `as_table`).
pub(crate) fn check_output_name_as(function: &str, argument: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(AnonError::argument(function, argument, format!("'{name}' is not a plain table name (letters, digits, _)")))
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;
    use datafusion::arrow::array::{ArrayRef, Int64Array};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::catalog::TableProvider;
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionContext;
    use std::sync::Arc;

    fn table() -> Arc<dyn TableProvider> {
        let b = RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)]).unwrap();
        Arc::new(MemTable::try_new(b.schema(), vec![vec![b]]).unwrap())
    }

    /// A memoized release is answered while it is the registered table, and the memo does not
    /// keep it alive once it is dropped: before, every release stayed in memory for the session
    /// under its key (one more for each declaration change or new parameters).
    #[test]
    fn the_memo_keeps_no_dropped_table_alive() {
        let ctx = SessionContext::new();
        let memo = Memo::default();
        let release = table();
        ctx.register_table("out", release.clone()).unwrap();
        memo.put("k=5|g1".into(), "out", &release, None, &[], Vec::new());
        assert!(memo.get(&ctx, "k=5|g1", &[]).is_some_and(|t| Arc::ptr_eq(&t, &release)));
        let gone = Arc::downgrade(&release);
        drop(release);
        ctx.deregister_table("out").unwrap();
        assert_eq!(gone.strong_count(), 0, "the memo held the dropped release");
        assert!(memo.get(&ctx, "k=5|g1", &[]).is_none());
        // The dead entry goes when another is added; a result other than the table is kept.
        let (loaded, summary) = (table(), table());
        ctx.register_table("adult", loaded.clone()).unwrap();
        memo.put("adult".into(), "adult", &loaded, Some(summary.clone()), &[], Vec::new());
        assert_eq!(memo.len(), 1);
        assert!(memo.get(&ctx, "adult", &[]).is_some_and(|t| Arc::ptr_eq(&t, &summary)));
    }

    /// A release whose side table was dropped is not served from the memo: the call runs again
    /// and registers the side table anew.
    #[test]
    fn a_dropped_side_table_ends_the_entry() {
        let ctx = SessionContext::new();
        let memo = Memo::default();
        let (release, catalog) = (table(), table());
        ctx.register_table("h", release.clone()).unwrap();
        ctx.register_table("h_catalog", catalog.clone()).unwrap();
        memo.put("seed=2".into(), "h", &release, None, &[("h_catalog".into(), catalog.clone())], Vec::new());
        assert!(memo.get(&ctx, "seed=2", &[]).is_some());
        ctx.deregister_table("h_catalog").unwrap();
        assert!(memo.get(&ctx, "seed=2", &[]).is_none(), "served without its catalog");
        // Another table under the side table's name is not the call's.
        ctx.register_table("h_catalog", table()).unwrap();
        assert!(memo.get(&ctx, "seed=2", &[]).is_none());
    }
}
