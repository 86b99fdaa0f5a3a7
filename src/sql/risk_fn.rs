//! `risk_report(table [, release [, 'options']])`: re-identification risk on the declared
//! quasi-identifiers, of the table itself or of a release of it, one row per measure
//! (`measure`, `value`, `detail`): prosecutor, journalist and marketer risk, sample uniques
//! and pairs, and population uniqueness (Pitman, Zayatz, SNB, Dankar's rule) for a declared
//! population. The numbers are computed in `crate::risk`; docs/risk.md gives each formula.

use super::args::Args;
use super::glue::session_context;
use super::report::{Column::*, table};
use crate::error::{AnonError, Result};
use crate::risk::Class;
use crate::risk::read::{Records, linked_classes, records};
use crate::risk::report::{OPTIONS, Options, Row, rows, suda_rows};
use crate::risk::suda::MAX_COLUMNS;
use crate::session::Registry;
use crate::session::runtime::block_on_cancellable;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

const F: &str = "risk_report";
pub(super) const SIGNATURE: &str = "risk_report(table [, release [, options]])";
/// The schema label of a differentially private release (src/methods/ipa/guarantee.rs).
const DP_LABEL: &str = "anonfusion.guarantee";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, F, risk_report);
}

fn risk_report(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::with_options(F, SIGNATURE, Some(&OPTIONS), args.exprs(), 1, 3)?;
    let original = a.str(0, "table")?;
    let release = a.opt_str(1, "release")?.filter(|s| !s.trim().is_empty());
    let options = Options::parse(&a.opt_str(2, "options")?.unwrap_or_default())?;
    let meta = registry.require(&original)?;
    let qis = quasi_identifiers(&original, &meta.quasi_identifiers(), options.qis.as_deref())?;
    if options.suda.is_some() && qis.len() > MAX_COLUMNS {
        return Err(AnonError::argument(
            F,
            "suda",
            format!("SUDA takes at most {MAX_COLUMNS} quasi-identifiers (qis=)"),
        )
        .into());
    }
    let ctx = session_context(&args)?;
    // Ctrl-C cancels the report (its GROUP BY, or SUDA's search), never the session.
    let progress = registry.progress();
    let measured =
        block_on_cancellable(progress.as_ref(), measure(&ctx, &original, release.as_deref(), &qis, &options))?;
    let mut out = rows(&measured.classes, measured.suppressed, &options)?;
    if let (Some(max_size), Some(records)) = (options.suda, &measured.records) {
        out.extend(suda_rows(records, max_size, &options, progress.as_ref())?);
    }
    Ok(result(&out)?)
}

/// What the report measures: the classes, the records left out of them, and the records
/// themselves when SUDA needs them.
struct Measured {
    classes: Vec<Class>,
    suppressed: u64,
    records: Option<Records>,
}

impl Measured {
    /// The classes of `records`, each its own population (no population table).
    fn own(records: Records, suppressed: u64) -> Measured {
        let classes = records.class_sizes().into_iter().map(|s| Class { sample: s, population: s }).collect();
        Measured { classes, suppressed, records: Some(records) }
    }
}

/// The classes to measure and the records left out of them: the table's, a release's, the
/// records a catalog proves genuine, or the table's linked to a population table.
async fn measure(
    ctx: &SessionContext,
    original: &str,
    release: Option<&str>,
    qis: &[String],
    options: &Options,
) -> Result<Measured> {
    let table = move || async move { ctx.table(original).await.map_err(|_| AnonError::table(original, "not found")) };
    match (release, &options.catalog, &options.population_table) {
        (Some(_), _, Some(_)) => Err(AnonError::argument(
            F,
            "options",
            "population_table links the table's own values; a release's labels do not match them",
        )),
        (None, Some(_), _) => Err(AnonError::argument(F, "options", "catalog= needs a release (the second argument)")),
        (None, None, Some(p)) => {
            check_columns(ctx, p, qis, "options", |q| {
                format!("population_table '{p}' has no column '{q}', a quasi-identifier of '{original}'")
            })
            .await?;
            let classes = linked_classes(ctx, original, p, qis).await?;
            // SUDA looks at the sample's own records; the population table has no part in it.
            let records = match options.suda {
                Some(_) => Some(records(table().await?, qis, false).await?.0),
                None => None,
            };
            Ok(Measured { classes, suppressed: 0, records })
        }
        (None, None, None) => {
            let (records, suppressed) = records(table().await?, qis, false).await?;
            Ok(Measured::own(records, suppressed))
        }
        (Some(r), catalog, None) => {
            check_release(ctx, original, r, qis).await?;
            let df = match catalog {
                None => ctx.table(r).await?,
                Some(c) => ctx.sql(&format!("SELECT * FROM truthful_view({}, {})", literal(r), literal(c))).await?,
            };
            let (records, suppressed) = records(df, qis, true).await?;
            Ok(Measured::own(records, suppressed))
        }
    }
}

/// A SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The declared quasi-identifiers, or the subset `qis=` names (each must be declared one).
fn quasi_identifiers(table: &str, declared: &[&str], wanted: Option<&[String]>) -> Result<Vec<String>> {
    if declared.is_empty() {
        return Err(AnonError::table(table, "declares no quasi-identifiers (declare_roles: column=qi)"));
    }
    let Some(wanted) = wanted else {
        return Ok(declared.iter().map(|q| q.to_string()).collect());
    };
    for q in wanted {
        if !declared.contains(&q.as_str()) {
            return Err(AnonError::argument(
                F,
                "options",
                format!(
                    "qis: '{q}' is not a declared quasi-identifier of '{table}' (declared: {})",
                    declared.join(", ")
                ),
            ));
        }
    }
    if wanted.is_empty() {
        return Err(AnonError::argument(F, "options", "qis= names no quasi-identifier"));
    }
    Ok(wanted.to_vec())
}

/// A release of `original`: it publishes every quasi-identifier's column, and it is not a DP
/// release (whose records are not people's: class sizes say nothing of its risk, which its
/// ε and δ bound).
async fn check_release(ctx: &SessionContext, original: &str, release: &str, qis: &[String]) -> Result<()> {
    let df =
        ctx.table(release).await.map_err(|_| AnonError::argument(F, "release", format!("'{release}' not found")))?;
    if df.schema().as_arrow().metadata().contains_key(DP_LABEL) {
        return Err(AnonError::argument(
            F,
            "release",
            format!(
                "'{release}' is a differentially private release: its records are not people's, so class sizes \
                 say nothing of re-identification; its risk is bounded by its guarantee (see ledger_report)"
            ),
        ));
    }
    check_columns(ctx, release, qis, "release", |q| {
        format!(
            "'{release}' has no column '{q}', a quasi-identifier of '{original}': is it a release of another table?"
        )
    })
    .await
}

/// Every quasi-identifier is a column of `table`; else an error on `argument`.
async fn check_columns(
    ctx: &SessionContext,
    table: &str,
    qis: &[String],
    argument: &str,
    message: impl Fn(&str) -> String,
) -> Result<()> {
    let df = ctx.table(table).await.map_err(|_| AnonError::argument(F, argument, format!("'{table}' not found")))?;
    match qis.iter().find(|q| df.schema().as_arrow().field_with_name(q).is_err()) {
        Some(q) => Err(AnonError::argument(F, argument, message(q))),
        None => Ok(()),
    }
}

fn result(rows: &[Row]) -> Result<Arc<dyn TableProvider>> {
    table(vec![
        ("measure", Text(rows.iter().map(|r| r.measure.to_string()).collect())),
        ("value", Float(rows.iter().map(|r| r.value).collect())),
        ("detail", Text(rows.iter().map(|r| r.detail.clone()).collect())),
    ])
}
