//! Utility-constraint tables: the one writer of the shape `artuc` and `verify_release(...,
//! 'constraints=T')` read, and the builder of `utility_constraints(...)` (a custodian's own
//! constraints, without writing the table by hand); `load_constraints` writes the paper's sets
//! with the same writer.
//!
//! The shape (docs/artuc.md, "Utility constraints"): one row per constraint; a `constraint`
//! name column (`u1`, `u2`, ...; readers ignore it); per numeric demographic `q`, `q_lo` and
//! `q_hi` (inclusive Int64 bounds); per categorical one, a column `q` holding a node label of
//! its hierarchy; and the code set as `codes` (the set-valued column's name), a `List<Utf8>` of
//! codes or code-hierarchy nodes.
//!
//! The builder crosses demographic bands with code sets: every band gets every code set. Def. 9
//! lets any constraint's code set serve any record, and bands are disjoint, so this is the
//! paper's reading (every tuple and every code set occur) without its arbitrary pairing, and
//! the constraints never conflict (Section 3.3: equal tuples, code sets equal or disjoint).

use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{Array, ArrayRef, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;

const F: &str = "utility_constraints";

/// One demographic element of a constraint: an inclusive numeric range or a node label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Elem {
    Range(i64, i64),
    Node(String),
}

/// Consecutive inclusive bands of `width` from `lo`, the last clipped to `hi`.
pub(crate) fn bands(lo: i64, hi: i64, width: i64) -> Vec<(i64, i64)> {
    (0..).map(|i| lo + i * width).take_while(|&s| s <= hi).map(|s| (s, (s + width - 1).min(hi))).collect()
}

/// The constraints table: `rows` are (demographic tuple, code set), the tuple's elements in the
/// order of `demographics`; `codes` names the code column. One attribute's elements are all of
/// one kind (ranges or labels).
pub(crate) fn constraints_batch(
    demographics: &[&str],
    codes: &str,
    rows: &[(&[Elem], &[String])],
) -> Result<RecordBatch> {
    let mut fields = vec![Field::new("constraint", DataType::Utf8, false)];
    let mut cols: Vec<ArrayRef> =
        vec![Arc::new(StringArray::from_iter_values((1..=rows.len()).map(|r| format!("u{r}"))))];
    for (a, name) in demographics.iter().enumerate() {
        let elems: Vec<&Elem> = rows.iter().map(|(t, _)| &t[a]).collect();
        if matches!(elems.first(), Some(Elem::Node(_))) {
            let labels = elems.iter().map(|e| if let Elem::Node(l) = e { l.as_str() } else { "*" });
            fields.push(Field::new(*name, DataType::Utf8, false));
            cols.push(Arc::new(StringArray::from_iter_values(labels)));
            continue;
        }
        for (suffix, upper) in [("lo", false), ("hi", true)] {
            let bound = |e: &&Elem| match e {
                Elem::Range(lo, hi) => Some(if upper { *hi } else { *lo }),
                Elem::Node(_) => None,
            };
            fields.push(Field::new(format!("{name}_{suffix}"), DataType::Int64, false));
            cols.push(Arc::new(elems.iter().map(bound).collect::<Int64Array>()));
        }
    }
    let mut list = ListBuilder::new(StringBuilder::new());
    for (_, set) in rows {
        set.iter().for_each(|c| list.values().append_value(c));
        list.append(true);
    }
    let list = list.finish();
    fields.push(Field::new(codes, list.data_type().clone(), false));
    cols.push(Arc::new(list));
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}

/// How the builder cuts one demographic: a number (a numeric one's band width, a categorical
/// one's hierarchy level), or one band over the whole domain.
#[derive(Debug, Clone, PartialEq)]
enum Cut {
    Whole,
    Number(i64),
}

/// The constraints of `table` (declared demographics and one set-valued column): demographic
/// bands, as `demographics` says (`age=10, gender=1`: age in bands of 10 over its hierarchy's
/// domain, gender by the nodes of its hierarchy's level 1; `q=*` or an unlisted demographic is
/// one band over its whole domain), crossed with the code sets `codes` says: `chapter`,
/// `section`, `category` (the bundled ICD-9-CM hierarchy's levels 3, 2, 1), `level=N` (any
/// code hierarchy's level N), or a declared list `list: 250, 401; 428` (sets separated by `;`,
/// codes or nodes of a set by `,`; codes no set covers make `artuc` refuse the constraints).
pub(crate) fn build(table: &str, meta: &TableMeta, demographics: &str, codes: &str) -> Result<RecordBatch> {
    let qis = meta.quasi_identifiers();
    if qis.is_empty() {
        return Err(AnonError::table(table, "declares no quasi-identifier (demographic): declare_roles first"));
    }
    let sets = meta.columns_with(Role::SetValued);
    let code_column = match sets.as_slice() {
        [one] => *one,
        [] => return Err(AnonError::table(table, "declares no set_valued column (the diagnosis codes)")),
        _ => return Err(AnonError::table(table, "declares more than one set_valued column; ArtUC takes one")),
    };
    let cuts = cuts(&qis, demographics)?;
    let mut tuples: Vec<Vec<Elem>> = vec![Vec::new()];
    for (q, cut) in qis.iter().zip(&cuts) {
        let elems = elements(q, meta.hierarchy(table, q)?, cut)?;
        tuples =
            tuples.into_iter().flat_map(|t| elems.iter().map(move |e| [t.clone(), vec![e.clone()]].concat())).collect();
    }
    let code_sets = code_sets(code_column, meta.hierarchy(table, code_column)?, codes)?;
    let rows: Vec<(&[Elem], &[String])> =
        tuples.iter().flat_map(|t| code_sets.iter().map(move |s| (t.as_slice(), s.as_slice()))).collect();
    constraints_batch(&qis, code_column, &rows)
}

/// `q=W | q=N | q=*` per demographic; every name must be a declared demographic.
fn cuts(qis: &[&str], spec: &str) -> Result<Vec<Cut>> {
    let mut cuts = vec![Cut::Whole; qis.len()];
    for (key, value) in crate::methods::options::pairs(F, spec)? {
        let a = qis.iter().position(|q| *q == key).ok_or_else(|| {
            AnonError::argument(
                F,
                "demographics",
                format!("'{key}' is not a declared demographic ({})", qis.join(", ")),
            )
        })?;
        cuts[a] = match value.trim() {
            "*" => Cut::Whole,
            v => match v.parse::<i64>() {
                Ok(n) if n >= 0 => Cut::Number(n),
                _ => {
                    return Err(AnonError::argument(
                        F,
                        "demographics",
                        format!("'{key}={v}': give a band width, a hierarchy level, or *"),
                    ));
                }
            },
        };
    }
    Ok(cuts)
}

/// The elements of one demographic: numeric bands (a width) or the labels of a level (for a
/// categorical hierarchy the number is its level).
fn elements(q: &str, h: &Hierarchy, cut: &Cut) -> Result<Vec<Elem>> {
    if !h.is_numeric() {
        let level = match *cut {
            Cut::Whole => h.height(),
            Cut::Number(n) => n as usize,
        };
        if level > h.height() {
            return Err(AnonError::argument(
                F,
                "demographics",
                format!("'{q}' has levels 0 to {}, not {level}", h.height()),
            ));
        }
        return Ok((0..h.width(level)).map(|c| Elem::Node(h.label(level, c as u32).to_string())).collect());
    }
    let (lo, hi) = h.domain().unwrap_or_else(|| {
        let v = h.leaf_values();
        (v.first().copied().unwrap_or(0.0), v.last().copied().unwrap_or(0.0))
    });
    let (lo, hi) = (lo.floor() as i64, hi.ceil() as i64);
    Ok(match *cut {
        Cut::Number(w) if w > 0 => bands(lo, hi, w),
        Cut::Number(_) => {
            return Err(AnonError::argument(F, "demographics", format!("'{q}=0': a band width is positive")));
        }
        Cut::Whole => vec![(lo, hi)],
    }
    .into_iter()
    .map(|(a, b)| Elem::Range(a, b))
    .collect())
}

/// The code sets `spec` names (see [`build`]).
fn code_sets(column: &str, h: &Hierarchy, spec: &str) -> Result<Vec<Vec<String>>> {
    let spec = spec.trim();
    if let Some(list) = spec.strip_prefix("list:") {
        let sets: Vec<Vec<String>> = list
            .split(';')
            .map(|s| s.split(',').map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect::<Vec<_>>())
            .filter(|s| !s.is_empty())
            .collect();
        if sets.is_empty() {
            return Err(AnonError::argument(F, "codes", "'list:' names no code set"));
        }
        for code in sets.iter().flatten() {
            if crate::release::LabelIndex::new(h).code_node(code).is_none() {
                // A code set names codes of the public code hierarchy, never patients' values.
                return Err(AnonError::argument(
                    F,
                    "codes",
                    format!("'{code}' is no code or node of the hierarchy of '{column}'"),
                ));
            }
        }
        return Ok(sets);
    }
    let level = match spec.to_ascii_lowercase().as_str() {
        "chapter" | "chapters" => 3,
        "section" | "sections" => 2,
        "category" | "categories" => 1,
        other => match other.strip_prefix("level=").map(|n| n.trim().parse::<usize>()) {
            Some(Ok(n)) => n,
            _ => {
                return Err(AnonError::argument(
                    F,
                    "codes",
                    format!("'{spec}' is none of chapter, section, category, level=N, 'list: a, b; c'"),
                ));
            }
        },
    };
    if level == 0 || level > h.height() {
        return Err(AnonError::argument(
            F,
            "codes",
            format!("the hierarchy of '{column}' has levels 1 to {} above its codes, not {level}", h.height()),
        ));
    }
    Ok((0..h.width(level)).map(|c| vec![h.label(level, c as u32).to_string()]).collect())
}
