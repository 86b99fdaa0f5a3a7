//! h-ceiling (Kim et al., "Utility-preserving anonymization for health data publishing", BMC
//! Med. Inform. Decis. Mak. 2017, Def. 1 with Eqs. 1–3): every record's generalization degree
//! D(r) = (1/n) Σ_i D_A(a_i) is at most h, where
//! - numeric: D_A = (U_q - L_q) / (U - L), [L_q, U_q] the record's published `_lo`/`_hi` and
//!   (L, U) the hierarchy's domain;
//! - categorical: D_A = (|M_p| - 1) / (|M| - 1), M_p the leaves under the label's node.
//!
//! Def. 1 quantifies over every record of the release, so suppressed records count too: their
//! bounds are NULL (the whole domain) and their labels the root, so D(r) = 1.

use super::Verdict;
use super::classes::{Layout, texts};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::TableMeta;
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{Expr, cast as cast_expr};
use datafusion::prelude::{SessionContext, ident, lit};
use std::collections::HashMap;

/// Degree of a categorical label: the first level holding a node of that label.
fn categorical_degree(h: &Hierarchy, label: &str) -> Option<f64> {
    (0..=h.height()).find_map(|j| h.node_by_label(j, label).map(|code| h.degree(j, code)))
}

/// Degree of a numeric range; NULL bounds (suppressed) cover the whole domain.
fn numeric_degree(h: &Hierarchy, lo: Option<f64>, hi: Option<f64>) -> f64 {
    match (lo, hi) {
        (Some(lo), Some(hi)) => h.range_degree(lo, hi),
        _ => 1.0,
    }
}

/// Select every quasi-identifier column: labels as text, bounds as Float64.
fn select_exprs(layout: &Layout) -> Vec<Expr> {
    let mut out = Vec::new();
    for q in &layout.qis {
        out.push(cast_expr(ident(&q.name), DataType::Utf8).alias(q.name.clone()));
        if q.numeric {
            out.push(cast_expr(ident(q.lo()), DataType::Float64).alias(q.lo()));
            out.push(cast_expr(ident(q.hi()), DataType::Float64).alias(q.hi()));
        }
    }
    out
}

pub(crate) async fn h_ceiling(
    ctx: &SessionContext,
    meta: &TableMeta,
    original: &str,
    layout: &Layout,
    h: f64,
) -> Result<Verdict> {
    let hierarchies: Vec<&Hierarchy> =
        layout.qis.iter().map(|q| meta.hierarchy(original, &q.name).map(|a| a.as_ref())).collect::<Result<_>>()?;
    let df = ctx.table(layout.release.as_str()).await?;
    let batches = df.aggregate(select_exprs(layout), vec![count(lit(1)).alias("__n")])?.collect().await?;
    let mut cache: HashMap<(usize, String), f64> = HashMap::new();
    let (mut total, mut over, mut worst, mut suppressed) = (0u64, 0u64, 0.0f64, 0u64);
    let mut first: Option<(String, f64)> = None;
    for b in &batches {
        let n = cast(b.column(b.num_columns() - 1), &DataType::Int64)?;
        let n = n.as_primitive::<Int64Type>();
        let mut col = 0;
        let mut per_qi: Vec<Vec<f64>> = Vec::new();
        let mut labels: Vec<Vec<Option<String>>> = Vec::new();
        let mut null_bounds = vec![false; b.num_rows()];
        for (qi, q) in layout.qis.iter().enumerate() {
            let label = texts(b.column(col))?;
            let deg = if q.numeric {
                let lo = cast(b.column(col + 1), &DataType::Float64)?;
                let hi = cast(b.column(col + 2), &DataType::Float64)?;
                let (lo, hi) = (lo.as_primitive::<Float64Type>(), hi.as_primitive::<Float64Type>());
                col += 3;
                (0..b.num_rows())
                    .map(|r| {
                        let get = |a: &datafusion::arrow::array::Float64Array| a.is_valid(r).then(|| a.value(r));
                        null_bounds[r] |= get(lo).is_none();
                        numeric_degree(hierarchies[qi], get(lo), get(hi))
                    })
                    .collect()
            } else {
                col += 1;
                label
                    .iter()
                    .map(|l| {
                        let l = l.as_deref().unwrap_or(crate::hierarchy::NULL_LEAF);
                        if let Some(d) = cache.get(&(qi, l.to_string())) {
                            return Ok(*d);
                        }
                        let d = categorical_degree(hierarchies[qi], l).ok_or_else(|| {
                            AnonError::column(
                                &layout.release,
                                &q.name,
                                format!("holds a label that is not a node of the hierarchy of '{}'", q.name),
                            )
                        })?;
                        cache.insert((qi, l.to_string()), d);
                        Ok(d)
                    })
                    .collect::<Result<_>>()?
            };
            per_qi.push(deg);
            labels.push(label);
        }
        for r in 0..b.num_rows() {
            let d = per_qi.iter().map(|v| v[r]).sum::<f64>() / per_qi.len() as f64;
            let rows = n.value(r) as u64;
            total += rows;
            if null_bounds[r] || labels.iter().all(|l| l[r].as_deref() == Some("*")) {
                suppressed += rows;
            }
            worst = worst.max(d);
            if d > h + 1e-12 {
                over += rows;
                if first.as_ref().is_none_or(|f| d > f.1) {
                    let desc = layout
                        .qis
                        .iter()
                        .zip(&labels)
                        .map(|(q, l)| format!("{}={}", q.name, l[r].as_deref().unwrap_or("NULL")));
                    first = Some((desc.collect::<Vec<_>>().join(", "), d));
                }
            }
        }
    }
    let note =
        if suppressed == 0 { String::new() } else { format!("; {suppressed} rows at the root or suppressed (D = 1)") };
    Ok(match first {
        None => Verdict::holds(format!("{total} rows, largest D(r) {worst:.4}{note}")),
        Some((desc, d)) => Verdict::fails(
            over as i64,
            format!("{over} of {total} rows have D(r) > h={h}; largest D(r) {d:.4} for ({desc}){note}"),
        ),
    })
}
