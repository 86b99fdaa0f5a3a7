//! The paper's other baseline: a generalized differentially private histogram (its reference
//! [10], Table 4). The dimension attributes are generalized to a lattice node, and every cell
//! of the node's domain crossed with the informative values gets its count plus
//! `Lap(1/ε)` (the discrete Laplace), negative results published as 0. Adding or removing one
//! record changes one cell by one, so by parallel composition the histogram is ε-DP; unlike
//! IPA, empty cells are noised too, which is what keeps a lone record's cell from appearing
//! only when the record is there. The node is an argument: a data-independent choice costs no
//! budget (the reference's specialization search, which spends budget to choose it, is not
//! reproduced).
//!
//! The histogram is scored with IPA's IL so the two can be compared (the paper's Fig. 6): a
//! cell's records up to its real count count as real, the excess as counterfeit, and the
//! classes are the node's value combinations that hold real or released records.

use super::perturb::PerturbedClass;
use super::score::{Loss, class_emd, class_rate, codes_ncp};
use crate::dp::{DiscreteLaplace, dp_rng};
use crate::encode::{FrequencyTable, group};
use crate::error::{AnonError, Result};
use std::collections::HashMap;

const F: &str = "dp_histogram";

/// Most cells (value combinations × informative values) a histogram may have: every cell is
/// drawn, so the domain has to fit in time and memory.
pub const MAX_CELLS: u64 = 50_000_000;

/// One published cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramCell {
    /// Node code of each dimension attribute at the node's levels.
    pub codes: Vec<u32>,
    /// Informative value (index into the frequency table's values).
    pub value: u32,
    pub count: u64,
}

/// A generalized DP histogram and its IL.
#[derive(Debug, Clone)]
pub struct DpHistogram {
    pub levels: Vec<u8>,
    /// Cells with a positive noisy count, value combinations in mixed-radix order (first
    /// attribute fastest), values ascending within one.
    pub cells: Vec<HistogramCell>,
    /// ε′ of the count noise (ε rounded down onto the exact grid).
    pub epsilon: f64,
    pub released_records: u64,
    pub loss: Loss,
}

/// Number of cells of the node's domain, or an error naming the limit.
fn domain_cells(ft: &FrequencyTable, levels: &[u8], values: usize) -> Result<u64> {
    ft.qis.iter().zip(levels).try_fold(values as u64, |acc, (q, &l)| {
        let w = q.hierarchy.width(l as usize) as u64;
        acc.checked_mul(w).filter(|&n| n <= MAX_CELLS).ok_or_else(|| {
            AnonError::argument(
                F,
                "levels",
                format!("the node's domain has more than {MAX_CELLS} cells; generalize further"),
            )
        })
    })
}

/// Release the histogram of `ft` at node `levels` with budget `epsilon`.
pub fn dp_histogram(ft: &FrequencyTable, levels: &[u8], epsilon: f64, seed: Option<u64>) -> Result<DpHistogram> {
    let inf = ft.sensitive.as_ref().ok_or_else(|| {
        AnonError::argument(
            F,
            "source",
            "the histogram needs an informative attribute: declare one column as sensitive",
        )
    })?;
    let width = inf.values.len();
    let noise = DiscreteLaplace::for_epsilon(epsilon, 1).map_err(|e| match e {
        AnonError::Argument { message, .. } => AnonError::argument(F, "epsilon", message),
        other => other,
    })?;
    let (g, row_class) = group(ft, levels)?;
    domain_cells(ft, levels, width)?;
    let mut real: HashMap<Vec<u32>, Vec<u32>> = HashMap::with_capacity(g.len());
    for (r, &c) in row_class.iter().enumerate() {
        let key: Vec<u32> = g.codes.iter().map(|col| col[c as usize]).collect();
        real.entry(key).or_insert_with(|| vec![0; width])[inf.codes[r] as usize] += ft.counts[r] as u32;
    }
    let hs = ft.hierarchies();
    let widths: Vec<u32> = hs.iter().zip(levels).map(|(h, &l)| h.width(l as usize) as u32).collect();
    let mut rng = dp_rng(seed)?;
    let (mut cells, mut classes, mut ncp_sum) = (Vec::new(), Vec::new(), 0.0);
    let empty = vec![0u32; width];
    let mut codes = vec![0u32; widths.len()];
    loop {
        let original = real.get(&codes).unwrap_or(&empty);
        let noisy: Vec<u64> = original.iter().map(|&n| (i64::from(n) + noise.sample(&mut rng)).max(0) as u64).collect();
        for (v, &n) in noisy.iter().enumerate().filter(|(_, n)| **n > 0) {
            cells.push(HistogramCell { codes: codes.clone(), value: v as u32, count: n });
        }
        let released: u64 = noisy.iter().sum();
        if released > 0 || original.iter().any(|&n| n > 0) {
            ncp_sum += released as f64 * codes_ncp(&hs, levels, |a| codes[a]);
            classes.push(as_class(original, &noisy));
        }
        if !next(&mut codes, &widths) {
            break;
        }
    }
    let released_records: u64 = cells.iter().map(|c| c.count).sum();
    let k = classes.len().max(1) as f64;
    let loss = Loss {
        ncp: if released_records == 0 { 1.0 } else { ncp_sum / released_records as f64 },
        emd: classes.iter().map(class_emd).sum::<f64>() / k,
        rate: classes.iter().map(class_rate).sum::<f64>() / k,
    };
    Ok(DpHistogram { levels: levels.to_vec(), cells, epsilon: noise.epsilon(1), released_records, loss })
}

/// A cell row as a perturbed class: records up to the real count are real, the rest counterfeit.
fn as_class(original: &[u32], noisy: &[u64]) -> PerturbedClass {
    let kept: Vec<u32> = original.iter().zip(noisy).map(|(&o, &n)| (u64::from(o).min(n)) as u32).collect();
    let counterfeit = noisy.iter().zip(original).map(|(&n, &o)| n.saturating_sub(u64::from(o)) as u32).collect();
    PerturbedClass { class: None, original: original.to_vec(), kept, counterfeit }
}

/// The next value combination in mixed-radix order (first attribute fastest); false after the
/// last.
fn next(codes: &mut [u32], widths: &[u32]) -> bool {
    for (c, &w) in codes.iter_mut().zip(widths) {
        *c += 1;
        if *c < w {
            return true;
        }
        *c = 0;
    }
    false
}
