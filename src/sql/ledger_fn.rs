//! `set_privacy_budget(table, epsilon)`: the total epsilon differentially private releases of a
//! table may spend. Returns the table's rows of `anon_privacy_ledger`, the live table of every
//! budget and every release's charge (src/dp/ledger.rs).

use super::{Args, mem_table, session_context};
use crate::dp::ledger::LedgerRow;
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "set_privacy_budget";
const SIGNATURE: &str = "set_privacy_budget(table, epsilon)";

#[derive(Debug)]
struct SetBudget {
    registry: Arc<Registry>,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(SetBudget { registry }));
}

impl TableFunctionImpl for SetBudget {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 2, 2)?;
        let (table, epsilon) = (a.str(0, "table")?, a.f64(1, "epsilon")?);
        let ctx = session_context(&args)?;
        if !ctx.table_exist(table.as_str())? {
            return Err(AnonError::table(&table, "not found").into());
        }
        self.registry.ledger().set_budget(&table, epsilon)?;
        let rows: Vec<LedgerRow> = self.registry.ledger().rows().into_iter().filter(|r| r.table == table).collect();
        Ok(mem_table(ledger_schema(), vec![ledger_batch(&rows)?])?)
    }
}

pub fn ledger_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("table_name", DataType::Utf8, false),
        Field::new("budget", DataType::Float64, true),
        Field::new("release", DataType::Utf8, true),
        Field::new("method", DataType::Utf8, true),
        Field::new("epsilon", DataType::Float64, true),
        Field::new("parts", DataType::Utf8, true),
        Field::new("spent", DataType::Float64, false),
        Field::new("remaining", DataType::Float64, true),
        Field::new("recorded_at", DataType::Timestamp(TimeUnit::Millisecond, None), true),
    ]))
}

pub fn ledger_batch(rows: &[LedgerRow]) -> Result<RecordBatch> {
    let spend = |f: &dyn Fn(&crate::dp::ledger::Spend) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(rows.iter().map(|r| r.spend.as_ref().and_then(f)).collect::<Vec<_>>()))
    };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(rows.iter().map(|r| r.table.clone()).collect::<Vec<_>>())),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.budget).collect::<Vec<_>>())),
        spend(&|s| Some(s.release.clone())),
        spend(&|s| Some(s.method.clone())),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.spend.as_ref().map(|s| s.epsilon)).collect::<Vec<_>>())),
        spend(&|s| Some(s.parts.clone())),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.spent).collect::<Vec<_>>())),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.remaining).collect::<Vec<_>>())),
        Arc::new(TimestampMillisecondArray::from(
            rows.iter().map(|r| r.spend.as_ref().map(|s| s.recorded_at_ms)).collect::<Vec<_>>(),
        )),
    ];
    Ok(RecordBatch::try_new(ledger_schema(), cols)?)
}
