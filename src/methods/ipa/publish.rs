//! What an `ipa_release` or `dp_histogram` call publishes, as one [`Release`]: the release
//! (labelled with its guarantee), the report (the guarantee, epsilon and its parts, delta, the
//! node, the parameters, and numbers computed from the release itself: nothing about the
//! original, no seed) and, with `diagnostics=true` only, `diagnostics` (exact counts and IL
//! against the original) and `diagnostics_nodes` (every candidate node), first column
//! `not_for_publication`.

use super::adaptive::{AdaptiveConfig, AdaptiveRelease};
use super::call::{self, CallOptions, Hooks, Mode, Outcome};
use super::histogram::Realized;
use super::outcome::{NodeDiagnostics, least_published};
use super::sound::{DpConfig, DpRelease};
use super::{IpaConfig, IpaResult};
use crate::encode::source::Source;
use crate::error::Result;
use crate::lattice::format_levels;
use crate::methods::PassTimes;
use crate::methods::contract::{Column, NOT_FOR_PUBLICATION, Release, Side, Value, Value::*, batch};
use std::time::Instant;

/// `ipa_release` on a read source.
pub(crate) async fn ipa_release(source: &Source, call: &CallOptions, hooks: Hooks<'_>) -> Result<Release> {
    let start = Instant::now();
    let (outcome, published) = call::ipa_release(source, call, hooks.progress, hooks.before_noise).await?;
    let ms = PassTimes::since(start);
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
        ("released_records", Int(published.records)),
        ("dropped_columns", OptText(published.dropped_columns())),
    ]);
    let release = Release::untimed(published.rows, cells);
    if !call.diagnostics {
        return Ok(release);
    }
    summary.push(("time_ms", Float(ms)));
    let release = release.with("diagnostics", Side::Row(summary));
    match nodes {
        Some(nodes) => Ok(release.with("diagnostics_nodes", nodes_table(nodes)?)),
        None => Ok(release),
    }
}

/// `dp_histogram` on a read source at node `levels`.
pub(crate) async fn histogram_release(
    source: &Source,
    levels: &[u8],
    epsilon: f64,
    call: &CallOptions,
    hooks: Hooks<'_>,
) -> Result<Release> {
    let start = Instant::now();
    let (res, published) = call::histogram_release(source, levels, epsilon, call, hooks).await?;
    let ms = PassTimes::since(start);
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
    cells.push(("released_records", Int(published.records)));
    let release = Release::untimed(published.rows, cells);
    if !call.diagnostics {
        return Ok(release);
    }
    let mut cells = realized_cells(&res.realized, res.histogram.released_records);
    cells.push(("time_ms", Float(ms)));
    Ok(release.with("diagnostics", Side::Row(cells)))
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
fn nodes_table(d: NodeDiagnostics) -> Result<Side> {
    let levels = &d.levels;
    let mut columns = vec![
        ("not_for_publication", Column::Text(levels.iter().map(|_| NOT_FOR_PUBLICATION.to_string()).collect())),
        ("node", Column::Text(levels.iter().map(|l| format_levels(l)).collect())),
        ("height", Column::Int(levels.iter().map(|l| l.iter().map(|&x| x as i64).sum()).collect())),
    ];
    columns.extend(d.columns.into_iter().map(|(name, values)| (name, Column::Float(values))));
    columns.push(("chosen", Column::Int(d.chosen.iter().map(|&c| c as i64).collect())));
    let batch = batch(columns)?;
    Ok(Side::Memory(batch.schema(), vec![batch]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::contract::Rows;
    use crate::progress::Silent;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The rows a release holds, and that its report's `released_records` counts them.
    fn released_rows(release: &Release) -> i64 {
        let Rows::Classes(cells) = &release.rows else { panic!("a sound IPA release is class cells") };
        let rows = cells.rows() as i64;
        assert!(matches!(release.cell("released_records"), Some(Int(n)) if *n == rows));
        rows
    }

    /// Both entry points read a source built from batches, with no session, call the hook
    /// before noise is drawn, and return the release with its guarantee in the report.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_dp_release_without_a_session() {
        let source = crate::methods::contract::testing::nps();
        let reserved = AtomicBool::new(false);
        let reserve = || {
            reserved.store(true, Ordering::SeqCst);
            Ok(())
        };
        let hooks = || Hooks { progress: &Silent, before_noise: &reserve };
        let call = CallOptions::ipa(1.0, "seed=5, diagnostics=true").unwrap();
        let release = ipa_release(&source, &call, hooks()).await.unwrap();
        assert!(reserved.swap(false, Ordering::SeqCst), "no reservation before the noise");
        assert!(matches!(release.cell("guarantee"), Some(Text(g)) if g == &call.statement()));
        assert!(released_rows(&release) > 0);
        assert!(release.side.iter().any(|(s, t)| *s == "diagnostics" && matches!(t, Side::Row(_))));
        let levels = vec![1; source.meta().quasi_identifiers().len()];
        let call = CallOptions::histogram(1.0, "seed=5").unwrap();
        let release = histogram_release(&source, &levels, 1.0, &call, hooks()).await.unwrap();
        assert!(reserved.load(Ordering::SeqCst), "no reservation before the noise");
        assert!(released_rows(&release) > 0);
        assert!(release.side.is_empty(), "diagnostics are opt-in");
    }
}
