//! Class-size and diversity checks over the class × sensitive-value histogram of a release:
//! k-anonymity (Sweeney 2002), and distinct, entropy and recursive (c,l)-diversity
//! (Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity", TKDD 2007, Defs. 4.1
//! and 4.2 and the distinct variant of Section 4.2).
//!
//! Written from the definitions, independent of the anonymization methods' grouping.

use super::{Histogram, Verdict};

/// Report the first failing class (by its published labels) and the number of failing classes.
pub(super) fn outcome(h: &Histogram, failing: Vec<(usize, String)>, summary: String) -> Verdict {
    let suppressed = h.suppressed_note();
    match failing.first() {
        None => Verdict::holds(format!("{summary}{suppressed}")),
        Some((class, why)) => Verdict::fails(
            failing.len() as i64,
            format!(
                "{} of {} classes fail; first: class ({}) {why}{suppressed}",
                failing.len(),
                h.classes.len(),
                h.classes[*class].label
            ),
        ),
    }
}

/// Every equivalence class has at least k rows (counterfeit rows count, as they do for the
/// attacker who cannot tell them apart).
pub(crate) fn k_anonymity(h: &Histogram, k: u64) -> Verdict {
    let failing: Vec<(usize, String)> = h
        .classes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.size() < k)
        .map(|(i, c)| (i, format!("has {} rows < k={k}", c.size())))
        .collect();
    let min = h.classes.iter().map(|c| c.size()).min().unwrap_or(0);
    outcome(h, failing, format!("{} classes, smallest has {min} rows", h.classes.len()))
}

/// Every class holds at least l distinct sensitive values.
pub(crate) fn distinct_l(h: &Histogram, l: u64) -> Verdict {
    let failing: Vec<(usize, String)> = h
        .classes
        .iter()
        .enumerate()
        .filter(|(_, c)| (c.counts.len() as u64) < l)
        .map(|(i, c)| (i, format!("has {} distinct sensitive values < l={l}", c.counts.len())))
        .collect();
    let min = h.classes.iter().map(|c| c.counts.len()).min().unwrap_or(0);
    outcome(h, failing, format!("{} classes, fewest distinct sensitive values {min}", h.classes.len()))
}

/// Shannon entropy (natural log) of a class's sensitive distribution.
pub(crate) fn entropy(counts: &[(u32, u64)]) -> f64 {
    let n: u64 = counts.iter().map(|c| c.1).sum();
    if n == 0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|c| c.1 > 0)
        .map(|&(_, c)| {
            let p = c as f64 / n as f64;
            -p * p.ln()
        })
        .sum()
}

/// Entropy l-diversity: -Σ p(s) ln p(s) >= ln l in every class (a 1e-12 tolerance absorbs the
/// rounding of a class that is exactly uniform over l values).
pub(crate) fn entropy_l(h: &Histogram, l: f64) -> Verdict {
    let bound = l.ln();
    let failing: Vec<(usize, String)> = h
        .classes
        .iter()
        .enumerate()
        .map(|(i, c)| (i, entropy(&c.counts)))
        .filter(|(_, e)| *e < bound - 1e-12)
        .map(|(i, e)| (i, format!("has entropy {e:.4} < ln l = {bound:.4} (exp = {:.3})", e.exp())))
        .collect();
    let min = h.classes.iter().map(|c| entropy(&c.counts)).fold(f64::INFINITY, f64::min);
    let min = if min.is_finite() { min } else { 0.0 };
    outcome(h, failing, format!("{} classes, lowest entropy {min:.4} (ln l = {bound:.4})", h.classes.len()))
}

/// Recursive (c,l)-diversity: with r_1 >= r_2 >= ... >= r_m the class's value counts,
/// r_1 < c (r_l + r_{l+1} + ... + r_m). A class with fewer than l values has an empty tail
/// (sum 0) and fails.
pub(crate) fn recursive_holds(counts: &[(u32, u64)], c: f64, l: u64) -> (bool, u64, u64) {
    let mut r: Vec<u64> = counts.iter().map(|x| x.1).collect();
    r.sort_unstable_by(|a, b| b.cmp(a));
    let r1 = r.first().copied().unwrap_or(0);
    let tail: u64 = r.iter().skip(l.saturating_sub(1) as usize).sum();
    ((r1 as f64) < c * tail as f64, r1, tail)
}

pub(crate) fn recursive_cl(h: &Histogram, c: f64, l: u64) -> Verdict {
    let failing: Vec<(usize, String)> = h
        .classes
        .iter()
        .enumerate()
        .filter_map(|(i, cl)| {
            let (ok, r1, tail) = recursive_holds(&cl.counts, c, l);
            (!ok).then(|| (i, format!("has r_1 = {r1} >= c * (r_{l} + ... + r_m) = {c} * {tail}")))
        })
        .collect();
    outcome(h, failing, format!("{} classes", h.classes.len()))
}

#[cfg(test)]
mod tests {
    use super::super::{ClassHist, Histogram};
    use super::*;

    fn hist(classes: Vec<Vec<(u32, u64)>>) -> Histogram {
        let classes =
            classes.into_iter().enumerate().map(|(i, counts)| ClassHist { label: format!("c{i}"), counts }).collect();
        Histogram {
            classes,
            values: vec!["a".into(), "b".into(), "c".into()],
            numeric: None,
            overall: vec![],
            suppressed: 0,
        }
    }

    #[test]
    fn k_and_distinct() {
        let h = hist(vec![vec![(0, 2), (1, 1)], vec![(0, 5)]]);
        assert!(k_anonymity(&h, 3).holds);
        let o = k_anonymity(&h, 4);
        assert!(!o.holds && o.violations == 1 && o.detail.contains("class (c0)"), "{}", o.detail);
        let o = distinct_l(&h, 2);
        assert!(!o.holds && o.detail.contains("c1"));
    }

    #[test]
    fn entropy_and_recursive() {
        let h = hist(vec![vec![(0, 2), (1, 2)]]);
        assert!(entropy_l(&h, 2.0).holds);
        assert!(!entropy_l(&h, 2.1).holds);
        // r = (3, 1, 1): r_1 = 3 < 2 * (1 + 1) holds for l = 2, c = 2; fails for c = 1.5.
        assert!(recursive_holds(&[(0, 3), (1, 1), (2, 1)], 2.0, 2).0);
        assert!(!recursive_holds(&[(0, 3), (1, 1), (2, 1)], 1.5, 2).0);
        assert!(!recursive_holds(&[(0, 3)], 10.0, 2).0);
    }
}
