//! Privacy models checked on one equivalence class: k-anonymity (Sweeney), distinct, entropy
//! and recursive (c,l)-diversity (Machanavajjhala et al. 2007) and t-closeness (Li et al.
//! 2007). A class fails when any model fails; failing classes are suppressed while the
//! suppression budget lasts.

use crate::error::{AnonError, Result};

/// The models a release must satisfy; k-anonymity always applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Models {
    pub k: u64,
    pub distinct_l: Option<u64>,
    pub entropy_l: Option<f64>,
    /// (c, l)
    pub recursive_cl: Option<(f64, u64)>,
    pub t: Option<f64>,
}

impl Models {
    pub fn k_only(k: u64) -> Self {
        Models { k, distinct_l: None, entropy_l: None, recursive_cl: None, t: None }
    }

    /// Do the models look at the sensitive attribute?
    pub fn need_sensitive(&self) -> bool {
        self.distinct_l.is_some() || self.entropy_l.is_some() || self.recursive_cl.is_some() || self.t.is_some()
    }

    /// With a suppression budget, only k-anonymity and distinct l-diversity stay monotone
    /// under generalization: merging a failing class into a passing one can make the union
    /// fail entropy/recursive diversity or t-closeness (a skewed class dilutes a balanced one).
    /// Without suppression every model here is monotone (entropy is concave, EMD convex).
    pub fn monotone_with_suppression(&self) -> bool {
        self.entropy_l.is_none() && self.recursive_cl.is_none() && self.t.is_none()
    }

    pub fn validate(&self, function: &str) -> Result<()> {
        let bad = |arg: &str, m: String| Err(AnonError::argument(function, arg, m));
        if self.k < 1 {
            return bad("k", format!("must be at least 1, got {}", self.k));
        }
        if let Some(l) = self.distinct_l
            && l < 1
        {
            return bad("distinct_l", format!("must be at least 1, got {l}"));
        }
        if let Some(l) = self.entropy_l
            && !(l >= 1.0 && l.is_finite())
        {
            return bad("entropy_l", format!("must be at least 1, got {l}"));
        }
        if let Some((c, l)) = self.recursive_cl {
            if !(c > 0.0 && c.is_finite()) {
                return bad("recursive_cl", format!("c must be positive, got {c}"));
            }
            if l < 1 {
                return bad("recursive_cl", format!("l must be at least 1, got {l}"));
            }
        }
        if let Some(t) = self.t
            && !(0.0..=1.0).contains(&t)
        {
            return bad("t", format!("must be in [0, 1], got {t}"));
        }
        Ok(())
    }

    /// A short description for reports: `k=5, distinct_l=3, t=0.15`.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("k={}", self.k)];
        if let Some(l) = self.distinct_l {
            parts.push(format!("distinct_l={l}"));
        }
        if let Some(l) = self.entropy_l {
            parts.push(format!("entropy_l={l}"));
        }
        if let Some((c, l)) = self.recursive_cl {
            parts.push(format!("recursive_cl={c}:{l}"));
        }
        if let Some(t) = self.t {
            parts.push(format!("t={t}"));
        }
        parts.join(", ")
    }
}

/// The table-wide sensitive distribution t-closeness compares against, and how far apart two
/// values are: equal distance for categorical values, ordered distance for numeric ones.
#[derive(Debug, Clone)]
pub struct SensitiveContext {
    /// Overall frequency of each sensitive code.
    pub global: Vec<f64>,
    /// Numeric sensitive attribute: codes in ascending value order (ordered-distance EMD).
    pub order: Option<Vec<usize>>,
}

impl SensitiveContext {
    pub fn new(values: &[String], counts: &[u64]) -> Self {
        let total: u64 = counts.iter().sum();
        let global = counts.iter().map(|&c| c as f64 / total.max(1) as f64).collect();
        let numbers: Option<Vec<f64>> = values.iter().map(|v| v.trim().parse::<f64>().ok()).collect();
        let order = numbers.map(|nums| {
            let mut idx: Vec<usize> = (0..nums.len()).collect();
            idx.sort_by(|&a, &b| nums[a].total_cmp(&nums[b]));
            idx
        });
        SensitiveContext { global, order }
    }

    /// Earth mover's distance between a class histogram and the global distribution.
    pub fn emd(&self, hist: &[u32], size: u64) -> f64 {
        let n = size.max(1) as f64;
        match &self.order {
            // Equal ground distance: half the L1 distance (total variation).
            None => 0.5 * hist.iter().zip(&self.global).map(|(&h, &q)| (h as f64 / n - q).abs()).sum::<f64>(),
            // Ordered distance (Li et al., Eq. for numeric attributes): cumulative differences
            // over the sorted domain, normalized by m - 1.
            Some(order) => {
                let m = order.len();
                if m < 2 {
                    return 0.0;
                }
                let mut cum = 0.0;
                let mut total = 0.0;
                for &i in order {
                    cum += hist[i] as f64 / n - self.global[i];
                    total += cum.abs();
                }
                total / (m as f64 - 1.0)
            }
        }
    }
}

/// Does the class fail the models that stay monotone under generalization even with
/// suppression (k-anonymity, distinct l-diversity)? Records of such classes are suppressed
/// at every specialization too, so a node whose count of them exceeds the limit rules out
/// its whole down-set, whatever the other models do.
pub fn fails_monotone_part(models: &Models, size: u64, hist: Option<&[u32]>) -> bool {
    size < models.k
        || models.distinct_l.zip(hist).is_some_and(|(l, h)| (h.iter().filter(|&&c| c > 0).count() as u64) < l)
}

/// Does a class of `size` records with sensitive histogram `hist` satisfy every model?
pub fn class_ok(models: &Models, size: u64, hist: Option<&[u32]>, ctx: Option<&SensitiveContext>) -> bool {
    if size < models.k {
        return false;
    }
    let Some(hist) = hist else { return true };
    if let Some(l) = models.distinct_l
        && (hist.iter().filter(|&&c| c > 0).count() as u64) < l
    {
        return false;
    }
    if let Some(l) = models.entropy_l {
        let n = size as f64;
        let h: f64 = hist.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).ln()).sum();
        // A tolerance so that a class exactly at ln(l) (e.g. l equal values) is not rejected by rounding.
        if h < l.ln() - 1e-12 {
            return false;
        }
    }
    if let Some((c, l)) = models.recursive_cl {
        let mut counts: Vec<u32> = hist.iter().copied().filter(|&x| x > 0).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        if (counts.len() as u64) < l {
            return false;
        }
        let tail: u64 = counts[(l as usize - 1)..].iter().map(|&x| x as u64).sum();
        if (counts[0] as f64) >= c * tail as f64 {
            return false;
        }
    }
    if let (Some(t), Some(ctx)) = (models.t, ctx)
        && ctx.emd(hist, size) > t + 1e-12
    {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_model_rejects_what_it_should() {
        let m = |f: fn(&mut Models)| {
            let mut x = Models::k_only(2);
            f(&mut x);
            x
        };
        let ctx = SensitiveContext::new(&["a".into(), "b".into(), "c".into()], &[1, 1, 1]);
        assert!(!class_ok(&Models::k_only(3), 2, None, None));
        assert!(class_ok(&Models::k_only(2), 2, None, None));
        assert!(!class_ok(&m(|x| x.distinct_l = Some(2)), 3, Some(&[3, 0, 0]), Some(&ctx)));
        assert!(class_ok(&m(|x| x.distinct_l = Some(2)), 3, Some(&[2, 1, 0]), Some(&ctx)));
        // Entropy of (2/3, 1/3) is 0.636 < ln 2 = 0.693.
        assert!(!class_ok(&m(|x| x.entropy_l = Some(2.0)), 3, Some(&[2, 1, 0]), Some(&ctx)));
        assert!(class_ok(&m(|x| x.entropy_l = Some(2.0)), 2, Some(&[1, 1, 0]), Some(&ctx)));
        // Recursive (2,2): r1 < 2 * (r2 + r3).
        assert!(class_ok(&m(|x| x.recursive_cl = Some((2.0, 2))), 4, Some(&[2, 1, 1]), Some(&ctx)));
        assert!(!class_ok(&m(|x| x.recursive_cl = Some((2.0, 2))), 5, Some(&[4, 1, 0]), Some(&ctx)));
        // Equal-distance EMD of (1, 0, 0) against uniform thirds is 2/3.
        assert!((ctx.emd(&[3, 0, 0], 3) - 2.0 / 3.0).abs() < 1e-12);
        assert!(!class_ok(&m(|x| x.t = Some(0.5)), 3, Some(&[3, 0, 0]), Some(&ctx)));
        assert!(class_ok(&m(|x| x.t = Some(0.0)), 3, Some(&[1, 1, 1]), Some(&ctx)));
    }

    #[test]
    fn ordered_emd_follows_li_et_al() {
        // Salaries 3k, 4k, 5k uniformly overall; a class holding only 3k: cumulative
        // differences 2/3, 1/3, 0 over m - 1 = 2 gives 0.5.
        let ctx = SensitiveContext::new(&["3000".into(), "5000".into(), "4000".into()], &[1, 1, 1]);
        assert!(ctx.order.is_some());
        assert!((ctx.emd(&[3, 0, 0], 3) - 0.5).abs() < 1e-12);
        assert!((ctx.emd(&[0, 3, 0], 3) - 0.5).abs() < 1e-12);
    }
}
