//! Random COUNT workloads of the papers, as SQL text:
//! - W1 (ArtUC paper, Sec. 5.2): two demographics, `WHERE a = x AND b = y`;
//! - W2: one demographic and one diagnosis code, `WHERE a = x AND array_has(codes, 'c')`;
//! - W3: two codes, `WHERE array_has(codes, 'c1') AND array_has(codes, 'c2')`;
//! - attribute (h-ceiling paper, Fig. 9): `SELECT b, COUNT(*) FROM t WHERE a = x GROUP BY b`.
//!
//! Values come from a record drawn at random, so every query has a nonzero original answer
//! (the papers draw "random values"; a query nobody answers would only measure noise).

use crate::error::{AnonError, Result};
use crate::hierarchy::format_number;
use crate::meta::Role;
use crate::session::Registry;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng, rngs::StdRng};

/// Most draws of a record before a workload gives up (records without enough codes).
const MAX_TRIES: usize = 1000;
/// Most queries of one workload (a typo must not exhaust memory).
const MAX_QUERIES: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Workload {
    W1,
    W2,
    W3,
    Attribute,
}

impl Workload {
    pub(crate) fn parse(s: &str) -> Result<Self> {
        let spellings: &crate::keyword::Spellings<Workload> = &[
            (Workload::W1, &["w1"]),
            (Workload::W2, &["w2"]),
            (Workload::W3, &["w3"]),
            (Workload::Attribute, &["attribute", "attr", "per_attribute"]),
        ];
        crate::keyword::parse(spellings, s).ok_or_else(|| {
            let other = s.trim().to_ascii_lowercase();
            AnonError::argument(
                "workload_queries",
                "workload",
                format!("unknown workload '{other}' (W1, W2, W3, attribute)"),
            )
        })
    }
}

/// `n` queries of workload `kind` over `table` (roles from the registry); deterministic per seed.
pub(crate) async fn generate(
    ctx: &SessionContext,
    registry: &Registry,
    table: &str,
    kind: Workload,
    n: usize,
    seed: Option<u64>,
) -> Result<Vec<String>> {
    if n > MAX_QUERIES {
        return Err(AnonError::argument("workload_queries", "n", format!("{n} is more than {MAX_QUERIES} queries")));
    }
    let meta = registry.require(table)?;
    let batches = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found"))?.collect().await?;
    let schema = batches.first().map(|b| b.schema());
    let has = |c: &str| schema.as_ref().is_some_and(|s| s.field_with_name(c).is_ok());
    let demographics: Vec<String> = meta.quasi_identifiers().into_iter().filter(|c| has(c)).map(String::from).collect();
    let codes = meta.columns_with(Role::SetValued).into_iter().find(|c| has(c)).map(String::from);
    let need = |ok: bool, what: &str| {
        if ok { Ok(()) } else { Err(AnonError::table(table, format!("workload {kind:?} needs {what}"))) }
    };
    match kind {
        Workload::W1 | Workload::Attribute => need(demographics.len() >= 2, "two quasi-identifiers")?,
        Workload::W2 => {
            need(!demographics.is_empty() && codes.is_some(), "a quasi-identifier and a set-valued column")?
        }
        Workload::W3 => need(codes.is_some(), "a set-valued column")?,
    }
    let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if total == 0 {
        return Err(AnonError::table(table, "is empty: no values to draw queries from"));
    }
    let mut rng = StdRng::seed_from_u64(seed.unwrap_or_else(|| rand::rng().random()));
    let src = Source { batches: &batches, total, table };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        out.push(draw(&src, kind, &demographics, codes.as_deref(), &mut rng)?);
    }
    Ok(out)
}

struct Source<'a> {
    batches: &'a [RecordBatch],
    total: usize,
    table: &'a str,
}

impl Source<'_> {
    fn record(&self, rng: &mut StdRng) -> (&RecordBatch, usize) {
        let mut i = rng.random_range(0..self.total);
        for b in self.batches {
            if i < b.num_rows() {
                return (b, i);
            }
            i -= b.num_rows();
        }
        unreachable!("index below the row count")
    }
}

fn draw(src: &Source, kind: Workload, demo: &[String], codes: Option<&str>, rng: &mut StdRng) -> Result<String> {
    let t = quote_ident(src.table);
    for _ in 0..MAX_TRIES {
        let (b, r) = src.record(rng);
        let mut attrs: Vec<&String> = demo.iter().collect();
        attrs.shuffle(rng);
        let mut record_codes = match codes {
            Some(c) => list_values(b.column_by_name(c).expect("code column"), r)?,
            None => vec![],
        };
        record_codes.shuffle(rng);
        let cond = |a: &str| -> Result<Option<String>> {
            Ok(sql_literal(b.column_by_name(a).expect("demographic column"), r)?
                .map(|v| format!("{} = {v}", quote_ident(a))))
        };
        let has = |c: &str| format!("array_has({}, {})", quote_ident(codes.unwrap_or_default()), quote_str(c));
        let q = match kind {
            Workload::W1 => match (cond(attrs[0])?, cond(attrs[1])?) {
                (Some(x), Some(y)) => Some(format!("SELECT COUNT(*) FROM {t} WHERE {x} AND {y}")),
                _ => None,
            },
            Workload::W2 => match (cond(attrs[0])?, record_codes.first()) {
                (Some(x), Some(c)) => Some(format!("SELECT COUNT(*) FROM {t} WHERE {x} AND {}", has(c))),
                _ => None,
            },
            Workload::W3 => match record_codes.as_slice() {
                [a, b, ..] => Some(format!("SELECT COUNT(*) FROM {t} WHERE {} AND {}", has(a), has(b))),
                _ => None,
            },
            Workload::Attribute => cond(attrs[0])?.map(|x| {
                let g = quote_ident(attrs[1]);
                format!("SELECT {g}, COUNT(*) FROM {t} WHERE {x} GROUP BY {g} ORDER BY {g}")
            }),
        };
        if let Some(q) = q {
            return Ok(q);
        }
    }
    Err(AnonError::table(
        src.table,
        format!("found no record with the values workload {kind:?} needs in {MAX_TRIES} draws"),
    ))
}

fn quote_ident(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit());
    if plain { s.to_string() } else { format!("\"{}\"", s.replace('"', "\"\"")) }
}

fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A cell as a SQL literal (NULL cells give no query).
fn sql_literal(col: &ArrayRef, r: usize) -> Result<Option<String>> {
    if col.is_null(r) {
        return Ok(None);
    }
    let one = col.slice(r, 1);
    if col.data_type().is_numeric() {
        let f = cast(&one, &DataType::Float64)?;
        return Ok(Some(format_number(f.as_primitive::<Float64Type>().value(0))));
    }
    let s = cast(&one, &DataType::Utf8)?;
    Ok(Some(quote_str(s.as_string::<i32>().value(0))))
}

fn list_values(col: &ArrayRef, r: usize) -> Result<Vec<String>> {
    if col.is_null(r) {
        return Ok(vec![]);
    }
    let values = match col.data_type() {
        DataType::List(_) => col.as_list::<i32>().value(r),
        DataType::LargeList(_) => col.as_list::<i64>().value(r),
        _ => return Ok(vec![]),
    };
    let s = cast(&values, &DataType::Utf8)?;
    let s = s.as_string::<i32>();
    Ok((0..s.len()).filter(|&i| !s.is_null(i)).map(|i| s.value(i).to_string()).collect())
}
