//! `ipa_release(source, output, epsilon [, options])`: IPA's differentially private microdata
//! release (options: `seed=42, t=2, split=0.1:0.3:0.3:0.3`). Registers the release as
//! `output`, the report as `output_report` and every lattice node's score and selection
//! probability (Eq. 12) as `output_nodes`, and returns the release.
//!
//! `dp_histogram(source, output, epsilon, node [, options])`: the paper's baseline, a
//! generalized DP histogram at a given node (`'1,0,2'`; options: `seed=42`). Registers the
//! release and `output_report`.
//!
//! Both charge the source's privacy budget (`set_privacy_budget`, `anon_privacy_ledger`): the
//! epsilon is reserved before any noise is drawn and recorded once the tables are built.

use super::report::{Value::*, one_row};
use super::{Args, Memo, block_on, mem_table, replace_table, session_context};
use crate::dp::ledger::{Charge, grid_units};
use crate::encode::frequency_table;
use crate::error::{AnonError, Result};
use crate::lattice::{format_levels, parse_levels};
use crate::meta::Registry;
use crate::methods::ipa::baseline::{DpHistogram, dp_histogram};
use crate::methods::ipa::release::histogram_release;
use crate::methods::ipa::search::choice_mechanism;
use crate::methods::ipa::{IpaConfig, IpaResult, anonymize};
use crate::methods::options;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const F: &str = "ipa_release";
const SIGNATURE: &str = "ipa_release(source, output, epsilon [, 'seed=42, t=2, split=0.1:0.3:0.3:0.3'])";
const H: &str = "dp_histogram";
const H_SIGNATURE: &str = "dp_histogram(source, output, epsilon, node [, 'seed=42'])";

#[derive(Debug)]
struct Ipa {
    registry: Arc<Registry>,
    memo: Memo,
}

#[derive(Debug)]
struct Histogram {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(Ipa { registry: registry.clone(), memo: Memo::default() }));
    ctx.register_udtf(H, Arc::new(Histogram { registry, memo: Memo::default() }));
}

impl TableFunctionImpl for Ipa {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 3, 4)?;
        let (source, output) = a.source_output()?;
        let epsilon = a.f64(2, "epsilon")?;
        let opts = a.opt_str(3, "options")?.unwrap_or_default();
        let config = IpaConfig::new(epsilon).with_options(&opts)?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        // Only seeded calls are memoized: a repeat returns the same release and spends nothing.
        let key = format!("{:p}|{output}|{epsilon}|{opts}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if config.seed.is_some()
            && let Some(t) = self.memo.get(&ctx, &key)
        {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let b = config.budget()?;
        let units = [b.suppression, b.insertion, b.value, b.candidates].iter().map(|&e| grid_units(e)).sum();
        let charge = Charge::epsilon(units).seeded(config.seed.is_some());
        let reservation = super::ledger_fn::reserve(&self.registry, &ctx, F, &source, charge)?;
        let started = Instant::now();
        let progress = self.registry.progress();
        let (res, published) = block_on(anonymize(&ctx, &source, &meta, &config, progress.as_ref()))?;
        let release = mem_table(published.schema.clone(), published.release)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let report = report(&source, &config, &res, &published.dropped, ms)?;
        let nodes = nodes_table(&res, b.candidates)?;
        let parts = format!(
            "suppression={}, insertion={}, value={}, candidates={}",
            b.suppression, b.insertion, b.value, b.candidates
        );
        reservation.commit(&output, F, &parts)?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &format!("{output}_nodes"), nodes)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn report(
    source: &str,
    config: &IpaConfig,
    res: &IpaResult,
    dropped: &[String],
    ms: f64,
) -> Result<Arc<dyn TableProvider>> {
    let s = &res.spent;
    one_row(vec![
        ("method", Text(F.into())),
        ("source", Text(source.into())),
        ("epsilon", Float(s.total())),
        ("epsilon_suppression", Float(s.suppression)),
        ("epsilon_insertion", Float(s.insertion)),
        ("epsilon_value", Float(s.value)),
        ("epsilon_candidates", Float(s.candidates)),
        ("t", Int(config.t as i64)),
        ("node", Text(res.node_label())),
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
        ("seed", OptInt(config.seed.map(|v| v as i64))),
        ("dropped_columns", OptText((!dropped.is_empty()).then(|| dropped.join(", ")))),
        ("time_ms", Float(ms)),
    ])
}

/// Every candidate node: its levels, height, perturbed loss and Eq. 12 selection probability.
fn nodes_table(res: &IpaResult, epsilon_candidates: f64) -> Result<Arc<dyn TableProvider>> {
    let probabilities = choice_mechanism(&res.scores, epsilon_candidates)?.probabilities();
    let levels: Vec<&Vec<u8>> = res.scores.iter().map(|s| &s.levels).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("node", DataType::Utf8, false),
        Field::new("height", DataType::Int64, false),
        Field::new("ncp", DataType::Float64, false),
        Field::new("emd", DataType::Float64, false),
        Field::new("rate", DataType::Float64, false),
        Field::new("il", DataType::Float64, false),
        Field::new("probability", DataType::Float64, false),
        Field::new("chosen", DataType::Int64, false),
    ]));
    let f =
        |g: &dyn Fn(usize) -> f64| -> ArrayRef { Arc::new(Float64Array::from_iter_values((0..levels.len()).map(g))) };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(levels.iter().map(|l| format_levels(l)))),
        Arc::new(Int64Array::from_iter_values(levels.iter().map(|l| l.iter().map(|&x| x as i64).sum()))),
        f(&|i| res.scores[i].loss.ncp),
        f(&|i| res.scores[i].loss.emd),
        f(&|i| res.scores[i].loss.rate),
        f(&|i| res.scores[i].loss.il()),
        f(&|i| probabilities[i]),
        Arc::new(Int64Array::from_iter_values(res.scores.iter().map(|s| (s.node == res.node) as i64))),
    ];
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}

impl TableFunctionImpl for Histogram {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(H, H_SIGNATURE, args.exprs(), 4, 5)?;
        let (source, output) = a.source_output()?;
        let epsilon = a.f64(2, "epsilon")?;
        let node = a.str(3, "node")?;
        let opts = a.opt_str(4, "options")?.unwrap_or_default();
        let mut seed = None;
        for (k, v) in options::pairs(H, &opts)? {
            match k.as_str() {
                "seed" => seed = Some(options::seed(H, &v)?),
                other => {
                    return Err(AnonError::argument(H, "options", format!("unknown option '{other}' (seed)")).into());
                }
            }
        }
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument(H, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        let units = grid_units(epsilon);
        if units == 0 {
            return Err(AnonError::argument(H, "epsilon", format!("must be a finite number > 0, got {epsilon}")).into());
        }
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        let key = format!("{:p}|{output}|{epsilon}|{node}|{opts}|g{}", Arc::as_ptr(&src), self.registry.generation());
        if seed.is_some()
            && let Some(t) = self.memo.get(&ctx, &key)
        {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let informative = meta.sensitive(&source)?.to_string();
        let ft = block_on(frequency_table(&ctx, &source, &meta, Some(&informative)))?;
        let heights = ft.heights();
        if levels.len() != heights.len() || levels.iter().zip(&heights).any(|(l, h)| l > h) {
            return Err(AnonError::argument(
                H,
                "node",
                format!("'{node}' is not a node of the lattice (heights {})", format_levels(&heights)),
            )
            .into());
        }
        let reservation =
            super::ledger_fn::reserve(&self.registry, &ctx, H, &source, Charge::epsilon(units).seeded(seed.is_some()))?;
        let started = Instant::now();
        let hist = dp_histogram(&ft, &levels, epsilon, seed)?;
        let schema = block_on(ctx.table(source.as_str()))?.schema().inner().clone();
        let (rel_schema, batches) = histogram_release(&ft, &schema, &hist)?;
        let release = mem_table(rel_schema, batches)?;
        let report = histogram_report(&source, &hist, seed, started.elapsed().as_secs_f64() * 1e3)?;
        reservation.commit(&output, H, &format!("counts={}", hist.epsilon))?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        replace_table(&ctx, &output, release.clone())?;
        self.memo.put(key, &output, release.clone(), release.clone());
        Ok(release)
    }
}

fn histogram_report(source: &str, h: &DpHistogram, seed: Option<u64>, ms: f64) -> Result<Arc<dyn TableProvider>> {
    one_row(vec![
        ("method", Text(H.into())),
        ("source", Text(source.into())),
        ("epsilon", Float(h.epsilon)),
        ("node", Text(format_levels(&h.levels))),
        ("cells_released", Int(h.cells.len() as i64)),
        ("released_records", Int(h.released_records as i64)),
        ("ncp", Float(h.loss.ncp)),
        ("emd", Float(h.loss.emd)),
        ("rate", Float(h.loss.rate)),
        ("il", Float(h.loss.il())),
        ("seed", OptInt(seed.map(|v| v as i64))),
        ("time_ms", Float(ms)),
    ])
}
