//! `artuc(source, output, constraints, k, m, delta, epsilon [, options])`: (k,k^m)-anonymity of
//! an RT-dataset under a utility-constraint set (ArtUC, Algorithm 1). `constraints` names a table
//! in `verify_release`'s constraints shape (one row per constraint; `load_constraints` makes the
//! paper's sets). Options: [`SQL_OPTIONS`], among them `variant=artuc|anytime|baseline`:
//! - `artuc` (default): Algorithm 1; when δ or ε cannot be met, the error says which and by how much;
//! - `anytime`: Algorithm 2; the merge trajectory (NCP, UL, suppressed codes per step) is
//!   registered as `output_trajectory` and the release is the last step within δ and ε, or the
//!   step given with `step=N`;
//! - `baseline`: the paper's Baseline (demographics pre-generalized to the constraint, then GenDiag).
//!
//! Registers the release as `output` and the report as `output_report`, and returns the release.

use super::args::Args;
use super::glue::in_order;
use super::glue::mem_table;
use super::method::{Call, MethodSpec, Outputs};
use super::report::Value::{self, *};
use super::report::seeded;
use crate::error::{AnonError, Result};
use crate::methods::artuc::variant::SQL_OPTIONS;
use crate::methods::artuc::{
    ArtucConfig, KmConfig, Measures, Source, Trajectory, Variant, call as artuc_call, release,
};
use crate::methods::options::Options;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use std::sync::Arc;

const F: &str = "artuc";

/// Parsed arguments: the constraints table, the method's configuration and the variant.
#[derive(Debug)]
pub(crate) struct Params {
    constraints: String,
    config: ArtucConfig,
    variant: Variant,
}

#[derive(Debug)]
pub(crate) struct Artuc;

impl MethodSpec for Artuc {
    type Params = Params;
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "artuc(source, output, constraints, k, m, delta, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&SQL_OPTIONS);
    const ARITY: (usize, usize) = (7, 8);

    fn parse(&self, a: &Args) -> Result<Params> {
        let constraints = a.str(2, "constraints")?;
        let (k, m, delta, epsilon) = km_args(F, a, 3)?;
        let options = SQL_OPTIONS.parse(&a.opt_str(7, "options")?.unwrap_or_default())?;
        let variant = Variant::of(&options)?;
        let config = ArtucConfig::new(k, m, delta, epsilon).read(&options)?;
        config.validate_limits()?;
        Ok(Params { constraints, config, variant })
    }

    fn inputs(&self, p: &Params) -> Vec<(&'static str, String)> {
        vec![("constraints", p.constraints.clone())]
    }

    fn deterministic(&self, p: &Params) -> bool {
        p.config.km.deterministic()
    }

    fn side_tables(&self, _: &Params) -> Vec<&'static str> {
        vec!["report", "trajectory"]
    }

    fn seed(&self, p: &Params) -> Option<u64> {
        p.config.km.seed
    }

    fn run(&self, call: &Call<'_>, p: &Params) -> Result<Outputs> {
        let (batches, cons_batches) = (in_order(call.ctx, call.source)?, in_order(call.ctx, &p.constraints)?);
        let source = Source { name: call.source, meta: call.meta, batches: &batches };
        let progress = call.registry.progress();
        let out = artuc_call(source, (&p.constraints, &cons_batches), &p.config, p.variant, progress.as_ref())?;
        let (table, res, trajectory, step) = (&out.table, &out.result, out.trajectory, out.step);
        let published = release::release(table, res)?;
        let rel = mem_table(published.schema.clone(), published.batches)?;
        let (c, m) = (&p.config.km, &res.measures);
        let mut cells = vec![("variant", Text(p.variant.name().into())), ("constraints", Text(p.constraints.clone()))];
        cells.extend(km_cells(c, m));
        cells.extend([
            ("ncp_sum", Float(m.ncp_sum)),
            ("ul", Float(m.ul)),
            ("ul_sum", Float(m.ul_sum)),
            ("ul_gen", Float(m.ul_gen())),
            ("ul_sup", Float(m.ul_sup())),
            ("suppressed_codes", Int(m.suppressed_codes as i64)),
            ("withheld_records", Int(m.withheld_records as i64)),
            ("withheld_codes", Int(m.withheld_codes as i64)),
            // Codes outside the hierarchy, dropped before the method ran
            // (load_hierarchy's unknown_codes=suppress): counted, never named.
            ("unknown_codes", Int(table.codes.unknown.0 as i64)),
            ("unknown_codes_distinct", Int(table.codes.unknown.1 as i64)),
            ("step", OptInt(step.map(|s| s as i64))),
            // Work done, like time_ms: the merge step's threads decide by their timing which
            // partners' runs are given up, so the count can differ by a few at one seed.
            ("gendiag_runs", Int(res.evaluations as i64)),
            // Whether the call was seeded, never the seed: a published seed would let anyone
            // replay the randomness (which records became counterfeits, which node was drawn).
            seeded(c.seed),
        ]);
        let out = Outputs::new(rel).with_timed_report(call, F, cells, None)?;
        Ok(match trajectory {
            Some(t) => out.with("trajectory", trajectory_table(&t)?),
            None => out,
        })
    }
}

/// `k, m, delta, epsilon` of `function`, the arguments from `at` on, none negative.
pub(super) fn km_args(function: &str, a: &Args, at: usize) -> Result<(u64, u64, f64, u64)> {
    let (k, m, delta, epsilon) =
        (a.i64(at, "k")?, a.i64(at + 1, "m")?, a.f64(at + 2, "delta")?, a.i64(at + 3, "epsilon")?);
    for (name, v) in [("k", k), ("m", m), ("epsilon", epsilon)] {
        if v < 0 {
            return Err(AnonError::argument(function, name, format!("must not be negative, got {v}")));
        }
    }
    Ok((k as u64, m as u64, delta, epsilon as u64))
}

/// The report cells ArtUC and RmR share: the parameters, then the release's size and NCP.
pub(super) fn km_cells(c: &KmConfig, m: &Measures) -> [(&'static str, Value); 7] {
    [
        ("k", Int(c.k as i64)),
        ("m", Int(c.m as i64)),
        ("delta", Float(c.delta)),
        ("epsilon", Int(c.epsilon as i64)),
        ("records", Int(m.records as i64)),
        ("clusters", Int(m.clusters as i64)),
        ("ncp", Float(m.ncp)),
    ]
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
