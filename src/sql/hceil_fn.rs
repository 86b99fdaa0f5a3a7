//! `hceil_anonymize(source, output, k [, h [, options]])`: k-anonymity under an h-ceiling with
//! counterfeit records (options: `seed=42, counterfeit_values=concealable|domain,
//! max_counterfeits=10%, search=bounded|exhaustive`). A NULL or missing h searches every node
//! for the h of least RCE. Registers the release as `output` (with `class_id`), the catalog as
//! `output_catalog` and the report as `output_report` (with the time of each pass), and
//! returns the release. With [`ParquetOutput`] the release is Parquet written by the session's
//! executors and the catalog Parquet written by the client.

use super::report::{Value::*, one_row};
use super::{Args, Memo, ParquetOutput, block_on, mem_table, output, replace_table, session_context};
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use crate::methods::PassTimes;
use crate::methods::hceil::{HceilConfig, HceilResult, anonymize};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const F: &str = "hceil_anonymize";
const SIGNATURE: &str = "hceil_anonymize(source, output, k [, h [, 'seed=42, counterfeit_values=concealable|domain, max_counterfeits=10%, search=bounded|exhaustive']])";

#[derive(Debug)]
struct Hceil {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(Hceil { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for Hceil {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 3, 5)?;
        let (source, output) = a.source_output()?;
        let k = a.i64(2, "k")?;
        let h = a.opt_f64(3, "h")?;
        let options = a.opt_str(4, "options")?.unwrap_or_default();
        if k < 2 {
            return Err(AnonError::argument(F, "k", format!("must be at least 2, got {k}")).into());
        }
        let config = HceilConfig::new(k as u64, h).with_options(&options)?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        // Without a seed every call draws anew, so only seeded calls are memoized.
        let key = format!("{:p}|{output}|{k}|{h:?}|{options}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if config.seed.is_some()
            && let Some(t) = self.memo.get(&ctx, &key)
        {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let started = Instant::now();
        let progress = self.registry.progress();
        let (res, release, catalog, dropped) = block_on(async {
            let (mut res, published) = anonymize(&ctx, &source, &meta, &config, progress.as_ref()).await?;
            let start = Instant::now();
            let rel = &published.release;
            // With Parquet output the rows are built by the session's executors from the
            // release's cells, which the client writes beside the release (a plan message could
            // not carry them at scale) and removes once the release is written; otherwise the
            // rows are built in the client, as always.
            let release = match ParquetOutput::of(&ctx) {
                Some(out) => {
                    let cells = rel.cells()?;
                    let name = format!("{output}_cells");
                    let (dir, cells) = output::write_from_client(&out, &name, cells.schema(), &[cells])?;
                    let written =
                        async { output::publish(&ctx, &output, rel.expand(ctx.read_table(cells)?)?).await }.await;
                    let _ = std::fs::remove_dir_all(&dir);
                    written?
                }
                None => mem_table(rel.schema.clone(), rel.batches()?)?,
            };
            res.passes.materialize_ms = PassTimes::since(start);
            let name = format!("{output}_catalog");
            let catalog = output::publish_batches(&ctx, &name, published.catalog.schema(), vec![published.catalog])?;
            Ok::<_, AnonError>((res, release, catalog, published.release.dropped))
        })?;
        let report = report(&source, &config, &res, &dropped, started.elapsed().as_secs_f64() * 1e3)?;
        // Everything is built: only now does the catalog change.
        replace_table(&ctx, &format!("{output}_catalog"), catalog)?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn report(
    source: &str,
    config: &HceilConfig,
    res: &HceilResult,
    dropped: &[String],
    ms: f64,
) -> Result<Arc<dyn TableProvider>> {
    one_row(vec![
        ("method", Text(F.into())),
        ("source", Text(source.into())),
        ("node", Text(res.node())),
        ("k", Int(config.k as i64)),
        ("h", Float(res.h)),
        ("h_searched", Text(if config.h.is_none() { "yes" } else { "no" }.into())),
        ("max_degree", Float(res.max_degree)),
        ("counterfeit_records", Int(res.catalog.total as i64)),
        ("catalog_rows", Int(res.catalog.entries.len() as i64)),
        ("lm", Float(res.lm)),
        ("rce", Float(res.rce)),
        ("classes", Int(res.classes as i64)),
        ("counterfeit_values", Text(config.draw.name().into())),
        ("seed", OptInt(config.seed.map(|s| s as i64))),
        ("nodes_total", Int(res.stats.nodes_total as i64)),
        ("candidate_nodes", Int(res.stats.candidates as i64)),
        ("nodes_evaluated", Int(res.stats.evaluated as i64)),
        ("nodes_rejected", Int(res.stats.rejected as i64)),
        ("dropped_columns", OptText((!dropped.is_empty()).then(|| dropped.join(", ")))),
        ("time_ms", Float(ms)),
        ("aggregate_ms", Float(res.passes.aggregate_ms)),
        ("search_ms", Float(res.passes.search_ms)),
        ("materialize_ms", Float(res.passes.materialize_ms)),
    ])
}
