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
mod rmr_fn;
mod roles;
pub(crate) mod settings;
mod system;
mod truthful_fn;
mod verify_fn;

pub(crate) use args::Args;
pub use explain::run;
pub use output::ParquetOutput;

use crate::error::{AnonError, Result};
use crate::meta::Registry;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl};
use datafusion::datasource::MemTable;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionContext;
use std::future::Future;
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
    query_error_fn::register,
    |ctx, r| method::register(ctx, r, records_fn::AsRecords),
    |ctx, r| method::register(ctx, r, artuc_fn::Artuc),
    |ctx, r| method::register(ctx, r, rmr_fn::Rmr),
    |ctx, r| method::register(ctx, r, ipa_fn::Ipa),
    |ctx, r| method::register(ctx, r, ipa_fn::Histogram),
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
fn register_fn(ctx: &SessionContext, registry: &Arc<Registry>, name: &str, call: RegistryCall) {
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

/// Every row of `table` in its own order: partition after partition, each partition's rows as
/// stored. `collect()` would interleave partitions in whatever order they finish, and ArtUC's and
/// RmR's results depend on the order of their records, so the same seed would not always give the same
/// release. Only the partitions can be trusted to keep their order: a scan hands a partition's
/// rows out in batches of the session's `batch_size`, not in the batches they were stored in
/// (so `load_dataset` gives each partition a contiguous run of the dataset's batches).
pub(crate) fn in_order(ctx: &SessionContext, table: &str) -> Result<Vec<RecordBatch>> {
    let parts = block_on(async { ctx.table(table).await?.collect_partitioned().await })?;
    Ok(parts.into_iter().flatten().collect())
}

/// Run a future to completion from the synchronous table-function call. On a multi-thread
/// runtime the worker is handed over (`block_in_place`); otherwise (current-thread runtime, or
/// none) a scoped helper thread runs its own runtime, because `Handle::block_on` panics inside
/// a runtime and an executor would deadlock a current-thread one.
pub(crate) fn block_on<F>(fut: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Builder, Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(|| h.block_on(fut)),
        _ => std::thread::scope(|s| {
            s.spawn(|| {
                Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread tokio runtime")
                    .block_on(fut)
            })
            .join()
            .expect("table function helper thread panicked")
        }),
    }
}

/// [`block_on`] for a table function's pipeline, raced against `progress.cancelled()` (the
/// CLI's and the Python package's Ctrl-C): once it says so the future is dropped at its next
/// await (which aborts the DataFusion streams it runs) and the call fails with
/// [`AnonError::Cancelled`]. The methods' synchronous loops check the same flag themselves
/// ([`crate::progress`]); this covers what they await: reading the source, aggregating it,
/// materializing the release. The flag is looked at whenever the future is polled and, since a
/// signal cannot wake a future, every [`CANCEL_POLL`] by a helper thread that wakes it; no
/// tokio timer is needed, so an embedder's runtime without one works too.
pub(crate) fn block_on_cancellable<F, T>(progress: &dyn crate::progress::Progress, fut: F) -> Result<T>
where
    F: Future<Output = Result<T>> + Send,
    T: Send,
{
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Poll, Waker};
    let done = AtomicBool::new(false);
    let waker: Mutex<Option<Waker>> = Mutex::new(None);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(CANCEL_POLL);
                if let Some(w) = waker.lock().expect("waker lock").as_ref() {
                    w.wake_by_ref();
                }
            }
        });
        let out = block_on(async {
            let mut fut = std::pin::pin!(fut);
            std::future::poll_fn(|cx| {
                if progress.cancelled() {
                    return Poll::Ready(Err(AnonError::Cancelled));
                }
                if let Poll::Ready(r) = fut.as_mut().poll(cx) {
                    return Poll::Ready(r);
                }
                *waker.lock().expect("waker lock") = Some(cx.waker().clone());
                Poll::Pending
            })
            .await
        });
        done.store(true, Ordering::SeqCst);
        out
    })
}

/// How often [`block_on_cancellable`] looks at the cancellation flag while its future waits.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// An in-memory table from batches (all with the schema of the first; an empty result needs
/// the schema given).
pub fn mem_table(
    schema: datafusion::arrow::datatypes::SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<Arc<dyn TableProvider>> {
    Ok(Arc::new(MemTable::try_new(schema, vec![batches])?))
}

pub use crate::releases::replace_table;

/// Is `provider` (by identity) still registered as `name`? Memoized results of side-effect
/// functions are reused only while their outputs are still in the catalog.
pub(crate) fn still_registered(ctx: &SessionContext, name: &str, provider: &Arc<dyn TableProvider>) -> bool {
    crate::releases::registered(ctx, name).is_some_and(|t| Arc::ptr_eq(&t, provider))
}

/// Memoized results of a side-effect function: key → (output name, registered provider,
/// result). A result is reused only while its output is still the registered table, so a
/// second reference or `EXPLAIN` does not recompute, while a dropped output is rebuilt.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    entries: std::sync::Mutex<std::collections::HashMap<String, MemoEntry>>,
}

type MemoEntry = (String, Arc<dyn TableProvider>, Arc<dyn TableProvider>);

impl Memo {
    pub(crate) fn get(&self, ctx: &SessionContext, key: &str) -> Option<Arc<dyn TableProvider>> {
        let entries = self.entries.lock().expect("memo lock");
        let (name, registered, result) = entries.get(key)?;
        still_registered(ctx, name, registered).then(|| result.clone())
    }

    pub(crate) fn put(
        &self,
        key: String,
        output: &str,
        registered: Arc<dyn TableProvider>,
        result: Arc<dyn TableProvider>,
    ) {
        self.entries.lock().expect("memo lock").insert(key, (output.to_string(), registered, result));
    }
}

/// Validate an output table name: a plain identifier, so the release can be queried unquoted.
pub(crate) fn check_output_name(function: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(AnonError::argument(function, "output", format!("'{name}' is not a plain table name (letters, digits, _)")))
    }
}
