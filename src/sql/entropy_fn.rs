//! `entropy_anonymize(source, output, k [, options])`: k-anonymous Q-blocks built with the
//! distance d = H(X|Y) + I(Y;Z) (options: [`crate::methods::entropy::OPTIONS`], among them the
//! guards every block must also satisfy). Registers the release as
//! `output` (with `class_id`) and the report as `output_report`, and returns the release.

use super::args::Args;
use super::glue::mem_table;
use super::method::{Call, MethodSpec, Outputs};
use super::report::{Value::*, seeded};
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

    fn side_tables(&self, _: &EntropyConfig) -> Vec<&'static str> {
        vec!["report"]
    }

    fn seed(&self, config: &EntropyConfig) -> Option<u64> {
        config.seed
    }

    fn run(&self, call: &Call<'_>, config: &EntropyConfig) -> Result<Outputs> {
        let progress = call.registry.progress();
        let (res, published) = block_on_cancellable(
            progress.as_ref(),
            anonymize(call.ctx, call.source, call.meta, config, progress.as_ref()),
        )?;
        let dropped = published.dropped_columns();
        let release = mem_table(published.schema.clone(), published.batches)?;
        let m = &res.measures;
        let records: u64 = res.blocks.iter().map(|b| b.size()).sum();
        Outputs::new(release).with_timed_report(
            call,
            Self::NAME,
            vec![
                ("k", Int(config.k as i64)),
                ("distance", Text(config.distance.name().into())),
                ("privacy", OptText(config.models().map(|m| m.describe()))),
                seeded(config.seed),
                ("records", Int(records as i64)),
                ("q_blocks", Int(res.blocks.len() as i64)),
                ("q_blocks_l1", Int(m.diversity[0] as i64)),
                ("q_blocks_l2", Int(m.diversity[1] as i64)),
                ("q_blocks_l3plus", Int(m.diversity[2] as i64)),
                ("total_information_loss", Float(m.total_information_loss)),
                ("block_entropy_sum", Float(m.block_entropy_sum)),
                ("mutual_information", Float(m.mutual_information)),
                ("objective", Float(res.objective)),
                ("seeds", Int(res.stats.seeds as i64)),
                ("candidates_scored", Int(res.stats.scored as i64)),
                ("candidates_pruned", Int(res.stats.pruned as i64)),
                ("leftover_records", Int(res.stats.leftovers as i64)),
                ("dropped_columns", OptText(dropped)),
            ],
            None,
        )
    }
}
