//! What a node of the h-ceiled lattice costs: its generalization degrees (Eqs. 1–3), the
//! reconstruction error of its release with the catalog (Eq. 4, Fig. 4), a lower bound of
//! that error known before any counterfeit is drawn, and LM.
//!
//! RCE is the same quantity `anon_metrics` reports for the release and catalog
//! (src/metrics/rce.rs): RCE = Σ_r (w_r − w_r² P_r), P_r the probability a released record puts
//! on its own cell (1 / the leaf tuples the cell covers; a numeric cell covers the leaves in
//! the class's min–max range) and w_r the probability that r is real, (N − c)/N for the N
//! s-records of a catalog group holding c counterfeits of s, 1 elsewhere. Since Σ_r w_r is the
//! number of genuine records whatever the catalog, RCE ≥ N_genuine − Σ_r P_r over the published
//! records, which is exact for a node without counterfeits: the bound that orders the search.

use super::counterfeit::NodeCatalog;
use crate::encode::Grouping;
use crate::hierarchy::Hierarchy;
use std::sync::Arc;

/// P_c of every class: the probability mass its release puts on each covered leaf tuple.
pub fn cell_probabilities(hs: &[Arc<Hierarchy>], g: &Grouping) -> Vec<f64> {
    (0..g.len())
        .map(|c| {
            hs.iter()
                .enumerate()
                .map(|(a, h)| {
                    let leaves = if h.is_numeric() {
                        let (lo, hi) = g.ranges[a][c];
                        hi - lo + 1
                    } else {
                        h.leaves_under(g.levels[a] as usize, g.codes[a][c])
                    };
                    1.0 / leaves.max(1) as f64
                })
                .product()
        })
        .collect()
}

/// Lower bound of the node's RCE: every class padded to k, every record weighted 1.
pub fn rce_bound(g: &Grouping, p: &[f64], k: u64) -> f64 {
    let published: f64 = g.sizes.iter().zip(p).map(|(&n, &p)| n.max(k) as f64 * p).sum();
    g.total() as f64 - published
}

/// Published records of each class: genuine plus counterfeit.
pub fn published_sizes(g: &Grouping, catalog: &NodeCatalog) -> Vec<u64> {
    let mut sizes = g.sizes.clone();
    for &(c, _, n) in &catalog.counterfeits {
        sizes[c as usize] += n as u64;
    }
    sizes
}

/// RCE of the node's release with its catalog (module doc); `published` from
/// [`published_sizes`].
pub fn rce(published: &[u64], hist: &[u32], width: usize, p: &[f64], catalog: &NodeCatalog) -> f64 {
    let mut total: f64 = published.iter().zip(p).map(|(&n, &p)| n as f64 * (1.0 - p)).sum();
    for e in &catalog.entries {
        let genuine: u64 = e.classes.iter().map(|&c| hist[c as usize * width + e.value as usize] as u64).sum();
        let w = genuine as f64 / (genuine + e.count) as f64;
        for &c in &e.classes {
            let n = (hist[c as usize * width + e.value as usize] + catalog.counterfeits_of(c, e.value)) as f64;
            let pc = p[c as usize];
            total += n * ((w - w * w * pc) - (1.0 - pc));
        }
    }
    total
}

/// LM over the published records: the mean D(r) (Iyengar's loss metric with the h-ceiling
/// paper's numeric ranges), counterfeits included as `anon_metrics` counts them.
pub fn lm(degrees: &[f64], published: &[u64]) -> f64 {
    let n: u64 = published.iter().sum();
    degrees.iter().zip(published).map(|(&d, &s)| d * s as f64).sum::<f64>() / n.max(1) as f64
}
