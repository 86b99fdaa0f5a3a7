//! `set_privacy_budget(table, epsilon [, 'delta=1e-6, force=true'])` ([`OPTIONS`]): the total epsilon (and delta)
//! differentially private releases of a table's rows may spend. A budget is set once, lowered
//! freely (not below what is spent) and raised only with `force`, which is recorded. Returns
//! the account's rows of `anon_privacy_ledger`, the table of every budget and charge, kept in
//! the ledger file (src/dp/ledger/).
//!
//! Also the `anon_fingerprint(col, ...)` aggregate the accounts are keyed by, and [`reserve`],
//! the one way a DP function charges the ledger.

use super::args::Args;
use super::glue::mem_table;
use super::glue::session_context;
use crate::dp::ledger::{Account, Charge, Ledger, LedgerRow, Reservation, account_of, fingerprint_udaf};
use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use crate::methods::options::{Kind, Options, opt};
use crate::numbers::significant;
use crate::session::Registry;
use crate::session::runtime::block_on_cancellable;
use datafusion::arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray, new_null_array,
};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "set_privacy_budget";
pub(super) const SIGNATURE: &str = "set_privacy_budget(table, epsilon [, options])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, F, set_budget);
    ctx.register_udaf(fingerprint_udaf().as_ref().clone());
}

/// The account `charge` of `source`'s budget would be spent from, once checked to fit (nothing
/// is written): the fingerprint of the rows of the columns a DP release reads (one aggregation
/// pass), so copies, renames and projections share it. The call reserves it with
/// [`reserve`] once its data-dependent checks have passed, before its first noise draw.
pub(crate) fn admit(
    registry: &Registry,
    ctx: &SessionContext,
    function: &str,
    source: &str,
    meta: &TableMeta,
    charge: &Charge,
) -> Result<Account> {
    // One pass over every row: Ctrl-C must reach it as it reaches the method's own passes.
    let account =
        block_on_cancellable(registry.progress().as_ref(), account_of(ctx, source, &read_columns(source, meta)?))?;
    registry.ledger().check(function, &account, charge)?;
    Ok(account)
}

/// Reserve `charge` in `account` (see [`admit`]); refused if the budget no longer has room.
pub(crate) fn reserve(registry: &Registry, function: &str, account: &Account, charge: Charge) -> Result<Reservation> {
    registry.ledger().reserve(function, account, charge)
}

/// The columns a differentially private release of `table` reads, which key its account: the
/// quasi-identifiers and the informative (sensitive) attribute as declared.
fn read_columns<'a>(table: &str, meta: &'a TableMeta) -> Result<Vec<&'a str>> {
    let mut columns = meta.quasi_identifiers();
    columns.push(meta.sensitive(table).map_err(|_| {
        AnonError::table(
            table,
            "has no declared quasi-identifiers and informative (sensitive) attribute; declare its roles first \
             (declare_roles): the privacy budget belongs to the columns a differentially private release reads",
        )
    })?);
    Ok(columns)
}

/// `set_privacy_budget`'s options.
pub(super) const OPTIONS: Options = Options {
    function: F,
    specs: &[
        opt(
            "delta",
            Kind::Float { min: 0.0, max: 1.0 },
            "0",
            "the total delta, in [0, 1), the table's (epsilon, delta) releases may spend",
        ),
        opt("force", Kind::Flag, "false", "raise a budget already set (recorded in the ledger)"),
    ],
};

fn set_budget(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::with_options(F, SIGNATURE, Some(&OPTIONS), args.exprs(), 2, 3)?;
    let (table, epsilon) = (a.str(0, "table")?, a.f64(1, "epsilon")?);
    let options = OPTIONS.parse(&a.opt_str(2, "options")?.unwrap_or_default())?;
    let (delta, force) = (options.float("delta").unwrap_or(0.0), options.flag("force").unwrap_or(false));
    super::explain::refuse_when_planning_only(F)?;
    let ctx = session_context(&args)?;
    if !ctx.table_exist(table.as_str())? {
        return Err(AnonError::table(&table, "not found").into());
    }
    let meta = registry.get(&table).unwrap_or_default();
    let account =
        block_on_cancellable(registry.progress().as_ref(), account_of(&ctx, &table, &read_columns(&table, &meta)?))?;
    let ledger = registry.ledger();
    ledger.set_budget(&account, epsilon, delta, force)?;
    let rows: Vec<LedgerRow> = ledger.rows()?.into_iter().filter(|r| r.fingerprint == account.fingerprint).collect();
    Ok(mem_table(ledger_schema(), vec![ledger_batch(&ledger, &rows)?])?)
}

pub(crate) fn ledger_schema() -> SchemaRef {
    let f = |name: &str, t: DataType, nullable: bool| Field::new(name, t, nullable);
    Arc::new(Schema::new(vec![
        f("seq", DataType::Int64, true),
        f("recorded_at", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        f("table_name", DataType::Utf8, true),
        f("event", DataType::Utf8, false),
        f("guarantee", DataType::Utf8, true),
        f("release", DataType::Utf8, true),
        f("method", DataType::Utf8, true),
        f("epsilon", DataType::Float64, true),
        f("delta", DataType::Float64, true),
        f("parts", DataType::Utf8, true),
        f("budget", DataType::Float64, true),
        f("budget_delta", DataType::Float64, true),
        f("spent", DataType::Float64, true),
        f("spent_delta", DataType::Float64, true),
        f("remaining", DataType::Float64, true),
        f("remaining_delta", DataType::Float64, true),
        f("fingerprint", DataType::Utf8, true),
        f("rows", DataType::Int64, true),
        f("seen_as", DataType::Utf8, true),
        f("ledger_path", DataType::Utf8, false),
    ]))
}

/// The rows of `anon_privacy_ledger`: every record of `ledger`, each with the ledger's path.
pub(crate) fn ledger_batch(ledger: &Ledger, rows: &[LedgerRow]) -> Result<RecordBatch> {
    let text = |f: &dyn Fn(&LedgerRow) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(rows.iter().map(f).collect::<Vec<_>>()))
    };
    // Epsilons and deltas are kept on binary grids (2^-32, 2^-64): shown to 9 significant
    // digits, an epsilon of 1 reads 1, not 0.9999999995343387 (src/numbers.rs).
    let float = |f: &dyn Fn(&LedgerRow) -> Option<f64>| -> ArrayRef {
        Arc::new(Float64Array::from(rows.iter().map(|r| f(r).map(|x| significant(x, 9))).collect::<Vec<_>>()))
    };
    let path = ledger.path().display().to_string();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(rows.iter().map(|r| Some(r.seq as i64)).collect::<Vec<_>>())),
        Arc::new(TimestampMillisecondArray::from(rows.iter().map(|r| Some(r.recorded_at_ms)).collect::<Vec<_>>())),
        text(&|r| Some(r.table.clone())),
        text(&|r| Some(r.event.clone())),
        text(&|r| r.guarantee.clone()),
        text(&|r| r.release.clone()),
        text(&|r| r.method.clone()),
        float(&|r| r.epsilon),
        float(&|r| r.delta),
        text(&|r| r.parts.clone()),
        float(&|r| r.budget),
        float(&|r| r.budget_delta),
        float(&|r| Some(r.spent)),
        float(&|r| Some(r.spent_delta)),
        float(&|r| r.remaining),
        float(&|r| r.remaining_delta),
        text(&|r| Some(r.fingerprint.clone())),
        Arc::new(Int64Array::from(rows.iter().map(|r| Some(r.rows as i64)).collect::<Vec<_>>())),
        text(&|r| Some(r.seen_as.clone())),
        text(&|_| Some(path.clone())),
    ];
    Ok(RecordBatch::try_new(ledger_schema(), cols)?)
}

/// `anon_privacy_ledger`: a first row naming the ledger file (and whether it outlives the
/// session; every other column NULL), then every record.
pub(crate) fn ledger_table_batch(ledger: &Ledger) -> Result<RecordBatch> {
    let schema = ledger_schema();
    let note = if ledger.is_persistent() {
        "kept across sessions"
    } else {
        "temporary: removed when this session ends (anonfusion::session_with_ledger keeps one)"
    };
    let header_cols: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| -> ArrayRef {
            match f.name().as_str() {
                "event" => Arc::new(StringArray::from(vec!["ledger"])),
                "parts" => Arc::new(StringArray::from(vec![note])),
                "ledger_path" => Arc::new(StringArray::from(vec![ledger.path().display().to_string()])),
                _ => new_null_array(f.data_type(), 1),
            }
        })
        .collect();
    let header = RecordBatch::try_new(schema.clone(), header_cols)?;
    let records = ledger_batch(ledger, &ledger.rows()?)?;
    Ok(concat_batches(&schema, [&header, &records])?)
}
