//! `as_records(original, output, release [, 'seed=42, suppressed=drop|draw'])`: a generalized
//! release as plain records with leaf values, for tools that need plain values (scorers, ML,
//! synthetic-data evaluators).
//!
//! Every released record is drawn under the query harness's own reading of it (src/eval/dist.rs,
//! the one place that reading is made): each generalized value independently, uniform over the
//! hierarchy leaves it covers; a generalized code `(a, b)` of a set-valued column is one of the
//! codes it covers, uniform. A numeric quasi-identifier `q` becomes one column `q` (the
//! original's type; `q_lo`, `q_hi` go), a categorical one its leaf label; every other column is
//! kept as released. Counterfeits are kept (the records are the release's rows, so its catalog
//! still weighs them); suppressed records (NULL numeric bounds) are dropped, or with
//! `suppressed=draw` drawn over the whole domain as the harness reads them. The report
//! (`<output>_report`) states both choices. `original` names the declarations (roles,
//! hierarchies) the release is read against; its rows are not read.

use super::args::Args;
use super::method::{Call, MethodSpec, Outputs};
use super::report::{Value, seeded};
use crate::error::{AnonError, Result};
use crate::eval::dist::{self, LabelIndex, Support, Val};
use crate::hierarchy::Hierarchy;
use crate::meta::Role;
use crate::methods::contract::{Release, Rows};
use crate::methods::options::{self, Options, SEED, opt};
use crate::release::columns::{f64_values, str_values};
use crate::session::runtime::block_on_cancellable;
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder,
};
use datafusion::arrow::compute::{SortColumn, lexsort_to_indices, take_record_batch};
use datafusion::arrow::compute::{concat_batches, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, RngExt};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct AsRecords;

/// `as_records`'s options.
const OPTIONS: Options = Options {
    function: "as_records",
    specs: &[
        SEED,
        opt(
            "suppressed",
            options::Kind::Choice(&["drop", "draw"]),
            "drop",
            "a suppressed record is left out, or drawn from the whole domain",
        ),
    ],
};

#[derive(Debug)]
pub(crate) struct Params {
    release: String,
    seed: Option<u64>,
    draw_suppressed: bool,
}

impl MethodSpec for AsRecords {
    type Params = Params;
    const NAME: &'static str = "as_records";
    const SIGNATURE: &'static str = "as_records(original, output, release [, options])";
    const OPTIONS: Option<&'static Options> = Some(&OPTIONS);
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<Params> {
        let release = a.str(2, "release")?;
        if crate::session::outputs::normalize(&release) == crate::session::outputs::normalize(&a.str(1, "output")?) {
            return Err(AnonError::argument(Self::NAME, "output", "must differ from the release it reads"));
        }
        let mut p = Params { release, seed: None, draw_suppressed: false };
        let o = OPTIONS.parse(&a.opt_str(3, "options")?.unwrap_or_default())?;
        p.seed = o.seed();
        let draw = |v: &str| crate::keyword::parse(&[(false, &["drop"]), (true, &["draw"])], v);
        p.draw_suppressed = o.choice("suppressed", draw)?.unwrap_or(false);
        Ok(p)
    }

    fn inputs(&self, p: &Params) -> Vec<(&'static str, String)> {
        vec![("release", p.release.clone())]
    }

    fn deterministic(&self, p: &Params) -> bool {
        p.seed.is_some()
    }

    fn side_tables(&self, _: &Params) -> Vec<&'static str> {
        vec!["report"]
    }

    fn seed(&self, p: &Params) -> Option<u64> {
        p.seed
    }

    fn run(&self, call: &Call<'_>, p: &Params) -> Result<Outputs> {
        // Ctrl-C cancels the read, the long part (the adapter checks again before registering).
        let progress = call.registry.progress();
        let ((batch, suppressed), integer) = block_on_cancellable(progress.as_ref(), async {
            Ok((read_release(call, &p.release).await?, integer_columns(call).await?))
        })?;
        let keep: Vec<bool> = suppressed.iter().map(|s| p.draw_suppressed || !s).collect();
        let batch = content_order(&filter_record_batch(&batch, &BooleanArray::from(keep))?)?;
        let mut rng = crate::dp::dp_rng(p.seed)?;
        let records = draw_records(call, &p.release, &batch, &integer, &mut rng)?;
        let n_suppressed = suppressed.iter().filter(|s| **s).count() as i64;
        let rows = Rows::Batches(records.schema(), vec![records.clone()]);
        let release = Release::untimed(
            rows,
            vec![
                ("release", Value::Text(p.release.clone())),
                ("records", Value::Int(records.num_rows() as i64)),
                ("suppressed_records", Value::Int(n_suppressed)),
                (
                    "suppressed",
                    Value::Text(if p.draw_suppressed { "drawn over the whole domain" } else { "dropped" }.into()),
                ),
                (
                    "counterfeits",
                    Value::Text("kept: every released record is drawn; the release's catalog still weighs them".into()),
                ),
                (
                    "reading",
                    Value::Text(
                        "each generalized value uniform over the leaves it covers, attributes independent \
                         (the query harness's reading)"
                            .into(),
                    ),
                ),
                seeded(p.seed),
            ],
        );
        call.publish(Self::NAME, release)
    }
}

/// The release as one batch, and which of its records are suppressed (decoded against the
/// original's declarations, the rule every reader shares).
async fn read_release(call: &Call<'_>, release: &str) -> Result<(RecordBatch, Vec<bool>)> {
    let df = call.ctx.table(release).await.map_err(|_| AnonError::table(release, "not found"))?;
    let schema = df.schema().inner().clone();
    let batches = df.collect().await?;
    let decoded = crate::metrics::decode_release(call.source, call.meta, release, &batches)?;
    Ok((concat_batches(&schema, &batches)?, decoded.suppressed))
}

/// The original's integer columns: a drawn numeric leaf goes back into its column's type.
async fn integer_columns(call: &Call<'_>) -> Result<Vec<String>> {
    let df = call.ctx.table(call.source).await.map_err(|_| AnonError::table(call.source, "not found"))?;
    Ok(df.schema().fields().iter().filter(|f| f.data_type().is_integer()).map(|f| f.name().clone()).collect())
}

/// How the release holds one column of the original.
enum Kind {
    Numeric(Arc<Hierarchy>),
    Categorical(Arc<Hierarchy>, LabelIndex),
    Codes(Arc<Hierarchy>, LabelIndex),
}

/// `batch`'s rows sorted by their values. A release's row order is a shuffle, an unseeded one for
/// methods without a seed, so drawing in it would give the same seed other records; drawn in
/// this order, the records are a function of the release's content and the seed.
fn content_order(batch: &RecordBatch) -> Result<RecordBatch> {
    let columns: Vec<SortColumn> =
        batch.columns().iter().map(|c| SortColumn { values: c.clone(), options: None }).collect();
    let order = lexsort_to_indices(&columns, None)?;
    Ok(take_record_batch(batch, &order)?)
}

/// Every record of `batch` drawn: generalized columns replaced by leaves, bounds dropped.
fn draw_records(
    call: &Call<'_>,
    release: &str,
    batch: &RecordBatch,
    integer: &[String],
    rng: &mut StdRng,
) -> Result<RecordBatch> {
    let mut kinds: HashMap<String, Kind> = HashMap::new();
    for (col, role) in &call.meta.roles {
        if !matches!(role, Role::QuasiIdentifier | Role::SetValued) {
            continue;
        }
        let h: Arc<Hierarchy> = call.meta.hierarchy(call.source, col)?.clone();
        let kind = match role {
            Role::QuasiIdentifier if h.is_numeric() => Kind::Numeric(h),
            Role::QuasiIdentifier => Kind::Categorical(h.clone(), LabelIndex::new(&h)),
            _ => Kind::Codes(h.clone(), LabelIndex::new(&h)),
        };
        kinds.insert(col.clone(), kind);
    }
    let bounds = |c: &str| c.strip_suffix("_lo").or_else(|| c.strip_suffix("_hi")).map(str::to_string);
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (i, f) in batch.schema().fields().iter().enumerate() {
        let name = f.name();
        if bounds(name).is_some_and(|q| matches!(kinds.get(&q), Some(Kind::Numeric(_)))) {
            continue;
        }
        let at = (release, name.as_str());
        let (field, array) = match kinds.get(name) {
            None => (f.as_ref().clone(), batch.column(i).clone()),
            Some(Kind::Numeric(h)) => {
                let values = draw_numeric(h, at, batch, rng)?;
                numeric_column(name, values, integer.contains(name))
            }
            Some(Kind::Categorical(h, index)) => {
                let labels = str_values(release, name, std::slice::from_ref(batch.column(i)))?;
                let mut cache: HashMap<Option<String>, Support> = HashMap::new();
                let mut out = Vec::with_capacity(labels.len());
                for l in labels {
                    let s = match cache.get(&l) {
                        Some(s) => s.clone(),
                        None => {
                            let s = dist::categorical_support(h, index, at, l.as_deref())?;
                            cache.insert(l, s.clone());
                            s
                        }
                    };
                    out.push(draw(&s, rng).key_text());
                }
                (Field::new(name, DataType::Utf8, false), Arc::new(StringArray::from(out)) as ArrayRef)
            }
            Some(Kind::Codes(h, index)) => (
                Field::new(name, DataType::new_list(DataType::Utf8, true), true),
                draw_codes(h, index, at, batch.column(i), rng)?,
            ),
        };
        fields.push(field);
        columns.push(array);
    }
    let schema = Arc::new(Schema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// One leaf per record of numeric quasi-identifier `at.1`, from its released bounds.
fn draw_numeric(h: &Hierarchy, at: (&str, &str), batch: &RecordBatch, rng: &mut impl Rng) -> Result<Vec<f64>> {
    let (release, q) = at;
    let column = |suffix: &str| -> Result<Vec<Option<f64>>> {
        let name = format!("{q}_{suffix}");
        let c = batch.column_by_name(&name).ok_or_else(|| {
            AnonError::column(release, &name, "is missing; the release does not match the original's declarations")
        })?;
        f64_values(release, &name, std::slice::from_ref(c))
    };
    let (lo, hi) = (column("lo")?, column("hi")?);
    let mut cache: HashMap<(Option<u64>, Option<u64>), Support> = HashMap::new();
    let mut out = Vec::with_capacity(lo.len());
    for (a, b) in lo.into_iter().zip(hi) {
        let key = (a.map(f64::to_bits), b.map(f64::to_bits));
        let s = match cache.get(&key) {
            Some(s) => s.clone(),
            None => {
                let s = dist::numeric_support(h, release, q, a, b)?;
                cache.insert(key, s.clone());
                s
            }
        };
        match draw(&s, rng) {
            Val::Num(x) => out.push(*x),
            _ => return Err(AnonError::column(release, q, "internal: a numeric leaf that is not a number")),
        }
    }
    Ok(out)
}

fn numeric_column(name: &str, values: Vec<f64>, integer: bool) -> (Field, ArrayRef) {
    if integer {
        let v: Vec<i64> = values.into_iter().map(|x| x as i64).collect();
        (Field::new(name, DataType::Int64, false), Arc::new(Int64Array::from(v)))
    } else {
        (Field::new(name, DataType::Float64, false), Arc::new(Float64Array::from(values)))
    }
}

/// Each element of each record's code list drawn to one code it covers (an exact code stays);
/// a code drawn twice in one record is kept once.
fn draw_codes(
    h: &Hierarchy,
    index: &LabelIndex,
    at: (&str, &str),
    column: &ArrayRef,
    rng: &mut impl Rng,
) -> Result<ArrayRef> {
    let (release, col) = at;
    let lists = crate::hierarchy::code_lists(release, col, column)?;
    let mut out = ListBuilder::new(StringBuilder::new());
    for r in 0..lists.len() {
        if lists.is_null(r) {
            out.append(false);
            continue;
        }
        let v = lists.value(r);
        let v = v
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| AnonError::column(release, col, "is not a list of text codes"))?;
        let mut drawn: Vec<String> = Vec::new();
        for i in (0..v.len()).filter(|&i| v.is_valid(i)) {
            let cover = dist::code_cover(h, index, v.value(i)).ok_or_else(|| {
                AnonError::column(
                    release,
                    col,
                    "holds an element that is neither a code nor a generalized code of its hierarchy",
                )
            })?;
            let code =
                if cover.len() == 1 { cover[0].clone() } else { cover[rng.random_range(0..cover.len())].clone() };
            if !drawn.contains(&code) {
                drawn.push(code);
            }
        }
        for c in drawn {
            out.values().append_value(c);
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// One value drawn from a support by its probabilities (inverse CDF).
fn draw<'a>(s: &'a [(Val, f64)], rng: &mut impl Rng) -> &'a Val {
    let u: f64 = rng.random();
    let mut acc = 0.0;
    for (v, p) in s {
        acc += p;
        if u < acc {
            return v;
        }
    }
    &s.last().expect("a support holds at least one value").0
}
