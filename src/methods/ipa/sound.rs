//! The sound `ipa_release` (guarantee `pure` or `approx`): choose a node privately with the
//! exponential mechanism over exact total utilities ([`super::select`]), then release the
//! generalized DP histogram of that node only ([`super::histogram`]). By sequential
//! composition the whole output is (ε_selection + ε_counts)-DP, plus δ for `approx`
//! (docs/dp.md). The data are read once, as the frequency table of cells.

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

/// Default weight λ of the class term (per-class expected loss) against NCP in the utility:
/// measured on the NPS-like table (docs/results/ipa.md).
pub(crate) const DEFAULT_CLASS_WEIGHT: f64 = 1000.0;

/// Most cells a candidate node may have (a public rule: larger nodes are never scored).
pub(crate) const DEFAULT_MAX_CELLS: u64 = 10_000_000;

/// Stream of the node choice, and of the counts; other streams are not used here.
const CHOICE_STREAM: u64 = u64::MAX;
const COUNTS_STREAM: u64 = u64::MAX - 1;

/// The parameters of a sound release (all public).
#[derive(Debug, Clone, PartialEq)]
pub struct DpConfig {
    epsilon: f64,
    /// `Pure` or `Approx`.
    pub(crate) guarantee: Guarantee,
    /// Fraction of ε for the node choice, in (0, 1).
    pub(crate) selection: f64,
    pub(crate) noise_weight: f64,
    pub(crate) class_weight: f64,
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
            class_weight: DEFAULT_CLASS_WEIGHT,
            max_cells: DEFAULT_MAX_CELLS,
            floor: None,
            seed: None,
        }
    }

    /// (ε_selection, ε_counts) as the samplers realize them (each rounded down onto the exact
    /// grid, so their sum is at most ε).
    pub(crate) fn budget(&self) -> Result<(f64, f64)> {
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
        if !(self.class_weight.is_finite() && self.class_weight >= 0.0) {
            return Err(AnonError::argument(F, "class_weight", format!("must be >= 0, got {}", self.class_weight)));
        }
        if self.guarantee == Guarantee::Paper {
            return Err(AnonError::argument(F, "guarantee", "the sound release is pure or approx"));
        }
        let part = |e: f64, name: &str| {
            DiscreteLaplace::for_epsilon(e, 1)
                .map(|d| d.epsilon(1))
                .map_err(|_| AnonError::argument(F, name, format!("the {name} budget {e} is too small")))
        };
        Ok((part(self.epsilon * self.selection, "selection")?, part(self.epsilon * (1.0 - self.selection), "counts")?))
    }

    /// The count noise and how cells are published.
    pub(crate) fn counts(&self) -> Result<(DiscreteLaplace, CellNoise)> {
        let (_, counts) = self.budget()?;
        let noise = DiscreteLaplace::for_epsilon(counts, 1)?;
        let mode = match self.guarantee {
            Guarantee::Approx { delta } => CellNoise::Threshold(threshold(&noise, delta)),
            _ => CellNoise::Pure {
                floor: self.floor.unwrap_or_else(|| default_floor(&noise, DEFAULT_FLOOR_PROBABILITY)),
            },
        };
        Ok((noise, mode))
    }
}

/// A sound release and, for diagnostics only, how it was chosen and how much it lost.
#[derive(Debug, Clone)]
pub struct DpRelease {
    pub histogram: DpHistogram,
    pub(crate) epsilon_selection: f64,
    pub(crate) epsilon_counts: f64,
    pub(crate) mode: CellNoise,
    /// Diagnostics (exact data): every scored node, its selection probability, the chosen one.
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) probabilities: Vec<f64>,
    pub(crate) chosen: usize,
    /// Diagnostics: IL of the release against the original, counterfeit and withheld records.
    pub(crate) realized: Realized,
}

/// Choose the node and release its histogram. `ft` must be the public table
/// ([`super::domain::public_table`]): its informative values are the declared domain.
pub fn release(ft: &FrequencyTable, config: &DpConfig, progress: &dyn Progress) -> Result<DpRelease> {
    let (epsilon_selection, epsilon_counts) = config.budget()?;
    let (noise, mode) = config.counts()?;
    let width = ft.sensitive.as_ref().map_or(0, |s| s.values.len());
    if width == 0 {
        return Err(AnonError::argument(F, "source", "needs an informative attribute with a declared domain"));
    }
    let key = StreamKey::new(config.seed)?;
    let mut nodes = NodeCache::new(ft, true)?;
    let utility = Utility::new(mode, &noise, config.noise_weight, config.class_weight);
    let candidates = score_lattice(&mut nodes, &utility, config.max_cells, progress)?;
    let m = mechanism(&candidates, &utility, epsilon_selection)?;
    progress.check()?;
    let chosen = m.sample(&mut key.stream(CHOICE_STREAM));
    let cached = nodes.classes(candidates[chosen].node)?;
    let hs = nodes.hierarchies().to_vec();
    let histogram =
        noisy_histogram(&hs, &cached, width, &noise, mode, config.max_cells, &mut key.stream(COUNTS_STREAM), progress)?;
    let realized = histogram_loss(&hs, &cached, width, &histogram);
    Ok(DpRelease {
        histogram,
        epsilon_selection,
        epsilon_counts,
        mode,
        probabilities: m.probabilities(),
        candidates,
        chosen,
        realized,
    })
}
