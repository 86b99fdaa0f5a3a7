//! What one session holds beyond DataFusion's catalog: every table's declarations (the
//! [`Registry`]), the privacy ledger in use, the progress reporter, the tables this engine
//! registered as outputs ([`outputs`]), and the bridge from a synchronous table-function call
//! to the async runtime ([`runtime`]).
//!
//! Its layer is above the declarations ([`crate::meta`]), the ledger ([`crate::dp::ledger`]) and
//! the progress reporter, and below everything that runs in a session (the SQL functions, the
//! query-error harness, the CLI); the methods never see it.

pub(crate) mod outputs;
pub(crate) mod runtime;

use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::{Role, TableMeta};
use datafusion::common::{ResolvedTableReference, TableReference};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// The table `name` names, resolved as DataFusion resolves a table argument: an unquoted
/// identifier in lower case, a quoted one as written, `public.t` and `datafusion.public.t` the
/// same table as `t`. Every declaration and output name is keyed by this, so one table cannot
/// carry two declarations (`'T'` and `'t'` once held separate roles, and a method read the one
/// without the `identifier`). The defaults are DataFusion's (`datafusion.public`): the engine
/// never changes them, and the registry is consulted where no session is at hand.
pub fn resolve(name: &str) -> ResolvedTableReference {
    let defaults = datafusion::config::CatalogOptions::default();
    TableReference::parse_str(name).resolve(&defaults.default_catalog, &defaults.default_schema)
}

/// A resolved table as one string, as `information_schema.tables` names it: the table's own name
/// in the default schema, the quoted path elsewhere.
pub fn display_name(table: &ResolvedTableReference) -> String {
    let defaults = datafusion::config::CatalogOptions::default();
    if *table.catalog == defaults.default_catalog && *table.schema == defaults.default_schema {
        table.table.to_string()
    } else {
        TableReference::from(table.clone()).to_quoted_string()
    }
}

/// Declarations of every table of a session.
#[derive(Debug, Default)]
pub struct Registry {
    /// Keyed by the resolved table ([`resolve`]), never by the name as a call spelled it.
    tables: RwLock<BTreeMap<ResolvedTableReference, TableMeta>>,
    /// The tables whose declarations are exactly what `load_dataset` installed (no call has
    /// changed them since): loading a bundled dataset again under such a name (after `DROP
    /// TABLE`, a smaller sample) replaces nothing anyone declared. Locked after `tables`.
    loaded: RwLock<std::collections::BTreeSet<ResolvedTableReference>>,
    progress: RwLock<Option<Arc<dyn crate::progress::Progress>>>,
    /// A temporary ledger until [`Registry::set_ledger`] chooses a file (the CLI:
    /// [`crate::dp::ledger::Ledger::standard`]).
    ledger: RwLock<Arc<crate::dp::ledger::Ledger>>,
    /// The tables this engine registered as functions' outputs (the output-name rule).
    outputs: outputs::Outputs,
    /// Bumped by every change of a declaration, so memoized results made under other
    /// declarations are not reused.
    generation: std::sync::atomic::AtomicU64,
}

impl Registry {
    pub fn new() -> Arc<Self> {
        Arc::new(Registry::default())
    }

    pub fn get(&self, table: &str) -> Option<TableMeta> {
        self.tables.read().expect("registry lock").get(&resolve(table)).cloned()
    }

    /// Declarations of a table, or an error saying how to make them.
    pub fn require(&self, table: &str) -> Result<TableMeta> {
        self.get(table).ok_or_else(|| {
            AnonError::table(table, "has no attribute roles; declare them with declare_roles or load a bundled dataset")
        })
    }

    /// Replace the roles of a table, keeping its hierarchies.
    pub(crate) fn set_roles(&self, table: &str, roles: Vec<(String, Role)>) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        self.declared_by_hand(table);
        t.entry(resolve(table)).or_default().roles = roles;
    }

    pub(crate) fn set_hierarchy(&self, table: &str, column: &str, h: Arc<Hierarchy>) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        self.declared_by_hand(table);
        t.entry(resolve(table)).or_default().hierarchies.insert(column.to_string(), h);
    }

    /// Declare (or with `None` withdraw) the table's `ipa_release` plan.
    pub(crate) fn set_release_plan(&self, table: &str, plan: Option<String>) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        self.declared_by_hand(table);
        t.entry(resolve(table)).or_default().release_plan = plan;
    }

    /// Install a whole declaration at once, replacing any earlier one (tests and embedders
    /// that build a [`TableMeta`] themselves; `load_dataset` uses [`Registry::declare_new`]).
    pub fn set(&self, table: &str, meta: TableMeta) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        self.declared_by_hand(table);
        t.insert(resolve(table), meta);
    }

    /// `table`'s declarations are no longer only what `load_dataset` installed.
    fn declared_by_hand(&self, table: &str) {
        self.loaded.write().expect("registry lock").remove(&resolve(table));
    }

    /// Install a bundled dataset's declaration for a table that has none, or whose declarations
    /// are a dataset's as loaded, or refuse: a dataset loaded under a name whose table was
    /// dropped would otherwise replace the declarations (roles, `identifier` included, and
    /// hierarchies) someone made for it. Checked and inserted under one lock, so two loads
    /// cannot both pass.
    pub(crate) fn declare_new(&self, function: &str, table: &str, meta: TableMeta) -> Result<()> {
        let mut t = self.tables.write().expect("registry lock");
        let mut loaded = self.loaded.write().expect("registry lock");
        let key = resolve(table);
        if t.contains_key(&key) && !loaded.contains(&key) {
            return Err(already_declared(function, table));
        }
        self.bump();
        loaded.insert(key.clone());
        t.insert(key, meta);
        Ok(())
    }

    /// Install the reporter that long searches report their progress to.
    pub fn set_progress(&self, p: Arc<dyn crate::progress::Progress>) {
        *self.progress.write().expect("registry lock") = Some(p);
    }

    /// The installed progress reporter, or a silent one.
    pub(crate) fn progress(&self) -> Arc<dyn crate::progress::Progress> {
        self.progress.read().expect("registry lock").clone().unwrap_or_else(crate::progress::silent)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Changes with every declaration (roles, hierarchies): part of every memo key.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The privacy budgets and spends of the session's tables.
    pub(crate) fn ledger(&self) -> Arc<crate::dp::ledger::Ledger> {
        self.ledger.read().expect("registry lock").clone()
    }

    /// Keep the ledger in `ledger` from now on (releases in progress finish on the old one).
    pub fn set_ledger(&self, ledger: crate::dp::ledger::Ledger) {
        *self.ledger.write().expect("registry lock") = Arc::new(ledger);
    }

    /// The engine's registered outputs, which guard every output name.
    pub(crate) fn outputs(&self) -> &outputs::Outputs {
        &self.outputs
    }

    /// Refuse, before anything runs, a call of `function` from `source` that would register
    /// `names` over a table it may not replace ([`outputs::Outputs::check`]; a table with
    /// declared roles is an original).
    pub(crate) fn check_outputs(
        &self,
        ctx: &datafusion::prelude::SessionContext,
        function: &'static str,
        source: &str,
        names: &[String],
    ) -> Result<()> {
        self.outputs.check(ctx, function, source, names, &|name| self.get(name).is_some())
    }

    pub(crate) fn snapshot(&self) -> Vec<(String, TableMeta)> {
        self.tables.read().expect("registry lock").iter().map(|(k, v)| (display_name(k), v.clone())).collect()
    }
}

/// The refusal of a call that would install declarations over a table's existing ones. The
/// engine has no function that withdraws declarations, so the way out is another name.
pub(crate) fn already_declared(function: &str, table: &str) -> AnonError {
    AnonError::argument(
        function,
        "as_table",
        format!(
            "'{}' has declarations (roles, hierarchies), kept after DROP TABLE, that loading would \
             replace: load under another name (the 4th argument)",
            display_name(&resolve(table))
        ),
    )
}
