//! How a release is read: which columns form an equivalence class (what an attacker sees of the
//! quasi-identifiers), which rows are suppressed (rows that carry nothing: [`Layout::suppressed`]),
//! and the class × sensitive-value histogram, aggregated by DataFusion (GROUP BY every
//! quasi-identifier column and the sensitive value); for t-closeness also the original table's
//! sensitive distribution.

use super::{ClassHist, Histogram};
use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::functions::math::expr_fn::abs;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::when;
use datafusion::logical_expr::{Expr, cast as cast_expr};
use datafusion::prelude::{SessionContext, ident, lit};
use std::collections::HashMap;

/// One quasi-identifier as published: its label column, and bound columns when numeric.
#[derive(Debug, Clone)]
pub(crate) struct QiColumns {
    pub(crate) name: String,
    pub(crate) numeric: bool,
}

impl QiColumns {
    pub(crate) fn lo(&self) -> String {
        format!("{}_lo", self.name)
    }
    pub(crate) fn hi(&self) -> String {
        format!("{}_hi", self.name)
    }
}

/// The release's quasi-identifier columns, checked against its schema.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) release: String,
    pub(crate) qis: Vec<QiColumns>,
    /// Every other column of the release but `class_id`: what a suppressed record must leave
    /// NULL (its sensitive value, kept columns, a date's bounds).
    others: Vec<String>,
}

impl Layout {
    /// Quasi-identifiers come from the original table's declarations; the release must carry
    /// each one's label column and, for a numeric one, `_lo` and `_hi`.
    pub(crate) fn new(meta: &TableMeta, original: &str, release: &str, schema: &Schema) -> Result<Self> {
        let mut qis = Vec::new();
        for name in meta.quasi_identifiers() {
            let numeric = meta.hierarchy(original, name)?.is_numeric();
            let q = QiColumns { name: name.to_string(), numeric };
            let mut needed = vec![q.name.clone()];
            if numeric {
                needed.extend([q.lo(), q.hi()]);
            }
            for c in needed {
                if schema.field_with_name(&c).is_err() {
                    return Err(AnonError::column(
                        release,
                        &c,
                        format!("is missing: quasi-identifier '{name}' of '{original}' is published in it"),
                    ));
                }
            }
            qis.push(q);
        }
        if qis.is_empty() {
            return Err(AnonError::table(original, "declares no quasi-identifiers (declare_roles: column=qi)"));
        }
        let mut layout = Layout { release: release.to_string(), qis, others: Vec::new() };
        let keys = layout.key_columns();
        layout.others =
            schema.fields().iter().map(|f| f.name().clone()).filter(|c| c != "class_id" && !keys.contains(c)).collect();
        Ok(layout)
    }

    /// Every column that identifies a class: labels and bounds.
    pub(crate) fn key_columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        for q in &self.qis {
            out.push(q.name.clone());
            if q.numeric {
                out.extend([q.lo(), q.hi()]);
            }
        }
        out
    }

    /// A suppressed record, withheld whole: every label `*`, every numeric bound NULL, and
    /// every other column but `class_id` NULL, so the row carries nothing. A row of `*` labels
    /// that carries a sensitive value (or any other value) is no suppressed record: it is in
    /// the class of its labels (the root tuple) and faces every check like any class. NULL-safe:
    /// a NULL label makes the row not suppressed.
    pub(crate) fn suppressed(&self) -> Expr {
        let mut parts: Vec<Expr> = Vec::new();
        for q in &self.qis {
            parts.push(ident(&q.name).eq(lit("*")));
            if q.numeric {
                parts.extend([ident(q.lo()).is_null(), ident(q.hi()).is_null()]);
            }
        }
        parts.extend(self.others.iter().map(|c| ident(c).is_null()));
        parts.into_iter().reduce(Expr::and).expect("at least one quasi-identifier").is_true()
    }

    /// Group-by keys cast to text, aliased `__k{i}`.
    pub(crate) fn key_exprs(&self) -> Vec<Expr> {
        self.key_columns()
            .iter()
            .enumerate()
            .map(|(i, c)| cast_expr(ident(c), DataType::Utf8).alias(format!("__k{i}")))
            .collect()
    }

    /// A class's published description: `age=35-39, sex=F`.
    pub(crate) fn describe(&self, keys: &[Option<String>]) -> String {
        let mut parts = Vec::new();
        let mut i = 0;
        for q in &self.qis {
            let label = keys[i].as_deref().unwrap_or("NULL");
            if q.numeric {
                let b = |x: &Option<String>| x.clone().unwrap_or_else(|| "NULL".into());
                parts.push(format!("{}={label} [{}, {}]", q.name, b(&keys[i + 1]), b(&keys[i + 2])));
                i += 3;
            } else {
                parts.push(format!("{}={label}", q.name));
                i += 1;
            }
        }
        parts.join(", ")
    }
}

/// Whole columns as text, for row loops.
pub(crate) fn texts(col: &ArrayRef) -> Result<Vec<Option<String>>> {
    let col = cast(col, &DataType::Utf8)?;
    let s = col.as_string::<i32>();
    Ok((0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_string())).collect())
}

/// Is the sensitive column numeric (ordered EMD) in the release?
fn numeric_type(t: &DataType) -> bool {
    t.is_numeric()
}

/// Sensitive value `s` of type `ty` with a float's -0.0 read as 0.0: one number, one value
/// (their texts "-0" and "0" would count twice). `abs` maps both zeros to +0.0, which compares
/// equal to 0.0 under Arrow's total order of floats, where -0.0 does not.
fn one_zero(s: Expr, ty: &DataType) -> Result<Expr> {
    let float = match ty {
        DataType::Dictionary(_, values) => values.as_ref(),
        ty => ty,
    };
    if !float.is_floating() {
        return Ok(s);
    }
    let x = cast_expr(s, float.clone());
    let zero = lit(datafusion::common::ScalarValue::new_zero(float)?);
    Ok(when(abs(x.clone()).eq(zero.clone()), zero).otherwise(x)?)
}

/// The class × sensitive histogram. Without a sensitive column every class holds one value, so
/// k-anonymity still works. With `reference` (the original table, for t-closeness), the
/// distribution Q every class is compared with: the original's sensitive column over all its
/// rows (Li et al.'s "distribution of the attribute in the whole table"), read as the release
/// types the column; its distinct values all enter the value set, so the ordered distance runs
/// over the table's values (and any value only the release holds).
pub(crate) async fn histogram(
    ctx: &SessionContext,
    layout: &Layout,
    sensitive: Option<&str>,
    reference: Option<&str>,
) -> Result<Histogram> {
    let df = ctx.table(layout.release.as_str()).await.map_err(|_| AnonError::table(&layout.release, "not found"))?;
    let (numeric, value, ty) = match sensitive {
        Some(s) => {
            let f = df.schema().field_with_unqualified_name(s).map_err(|_| {
                AnonError::column(&layout.release, s, "is missing: the original table declares it sensitive")
            })?;
            (numeric_type(f.data_type()), one_zero(ident(s), f.data_type())?, Some(f.data_type().clone()))
        }
        None => (false, lit(""), None),
    };
    let value_keys = |value: Expr| {
        let mut keys = vec![cast_expr(value.clone(), DataType::Utf8).alias("__s")];
        if numeric {
            keys.push(cast_expr(value, DataType::Float64).alias("__x"));
        }
        keys
    };
    let mut group = vec![layout.suppressed().alias("__supp")];
    group.extend(layout.key_exprs());
    group.extend(value_keys(value));
    let batches = df.aggregate(group, vec![count(lit(1)).alias("__n")])?.collect().await?;
    let whole = match (reference, sensitive, &ty) {
        (Some(original), Some(s), Some(ty)) => {
            let df = ctx.table(original).await.map_err(|_| {
                AnonError::table(original, "not found: t-closeness compares every class with its sensitive column")
            })?;
            if df.schema().field_with_unqualified_name(s).is_err() {
                return Err(AnonError::column(original, s, "is missing: the table declares it sensitive"));
            }
            let value = one_zero(cast_expr(ident(s), ty.clone()), ty)?;
            Some(df.aggregate(value_keys(value), vec![count(lit(1)).alias("__n")])?.collect().await?)
        }
        _ => None,
    };
    assemble(layout, &batches, whole.as_deref(), numeric)
}

/// Index of a value's text, registering it (and its number, for a numeric attribute) on first
/// sight.
fn value_index(
    h: &mut Histogram,
    value_ix: &mut HashMap<String, u32>,
    text: Option<String>,
    number: Option<f64>,
) -> u32 {
    let value = text.unwrap_or_else(|| "NULL".into());
    let next = value_ix.len() as u32;
    *value_ix.entry(value.clone()).or_insert_with(|| {
        h.values.push(value);
        if let Some(xv) = h.numeric.as_mut() {
            xv.push(number.unwrap_or(f64::NEG_INFINITY));
        }
        next
    })
}

/// The number in column `__x` of a numeric attribute's batch at `row`.
fn number(xs: Option<&ArrayRef>, row: usize) -> Option<f64> {
    let f = xs?.as_primitive::<datafusion::arrow::datatypes::Float64Type>();
    f.is_valid(row).then(|| f.value(row))
}

/// A batch's `__n` column.
fn counts(layout: &Layout, b: &RecordBatch) -> Result<Int64Array> {
    b.column(b.num_columns() - 1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .cloned()
        .ok_or_else(|| AnonError::table(&layout.release, "internal: COUNT(*) did not return Int64"))
}

fn assemble(
    layout: &Layout,
    batches: &[RecordBatch],
    whole: Option<&[RecordBatch]>,
    numeric: bool,
) -> Result<Histogram> {
    let nkeys = layout.key_columns().len();
    let mut h =
        Histogram { classes: vec![], values: vec![], numeric: numeric.then(Vec::new), overall: vec![], suppressed: 0 };
    let mut value_ix: HashMap<String, u32> = HashMap::new();
    let mut class_ix: HashMap<Vec<Option<String>>, usize> = HashMap::new();
    let mut overall: HashMap<u32, u64> = HashMap::new();
    // The original's values first: Q, and the value set of the ordered distance.
    for b in whole.unwrap_or_default() {
        let sens = texts(b.column(0))?;
        let xs = numeric.then(|| cast(b.column(1), &DataType::Float64)).transpose()?;
        let n = counts(layout, b)?;
        for (row, text) in sens.into_iter().enumerate() {
            let v = value_index(&mut h, &mut value_ix, text, number(xs.as_ref(), row));
            *overall.entry(v).or_default() += n.value(row) as u64;
        }
    }
    for b in batches {
        let supp = b.column(0).as_boolean().clone();
        let keys: Vec<Vec<Option<String>>> = (0..nkeys).map(|i| texts(b.column(1 + i))).collect::<Result<_>>()?;
        let sens = texts(b.column(1 + nkeys))?;
        let xs = numeric.then(|| cast(b.column(2 + nkeys), &DataType::Float64)).transpose()?;
        let n = counts(layout, b)?;
        for row in 0..b.num_rows() {
            let c = n.value(row) as u64;
            // A suppressed record carries no value: it enters neither a class nor the values.
            if supp.value(row) {
                h.suppressed += c;
                continue;
            }
            let v = value_index(&mut h, &mut value_ix, sens[row].clone(), number(xs.as_ref(), row));
            let key: Vec<Option<String>> = keys.iter().map(|k| k[row].clone()).collect();
            let ci = *class_ix.entry(key.clone()).or_insert_with(|| {
                h.classes.push(ClassHist { label: layout.describe(&key), counts: vec![] });
                h.classes.len() - 1
            });
            h.classes[ci].counts.push((v, c));
        }
    }
    h.overall = overall.into_iter().collect();
    h.overall.sort_unstable();
    for c in &mut h.classes {
        c.counts.sort_unstable();
    }
    // Deterministic reports: classes in label order.
    h.classes.sort_by(|a, b| a.label.cmp(&b.label));
    Ok(h)
}
