//! `kanon_anonymize(source, output, k [, options])`: the globally optimal full-domain
//! k-anonymous release (options: `metric=lm|ncp|dm, suppression=2%, distinct_l=3,
//! entropy_l=2, recursive_cl=3:2, t=0.15`). Registers the release as `output` and its report
//! as `output_report`, and returns the release.

use super::{Args, Memo, block_on, check_output_name, mem_table, replace_table, session_context};
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use crate::methods::kanon::{KanonConfig, KanonResult, anonymize, describe_node};
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const SIGNATURE: &str = "kanon_anonymize(source, output, k [, 'metric=lm, suppression=2%, distinct_l=3, entropy_l=2, recursive_cl=3:2, t=0.15'])";

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
        let (source, output) = (a.str(0, "source")?, a.str(1, "output")?);
        let k = a.i64(2, "k")?;
        let options = a.opt_str(3, "options")?.unwrap_or_default();
        check_output_name("kanon_anonymize", &output)?;
        if output == source {
            return Err(AnonError::argument("kanon_anonymize", "output", "must differ from the source table").into());
        }
        if k < 1 {
            return Err(AnonError::argument("kanon_anonymize", "k", format!("must be at least 1, got {k}")).into());
        }
        let config = KanonConfig::new(k as u64).with_options(&options)?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        let key = format!("{:p}|{output}|{k}|{options}", Arc::as_ptr(&src));
        if let Some(t) = self.memo.get(&ctx, &key) {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let started = Instant::now();
        let (res, release) = block_on(async {
            let (res, df) = anonymize(&ctx, &source, &meta, &config).await?;
            let schema = df.schema().inner().clone();
            let parts = df.collect_partitioned().await?;
            Ok::<_, AnonError>((res, Arc::new(MemTable::try_new(schema, parts)?) as Arc<dyn TableProvider>))
        })?;
        let report = report(&source, &config, &res, started.elapsed().as_secs_f64() * 1e3)?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn report(source: &str, config: &KanonConfig, res: &KanonResult, ms: f64) -> Result<Arc<dyn TableProvider>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("method", DataType::Utf8, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("node", DataType::Utf8, false),
        Field::new("models", DataType::Utf8, false),
        Field::new("metric", DataType::Utf8, false),
        Field::new("metric_value", DataType::Float64, false),
        Field::new("suppression_limit_percent", DataType::Float64, false),
        Field::new("suppressed_records", DataType::Int64, false),
        Field::new("classes", DataType::Int64, false),
        Field::new("nodes_total", DataType::Int64, false),
        Field::new("nodes_evaluated", DataType::Int64, false),
        Field::new("time_ms", DataType::Float64, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["kanon_anonymize"])),
        Arc::new(StringArray::from(vec![source])),
        Arc::new(StringArray::from(vec![describe_node(&res.levels)])),
        Arc::new(StringArray::from(vec![config.models.describe()])),
        Arc::new(StringArray::from(vec![config.metric.name()])),
        Arc::new(Float64Array::from(vec![res.loss])),
        Arc::new(Float64Array::from(vec![config.suppression_percent])),
        Arc::new(Int64Array::from(vec![res.suppressed_records as i64])),
        Arc::new(Int64Array::from(vec![res.classes as i64])),
        Arc::new(Int64Array::from(vec![res.nodes_total as i64])),
        Arc::new(Int64Array::from(vec![res.nodes_evaluated as i64])),
        Arc::new(Float64Array::from(vec![ms])),
    ];
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
