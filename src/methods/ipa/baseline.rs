//! The paper's other baseline: a generalized differentially private histogram (its reference
//! [10], Table 4) at a lattice node given by the caller. The node is an argument, a
//! data-independent choice that costs no budget (the reference's specialization search is not
//! reproduced). The histogram itself is [`super::histogram`], shared with the sound
//! `ipa_release`: `pure` noises every cell of the node's public domain, `approx` only the
//! non-empty cells with a publication threshold.
//!
//! It is scored with IPA's IL so the two can be compared (the paper's Fig. 6); that score
//! reads the original and is a diagnostic.

use super::guarantee::{DEFAULT_FLOOR_PROBABILITY, Guarantee, floor as default_floor, threshold};
use super::histogram::{CellNoise, DpHistogram, Realized, histogram_loss, noisy_histogram};
use crate::dp::{DiscreteLaplace, dp_rng};
use crate::encode::{Cached, FrequencyTable, group};
use crate::error::{AnonError, Result};
use crate::progress::Progress;

const F: &str = "dp_histogram";

/// Most cells (value combinations × informative values) a pure histogram may walk.
pub(crate) const MAX_CELLS: u64 = 50_000_000;

/// A histogram release and what it cost.
#[derive(Debug, Clone)]
pub struct HistogramRelease {
    pub histogram: DpHistogram,
    /// ε′ of the count noise (ε rounded down onto the exact grid).
    pub(crate) epsilon: f64,
    pub(crate) mode: CellNoise,
    /// Diagnostic: IL against the original, counterfeit and withheld records.
    pub realized: Realized,
}

/// Release the histogram of the public table `ft` (informative values = the declared domain,
/// [`super::domain::public_table`]) at node `levels`. `floor` is the pure mode's publication
/// floor (`None`: [`super::guarantee::floor`] at [`DEFAULT_FLOOR_PROBABILITY`]).
pub fn dp_histogram(
    ft: &FrequencyTable,
    levels: &[u8],
    epsilon: f64,
    guarantee: Guarantee,
    floor: Option<u64>,
    seed: Option<u64>,
) -> Result<HistogramRelease> {
    dp_histogram_cancellable(ft, levels, epsilon, guarantee, floor, seed, &crate::progress::Silent)
}

/// [`dp_histogram`], stopped when `progress.cancelled()` (Ctrl-C): as
/// [`AnonError::Cancelled`] before the first draw, [`AnonError::CancelledAfterNoise`] after.
pub(crate) fn dp_histogram_cancellable(
    ft: &FrequencyTable,
    levels: &[u8],
    epsilon: f64,
    guarantee: Guarantee,
    floor: Option<u64>,
    seed: Option<u64>,
    progress: &dyn Progress,
) -> Result<HistogramRelease> {
    let width = ft.sensitive.as_ref().map(|s| s.values.len()).filter(|&w| w > 0).ok_or_else(|| {
        AnonError::argument(F, "source", "the histogram needs an informative attribute with a declared domain")
    })?;
    let noise = DiscreteLaplace::for_epsilon(epsilon, 1).map_err(|e| match e {
        AnonError::Argument { message, .. } => AnonError::argument(F, "epsilon", message),
        other => other,
    })?;
    let mode = match guarantee {
        Guarantee::Pure => {
            CellNoise::Pure { floor: floor.unwrap_or_else(|| default_floor(&noise, DEFAULT_FLOOR_PROBABILITY)) }
        }
        Guarantee::Approx { delta } => CellNoise::Threshold(threshold(&noise, delta)),
        Guarantee::Paper => return Err(AnonError::argument(F, "guarantee", "dp_histogram is pure or approx")),
    };
    let (g, row_class) = group(ft, levels)?;
    let inf = ft.sensitive.as_ref().expect("checked above");
    let mut hist = vec![0u32; g.len() * width];
    for (r, &c) in row_class.iter().enumerate() {
        hist[c as usize * width + inf.codes[r] as usize] += ft.counts[r] as u32;
    }
    let cached = Cached { g, hist, keys: Vec::new() };
    let hs = ft.hierarchies();
    progress.check()?;
    let histogram = noisy_histogram(&hs, &cached, width, &noise, mode, MAX_CELLS, &mut dp_rng(seed)?, progress)
        .map_err(|e| match e {
            AnonError::CancelledAfterNoise => e,
            _ => AnonError::argument(
                F,
                "node",
                format!("the node's domain has more than {MAX_CELLS} cells; generalize further"),
            ),
        })?;
    let realized = histogram_loss(&hs, &cached, width, &histogram);
    Ok(HistogramRelease { histogram, epsilon: noise.epsilon(1), mode, realized })
}
