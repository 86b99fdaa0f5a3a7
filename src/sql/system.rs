//! `anon_roles`, `anon_hierarchies` and `anon_privacy_ledger`: the declarations and privacy
//! budgets of every table, as live tables.

use super::mem_table;
use super::report::{Column, Column::*, batch};
use crate::meta::{Registry, TableMeta};
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

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    for kind in [SystemTable::Roles, SystemTable::Hierarchies, SystemTable::Ledger] {
        let t = RegistryTable { registry: registry.clone(), kind };
        ctx.register_table(kind.name(), Arc::new(t)).expect("system table names are free in a new session");
    }
}

#[derive(Debug, Clone, Copy)]
enum SystemTable {
    Roles,
    Hierarchies,
    Ledger,
}

impl SystemTable {
    fn name(self) -> &'static str {
        match self {
            SystemTable::Roles => "anon_roles",
            SystemTable::Hierarchies => "anon_hierarchies",
            SystemTable::Ledger => "anon_privacy_ledger",
        }
    }
}

/// A table whose rows are read from the registry at every scan.
#[derive(Debug)]
struct RegistryTable {
    registry: Arc<Registry>,
    kind: SystemTable,
}

/// `anon_roles`: one row per declared column of `snap`.
fn roles(snap: &[(String, TableMeta)]) -> Vec<(&'static str, Column)> {
    let (mut t, mut c, mut r, mut h, mut hh) = (vec![], vec![], vec![], vec![], vec![]);
    for (table, meta) in snap {
        for (col, role) in &meta.roles {
            t.push(table.clone());
            c.push(col.clone());
            r.push(role.name().to_string());
            let hier = meta.hierarchies.get(col);
            h.push(hier.map(|x| x.kind().name().to_string()));
            hh.push(hier.map(|x| x.height() as i64));
        }
    }
    vec![
        ("table_name", Text(t)),
        ("column_name", Text(c)),
        ("role", Text(r)),
        ("hierarchy", OptText(h)),
        ("hierarchy_height", OptInt(hh)),
    ]
}

/// `anon_hierarchies`: one row per hierarchy of `snap`.
fn hierarchies(snap: &[(String, TableMeta)]) -> Vec<(&'static str, Column)> {
    let (mut t, mut c, mut k, mut he, mut le, mut npl, mut lo, mut hi) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for (table, meta) in snap {
        for (col, h) in &meta.hierarchies {
            t.push(table.clone());
            c.push(col.clone());
            k.push(h.kind().name().to_string());
            he.push(h.height() as i64);
            le.push(h.leaf_count() as i64);
            let widths: Vec<String> = (0..=h.height()).map(|j| h.width(j).to_string()).collect();
            npl.push(widths.join(","));
            lo.push(h.domain().map(|d| d.0));
            hi.push(h.domain().map(|d| d.1));
        }
    }
    vec![
        ("table_name", Text(t)),
        ("column_name", Text(c)),
        ("kind", Text(k)),
        ("height", Int(he)),
        ("leaves", Int(le)),
        ("nodes_per_level", Text(npl)),
        ("domain_lo", OptFloat(lo)),
        ("domain_hi", OptFloat(hi)),
    ]
}

impl RegistryTable {
    /// The rows of `snap` (an empty snapshot gives the schema).
    fn batch_of(&self, snap: &[(String, TableMeta)]) -> Result<RecordBatch> {
        match self.kind {
            SystemTable::Roles => Ok(batch(roles(snap))?),
            SystemTable::Hierarchies => Ok(batch(hierarchies(snap))?),
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
