//! The two-way-marginal score, the standard score of synthetic-data benchmarks (the k-marginal
//! score with k = 2): for every pair of declared attributes, 1 − ½·L1 between the normalized
//! joint histograms of the original and of the release, averaged over the pairs and scaled to
//! 0–1000 (1000: every two-way marginal identical; 0: disjoint supports).
//!
//! The release's histogram of a pair (a, b) is the query harness's estimate of
//! `SELECT a, b, COUNT(*) FROM original GROUP BY a, b` (src/eval, its one uniform reading): a
//! generalized value is spread uniformly over the hierarchy leaves it covers, attributes
//! independent within a record; a suppressed record is spread over the whole domain; a
//! counterfeit counts with the catalog's probability of being real (h-ceiling paper, Fig. 4),
//! every record real without a catalog. The leaves are then binned, on both sides alike, into
//! the nodes of one declared hierarchy level per attribute (numeric: the first level above the
//! leaves, categorical: the leaves; `marginal_levels=` chooses), values no hierarchy names
//! keeping a bin of their own. docs/metrics.md states the choices and why.

use crate::error::{AnonError, Result};
use crate::eval::{GroupAnswers, Val, answer_all, group_answers};
use crate::hierarchy::{Hierarchy, HierarchyKind};
use crate::meta::{Role, TableMeta};
use datafusion::prelude::SessionContext;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The metric's name in `anon_metrics` and `metric_value`.
pub(crate) const METRIC: &str = "two_way_marginal";

/// One scored attribute: its hierarchy (if declared) and the level whose nodes are its bins.
#[derive(Debug, Clone)]
pub(crate) struct Attribute {
    pub(crate) name: String,
    hierarchy: Option<Arc<Hierarchy>>,
    pub(crate) level: usize,
}

/// A bin of one attribute: a node of its declared level, or a value its hierarchy lacks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bin {
    Node(u32),
    Value(String),
}

impl Attribute {
    fn bin(&self, v: &Val) -> Bin {
        let leaf = self.hierarchy.as_ref().and_then(|h| {
            let leaf = match v {
                Val::Num(x) if h.is_numeric() => h.leaf_of_value(*x),
                Val::Null => h.null_leaf(),
                _ => h.leaf_of_label(&v.key_text()),
            };
            leaf.map(|l| h.ancestor(0, self.level, l))
        });
        match leaf {
            Some(node) => Bin::Node(node),
            None => Bin::Value(v.key_text()),
        }
    }
}

/// The attributes scored: quasi-identifiers and sensitive (informative) attributes, in
/// declaration order; set-valued columns and code hierarchies are left out (a set is no single
/// value to histogram). `levels` overrides the default level per attribute.
pub(crate) fn attributes(
    function: &str,
    meta: &TableMeta,
    original: &str,
    levels: &[(String, usize)],
) -> Result<Vec<Attribute>> {
    let mut out: Vec<Attribute> = Vec::new();
    for (col, role) in &meta.roles {
        if !matches!(role, Role::QuasiIdentifier | Role::Sensitive) {
            continue;
        }
        let hierarchy = meta.hierarchies.get(col).cloned();
        if hierarchy.as_ref().is_some_and(|h| h.kind() == HierarchyKind::Codes) {
            continue;
        }
        let level = hierarchy.as_ref().map_or(0, |h| h.finest_band());
        out.push(Attribute { name: col.clone(), hierarchy, level });
    }
    for (name, level) in levels {
        let bad = |m: String| AnonError::argument(function, "marginal_levels", m);
        let names: Vec<String> = out.iter().map(|a| a.name.clone()).collect();
        let a = out
            .iter_mut()
            .find(|a| a.name == *name)
            .ok_or_else(|| bad(format!("'{name}' is not a scored attribute of '{original}' ({})", names.join(", "))))?;
        let height = a.hierarchy.as_ref().map_or(0, |h| h.height());
        if *level > height {
            return Err(bad(format!("'{name}' has levels 0..={height} in its declared hierarchy, not {level}")));
        }
        a.level = *level;
    }
    Ok(out)
}

/// `marginal_levels=age:2,location:1` (the spec after the `=`): attribute and level pairs.
pub(crate) fn parse_levels(function: &str, spec: &str) -> Result<Vec<(String, usize)>> {
    let bad = |m: String| AnonError::argument(function, "marginal_levels", m);
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| {
            let (name, level) = part.split_once(':').ok_or_else(|| bad(format!("'{part}' is not attribute:level")))?;
            let level =
                level.trim().parse().map_err(|_| bad(format!("level '{}' is not a whole number", level.trim())))?;
            Ok((name.trim().to_string(), level))
        })
        .collect()
}

/// The score of `release` against `original` (None when fewer than two attributes are
/// declared), with the number of pairs.
pub(crate) async fn two_way_score(
    ctx: &SessionContext,
    meta: &TableMeta,
    original: &str,
    release: &str,
    catalog: Option<&str>,
    attrs: &[Attribute],
) -> Result<Option<(f64, usize)>> {
    let pairs: Vec<(usize, usize)> = (0..attrs.len()).flat_map(|i| (i + 1..attrs.len()).map(move |j| (i, j))).collect();
    if pairs.is_empty() {
        return Ok(None);
    }
    let quote = |c: &str| format!("\"{}\"", c.replace('"', "\"\""));
    let queries: Vec<String> = pairs
        .iter()
        .map(|&(i, j)| {
            let (a, b) = (quote(&attrs[i].name), quote(&attrs[j].name));
            format!("SELECT {a}, {b}, COUNT(*) FROM {original} GROUP BY {a}, {b}")
        })
        .collect();
    let answers = group_answers(answer_all(ctx, meta, &queries, original, release, catalog).await?);
    let scores: Vec<f64> =
        pairs.iter().zip(&answers).map(|(&(i, j), ans)| pair_score_of(&attrs[i], &attrs[j], ans)).collect();
    Ok(Some((1000.0 * scores.iter().sum::<f64>() / scores.len() as f64, scores.len())))
}

/// The score of `release` against `original` with the default bins (the declared hierarchies'
/// first level above the leaves for numeric attributes, the leaves otherwise), for embedders
/// and `anonfusion evaluate`: (score, attribute pairs), or None with fewer than two
/// attributes declared.
pub async fn two_way_marginal(
    ctx: &SessionContext,
    registry: &crate::session::Registry,
    original: &str,
    release: &str,
    catalog: Option<&str>,
) -> Result<Option<(f64, usize)>> {
    let meta = registry.require(original)?;
    let attrs = attributes("two_way_marginal", &meta, original, &[])?;
    two_way_score(ctx, &meta, original, release, catalog, &attrs).await
}

/// The metric row: the score and how its bins were read.
pub(crate) fn metric(score: f64, pairs: usize, attrs: &[Attribute]) -> super::Metric {
    let levels: Vec<String> = attrs.iter().map(|a| format!("{}:{}", a.name, a.level)).collect();
    super::m(
        METRIC,
        score,
        &format!(
            "two-way-marginal score, 1000 x mean over {pairs} attribute pairs of 1 - L1/2 between normalized joint \
             histograms; bins at hierarchy levels {} (marginal_levels=); the harness's uniform reading",
            levels.join(",")
        ),
    )
}

fn pair_score_of(a: &Attribute, b: &Attribute, ans: &GroupAnswers) -> f64 {
    let binned = |groups: &[(Vec<Val>, f64)]| {
        let mut out: BTreeMap<(Bin, Bin), f64> = BTreeMap::new();
        for (key, count) in groups {
            *out.entry((a.bin(&key[0]), b.bin(&key[1]))).or_default() += count;
        }
        out
    };
    pair_score(&binned(&ans.original), &binned(&ans.estimated))
}

/// 1 − ½·Σ|p − q| for the histograms normalized to sum 1; 0 when either side is empty (no
/// distribution to compare). Sums in key order, so a score is the same from run to run.
pub(crate) fn pair_score<K: Ord>(original: &BTreeMap<K, f64>, release: &BTreeMap<K, f64>) -> f64 {
    let (n, m) = (original.values().sum::<f64>(), release.values().sum::<f64>());
    if n <= 0.0 || m <= 0.0 {
        return 0.0;
    }
    let mut l1: f64 = original.iter().map(|(k, o)| (o / n - release.get(k).map_or(0.0, |r| r / m)).abs()).sum();
    l1 += release.iter().filter(|(k, _)| !original.contains_key(k)).map(|(_, r)| r / m).sum::<f64>();
    (1.0 - l1 / 2.0).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(cells: &[(&str, f64)]) -> BTreeMap<String, f64> {
        cells.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// Original a:6 b:2 (p = .75, .25); release a:1 b:1 c:2 (q = .25, .25, .5):
    /// L1 = |.75 − .25| + |.25 − .25| + |0 − .5| = 1, so 1 − ½ = 0.5.
    #[test]
    fn one_minus_half_the_l1_distance_of_the_normalized_histograms() {
        let o = hist(&[("a", 6.0), ("b", 2.0)]);
        assert_eq!(pair_score(&o, &hist(&[("a", 1.0), ("b", 1.0), ("c", 2.0)])), 0.5);
        // Scale does not matter, only the shape: 3:1 is the original's 6:2.
        assert_eq!(pair_score(&o, &hist(&[("a", 3.0), ("b", 1.0)])), 1.0);
        assert_eq!(pair_score(&o, &hist(&[("c", 5.0)])), 0.0);
        assert_eq!(pair_score(&o, &hist(&[])), 0.0);
    }

    #[test]
    fn levels_parse_and_name_the_part_at_fault() {
        assert_eq!(parse_levels("f", "age:2, location:1").unwrap(), vec![("age".into(), 2), ("location".into(), 1)]);
        let e = parse_levels("f", "age=2").unwrap_err().to_string();
        assert!(e.contains("marginal_levels") && e.contains("attribute:level"), "{e}");
        let e = parse_levels("f", "age:x").unwrap_err().to_string();
        assert!(e.contains("not a whole number"), "{e}");
    }
}
