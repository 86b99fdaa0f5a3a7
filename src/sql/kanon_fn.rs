//! `kanon_anonymize(source, output, k [, options])`: the globally optimal full-domain
//! k-anonymous release (options: `metric=lm|ncp|dm, suppression=2%, distinct_l=3,
//! entropy_l=2, recursive_cl=3:2, t=0.15, keep_insensitive=false`). Registers the release as `output` and its report
//! as `output_report` (with the time of each pass), and returns the release. The release is
//! in memory, or Parquet written by the session's executors ([`output::ParquetOutput`]).

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use super::output;
use super::report::Value::*;
use crate::error::{AnonError, Result};
use crate::methods::PassTimes;
use crate::methods::kanon::{KanonConfig, anonymize, describe_node};
use crate::session::runtime::block_on_cancellable;
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct Kanon;

impl MethodSpec for Kanon {
    type Params = KanonConfig;
    const NAME: &'static str = "kanon_anonymize";
    const SIGNATURE: &'static str = "kanon_anonymize(source, output, k [, 'metric=lm, suppression=2%, distinct_l=3, entropy_l=2, recursive_cl=3:2, t=0.15, keep_insensitive=false, search=auto, max_nodes=100000, max_checks=N, local=suppression|recoding, importance=a|b'])";
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<KanonConfig> {
        KanonConfig::new(a.at_least(2, "k", 1)?).with_options(&a.opt_str(3, "options")?.unwrap_or_default())
    }

    fn deterministic(&self, _: &KanonConfig) -> bool {
        true
    }

    fn side_tables(&self, _: &KanonConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn run(&self, call: &Call<'_>, config: &KanonConfig) -> Result<Outputs> {
        let progress = call.registry.progress();
        let (res, release) = block_on_cancellable(progress.as_ref(), async {
            let (mut res, df) = anonymize(call.ctx, call.source, call.meta, config, progress.as_ref()).await?;
            let start = Instant::now();
            let release = output::publish(call.ctx, call.output, df).await?;
            res.passes.materialize_ms = PassTimes::since(start);
            Ok::<_, AnonError>((res, release))
        })?;
        let mut cells = vec![
            ("node", Text(describe_node(&res.levels))),
            ("models", Text(config.models.describe())),
            ("metric", Text(config.metric.name().into())),
            ("metric_value", Float(res.loss)),
            ("suppression_limit_percent", Float(config.suppression_percent)),
            ("suppressed_records", Int(res.suppressed_records as i64)),
            ("classes", Int(res.classes as i64)),
            ("nodes_total", Int(res.nodes_total as i64)),
            ("nodes_evaluated", Int(res.nodes_evaluated as i64)),
            ("dropped_columns", OptText(call.dropped_columns(config.keep_insensitive)?)),
            ("search", Text(if res.heuristic { "heuristic" } else { "optimal" }.into())),
            ("proven_optimal", Int(res.proven_optimal as i64)),
            // The work budget the search ran under (NULL: none), beside nodes_evaluated.
            ("max_checks", OptInt(res.max_checks.map(|n| n as i64))),
            ("loss_lower_bound", Float(res.loss_lower_bound)),
            ("bound_gap", Float(res.loss - res.loss_lower_bound)),
        ];
        // Local releases only, so a full-domain report keeps its columns.
        if let Some(l) = &res.local {
            cells.extend([
                ("local", Text(l.mode.name().into())),
                ("suppressed_cells", Int(l.suppressed_cells as i64)),
                ("records_with_suppressed_cells", Int(l.records_with_suppressed_cells as i64)),
                ("local_loss", Float(l.loss)),
            ]);
        }
        Outputs::new(release).with_timed_report(call, Self::NAME, cells, Some(&res.passes))
    }
}
