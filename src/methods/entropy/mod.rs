//! `entropy_anonymize`: k-anonymous Q-blocks from conditional entropy and mutual information
//! (Yoo, Shin & Lee, "An Approach to Reducing Information Loss and Achieving Diversity of
//! Sensitive Attributes in k-anonymity Methods", Interact J Med Res 1(2):e14, 2012).
//!
//! - Distance (Eq. 8): d = H(X|Y) + I(Y;Z), the conditional entropy of the original
//!   quasi-identifiers X given their generalization Y (information loss, Eq. 6) plus the mutual
//!   information of the generalized quasi-identifier tuple with the sensitive attribute Z
//!   (diversity, Eq. 7), over the whole table with the pair generalized (Table 4; [`pair`]).
//!   The paper's CE baseline is H(X|Y) alone (`distance=ce`).
//! - Q-blocks (Algorithm 2; [`cluster`]): a random seed record and the k−1 records closest to
//!   it, generalized to the closest common ancestors of their values in each hierarchy.
//!
//! - Guards (`entropy_l=`, `t=`; [`guarded`]): blocks that must also satisfy entropy
//!   l-diversity or t-closeness, the paper's baselines with `distance=ce`.
//!
//! Everything runs on the frequency table; the release is built from the blocks ([`release`]).
//! The report holds the parameters and what the release shows; the losses and the objective,
//! entropies of the blocks' original values ([`loss`]), and the clustering's counts go to the
//! opt-in `output_diagnostics` (`diagnostics=true`), not for publication.

pub(crate) mod block;
pub mod cluster;
pub(crate) mod guard;
pub(crate) mod guarded;
pub(crate) mod loss;
pub(crate) mod pair;
pub mod reference;
pub(crate) mod release;
pub(crate) mod state;

pub use block::Block;
pub use cluster::{Clusterer, Stats};
pub(crate) use guard::Guard;
pub(crate) use loss::Measures;
pub use state::State;

use crate::encode::FrequencyTable;
use crate::encode::publish::Source;
use crate::encode::source;
use crate::error::{AnonError, Result};
use crate::methods::contract::{NOT_FOR_PUBLICATION, Release, Rows, Side, Value, seeded};
use crate::methods::kanon::Models;
use crate::methods::options::{DIAGNOSTICS, Kind, Options, SEED, opt};
use crate::progress::Progress;
use rand::SeedableRng;
use rand::rngs::StdRng;

const F: &str = "entropy_anonymize";

/// The distance blocks are built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distance {
    /// d = H(X|Y) + I(Y;Z), the paper's method (Eq. 8).
    EntropyMi,
    /// H(X|Y) alone: the paper's "k-anonymity using conditional entropy (CE)".
    ConditionalEntropy,
}

impl Distance {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Distance::EntropyMi => "d",
            Distance::ConditionalEntropy => "ce",
        }
    }
    pub(crate) fn parse(s: &str) -> Option<Self> {
        crate::keyword::parse(
            &[
                (Distance::EntropyMi, &["d", "ce+mi", "ce_mi", "entropy_mi"]),
                (Distance::ConditionalEntropy, &["ce", "conditional_entropy"]),
            ],
            s,
        )
    }
}

/// `entropy_anonymize`'s options.
pub(crate) const OPTIONS: Options = Options {
    function: F,
    specs: &[
        opt(
            "distance",
            Kind::Choice(&["d", "ce"]),
            "d",
            "the clustering distance: H(X|Y) + I(Y;Z), or the conditional entropy H(X|Y) alone",
        ),
        opt("entropy_l", Kind::Float { min: 1.0, max: f64::INFINITY }, "", "every block entropy l-diverse too"),
        opt("t", Kind::Float { min: 0.0, max: 1.0 }, "", "every block t-close too (EMD)"),
        SEED,
        DIAGNOSTICS,
    ],
};

/// The parameters of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct EntropyConfig {
    /// Q-block size: every block has at least k records.
    pub k: u64,
    pub distance: Distance,
    /// `None` draws the seeds from OS entropy.
    pub seed: Option<u64>,
    /// Every block entropy l-diverse too (`entropy_l=`).
    pub entropy_l: Option<f64>,
    /// Every block t-close too (`t=`).
    pub t: Option<f64>,
    /// Register `output_diagnostics` (numbers of the original the release does not show; not
    /// for publication).
    pub diagnostics: bool,
}

impl EntropyConfig {
    pub fn new(k: u64) -> Self {
        EntropyConfig { k, distance: Distance::EntropyMi, seed: None, entropy_l: None, t: None, diagnostics: false }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The privacy models a guarded call holds every block to, k included.
    pub(crate) fn models(&self) -> Option<Models> {
        (self.entropy_l.is_some() || self.t.is_some()).then(|| Models {
            entropy_l: self.entropy_l,
            t: self.t,
            ..Models::k_only(self.k)
        })
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(mut self, options: &str) -> Result<Self> {
        let o = OPTIONS.parse(options)?;
        self.distance = o.choice("distance", Distance::parse)?.unwrap_or(self.distance);
        self.seed = o.seed().or(self.seed);
        self.entropy_l = o.float("entropy_l").or(self.entropy_l);
        self.t = o.float("t").or(self.t);
        self.diagnostics = o.flag("diagnostics").unwrap_or(self.diagnostics);
        Ok(self)
    }

    /// Check the parameters against the table.
    pub(crate) fn validate(&self, records: u64, sensitive_values: usize) -> Result<()> {
        if self.k < 2 {
            return Err(AnonError::argument(F, "k", format!("must be at least 2, got {}", self.k)));
        }
        crate::methods::check_k_fits(F, self.k, records)?;
        if sensitive_values == 0 {
            return Err(AnonError::argument(F, "source", "the sensitive attribute has no values"));
        }
        self.models().map_or(Ok(()), |m| m.validate(F))
    }
}

/// The Q-blocks of one call and what they cost.
#[derive(Debug, Clone)]
pub struct EntropyResult {
    pub blocks: Vec<Block>,
    pub measures: Measures,
    /// The table's d (or H(X|Y) for CE) once every block is generalized.
    pub objective: f64,
    pub(crate) stats: Stats,
}

/// Build the Q-blocks of a frequency table (with its sensitive column).
pub fn cluster(ft: &FrequencyTable, config: &EntropyConfig, progress: &dyn Progress) -> Result<EntropyResult> {
    let values = ft.sensitive.as_ref().map_or(0, |s| s.values.len());
    if ft.sensitive.is_none() {
        return Err(AnonError::argument(F, "source", "no sensitive attribute declared"));
    }
    config.validate(ft.total(), values)?;
    let mut rng = match config.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => rand::make_rng::<StdRng>(),
    };
    let mut c = Clusterer::new(ft, config.k, config.distance == Distance::EntropyMi)?;
    let guard = match config.models() {
        Some(models) => Some(whole_table_guard(ft, &c.state, models)?),
        None => None,
    };
    c.run_guarded(&mut rng, progress, guard.as_ref())?;
    let measures = loss::measure(&c.state, &c.blocks);
    Ok(EntropyResult { objective: c.state.objective(), measures, stats: c.stats, blocks: c.blocks })
}

/// The guard of a call, once the whole table is known to satisfy it: blocks that satisfy a
/// model make a table that does, so a table that does not can have no such blocks.
fn whole_table_guard(ft: &FrequencyTable, state: &State, models: Models) -> Result<Guard> {
    let values = ft.sensitive.as_ref().map_or(&[][..], |s| &s.values[..]);
    let guard = Guard::new(models, state, values);
    let all: Vec<(u32, u64)> = (0..state.rows() as u32).map(|r| (r, state.counts[r as usize])).collect();
    let (hist, size) = guard.histogram(state, &all);
    if !guard.holds(&hist, size) {
        return Err(AnonError::argument(
            F,
            "options",
            format!("the whole table does not satisfy {}, so no Q-blocks can", guard.describe()),
        ));
    }
    Ok(guard)
}

/// Anonymize a read source: its frequency table, the Q-blocks, and the release built from them.
pub(crate) async fn anonymize(
    source: &source::Source,
    config: &EntropyConfig,
    progress: &dyn Progress,
) -> Result<Release> {
    let src = Source::of(source).await?;
    let res = cluster(&src.ft, config, progress)?;
    let published = release::release(&src, &res.blocks)?;
    let dropped = published.dropped_columns();
    let mut out =
        Release::timed(Rows::Batches(published.schema, published.batches), report(&res, config, dropped), None);
    if config.diagnostics {
        out = out.with("diagnostics", Side::Row(diagnostics(&res)));
    }
    Ok(out)
}

/// The report's cells: the parameters and what the release itself shows. Its rows, its blocks
/// (`class_id`) and each block's sensitive values give `records`, `q_blocks`, the blocks'
/// diversity and I(Q;Z); nothing here reads an original quasi-identifier value or how the
/// clustering went, which two sources with the same release need not share.
fn report(res: &EntropyResult, config: &EntropyConfig, dropped: Option<String>) -> Vec<(&'static str, Value)> {
    let m = &res.measures;
    let records: u64 = res.blocks.iter().map(|b| b.size()).sum();
    vec![
        ("k", Value::Int(config.k as i64)),
        ("distance", Value::Text(config.distance.name().into())),
        ("privacy", Value::OptText(config.models().map(|m| m.describe()))),
        seeded(config.seed),
        ("records", Value::Int(records as i64)),
        ("q_blocks", Value::Int(res.blocks.len() as i64)),
        ("q_blocks_l1", Value::Int(m.diversity[0] as i64)),
        ("q_blocks_l2", Value::Int(m.diversity[1] as i64)),
        ("q_blocks_l3plus", Value::Int(m.diversity[2] as i64)),
        ("mutual_information", Value::Float(m.mutual_information)),
        ("dropped_columns", Value::OptText(dropped)),
    ]
}

/// Numbers of the original the release does not show: opt-in, never for publication. The
/// losses and the objective are entropies of each block's original values (two sources with
/// the same release can differ in them: ages 20, 21, 24 or 20, 20, 24 both publish `20-24`);
/// the clustering's counts depend on the frequency table's rows and the order the seeds took.
fn diagnostics(res: &EntropyResult) -> Vec<(&'static str, Value)> {
    let m = &res.measures;
    vec![
        ("not_for_publication", Value::Text(NOT_FOR_PUBLICATION.into())),
        ("total_information_loss", Value::Float(m.total_information_loss)),
        ("block_entropy_sum", Value::Float(m.block_entropy_sum)),
        ("objective", Value::Float(res.objective)),
        ("seeds", Value::Int(res.stats.seeds as i64)),
        ("candidates_scored", Value::Int(res.stats.scored as i64)),
        ("candidates_pruned", Value::Int(res.stats.pruned as i64)),
        ("leftover_records", Value::Int(res.stats.leftovers as i64)),
    ]
}

#[cfg(test)]
mod contract_tests {
    use super::*;
    use crate::progress::Silent;

    /// The method reads a source built from batches, with no session: its release holds every
    /// record its report counts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_release_without_a_session() {
        let source = crate::methods::contract::testing::nps();
        let release = anonymize(&source, &EntropyConfig::new(5).with_seed(3), &Silent).await.unwrap();
        let Rows::Batches(_, batches) = &release.rows else { panic!("entropy builds its release in the client") };
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert!(matches!(release.cell("records"), Some(Value::Int(n)) if *n as usize == rows));
        assert!(rows > 0);
        assert!(release.side.is_empty(), "diagnostics are opt-in");
        assert!(release.cell("total_information_loss").is_none(), "the loss reads the original values");
    }

    /// `diagnostics=true` adds the numbers of the original, marked not for publication.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn diagnostics_are_a_side_table_on_request() {
        let source = crate::methods::contract::testing::nps();
        let config = EntropyConfig::new(5).with_options("seed=3, diagnostics=true").unwrap();
        let release = anonymize(&source, &config, &Silent).await.unwrap();
        let [(suffix, Side::Row(cells))] = &release.side[..] else { panic!("one diagnostics row") };
        assert_eq!(*suffix, "diagnostics");
        let names: Vec<&str> = cells.iter().map(|c| c.0).collect();
        assert_eq!(names[0], "not_for_publication");
        assert!(names.contains(&"total_information_loss") && names.contains(&"objective"), "{names:?}");
    }
}
