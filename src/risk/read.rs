//! Reading the classes of a table or a release, as an attacker sees them: one class per
//! distinct combination of the published quasi-identifier values (a release's labels, a raw
//! table's values). A release's suppressed records (every quasi-identifier label `*`) form no
//! class: ARX leaves them out of every risk model, and so does this; they are counted apart.
//! Only the quasi-identifier columns are read, so a suppressed record published as a shell
//! (its sensitive value and every other column NULL, docs/verify.md) is read as any suppressed
//! record: counted in `suppressed_records`, in no class. Unlike `verify_release`, a row whose
//! labels are all `*` but which still carries a sensitive value is counted so too (this reads
//! re-identification from the quasi-identifiers, and such a row matches everyone).
//!
//! DataFusion's `GROUP BY` counts the classes (the frequency table: one row per distinct
//! combination with its number of records, the histogram the lattice search's encoding starts
//! from too, `crate::encode`), and that table's rows become dense integer codes (integers by
//! value, strings looked up as integers; one column per core), which SUDA searches. Encoding
//! the rows instead of the records does a 1.4-million-record table's work on its 111,430
//! classes; counting the records in this process instead of the plan measured twice the
//! plan's time on the NPS-like table (dev profile, docs/results/risk.md).

use super::Class;
use crate::encode::Labels;
use crate::encode::hash::{FastMap, fast_map};
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch};
use datafusion::arrow::compute::{cast, max, min};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::dataframe::DataFrame;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{SessionContext, ident, lit};

/// The label every quasi-identifier of a suppressed record shows.
const SUPPRESSED: &str = "*";

/// The records of a table or a release on its quasi-identifiers, as dense integer codes: rows
/// that each stand for `counts` identical records.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Records {
    /// `codes[j][i]`: row i's code in column j; equal values, equal codes.
    pub(crate) codes: Vec<Vec<u32>>,
    /// `missing[j][c]`: column j's code c says nothing of the person: a NULL, or in a release
    /// a suppressed cell `*`. SUDA never builds a unique from one (sdcMicro's `missing`); a
    /// class counts it as a value like any other (ARX does).
    pub(crate) missing: Vec<Vec<bool>>,
    /// `counts[i]`: the records row i stands for.
    pub(crate) counts: Vec<u64>,
}

impl Records {
    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    /// The number of records.
    pub(crate) fn records(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Records given by their codes, a row each (each column's codes `0..`; `missing` lists the
    /// codes that say nothing): the tests build tables this way.
    #[cfg(test)]
    pub(crate) fn from_codes(codes: Vec<Vec<u32>>, missing: &[u32]) -> Records {
        let missing = codes
            .iter()
            .map(|c| {
                let width = c.iter().max().map_or(0, |&m| m as usize + 1);
                (0..width as u32).map(|v| missing.contains(&v)).collect()
            })
            .collect();
        let counts = vec![1; codes.first().map_or(0, Vec::len)];
        Records { codes, missing, counts }
    }

    /// Each row's class (its combination of codes) numbered densely from 0, and the number of
    /// classes. The columns are folded in one at a time (the class so far times the next
    /// column's width plus its code, renumbered), so no key outgrows 64 bits whatever the number
    /// of columns.
    pub(crate) fn class_ids(&self) -> (Vec<u32>, usize) {
        let n = self.len();
        let Some((first, rest)) = self.codes.split_first() else {
            return (vec![0; n], usize::from(n > 0));
        };
        let (mut ids, mut classes) = (first.clone(), self.missing[0].len());
        for (column, missing) in rest.iter().zip(&self.missing[1..]) {
            let width = missing.len() as u64;
            let mut numbers = Numbers::new(classes as u64 * width);
            let mut next = 0u32;
            for (id, &c) in ids.iter_mut().zip(column) {
                *id = numbers.code(u64::from(*id) * width + u64::from(c), || {
                    next += 1;
                    next - 1
                });
            }
            classes = next as usize;
        }
        (ids, classes)
    }

    /// The sizes of the classes (a row per class when the rows are a frequency table's).
    pub(crate) fn class_sizes(&self) -> Vec<u64> {
        let (ids, classes) = self.class_ids();
        let mut sizes = vec![0u64; classes];
        for (id, n) in ids.into_iter().zip(&self.counts) {
            sizes[id as usize] += n;
        }
        // A code of records filtered out (a release's `*`) numbers a class without records.
        sizes.retain(|&s| s > 0);
        sizes
    }

    /// The rows `keep` says to keep, in order.
    fn filter(self, keep: &[bool]) -> Records {
        fn kept<T>(v: Vec<T>, keep: &[bool]) -> Vec<T> {
            v.into_iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| x).collect()
        }
        let codes = self.codes.into_iter().map(|c| kept(c, keep)).collect();
        Records { codes, missing: self.missing, counts: kept(self.counts, keep) }
    }
}

/// The records of `df` over `keys`, a row per class, and how many were suppressed (all keys
/// `*`; only looked for in a release, and left out of the records).
pub(crate) async fn records(df: DataFrame, keys: &[String], release: bool) -> Result<(Records, u64)> {
    let group: Vec<Expr> = keys.iter().map(ident).collect();
    // Classes in key order, so every score summed over them (SUDA's DIS scores) is the same
    // float on every run.
    let batches = crate::sorted::aggregate_in_key_order(df, group, vec![count(lit(1)).alias("__n")])?.collect().await?;
    let columns: Vec<usize> = (0..keys.len()).collect();
    let encoded = crate::parallel::map(&columns, |&j| encode(&batches, j, release));
    let mut stars = Vec::new();
    let (mut codes, mut missing) = (Vec::new(), Vec::new());
    for column in encoded {
        let column = column?;
        stars.push(column.star);
        codes.push(column.codes);
        missing.push(column.missing);
    }
    let counts = batches.iter().flat_map(|b| counts(b, "__n")).map(|n| n.unwrap_or(0)).collect();
    let all = Records { codes, missing, counts };
    if !release || stars.iter().any(Option::is_none) {
        return Ok((all, 0));
    }
    let keep: Vec<bool> =
        (0..all.len()).map(|i| all.codes.iter().zip(&stars).any(|(c, star)| Some(c[i]) != *star)).collect();
    let suppressed = keep.iter().zip(&all.counts).filter(|(k, _)| !**k).map(|(_, n)| n).sum();
    Ok((all.filter(&keep), suppressed))
}

/// Dense numbers for integer keys: one array read per key below a short range (a column's
/// values from its minimum, classes times a column's width), a hash map above.
struct Numbers {
    table: Vec<u32>,
    map: FastMap<u64, u32>,
}

impl Numbers {
    /// The most keys numbered by array: 16 MiB of numbers.
    const TABLE: u64 = 1 << 22;

    /// Keys below `range` (if short enough) are numbered by array.
    fn new(range: u64) -> Numbers {
        let table = if range <= Self::TABLE { vec![u32::MAX; range as usize] } else { Vec::new() };
        Numbers { table, map: fast_map(0) }
    }

    /// The number of `key`, from `fresh` the first time.
    fn code(&mut self, key: u64, fresh: impl FnOnce() -> u32) -> u32 {
        match self.table.get_mut(key as usize) {
            Some(slot) => {
                if *slot == u32::MAX {
                    *slot = fresh();
                }
                *slot
            }
            None => *self.map.entry(key).or_insert_with(fresh),
        }
    }
}

/// One column's codes; the code of `*` when the column shows one and `release`.
struct Encoded {
    codes: Vec<u32>,
    missing: Vec<bool>,
    star: Option<u32>,
}

/// Column `j` of `batches` as dense codes in the order values are met: integers by value,
/// everything else by its text (as the attacker reads the published table).
fn encode(batches: &[RecordBatch], j: usize, release: bool) -> Result<Encoded> {
    let arrays: Vec<&ArrayRef> = batches.iter().map(|b| b.column(j)).collect();
    let mut out =
        Encoded { codes: Vec::with_capacity(arrays.iter().map(|a| a.len()).sum()), missing: Vec::new(), star: None };
    let mut null = None;
    let mut null_code = |missing: &mut Vec<bool>| {
        *null.get_or_insert_with(|| {
            missing.push(true);
            missing.len() as u32 - 1
        })
    };
    if arrays.iter().all(|a| a.data_type().is_integer()) {
        let ints: Vec<ArrayRef> =
            arrays.iter().map(|a| cast(a, &DataType::Int64)).collect::<std::result::Result<_, _>>()?;
        let ints: Vec<&Int64Array> = ints.iter().map(|a| a.as_primitive::<Int64Type>()).collect();
        let low = ints.iter().filter_map(|a| min(*a)).min().unwrap_or(0);
        let high = ints.iter().filter_map(|a| max(*a)).max().unwrap_or(0);
        let mut numbers = Numbers::new((high.wrapping_sub(low) as u64).saturating_add(1));
        for x in ints.iter().flat_map(|a| a.iter()) {
            let code = match x {
                None => null_code(&mut out.missing),
                Some(x) => numbers.code(x.wrapping_sub(low) as u64, || {
                    out.missing.push(false);
                    out.missing.len() as u32 - 1
                }),
            };
            out.codes.push(code);
        }
        return Ok(out);
    }
    let texts: Vec<ArrayRef> = arrays
        .iter()
        .map(|a| if a.data_type() == &DataType::Utf8 { Ok((*a).clone()) } else { cast(a, &DataType::Utf8) })
        .collect::<std::result::Result<_, _>>()?;
    let mut labels = Labels::default();
    for a in &texts {
        for s in a.as_string::<i32>().iter() {
            let code = match s {
                None => null_code(&mut out.missing),
                Some(s) => labels
                    .code(s, |s| {
                        let suppressed = release && s == SUPPRESSED;
                        out.missing.push(suppressed);
                        let code = out.missing.len() as u32 - 1;
                        if suppressed {
                            out.star = Some(code);
                        }
                        Some(code)
                    })
                    .expect("every label gets a code"),
            };
            out.codes.push(code);
        }
    }
    Ok(out)
}

fn counts(b: &RecordBatch, column: &str) -> Vec<Option<u64>> {
    let c = b.column_by_name(column).expect("aggregate output").as_primitive::<Int64Type>();
    (0..c.len()).map(|i| c.is_valid(i).then(|| c.value(i) as u64)).collect()
}

/// A SQL identifier, quoted.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The classes of `sample` with each one's size in `population` (the journalist's linking
/// table), matched on equal quasi-identifier values (NULL matching NULL). Every class of the
/// sample must be at least as large in the population: the sample is drawn from it.
pub(crate) async fn linked_classes(
    ctx: &SessionContext,
    sample: &str,
    population: &str,
    keys: &[String],
) -> Result<Vec<Class>> {
    let cols = keys.iter().map(|k| quoted(k)).collect::<Vec<_>>().join(", ");
    let on = keys
        .iter()
        .map(|k| format!("(s.{q} IS NOT DISTINCT FROM p.{q})", q = quoted(k)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let sql = format!(
        "SELECT s.__n AS sample, p.__n AS population \
         FROM (SELECT {cols}, COUNT(*) AS __n FROM {s} GROUP BY {cols}) s \
         LEFT JOIN (SELECT {cols}, COUNT(*) AS __n FROM {p} GROUP BY {cols}) p ON {on}",
        s = quoted(sample),
        p = quoted(population),
    );
    let batches = ctx.sql(&sql).await?.collect().await?;
    let mut out = Vec::new();
    for b in &batches {
        for (s, p) in counts(b, "sample").into_iter().zip(counts(b, "population")) {
            let s = s.unwrap_or(0);
            match p {
                Some(p) if p >= s => out.push(Class { sample: s, population: p }),
                _ => {
                    return Err(AnonError::argument(
                        "risk_report",
                        "options",
                        format!(
                            "population_table '{population}' has fewer records than '{sample}' in some class: \
                             '{sample}' must be a sample of it"
                        ),
                    ));
                }
            }
        }
    }
    Ok(out)
}
