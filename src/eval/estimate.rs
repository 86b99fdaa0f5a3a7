//! The estimate from the release: the release is first aggregated by DataFusion to its
//! distinct tuples of the referenced columns (histogram first), then each tuple contributes
//! `count × P(WHERE ∧ group)` (and the expected measure) under the uniform model.

use super::codes::CodeRows;
use super::dist::{self, Support, Val};
use super::plan::{Attr, AttrKind, Plan, Var};
use super::prob::{AtomMemo, Env, prob};
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{Expr, cast as cast_expr};
use datafusion::prelude::{SessionContext, ident, lit};
use std::collections::HashMap;
use std::sync::Arc;

/// Most value combinations enumerated for one distinct tuple (grouped attributes times an
/// entangled measure); beyond it the query is refused rather than left running.
const MAX_COMBINATIONS: usize = 5_000_000;

/// Per group: sort key, estimated count (or non-null measure mass) and measure sum.
#[derive(Debug, Clone)]
pub(crate) struct GroupAcc {
    pub(crate) sort: Vec<Val>,
    pub(crate) count: f64,
    pub(crate) sum: f64,
}

pub(crate) type Groups = HashMap<String, GroupAcc>;

/// The probability that a record is real, per (class id, sensitive value), from a catalog.
pub(crate) type RealProb = HashMap<(i64, String), f64>;

/// What the scan needs beyond the plan: the release name, and the catalog's weights with
/// the sensitive column they apply to.
pub(crate) struct Scan<'a> {
    pub(crate) release: &'a str,
    pub(crate) catalog: Option<(&'a str, &'a RealProb)>,
}

/// Aggregated releases already read, by release and key columns: a workload asks many
/// queries over the same columns, and grouping a release by a list column is the costly part
/// (arrow's row format copies every list), so it is done once per workload, not per query.
pub(crate) type ReleaseCache = HashMap<String, Arc<Aggregated>>;

/// A release grouped by the columns a plan reads, with each set-valued column read once.
pub(crate) struct Aggregated {
    batches: Vec<RecordBatch>,
    /// Per plan attribute: its column's offset in the batches, and its codes if set-valued.
    offsets: Vec<usize>,
    codes: Vec<Option<CodeRows>>,
}

/// Estimate every group's answer from the release.
pub(crate) async fn estimate(
    ctx: &SessionContext,
    plan: &Plan,
    scan: &Scan<'_>,
    cache: &mut ReleaseCache,
) -> Result<Groups> {
    let release = aggregated(ctx, plan, scan, cache).await?;
    // Per variable: for `array_has(c, code)`, how likely each distinct element of c is the code.
    let presence: Vec<Option<Vec<f64>>> = plan
        .vars
        .iter()
        .map(|v| match v {
            Var::Has(i, code) => release.codes[*i].as_ref().map(|c| c.presence(code)),
            Var::Attr(_) => None,
        })
        .collect();
    let mut state = State::new(plan);
    let mut groups = Groups::new();
    for batch in 0..release.batches.len() {
        scan_batch(plan, scan, &mut state, &release, &presence, batch, &mut groups)?;
    }
    Ok(groups)
}

/// The release's distinct tuples of the columns the plan reads, with their counts.
async fn aggregated(
    ctx: &SessionContext,
    plan: &Plan,
    scan: &Scan<'_>,
    cache: &mut ReleaseCache,
) -> Result<Arc<Aggregated>> {
    let mut keys: Vec<Expr> = Vec::new();
    for a in &plan.attrs {
        match &a.kind {
            AttrKind::Numeric(_) => {
                keys.push(cast_expr(ident(format!("{}_lo", a.name)), DataType::Float64));
                keys.push(cast_expr(ident(format!("{}_hi", a.name)), DataType::Float64));
            }
            AttrKind::Categorical(..) | AttrKind::ExactStr => keys.push(cast_expr(ident(&a.name), DataType::Utf8)),
            AttrKind::ExactNum => keys.push(cast_expr(ident(&a.name), DataType::Float64)),
            AttrKind::Codes(..) => keys.push(ident(&a.name)),
        }
    }
    if let Some((sensitive, _)) = scan.catalog {
        keys.push(cast_expr(ident("class_id"), DataType::Int64));
        keys.push(cast_expr(ident(sensitive), DataType::Utf8));
    }
    let cache_key = format!("{}\u{0}{keys:?}", scan.release);
    if let Some(b) = cache.get(&cache_key) {
        return Ok(b.clone());
    }
    let df = ctx.table(scan.release).await.map_err(|_| AnonError::table(scan.release, "not found"))?;
    let keys: Vec<Expr> = keys.into_iter().enumerate().map(|(i, e)| e.alias(format!("__k{i}"))).collect();
    // In key order: the measures sum floating-point contributions tuple by tuple, and a sum in
    // another order differs in its last digits from run to run (two_way_marginal
    // 792.1779608785615 and ...616 for one seeded release).
    let batches = crate::sorted::aggregate_in_key_order(df, keys, vec![count(lit(1)).alias("__n")])?.collect().await?;
    let offsets = column_offsets(plan);
    let codes = plan
        .attrs
        .iter()
        .zip(&offsets)
        .map(|(a, &at)| match &a.kind {
            AttrKind::Codes(h, idx) => CodeRows::new(h, idx, &batches, at, (scan.release, &a.name)).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let release = Arc::new(Aggregated { batches, offsets, codes });
    cache.insert(cache_key, release.clone());
    Ok(release)
}

/// Where each plan attribute starts in the aggregated batch (a numeric one takes two columns).
fn column_offsets(plan: &Plan) -> Vec<usize> {
    let mut at = 0;
    plan.attrs
        .iter()
        .map(|a| {
            let here = at;
            at += width(a);
            here
        })
        .collect()
}

fn width(a: &Attr) -> usize {
    if matches!(a.kind, AttrKind::Numeric(_)) { 2 } else { 1 }
}

/// Caches of supports per released value, shared by all tuples.
struct State {
    supports: Vec<HashMap<String, Support>>,
    memo: AtomMemo,
}

impl State {
    fn new(plan: &Plan) -> Self {
        State { supports: vec![HashMap::new(); plan.attrs.len()], memo: AtomMemo::new() }
    }
}

fn scan_batch(
    plan: &Plan,
    scan: &Scan,
    state: &mut State,
    release: &Aggregated,
    presence: &[Option<Vec<f64>>],
    batch: usize,
    groups: &mut Groups,
) -> Result<()> {
    let b = &release.batches[batch];
    let offsets = &release.offsets;
    let n = b.column(b.num_columns() - 1).as_primitive::<Int64Type>().clone();
    let at: usize = plan.attrs.iter().map(width).sum();
    let catalog_cols =
        scan.catalog.map(|_| (b.column(at).as_primitive::<Int64Type>(), b.column(at + 1).as_string::<i32>()));
    let mut attr_support: Vec<Option<Support>> = vec![None; plan.attrs.len()];
    for row in 0..b.num_rows() {
        let mut weight = n.value(row) as f64;
        if let (Some((cls, sens)), Some((_, real))) = (&catalog_cols, scan.catalog)
            && !cls.is_null(row)
            && !sens.is_null(row)
        {
            weight *= real.get(&(cls.value(row), sens.value(row).to_string())).copied().unwrap_or(1.0);
        }
        if weight == 0.0 {
            continue;
        }
        for (i, a) in plan.attrs.iter().enumerate() {
            attr_support[i] = match &a.kind {
                AttrKind::Codes(..) => None,
                _ => Some(support(scan.release, state, i, a, b, offsets[i], row)?),
            };
        }
        let supports: Vec<Support> = plan
            .vars
            .iter()
            .enumerate()
            .map(|(k, v)| match v {
                Var::Attr(i) => Ok(attr_support[*i].clone().expect("attribute support")),
                Var::Has(i, _) => {
                    let codes = release.codes[*i].as_ref().expect("array_has variables are on code columns");
                    let p = presence[k].as_deref().expect("presence of an array_has variable");
                    Ok(dist::bernoulli(codes.has(p, batch, row)))
                }
            })
            .collect::<Result<_>>()?;
        accumulate(plan, &supports, weight, groups, &mut state.memo)?;
    }
    Ok(())
}

fn support(
    release: &str,
    state: &mut State,
    i: usize,
    a: &Attr,
    b: &RecordBatch,
    at: usize,
    row: usize,
) -> Result<Support> {
    let f64_at = |c: usize| {
        let arr = b.column(c).as_primitive::<Float64Type>();
        (!arr.is_null(row)).then(|| arr.value(row))
    };
    let str_at = |c: usize| {
        let arr = b.column(c).as_string::<i32>();
        (!arr.is_null(row)).then(|| arr.value(row))
    };
    let key = match &a.kind {
        AttrKind::Numeric(_) => format!("{:?}|{:?}", f64_at(at), f64_at(at + 1)),
        AttrKind::ExactNum => format!("{:?}", f64_at(at)),
        _ => format!("{:?}", str_at(at)),
    };
    if let Some(s) = state.supports[i].get(&key) {
        return Ok(s.clone());
    }
    let s = match &a.kind {
        AttrKind::Numeric(h) => dist::numeric_support(h, release, &a.name, f64_at(at), f64_at(at + 1))?,
        AttrKind::Categorical(h, idx) => dist::categorical_support(h, idx, (release, &a.name), str_at(at))?,
        // A column released as it is may be NULL on a suppressed record: the shell withholds its
        // sensitive value (and kept columns). It is read as SQL reads NULL: no condition on the
        // column holds for it, and grouped by the column it falls in the NULL group, which the
        // original (whose sensitive column holds no NULL) does not have.
        AttrKind::ExactNum => dist::point(f64_at(at).map_or(Val::Null, Val::Num)),
        AttrKind::ExactStr => dist::point(str_at(at).map_or(Val::Null, |s| Val::Str(Arc::from(s)))),
        AttrKind::Codes(..) => unreachable!("codes have per-code variables"),
    };
    state.supports[i].insert(key, s.clone());
    Ok(s)
}

/// Add one distinct tuple (`weight` records) to the groups: enumerate the conditioning
/// variables' values, and for each the probability of the predicate given them.
fn accumulate(plan: &Plan, supports: &[Support], weight: f64, groups: &mut Groups, memo: &mut AtomMemo) -> Result<()> {
    let mut env = Env::new(supports, memo);
    let cond_mask = plan.cond.iter().fold(0u64, |m, &v| m | 1 << v);
    let p0 = match &plan.pred {
        None => Some(1.0),
        Some(p) if p.mask() & cond_mask == 0 => Some(prob(p, &mut env)),
        Some(_) => None,
    };
    if p0 == Some(0.0) {
        return Ok(());
    }
    let free_measure = plan.measure.filter(|m| !plan.cond.contains(m)).map(|m| dist::mean_parts(&supports[m]));
    let sizes: Vec<usize> = plan.cond.iter().map(|&v| supports[v].len()).collect();
    if sizes.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s)).is_none_or(|t| t > MAX_COMBINATIONS) {
        return Err(AnonError::argument(
            "query_error",
            "query",
            format!("grouping needs more than {MAX_COMBINATIONS} value combinations per release tuple"),
        ));
    }
    let mut odometer = vec![0usize; sizes.len()];
    loop {
        let mut w = weight;
        for (k, &v) in plan.cond.iter().enumerate() {
            let (val, p) = &supports[v][odometer[k]];
            w *= p;
            env.fix(v, val.clone());
        }
        let p = match (p0, &plan.pred) {
            (Some(p), _) => p,
            (None, Some(pred)) => prob(pred, &mut env),
            (None, None) => 1.0,
        };
        if w * p > 0.0 {
            let (sum, mass) = match (plan.measure, free_measure) {
                (None, _) => (0.0, 1.0),
                (Some(_), Some(parts)) => parts,
                (Some(m), None) => match &env.fixed[m] {
                    Some(Val::Num(x)) => (*x, 1.0),
                    Some(Val::Null) | None => (0.0, 0.0),
                    Some(_) => (0.0, 1.0),
                },
            };
            add(plan, &env, groups, w * p * mass, w * p * sum);
        }
        if !advance(&mut odometer, &sizes) {
            break;
        }
    }
    Ok(())
}

fn advance(odometer: &mut [usize], sizes: &[usize]) -> bool {
    for k in (0..odometer.len()).rev() {
        odometer[k] += 1;
        if odometer[k] < sizes[k] {
            return true;
        }
        odometer[k] = 0;
    }
    false
}

fn add(plan: &Plan, env: &Env, groups: &mut Groups, count: f64, sum: f64) {
    let sort: Vec<Val> = plan
        .groups
        .iter()
        .map(|g| {
            let v = env.fixed[g.var].clone().unwrap_or(Val::Null);
            match (g.bucket, v) {
                (Some((offset, width, integer)), Val::Num(x)) => {
                    let q = (x + offset) / width;
                    Val::Num(if integer { q.trunc() } else { q.floor() } * width)
                }
                (_, v) => v,
            }
        })
        .collect();
    let key = group_key(&sort);
    let acc = groups.entry(key).or_insert_with(|| GroupAcc { sort, count: 0.0, sum: 0.0 });
    acc.count += count;
    acc.sum += sum;
}

/// The text of a group key: its parts joined by ", "; a query without GROUP BY has one group.
pub(crate) fn group_key(parts: &[Val]) -> String {
    if parts.is_empty() {
        return "ALL".into();
    }
    parts.iter().map(Val::key_text).collect::<Vec<_>>().join(", ")
}
