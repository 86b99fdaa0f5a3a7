//! `anon_roles`, `anon_hierarchies`, `anon_release_plans` and `anon_privacy_ledger`: the
//! declarations and privacy budgets of every table, as live tables.

use super::glue::mem_table;
use super::report::{Column, Column::*, batch};
use crate::hierarchy::Hierarchy;
use crate::meta::TableMeta;
use crate::session::Registry;
use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    for kind in [SystemTable::Roles, SystemTable::Hierarchies, SystemTable::Plans, SystemTable::Ledger] {
        let t = RegistryTable { registry: registry.clone(), kind };
        ctx.register_table(kind.name(), Arc::new(t)).expect("system table names are free in a new session");
    }
}

#[derive(Debug, Clone, Copy)]
enum SystemTable {
    Roles,
    Hierarchies,
    Plans,
    Ledger,
}

impl SystemTable {
    fn name(self) -> &'static str {
        match self {
            SystemTable::Roles => "anon_roles",
            SystemTable::Hierarchies => "anon_hierarchies",
            SystemTable::Plans => "anon_release_plans",
            SystemTable::Ledger => "anon_privacy_ledger",
        }
    }
}

/// Whether `name` resolves to a system view: one of this engine's `anon_*` tables or a table
/// of DataFusion's `information_schema`. Declarations on them would be silently meaningless
/// (their rows are the catalog's, not records), so declaring functions refuse them.
pub(crate) fn is_system_view(ctx: &SessionContext, name: &str) -> bool {
    let reference = datafusion::common::TableReference::parse_str(name);
    if reference.schema().is_some_and(|s| s.eq_ignore_ascii_case("information_schema")) {
        return true;
    }
    crate::session::runtime::block_on(ctx.table_provider(reference))
        .is_ok_and(|t| t.downcast_ref::<RegistryTable>().is_some())
}

/// A table whose rows are read from the registry at every scan.
#[derive(Debug)]
struct RegistryTable {
    registry: Arc<Registry>,
    kind: SystemTable,
}

/// One row per (table, column) entry of `snap` that `entries` lists: the key columns
/// `table_name` and `column_name`, and each row's entry for the table's own columns.
fn keyed<'a, E>(
    snap: &'a [(String, TableMeta)],
    entries: impl Fn(&'a TableMeta) -> Vec<(&'a String, E)>,
) -> (Vec<(&'static str, Column)>, Vec<E>) {
    let (mut tables, mut columns, mut out) = (vec![], vec![], vec![]);
    for (table, meta) in snap {
        for (column, e) in entries(meta) {
            tables.push(table.clone());
            columns.push(column.clone());
            out.push(e);
        }
    }
    (vec![("table_name", Text(tables)), ("column_name", Text(columns))], out)
}

/// `anon_roles`: one row per declared column of `snap`, with its hierarchy if it has one.
fn roles(snap: &[(String, TableMeta)]) -> Vec<(&'static str, Column)> {
    let (mut cols, rows) = keyed(snap, |m| m.roles.iter().map(|(c, r)| (c, (*r, m.hierarchies.get(c)))).collect());
    cols.extend([
        ("role", Text(rows.iter().map(|(r, _)| r.name().to_string()).collect())),
        ("hierarchy", OptText(rows.iter().map(|(_, h)| h.map(|h| h.kind().name().to_string())).collect())),
        ("hierarchy_height", OptInt(rows.iter().map(|(_, h)| h.map(|h| h.height() as i64)).collect())),
    ]);
    cols
}

/// `anon_hierarchies`: one row per hierarchy of `snap`.
fn hierarchies(snap: &[(String, TableMeta)]) -> Vec<(&'static str, Column)> {
    let (mut cols, hs) = keyed(snap, |m| m.hierarchies.iter().collect());
    let widths = |h: &Hierarchy| (0..=h.height()).map(|j| h.width(j).to_string()).collect::<Vec<_>>().join(",");
    cols.extend([
        ("kind", Text(hs.iter().map(|h| h.kind().name().to_string()).collect())),
        ("height", Int(hs.iter().map(|h| h.height() as i64).collect())),
        ("leaves", Int(hs.iter().map(|h| h.leaf_count() as i64).collect())),
        ("nodes_per_level", Text(hs.iter().map(|h| widths(h)).collect())),
        ("domain_lo", OptFloat(hs.iter().map(|h| h.domain().map(|d| d.0)).collect())),
        ("domain_hi", OptFloat(hs.iter().map(|h| h.domain().map(|d| d.1)).collect())),
    ]);
    cols
}

/// `anon_release_plans`: one row per table with a declared `ipa_release` plan.
fn plans(snap: &[(String, TableMeta)]) -> Vec<(&'static str, Column)> {
    let declared: Vec<(&String, &String)> =
        snap.iter().filter_map(|(t, m)| m.release_plan.as_ref().map(|p| (t, p))).collect();
    vec![
        ("table_name", Text(declared.iter().map(|(t, _)| t.to_string()).collect())),
        ("release_plan", Text(declared.iter().map(|(_, p)| p.to_string()).collect())),
    ]
}

impl RegistryTable {
    /// The rows of `snap` (an empty snapshot gives the schema).
    fn batch_of(&self, snap: &[(String, TableMeta)]) -> Result<RecordBatch> {
        match self.kind {
            SystemTable::Roles => Ok(batch(roles(snap))?),
            SystemTable::Hierarchies => Ok(batch(hierarchies(snap))?),
            SystemTable::Plans => Ok(batch(plans(snap))?),
            SystemTable::Ledger => Ok(super::ledger_fn::ledger_table_batch(&self.registry.ledger())?),
        }
    }
}

#[async_trait]
impl TableProvider for RegistryTable {
    fn schema(&self) -> SchemaRef {
        match self.kind {
            SystemTable::Ledger => super::ledger_fn::ledger_schema(),
            SystemTable::Roles => batch(roles(&[])).expect("an empty table").schema(),
            SystemTable::Hierarchies => batch(hierarchies(&[])).expect("an empty table").schema(),
            SystemTable::Plans => batch(plans(&[])).expect("an empty table").schema(),
        }
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let t = mem_table(self.schema(), vec![self.batch_of(&self.registry.snapshot())?])?;
        t.scan(state, projection, filters, limit).await
    }
}
