//! `anon_metrics(original, release [, catalog [, 'options']])`: every information-loss metric
//! that applies to a release, one row per metric (`metric`, `value`, `detail`), and
//! `metric_value(original, release, 'lm' [, catalog])`: one metric as a one-row table.
//!
//! Roles and hierarchies come from the ORIGINAL table's declarations; the release is decoded
//! against them (src/metrics/decode.rs). Options: [`METRICS_OPTIONS`] (`ncp_weights=`,
//! `marginal_levels=`). The metrics themselves are in src/metrics/.

use super::args::Args;
use super::glue::session_context;
use super::report::{Column::*, table};
use crate::error::{AnonError, Result};
use crate::metrics::read::{self, METRICS_OPTIONS, VALUE_OPTIONS, measure};
use crate::metrics::{Metric, marginals};
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const METRICS_SIG: &str = "anon_metrics(original, release [, catalog [, options]])";
pub(super) const VALUE_SIG: &str = "metric_value(original, release, 'metric' [, catalog [, options]])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, "anon_metrics", anon_metrics);
    super::glue::register_fn(ctx, &registry, "metric_value", metric_value);
}

fn anon_metrics(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::with_options("anon_metrics", METRICS_SIG, Some(&METRICS_OPTIONS), args.exprs(), 2, 4)?;
    let (original, release) = (a.str(0, "original")?, a.str(1, "release")?);
    let catalog = a.opt_str(2, "catalog")?.filter(|s| !s.trim().is_empty());
    let options = a.opt_str(3, "options")?.unwrap_or_default();
    let meta = registry.require(&original)?;
    let options = read::metric_options(&METRICS_OPTIONS, &meta, &options)?;
    let ctx = session_context(&args)?;
    let metrics = block_on(measure(&ctx, &meta, &original, &release, catalog.as_deref(), &options))?;
    Ok(report(&metrics)?)
}

fn metric_value(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::with_options("metric_value", VALUE_SIG, Some(&VALUE_OPTIONS), args.exprs(), 3, 5)?;
    let (original, release) = (a.str(0, "original")?, a.str(1, "release")?);
    let wanted = a.str(2, "metric")?.trim().to_ascii_lowercase();
    let catalog = a.opt_str(3, "catalog")?.filter(|s| !s.trim().is_empty());
    let meta = registry.require(&original)?;
    let options = read::metric_options(&VALUE_OPTIONS, &meta, &a.opt_str(4, "options")?.unwrap_or_default())?;
    let ctx = session_context(&args)?;
    if wanted == marginals::METRIC {
        // Alone, without the other metrics' decoding and alignment: the peers' scorer asks for
        // it over million-row synthetic releases.
        meta.check_complete(&original)?;
        let attrs = marginals::attributes("metric_value", &meta, &original, &options.marginal_levels)?;
        let score = block_on(marginals::two_way_score(&ctx, &meta, &original, &release, catalog.as_deref(), &attrs))?;
        let Some((score, _)) = score else {
            return Err(AnonError::argument(
                "metric_value",
                "metric",
                format!("'{wanted}' needs two declared attributes (quasi-identifiers or sensitive) in '{original}'"),
            )
            .into());
        };
        return Ok(table(vec![("value", Float(vec![score]))])?);
    }
    let metrics = block_on(measure(&ctx, &meta, &original, &release, catalog.as_deref(), &options))?;
    let Some(found) = metrics.iter().find(|m| m.metric.eq_ignore_ascii_case(&wanted)) else {
        let names: Vec<&str> = metrics.iter().map(|m| m.metric.as_str()).collect();
        return Err(AnonError::argument(
            "metric_value",
            "metric",
            format!("'{wanted}' does not apply to this release; available: {}", names.join(", ")),
        )
        .into());
    };
    Ok(table(vec![("value", Float(vec![found.value]))])?)
}

fn report(metrics: &[Metric]) -> Result<Arc<dyn TableProvider>> {
    table(vec![
        ("metric", Text(metrics.iter().map(|m| m.metric.clone()).collect())),
        ("value", Float(metrics.iter().map(|m| m.value).collect())),
        ("detail", Text(metrics.iter().map(|m| m.detail.clone()).collect())),
    ])
}
