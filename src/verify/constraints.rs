//! Utility constraints (ArtUC, Defs. 8–9): a release satisfies a constraint set U when every
//! record r has one constraint u ∈ U whose elements contain r's generalized demographics
//! (numeric: r's range inside u's range; categorical: r's node in the subtree rooted at u's
//! node), and every generalized diagnosis code of r covers only codes of a single constraint's
//! code set (u's or another's).
//!
//! The constraints table has, per quasi-identifier `q` of the original table, `q_lo` and `q_hi`
//! (numeric) or `q` (a node label of q's hierarchy); and optionally the set-valued column, a list
//! of codes (or code-hierarchy node labels) or a delimited string of them. Suppressed records are
//! excluded and counted.

use super::Verdict;
use super::classes::{Layout, texts};
use super::km::Expander;
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, code_lists};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::logical_expr::Expr;
use datafusion::prelude::{SessionContext, ident};
use std::collections::{HashMap, HashSet};

/// A generalized demographic value: a range, or a hierarchy node (level, code).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Element {
    Range(f64, f64),
    Node(usize, u32),
}

/// Does `outer` (a constraint's element) contain `inner` (a record's value)?
pub(crate) fn contains(h: &Hierarchy, outer: Element, inner: Element) -> bool {
    match (outer, inner) {
        (Element::Range(a, b), Element::Range(lo, hi)) => a <= lo && hi <= b,
        (Element::Node(j, code), Element::Node(mut i, mut c)) => {
            if i > j {
                return false;
            }
            while i < j {
                c = h.parent(i, c);
                i += 1;
            }
            c == code
        }
        _ => false,
    }
}

/// The node of a categorical label: the lowest level holding it.
fn node(h: &Hierarchy, label: &str) -> Option<Element> {
    (0..=h.height()).find_map(|j| h.node_by_label(j, label).map(|c| Element::Node(j, c)))
}

/// Read one element column group per quasi-identifier from a batch: labels for categorical
/// ones, `_lo`/`_hi` for numeric ones. None where a value is missing (suppressed).
fn elements(
    b: &RecordBatch,
    table: &str,
    layout: &Layout,
    hs: &[&Hierarchy],
    strict: bool,
) -> Result<Vec<Vec<Option<Element>>>> {
    let mut out = vec![Vec::with_capacity(layout.qis.len()); b.num_rows()];
    for (q, h) in layout.qis.iter().zip(hs) {
        let col = |name: &str| {
            let i = b.schema().index_of(name).map_err(|_| AnonError::column(table, name, "is missing"))?;
            Ok::<_, AnonError>(b.column(i).clone())
        };
        if q.numeric {
            let (lo, hi) = (cast(&col(&q.lo())?, &DataType::Float64)?, cast(&col(&q.hi())?, &DataType::Float64)?);
            let (lo, hi) = (lo.as_primitive::<Float64Type>(), hi.as_primitive::<Float64Type>());
            for (r, row) in out.iter_mut().enumerate() {
                let ok = lo.is_valid(r) && hi.is_valid(r);
                if !ok && strict {
                    return Err(AnonError::column(table, &q.lo(), "holds a NULL bound"));
                }
                row.push(ok.then(|| Element::Range(lo.value(r), hi.value(r))));
            }
        } else {
            for (row, label) in out.iter_mut().zip(texts(&col(&q.name)?)?) {
                let e = label.as_deref().and_then(|l| node(h, l));
                if e.is_none() {
                    let what = if strict {
                        "holds a label that is not a node of its hierarchy"
                    } else {
                        "holds a label outside its hierarchy"
                    };
                    return Err(AnonError::column(table, &q.name, what));
                }
                row.push(e);
            }
        }
    }
    Ok(out)
}

/// The constraints, read from their table.
struct ConstraintSet {
    demographics: Vec<Vec<Element>>,
    codes: Vec<HashSet<String>>,
}

async fn read_constraints(
    ctx: &SessionContext,
    table: &str,
    layout: &Layout,
    hs: &[&Hierarchy],
    set_col: Option<&str>,
    expander: &mut Expander<'_>,
) -> Result<ConstraintSet> {
    let df = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found (the constraints table)"))?;
    let batches = df.collect().await?;
    let (mut demographics, mut codes) = (Vec::new(), Vec::new());
    for b in &batches {
        for row in elements(b, table, layout, hs, true)? {
            demographics.push(row.into_iter().flatten().collect());
        }
        let Some(set_col) = set_col else { continue };
        let i = b.schema().index_of(set_col).map_err(|_| AnonError::column(table, set_col, "is missing"))?;
        let lists = code_lists(table, set_col, b.column(i))?;
        for r in 0..b.num_rows() {
            let items = if lists.is_valid(r) { texts(&lists.value(r))? } else { vec![] };
            codes.push(items.into_iter().flatten().flat_map(|c| expander.expand(&c)).collect());
        }
    }
    Ok(ConstraintSet { demographics, codes })
}

fn demographics_ok(cs: &ConstraintSet, hs: &[&Hierarchy], rec: &[Option<Element>]) -> bool {
    cs.demographics.iter().any(|u| {
        u.iter().zip(rec).zip(hs).all(|((&outer, inner), h)| inner.is_some_and(|inner| contains(h, outer, inner)))
    })
}

pub(crate) async fn verify_constraints(
    ctx: &SessionContext,
    layout: &Layout,
    hs: &[&Hierarchy],
    table: &str,
    set_col: Option<(&str, Option<&Hierarchy>)>,
) -> Result<Verdict> {
    let constraint_has_set = match set_col {
        Some((c, _)) => ctx.table(table).await.is_ok_and(|df| df.schema().field_with_unqualified_name(c).is_ok()),
        None => false,
    };
    let set_col = set_col.filter(|_| constraint_has_set);
    let mut expander = Expander::new(set_col.and_then(|s| s.1));
    let cs = read_constraints(ctx, table, layout, hs, set_col.map(|s| s.0), &mut expander).await?;
    let df = ctx.table(layout.release.as_str()).await?;
    let mut select: Vec<Expr> = layout.key_columns().iter().map(ident).collect();
    if let Some((c, _)) = set_col {
        select.push(ident(c).alias("__items"));
    }
    let (supp, rows) = {
        let all = df.clone().count().await?;
        let batches = df.filter(!layout.suppressed())?.select(select)?.collect().await?;
        let kept: usize = batches.iter().map(|b| b.num_rows()).sum();
        (all - kept, batches)
    };
    let (mut bad_records, mut bad_items, mut total) = (0i64, 0i64, 0usize);
    let mut first: Option<String> = None;
    let mut memo: HashMap<Vec<u64>, bool> = HashMap::new();
    for b in &rows {
        let recs = elements(b, &layout.release, layout, hs, false)?;
        let labels: Vec<Vec<Option<String>>> = layout
            .qis
            .iter()
            .map(|q| texts(b.column(b.schema().index_of(&q.name).unwrap_or(0))))
            .collect::<Result<_>>()?;
        for (r, rec) in recs.iter().enumerate() {
            total += 1;
            let key: Vec<u64> = rec.iter().flat_map(element_key).collect();
            if !*memo.entry(key).or_insert_with(|| demographics_ok(&cs, hs, rec)) {
                bad_records += 1;
                first.get_or_insert_with(|| {
                    let d: Vec<String> = layout
                        .qis
                        .iter()
                        .zip(&labels)
                        .map(|(q, l)| format!("{}={}", q.name, l[r].as_deref().unwrap_or("NULL")))
                        .collect();
                    format!("no constraint contains the demographics ({})", d.join(", "))
                });
            }
        }
        if set_col.is_some() {
            let lists = code_lists(&layout.release, "__items", b.column(b.num_columns() - 1))?;
            for r in 0..b.num_rows() {
                let items = if lists.is_valid(r) { texts(&lists.value(r))? } else { vec![] };
                for item in items.into_iter().flatten() {
                    let codes = expander.expand(&item);
                    if !cs.codes.iter().any(|u| codes.iter().all(|c| u.contains(c))) {
                        bad_items += 1;
                        first.get_or_insert_with(|| {
                            format!("the generalized code {item} spans several constraints' code sets")
                        });
                    }
                }
            }
        }
    }
    let note = if supp == 0 { String::new() } else { format!("; {supp} suppressed rows excluded") };
    Ok(match first {
        None => Verdict::holds(format!("{total} records within {} constraints{note}", cs.demographics.len())),
        Some(f) => Verdict::fails(
            bad_records + bad_items,
            format!("{bad_records} records and {bad_items} generalized codes violate; first: {f}{note}"),
        ),
    })
}

fn element_key(e: &Option<Element>) -> [u64; 2] {
    match e {
        Some(Element::Range(a, b)) => [a.to_bits(), b.to_bits()],
        Some(Element::Node(j, c)) => [*j as u64, *c as u64 | (1 << 40)],
        None => [u64::MAX, u64::MAX],
    }
}
