//! `kanon_anonymize(source, output, k [, options])`: the globally optimal full-domain
//! k-anonymous release (options: [`crate::methods::kanon::OPTIONS`]). Registers the release as `output` and its report
//! as `output_report` (with the time of each pass), and returns the release. The release is
//! in memory, or Parquet written by the session's executors ([`output::ParquetOutput`]).

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use crate::error::Result;
use crate::methods::kanon::{KanonConfig, anonymize};
use crate::methods::options::Options;
use crate::session::runtime::block_on_cancellable;

#[derive(Debug)]
pub(crate) struct Kanon;

impl MethodSpec for Kanon {
    type Params = KanonConfig;
    const NAME: &'static str = "kanon_anonymize";
    const SIGNATURE: &'static str = "kanon_anonymize(source, output, k [, options])";
    const OPTIONS: Option<&'static Options> = Some(&crate::methods::kanon::OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<KanonConfig> {
        KanonConfig::new(a.at_least(2, "k", 1)?).with_options(&a.opt_str(3, "options")?.unwrap_or_default())
    }

    fn deterministic(&self, _: &KanonConfig) -> bool {
        true
    }

    fn side_tables(&self, _: &KanonConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn run(&self, call: &Call<'_>, config: &KanonConfig) -> Result<Outputs> {
        let (source, progress) = (call.read()?, call.registry.progress());
        let release = block_on_cancellable(progress.as_ref(), anonymize(&source, config, progress.as_ref()))?;
        call.publish(Self::NAME, release)
    }
}
