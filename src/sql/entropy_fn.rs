//! `entropy_anonymize(source, output, k [, options])`: k-anonymous Q-blocks built with the
//! distance d = H(X|Y) + I(Y;Z) (options: [`crate::methods::entropy::OPTIONS`], among them the
//! guards every block must also satisfy). Registers the release as
//! `output` (with `class_id`) and the report as `output_report` (parameters and what the release
//! shows), and returns the release. With `diagnostics=true` only, `output_diagnostics`: numbers
//! the release does not show (the blocks' losses and the objective, from the original values;
//! the clustering's counts), first column `not_for_publication`.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::error::Result;
use crate::methods::entropy::{EntropyConfig, anonymize};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;

#[derive(Debug)]
pub(crate) struct Entropy;

impl MethodSpec for Entropy {
    type Params = EntropyConfig;
    const NAME: &'static str = "entropy_anonymize";
    const SIGNATURE: &'static str = "entropy_anonymize(source, output, k [, options])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::entropy::OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<EntropyConfig> {
        EntropyConfig::new(a.at_least(2, "k", 2)?).with_options(&a.opt_str(3, "options")?.unwrap_or_default())
    }

    /// Without a seed every call draws anew.
    fn deterministic(&self, config: &EntropyConfig) -> bool {
        config.seed.is_some()
    }

    fn side_tables(&self, config: &EntropyConfig) -> Vec<&'static str> {
        if config.diagnostics { vec!["report", "diagnostics"] } else { vec!["report"] }
    }

    fn seed(&self, config: &EntropyConfig) -> Option<u64> {
        config.seed
    }

    fn run(&self, call: &Call<'_>, config: &EntropyConfig) -> Result<Outputs> {
        let (source, progress) = (call.read()?, call.registry.progress());
        let release = block_on_cancellable(progress.as_ref(), anonymize(&source, config, progress.as_ref()))?;
        call.publish(Self::NAME, release)
    }
}
