//! `ipa_release(source, output, epsilon [, options])` and `dp_histogram(source, output,
//! epsilon, node [, options])`: specs only. Options and the pipeline come from
//! `methods::ipa::call`, the charge, the guarantee statement and the candidate nodes'
//! diagnostics (Eq. 12) from `methods::ipa::outcome`; this file names the tables' cells:
//!
//! - `output`: the release, its Arrow schema metadata `anonfusion.guarantee` saying what it is;
//! - `output_report`: the guarantee, epsilon and its parts, delta, the node, the parameters,
//!   and numbers computed from the release itself (nothing about the original, no seed);
//! - with `diagnostics=true` only: `output_diagnostics` (exact counts and IL against the
//!   original) and `output_diagnostics_nodes` (every candidate node), first column
//!   `not_for_publication`.
//!
//! The epsilon is reserved in the ledger before any noise is drawn and recorded once the
//! tables are built.

use super::args::Args;
use super::glue::mem_table;
use super::method::{Call, MethodSpec, Outputs};
use super::report::{Column, NOT_FOR_PUBLICATION, Value, Value::*, one_row, table};
use crate::dp::ledger::{Charge, epsilon_units};
use crate::error::{AnonError, Result};
use crate::lattice::{format_levels, parse_levels};
use crate::meta::TableMeta;
use crate::methods::ipa::adaptive::{AdaptiveConfig, AdaptiveRelease};
use crate::methods::ipa::call::{self, CallOptions, HISTOGRAM_OPTIONS, IPA_OPTIONS, Mode, Outcome};
use crate::methods::ipa::histogram::Realized;
use crate::methods::ipa::outcome::{NodeDiagnostics, least_published};
use crate::methods::ipa::sound::{DpConfig, DpRelease};
use crate::methods::ipa::{IpaConfig, IpaResult};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;
use datafusion::catalog::TableProvider;
use std::sync::Arc;

const F: &str = "ipa_release";
const H: &str = "dp_histogram";

/// `ipa_release(source, output, epsilon [, options])`.
#[derive(Debug)]
pub(crate) struct Ipa;

impl MethodSpec for Ipa {
    /// (epsilon, the options' text, the options parsed without the table's declared plan).
    type Params = (f64, String, CallOptions);
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "ipa_release(source, output, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&IPA_OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        // The grid's limits, before the options: 1e308 is an error, not a clamp.
        epsilon_units(F, epsilon)?;
        let text = a.opt_str(3, "options")?.unwrap_or_default();
        let call = CallOptions::ipa_unresolved(epsilon, &text)?;
        Ok((epsilon, text, call))
    }

    /// Only seeded calls are memoized: a repeat returns the same release and spends nothing.
    fn deterministic(&self, (_, _, call): &Self::Params) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics", "diagnostics_nodes"]
    }

    fn charge(
        &self,
        (epsilon, text, _): &Self::Params,
        source: &str,
        meta: &TableMeta,
    ) -> Result<Option<(Charge, String)>> {
        let call = CallOptions::ipa_declared(*epsilon, text, meta.release_plan.as_deref())?;
        call.check_size(F, source, meta, None)?;
        call.ipa_charge().map(Some)
    }

    fn seed(&self, (_, _, call): &Self::Params) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (epsilon, text, _): &Self::Params) -> Result<Outputs> {
        let call = &CallOptions::ipa_declared(*epsilon, text, c.meta.release_plan.as_deref())?;
        let progress = c.registry.progress();
        let (outcome, published) = block_on_cancellable(
            progress.as_ref(),
            call::ipa_release(c.ctx, c.source, c.meta, call, progress.as_ref(), &|| c.reserve_budget()),
        )?;
        let ms = c.elapsed_ms();
        let release = mem_table(published.schema.clone(), published.batches.clone())?;
        let (report, mut summary, nodes) = match (&outcome, &call.mode) {
            (Outcome::Paper(res), Mode::Paper(config)) => {
                (paper_report(res, config), paper_summary(res), Some(NodeDiagnostics::paper(res, config)?))
            }
            (Outcome::Sound(res), Mode::Sound(config)) => {
                let mut summary = realized_cells(&res.realized, res.histogram.released_records);
                summary.push(("chosen_probability", Float(res.probabilities[res.chosen])));
                (sound_report(res, config), summary, Some(NodeDiagnostics::sound(res)))
            }
            (Outcome::Adaptive(res), Mode::Adaptive(_)) => {
                let summary = realized_cells(&res.realized, res.released_records);
                (adaptive_report(res, &res.plan), summary, None)
            }
            _ => unreachable!("the outcome follows the mode"),
        };
        let mut cells = vec![("guarantee", Text(call.statement()))];
        cells.extend(per_unit(call, report));
        cells.extend([
            ("released_records", Int(published.rows())),
            ("dropped_columns", OptText(published.dropped_columns())),
        ]);
        let out = Outputs::new(release).with_report(c, F, cells)?;
        if !call.diagnostics {
            return Ok(out);
        }
        summary.push(("time_ms", Float(ms)));
        let out = out.with("diagnostics", one_row(summary)?);
        match nodes {
            Some(nodes) => Ok(out.with("diagnostics_nodes", nodes_table(nodes)?)),
            None => Ok(out),
        }
    }
}

/// A report's cells at the privacy unit's level: every `epsilon*` cell (the mechanisms run at a
/// per-row ε) times the rows a unit may contribute, then `privacy_unit` and
/// `max_rows_per_unit` (NULL without a unit).
fn per_unit(call: &CallOptions, cells: Vec<(&'static str, Value)>) -> Vec<(&'static str, Value)> {
    let factor = call.rows_per_unit() as f64;
    let mut out: Vec<(&'static str, Value)> = cells
        .into_iter()
        .map(|(name, v)| match v {
            Float(e) if name.starts_with("epsilon") => (name, Float(e * factor)),
            v => (name, v),
        })
        .collect();
    out.push(("privacy_unit", OptText(call.unit.as_ref().map(|u| u.0.clone()))));
    out.push(("max_rows_per_unit", OptInt(call.unit.as_ref().map(|u| u.1 as i64))));
    out
}

/// The adaptive partition's report cells between `guarantee` and `released_records`: its
/// public parameters, budgets, and counts read off the release (classes per depth).
fn adaptive_report(res: &AdaptiveRelease, c: &AdaptiveConfig) -> Vec<(&'static str, Value)> {
    let b = &res.budget;
    vec![
        ("epsilon", Float(b.total())),
        ("epsilon_root", Float(b.root())),
        ("epsilon_partition", Float(b.partition())),
        ("epsilon_coarse", Float(b.coarse)),
        ("epsilon_cells", Float(b.cells)),
        ("delta", Float(0.0)),
        ("threshold", OptInt(Some(c.floor.max(1) as i64))),
        ("node", Text(format!("adaptive from {}", format_levels(&c.root)))),
        ("steps", Text(c.steps_text())),
        ("theta", Text(c.theta_text())),
        ("classes", Int(res.classes.len() as i64)),
        ("classes_by_depth", Text(res.classes_by_depth())),
        ("released_cells", Int(res.cells.len() as i64)),
    ]
}

/// The paper's report cells between `guarantee` and `released_records`.
fn paper_report(res: &IpaResult, config: &IpaConfig) -> Vec<(&'static str, Value)> {
    let s = &res.spent;
    vec![
        ("epsilon", Float(s.total())),
        ("epsilon_suppression", Float(s.suppression)),
        ("epsilon_insertion", Float(s.insertion)),
        ("epsilon_value", Float(s.value)),
        ("epsilon_candidates", Float(s.candidates)),
        ("delta", Float(0.0)),
        ("t", Int(config.t as i64)),
        ("node", Text(res.node_label())),
    ]
}

/// The sound modes' report cells between `guarantee` and `released_records`.
fn sound_report(res: &DpRelease, c: &DpConfig) -> Vec<(&'static str, Value)> {
    vec![
        ("epsilon", Float(res.epsilon_selection + res.epsilon_counts)),
        ("epsilon_selection", Float(res.epsilon_selection)),
        ("epsilon_counts", Float(res.epsilon_counts)),
        ("delta", Float(c.guarantee.delta())),
        ("threshold", OptInt(Some(least_published(res.mode)))),
        ("node", Text(format_levels(&res.histogram.levels))),
        ("selection", Float(c.selection)),
        ("noise_weight", Float(c.noise_weight)),
        ("class_weight", Float(c.class_weight)),
        ("max_cells", Int(c.max_cells as i64)),
        ("candidates", Int(res.candidates.len() as i64)),
        ("released_cells", Int(res.histogram.cells.len() as i64)),
    ]
}

/// The paper's exact diagnostics (never published), `time_ms` to come.
fn paper_summary(res: &IpaResult) -> Vec<(&'static str, Value)> {
    vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("released_records", Int(res.released_records as i64)),
        ("suppressed_records", Int(res.suppressed_records as i64)),
        ("suppressed_classes", Int(res.suppressed_classes as i64)),
        ("withheld_records", Int(res.withheld_records as i64)),
        ("counterfeit_records", Int(res.counterfeit_records as i64)),
        ("ncp", Float(res.loss.ncp)),
        ("emd", Float(res.loss.emd)),
        ("rate", Float(res.loss.rate)),
        ("il", Float(res.il())),
        ("nodes_scored", Int(res.scores.len() as i64)),
    ]
}

/// The exact diagnostics of a released histogram (never published), `time_ms` to come; the
/// sound modes add the chosen node's selection probability.
fn realized_cells(r: &Realized, released: u64) -> Vec<(&'static str, Value)> {
    vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("released_records", Int(released as i64)),
        ("withheld_records", Int(r.withheld as i64)),
        ("counterfeit_records", Int(r.counterfeit as i64)),
        ("ncp", Float(r.loss.ncp)),
        ("emd", Float(r.loss.emd)),
        ("rate", Float(r.loss.rate)),
        ("il", Float(r.loss.il())),
    ]
}

/// Every candidate node: `not_for_publication`, node, height, the method's columns, chosen.
fn nodes_table(d: NodeDiagnostics) -> Result<Arc<dyn TableProvider>> {
    let levels = &d.levels;
    let mut columns = vec![
        ("not_for_publication", Column::Text(levels.iter().map(|_| NOT_FOR_PUBLICATION.to_string()).collect())),
        ("node", Column::Text(levels.iter().map(|l| format_levels(l)).collect())),
        ("height", Column::Int(levels.iter().map(|l| l.iter().map(|&x| x as i64).sum()).collect())),
    ];
    columns.extend(d.columns.into_iter().map(|(name, values)| (name, Column::Float(values))));
    columns.push(("chosen", Column::Int(d.chosen.iter().map(|&c| c as i64).collect())));
    table(columns)
}

/// `dp_histogram(source, output, epsilon, node [, options])`.
#[derive(Debug)]
pub(crate) struct Histogram;

impl MethodSpec for Histogram {
    /// (epsilon, node levels, parsed options).
    type Params = (f64, Vec<u8>, CallOptions);
    const NAME: &'static str = H;
    const SIGNATURE: &'static str = "dp_histogram(source, output, epsilon, node [, options])";
    const OPTIONS: Option<&'static Options> = Some(&HISTOGRAM_OPTIONS);
    const ARITY: (usize, usize) = (4, 5);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        epsilon_units(H, epsilon)?;
        let node = a.str(3, "node")?;
        let call = CallOptions::histogram(epsilon, &a.opt_str(4, "options")?.unwrap_or_default())?;
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument(H, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        Ok((epsilon, levels, call))
    }

    fn deterministic(&self, (_, _, call): &Self::Params) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics"]
    }

    fn charge(
        &self,
        (epsilon, levels, call): &Self::Params,
        source: &str,
        meta: &TableMeta,
    ) -> Result<Option<(Charge, String)>> {
        call.check_size(H, source, meta, Some(levels))?;
        call.histogram_charge(*epsilon).map(Some)
    }

    fn seed(&self, (_, _, call): &Self::Params) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (epsilon, levels, call): &Self::Params) -> Result<Outputs> {
        let progress = c.registry.progress();
        let (res, published) = block_on_cancellable(
            progress.as_ref(),
            call::histogram_release(
                c.ctx,
                c.source,
                c.meta,
                levels,
                *epsilon,
                call,
                call::Hooks { progress: progress.as_ref(), before_noise: &|| c.reserve_budget() },
            ),
        )?;
        let ms = c.elapsed_ms();
        let release = mem_table(published.schema.clone(), published.batches.clone())?;
        let mut cells = vec![("guarantee", Text(call.statement()))];
        cells.extend(per_unit(
            call,
            vec![
                ("epsilon", Float(res.epsilon)),
                ("delta", Float(call.guarantee().delta())),
                ("threshold", OptInt(Some(least_published(res.mode)))),
                ("node", Text(format_levels(&res.histogram.levels))),
                ("released_cells", Int(res.histogram.cells.len() as i64)),
            ],
        ));
        cells.push(("released_records", Int(published.rows())));
        let out = Outputs::new(release).with_report(c, H, cells)?;
        if !call.diagnostics {
            return Ok(out);
        }
        let mut cells = realized_cells(&res.realized, res.histogram.released_records);
        cells.push(("time_ms", Float(ms)));
        Ok(out.with("diagnostics", one_row(cells)?))
    }
}
