//! Generalization loss of a release: LM, DM and the generalization degree D(r).

use super::decode::Decoded;

/// Loss Metric (Iyengar 2002, as the h-ceiling paper uses it, normalized to [0, 1]):
///
/// LM = (1 / (|T|·n)) · Σ_{r ∈ T} Σ_{a=1..n} loss(r[a]), where loss = (|M_p| − 1)/(|M| − 1) for a
/// categorical node (M_p: leaves under the node, M: all leaves) and (U_q − L_q)/(U − L) for a
/// numeric range over the domain [L, U]; a suppressed value costs 1.
///
/// T is every released record, counterfeit ones included, as the papers compute LM (which
/// is why the h-ceiling paper argues LM cannot see counterfeits). 0 for an empty release.
pub fn lm(rel: &Decoded) -> f64 {
    weighted_mean(rel, &record_degrees(rel))
}

/// Generalization degree D(r) of every released record (h-ceiling paper, Eqs. 1–3):
/// D(r) = (1/n) Σ_a D_a with D_num = (U_q − L_q)/(U − L) (Eq. 1) and
/// D_cat = (|M_p| − 1)/(|M| − 1) (Eq. 2); a suppressed record has D(r) = 1. Per record this is
/// the same arithmetic as LM, which is its mean. One value per decoded row.
pub fn record_degrees(rel: &Decoded) -> Vec<f64> {
    let n = rel.hierarchies.len().max(1) as f64;
    rel.cells.iter().map(|row| row.iter().zip(&rel.hierarchies).map(|(c, h)| c.degree(h)).sum::<f64>() / n).collect()
}

/// Largest D(r) over the released records (h-ceiling's criterion: the release is h-ceiled for
/// every h at or above it).
pub fn max_degree(rel: &Decoded) -> f64 {
    record_degrees(rel).into_iter().fold(0.0, f64::max)
}

/// Discernibility Metric (Bayardo & Agrawal 2005): DM = Σ_{E} |E|² + |D|·|S|, every record of
/// an equivalence class E costing |E| and every suppressed record (S) costing the size of the
/// whole release |D|.
pub fn dm(rel: &Decoded) -> f64 {
    let classes: f64 = rel.class_sizes.iter().map(|&s| (s as f64) * (s as f64)).sum();
    classes + rel.suppressed_count() as f64 * rel.records() as f64
}

/// Mean of per-row values over the released records (each row weighted by its records).
pub(super) fn weighted_mean(rel: &Decoded, v: &[f64]) -> f64 {
    let n = rel.records();
    if n == 0 { 0.0 } else { weighted_sum(rel, v) / n as f64 }
}

pub(super) fn weighted_sum(rel: &Decoded, v: &[f64]) -> f64 {
    v.iter().enumerate().map(|(r, x)| x * rel.weight(r)).sum()
}

pub(super) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}
