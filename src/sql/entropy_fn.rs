//! `entropy_anonymize(source, output, k [, options])`: k-anonymous Q-blocks built with the
//! distance d = H(X|Y) + I(Y;Z) (options: `distance=d|ce, seed=42`). Registers the release as
//! `output` (with `class_id`) and the report as `output_report`, and returns the release.

use super::report::{Value::*, one_row};
use super::{Args, Memo, block_on, mem_table, replace_table, session_context};
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use crate::methods::entropy::{EntropyConfig, EntropyResult, anonymize};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const F: &str = "entropy_anonymize";
const SIGNATURE: &str = "entropy_anonymize(source, output, k [, 'distance=d|ce, seed=42'])";

#[derive(Debug)]
struct Entropy {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(Entropy { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for Entropy {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 3, 4)?;
        let (source, output) = a.source_output()?;
        let k = a.i64(2, "k")?;
        let options = a.opt_str(3, "options")?.unwrap_or_default();
        if k < 2 {
            return Err(AnonError::argument(F, "k", format!("must be at least 2, got {k}")).into());
        }
        let config = EntropyConfig::new(k as u64).with_options(&options)?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        // Without a seed every call draws anew, so only seeded calls are memoized.
        let key = format!("{:p}|{output}|{k}|{options}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if config.seed.is_some()
            && let Some(t) = self.memo.get(&ctx, &key)
        {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let started = Instant::now();
        let progress = self.registry.progress();
        let (res, published) = block_on(anonymize(&ctx, &source, &meta, &config, progress.as_ref()))?;
        let release = mem_table(published.schema.clone(), published.batches)?;
        let report = report(&source, &config, &res, &published.dropped, started.elapsed().as_secs_f64() * 1e3)?;
        // Everything is built: only now does the catalog change.
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn report(
    source: &str,
    config: &EntropyConfig,
    res: &EntropyResult,
    dropped: &[String],
    ms: f64,
) -> Result<Arc<dyn TableProvider>> {
    let m = &res.measures;
    let records: u64 = res.blocks.iter().map(|b| b.size()).sum();
    one_row(vec![
        ("method", Text(F.into())),
        ("source", Text(source.into())),
        ("k", Int(config.k as i64)),
        ("distance", Text(config.distance.name().into())),
        ("seed", OptInt(config.seed.map(|s| s as i64))),
        ("records", Int(records as i64)),
        ("q_blocks", Int(res.blocks.len() as i64)),
        ("q_blocks_l1", Int(m.diversity[0] as i64)),
        ("q_blocks_l2", Int(m.diversity[1] as i64)),
        ("q_blocks_l3plus", Int(m.diversity[2] as i64)),
        ("total_information_loss", Float(m.total_information_loss)),
        ("block_entropy_sum", Float(m.block_entropy_sum)),
        ("mutual_information", Float(m.mutual_information)),
        ("objective", Float(res.objective)),
        ("seeds", Int(res.stats.seeds as i64)),
        ("candidates_scored", Int(res.stats.scored as i64)),
        ("candidates_pruned", Int(res.stats.pruned as i64)),
        ("leftover_records", Int(res.stats.leftovers as i64)),
        ("dropped_columns", OptText((!dropped.is_empty()).then(|| dropped.join(", ")))),
        ("time_ms", Float(ms)),
    ])
}
