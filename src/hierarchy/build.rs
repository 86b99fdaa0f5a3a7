//! Building and validating a hierarchy from ARX-shaped rows.
//!
//! Errors name lines and levels, never a node's label: `hierarchy_from_table` builds from any
//! table, the source's own columns included, so a label can be a patient's value.

use super::{Hierarchy, HierarchyKind, Level, NULL_LEAF, parse_interval_label};
use crate::error::{AnonError, Result};
use std::collections::HashMap;

/// Collects ARX-shaped rows (`leaf, level1, ..., root`), each with the line it came from, and
/// validates them into a [`Hierarchy`].
pub struct HierarchyBuilder {
    attribute: String,
    kind: HierarchyKind,
    rows: Vec<(usize, Vec<String>)>,
    domain: Option<(f64, f64)>,
}

impl HierarchyBuilder {
    pub fn new(attribute: &str, kind: HierarchyKind) -> Self {
        HierarchyBuilder { attribute: attribute.to_string(), kind, rows: Vec::new(), domain: None }
    }

    /// Add one row; `line` is its 1-based position in the source, for error messages.
    pub fn row(&mut self, line: usize, fields: Vec<String>) -> &mut Self {
        self.rows.push((line, fields));
        self
    }

    pub(crate) fn domain(&mut self, lo: f64, hi: f64) -> &mut Self {
        self.domain = Some((lo, hi));
        self
    }

    pub fn build(self) -> Result<Hierarchy> {
        let attr = self.attribute.clone();
        let err = |m: String| AnonError::hierarchy(&attr, m);
        let rows = self.checked_rows()?;
        let depth = rows[0].1.len();

        // Leaves in code order: numeric leaves ascend by value so code order is value order.
        let mut leaf_rows: Vec<&(usize, Vec<String>)> = rows.iter().collect();
        let mut leaf_values = Vec::new();
        if self.kind == HierarchyKind::Numeric {
            let mut keyed = Vec::with_capacity(rows.len());
            for r in &rows {
                let v = parse_number(&r.1[0]).ok_or_else(|| {
                    err(format!("line {}: the leaf is not a number (numeric hierarchies need numeric leaves)", r.0))
                })?;
                keyed.push((v, r));
            }
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(err(format!("lines {} and {}: their leaves are the same number", w[0].1.0, w[1].1.0)));
            }
            leaf_values = keyed.iter().map(|k| k.0).collect();
            leaf_rows = keyed.into_iter().map(|k| k.1).collect();
        }

        // Assign node codes level by level, checking that every node has one parent.
        let mut levels: Vec<Level> = Vec::with_capacity(depth);
        let mut codes: Vec<Vec<u32>> = vec![Vec::with_capacity(leaf_rows.len()); depth];
        for (j, level_codes) in codes.iter_mut().enumerate() {
            let mut index: HashMap<&str, u32> = HashMap::new();
            let mut labels = Vec::new();
            for r in &leaf_rows {
                let label = r.1[j].as_str();
                let next = index.len() as u32;
                let code = *index.entry(label).or_insert_with(|| {
                    labels.push(label.to_string());
                    next
                });
                level_codes.push(code);
            }
            levels.push(Level { labels, parent: Vec::new(), leaf_count: Vec::new(), bounds: Vec::new() });
        }
        for j in 0..depth - 1 {
            let mut parent: Vec<Option<(u32, usize)>> = vec![None; levels[j].labels.len()];
            for (i, r) in leaf_rows.iter().enumerate() {
                let (child, up) = (codes[j][i], codes[j + 1][i]);
                match parent[child as usize] {
                    None => parent[child as usize] = Some((up, r.0)),
                    Some((p, line)) if p != up => {
                        return Err(err(format!(
                            "a node at level {j} has two parents: lines {line} and {} give it different nodes \
                             at level {}",
                            r.0,
                            j + 1
                        )));
                    }
                    _ => {}
                }
            }
            levels[j].parent = parent.into_iter().map(|p| p.map(|x| x.0).unwrap_or(0)).collect();
        }
        let top = &levels[depth - 1].labels;
        if top.len() != 1 {
            return Err(err(format!(
                "the last column must be a single root such as '*', found {} distinct values",
                top.len()
            )));
        }

        let n_leaves = leaf_rows.len();
        let mut up = vec![(0..n_leaves as u32).collect::<Vec<u32>>()];
        for j in 1..depth {
            let prev = &up[j - 1];
            let row: Vec<u32> = prev.iter().map(|&c| levels[j - 1].parent[c as usize]).collect();
            up.push(row);
        }
        for (j, level) in levels.iter_mut().enumerate() {
            let mut count = vec![0u32; level.labels.len()];
            for &node in &up[j] {
                count[node as usize] += 1;
            }
            level.leaf_count = count;
        }

        let mut domain = None;
        if self.kind == HierarchyKind::Numeric {
            domain = Some(numeric_bounds(&mut levels, &up, &leaf_values));
            if let Some((lo, hi)) = self.domain {
                domain = Some((lo, hi));
            }
        }
        let leaf_by_label = if self.kind == HierarchyKind::Numeric {
            HashMap::new()
        } else {
            levels[0].labels.iter().enumerate().map(|(i, l)| (l.clone(), i as u32)).collect()
        };
        let h = Hierarchy {
            attribute: self.attribute,
            kind: self.kind,
            levels,
            up,
            leaf_by_label,
            leaf_values,
            domain: None,
            derived_from_data: None,
            suppress_unknown: false,
        };
        match domain {
            Some((lo, hi)) => h.with_domain(lo, hi),
            None => Ok(h),
        }
    }

    /// Trim fields, drop exact duplicate rows, and reject empty input, empty fields, ragged
    /// heights and numeric NULL leaves.
    fn checked_rows(&self) -> Result<Vec<(usize, Vec<String>)>> {
        let err = |m: String| AnonError::hierarchy(&self.attribute, m);
        if self.rows.is_empty() {
            return Err(err("is empty: no rows".into()));
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<(usize, Vec<String>)> = Vec::with_capacity(self.rows.len());
        let first_len = self.rows[0].1.len();
        for (line, fields) in &self.rows {
            let fields: Vec<String> = fields.iter().map(|f| f.trim().to_string()).collect();
            if let Some(pos) = fields.iter().position(|f| f.is_empty()) {
                return Err(err(format!("line {line}: field {} is empty", pos + 1)));
            }
            if fields.len() < 2 {
                return Err(err(format!(
                    "line {line}: a row needs the leaf and at least one generalization (e.g. 'value;*')"
                )));
            }
            if fields.len() != first_len {
                return Err(err(format!(
                    "ragged heights: line {line} has {} levels but line {} has {first_len}; \
                     every leaf must have the same number of generalization steps",
                    fields.len(),
                    self.rows[0].0
                )));
            }
            if self.kind == HierarchyKind::Numeric && fields[0] == NULL_LEAF {
                return Err(err(format!(
                    "line {line}: a numeric hierarchy cannot hold a NULL leaf; filter NULLs or use a categorical hierarchy"
                )));
            }
            match seen.get(&fields[0]) {
                Some(&i) if out[i].1 == fields => continue,
                Some(&i) => {
                    return Err(err(format!(
                        "a leaf has two parents: lines {} and {line} give it different nodes at level 1",
                        out[i].0
                    )));
                }
                None => {
                    seen.insert(fields[0].clone(), out.len());
                    out.push((*line, fields));
                }
            }
        }
        Ok(out)
    }
}

/// Bounds of every numeric node: the hull of its label's interval (when the label parses) and
/// the values of its leaves. ARX files are not always consistent (Adult puts leaf 100 under
/// `95-99`); the hull keeps every leaf inside its ancestors. Returns the domain (L, U).
fn numeric_bounds(levels: &mut [Level], up: &[Vec<u32>], leaf_values: &[f64]) -> (f64, f64) {
    let mut domain = (f64::INFINITY, f64::NEG_INFINITY);
    let depth = levels.len();
    for (j, level) in levels.iter_mut().enumerate() {
        let mut b: Vec<(f64, f64)> = level
            .labels
            .iter()
            .map(|l| match (j, parse_interval_label(l)) {
                (0, _) => (f64::INFINITY, f64::NEG_INFINITY),
                (_, Some((lo, hi))) if j + 1 < depth => (lo, hi),
                _ => (f64::INFINITY, f64::NEG_INFINITY),
            })
            .collect();
        for (leaf, &node) in up[j].iter().enumerate() {
            let v = leaf_values[leaf];
            let e = &mut b[node as usize];
            e.0 = e.0.min(v);
            e.1 = e.1.max(v);
        }
        for &(lo, hi) in &b {
            domain.0 = domain.0.min(lo);
            domain.1 = domain.1.max(hi);
        }
        level.bounds = b;
    }
    domain
}

/// Parse a number as it appears in a hierarchy or in data (`37`, `-1.5`, `1e3`).
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    v.is_finite().then_some(if v == 0.0 { 0.0 } else { v })
}
