//! IPA: informative-attribute-preserving anonymization under ε-differential privacy (Jeon et
//! al., "Differentially private medical microdata release with informative attribute
//! preserving"; the text the project works from is ipa-differentially-private-microdata.txt in
//! the shared papers folder, docs/ipa.md summarizes it).
//!
//! The informative attribute (the declared sensitive column, e.g. Disease) is released
//! unperturbed; the dimension attributes (the quasi-identifiers) are generalized on the
//! full-domain lattice. For every node, Algorithm 1 ([`perturb`]) suppresses small classes under
//! a noisy threshold and gives every class a noisy size, realized with counterfeit records whose
//! values come from the exponential mechanism; every node is scored by IL = NCP + EMD + Rate
//! ([`score`]) and the released node is chosen with the exponential mechanism (Eq. 12,
//! [`search`]). The budget is split over the four parts (Theorem 9). docs/ipa.md records how the
//! paper's ambiguities are resolved.
//!
//! Randomness: every draw goes through the exact samplers of `crate::dp`, node `i` from stream
//! `i` of one key ([`crate::dp::StreamKey`]), the node choice from its own stream.

pub mod adaptive;
pub mod baseline;
pub mod call;
pub mod domain;
pub mod guarantee;
pub mod histogram;
pub(crate) mod outcome;
pub mod perturb;
pub(crate) mod publish;
mod radix;
pub mod release;
pub mod root;
pub mod score;
pub mod search;
pub mod select;
mod size;
pub mod sound;

pub use guarantee::Guarantee;
pub(crate) use perturb::{Noise, Perturbation, PerturbedClass};
pub(crate) use score::Loss;
pub use search::NodeScore;

use crate::dp::{DiscreteLaplace, StreamKey};
use crate::encode::publish::Source;
use crate::encode::{FrequencyTable, NodeCache};
use crate::error::{AnonError, Result};
use crate::lattice::{NodeId, format_levels};
use crate::methods::options::{Kind, OptionSpec, Options, Parsed, SEED, opt};
use crate::progress::Progress;

const F: &str = "ipa_release";

/// The paper's suppression parameter t of Definition 3.
pub(crate) const T: OptionSpec =
    opt("t", Kind::Int { min: 2, max: u64::MAX }, "2", "guarantee=paper: the suppression parameter t of Definition 3");
/// The paper's split of ε.
pub(crate) const SPLIT: OptionSpec = opt(
    "split",
    Kind::Text("0.1:0.3:0.3:0.3"),
    "0.1:0.3:0.3:0.3",
    "guarantee=paper: epsilon's shares for suppression, insertion, value and candidates",
);

/// [`IpaConfig`]'s options (the paper's mode).
pub(crate) const OPTIONS: Options = Options { function: F, specs: &[SEED, T, SPLIT] };

/// The paper's split (Results, "Data utility"): ε_suppression, ε_insertion, ε_value,
/// ε_candidates = 0.1, 0.3, 0.3, 0.3 of ε = 1.
pub(crate) const DEFAULT_SPLIT: [f64; 4] = [0.1, 0.3, 0.3, 0.3];

/// The suppression parameter of the paper's example ("if we set t = 2", Table 7). The paper
/// states no other value.
pub(crate) const DEFAULT_T: u64 = 2;

/// Tolerance on the sum of a split.
const SPLIT_TOLERANCE: f64 = 1e-9;

/// The parameters of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct IpaConfig {
    /// Total budget ε (Theorem 9).
    epsilon: f64,
    /// (suppression, insertion, value, candidates): fractions of ε summing to 1, or absolute
    /// budgets summing to ε.
    split: [f64; 4],
    /// Suppression parameter t of Definition 3 (at least 2: the threshold's sensitivity is t − 1).
    pub(crate) t: u64,
    /// `None` draws from OS entropy (the only setting with a privacy guarantee).
    seed: Option<u64>,
}

/// Absolute budget of each part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub suppression: f64,
    pub insertion: f64,
    pub(crate) value: f64,
    pub candidates: f64,
}

impl Budget {
    pub fn total(&self) -> f64 {
        self.suppression + self.insertion + self.value + self.candidates
    }
}

impl IpaConfig {
    pub fn new(epsilon: f64) -> Self {
        IpaConfig { epsilon, split: DEFAULT_SPLIT, t: DEFAULT_T, seed: None }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(mut self, options: &str) -> Result<Self> {
        let o = OPTIONS.parse(options)?;
        self.seed = o.seed().or(self.seed);
        self.read_paper(&o)?;
        Ok(self)
    }

    /// The paper mode's own options, [`T`] and [`SPLIT`].
    pub(crate) fn read_paper(&mut self, o: &Parsed) -> Result<()> {
        self.t = o.int("t").unwrap_or(self.t);
        if let Some(split) = o.text("split") {
            self.split = parse_split(split)?;
        }
        Ok(())
    }

    /// Check the parameters, and the table: its size and whether it has an informative
    /// attribute (`informative_values`: its number of distinct values, `None` without one).
    pub fn validate(&self, records: u64, informative_values: Option<usize>) -> Result<()> {
        self.check_parameters()?;
        match informative_values {
            None => Err(AnonError::argument(
                F,
                "source",
                "IPA needs an informative attribute: declare one column as sensitive",
            )),
            Some(0) => Err(AnonError::argument(F, "source", "the informative attribute has no values")),
            Some(_) if records == 0 => Err(AnonError::argument(F, "source", "the table has no records")),
            Some(_) => self.noise().map(|_| ()),
        }
    }

    /// Epsilon, split and t, before anything is read.
    pub(crate) fn check_parameters(&self) -> Result<()> {
        if !self.epsilon.is_finite() || self.epsilon <= 0.0 {
            return Err(AnonError::argument(
                F,
                "epsilon",
                format!("must be a finite number > 0, got {}", self.epsilon),
            ));
        }
        if let Some(i) = self.split.iter().position(|x| !x.is_finite() || *x <= 0.0) {
            return Err(AnonError::argument(
                F,
                "split",
                format!("part {} ({}) must be a finite number > 0", i + 1, SPLIT_PARTS[i]),
            ));
        }
        let sum: f64 = self.split.iter().sum();
        if !close(sum, 1.0) && !close(sum, self.epsilon) {
            return Err(AnonError::argument(
                F,
                "split",
                format!(
                    "parts sum to {sum}; give fractions summing to 1 or budgets summing to epsilon = {}",
                    self.epsilon
                ),
            ));
        }
        if self.t < 2 {
            return Err(AnonError::argument(
                F,
                "t",
                format!("must be at least 2 (the threshold noise has sensitivity t - 1), got {}", self.t),
            ));
        }
        Ok(())
    }

    /// The absolute budget of each part, as the samplers realize it (each rounded down onto
    /// the grid of exact epsilons, see docs/dp.md).
    pub fn budget(&self) -> Result<Budget> {
        self.check_parameters()?;
        let sum: f64 = self.split.iter().sum();
        let scale = if close(sum, 1.0) { self.epsilon } else { 1.0 };
        let part = |i: usize| -> Result<f64> {
            let e = self.split[i] * scale;
            DiscreteLaplace::for_epsilon(e, 1)
                .map(|d| d.epsilon(1))
                .map_err(|_| AnonError::argument(F, "split", format!("the {} budget {e} is too small", SPLIT_PARTS[i])))
        };
        Ok(Budget { suppression: part(0)?, insertion: part(1)?, value: part(2)?, candidates: part(3)? })
    }

    /// The samplers of Algorithm 1.
    pub fn noise(&self) -> Result<Noise> {
        let b = self.budget()?;
        Noise::new(self.t, b.suppression, b.insertion, b.value).map_err(|e| {
            if self.t < 2 {
                return e;
            }
            AnonError::argument(
                F,
                "t",
                format!("t = {} is too large for the suppression budget {}", self.t, b.suppression),
            )
        })
    }
}

const SPLIT_PARTS: [&str; 4] = ["suppression", "insertion", "value", "candidates"];

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= SPLIT_TOLERANCE * b.abs().max(1.0)
}

pub(crate) fn parse_split(value: &str) -> Result<[f64; 4]> {
    let parts: Vec<Option<f64>> = value.split(':').map(|p| p.trim().parse::<f64>().ok()).collect();
    match parts.as_slice() {
        [Some(a), Some(b), Some(c), Some(d)] => Ok([*a, *b, *c, *d]),
        _ => Err(AnonError::argument(
            F,
            "split",
            format!("'{value}' is not four numbers suppression:insertion:value:candidates"),
        )),
    }
}

/// The released node and what its release cost.
#[derive(Debug, Clone)]
pub struct IpaResult {
    pub node: NodeId,
    pub levels: Vec<u8>,
    /// Budget spent per part (ε′ of each sampler; their sum is at most ε).
    pub spent: Budget,
    /// Real records whose class was suppressed (released as `*` unless withheld).
    pub suppressed_records: u64,
    pub(crate) suppressed_classes: usize,
    /// Real records withheld to realize negative noisy sizes.
    pub withheld_records: u64,
    pub counterfeit_records: u64,
    pub released_records: u64,
    pub loss: Loss,
    /// The chosen node's perturbed classes (kept classes, then `*`).
    pub perturbation: Perturbation,
    /// Every node's score, by node id (the candidates of Eq. 12).
    pub scores: Vec<NodeScore>,
}

impl IpaResult {
    pub fn node_label(&self) -> String {
        format_levels(&self.levels)
    }
    pub fn il(&self) -> f64 {
        self.loss.il()
    }
}

/// Run IPA on a frequency table (with its informative column).
pub fn search(ft: &FrequencyTable, config: &IpaConfig, progress: &dyn Progress) -> Result<IpaResult> {
    Ok(search_with_nodes(ft, config, progress)?.0)
}

/// [`search`], also returning the node cache (the chosen node's classes, whose indices the
/// perturbation refers to).
pub fn search_with_nodes<'a>(
    ft: &'a FrequencyTable,
    config: &IpaConfig,
    progress: &dyn Progress,
) -> Result<(IpaResult, NodeCache<'a>)> {
    config.validate(ft.total(), ft.sensitive.as_ref().map(|s| s.values.len()))?;
    let (spent, noise) = (config.budget()?, config.noise()?);
    let key = StreamKey::new(config.seed)?;
    let mut nodes = NodeCache::new(ft, true)?;
    let scores = search::score_all(&mut nodes, &noise, &key, progress)?;
    let chosen = search::choose(&scores, spent.candidates, &mut key.stream(search::CHOICE_STREAM))?;
    let node = scores[chosen].node;
    let cached = nodes.classes(node)?;
    let p = search::perturb_node(&cached, nodes.width(), &noise, &key, node)?;
    let result = IpaResult {
        node,
        levels: nodes.lattice.levels(node),
        spent,
        suppressed_records: p.suppressed_records,
        suppressed_classes: p.suppressed_classes,
        withheld_records: p.withheld_records,
        counterfeit_records: p.counterfeit_records,
        released_records: p.classes.iter().map(PerturbedClass::released_size).sum(),
        loss: scores[chosen].loss,
        perturbation: p,
        scores,
    };
    Ok((result, nodes))
}

/// The released table of one call (dropped: neither identifier, dimension nor informative).
pub(crate) use crate::release::Published;

/// Anonymize a read source: aggregate, run IPA, and build the release.
pub async fn anonymize(
    source: &crate::encode::source::Source,
    config: &IpaConfig,
    progress: &dyn Progress,
) -> Result<(IpaResult, Published)> {
    let src = Source::of(source).await?;
    let (res, mut nodes) = search_with_nodes(&src.ft, config, progress)?;
    let cached = nodes.classes(res.node)?;
    let (schema, batches) = release::release(&src.ft, &src.schema, &cached, &res.perturbation)?;
    Ok((res, Published { schema, batches, dropped: src.dropped_columns() }))
}
