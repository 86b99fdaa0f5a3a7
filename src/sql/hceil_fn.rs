//! `hceil_anonymize(source, output, k [, h [, options]])`: k-anonymity under an h-ceiling with
//! counterfeit records (options: [`crate::methods::hceil::OPTIONS`]). A NULL or missing h
//! searches every node for the h of least RCE.
//! Registers the release as `output` (with `class_id`), the catalog as `output_catalog` and the
//! report as `output_report` (with the time of each pass), and returns the release. With
//! `diagnostics=true` only, `output_diagnostics`: numbers the release does not show (suppressed
//! records, the objective's value), first column `not_for_publication`. With [`ParquetOutput`] the release is Parquet written by the session's
//! executors and the catalog Parquet written by the client.

use super::args::Args;
use super::glue::mem_table;
use super::method::{Call, MethodSpec, Outputs};
use super::output;
use super::output::ParquetOutput;
use super::report::{Value::*, one_row, seeded};
use crate::error::{AnonError, Result};
use crate::methods::PassTimes;
use crate::methods::hceil::release::ClassCells;
use crate::methods::hceil::{HceilConfig, anonymize};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;
use datafusion::catalog::TableProvider;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct Hceil;

impl MethodSpec for Hceil {
    type Params = HceilConfig;
    const NAME: &'static str = "hceil_anonymize";
    const SIGNATURE: &'static str = "hceil_anonymize(source, output, k [, h [, options]])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::hceil::OPTIONS);
    const ARITY: (usize, usize) = (3, 5);

    fn parse(&self, a: &Args) -> Result<HceilConfig> {
        HceilConfig::new(a.at_least(2, "k", 2)?, a.opt_f64(3, "h")?)
            .with_options(&a.opt_str(4, "options")?.unwrap_or_default())
    }

    /// Without a seed every call draws anew.
    fn deterministic(&self, config: &HceilConfig) -> bool {
        config.seed.is_some()
    }

    fn side_tables(&self, config: &HceilConfig) -> Vec<&'static str> {
        if config.diagnostics { vec!["catalog", "report", "diagnostics"] } else { vec!["catalog", "report"] }
    }

    fn seed(&self, config: &HceilConfig) -> Option<u64> {
        config.seed
    }

    fn run(&self, call: &Call<'_>, config: &HceilConfig) -> Result<Outputs> {
        let progress = call.registry.progress();
        let (res, release, catalog, dropped) = block_on_cancellable(progress.as_ref(), async {
            let (mut res, published) = anonymize(call.ctx, call.source, call.meta, config, progress.as_ref()).await?;
            let start = Instant::now();
            let release = rows(call, &published.release).await?;
            res.passes.materialize_ms = PassTimes::since(start);
            let name = call.side_name("catalog");
            let catalog =
                output::publish_batches(call.ctx, &name, published.catalog.schema(), vec![published.catalog])?;
            Ok::<_, AnonError>((res, release, catalog, published.release.dropped))
        })?;
        let dropped = crate::release::dropped_list(&dropped);
        let mut out = Outputs::new(release).with("catalog", catalog);
        if config.diagnostics {
            out = out.with("diagnostics", diagnostics(&res)?);
        }
        out.with_timed_report(
            call,
            Self::NAME,
            vec![
                ("node", Text(res.node())),
                ("k", Int(config.k as i64)),
                ("h", Float(res.h)),
                ("h_searched", Text(if config.h.is_none() { "yes" } else { "no" }.into())),
                ("max_degree", Float(res.best.max_degree)),
                ("counterfeit_records", Int(res.best.catalog.total as i64)),
                ("catalog_rows", Int(res.best.catalog.entries.len() as i64)),
                ("lm", Float(res.best.lm)),
                ("lm_intervals", Float(res.best.lm_intervals)),
                ("rce", Float(res.best.rce)),
                ("classes", Int(res.best.classes as i64)),
                ("counterfeit_values", Text(config.draw.name().into())),
                ("objective", Text(config.objective.name().into())),
                // The limit, never the count: how many records were suppressed needs the
                // source's size, which the release does not show (output_diagnostics has it).
                ("suppression_limit_percent", Float(config.suppression_percent)),
                seeded(config.seed),
                ("nodes_total", Int(res.stats.nodes_total as i64)),
                ("candidate_nodes", Int(res.stats.candidates as i64)),
                ("nodes_evaluated", Int(res.stats.evaluated as i64)),
                ("nodes_rejected", Int(res.stats.rejected as i64)),
                ("dropped_columns", OptText(dropped)),
            ],
            Some(&res.passes),
        )
    }
}

/// Exact numbers of the original the release does not show: opt-in, never for publication.
fn diagnostics(res: &crate::methods::hceil::HceilResult) -> Result<Arc<dyn TableProvider>> {
    one_row(vec![
        ("not_for_publication", Text(super::report::NOT_FOR_PUBLICATION.into())),
        ("suppressed_records", Int(res.best.suppressed_records as i64)),
        ("suppressed_classes", Int(res.best.suppressed.iter().filter(|&&s| s).count() as i64)),
        ("objective_value", Float(res.best.key.0)),
        ("objective_tiebreak", Float(res.best.key.1)),
        ("lm_with_suppressed", Float(res.counting_suppressed(res.best.lm))),
        ("lm_intervals_with_suppressed", Float(res.counting_suppressed(res.best.lm_intervals))),
    ])
}

/// The release's rows. With Parquet output they are built by the session's executors from the
/// release's cells, which the client writes beside the release (a plan message could not
/// carry them at scale) and removes once the release is written; otherwise in the client.
async fn rows(call: &Call<'_>, rel: &ClassCells) -> Result<Arc<dyn TableProvider>> {
    let Some(out) = ParquetOutput::of(call.ctx) else {
        return mem_table(rel.schema.clone(), rel.batches()?);
    };
    let cells = rel.cells()?;
    let (dir, cells) = output::write_from_client(&out, &call.side_name("cells"), cells.schema(), &[cells])?;
    let written =
        async { output::publish(call.ctx, call.output, rel.expand(call.ctx.read_table(cells)?)?).await }.await;
    let _ = std::fs::remove_dir_all(&dir);
    written
}
