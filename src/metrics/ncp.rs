//! Normalized Certainty Penalty (Xu et al. 2006) of a decoded release, as the ArtUC paper
//! (Defs. 3–4) and the IPA paper (Eqs. 5–6) define it; the per-value formulas are
//! [`crate::formulas::ncp`], the ones ArtUC's clustering and IPA's node score use.

use super::decode::Decoded;
use crate::error::{AnonError, Result};
use crate::formulas::ncp::{ipa_ncp_value, ncp_value};

/// NCP of every decoded row (ArtUC Def. 4): NCP(r) = Σ_i w_i · NCP_{A_i}(r[A_i]), w_i ∈ [0, 1]. With no
/// weights given every attribute weighs 1/l (as in Example 3), so NCP(r) ∈ [0, 1].
pub fn record_ncp(rel: &Decoded, weights: Option<&[f64]>) -> Result<Vec<f64>> {
    let l = rel.hierarchies.len();
    let w: Vec<f64> = match weights {
        None => vec![1.0 / l.max(1) as f64; l],
        Some(w) if w.len() == l && w.iter().all(|x| (0.0..=1.0).contains(x)) => w.to_vec(),
        Some(w) => {
            return Err(AnonError::argument(
                "anon_metrics",
                "ncp_weights",
                format!("expected {l} weights in [0, 1] (one per quasi-identifier), got {}", w.len()),
            ));
        }
    };
    Ok(rel
        .cells
        .iter()
        .map(|row| row.iter().zip(&rel.hierarchies).zip(&w).map(|((c, h), w)| w * ncp_value(c, h)).sum())
        .collect())
}

/// NCP(D) = Σ_{r ∈ D} NCP(r) / |D| (ArtUC Def. 4), with the sum Σ NCP(r) (the paper's 4.28
/// for Figure 3). Returns (NCP(D), Σ NCP(r)).
pub fn ncp(rel: &Decoded, weights: Option<&[f64]>) -> Result<(f64, f64)> {
    let per = record_ncp(rel, weights)?;
    Ok((super::loss::weighted_mean(rel, &per), super::loss::weighted_sum(rel, &per)))
}

/// NCP as the IPA paper defines it (Eqs. 5–6): a value costs the share of its attribute's
/// leaves it covers (0 for a single leaf, 1 suppressed), for numeric attributes too (IPA counts
/// the leaves in the range, where ArtUC measures its length); a record costs the mean over the
/// quasi-identifiers, the table the mean over records. A k-anonymous release perturbs and
/// inserts nothing, so this is its IL = NCP + EMD + Rate (EMD = Rate = 0) for comparison with
/// `ipa_release`.
pub(crate) fn ipa_ncp(rel: &Decoded) -> f64 {
    let q = rel.hierarchies.len().max(1) as f64;
    let per: Vec<f64> = rel
        .cells
        .iter()
        .map(|row| row.iter().zip(&rel.hierarchies).map(|(c, h)| ipa_ncp_value(c, h)).sum::<f64>() / q)
        .collect();
    super::loss::weighted_mean(rel, &per)
}
