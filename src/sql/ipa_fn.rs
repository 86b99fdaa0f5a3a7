//! `ipa_release(source, output, epsilon [, options])` and `dp_histogram(source, output,
//! epsilon, node [, options])`: specs only. Options and the pipeline come from
//! `methods::ipa::call`, the charge, the guarantee statement and the candidate nodes'
//! diagnostics (Eq. 12) from `methods::ipa::outcome`, the release and its tables' cells from
//! `methods::ipa::publish`:
//!
//! - `output`: the release, its Arrow schema metadata `anonfusion.guarantee` saying what it is;
//! - `output_report`: the guarantee, epsilon and its parts, delta, the node, the parameters,
//!   and numbers computed from the release itself (nothing about the original, no seed);
//! - with `diagnostics=true` only: `output_diagnostics` (exact counts and IL against the
//!   original) and `output_diagnostics_nodes` (every candidate node), first column
//!   `not_for_publication`.
//!
//! The epsilon is reserved in the ledger before any noise is drawn and recorded once the
//! tables are built.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::dp::ledger::{Charge, epsilon_units};
use crate::error::{AnonError, Result};
use crate::lattice::parse_levels;
use crate::meta::TableMeta;
use crate::methods::ipa::call::{CallOptions, Hooks};
use crate::methods::ipa::call::{HISTOGRAM_OPTIONS, IPA_OPTIONS};
use crate::methods::ipa::publish;
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;

const F: &str = "ipa_release";
const H: &str = "dp_histogram";

/// `ipa_release(source, output, epsilon [, options])`.
#[derive(Debug)]
pub(crate) struct Ipa;

impl MethodSpec for Ipa {
    /// (epsilon, the options' text, the options parsed without the table's declared plan).
    type Params = (f64, String, CallOptions);
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "ipa_release(source, output, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&IPA_OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        // The grid's limits, before the options: 1e308 is an error, not a clamp.
        epsilon_units(F, epsilon)?;
        let text = a.opt_str(3, "options")?.unwrap_or_default();
        let call = CallOptions::ipa_unresolved(epsilon, &text)?;
        Ok((epsilon, text, call))
    }

    /// Only seeded calls are memoized: a repeat returns the same release and spends nothing.
    fn deterministic(&self, (_, _, call): &Self::Params) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics", "diagnostics_nodes"]
    }

    fn charge(
        &self,
        (epsilon, text, _): &Self::Params,
        source: &str,
        meta: &TableMeta,
    ) -> Result<Option<(Charge, String)>> {
        let call = CallOptions::ipa_declared(*epsilon, text, meta.release_plan.as_deref())?;
        call.check_size(F, source, meta, None)?;
        call.ipa_charge().map(Some)
    }

    fn seed(&self, (_, _, call): &Self::Params) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (epsilon, text, _): &Self::Params) -> Result<Outputs> {
        let call = &CallOptions::ipa_declared(*epsilon, text, c.meta.release_plan.as_deref())?;
        let (source, progress) = (c.read()?, c.registry.progress());
        let hooks = Hooks { progress: progress.as_ref(), before_noise: &|| c.reserve_budget() };
        let release = block_on_cancellable(progress.as_ref(), publish::ipa_release(&source, call, hooks))?;
        c.publish(F, release)
    }
}

/// `dp_histogram(source, output, epsilon, node [, options])`.
#[derive(Debug)]
pub(crate) struct Histogram;

impl MethodSpec for Histogram {
    /// (epsilon, node levels, parsed options).
    type Params = (f64, Vec<u8>, CallOptions);
    const NAME: &'static str = H;
    const SIGNATURE: &'static str = "dp_histogram(source, output, epsilon, node [, options])";
    const OPTIONS: Option<&'static Options> = Some(&HISTOGRAM_OPTIONS);
    const ARITY: (usize, usize) = (4, 5);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        epsilon_units(H, epsilon)?;
        let node = a.str(3, "node")?;
        let call = CallOptions::histogram(epsilon, &a.opt_str(4, "options")?.unwrap_or_default())?;
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument(H, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        Ok((epsilon, levels, call))
    }

    fn deterministic(&self, (_, _, call): &Self::Params) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics"]
    }

    fn charge(
        &self,
        (epsilon, levels, call): &Self::Params,
        source: &str,
        meta: &TableMeta,
    ) -> Result<Option<(Charge, String)>> {
        call.check_size(H, source, meta, Some(levels))?;
        call.histogram_charge(*epsilon).map(Some)
    }

    fn seed(&self, (_, _, call): &Self::Params) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (epsilon, levels, call): &Self::Params) -> Result<Outputs> {
        let (source, progress) = (c.read()?, c.registry.progress());
        let hooks = Hooks { progress: progress.as_ref(), before_noise: &|| c.reserve_budget() };
        let release = block_on_cancellable(
            progress.as_ref(),
            publish::histogram_release(&source, levels, *epsilon, call, hooks),
        )?;
        c.publish(H, release)
    }
}
