//! The utility metrics the baseline optimizes, computed on equivalence classes of the frequency
//! table. They are the method's own arithmetic; `anon_metrics` recomputes them from the
//! released table independently.
//!
//! - LM, the loss metric (Iyengar 2002), normalized to [0, 1]: the mean over records and
//!   quasi-identifiers of (|M_p|-1)/(|M|-1) for categorical values and (U_q-L_q)/(U-L) for
//!   numeric ones (the generalized node's interval over the domain). A suppressed record
//!   loses 1.
//! - NCP (Xu et al. 2006; ArtUC paper Defs. 3–4 with equal weights 1/n): the same shape with
//!   |M_p|/|M| for a generalized categorical value (0 for a leaf). A suppressed record loses 1.
//! - DM, the discernibility metric (Bayardo & Agrawal 2005): the sum of squared class sizes;
//!   a suppressed record costs |D|.

use crate::hierarchy::Hierarchy;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Lm,
    Ncp,
    Dm,
}

impl Metric {
    pub(crate) fn parse(s: &str) -> Option<Metric> {
        crate::keyword::parse(
            &[(Metric::Lm, &["lm", "loss"]), (Metric::Ncp, &["ncp"]), (Metric::Dm, &["dm", "discernibility"])],
            s,
        )
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Lm => "LM",
            Metric::Ncp => "NCP",
            Metric::Dm => "DM",
        }
    }
}

/// Per-attribute loss of every node at every level, so a class's loss is a sum of lookups.
#[derive(Debug, Clone)]
pub(crate) struct LossTable {
    pub(crate) metric: Metric,
    /// `node_loss[a][level][code]`, already divided by the number of attributes.
    node_loss: Vec<Vec<Vec<f64>>>,
    /// `level_loss[a][level]`: the attribute's loss summed over all records at that level,
    /// from the attribute's marginal counts (for the separable lower bound).
    level_loss: Vec<Vec<f64>>,
    records: u64,
}

impl LossTable {
    /// `marginals[a][leaf]`: records with that leaf in attribute a.
    pub(crate) fn new(metric: Metric, hs: &[Arc<Hierarchy>], marginals: &[Vec<u64>], records: u64) -> Self {
        let n = hs.len().max(1) as f64;
        let node_loss: Vec<Vec<Vec<f64>>> = hs
            .iter()
            .map(|h| {
                (0..=h.height())
                    .map(|j| (0..h.width(j) as u32).map(|c| attribute_loss(metric, h, j, c) / n).collect())
                    .collect()
            })
            .collect();
        let level_loss = hs
            .iter()
            .enumerate()
            .map(|(a, h)| {
                (0..=h.height())
                    .map(|j| {
                        let up = h.up(j);
                        marginals[a]
                            .iter()
                            .enumerate()
                            .map(|(leaf, &cnt)| cnt as f64 * node_loss[a][j][up[leaf] as usize])
                            .sum()
                    })
                    .collect()
            })
            .collect();
        LossTable { metric, node_loss, level_loss, records }
    }

    /// Loss of one record of a class with these node codes at these levels (LM, NCP).
    pub(crate) fn record_loss(&self, levels: &[u8], codes: impl Fn(usize) -> u32) -> f64 {
        (0..levels.len()).map(|a| self.node_loss[a][levels[a] as usize][codes(a) as usize]).sum()
    }

    /// A lower bound of the loss of the node `levels` and of every generalization of it,
    /// whatever is suppressed: generalization-only loss is monotone and a suppressed record
    /// loses at least as much as its generalized values. `None` for DM, whose bound needs the
    /// node's classes.
    pub(crate) fn lower_bound(&self, levels: &[u8]) -> Option<f64> {
        match self.metric {
            Metric::Dm => None,
            _ => {
                let total: f64 = levels.iter().enumerate().map(|(a, &l)| self.level_loss[a][l as usize]).sum();
                Some(total / self.records.max(1) as f64)
            }
        }
    }
}

fn attribute_loss(metric: Metric, h: &Hierarchy, level: usize, code: u32) -> f64 {
    let m = h.leaf_count() as f64;
    match (metric, h.is_numeric()) {
        (Metric::Dm, _) => 0.0,
        (_, true) => {
            let (lo, hi) = h.bounds(level, code).unwrap_or((0.0, 0.0));
            if level == 0 { 0.0 } else { h.range_degree(lo, hi) }
        }
        (Metric::Lm, false) => h.degree(level, code),
        (Metric::Ncp, false) => {
            let mp = h.leaves_under(level, code) as f64;
            if mp <= 1.0 { 0.0 } else { mp / m }
        }
    }
}
