//! The generalized differentially private histogram: ONE implementation shared by
//! `dp_histogram` (node fixed by the caller) and the sound `ipa_release` (node chosen by the
//! exponential mechanism, [`super::select`]).
//!
//! A node's cells are its public value combinations (the declared hierarchies' nodes at its
//! levels) crossed with the informative attribute's declared values. Each released cell is
//! published as that many identical rows (generalized quasi-identifiers, informative value):
//! the rows up to the cell's real count stand for real records, the rest are counterfeits,
//! so a counterfeit's value needs no draw of its own.
//!
//! - **pure**: every cell, empty ones included, gets c + X, X discrete Laplace with scale 1/ε,
//!   and is published iff c + X ≥ its floor T ≥ 1 (T = 1 is max(0, c + X)). Adding or removing
//!   one record changes one cell by one, so the vector of noisy counts is ε-DP (parallel
//!   composition; docs/dp.md); the floor reads nothing but the noisy count and the public
//!   noise scale, so it is post-processing. It removes most counterfeits of empty cells
//!   ([`super::guarantee::floor`]).
//! - **approx** (stability-based histogram): only non-empty cells are noised, and a cell is
//!   published iff c + X ≥ τ ([`super::guarantee::threshold`]); (ε, δ)-DP (docs/dp.md).
//!
//! Noise is drawn in a canonical order (combinations in mixed radix, first attribute fastest,
//! values ascending), so a seed gives the same histogram whatever order the node's classes
//! were grouped in.

use super::perturb::PerturbedClass;
use super::radix::Radix;
use super::score::{Loss, class_emd, class_rate, codes_ncp};
use crate::dp::DiscreteLaplace;
use crate::encode::Cached;
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::progress::Progress;
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// How cell counts are noised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellNoise {
    /// Every cell of the domain gets c + X, published iff c + X ≥ `floor` (≥ 1; 1 is
    /// max(0, c + X)).
    Pure { floor: u64 },
    /// Non-empty cells only, published iff c + X ≥ τ (the field).
    Threshold(u64),
}

/// One published cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramCell {
    /// Node code of each dimension attribute at the node's levels.
    pub codes: Vec<u32>,
    /// Informative value (index into the declared domain).
    pub value: u32,
    pub count: u64,
}

/// A released generalized histogram.
#[derive(Debug, Clone)]
pub struct DpHistogram {
    pub levels: Vec<u8>,
    /// Cells with a positive published count, in the canonical order (module doc).
    pub cells: Vec<HistogramCell>,
    pub released_records: u64,
}

/// Number of cells of a node: the value combinations times `values`, `None` past u64.
pub fn cell_count(hs: &[Arc<Hierarchy>], levels: &[u8], values: usize) -> Option<u64> {
    hs.iter().zip(levels).try_fold(values as u64, |acc, (h, &l)| acc.checked_mul(h.width(l as usize) as u64))
}

/// The node's classes as (combination index, class), ascending ([`Radix`] numbering).
fn canonical_classes(radix: &Radix, cached: &Cached) -> Vec<(u128, usize)> {
    let g = &cached.g;
    let mut out: Vec<(u128, usize)> = (0..g.len()).map(|c| (radix.index(|a| g.codes[a][c]), c)).collect();
    out.sort_unstable();
    out
}

/// How many value combinations (or classes) are noised between two looks at Ctrl-C.
const CHECK_EVERY: u128 = 1 << 16;

/// Draw the histogram of one node (`cached`: its classes with their informative histograms
/// over `width` declared values). `max_cells` bounds the pure domain that is walked. A
/// cancellation is honoured while the cells are drawn, as one after noise (the call is charged).
#[allow(clippy::too_many_arguments)]
pub(crate) fn noisy_histogram<R: Rng + ?Sized>(
    hs: &[Arc<Hierarchy>],
    cached: &Cached,
    width: usize,
    noise: &DiscreteLaplace,
    mode: CellNoise,
    max_cells: u64,
    rng: &mut R,
    progress: &dyn Progress,
) -> Result<DpHistogram> {
    let levels = cached.g.levels.clone();
    let radix = Radix::new(hs, levels.clone());
    let classes = canonical_classes(&radix, cached);
    let mut cells = Vec::new();
    let mut emit = |idx: u128, value: usize, count: u64| {
        cells.push(HistogramCell { codes: radix.decode(idx), value: value as u32, count });
    };
    match mode {
        CellNoise::Pure { floor } => {
            let floor = floor.max(1) as i64;
            let total = cell_count(hs, &levels, width).filter(|&n| n <= max_cells).ok_or_else(|| {
                AnonError::argument(
                    "dp histogram",
                    "node",
                    format!("the node's domain has more than {max_cells} cells; generalize further"),
                )
            })?;
            let combos = u128::from(total / width.max(1) as u64);
            let empty = vec![0u32; width];
            let mut next = classes.iter().peekable();
            for idx in 0..combos {
                if idx % CHECK_EVERY == CHECK_EVERY - 1 {
                    progress.check_after_noise()?;
                }
                let real = match next.peek() {
                    Some(&&(i, c)) if i == idx => {
                        next.next();
                        cached.class_hist(c, width)
                    }
                    _ => &empty[..],
                };
                for (v, &n) in real.iter().enumerate() {
                    let noisy = i64::from(n) + noise.sample(rng);
                    if noisy >= floor {
                        emit(idx, v, noisy as u64);
                    }
                }
            }
        }
        CellNoise::Threshold(tau) => {
            for (i, &(idx, c)) in classes.iter().enumerate() {
                if i as u128 % CHECK_EVERY == CHECK_EVERY - 1 {
                    progress.check_after_noise()?;
                }
                for (v, &n) in cached.class_hist(c, width).iter().enumerate().filter(|(_, n)| **n > 0) {
                    let noisy = i64::from(n) + noise.sample(rng);
                    if noisy >= tau as i64 {
                        emit(idx, v, noisy as u64);
                    }
                }
            }
        }
    }
    let released_records = cells.iter().map(|c| c.count).sum();
    Ok(DpHistogram { levels, cells, released_records })
}

/// IPA's IL of a released histogram against the node's real classes (diagnostics and
/// evaluation only: it reads the original counts). A combination's released rows up to its
/// real count per value are real, the excess counterfeit; the classes averaged over are the
/// combinations holding real or released records (docs/ipa.md).
pub(crate) fn histogram_loss(hs: &[Arc<Hierarchy>], cached: &Cached, width: usize, hist: &DpHistogram) -> Realized {
    let mut by_combo: BTreeMap<Vec<u32>, (Vec<u32>, Vec<u64>)> = BTreeMap::new();
    let g = &cached.g;
    for c in 0..g.len() {
        let key: Vec<u32> = g.codes.iter().map(|col| col[c]).collect();
        by_combo.entry(key).or_insert_with(|| (vec![0; width], vec![0; width])).0 =
            cached.class_hist(c, width).to_vec();
    }
    for cell in &hist.cells {
        by_combo.entry(cell.codes.clone()).or_insert_with(|| (vec![0; width], vec![0; width])).1
            [cell.value as usize] += cell.count;
    }
    realized_loss(
        by_combo.iter().map(|(codes, (original, released))| {
            (codes_ncp(hs, &hist.levels, |a| codes[a]), &original[..], &released[..])
        }),
    )
}

/// IPA's IL of released classes given (NCP of one record of the class, real counts per value,
/// released counts per value): rows up to the real count are real, the excess counterfeit;
/// EMD and Rate are averaged over the classes given (those with real or released records).
pub(crate) fn realized_loss<'a>(classes: impl Iterator<Item = (f64, &'a [u32], &'a [u64])>) -> Realized {
    let (mut ncp_sum, mut emd, mut rate) = (0.0, 0.0, 0.0);
    let (mut counterfeit, mut withheld, mut released, mut k) = (0, 0, 0, 0usize);
    for (ncp, original, out) in classes {
        let class = as_class(original, out);
        if class.original_size() == 0 && class.released_size() == 0 {
            continue;
        }
        k += 1;
        counterfeit += class.counterfeits();
        withheld += class.original_size() + class.counterfeits() - class.released_size();
        released += class.released_size();
        ncp_sum += class.released_size() as f64 * ncp;
        emd += class_emd(&class);
        rate += class_rate(&class);
    }
    let k = k.max(1) as f64;
    let loss = Loss { ncp: if released == 0 { 1.0 } else { ncp_sum / released as f64 }, emd: emd / k, rate: rate / k };
    Realized { loss, counterfeit, withheld }
}

/// How a released histogram relates to the original (diagnostics only, never published).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Realized {
    pub loss: Loss,
    /// Released rows beyond their cell's real count.
    pub(crate) counterfeit: u64,
    /// Real records of a cell not released (its noisy count fell below the real one).
    pub(crate) withheld: u64,
}

/// A combination as a perturbed class: records up to the real count are real, the rest
/// counterfeit.
fn as_class(original: &[u32], released: &[u64]) -> PerturbedClass {
    let kept: Vec<u32> = original.iter().zip(released).map(|(&o, &n)| u64::from(o).min(n) as u32).collect();
    let counterfeit = released.iter().zip(original).map(|(&n, &o)| n.saturating_sub(u64::from(o)) as u32).collect();
    PerturbedClass { class: None, original: original.to_vec(), kept, counterfeit }
}
