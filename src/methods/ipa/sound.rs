//! The sound `ipa_release` (guarantee `pure` or `approx`): choose a node privately with the
//! exponential mechanism over exact total utilities ([`super::select`]), then release the
//! generalized DP histogram of that node only ([`super::histogram`]). Unless the caller fixes
//! the class weight λ, a noisy record count N̂ (ε_size) sizes it first: λ = N̂ / [`CLASSES_PRICED`],
//! so the utility ranks nodes by per-record and per-class losses whatever the table's size
//! (docs/dp.md, "The node choice at any table size"). By sequential composition the whole
//! output is (ε_size + ε_selection + ε_counts)-DP, plus δ for `approx` (docs/dp.md). The data
//! are read once, as the frequency table of cells.

use super::guarantee::{DEFAULT_FLOOR_PROBABILITY, Guarantee, floor as default_floor, threshold};
use super::histogram::{CellNoise, DpHistogram, Realized, histogram_loss, noisy_histogram};
use super::select::{Candidate, Utility, mechanism, score_lattice};
use crate::dp::{DiscreteLaplace, StreamKey};
use crate::encode::{FrequencyTable, NodeCache};
use crate::error::{AnonError, Result};
use crate::progress::Progress;

const F: &str = "ipa_release";

/// Default share of ε spent choosing the node (the rest noises the counts); measured on the
/// NPS-like table (docs/results/ipa.md).
pub(crate) const DEFAULT_SELECTION: f64 = 0.2;

/// Default weight of the expected count error against NCP in the utility (docs/ipa.md).
pub(crate) const DEFAULT_NOISE_WEIGHT: f64 = 1.0;

/// Default share of ε for the noisy record count N̂ that sizes the class weight (when the call
/// gives no `class_weight=`).
pub(crate) const DEFAULT_SIZE_SHARE: f64 = 0.02;

/// λ = N̂ / CLASSES_PRICED: one class expected lost costs as much as the NCP of that share of
/// the table's records. 1,376 puts λ at the 1,000 measured best on the NPS-like table
/// (1,375,900 records, docs/results/ipa.md); as a share of N it serves any table size, where a
/// fixed λ = 1000 flattened the choice on Adult (docs/results/ipa.md, "Your own table").
pub(crate) const CLASSES_PRICED: f64 = 1376.0;

/// The least class weight from a noisy count: one lost class never costs less than one record.
const MIN_CLASS_WEIGHT: f64 = 1.0;

/// Most cells a candidate node may have (a public rule: larger nodes are never scored).
pub(crate) const DEFAULT_MAX_CELLS: u64 = 10_000_000;

/// Stream of the node choice, and of the counts; other streams are not used here.
const CHOICE_STREAM: u64 = u64::MAX;
const COUNTS_STREAM: u64 = u64::MAX - 1;
/// Stream of the noisy record count (the adaptive partition uses u64::MAX − 2 ..= − 4).
const SIZE_STREAM: u64 = u64::MAX - 5;

/// The parameters of a sound release (all public).
#[derive(Debug, Clone, PartialEq)]
pub struct DpConfig {
    epsilon: f64,
    /// `Pure` or `Approx`.
    pub(crate) guarantee: Guarantee,
    /// Fraction of ε for the node choice, in (0, 1).
    pub(crate) selection: f64,
    pub(crate) noise_weight: f64,
    /// λ as given (`class_weight=`); `None`: sized from a noisy record count.
    pub(crate) class_weight: Option<f64>,
    pub(crate) max_cells: u64,
    /// `pure`: the publication floor of the noisy counts (`None`: from the noise scale,
    /// [`super::guarantee::floor`]).
    pub(crate) floor: Option<u64>,
    pub seed: Option<u64>,
}

impl DpConfig {
    pub fn new(epsilon: f64, guarantee: Guarantee) -> Self {
        DpConfig {
            epsilon,
            guarantee,
            selection: DEFAULT_SELECTION,
            noise_weight: DEFAULT_NOISE_WEIGHT,
            class_weight: None,
            max_cells: DEFAULT_MAX_CELLS,
            floor: None,
            seed: None,
        }
    }

    /// λ fixed by the caller (`class_weight=`) instead of sized from a noisy record count.
    pub fn with_class_weight(mut self, class_weight: f64) -> Self {
        self.class_weight = Some(class_weight);
        self
    }

    /// The budgets as the samplers realize them (each rounded down onto the exact grid, so
    /// their sum is at most ε).
    pub(crate) fn budget(&self) -> Result<SoundBudget> {
        if !self.epsilon.is_finite() || self.epsilon <= 0.0 {
            return Err(AnonError::argument(
                F,
                "epsilon",
                format!("must be a finite number > 0, got {}", self.epsilon),
            ));
        }
        if !(self.selection > 0.0 && self.selection < 1.0) {
            return Err(AnonError::argument(F, "selection", format!("must be in (0, 1), got {}", self.selection)));
        }
        if !(self.noise_weight.is_finite() && self.noise_weight >= 0.0) {
            return Err(AnonError::argument(F, "noise_weight", format!("must be >= 0, got {}", self.noise_weight)));
        }
        if let Some(w) = self.class_weight.filter(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(AnonError::argument(F, "class_weight", format!("must be >= 0, got {w}")));
        }
        if self.guarantee == Guarantee::Paper {
            return Err(AnonError::argument(F, "guarantee", "the sound release is pure or approx"));
        }
        let part = |e: f64, name: &str| {
            DiscreteLaplace::for_epsilon(e, 1)
                .map(|d| d.epsilon(1))
                .map_err(|_| AnonError::argument(F, name, format!("the {name} budget {e} is too small")))
        };
        let size = if self.class_weight.is_some() { 0.0 } else { DEFAULT_SIZE_SHARE };
        if self.selection + size >= 1.0 {
            return Err(AnonError::argument(
                F,
                "selection",
                format!("must leave part of epsilon for the counts (at most {}), got {}", 1.0 - size, self.selection),
            ));
        }
        Ok(SoundBudget {
            size: if size > 0.0 { part(self.epsilon * size, "size")? } else { 0.0 },
            selection: part(self.epsilon * self.selection, "selection")?,
            counts: part(self.epsilon * (1.0 - self.selection - size), "counts")?,
        })
    }

    /// The count noise and how cells are published.
    pub(crate) fn counts(&self) -> Result<(DiscreteLaplace, CellNoise)> {
        let noise = DiscreteLaplace::for_epsilon(self.budget()?.counts, 1)?;
        let mode = match self.guarantee {
            Guarantee::Approx { delta } => CellNoise::Threshold(threshold(&noise, delta)),
            _ => CellNoise::Pure {
                floor: self.floor.unwrap_or_else(|| default_floor(&noise, DEFAULT_FLOOR_PROBABILITY)),
            },
        };
        Ok((noise, mode))
    }
}

/// The realized parts of ε of a sound release: the noisy record count (0 when λ is given),
/// the node choice and the counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SoundBudget {
    pub(crate) size: f64,
    pub(crate) selection: f64,
    pub(crate) counts: f64,
}

impl SoundBudget {
    pub(crate) fn total(&self) -> f64 {
        self.size + self.selection + self.counts
    }
}

/// λ from a noisy record count `n̂` (module doc): public, since n̂ is.
pub(crate) fn class_weight_for(noisy_records: i64) -> f64 {
    (noisy_records as f64 / CLASSES_PRICED).max(MIN_CLASS_WEIGHT)
}

/// A sound release and, for diagnostics only, how it was chosen and how much it lost.
#[derive(Debug, Clone)]
pub struct DpRelease {
    pub histogram: DpHistogram,
    pub(crate) budget: SoundBudget,
    /// λ the utility used: as given, or from the noisy record count (public either way).
    pub(crate) class_weight: f64,
    pub(crate) mode: CellNoise,
    /// Diagnostics (exact data): every scored node, its selection probability, the chosen one.
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) probabilities: Vec<f64>,
    pub(crate) chosen: usize,
    /// Diagnostics: IL of the release against the original, counterfeit and withheld records.
    pub(crate) realized: Realized,
}

impl DpRelease {
    /// The exponential mechanism's probability of each candidate node (computed from the exact
    /// data: diagnostics only, never published).
    pub fn selection_probabilities(&self) -> &[f64] {
        &self.probabilities
    }
    /// The candidate drawn (an index into [`Self::selection_probabilities`]).
    pub fn chosen(&self) -> usize {
        self.chosen
    }
    /// λ the utility used (public: given, or from the noisy record count).
    pub fn class_weight(&self) -> f64 {
        self.class_weight
    }
}

/// Choose the node and release its histogram. `ft` must be the public table
/// ([`super::domain::public_table`]): its informative values are the declared domain.
pub fn release(ft: &FrequencyTable, config: &DpConfig, progress: &dyn Progress) -> Result<DpRelease> {
    let budget = config.budget()?;
    let (noise, mode) = config.counts()?;
    let width = ft.sensitive.as_ref().map_or(0, |s| s.values.len());
    if width == 0 {
        return Err(AnonError::argument(F, "source", "needs an informative attribute with a declared domain"));
    }
    let key = StreamKey::new(config.seed)?;
    let mut nodes = NodeCache::new(ft, true)?;
    let class_weight = match config.class_weight {
        Some(w) => w,
        None => {
            let records: u64 = ft.counts.iter().sum();
            let size = DiscreteLaplace::for_epsilon(budget.size, 1)?;
            class_weight_for(records as i64 + size.sample(&mut key.stream(SIZE_STREAM)))
        }
    };
    let utility = Utility::new(mode, &noise, config.noise_weight, class_weight);
    let candidates = score_lattice(&mut nodes, &utility, config.max_cells, progress)?;
    let m = mechanism(&candidates, &utility, budget.selection)?;
    let chosen = m.sample(&mut key.stream(CHOICE_STREAM));
    let cached = nodes.classes(candidates[chosen].node)?;
    let hs = nodes.hierarchies().to_vec();
    let histogram =
        noisy_histogram(&hs, &cached, width, &noise, mode, config.max_cells, &mut key.stream(COUNTS_STREAM))?;
    let realized = histogram_loss(&hs, &cached, width, &histogram);
    Ok(DpRelease {
        histogram,
        budget,
        class_weight,
        mode,
        probabilities: m.probabilities(),
        candidates,
        chosen,
        realized,
    })
}
