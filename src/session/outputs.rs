//! Which tables of the catalog this engine registered as a function's outputs, and the rule
//! that keeps every other table safe from an output name.
//!
//! The rule: a call may register `<output>` and its side tables `<output>_<suffix>` only under
//! names that are free, or that hold tables an earlier call of the *same function* registered
//! for the *same output* and that are still the registered tables (compared by identity, so a
//! table dropped and re-created by the user under that name is the user's). Never a table with
//! declared roles (an original), a hierarchy or constraints table, a system view, another
//! function's release, or another release's side table. Names are compared after DataFusion's
//! own resolution of an unquoted identifier (lower case), so `'ADULT'` names `adult` and cannot
//! replace it. When a release is replaced, its side tables from the earlier call that this
//! call does not produce are dropped with it, so no stale catalog stays behind.

use super::runtime::block_on;
use crate::error::{AnonError, Result};
use datafusion::catalog::TableProvider;
use datafusion::prelude::SessionContext;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

/// One table the engine registered.
#[derive(Debug, Clone)]
struct Owned {
    function: &'static str,
    /// The release this table belongs to (itself, for the release).
    release: String,
    /// The registered provider. Weak, so a dropped table's memory is freed; the allocation
    /// stays while this is held, so the address cannot be reused by another table.
    provider: Weak<dyn TableProvider>,
}

impl Owned {
    fn is(&self, provider: &Arc<dyn TableProvider>) -> bool {
        std::ptr::addr_eq(self.provider.as_ptr(), Arc::as_ptr(provider))
    }
}

/// The engine's outputs in one session (held by the [`Registry`](super::Registry)).
#[derive(Debug, Default)]
pub(crate) struct Outputs {
    /// Shared with the undo records of a [`Journal`], which restore entries after the call.
    owned: OwnedMap,
}

impl Outputs {
    /// Refuse, before anything runs, a call of `function` from `source` that would register
    /// `names` (the release first, then its side tables) over a table it may not replace.
    pub(crate) fn check(
        &self,
        ctx: &SessionContext,
        function: &'static str,
        source: &str,
        names: &[String],
        declared: &dyn Fn(&str) -> bool,
    ) -> Result<()> {
        let owned = self.owned.lock().expect("outputs lock");
        let release = &names[0];
        let refuse = |name: &str, why: String| {
            Err(AnonError::argument(
                function,
                "output",
                format!("'{release}' would replace {why}: '{name}' is kept; choose another output name"),
            ))
        };
        for name in names {
            if *name == normalize(source) {
                return refuse(name, "the source table".into());
            }
            if declared(name) {
                return refuse(name, "a table with declared roles".into());
            }
            let Some(current) = registered(ctx, name) else { continue };
            match owned.get(name) {
                Some(o) if o.is(&current) && o.function == function && o.release == *release => {}
                Some(o) if o.is(&current) && o.release == *name => {
                    return refuse(name, format!("a release of {}", o.function));
                }
                Some(o) if o.is(&current) => {
                    return refuse(name, format!("a side table of {}'s release '{}'", o.function, o.release));
                }
                _ => return refuse(name, "a table this engine did not create (an original, a hierarchy or constraints table, or a system view)".into()),
            }
        }
        Ok(())
    }

    /// Register `tables` (the release first) as `function`'s outputs for the release
    /// `tables[0]`, dropping the earlier release's side tables that are not replaced.
    ///
    /// `undoable`: the names this call changes (its outputs and the stale side tables it
    /// drops) are journalled in the running statement's [`Journal`], if any, so that a
    /// statement failing after the call leaves the catalog as it was. A call that charged a
    /// privacy budget is not undoable: its charge stands (what the failing statement did may
    /// have depended on the release), and so does the release it paid for.
    pub(crate) fn publish(
        &self,
        ctx: &SessionContext,
        function: &'static str,
        tables: Vec<(String, Arc<dyn TableProvider>)>,
        undoable: bool,
    ) -> Result<()> {
        let mut owned = self.owned.lock().expect("outputs lock");
        let release = tables.first().map(|(n, _)| n.clone()).unwrap_or_default();
        let stale: Vec<String> = owned
            .iter()
            .filter(|(_, o)| o.release == release && o.function == function)
            .filter(|(name, _)| !tables.iter().any(|(n, _)| n == *name))
            .filter(|(name, o)| registered(ctx, name).is_some_and(|p| o.is(&p)))
            .map(|(name, _)| name.clone())
            .collect();
        if undoable {
            let changed = stale.iter().cloned().chain(tables.iter().map(|(n, _)| n.clone()));
            Journal::record(
                || {
                    changed
                        .map(|name| Undo { previous: registered(ctx, &name), owned: owned.get(&name).cloned(), name })
                        .collect()
                },
                &self.owned,
            );
        }
        for name in stale {
            ctx.deregister_table(name.as_str())?;
            owned.remove(&name);
        }
        for (name, table) in tables {
            replace_table(ctx, &name, table.clone())?;
            owned.insert(name, Owned { function, release: release.clone(), provider: Arc::downgrade(&table) });
        }
        Ok(())
    }
}

/// The engine's outputs by name, shared between [`Outputs`] and a [`Journal`].
type OwnedMap = Arc<Mutex<BTreeMap<String, Owned>>>;

/// What a table name held before a call registered over it.
struct Undo {
    name: String,
    previous: Option<Arc<dyn TableProvider>>,
    owned: Option<Owned>,
}

/// The registrations of one statement's table-function calls, undone if the statement fails
/// after them (`SELECT nosuch FROM kanon_anonymize(...)`, `CREATE TABLE t AS SELECT * FROM
/// ...` over an existing `t`): table functions run while a statement is planned, so their
/// outputs are registered before the rest of the statement is known to succeed.
#[derive(Default)]
pub(crate) struct Journal {
    /// Per call, latest last: what its names held, and the owned map to restore them in.
    undo: Mutex<Vec<(Vec<Undo>, OwnedMap)>>,
}

tokio::task_local! {
    static STATEMENT: Arc<Journal>;
}

impl Journal {
    /// Run `statement` (the planning of one SQL statement) with a journal; if it fails, every
    /// journalled registration is undone, the latest first.
    pub(crate) async fn atomic<T, E>(
        ctx: &SessionContext,
        statement: impl std::future::Future<Output = std::result::Result<T, E>>,
    ) -> std::result::Result<T, E> {
        let journal = Arc::new(Journal::default());
        let result = STATEMENT.scope(journal.clone(), statement).await;
        if result.is_err() {
            journal.undo(ctx);
        }
        result
    }

    /// Record what `before` returns, when a statement is running.
    fn record(before: impl FnOnce() -> Vec<Undo>, owned: &OwnedMap) {
        let _ = STATEMENT.try_with(|s| s.undo.lock().expect("statement lock").push((before(), owned.clone())));
    }

    /// Put back every name as it was before the statement's calls (best effort: a name that
    /// cannot be restored is left as the call registered it).
    fn undo(&self, ctx: &SessionContext) {
        let mut calls = std::mem::take(&mut *self.undo.lock().expect("statement lock"));
        while let Some((undos, owned)) = calls.pop() {
            // The call's owned map is locked after the session's catalog is changed, never
            // while it is (as in `publish`).
            for u in &undos {
                let _ = ctx.deregister_table(u.name.as_str());
                if let Some(t) = &u.previous {
                    let _ = ctx.register_table(u.name.as_str(), t.clone());
                }
            }
            let mut owned = owned.lock().expect("outputs lock");
            for u in undos {
                match u.owned {
                    Some(o) => owned.insert(u.name, o),
                    None => owned.remove(&u.name),
                };
            }
        }
    }
}

/// A name as DataFusion resolves it ([`super::resolve`], the one resolution the declarations
/// use too): a plain output name in lower case, `public.t` the same as `t`.
pub(crate) fn normalize(name: &str) -> String {
    super::display_name(&super::resolve(name))
}

/// The table registered as `name` in the session's default schema, if any.
pub(crate) fn registered(ctx: &SessionContext, name: &str) -> Option<Arc<dyn TableProvider>> {
    let state = ctx.state();
    let options = state.config().options();
    let schema =
        state.catalog_list().catalog(&options.catalog.default_catalog)?.schema(&options.catalog.default_schema)?;
    block_on(schema.table(name)).ok().flatten()
}

/// Register `provider` as `name`, replacing an existing table of that name. Callers compute
/// everything first and register last, so a failing call leaves the catalog as it was.
pub fn replace_table(ctx: &SessionContext, name: &str, provider: Arc<dyn TableProvider>) -> Result<()> {
    ctx.deregister_table(name)?;
    ctx.register_table(name, provider)?;
    Ok(())
}
