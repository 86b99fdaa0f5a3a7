//! `dp_synthesize(source, output, epsilon [, options])`: a spec only. Options, domains and the
//! charge come from `methods::synth::call`, the release and its tables from
//! `methods::synth::publish` (the method: src/methods/synth; proof: docs/dp.md, "Synthetic
//! records from a tree of marginals"). The ε is reserved in the ledger before any noise is drawn.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::dp::ledger::{Charge, epsilon_units};
use crate::error::Result;
use crate::meta::TableMeta;
use crate::methods::options::Options;
use crate::methods::synth::call::{OPTIONS, SynthOptions};
use crate::methods::synth::publish::synth_release;
use crate::session::runtime::block_on_cancellable;

const F: &str = "dp_synthesize";

/// `dp_synthesize(source, output, epsilon [, options])`.
#[derive(Debug)]
pub(crate) struct Synthesize;

impl MethodSpec for Synthesize {
    /// (epsilon, options).
    type Params = (f64, SynthOptions);
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "dp_synthesize(source, output, epsilon [, options])";
    const OPTIONS: Option<&'static Options> = Some(&OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        epsilon_units(F, epsilon)?;
        let options = SynthOptions::parse(epsilon, &a.opt_str(3, "options")?.unwrap_or_default())?;
        Ok((epsilon, options))
    }

    fn deterministic(&self, (_, o): &Self::Params) -> bool {
        o.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics"]
    }

    fn charge(&self, (epsilon, o): &Self::Params, source: &str, meta: &TableMeta) -> Result<Option<(Charge, String)>> {
        o.charge(*epsilon, source, meta).map(Some)
    }

    fn seed(&self, (_, o): &Self::Params) -> Option<u64> {
        o.seed()
    }

    fn run(&self, c: &Call<'_>, (_, o): &Self::Params) -> Result<Outputs> {
        let (source, progress) = (c.read()?, c.registry.progress());
        let release = block_on_cancellable(
            progress.as_ref(),
            synth_release(&source, o, progress.as_ref(), &|| c.reserve_budget()),
        )?;
        c.publish(F, release)
    }
}
