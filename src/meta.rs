//! Attribute roles and hierarchies, declared once per source table.
//!
//! Roles and hierarchies belong to the data, not to each method call: a custodian declares
//! them once (or a bundled dataset declares them on load) and every method reads them from
//! here. A session keeps them in its [`Registry`](crate::session::Registry), queryable as the
//! tables `anon_roles` and `anon_hierarchies`; this module is only what a declaration is.

use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, HierarchyKind};
use std::collections::BTreeMap;
use std::sync::Arc;

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
