//! Attribute roles and hierarchies, declared once per source table.
//!
//! Roles and hierarchies belong to the data, not to each method call: a custodian declares
//! them once (or a bundled dataset declares them on load) and every method reads them from
//! here. The registry is shared by all functions of one session and is queryable as the
//! tables `anon_roles` and `anon_hierarchies`.

use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, HierarchyKind};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// What a column is to the anonymizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Direct identifier (name, patient number): dropped from every release.
    Identifier,
    /// Quasi-identifier: generalized through its hierarchy.
    QuasiIdentifier,
    /// Sensitive (h-ceiling, entropy, l-diversity) or informative (IPA) attribute: released
    /// as it is, protected by the privacy model.
    Sensitive,
    /// Kept as it is, not part of any privacy model.
    Insensitive,
    /// A set of codes per record (diagnoses), generalized through a code hierarchy.
    SetValued,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Identifier => "identifier",
            Role::QuasiIdentifier => "quasi_identifier",
            Role::Sensitive => "sensitive",
            Role::Insensitive => "insensitive",
            Role::SetValued => "set_valued",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Role> {
        match s.trim().to_ascii_lowercase().replace(['-', ' '], "_").as_str() {
            "identifier" | "id" | "direct_identifier" => Some(Role::Identifier),
            "quasi_identifier" | "qi" | "quasi" => Some(Role::QuasiIdentifier),
            "sensitive" | "informative" | "sa" => Some(Role::Sensitive),
            "insensitive" | "keep" | "other" => Some(Role::Insensitive),
            "set_valued" | "setvalued" | "codes" | "set" => Some(Role::SetValued),
            _ => None,
        }
    }
}

/// Declarations for one source table.
#[derive(Debug, Clone, Default)]
pub struct TableMeta {
    /// Column → role, in declaration order.
    pub roles: Vec<(String, Role)>,
    /// Column → hierarchy (quasi-identifiers and set-valued columns).
    pub hierarchies: BTreeMap<String, Arc<Hierarchy>>,
    /// `ipa_release`'s declared plan (`declare_release_plan`): public options, e.g. an adaptive
    /// partition's root and steps, used when a call names no `partition=` of its own.
    pub release_plan: Option<String>,
}

impl TableMeta {
    pub(crate) fn role(&self, column: &str) -> Option<Role> {
        self.roles.iter().find(|(c, _)| c == column).map(|(_, r)| *r)
    }

    pub(crate) fn columns_with(&self, role: Role) -> Vec<&str> {
        self.roles.iter().filter(|(_, r)| *r == role).map(|(c, _)| c.as_str()).collect()
    }

    pub fn quasi_identifiers(&self) -> Vec<&str> {
        self.columns_with(Role::QuasiIdentifier)
    }

    /// The single sensitive attribute a method needs, or an error naming the table.
    pub(crate) fn sensitive(&self, table: &str) -> Result<&str> {
        match self.columns_with(Role::Sensitive).as_slice() {
            [one] => Ok(one),
            [] => Err(AnonError::table(table, "no sensitive attribute declared (declare_roles: column=sensitive)")),
            many => Err(AnonError::table(
                table,
                format!(
                    "{} sensitive attributes declared ({}); this method takes exactly one",
                    many.len(),
                    many.join(", ")
                ),
            )),
        }
    }

    pub(crate) fn hierarchy(&self, table: &str, column: &str) -> Result<&Arc<Hierarchy>> {
        self.hierarchies.get(column).ok_or_else(|| {
            AnonError::column(table, column, "has no hierarchy; load one with load_hierarchy or interval_hierarchy")
        })
    }

    /// Every quasi-identifier has a hierarchy of a lattice kind, every set-valued column a
    /// code hierarchy.
    pub(crate) fn check_complete(&self, table: &str) -> Result<()> {
        for (col, role) in &self.roles {
            match role {
                Role::QuasiIdentifier if self.hierarchy(table, col)?.kind() == HierarchyKind::Codes => {
                    return Err(AnonError::column(
                        table,
                        col,
                        "is a quasi-identifier but its hierarchy is a code hierarchy",
                    ));
                }
                Role::SetValued => {
                    self.hierarchy(table, col)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Declarations of every table of a session.
#[derive(Debug, Default)]
pub struct Registry {
    tables: RwLock<BTreeMap<String, TableMeta>>,
    progress: RwLock<Option<Arc<dyn crate::progress::Progress>>>,
    /// A temporary ledger until [`Registry::set_ledger`] chooses a file (the CLI:
    /// [`crate::dp::ledger::Ledger::standard`]).
    ledger: RwLock<Arc<crate::dp::ledger::Ledger>>,
    /// The tables this engine registered as functions' outputs (the output-name rule).
    releases: crate::releases::Releases,
    /// Bumped by every change of a declaration, so memoized results made under other
    /// declarations are not reused.
    generation: std::sync::atomic::AtomicU64,
}

impl Registry {
    pub fn new() -> Arc<Self> {
        Arc::new(Registry::default())
    }

    pub fn get(&self, table: &str) -> Option<TableMeta> {
        self.tables.read().expect("registry lock").get(table).cloned()
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
        t.entry(table.to_string()).or_default().roles = roles;
    }

    pub(crate) fn set_hierarchy(&self, table: &str, column: &str, h: Arc<Hierarchy>) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        t.entry(table.to_string()).or_default().hierarchies.insert(column.to_string(), h);
    }

    /// Declare (or with `None` withdraw) the table's `ipa_release` plan.
    pub(crate) fn set_release_plan(&self, table: &str, plan: Option<String>) {
        self.bump();
        let mut t = self.tables.write().expect("registry lock");
        t.entry(table.to_string()).or_default().release_plan = plan;
    }

    /// Install a whole declaration at once (bundled datasets), replacing any earlier one.
    pub fn set(&self, table: &str, meta: TableMeta) {
        self.bump();
        self.tables.write().expect("registry lock").insert(table.to_string(), meta);
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
    pub(crate) fn releases(&self) -> &crate::releases::Releases {
        &self.releases
    }

    pub(crate) fn snapshot(&self) -> Vec<(String, TableMeta)> {
        self.tables.read().expect("registry lock").iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}
