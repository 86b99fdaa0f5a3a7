//! Local k-anonymity: classes that keep more than one level per column allows.
//!
//! - `local=suppression` (sdcMicro's `localSuppression`): the search picks its full-domain node
//!   under the suppression limit as usual, and instead of deleting the records of the classes
//!   that fail the models, single quasi-identifier values of theirs are suppressed (written `*`,
//!   the top of the attribute's hierarchy) until they form classes that pass. The cells are
//!   The node is then lowered while that loses less (`descend`). The cells are
//!   chosen greedily, fewest suppressed cells first and, among patterns of as many cells, the
//!   least important attributes first: `importance=a|b|c` lists quasi-identifiers from the most
//!   important (suppressed last); unlisted ones are less important than listed ones, and without
//!   the option an attribute with more distinct released values is less important (sdcMicro's
//!   default). Records no pattern short of every attribute can place are suppressed whole.
//! - `local=recoding`: top-down multidimensional partitioning under the declared hierarchies
//!   ([`super::mondrian`]); no lattice search.
//! - `local=iterative`: rounds of full-domain generalization from the bottom, each round's
//!   classes at its own node ([`super::iterative`]); loses less than `recoding` on Adult.
//!
//! A class is the set of records whose released tuples are identical (the definition
//! `verify_release` checks, docs/verify.md): a record with `*` in one attribute is in a class
//! with the records that have `*` there and its other values, never counted into a class it
//! merely could belong to.

use super::judge::{Judge, Tally};
use super::models::Models;
use super::{KanonConfig, KanonResult, iterative, mondrian, search_cancellable};
use crate::encode::source::Source;
use crate::encode::{FrequencyTable, RecodedRows, STAR, group, materialize_recoded};
use crate::error::{AnonError, Result};
use crate::methods::PassTimes;
use crate::progress::Progress;
use datafusion::prelude::DataFrame;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

const F: &str = "kanon_anonymize";

/// Which local method, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalMode {
    Suppression,
    Recoding,
    Iterative,
}

impl LocalMode {
    pub(crate) fn parse(s: &str) -> Result<Option<Self>> {
        match s.trim().to_ascii_lowercase().as_str() {
            "suppression" => Ok(Some(LocalMode::Suppression)),
            "recoding" => Ok(Some(LocalMode::Recoding)),
            "iterative" => Ok(Some(LocalMode::Iterative)),
            "none" => Ok(None),
            _ => Err(AnonError::argument(
                F,
                "local",
                format!("unknown local method '{s}' (suppression, recoding, iterative, none)"),
            )),
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            LocalMode::Suppression => "suppression",
            LocalMode::Recoding => "recoding",
            LocalMode::Iterative => "iterative",
        }
    }
    /// Does this mode recode classes to their own levels (no lattice search, no suppression)?
    fn recodes(self) -> bool {
        self != LocalMode::Suppression
    }
}

/// The `local=` and `importance=` options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalOptions {
    pub mode: Option<LocalMode>,
    /// Quasi-identifiers from the most important (suppressed last).
    pub importance: Vec<String>,
}

impl LocalOptions {}

/// What a local release costs, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSummary {
    pub mode: LocalMode,
    /// Suppressed cells of the records kept (a record suppressed whole is not counted here).
    pub suppressed_cells: u64,
    /// Records with at least one suppressed cell, kept.
    pub records_with_suppressed_cells: u64,
    /// Average generalization degree of every cell (LM), a suppressed record counting 1.
    pub loss: f64,
}

/// The attributes from the most to the least important (see the module's doc).
fn importance_order(ft: &FrequencyTable, names: &[String], levels: &[u8]) -> Result<Vec<usize>> {
    let mut order = Vec::new();
    for n in names {
        let a =
            ft.qis.iter().position(|q| &q.name == n).ok_or_else(|| {
                AnonError::argument(F, "importance", format!("'{n}' is not a declared quasi-identifier"))
            })?;
        order.push(a);
    }
    let distinct = |a: usize| {
        let up = ft.qis[a].hierarchy.up(levels[a] as usize);
        ft.qis[a].codes.iter().map(|&c| up[c as usize]).collect::<HashSet<u32>>().len()
    };
    let mut rest: Vec<usize> = (0..ft.qis.len()).filter(|a| !order.contains(a)).collect();
    rest.sort_by_key(|&a| distinct(a));
    order.extend(rest);
    Ok(order)
}

/// Suppression patterns (bit sets of attributes) in the order they are tried: fewer cells
/// first, then the least important attributes first. The pattern of every candidate is left
/// out: it is the record's suppression.
fn patterns(candidates: &[usize], rank: &[usize]) -> Result<Vec<u64>> {
    if candidates.len() > 20 {
        return Err(AnonError::argument(
            F,
            "local",
            format!("local=suppression takes at most 20 generalizable quasi-identifiers ({} here)", candidates.len()),
        ));
    }
    let full: u64 = candidates.iter().map(|&a| 1u64 << a).sum();
    let mut out: Vec<(u32, Vec<usize>, u64)> = (1u64..(1 << candidates.len()))
        .map(|bits| {
            let set: u64 =
                candidates.iter().enumerate().filter(|(i, _)| bits >> i & 1 == 1).map(|(_, &a)| 1 << a).sum();
            let mut ranks: Vec<usize> = candidates.iter().filter(|&&a| set >> a & 1 == 1).map(|&a| rank[a]).collect();
            ranks.sort_unstable_by(|a, b| b.cmp(a));
            (set.count_ones(), ranks, set)
        })
        .filter(|p| p.2 != full)
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
    Ok(out.into_iter().map(|p| p.2).collect())
}

/// Local suppression at node `levels`: the classes failing `models` get cells suppressed (see
/// the module's doc). `importance`: attribute indices from the most important.
pub(crate) fn suppress_cells(
    ft: &FrequencyTable,
    levels: &[u8],
    models: &Models,
    importance: &[usize],
) -> Result<RecodedRows> {
    let judge = Judge::new(ft, models);
    let (g, row_class) = group(ft, levels)?;
    let mut tally = vec![Tally::default(); g.len()];
    for (r, &c) in row_class.iter().enumerate() {
        tally[c as usize].add(&judge.row(r));
    }
    let m = ft.qis.len();
    let mut rank = vec![0usize; m];
    for (i, &a) in importance.iter().enumerate() {
        rank[a] = i;
    }
    let candidates: Vec<usize> = (0..m).filter(|&a| (levels[a] as usize) < ft.qis[a].hierarchy.height()).collect();
    // The pattern each class is published with (0: as it is); u64::MAX: suppressed whole.
    let mut pattern: Vec<u64> = (0..g.len()).map(|c| if judge.ok(&tally[c]) { 0 } else { u64::MAX }).collect();
    let mut open: Vec<usize> = (0..g.len()).filter(|&c| pattern[c] != 0).collect();
    for p in patterns(&candidates, &rank)? {
        if open.is_empty() {
            break;
        }
        let mut groups: BTreeMap<Vec<u32>, Vec<usize>> = BTreeMap::new();
        for &c in &open {
            let key = (0..m).map(|a| if p >> a & 1 == 1 { u32::MAX } else { g.codes[a][c] }).collect();
            groups.entry(key).or_default().push(c);
        }
        for members in groups.values() {
            let mut t = Tally::default();
            members.iter().for_each(|&c| t.add(&tally[c]));
            if judge.ok(&t) {
                members.iter().for_each(|&c| pattern[c] = p);
            }
        }
        open.retain(|&c| pattern[c] == u64::MAX);
    }
    let cells = row_class
        .iter()
        .map(|&c| {
            let p = pattern[c as usize];
            (0..m)
                .map(|a| if p != u64::MAX && p >> a & 1 == 1 { (STAR, 0) } else { (levels[a], g.codes[a][c as usize]) })
                .collect()
        })
        .collect();
    let suppressed = row_class.iter().map(|&c| pattern[c as usize] == u64::MAX).collect();
    Ok(RecodedRows { cells, suppressed })
}

/// Local suppression at `levels`, in the order `importance=` and the node give.
fn suppress_at(ft: &FrequencyTable, config: &KanonConfig, levels: &[u8]) -> Result<RecodedRows> {
    let order = importance_order(ft, &config.local.importance, levels)?;
    suppress_cells(ft, levels, &config.models, &order)
}

/// The node for local suppression: the search's, then one level lower in one attribute at a
/// time while that loses less (LM of the local release) and the records that lose cells still
/// fit the suppression limit. The search priced those records as deleted; suppressing one or
/// two of their cells costs less, so a finer node often pays. Deterministic: attributes in
/// declaration order, the strictly best step taken.
fn descend(ft: &FrequencyTable, config: &KanonConfig, start: &[u8]) -> Result<(Vec<u8>, RecodedRows)> {
    let budget = config.budget(ft.total());
    let mode = LocalMode::Suppression;
    let mut best = (start.to_vec(), suppress_at(ft, config, start)?);
    let mut best_loss = summarize(ft, &best.1, mode).0.loss;
    loop {
        let mut step: Option<(f64, Vec<u8>, RecodedRows)> = None;
        for a in (0..start.len()).filter(|&a| best.0[a] > 0) {
            let mut levels = best.0.clone();
            levels[a] -= 1;
            let rows = suppress_at(ft, config, &levels)?;
            let (summary, _, whole) = summarize(ft, &rows, mode);
            let fits = summary.records_with_suppressed_cells + whole <= budget;
            if fits && summary.loss < step.as_ref().map_or(best_loss, |s| s.0) {
                step = Some((summary.loss, levels, rows));
            }
        }
        let Some((loss, levels, rows)) = step else { return Ok(best) };
        (best, best_loss) = ((levels, rows), loss);
    }
}

/// The cost of a local release.
pub(crate) fn summarize(ft: &FrequencyTable, rows: &RecodedRows, mode: LocalMode) -> (LocalSummary, usize, u64) {
    let m = ft.qis.len();
    let (mut cells, mut records, mut suppressed, mut degree) = (0u64, 0u64, 0u64, 0.0f64);
    let mut classes: HashSet<&[(u8, u32)]> = HashSet::new();
    for r in 0..ft.len() {
        let n = ft.counts[r];
        if rows.suppressed[r] {
            suppressed += n;
            degree += (n * m as u64) as f64;
            continue;
        }
        classes.insert(&rows.cells[r]);
        let stars = rows.cells[r].iter().filter(|c| c.0 == STAR).count() as u64;
        cells += stars * n;
        records += u64::from(stars > 0) * n;
        for (q, &(level, code)) in ft.qis.iter().zip(&rows.cells[r]) {
            degree += n as f64 * if level == STAR { 1.0 } else { q.hierarchy.degree(level as usize, code) };
        }
    }
    let loss = degree / (ft.total().max(1) * m.max(1) as u64) as f64;
    let summary = LocalSummary { mode, suppressed_cells: cells, records_with_suppressed_cells: records, loss };
    (summary, classes.len(), suppressed)
}

/// [`super::anonymize`] with a local method, from the aggregated table (and the time the
/// aggregation took): (search,) recode, and plan the release.
pub(crate) async fn anonymize(
    source: &Source,
    config: &KanonConfig,
    (ft, aggregate_ms): (&FrequencyTable, f64),
    mode: LocalMode,
    progress: &dyn Progress,
) -> Result<(KanonResult, DataFrame)> {
    let start = Instant::now();
    let (mut res, rows) = match mode {
        LocalMode::Suppression => {
            if config.suppression_percent <= 0.0 {
                return Err(AnonError::argument(
                    F,
                    "local",
                    "local=suppression suppresses cells of the records the search would suppress: give their \
                     most as suppression=X% (with no limit every class already holds)",
                ));
            }
            let mut res = search_cancellable(ft, config, progress)?.ok_or_else(|| no_release(config))?;
            let (levels, rows) = descend(ft, config, &res.levels)?;
            res.levels = levels;
            (res, rows)
        }
        LocalMode::Recoding => {
            config.validate(ft.total())?;
            let order = importance_order(ft, &config.local.importance, &ft.heights())?;
            let rows = mondrian::recode(ft, &config.models, &order, &|| progress.cancelled())?
                .ok_or_else(|| no_release(config))?;
            (recoding_result(ft, &rows), rows)
        }
        LocalMode::Iterative => {
            config.validate(ft.total())?;
            if !config.local.importance.is_empty() {
                // Rounds choose nodes by their loss alone: an order would be silently ignored.
                return Err(AnonError::argument(
                    F,
                    "importance",
                    "importance= applies to local=suppression and local=recoding, not local=iterative",
                ));
            }
            let rows =
                iterative::recode(ft, &config.models, &|| progress.cancelled())?.ok_or_else(|| no_release(config))?;
            (recoding_result(ft, &rows), rows)
        }
    };
    let (summary, classes, suppressed) = summarize(ft, &rows, mode);
    res.classes = classes;
    res.suppressed_records = suppressed;
    if mode.recodes() {
        (res.loss, res.loss_lower_bound) = (summary.loss, summary.loss);
    }
    res.local = Some(summary);
    res.passes = PassTimes { aggregate_ms, search_ms: PassTimes::since(start), materialize_ms: 0.0 };
    let df = materialize_recoded(source, ft, &rows, config.keep_insensitive).await?;
    Ok((res, df))
}

/// The report's side of a local recoding: no lattice was searched; `levels` is the coarsest
/// level each attribute is published at (every class is at or below that node).
fn recoding_result(ft: &FrequencyTable, rows: &RecodedRows) -> KanonResult {
    let levels: Vec<u8> = (0..ft.qis.len())
        .map(|a| rows.cells.iter().map(|c| c[a].0).filter(|&l| l != STAR).max().unwrap_or(0))
        .collect();
    KanonResult {
        levels,
        loss: 0.0,
        suppressed_records: 0,
        suppressed_classes: Vec::new(),
        classes: 0,
        nodes_total: 0,
        nodes_evaluated: 0,
        heuristic: false,
        proven_optimal: false,
        loss_lower_bound: 0.0,
        max_checks: None,
        passes: PassTimes::default(),
        local: None,
    }
}

fn no_release(config: &KanonConfig) -> AnonError {
    AnonError::argument(
        F,
        "options",
        format!(
            "no generalization satisfies {} within a suppression limit of {}%; raise the limit or relax the models",
            config.models.describe(),
            config.suppression_percent
        ),
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn patterns_try_fewer_cells_then_less_important_attributes() {
        // Attributes 0..3, importance 2 > 0 > 1 (rank 0 most important).
        let rank = [1, 2, 0];
        let p = patterns(&[0, 1, 2], &rank).unwrap();
        // Singles, least important first: 1 (rank 2), 0 (rank 1), 2 (rank 0); then pairs.
        assert_eq!(p, vec![0b010, 0b001, 0b100, 0b011, 0b110, 0b101]);
        assert!(patterns(&(0..21).collect::<Vec<_>>(), &[0; 21]).is_err());
    }

    /// Two attributes a (x, y) and b (v, w, z) under `*`; k = 2. The failing tuples (x,w),
    /// (x,v), (y,w): starring b joins the first two, starring a the first and the third.
    pub(in crate::methods::kanon) fn table() -> FrequencyTable {
        use crate::encode::QiColumn;
        use crate::hierarchy::{HierarchyKind, from_rows};
        use std::sync::Arc;
        let h = |name: &str, leaves: &[&str]| {
            let rows = leaves.iter().enumerate().map(|(i, l)| (i + 1, vec![l.to_string(), "*".into()])).collect();
            Arc::new(from_rows(rows, name, HierarchyKind::Categorical).unwrap())
        };
        let (a, b) = (h("a", &["x", "y"]), h("b", &["v", "w", "z"]));
        let tuples = [("x", "z", 2), ("y", "z", 2), ("x", "w", 1), ("x", "v", 1), ("y", "w", 1)];
        let col = |name: &str, h: &Arc<crate::hierarchy::Hierarchy>, labels: Vec<&str>| QiColumn {
            name: name.into(),
            hierarchy: h.clone(),
            codes: labels.iter().map(|l| h.leaf_of_label(l).unwrap()).collect(),
        };
        let qis = vec![
            col("a", &a, tuples.iter().map(|t| t.0).collect()),
            col("b", &b, tuples.iter().map(|t| t.1).collect()),
        ];
        FrequencyTable::from_parts(qis, None, tuples.iter().map(|t| t.2).collect()).unwrap()
    }

    /// The starred cells, as (row's a, row's b, starred attribute), and the rows suppressed whole.
    fn starred(ft: &FrequencyTable, rows: &RecodedRows) -> (Vec<(String, String, usize)>, usize) {
        let label = |a: usize, r: usize| ft.qis[a].hierarchy.label(0, ft.qis[a].codes[r]).to_string();
        let mut cells = Vec::new();
        for r in 0..ft.len() {
            for a in 0..2 {
                if !rows.suppressed[r] && rows.cells[r][a].0 == STAR {
                    cells.push((label(0, r), label(1, r), a));
                }
            }
        }
        cells.sort();
        (cells, rows.suppressed.iter().filter(|&&s| s).count())
    }

    #[test]
    fn the_least_important_attribute_is_suppressed_first() {
        let ft = table();
        let models = Models::k_only(2);
        // a more important than b: b is starred in (x,w) and (x,v), which then form (x,*).
        let rows = suppress_cells(&ft, &[0, 0], &models, &[0, 1]).unwrap();
        let want = vec![("x".into(), "v".into(), 1), ("x".into(), "w".into(), 1)];
        assert_eq!(starred(&ft, &rows), (want, 1));
        // b more important: a is starred in (x,w) and (y,w), which form (*,w).
        let rows = suppress_cells(&ft, &[0, 0], &models, &[1, 0]).unwrap();
        let want = vec![("x".into(), "w".into(), 0), ("y".into(), "w".into(), 0)];
        assert_eq!(starred(&ft, &rows), (want, 1));
        // The classes that held k are published as they are.
        assert!(rows.cells[..ft.len()].iter().filter(|c| c.iter().all(|x| x.0 == 0)).count() >= 2);
    }

    #[test]
    fn local_modes_parse() {
        assert_eq!(LocalMode::parse("Suppression").unwrap(), Some(LocalMode::Suppression));
        assert_eq!(LocalMode::parse("none").unwrap(), None);
        assert!(LocalMode::parse("cells").unwrap_err().to_string().contains("'local'"));
    }
}
