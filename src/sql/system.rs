//! `anon_roles`, `anon_hierarchies` and `anon_privacy_ledger`: the declarations and privacy
//! budgets of every table, as live tables.

use super::mem_table;
use crate::meta::Registry;
use async_trait::async_trait;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
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

fn roles_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("table_name", DataType::Utf8, false),
        Field::new("column_name", DataType::Utf8, false),
        Field::new("role", DataType::Utf8, false),
        Field::new("hierarchy", DataType::Utf8, true),
        Field::new("hierarchy_height", DataType::Int64, true),
    ]))
}

fn hierarchies_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("table_name", DataType::Utf8, false),
        Field::new("column_name", DataType::Utf8, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("height", DataType::Int64, false),
        Field::new("leaves", DataType::Int64, false),
        Field::new("nodes_per_level", DataType::Utf8, false),
        Field::new("domain_lo", DataType::Float64, true),
        Field::new("domain_hi", DataType::Float64, true),
    ]))
}

impl RegistryTable {
    fn batch(&self) -> Result<RecordBatch> {
        let snap = self.registry.snapshot();
        match self.kind {
            SystemTable::Roles => {
                let (mut t, mut c, mut r, mut h, mut hh) = (vec![], vec![], vec![], vec![], vec![]);
                for (table, meta) in &snap {
                    for (col, role) in &meta.roles {
                        t.push(table.clone());
                        c.push(col.clone());
                        r.push(role.name());
                        let hier = meta.hierarchies.get(col);
                        h.push(hier.map(|x| x.kind().name()));
                        hh.push(hier.map(|x| x.height() as i64));
                    }
                }
                let cols: Vec<ArrayRef> = vec![
                    Arc::new(StringArray::from(t)),
                    Arc::new(StringArray::from(c)),
                    Arc::new(StringArray::from(r)),
                    Arc::new(StringArray::from(h)),
                    Arc::new(Int64Array::from(hh)),
                ];
                Ok(RecordBatch::try_new(roles_schema(), cols)?)
            }
            SystemTable::Hierarchies => {
                let (mut t, mut c, mut k, mut he, mut le, mut npl, mut lo, mut hi) =
                    (vec![], vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
                for (table, meta) in &snap {
                    for (col, h) in &meta.hierarchies {
                        t.push(table.clone());
                        c.push(col.clone());
                        k.push(h.kind().name());
                        he.push(h.height() as i64);
                        le.push(h.leaf_count() as i64);
                        let widths: Vec<String> = (0..=h.height()).map(|j| h.width(j).to_string()).collect();
                        npl.push(widths.join(","));
                        lo.push(h.domain().map(|d| d.0));
                        hi.push(h.domain().map(|d| d.1));
                    }
                }
                let cols: Vec<ArrayRef> = vec![
                    Arc::new(StringArray::from(t)),
                    Arc::new(StringArray::from(c)),
                    Arc::new(StringArray::from(k)),
                    Arc::new(Int64Array::from(he)),
                    Arc::new(Int64Array::from(le)),
                    Arc::new(StringArray::from(npl)),
                    Arc::new(Float64Array::from(lo)),
                    Arc::new(Float64Array::from(hi)),
                ];
                Ok(RecordBatch::try_new(hierarchies_schema(), cols)?)
            }
            SystemTable::Ledger => Ok(super::ledger_fn::ledger_table_batch(&self.registry.ledger())?),
        }
    }
}

#[async_trait]
impl TableProvider for RegistryTable {
    fn schema(&self) -> SchemaRef {
        match self.kind {
            SystemTable::Roles => roles_schema(),
            SystemTable::Hierarchies => hierarchies_schema(),
            SystemTable::Ledger => super::ledger_fn::ledger_schema(),
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
        let t = mem_table(self.schema(), vec![self.batch()?])?;
        t.scan(state, projection, filters, limit).await
    }
}
