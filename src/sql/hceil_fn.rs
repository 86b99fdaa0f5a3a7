//! `hceil_anonymize(source, output, k [, h [, options]])`: k-anonymity under an h-ceiling with
//! counterfeit records (options: [`crate::methods::hceil::OPTIONS`]). A NULL or missing h
//! searches every node for the h of least RCE.
//! Registers the release as `output` (with `class_id`), the catalog as `output_catalog` and the
//! report as `output_report` (with the time of each pass), and returns the release. With
//! `diagnostics=true` only, `output_diagnostics`: numbers the release does not show (suppressed
//! records, the objective's value), first column `not_for_publication`. With [`ParquetOutput`] the release is Parquet written by the session's
//! executors and the catalog Parquet written by the client.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::error::Result;
use crate::methods::hceil::{HceilConfig, anonymize};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;

#[derive(Debug)]
pub(crate) struct Hceil;

impl MethodSpec for Hceil {
    type Params = HceilConfig;
    const NAME: &'static str = "hceil_anonymize";
    const SIGNATURE: &'static str = "hceil_anonymize(source, output, k [, h [, options]])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::hceil::OPTIONS);
    const ARITY: (usize, usize) = (3, 5);

    fn parse(&self, a: &Args) -> Result<HceilConfig> {
        HceilConfig::new(a.at_least(2, "k", 2)?, a.opt_f64(3, "h")?)
            .with_options(&a.opt_str(4, "options")?.unwrap_or_default())
    }

    /// Without a seed every call draws anew.
    fn deterministic(&self, config: &HceilConfig) -> bool {
        config.seed.is_some()
    }

    fn side_tables(&self, config: &HceilConfig) -> Vec<&'static str> {
        if config.diagnostics { vec!["catalog", "report", "diagnostics"] } else { vec!["catalog", "report"] }
    }

    fn seed(&self, config: &HceilConfig) -> Option<u64> {
        config.seed
    }

    fn run(&self, call: &Call<'_>, config: &HceilConfig) -> Result<Outputs> {
        let (source, progress) = (call.read()?, call.registry.progress());
        let release = block_on_cancellable(progress.as_ref(), anonymize(&source, config, progress.as_ref()))?;
        call.publish(Self::NAME, release)
    }
}
