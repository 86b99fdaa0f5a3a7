//! What a released value says about the original one: the uniform distribution over the
//! hierarchy leaves it covers (the papers' assumption, and the only place it is made). Which
//! leaves a label or code covers is [`crate::release::cover`]'s to say, for this harness and
//! `anon_metrics` alike.
//!
//! - numeric quasi-identifier `c`: released as `c_lo`, `c_hi`; it covers the hierarchy's leaf
//!   values within `[c_lo, c_hi]` (NULL bounds: suppressed, the whole domain);
//! - categorical quasi-identifier: the node label covers the leaves under that node (`*`, NULL:
//!   the whole domain);
//! - set-valued column: an element is a code, a node of the code hierarchy, or a generalized
//!   code `(a, b, ...)` that stands for one of the codes (or nodes) it lists;
//! - any other column is released as it is: a point mass.

use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::hierarchy::format_number;
pub(crate) use crate::release::LabelIndex;
use std::sync::Arc;

/// A value an attribute may take.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Num(f64),
    Str(Arc<str>),
    Bool(bool),
    Null,
}

impl Val {
    /// The group-key text, formatted as the original query's key is (whole numbers without `.0`).
    pub(crate) fn key_text(&self) -> String {
        match self {
            Val::Num(x) => format_number(*x),
            Val::Str(s) => s.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Null => "NULL".into(),
        }
    }
}

/// A discrete distribution: values with probabilities summing to 1.
pub(crate) type Support = Arc<Vec<(Val, f64)>>;

pub(crate) fn uniform(vals: Vec<Val>) -> Support {
    let w = 1.0 / vals.len().max(1) as f64;
    Arc::new(vals.into_iter().map(|v| (v, w)).collect())
}

pub(crate) fn point(v: Val) -> Support {
    Arc::new(vec![(v, 1.0)])
}

pub(crate) fn bernoulli(p: f64) -> Support {
    Arc::new(vec![(Val::Bool(true), p), (Val::Bool(false), 1.0 - p)])
}

/// Leaves of a numeric hierarchy covered by released bounds (NULL: suppressed, everything).
pub(crate) fn numeric_support(
    h: &Hierarchy,
    release: &str,
    col: &str,
    lo: Option<f64>,
    hi: Option<f64>,
) -> Result<Support> {
    let values = h.leaf_values();
    let (a, b) = match (lo, hi) {
        (Some(a), Some(b)) => (values.partition_point(|&x| x < a), values.partition_point(|&x| x <= b)),
        _ => (0, values.len()),
    };
    if a >= b {
        return Err(AnonError::column(
            release,
            &format!("{col}_lo/{col}_hi"),
            format!("released bounds cover no leaf of the hierarchy of '{col}': a release of another table?"),
        ));
    }
    Ok(uniform(values[a..b].iter().map(|&v| Val::Num(v)).collect()))
}

/// Leaves of a categorical hierarchy covered by a released label (NULL: everything); `at` is
/// (release, column), for the error.
pub(crate) fn categorical_support(
    h: &Hierarchy,
    index: &LabelIndex,
    at: (&str, &str),
    label: Option<&str>,
) -> Result<Support> {
    let (release, col) = at;
    let leaf_label = |l: u32| Val::Str(Arc::from(h.label(0, l)));
    match label {
        None => Ok(uniform((0..h.leaf_count() as u32).map(leaf_label).collect())),
        Some(label) => match index.leaves(label) {
            Some(ls) => Ok(uniform(ls.iter().map(|&l| leaf_label(l)).collect())),
            None => Err(AnonError::column(
                release,
                col,
                format!("holds a label that is no node of the hierarchy of '{col}': a release of another table?"),
            )),
        },
    }
}

/// The leaf codes a released set-valued element covers ([`crate::release::cover`]: a code, a
/// node's leaves, or the union of what a generalized code `(a, b, ...)` lists); `None` when it
/// names no code or node of the hierarchy.
pub(crate) fn code_cover(h: &Hierarchy, index: &LabelIndex, element: &str) -> Option<Vec<String>> {
    Some(index.element(element)?.into_iter().map(|l| h.label(0, l).to_string()).collect())
}

/// Probability that one released element stands for `code`: an exact element is certain; a
/// generalized element covering k codes including it holds it with 1/k.
pub(crate) fn element_presence(cover: &[String], element: &str, code: &str) -> f64 {
    if element == code {
        1.0
    } else if cover.iter().any(|c| c == code || same_code(c, code)) {
        1.0 / cover.len() as f64
    } else {
        0.0
    }
}

/// Probability that a released record's set holds a code, from its elements' probabilities
/// (independent of each other).
pub(crate) fn any_of(presences: impl Iterator<Item = f64>) -> f64 {
    1.0 - presences.fold(1.0, |miss, p| miss * (1.0 - p))
}

/// Whether two codes are the same up to their dots (`053.71` and `05371`), without allocating:
/// this runs for every element of every released record in every query of a workload.
fn same_code(a: &str, b: &str) -> bool {
    fn digits(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes().filter(|&c| c != b'.')
    }
    digits(a).eq(digits(b))
}

/// Mean and non-null mass of a numeric distribution (for a measure independent of the rest).
pub(crate) fn mean_parts(s: &[(Val, f64)]) -> (f64, f64) {
    s.iter().fold((0.0, 0.0), |(sum, mass), (v, w)| match v {
        Val::Num(x) => (sum + w * x, mass + w),
        Val::Null => (sum, mass),
        _ => (sum, mass + w),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_match_up_to_their_dots() {
        assert!(super::same_code("053.71", "05371"));
        assert!(super::same_code("V01.1", "V011"));
        assert!(!super::same_code("053.71", "053.7"));
        assert!(!super::same_code("0537", "05371"));
    }
}
