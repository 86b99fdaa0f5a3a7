//! Read a release back into per-row generalized values against the ORIGINAL table's
//! declarations (roles and hierarchies), so every metric works on hierarchy nodes and ranges,
//! never on label strings.
//!
//! Release conventions (docs/architecture.md): a numeric quasi-identifier `age` is published as
//! `age` (label, `*` at the root), `age_lo`, `age_hi` (inclusive bounds); a categorical one as
//! its node label; `class_id` (Int64) is optional; a set-valued column is a `List<Utf8>` of codes
//! or generalized codes such as `(053.20,053.71)`. A suppressed record has every label `*` and
//! NULL numeric bounds. Which node a label names and which leaves a code covers is decided by
//! [`crate::release::cover`], the resolver the query harness shares.

use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::{Role, TableMeta};
use crate::release::columns::{f64_values, int_values, optional_column, required_column, str_values};
use crate::release::{Cell, LabelIndex};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The code of a suppressed record's sensitive value: a suppressed record is a shell whose
/// sensitive value is withheld (NULL), so it has none; no index into [`Sensitive::values`].
pub const WITHHELD: u32 = u32::MAX;

/// The sensitive column of a release, dictionary-encoded.
#[derive(Debug, Clone)]
pub struct Sensitive {
    pub name: String,
    /// Distinct values; numeric ones ascend by value, others by text.
    pub values: Vec<String>,
    /// Each row's value; [`WITHHELD`] for a suppressed record that carries none.
    pub codes: Vec<u32>,
    /// Numeric values: EMD uses the ordered distance (t-closeness).
    pub ordered: bool,
}

/// A set-valued column: per record, its generalized codes, each as the leaves (codes) it
/// stands for (one leaf for a plain code).
#[derive(Debug, Clone)]
pub struct SetColumn {
    pub(crate) name: String,
    pub(crate) rows: Vec<Vec<Vec<u32>>>,
}

impl SetColumn {
    /// |ũ| of every generalized code of record `r`.
    pub fn sizes(&self, r: usize) -> Vec<u32> {
        self.rows[r].iter().map(|u| u.len() as u32).collect()
    }
}

/// A release read back against the original's declarations: what every metric measures.
/// (Not a [`crate::release::Published`]: that is the Arrow table a method publishes; this is
/// that table decoded into cells, classes and leaf sets.) Histogram first: a decoded row may
/// stand for several identical released records (`weights`), so a large release is read as
/// its distinct rows.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub(crate) name: String,
    /// Released records each decoded row stands for.
    pub weights: Vec<u64>,
    pub(crate) hierarchies: Vec<Arc<Hierarchy>>,
    pub(crate) qi_names: Vec<String>,
    /// `cells[row][qi]`.
    pub cells: Vec<Vec<Cell>>,
    pub(crate) suppressed: Vec<bool>,
    pub sensitive: Option<Sensitive>,
    /// Published class id of each record, when the release has a `class_id` column.
    pub(crate) class_ids: Option<Vec<Option<i64>>>,
    /// Equivalence class of each non-suppressed record (by `class_id` when published, else by
    /// identical generalized values).
    pub(crate) class_of: Vec<Option<u32>>,
    /// Released records in each class.
    pub(crate) class_sizes: Vec<u64>,
    pub sets: Vec<SetColumn>,
}

impl Decoded {
    /// Number of decoded (distinct) rows.
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
    /// Number of released records, |D|.
    pub fn records(&self) -> u64 {
        self.weights.iter().sum()
    }
    /// Weight of decoded row `r` as a float.
    pub(crate) fn weight(&self, r: usize) -> f64 {
        self.weights[r] as f64
    }
    pub fn suppressed_count(&self) -> u64 {
        self.weights.iter().zip(&self.suppressed).filter(|(_, s)| **s).map(|(w, _)| w).sum()
    }
    /// Decoded rows of each class, by index.
    pub fn class_members(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.class_sizes.len()];
        for (r, c) in self.class_of.iter().enumerate() {
            if let Some(c) = c {
                out[*c as usize].push(r);
            }
        }
        out
    }
}

/// Decode `batches` (the release `name`, one record per row) against the declarations of
/// `original`.
pub fn decode_release(original: &str, meta: &TableMeta, name: &str, batches: &[RecordBatch]) -> Result<Decoded> {
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    decode_weighted(original, meta, name, batches, vec![1; n])
}

/// Decode distinct release rows, row i standing for `weights[i]` records (from a GROUP BY of
/// the release, as the SQL function reads it).
pub fn decode_weighted(
    original: &str,
    meta: &TableMeta,
    name: &str,
    batches: &[RecordBatch],
    weights: Vec<u64>,
) -> Result<Decoded> {
    let qi_names: Vec<String> = meta.quasi_identifiers().iter().map(|s| s.to_string()).collect();
    if qi_names.is_empty() {
        return Err(AnonError::table(original, "no quasi-identifiers declared"));
    }
    let hierarchies: Vec<Arc<Hierarchy>> =
        qi_names.iter().map(|q| meta.hierarchy(original, q).cloned()).collect::<Result<_>>()?;
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    if weights.len() != n {
        return Err(AnonError::table(name, "internal: one weight per decoded row is needed"));
    }
    let mut per_qi = Vec::with_capacity(qi_names.len());
    for (q, h) in qi_names.iter().zip(&hierarchies) {
        per_qi.push(decode_qi(name, q, h, batches)?);
    }
    let mut cells: Vec<Vec<Cell>> = (0..n).map(|r| per_qi.iter().map(|c| c[r]).collect()).collect();
    let mut suppressed = suppressed_rows(name, &qi_names, &hierarchies, &cells)?;
    let raw = match meta.columns_with(Role::Sensitive).first() {
        Some(s) => Some((s.to_string(), read_sensitive(name, s, batches)?)),
        None => None,
    };
    // A shell (every label at the root, the sensitive value withheld) is a suppressed record
    // even without numeric bounds to tell it by.
    if let Some((_, (_, values))) = &raw {
        for (r, row) in cells.iter().enumerate() {
            if values[r].is_none() && row.iter().zip(&hierarchies).all(|(c, h)| is_root_or_suppressed(c, h)) {
                suppressed[r] = true;
            }
        }
    }
    // A suppressed record's categorical `*` stands for the whole domain, as its NULL bounds do.
    for (row, _) in cells.iter_mut().zip(&suppressed).filter(|(_, s)| **s) {
        row.iter_mut().for_each(|c| *c = Cell::Suppressed);
    }
    let sensitive = match raw {
        Some((s, raw)) => Some(decode_sensitive(name, &s, raw, &suppressed)?),
        None => None,
    };
    let class_ids = optional_column(name, "class_id", batches)?.map(|parts| int_values(&parts)).transpose()?;
    let (class_of, class_sizes) = classes(&cells, &suppressed, class_ids.as_deref(), &weights);
    let mut sets = Vec::new();
    // Only artuc publishes a code set: a release without it has no sets to decode.
    let published = |s: &str| batches.first().is_none_or(|b| b.schema().column_with_name(s).is_some());
    for s in meta.columns_with(Role::SetValued).into_iter().filter(|s| published(s)) {
        let h = meta.hierarchy(original, s)?;
        sets.push(decode_set(name, s, h, batches)?);
    }
    Ok(Decoded {
        name: name.to_string(),
        weights,
        hierarchies,
        qi_names,
        cells,
        suppressed,
        sensitive,
        class_ids,
        class_of,
        class_sizes,
        sets,
    })
}

/// Cells of one quasi-identifier.
fn decode_qi(table: &str, q: &str, h: &Hierarchy, batches: &[RecordBatch]) -> Result<Vec<Cell>> {
    let labels = str_values(table, q, &required_column(table, q, batches)?)?;
    if h.is_numeric() {
        let lo = f64_values(table, &format!("{q}_lo"), &required_column(table, &format!("{q}_lo"), batches)?)?;
        let hi = f64_values(table, &format!("{q}_hi"), &required_column(table, &format!("{q}_hi"), batches)?)?;
        return labels
            .iter()
            .zip(lo.iter().zip(&hi))
            .map(|(l, b)| numeric_cell(table, q, l.as_deref(), *b.0, *b.1))
            .collect();
    }
    let index = LabelIndex::new(h);
    let mut unknown = 0usize;
    let cells: Vec<Cell> = labels
        .iter()
        .map(|l| match l.as_deref().and_then(|l| index.node(l)) {
            Some((level, code)) => Cell::Node { level, code },
            None => {
                unknown += 1;
                Cell::Suppressed
            }
        })
        .collect();
    if unknown > 0 {
        // Never quote the values: a level-0 label is a patient's original value.
        return Err(AnonError::column(
            table,
            q,
            format!("holds {unknown} value(s) that are not nodes of the original's hierarchy for '{q}' (or NULL)"),
        ));
    }
    Ok(cells)
}

fn numeric_cell(table: &str, q: &str, label: Option<&str>, lo: Option<f64>, hi: Option<f64>) -> Result<Cell> {
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo <= hi => Ok(Cell::Range { lo, hi }),
        (None, None) if label == Some("*") => Ok(Cell::Suppressed),
        (Some(_), Some(_)) => Err(AnonError::column(table, &format!("{q}_lo"), format!("is above {q}_hi in a record"))),
        _ => Err(AnonError::column(
            table,
            q,
            format!("a record has NULL bounds in {q}_lo/{q}_hi but is not suppressed (label not '*')"),
        )),
    }
}

/// A record is suppressed when its numeric bounds are NULL (then every label must be `*`).
/// Without numeric quasi-identifiers a suppressed record is told from one generalized to the
/// root by its withheld (NULL) sensitive value, in [`decode_weighted`]; without a sensitive
/// column either it is counted as one at the root (the same LM/NCP, a class of its own for DM).
fn suppressed_rows(table: &str, qi_names: &[String], hs: &[Arc<Hierarchy>], cells: &[Vec<Cell>]) -> Result<Vec<bool>> {
    cells
        .iter()
        .map(|row| {
            let any = row.contains(&Cell::Suppressed);
            if !any {
                return Ok(false);
            }
            match row.iter().zip(hs).position(|(c, h)| !is_root_or_suppressed(c, h)) {
                None => Ok(true),
                Some(a) => Err(AnonError::column(
                    table,
                    &qi_names[a],
                    "is generalized in a record whose numeric bounds are NULL \
                     (a suppressed record has every label '*')",
                )),
            }
        })
        .collect()
}

fn is_root_or_suppressed(c: &Cell, h: &Hierarchy) -> bool {
    match c {
        Cell::Suppressed => true,
        Cell::Node { level, .. } => *level as usize == h.height(),
        Cell::Range { .. } => false,
    }
}

/// The sensitive column. A NULL is allowed on a suppressed record only: a shell whose value is
/// withheld ([`WITHHELD`]); it counts in no class and in no distribution of values (it is
/// still one of the release's records, for |D|, and the alignment places any original record
/// in the suppressed block). Elsewhere a NULL is an error, as the methods publish none.
fn decode_sensitive(
    table: &str,
    s: &str,
    (ordered, raw): (bool, Vec<Option<String>>),
    suppressed: &[bool],
) -> Result<Sensitive> {
    if raw.iter().zip(suppressed).any(|(v, &shell)| v.is_none() && !shell) {
        return Err(AnonError::column(table, s, "holds NULLs; every record not suppressed needs a sensitive value"));
    }
    let mut values: Vec<String> = raw.iter().flatten().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    if ordered {
        values.sort_by(|a, b| num(a).total_cmp(&num(b)));
    }
    let index: HashMap<&str, u32> = values.iter().enumerate().map(|(i, v)| (v.as_str(), i as u32)).collect();
    let codes = raw.iter().map(|v| v.as_deref().map_or(WITHHELD, |v| index[v])).collect();
    Ok(Sensitive { name: s.to_string(), values, codes, ordered })
}

/// The sensitive column as text (NULL: None), and whether it is numeric.
fn read_sensitive(table: &str, s: &str, batches: &[RecordBatch]) -> Result<(bool, Vec<Option<String>>)> {
    let parts = required_column(table, s, batches)?;
    let ordered = parts.first().is_some_and(|a| a.data_type().is_numeric());
    Ok((ordered, str_values(table, s, &parts)?))
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// Class of every non-suppressed record: by published `class_id` when present, otherwise by
/// identical generalized values.
fn classes(
    cells: &[Vec<Cell>],
    suppressed: &[bool],
    ids: Option<&[Option<i64>]>,
    weights: &[u64],
) -> (Vec<Option<u32>>, Vec<u64>) {
    let mut index: HashMap<Vec<u64>, u32> = HashMap::new();
    let mut sizes: Vec<u64> = Vec::new();
    let class_of = cells
        .iter()
        .enumerate()
        .map(|(r, row)| {
            if suppressed[r] {
                return None;
            }
            let key: Vec<u64> = match ids.and_then(|ids| ids[r]) {
                Some(id) => vec![u64::MAX - 1, id as u64],
                None => row.iter().flat_map(|c| c.key()).collect(),
            };
            let next = sizes.len() as u32;
            let c = *index.entry(key).or_insert(next);
            if c == next {
                sizes.push(0);
            }
            sizes[c as usize] += weights[r];
            Some(c)
        })
        .collect();
    (class_of, sizes)
}

/// The generalized codes of a set-valued column, as leaf sets.
fn decode_set(table: &str, s: &str, h: &Hierarchy, batches: &[RecordBatch]) -> Result<SetColumn> {
    let parts = required_column(table, s, batches)?;
    let index = LabelIndex::new(h);
    let mut rows = Vec::new();
    let mut unknown = 0usize;
    for a in &parts {
        // A list, or a delimited string (a release read back from CSV) split as every reader splits.
        let l = crate::hierarchy::code_lists(table, s, a)?;
        for r in 0..l.len() {
            let mut row = Vec::new();
            if l.is_valid(r) {
                let v = l.value(r);
                let v = v.as_string::<i32>();
                for i in (0..v.len()).filter(|&i| v.is_valid(i)) {
                    match index.element(v.value(i)) {
                        Some(leaves) => row.push(leaves),
                        None => unknown += 1,
                    }
                }
            }
            rows.push(row);
        }
    }
    if unknown > 0 {
        return Err(AnonError::column(
            table,
            s,
            format!("holds {unknown} element(s) that are neither codes nor generalized codes of its hierarchy"),
        ));
    }
    Ok(SetColumn { name: s.to_string(), rows })
}
