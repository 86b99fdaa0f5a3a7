//! `kanon_anonymize(source, output, k [, options])`: the globally optimal full-domain
//! k-anonymous release (options: `metric=lm|ncp|dm, suppression=2%, distinct_l=3,
//! entropy_l=2, recursive_cl=3:2, t=0.15`). Registers the release as `output` and its report
//! as `output_report` (with the time of each pass), and returns the release. The release is
//! in memory, or Parquet written by the session's executors ([`output::ParquetOutput`]).

use super::{Args, Memo, block_on, output, replace_table, session_context};
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use crate::methods::PassTimes;
use crate::methods::kanon::{KanonConfig, KanonResult, anonymize, describe_node};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const SIGNATURE: &str = "kanon_anonymize(source, output, k [, 'metric=lm, suppression=2%, distinct_l=3, entropy_l=2, recursive_cl=3:2, t=0.15, search=auto, max_nodes=100000, time_budget_ms=1000'])";

#[derive(Debug)]
struct Kanon {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf("kanon_anonymize", Arc::new(Kanon { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for Kanon {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new("kanon_anonymize", SIGNATURE, args.exprs(), 3, 4)?;
        let (source, output) = a.source_output()?;
        let k = a.i64(2, "k")?;
        let options = a.opt_str(3, "options")?.unwrap_or_default();
        if k < 1 {
            return Err(AnonError::argument("kanon_anonymize", "k", format!("must be at least 1, got {k}")).into());
        }
        let config = KanonConfig::new(k as u64).with_options(&options)?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        let key = format!("{:p}|{output}|{k}|{options}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if let Some(t) = self.memo.get(&ctx, &key) {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let started = Instant::now();
        let (res, release) = block_on(async {
            let (mut res, df) = anonymize(&ctx, &source, &meta, &config).await?;
            let start = Instant::now();
            let release = output::publish(&ctx, &output, df).await?;
            res.passes.materialize_ms = PassTimes::since(start);
            Ok::<_, AnonError>((res, release))
        })?;
        let report = report(&source, &config, &res, started.elapsed().as_secs_f64() * 1e3)?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn report(source: &str, config: &KanonConfig, res: &KanonResult, ms: f64) -> Result<Arc<dyn TableProvider>> {
    use super::report::{Value::*, one_row};
    one_row(vec![
        ("method", Text("kanon_anonymize".into())),
        ("source", Text(source.into())),
        ("node", Text(describe_node(&res.levels))),
        ("models", Text(config.models.describe())),
        ("metric", Text(config.metric.name().into())),
        ("metric_value", Float(res.loss)),
        ("suppression_limit_percent", Float(config.suppression_percent)),
        ("suppressed_records", Int(res.suppressed_records as i64)),
        ("classes", Int(res.classes as i64)),
        ("nodes_total", Int(res.nodes_total as i64)),
        ("nodes_evaluated", Int(res.nodes_evaluated as i64)),
        ("search", Text(if res.heuristic { "heuristic" } else { "optimal" }.into())),
        ("proven_optimal", Int(res.proven_optimal as i64)),
        ("loss_lower_bound", Float(res.loss_lower_bound)),
        ("bound_gap", Float(res.loss - res.loss_lower_bound)),
        ("time_ms", Float(ms)),
        ("aggregate_ms", Float(res.passes.aggregate_ms)),
        ("search_ms", Float(res.passes.search_ms)),
        ("materialize_ms", Float(res.passes.materialize_ms)),
    ])
}
