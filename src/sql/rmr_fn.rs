//! `rmr(source, output, k, m, delta, epsilon [, options])`: RmR, the ArtUC paper's competitor in
//! Figs. 7–10 ((k,k^m)-anonymity with NCP ≤ δ and no utility constraints,
//! `src/methods/rmr`), as a baseline to compare `artuc` with. Options:
//! [`crate::methods::rmr::OPTIONS`].
//!
//! Registers the release (the same shape as artuc's, so `verify_release 'km=k:m'`,
//! `anon_metrics` and the workloads read it) as `output` and the report as `output_report`.

use super::args::Args;
use super::artuc_fn::km_args;
use super::method::{Call, MethodSpec, Outputs};
use crate::error::{AnonError, Result};
use crate::methods::options::Options;
use crate::methods::rmr::{RmrConfig, rmr_release};
use crate::session::runtime::block_on_cancellable;

const F: &str = "rmr";

#[derive(Debug)]
pub(crate) struct Rmr;

impl MethodSpec for Rmr {
    type Params = RmrConfig;
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "rmr(source, output, k, m, delta, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::rmr::OPTIONS);
    const ARITY: (usize, usize) = (6, 7);

    fn parse(&self, a: &Args) -> Result<RmrConfig> {
        let (k, m, delta, epsilon) = km_args(F, a, 2)?;
        if !(0.0..=1.0).contains(&delta) {
            return Err(AnonError::argument(
                F,
                "delta",
                format!("must be in [0, 1], got {}", crate::dp::ledger::shown(delta)),
            ));
        }
        RmrConfig::new(k, m, delta, epsilon).with_options(&a.opt_str(6, "options")?.unwrap_or_default())
    }

    fn deterministic(&self, p: &RmrConfig) -> bool {
        p.km.deterministic()
    }

    fn side_tables(&self, _: &RmrConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn seed(&self, p: &RmrConfig) -> Option<u64> {
        p.km.seed
    }

    fn run(&self, call: &Call<'_>, p: &RmrConfig) -> Result<Outputs> {
        let (source, progress) = (call.read()?, call.registry.progress());
        let release = block_on_cancellable(progress.as_ref(), rmr_release(&source, p, progress.as_ref()))?;
        call.publish(F, release)
    }
}
