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
#[derive(Debug)]
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
    owned: Mutex<BTreeMap<String, Owned>>,
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
    pub(crate) fn publish(
        &self,
        ctx: &SessionContext,
        function: &'static str,
        tables: Vec<(String, Arc<dyn TableProvider>)>,
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
