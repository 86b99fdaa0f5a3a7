//! The second raw-data pass: a DataFusion plan that maps every source row through a chosen
//! full-domain generalization. `kanon_anonymize` plans it where its frequency table cannot
//! build the same release from classes (`methods::kanon::cells`): a source outside this
//! process, a Ballista session, a published column the table did not count, `local=`.
//!
//! Each quasi-identifier is joined with a small lookup table (leaf → label, lower bound, upper
//! bound at the chosen level), so the plan is a chain of hash joins with tiny build sides: it
//! streams, runs in parallel, and can run on a distributed DataFusion engine unchanged.
//!
//! Release schema (ARCHITECTURE.md): identifiers are dropped; a numeric quasi-identifier `age`
//! becomes `age` (a label such as `35-39` or `*`, as `Dictionary(Int32, Utf8)`:
//! [`crate::release::labels`]), `age_lo` and `age_hi` (inclusive bounds
//! in the column's original type); a categorical one keeps its name and holds the node label,
//! and a date one also its node's first and last dates in `_lo`/`_hi`;
//! the sensitive column is kept as it is; insensitive columns (every column `declare_roles`
//! did not name) are dropped unless the caller keeps them ([`released`]); a record suppressed
//! whole is a shell that carries none of them ([`select_release`]).
//!
//! Row order: the plan keeps the source's; whoever publishes it shuffles (`sql::output::publish`
//! orders a written release by `random()`, the table-function adapter permutes an in-memory one).

use super::format_number;
use super::publish::{DateBounds, date_bounds};
use super::source::Source;
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, NULL_LEAF};
use crate::meta::{Role, TableMeta};
use crate::release::SUPPRESSED;
use crate::release::labels::{label_array, label_field};
use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array};
use datafusion::arrow::compute::take;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::JoinType;
use datafusion::logical_expr::{Expr, cast};
use datafusion::prelude::{DataFrame, coalesce, col, ident, lit, when};
use std::sync::Arc;

/// The published label of node `code` at `level`: the hierarchy's label, except that an
/// ungeneralized numeric value is written as the number itself.
pub(crate) fn node_label(h: &Hierarchy, level: usize, code: u32) -> String {
    if level == 0 && h.is_numeric() {
        format_number(h.leaf_value(code).unwrap_or_default())
    } else {
        h.label(level, code).to_string()
    }
}

/// The lookup of one quasi-identifier at one level.
pub(crate) struct LevelLookup {
    batch: RecordBatch,
    /// The suppressed label `*` as a one-entry label array sharing the lookup's label values,
    /// so that choosing between a label and `*` per row moves keys, not text.
    star: ArrayRef,
}

impl LevelLookup {
    /// Key column `__k{i}` (Utf8 or Float64), label `__l{i}` (a [`label_type`] column whose
    /// values are the level's labels and `*`), bounds `__lo{i}`, `__hi{i}` (Float64 for a
    /// numeric hierarchy; `YYYY-MM-DD` text for a date column, `dates` the level's
    /// [`date_bounds`]).
    pub(crate) fn new(h: &Hierarchy, level: usize, i: usize, dates: Option<DateBounds>) -> Result<Self> {
        let up = h.up(level);
        let labels: Vec<String> = up.iter().map(|&n| node_label(h, level, n)).collect();
        let with_star = label_array(labels.iter().map(String::as_str).chain([SUPPRESSED]));
        let (labels, star) = (with_star.slice(0, up.len()), with_star.slice(up.len(), 1));
        let key: ArrayRef = if h.is_numeric() {
            Arc::new(Float64Array::from(h.leaf_values().to_vec()))
        } else {
            Arc::new(StringArray::from(h.level(0).labels.clone()))
        };
        let mut fields =
            vec![Field::new(format!("__k{i}"), key.data_type().clone(), false), label_field(&format!("__l{i}"))];
        let mut cols = vec![key, labels];
        if h.is_numeric() {
            let (lo, hi): (Vec<f64>, Vec<f64>) =
                up.iter().map(|&n| h.bounds(level, n).expect("numeric node bounds")).unzip();
            fields.push(Field::new(format!("__lo{i}"), DataType::Float64, false));
            fields.push(Field::new(format!("__hi{i}"), DataType::Float64, false));
            cols.push(Arc::new(Float64Array::from(lo)));
            cols.push(Arc::new(Float64Array::from(hi)));
        } else if let Some(nodes) = dates {
            for (b, upper) in [("lo", false), ("hi", true)] {
                let day =
                    |n: u32| nodes[n as usize].as_ref().map(|(lo, hi)| if upper { hi.clone() } else { lo.clone() });
                fields.push(Field::new(format!("__{b}{i}"), DataType::Utf8, true));
                cols.push(Arc::new(up.iter().map(|&n| day(n)).collect::<StringArray>()));
            }
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?;
        Ok(LevelLookup { batch, star })
    }
}

/// Plan the release of `table` generalized at `levels` (one per declared quasi-identifier,
/// in declaration order). Nothing is registered; the caller decides the output's name.
pub(crate) fn materialize_node(source: &Source, levels: &[u8], keep_insensitive: bool) -> Result<DataFrame> {
    materialize_suppressed(source, levels, &[], keep_insensitive)
}

/// Whether a source column is published: quasi-identifiers (generalized) and sensitive
/// columns always, insensitive ones only when the caller keeps them, identifiers never, and
/// set-valued ones never: a set of diagnosis codes identifies a patient as a quasi-identifier
/// does, and only artuc generalizes it ((k, k^m)-anonymity). Published as it is beside a
/// k-anonymous release, it would void the k the report prints (`verify_release 'km=2:1'` finds
/// the unique sets); the class-built releases (h-ceiling, IPA, entropy) leave it out too.
pub(crate) fn released(meta: &TableMeta, column: &str, keep_insensitive: bool) -> bool {
    match meta.role(column) {
        Some(Role::QuasiIdentifier | Role::Sensitive) => true,
        Some(Role::Insensitive) | None => keep_insensitive,
        Some(Role::Identifier | Role::SetValued) => false,
    }
}

/// The source columns a release leaves out (identifiers are not listed: they are never
/// released by declaration), for the report's `dropped_columns`.
pub(crate) fn dropped_columns(meta: &TableMeta, columns: &[String], keep_insensitive: bool) -> Vec<String> {
    columns
        .iter()
        .filter(|c| meta.role(c) != Some(Role::Identifier) && !released(meta, c, keep_insensitive))
        .cloned()
        .collect()
}

/// As [`materialize_node`], with the records of some classes suppressed: `suppressed` lists
/// those classes by their published labels (one per quasi-identifier, in declaration order).
/// A suppressed record is a shell ([`select_release`]): every quasi-identifier `*`, NULL
/// numeric bounds, and every other column NULL.
pub(crate) fn materialize_suppressed(
    source: &Source,
    levels: &[u8],
    suppressed: &[Vec<String>],
    keep_insensitive: bool,
) -> Result<DataFrame> {
    let (table, meta) = (source.name(), source.meta());
    let mut df = source.frame()?;
    let qis = meta.quasi_identifiers();
    if levels.len() != qis.len() {
        return Err(AnonError::argument(
            "generalize",
            "node",
            format!("{} levels given for {} quasi-identifiers ({})", levels.len(), qis.len(), qis.join(", ")),
        ));
    }
    let source_fields: Vec<(String, DataType)> =
        df.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
    let mut stars = Vec::with_capacity(qis.len());
    for (i, (name, &level)) in qis.iter().zip(levels).enumerate() {
        let h = meta.hierarchy(table, name)?;
        if level as usize > h.height() {
            return Err(AnonError::argument(
                "generalize",
                "node",
                format!("level {level} of '{name}' is above its hierarchy's height {}", h.height()),
            ));
        }
        let ty = &source_fields.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone()).unwrap_or(DataType::Utf8);
        let dates = date_bounds(ty, h, level as usize);
        let lookup = LevelLookup::new(h, level as usize, i, dates)?;
        stars.push(lookup.star);
        df = df.join_on(
            source.read_batch(lookup.batch)?,
            JoinType::Left,
            [leaf_key(h, name).eq(col(format!("__k{i}")))],
        )?;
    }
    if !suppressed.is_empty() {
        df = df.join_on(source.read_batch(suppressed_batch(&stars, suppressed)?)?, JoinType::Left, {
            (0..qis.len()).map(|i| col(format!("__l{i}")).eq(col(format!("__s{i}")))).collect::<Vec<_>>()
        })?;
    }
    let kept = |e: Expr, suppressed_value: Expr| -> Expr {
        if suppressed.is_empty() {
            e
        } else {
            when(col("__supp").is_null(), e).otherwise(suppressed_value).expect("a CASE with an ELSE")
        }
    };
    let star = |i: usize| col(format!("__x{i}"));
    let shell = (!suppressed.is_empty()).then(|| col("__supp").is_not_null());
    select_release(df, table, meta, &source_fields, keep_insensitive, star, kept, shell)
}

/// A quasi-identifier's join key against its hierarchy's leaves: the value as a number, or as
/// text with NULL read as the `NULL` leaf when the hierarchy has one.
pub(super) fn leaf_key(h: &Hierarchy, name: &str) -> Expr {
    if h.is_numeric() {
        cast(ident(name), DataType::Float64)
    } else if h.null_leaf().is_some() {
        coalesce(vec![cast(ident(name), DataType::Utf8), lit(NULL_LEAF)])
    } else {
        cast(ident(name), DataType::Utf8)
    }
}

/// The release's columns, in the source's order, from a plan joined with the lookups: quasi-
/// identifier `i` from `__l{i}` (and `__lo{i}`, `__hi{i}` as the source column's type), each
/// passed through `kept(value, value of a suppressed record)`, `star(i)` being the label of
/// a suppressed record; the other released columns as they are, except on the rows `shell`
/// marks (records suppressed whole, when there are any), where they are NULL.
///
/// A record suppressed whole is withheld, as Sweeney and Samarati define suppression, but its
/// row stays so that counts stay right: a shell with every label `*`, NULL bounds and nothing
/// else (sensitive value, kept insensitive columns: NULL). Were its sensitive value kept, an
/// attacker who knows a target is in the table and finds no class matching the target's
/// generalized tuple would know the target is a suppressed row, and with one suppressed row
/// would read the target's sensitive value. A source's sensitive column holds no NULL (it is
/// refused), so a NULL there marks a shell.
#[allow(clippy::too_many_arguments)]
pub(super) fn select_release(
    df: DataFrame,
    table: &str,
    meta: &TableMeta,
    source_fields: &[(String, DataType)],
    keep_insensitive: bool,
    star: impl Fn(usize) -> Expr,
    kept: impl Fn(Expr, Expr) -> Expr,
    shell: Option<Expr>,
) -> Result<DataFrame> {
    let qis = meta.quasi_identifiers();
    bounds_free(table, meta, source_fields, keep_insensitive)?;
    let mut out: Vec<Expr> = Vec::new();
    // A column a shell leaves NULL, in its published type `ty`.
    let withheld = |e: Expr, ty: &DataType| -> Result<Expr> {
        Ok(match &shell {
            None => e,
            Some(s) => when(s.clone(), lit(datafusion::common::ScalarValue::try_from(ty)?)).otherwise(e)?,
        })
    };
    for (name, ty) in source_fields.iter().filter(|(name, _)| released(meta, name, keep_insensitive)) {
        match meta.role(name) {
            Some(Role::QuasiIdentifier) => {
                let i = qis.iter().position(|q| q == name).expect("declared quasi-identifier");
                out.push(kept(col(format!("__l{i}")), star(i)).alias(name));
                let h = meta.hierarchy(table, name)?;
                if h.is_numeric() || date_bounds(ty, h, 0).is_some() {
                    let null = lit(datafusion::common::ScalarValue::try_from(ty)?);
                    let bound = |b: &str| kept(cast(col(format!("__{b}{i}")), ty.clone()), null.clone());
                    out.push(bound("lo").alias(format!("{name}_lo")));
                    out.push(bound("hi").alias(format!("{name}_hi")));
                }
            }
            // Typed as the release built from cells types it (`publish::sensitive_values`).
            Some(Role::Sensitive) => match super::publish::sensitive_values_type(ty) {
                Some(t) => out.push(withheld(cast(ident(name), t.clone()), &t)?.alias(name)),
                None => out.push(withheld(ident(name), ty)?.alias(name)),
            },
            _ => out.push(withheld(ident(name), ty)?.alias(name)),
        }
    }
    Ok(df.select(out)?)
}

/// Refuse a released source column named like a bound the release writes (`age_lo` beside the
/// numeric quasi-identifier `age`), naming both and the way out. Without this DataFusion
/// refused the select with its own "ambiguous" schema error, which names neither the
/// quasi-identifier nor the option that kept the column.
fn bounds_free(
    table: &str,
    meta: &TableMeta,
    source_fields: &[(String, DataType)],
    keep_insensitive: bool,
) -> Result<()> {
    let published = || source_fields.iter().filter(|(name, _)| released(meta, name, keep_insensitive));
    for (qi, ty) in published().filter(|(name, _)| meta.role(name) == Some(Role::QuasiIdentifier)) {
        let h = meta.hierarchy(table, qi)?;
        if !(h.is_numeric() || date_bounds(ty, h, 0).is_some()) {
            continue;
        }
        for (bound, which) in [(format!("{qi}_lo"), "lower"), (format!("{qi}_hi"), "upper")] {
            let Some((name, _)) = published().find(|(name, _)| *name == bound) else {
                continue;
            };
            let kept = match meta.role(name) {
                Some(Role::Insensitive) | None => "is kept in the release (keep_insensitive=true)".to_string(),
                Some(role) => format!("is published in the release (declared {})", role.name()),
            };
            return Err(AnonError::column(
                table,
                name,
                format!(
                    "{kept}, but the release writes the {which} bound of quasi-identifier '{qi}' under the name \
                     '{bound}'; rename the column (e.g. in a view) or do not keep it"
                ),
            ));
        }
    }
    Ok(())
}

/// The suppressed classes' labels as a join side: `__s0..`, the marker `__supp`, and each
/// quasi-identifier's `*` as `__x0..` (from `stars`, the lookups' own, so a suppressed record's
/// label shares its column's label values).
fn suppressed_batch(stars: &[ArrayRef], classes: &[Vec<String>]) -> Result<RecordBatch> {
    let n = stars.len();
    let mut fields: Vec<Field> = (0..n).map(|i| Field::new(format!("__s{i}"), DataType::Utf8, false)).collect();
    fields.push(Field::new("__supp", DataType::Boolean, false));
    fields.extend((0..n).map(|i| label_field(&format!("__x{i}"))));
    let mut cols: Vec<ArrayRef> = (0..n)
        .map(|i| Arc::new(StringArray::from(classes.iter().map(|c| c[i].as_str()).collect::<Vec<_>>())) as ArrayRef)
        .collect();
    cols.push(Arc::new(datafusion::arrow::array::BooleanArray::from(vec![true; classes.len()])));
    let every_class = UInt32Array::from(vec![0u32; classes.len()]);
    for star in stars {
        cols.push(take(star, &every_class, None)?);
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
}
