//! Reconstruction error (RCE) as the h-ceiling paper uses it (Eq. 4, Figs. 2–4).

use super::decode::Decoded;

/// RCE = Σ_{t ∈ T} ∫_{x ∈ DS} (G̃_t(x) − G_t(x))² dx (h-ceiling paper, Eq. 4), DS the space of the
/// quasi-identifiers and the sensitive attribute, G̃_t the original record's pdf and G_t its
/// anonymized record's pdf.
///
/// Closed form implemented. Values are discrete (the hierarchy's leaves), so the integral is a
/// sum over leaf tuples. The original record is a point mass (Fig. 2, Σ G̃² = 1). A released
/// record spreads mass w uniformly over the P⁻¹ = Π_a n_a leaf tuples its values cover (Fig. 3),
/// n_a = the leaves under a categorical node, the leaves within a numeric range [lo, hi], or
/// all leaves when suppressed; the sensitive value is published as is (factor 1). w is the
/// probability that the record is real: 1 without a catalog, and (N − c)/N for a record with
/// sensitive value s in a catalog group holding N records with s of which c are counterfeit
/// (Fig. 4: 3/4). For a real record whose original lies in its cell,
///   ∫(G̃ − G)² = 1 − 2wP + w²P,
/// and a counterfeit record, having no original, contributes its own mass ∫G² = w²P. Which of
/// the N records are the counterfeit ones is exactly what the catalog hides, so each is real
/// with probability w and the expected contribution of a released record is
///   w(1 − 2wP + w²P) + (1 − w)w²P = w − w²P,
/// giving RCE = Σ_{released r} (w_r − w_r² P_r). Without counterfeits (w = 1) this is Σ (1 − P_r):
/// 0 for an ungeneralized record, close to 1 for a heavily generalized one. Truthful
/// generalization puts every original in its record's cell, so RCE needs only the release, the
/// catalog and the original's hierarchies (no record-by-record alignment).
/// `real_weight` holds w per decoded row.
pub fn rce(rel: &Decoded, real_weight: &[f64]) -> f64 {
    rel.cells
        .iter()
        .zip(real_weight)
        .enumerate()
        .map(|(r, (row, &w))| {
            let p: f64 = row.iter().zip(&rel.hierarchies).map(|(c, h)| 1.0 / c.leaves(h)).product();
            (w - w * w * p) * rel.weight(r)
        })
        .sum()
}
