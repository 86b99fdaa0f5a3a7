//! Privacy models checked on one equivalence class: k-anonymity (Sweeney), distinct, entropy
//! and recursive (c,l)-diversity (Machanavajjhala et al. 2007) and t-closeness (Li et al.
//! 2007), and k-map against a declared population ([`super::kmap`]). A class fails when any model fails; failing classes are suppressed while the
//! suppression budget lasts.

use super::kmap::KMap;
use crate::error::{AnonError, Result};
use crate::formulas::emd::{equal_emd_of, ordered_emd_of};
use crate::formulas::entropy::entropy_nats;

/// The models a release must satisfy; k-anonymity always applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Models {
    pub(crate) k: u64,
    pub distinct_l: Option<u64>,
    pub entropy_l: Option<f64>,
    /// (c, l)
    pub recursive_cl: Option<(f64, u64)>,
    pub t: Option<f64>,
    pub k_map: Option<KMap>,
}

impl Models {
    pub(crate) fn k_only(k: u64) -> Self {
        Models { k, distinct_l: None, entropy_l: None, recursive_cl: None, t: None, k_map: None }
    }

    /// The smallest class that passes: k, or k-map's threshold once resolved against the table
    /// ([`Models::for_table`]). Both are class sizes, so the models stay monotone.
    pub(crate) fn min_size(&self) -> u64 {
        self.k.max(self.k_map.as_ref().and_then(|m| m.threshold).unwrap_or(0))
    }

    /// The models for a table of `records` records: k-map's threshold depends on its size.
    pub(crate) fn for_table(&self, records: u64) -> Self {
        let mut out = self.clone();
        if let Some(m) = &mut out.k_map {
            m.resolve(records);
        }
        out
    }

    /// Do the models look at the sensitive attribute?
    pub(crate) fn need_sensitive(&self) -> bool {
        self.distinct_l.is_some() || self.entropy_l.is_some() || self.recursive_cl.is_some() || self.t.is_some()
    }

    /// With a suppression budget, only k-anonymity and distinct l-diversity stay monotone
    /// under generalization: merging a failing class into a passing one can make the union
    /// fail entropy/recursive diversity or t-closeness (a skewed class dilutes a balanced one).
    /// Without suppression every model here is monotone (entropy is concave, EMD convex).
    pub(crate) fn monotone_with_suppression(&self) -> bool {
        self.entropy_l.is_none() && self.recursive_cl.is_none() && self.t.is_none()
    }

    /// The parameters alone; k-map's population is checked against the table
    /// ([`super::kmap::KMap::validate`]).
    pub(crate) fn validate(&self, function: &str) -> Result<()> {
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
            return bad("t", format!("must be in [0, 1], got {}", crate::dp::ledger::shown(t)));
        }
        Ok(())
    }

    /// A short description for reports: `k=5, distinct_l=3, t=0.15`.
    pub(crate) fn describe(&self) -> String {
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
        if let Some(m) = &self.k_map {
            parts.push(m.describe());
        }
        parts.join(", ")
    }
}

/// The table-wide sensitive distribution t-closeness compares against, and how far apart two
/// values are: equal distance for categorical values, ordered distance for numeric ones.
#[derive(Debug, Clone)]
pub(crate) struct SensitiveContext {
    /// Overall frequency of each sensitive code.
    pub(crate) global: Vec<f64>,
    /// Numeric sensitive attribute: codes in ascending value order (ordered-distance EMD).
    order: Option<Vec<usize>>,
    /// The largest EMD any class can have: the EMD is convex in the class's distribution, so
    /// its maximum over all distributions is at a single value.
    max_emd: f64,
}

impl SensitiveContext {
    pub(crate) fn new(values: &[String], counts: &[u64]) -> Self {
        let total: u64 = counts.iter().sum();
        let global = counts.iter().map(|&c| c as f64 / total.max(1) as f64).collect();
        let numbers: Option<Vec<f64>> = values.iter().map(|v| v.trim().parse::<f64>().ok()).collect();
        let order = numbers.map(|nums| {
            let mut idx: Vec<usize> = (0..nums.len()).collect();
            idx.sort_by(|&a, &b| nums[a].total_cmp(&nums[b]));
            idx
        });
        let mut ctx = SensitiveContext { global, order, max_emd: 1.0 };
        ctx.max_emd = ctx.point_mass_max_emd();
        ctx
    }

    /// Largest EMD of a class holding one value only. Equal distance: 1 minus the rarest
    /// value's share. Ordered distance, all of a class at sorted position j: the cumulative
    /// differences are -Q_i before j and 1 - Q_i from j on (Q the global cumulative shares).
    fn point_mass_max_emd(&self) -> f64 {
        match &self.order {
            None => 1.0 - self.global.iter().copied().fold(1.0, f64::min),
            Some(order) if order.len() < 2 => 0.0,
            Some(order) => {
                let q: Vec<f64> = order
                    .iter()
                    .scan(0.0, |c, &i| {
                        *c += self.global[i];
                        Some(*c)
                    })
                    .collect();
                // below[j] = sum_{i<j} Q_i, above[j] = sum_{i>=j} (1 - Q_i), both by running sums.
                let mut above: f64 = q.iter().map(|&x| (1.0 - x).abs()).sum();
                let mut below = 0.0;
                let mut best = 0.0f64;
                for &x in &q {
                    best = best.max(below + above);
                    below += x;
                    above -= (1.0 - x).abs();
                }
                best / (order.len() as f64 - 1.0)
            }
        }
    }

    /// Earth mover's distance between a class histogram and the global distribution: the
    /// equal ground distance, or the ordered one over the sorted domain (numeric attributes).
    pub(crate) fn emd(&self, hist: &[u32], size: u64) -> f64 {
        let n = size.max(1) as f64;
        match &self.order {
            None => equal_emd_of(hist.iter().zip(&self.global).map(|(&h, &q)| (h as f64 / n, q))),
            Some(order) => ordered_emd_of(order.iter().map(|&i| (hist[i] as f64 / n, self.global[i]))),
        }
    }
}

/// Rounding allowance of the thresholds: a class exactly at entropy ln(l) or at EMD t passes.
const TOLERANCE: f64 = 1e-12;
/// Slack against rounding in the share bounds below (they compare sums of logarithms and
/// cumulative differences computed in another order than the subclasses' would be).
const SHARE_SLACK: f64 = 1e-9;

fn distinct(hist: &[u32]) -> usize {
    hist.iter().filter(|&&c| c > 0).count()
}

fn entropy(hist: &[u32], size: u64) -> f64 {
    entropy_nats(hist.iter().map(|&c| u64::from(c)), size)
}

/// A lower bound of the share of a class's records that fail the models at every
/// specialization of its node, where the class is split into subclasses judged one by one
/// (the node itself included). Summed over a node's classes it bounds the records every
/// specialization must suppress; the sum never decreases towards the bottom, so a node whose
/// sum exceeds the suppression limit rules out its whole down-set even for models that are not
/// monotone with suppression (entropy, recursive diversity, t-closeness).
///
/// - k-anonymity, distinct l-diversity, and recursive (c,l)-diversity's need for l values:
///   subclasses are smaller and hold no more values, so all of the class fails (share 1).
/// - t-closeness: the EMD to the table's distribution is convex, so the class's EMD is at
///   most the subclasses' mean, where passing ones count at most t and failing ones at most
///   [`SensitiveContext::max_emd`]: failing share >= (EMD - t) / (max_emd - t).
/// - entropy l-diversity: entropy is concave, so the class's entropy is at least the
///   subclasses' mean, where passing ones count at least ln l: share >= 1 - H / ln l.
///
/// Both bounds are convex in the class's EMD or entropy, so by Jensen's inequality the
/// subclasses' shares weighted by size add up to at least the class's: the monotonicity.
/// 0 for a class that passes.
pub(crate) fn failing_share(models: &Models, size: u64, hist: Option<&[u32]>, ctx: Option<&SensitiveContext>) -> f64 {
    if size < models.min_size() {
        return 1.0;
    }
    let Some(hist) = hist else { return 0.0 };
    let values = distinct(hist);
    if models.distinct_l.is_some_and(|l| (values as u64) < l)
        || models.recursive_cl.is_some_and(|(_, l)| (values as u64) < l)
    {
        return 1.0;
    }
    let mut share = 0.0f64;
    if let Some(l) = models.entropy_l {
        let floor = l.ln() - TOLERANCE;
        if floor > 0.0 {
            share = share.max(1.0 - (entropy(hist, size) + SHARE_SLACK) / floor);
        }
    }
    if let (Some(t), Some(ctx)) = (models.t, ctx) {
        let (t, top) = (t + TOLERANCE, ctx.max_emd + SHARE_SLACK);
        if top > t {
            share = share.max((ctx.emd(hist, size) - SHARE_SLACK - t) / (top - t));
        }
    }
    share.clamp(0.0, 1.0)
}

/// Does a class of `size` records with sensitive histogram `hist` satisfy every model?
pub(crate) fn class_ok(models: &Models, size: u64, hist: Option<&[u32]>, ctx: Option<&SensitiveContext>) -> bool {
    if size < models.min_size() {
        return false;
    }
    let Some(hist) = hist else { return true };
    if let Some(l) = models.distinct_l
        && (distinct(hist) as u64) < l
    {
        return false;
    }
    if let Some(l) = models.entropy_l
        && entropy(hist, size) < l.ln() - TOLERANCE
    {
        return false;
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
        && ctx.emd(hist, size) > t + TOLERANCE
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

    /// The failing-share bound on many random classes split at random: the records failing
    /// in the split are at least the class's share, and the subclasses' shares add up to at
    /// least the class's (the monotonicity the search prunes with).
    #[test]
    fn failing_share_bounds_every_split() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let values: Vec<String> = (0..5).map(|v| (v * 10).to_string()).collect();
        let labels: Vec<String> = (0..5).map(|v| format!("v{v}")).collect();
        for case in 0..4000 {
            let counts: Vec<u64> = (0..5).map(|_| 1 + next(20)).collect();
            let ctx = SensitiveContext::new(if case % 2 == 0 { &values } else { &labels }, &counts);
            let mut models = Models::k_only(1 + next(4));
            match case % 4 {
                0 => models.t = Some(next(60) as f64 / 100.0),
                1 => models.entropy_l = Some(1.0 + next(30) as f64 / 10.0),
                2 => models.recursive_cl = Some((2.0, 1 + next(3))),
                _ => {
                    models.t = Some(next(60) as f64 / 100.0);
                    models.entropy_l = Some(1.0 + next(20) as f64 / 10.0);
                }
            }
            let parts = 1 + next(4) as usize;
            let subs: Vec<Vec<u32>> = (0..parts).map(|_| (0..5).map(|_| next(6) as u32).collect()).collect();
            let size = |h: &[u32]| h.iter().map(|&c| c as u64).sum::<u64>();
            let class: Vec<u32> = (0..5).map(|v| subs.iter().map(|h| h[v]).sum()).collect();
            let n = size(&class);
            if n == 0 {
                continue;
            }
            let share = |h: &[u32]| failing_share(&models, size(h), Some(h), Some(&ctx)) * size(h) as f64;
            let failing: u64 = subs
                .iter()
                .filter(|h| size(h) > 0 && !class_ok(&models, size(h), Some(h), Some(&ctx)))
                .map(|h| size(h))
                .sum();
            let parts_share: f64 = subs.iter().filter(|h| size(h) > 0).map(|h| share(h)).sum();
            assert!(failing as f64 >= share(&class) - 1e-9, "{models:?} {subs:?}: {failing} < {}", share(&class));
            assert!(parts_share >= share(&class) - 1e-9, "{models:?} {subs:?}: {parts_share} < {}", share(&class));
            if class_ok(&models, n, Some(&class), Some(&ctx)) {
                assert_eq!(share(&class), 0.0, "{models:?} {class:?} passes");
            }
        }
    }

    #[test]
    fn ordered_emd_follows_li_et_al() {
        // Salaries 3k, 4k, 5k uniformly overall; a class holding only 3k: cumulative
        // differences 2/3, 1/3, 0 over m - 1 = 2 gives 0.5.
        let ctx = SensitiveContext::new(&["3000".into(), "5000".into(), "4000".into()], &[1, 1, 1]);
        assert!(ctx.order.is_some());
        assert!((ctx.emd(&[3, 0, 0], 3) - 0.5).abs() < 1e-12);
        assert!((ctx.emd(&[0, 3, 0], 3) - 0.5).abs() < 1e-12);
        // The farthest class holds only the smallest or the largest salary.
        assert!((ctx.max_emd - 0.5).abs() < 1e-12);
        let cat = SensitiveContext::new(&["a".into(), "b".into()], &[1, 3]);
        assert!((cat.max_emd - 0.75).abs() < 1e-12 && (cat.emd(&[2, 0], 2) - 0.75).abs() < 1e-12);
    }
}
