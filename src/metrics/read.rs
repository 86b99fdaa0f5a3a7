//! Reading a release and its original back for the metrics: the release's distinct rows over
//! the columns the metrics read, the original's frequency table and records, and the catalog,
//! all decoded against the ORIGINAL table's declarations, then [`super::compute_all`].
//! `anon_metrics` and `metric_value` (src/sql/metrics_fn.rs) are this plus argument parsing.

use super::ul::OriginalRecords;
use super::{Decoded, Inputs, Metric, compute_all, decode_catalog, decode_weighted};
use crate::encode::{encode_column, frequency_table};
use crate::error::{AnonError, Result};
use crate::meta::{Role, TableMeta};
use crate::methods::options::{Kind, OptionSpec, Options, opt};
use crate::release::columns::int_values;
use datafusion::arrow::array::ArrayRef;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::prelude::SessionContext;
use datafusion::prelude::{ident, lit};
use std::collections::HashMap;

/// Read the release, the original's frequency table and the catalog, and compute.
pub(crate) async fn measure(
    ctx: &SessionContext,
    meta: &TableMeta,
    original: &str,
    release: &str,
    catalog: Option<&str>,
    options: &MetricOptions,
) -> Result<Vec<Metric>> {
    meta.check_complete(original)?;
    let attrs = super::marginals::attributes(options.function, meta, original, &options.marginal_levels)?;
    let rel = read_release(ctx, original, meta, release).await?;
    let sensitive = meta.columns_with(Role::Sensitive).first().copied();
    let ft = frequency_table(ctx, original, meta, sensitive).await?;
    let mut codes = Vec::new();
    for s in &rel.sets {
        codes.push(original_records(ctx, original, meta, &s.name).await?);
    }
    let cat_rows = match catalog {
        Some(c) => {
            let df = ctx.table(c).await.map_err(|_| AnonError::table(c, "not found"))?;
            decode_catalog(c, &df.collect().await?)?
        }
        None => Vec::new(),
    };
    let mut out = compute_all(&Inputs {
        release: &rel,
        original: Some(&ft),
        original_name: original,
        catalog: &cat_rows,
        catalog_name: catalog.unwrap_or(""),
        original_codes: &codes,
        ncp_weights: options.ncp_weights.as_deref(),
    })?;
    if let Some((score, pairs)) = super::marginals::two_way_score(ctx, meta, original, release, catalog, &attrs).await?
    {
        out.push(super::marginals::metric(score, pairs, &attrs));
    }
    Ok(out)
}

/// The release's distinct rows over the columns the metrics read, with their record counts
/// (histogram first: a million-row release is decoded as its few thousand distinct rows).
async fn read_release(ctx: &SessionContext, original: &str, meta: &TableMeta, release: &str) -> Result<Decoded> {
    let df = ctx.table(release).await.map_err(|_| AnonError::table(release, "not found"))?;
    let present: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
    let mut cols: Vec<String> = Vec::new();
    for q in meta.quasi_identifiers() {
        cols.push(q.to_string());
        if meta.hierarchy(original, q)?.is_numeric() {
            cols.extend([format!("{q}_lo"), format!("{q}_hi")]);
        }
    }
    cols.extend(meta.columns_with(Role::Sensitive).first().map(|s| s.to_string()));
    // A code set is in artuc's releases only; every other method leaves it out.
    cols.extend(
        meta.columns_with(Role::SetValued).iter().filter(|s| present.iter().any(|p| p == *s)).map(|s| s.to_string()),
    );
    if let Some(missing) = cols.iter().find(|c| !present.contains(c)) {
        return Err(AnonError::column(
            release,
            missing,
            "is missing; the release does not match the original's declarations",
        ));
    }
    if present.iter().any(|c| c == "class_id") {
        cols.push("class_id".to_string());
    }
    let group: Vec<_> = cols.iter().map(|c| ident(c.as_str())).collect();
    // Sorted, so every metric sums its rows in one order: the GROUP BY's own order varies from
    // run to run, and with it the last bits of a floating-point sum.
    let batches =
        crate::sorted::aggregate_in_key_order(df, group, vec![count(lit(1)).alias("__records")])?.collect().await?;
    let counts: Vec<ArrayRef> = batches.iter().map(|b| b.column(cols.len()).clone()).collect();
    let weights = int_values(&counts)?.into_iter().map(|c| c.unwrap_or(0).max(0) as u64).collect();
    decode_weighted(original, meta, release, &batches, weights)
}

/// The original's records as UL reads them: demographic leaves (the NULL rule of every
/// method) and the codes of `column`, a list or a delimited string read as every function reads
/// it. Codes the hierarchy lacks are dropped when it drops them (`unknown_codes=suppress`: no
/// method saw them); otherwise they get ids of their own past its leaves, so they count as
/// suppressed.
async fn original_records(
    ctx: &SessionContext,
    table: &str,
    meta: &TableMeta,
    column: &str,
) -> Result<OriginalRecords> {
    let qis = meta.quasi_identifiers();
    let mut cols: Vec<&str> = qis.clone();
    cols.push(column);
    let df = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found"))?;
    let batches = df.select_columns(&cols)?.collect().await?;
    let mut per_qi: Vec<Vec<u32>> = Vec::new();
    for (i, q) in qis.iter().enumerate() {
        let parts: Vec<ArrayRef> = batches.iter().map(|b| b.column(i).clone()).collect();
        per_qi.push(encode_column(table, q, meta.hierarchy(table, q)?, &parts)?);
    }
    let h = meta.hierarchy(table, column)?;
    let mut extra: HashMap<String, u32> = HashMap::new();
    let mut codes: Vec<Vec<u32>> = Vec::new();
    for b in &batches {
        let outside = |c: &str| {
            (!h.suppresses_unknown_codes()).then(|| {
                let next = h.leaf_count() as u32 + extra.len() as u32;
                *extra.entry(c.to_string()).or_insert(next)
            })
        };
        for mut row in crate::hierarchy::leaf_sets_with(table, column, h, b.column(qis.len()), outside)? {
            row.sort_unstable();
            row.dedup();
            codes.push(row);
        }
    }
    let leaves: Vec<Vec<u32>> = (0..codes.len()).map(|r| per_qi.iter().map(|q| q[r]).collect()).collect();
    // Identical records once, with their count: the bounds work per distinct record.
    let mut index: HashMap<(Vec<u32>, Vec<u32>), usize> = HashMap::new();
    let mut out = OriginalRecords::default();
    for (l, c) in leaves.into_iter().zip(codes) {
        let next = out.weights.len();
        let i = *index.entry((l.clone(), c.clone())).or_insert(next);
        if i == next {
            out.leaves.push(l);
            out.codes.push(c);
            out.weights.push(0);
        }
        out.weights[i] += 1;
    }
    Ok(out)
}

/// The options of `anon_metrics` / `metric_value`: `ncp_weights=age:0.5,sex:0.25,zip:0.25`
/// and `marginal_levels=age:2,location:1`, separated by commas (a part without `=` continues
/// the option before it).
#[derive(Debug)]
pub(crate) struct MetricOptions {
    /// The SQL function the options were given to, for errors.
    pub(crate) function: &'static str,
    pub(crate) ncp_weights: Option<Vec<f64>>,
    pub(crate) marginal_levels: Vec<(String, usize)>,
}

const NCP_WEIGHTS: OptionSpec = opt(
    "ncp_weights",
    Kind::Text("a:w,..."),
    "1/l each",
    "the weights w_i of ArtUC Def. 4: one per quasi-identifier, every one given",
);
const MARGINAL_LEVELS: OptionSpec = opt(
    "marginal_levels",
    Kind::Text("a:level,..."),
    "numeric: the first level above the leaves; categorical: the leaves",
    "the hierarchy level whose nodes bin each attribute in the two-way-marginal score",
);
/// `anon_metrics`' and `metric_value`'s options.
pub(crate) const METRICS_OPTIONS: Options =
    Options { function: "anon_metrics", specs: &[NCP_WEIGHTS, MARGINAL_LEVELS] };
pub(crate) const VALUE_OPTIONS: Options = Options { function: "metric_value", specs: &[NCP_WEIGHTS, MARGINAL_LEVELS] };

pub(crate) fn metric_options(options: &'static Options, meta: &TableMeta, text: &str) -> Result<MetricOptions> {
    let function = options.function;
    let o = options.parse_lists(text)?;
    let ncp_weights = o.text("ncp_weights").map(|v| ncp_weights(function, meta, v)).transpose()?;
    let marginal_levels = match o.text("marginal_levels") {
        Some(v) => super::marginals::parse_levels(function, v)?,
        None => Vec::new(),
    };
    Ok(MetricOptions { function, ncp_weights, marginal_levels })
}

/// `age:0.5,sex:0.25,zip:0.25` → one weight per quasi-identifier, in declaration order; every
/// quasi-identifier must be given.
fn ncp_weights(function: &str, meta: &TableMeta, spec: &str) -> Result<Vec<f64>> {
    let err = |m: String| AnonError::argument(function, "ncp_weights", m);
    let qis = meta.quasi_identifiers();
    let mut w = vec![None; qis.len()];
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part.split_once(':').ok_or_else(|| err(format!("'{part}' is not attribute:weight")))?;
        let i = qis
            .iter()
            .position(|q| *q == name.trim())
            .ok_or_else(|| err(format!("'{}' is not a quasi-identifier ({})", name.trim(), qis.join(", "))))?;
        let v: f64 = value.trim().parse().map_err(|_| err(format!("weight '{}' is not a number", value.trim())))?;
        w[i] = Some(v);
    }
    if let Some(i) = w.iter().position(|x| x.is_none()) {
        return Err(err(format!("ncp_weights gives no weight for '{}'", qis[i])));
    }
    Ok(w.into_iter().flatten().collect())
}
