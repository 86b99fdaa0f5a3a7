//! `artuc(source, output, constraints, k, m, delta, epsilon [, options])`: (k,k^m)-anonymity of
//! an RT-dataset under a utility-constraint set (ArtUC, Algorithm 1). `constraints` names a table
//! in `verify_release`'s constraints shape (one row per constraint; `load_constraints` makes the
//! paper's sets). Options: `seed=42, pick=random|first, weights=w1:w2, small_groups=error|withhold`
//! and `variant=artuc|anytime|baseline`:
//! - `artuc` (default): Algorithm 1; when δ or ε cannot be met, the error says which and by how much;
//! - `anytime`: Algorithm 2; the merge trajectory (NCP, UL, suppressed codes per step) is
//!   registered as `output_trajectory` and the release is the last step within δ and ε, or the
//!   step given with `step=N`;
//! - `baseline`: the paper's Baseline (demographics pre-generalized to the constraint, then GenDiag).
//!
//! Registers the release as `output` and the report as `output_report`, and returns the release.

use super::report::{Value::*, one_row};
use super::{Args, Memo, block_on, mem_table, replace_table, session_context};
use crate::error::{AnonError, Result};
use crate::meta::Registry;
use crate::methods::artuc::{
    ArtucConfig, ArtucResult, ConstraintSet, RtTable, Trajectory, anonymize, anytime, baseline,
    constraints_from_batches, release,
};
use crate::methods::options;
use crate::progress::Progress;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use std::time::Instant;

const F: &str = "artuc";
const SIGNATURE: &str = "artuc(source, output, constraints, k, m, delta, epsilon [, 'seed=42, pick=random|first, \
    weights=w1:w2, small_groups=error|withhold, variant=artuc|anytime|baseline, step=N'])";

#[derive(Debug)]
struct Artuc {
    registry: Arc<Registry>,
    memo: Memo,
}

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    ctx.register_udtf(F, Arc::new(Artuc { registry, memo: Memo::default() }));
}

/// Which algorithm of the paper runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Variant {
    Artuc,
    Anytime(Option<usize>),
    Baseline,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Artuc => "artuc",
            Variant::Anytime(_) => "anytime",
            Variant::Baseline => "baseline",
        }
    }
}

/// Split the options into the method's own and the SQL function's (`variant`, `step`).
fn split_options(opts: &str) -> Result<(String, Variant)> {
    let (mut rest, mut variant, mut step) = (Vec::new(), Variant::Artuc, None);
    for (k, v) in options::pairs(F, opts)? {
        match k.as_str() {
            "variant" => {
                variant = match v.to_ascii_lowercase().as_str() {
                    "artuc" => Variant::Artuc,
                    "anytime" => Variant::Anytime(None),
                    "baseline" => Variant::Baseline,
                    _ => {
                        return Err(AnonError::argument(
                            F,
                            "variant",
                            format!("'{v}' is not artuc, anytime or baseline"),
                        ));
                    }
                }
            }
            "step" => {
                step = Some(v.parse::<usize>().map_err(|_| {
                    AnonError::argument(F, "step", format!("'{v}' is not a step number of the trajectory"))
                })?)
            }
            _ => rest.push(format!("{k}={v}")),
        }
    }
    match (variant, step) {
        (Variant::Anytime(_), s) => Ok((rest.join(", "), Variant::Anytime(s))),
        (_, Some(_)) => Err(AnonError::argument(F, "step", "only the anytime variant has steps (variant=anytime)")),
        (v, None) => Ok((rest.join(", "), v)),
    }
}

impl TableFunctionImpl for Artuc {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let a = Args::new(F, SIGNATURE, args.exprs(), 7, 8)?;
        let (source, output) = a.source_output()?;
        let constraints = a.str(2, "constraints")?;
        let (k, m, delta, epsilon) = (a.i64(3, "k")?, a.i64(4, "m")?, a.f64(5, "delta")?, a.i64(6, "epsilon")?);
        let opts = a.opt_str(7, "options")?.unwrap_or_default();
        for (name, v) in [("k", k), ("m", m), ("epsilon", epsilon)] {
            if v < 0 {
                return Err(AnonError::argument(F, name, format!("must not be negative, got {v}")).into());
            }
        }
        let (method_opts, variant) = split_options(&opts)?;
        let config = ArtucConfig::new(k as u64, m as u64, delta, epsilon as u64).with_options(&method_opts)?;
        config.validate_limits()?;
        let ctx = session_context(&args)?;
        let src = block_on(ctx.table_provider(source.as_str())).map_err(|_| AnonError::table(&source, "not found"))?;
        let cons = block_on(ctx.table_provider(constraints.as_str()))
            .map_err(|_| AnonError::table(&constraints, "not found (the constraints table)"))?;
        let key = format!(
            "{:p}|{:p}|{output}|{k}|{m}|{delta}|{epsilon}|{opts}|g{}",
            Arc::as_ptr(&src),
            Arc::as_ptr(&cons),
            self.registry.generation()
        );
        // Random record picks without a seed differ from call to call: only then is nothing memoized.
        let deterministic = config.seed.is_some() || config.pick == crate::methods::artuc::Pick::First;
        if deterministic && let Some(t) = self.memo.get(&ctx, &key) {
            return Ok(t);
        }
        let meta = self.registry.require(&source)?;
        meta.check_complete(&source)?;
        let started = Instant::now();
        let batches = block_on(async { ctx.table(source.as_str()).await?.collect().await })?;
        let table = RtTable::from_batches(&source, &meta, &batches)?;
        let cons_batches = block_on(async { ctx.table(constraints.as_str()).await?.collect().await })?;
        let cs = ConstraintSet::new(&constraints_from_batches(&constraints, &table, &cons_batches)?, &table)?;
        let progress = self.registry.progress();
        let (res, trajectory, step) = run(&table, &cs, &config, variant, progress.as_ref())?;
        let published = release::release(&table, &res)?;
        let rel = mem_table(published.schema.clone(), published.batches)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let report = report(&source, &constraints, &config, variant, step, &res, ms)?;
        let traj = trajectory.as_ref().map(trajectory_table).transpose()?;
        replace_table(&ctx, &format!("{output}_report"), report)?;
        if let Some(t) = traj {
            replace_table(&ctx, &format!("{output}_trajectory"), t)?;
        }
        replace_table(&ctx, &output, rel.clone())?;
        self.memo.put(key, &output, rel.clone(), rel.clone());
        Ok(rel)
    }
}

/// Run the chosen algorithm; for the anytime variant also its trajectory and released step.
fn run(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    variant: Variant,
    progress: &dyn Progress,
) -> Result<(ArtucResult, Option<Trajectory>, Option<usize>)> {
    match variant {
        Variant::Artuc => Ok((anonymize(table, cs, config, progress)?, None, None)),
        Variant::Baseline => Ok((baseline(table, cs, config, progress)?, None, None)),
        Variant::Anytime(step) => {
            let traj = anytime(table, cs, config, 1.0, progress)?;
            let step = match step {
                Some(s) => s,
                None => traj.choose(config.delta, config.epsilon).ok_or_else(|| no_step(&traj, config))?,
            };
            let res = traj.release(table, cs, step)?;
            Ok((res, Some(traj), Some(step)))
        }
    }
}

/// Why no step of the trajectory can be released, with the first step's measures.
fn no_step(traj: &Trajectory, config: &ArtucConfig) -> AnonError {
    let detail = traj.steps.first().map_or("the trajectory is empty".to_string(), |s| {
        format!(
            "before any merge NCP is {:.4} (delta = {}) and {} codes are suppressed (epsilon = {})",
            s.ncp, config.delta, s.suppressed_codes, config.epsilon
        )
    });
    AnonError::argument(
        F,
        "delta",
        format!(
            "no step of the any-time trajectory is within delta and epsilon: {detail}; raise a limit or choose a step with step=N"
        ),
    )
}

fn report(
    source: &str,
    constraints: &str,
    config: &ArtucConfig,
    variant: Variant,
    step: Option<usize>,
    res: &ArtucResult,
    ms: f64,
) -> Result<Arc<dyn TableProvider>> {
    let m = &res.measures;
    one_row(vec![
        ("method", Text(F.into())),
        ("variant", Text(variant.name().into())),
        ("source", Text(source.into())),
        ("constraints", Text(constraints.into())),
        ("k", Int(config.k as i64)),
        ("m", Int(config.m as i64)),
        ("delta", Float(config.delta)),
        ("epsilon", Int(config.epsilon as i64)),
        ("records", Int(m.records as i64)),
        ("clusters", Int(m.clusters as i64)),
        ("ncp", Float(m.ncp)),
        ("ncp_sum", Float(m.ncp_sum)),
        ("ul", Float(m.ul)),
        ("ul_sum", Float(m.ul_sum)),
        ("ul_gen", Float(m.ul_gen())),
        ("ul_sup", Float(m.ul_sup())),
        ("suppressed_codes", Int(m.suppressed_codes as i64)),
        ("withheld_records", Int(m.withheld_records as i64)),
        ("withheld_codes", Int(m.withheld_codes as i64)),
        ("step", OptInt(step.map(|s| s as i64))),
        ("gendiag_runs", Int(res.evaluations as i64)),
        ("seed", OptInt(config.seed.map(|s| s as i64))),
        ("time_ms", Float(ms)),
    ])
}

/// Algorithm 2's steps: `step`, `clusters`, `ncp`, `ul`, `suppressed_codes`.
fn trajectory_table(t: &Trajectory) -> Result<Arc<dyn TableProvider>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("step", DataType::Int64, false),
        Field::new("clusters", DataType::Int64, false),
        Field::new("ncp", DataType::Float64, false),
        Field::new("ul", DataType::Float64, false),
        Field::new("suppressed_codes", DataType::Int64, false),
    ]));
    let s = &t.steps;
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(0..s.len() as i64)),
        Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.clusters as i64))),
        Arc::new(Float64Array::from_iter_values(s.iter().map(|x| x.ncp))),
        Arc::new(Float64Array::from_iter_values(s.iter().map(|x| x.ul))),
        Arc::new(Int64Array::from_iter_values(s.iter().map(|x| x.suppressed_codes as i64))),
    ];
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
