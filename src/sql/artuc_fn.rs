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
use super::method::{Call, MethodSpec, Outputs};
use crate::error::{AnonError, Result};
use crate::methods::artuc::publish::artuc_release;
use crate::methods::artuc::variant::SQL_OPTIONS;
use crate::methods::artuc::{ArtucConfig, Variant};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;

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
        let (source, constraints) = (call.read()?, call.read_input(&p.constraints)?);
        let progress = call.registry.progress();
        let release = artuc_release(&source, &constraints, &p.config, p.variant, progress.as_ref());
        call.publish(F, block_on_cancellable(progress.as_ref(), release)?)
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
