//! Histogram-first encoding: the one place where raw rows become dense integer codes.
//!
//! A DataFusion aggregation turns the source table into its frequency table: one row per
//! distinct (quasi-identifiers [, sensitive value]) tuple with its record count. Quasi-identifier
//! values become leaf codes of their hierarchies, so every method searches, scores and clusters
//! on a table that is orders of magnitude smaller than the data and never touches strings.
//! The release is built from the frequency table's classes where it holds every published column
//! ([`publish::ClassCells`]), else materialized by a second DataFusion plan ([`materialize`]).
//!
//! NULL rule (the same for every method): a NULL in a quasi-identifier maps to the hierarchy
//! leaf labelled `NULL` when the hierarchy has one, and is an error naming the column
//! otherwise. A NULL sensitive value is an error.

mod cache;
pub(crate) mod contribution;
mod count;
mod frequencies;
mod group;
pub(crate) mod hash;
mod materialize;
pub(crate) mod publish;
mod recoded;
pub(crate) mod shuffle;
pub mod source;
mod walk;

pub(crate) use cache::cheapest_source;
pub use cache::{Cached, NodeCache};
pub(crate) use count::Labels;
pub use frequencies::cached_frequency_table;
pub(crate) use frequencies::cached_frequency_table_of;
pub(crate) use group::LatticeKeys;
pub use group::{Grouping, class_degrees, class_sizes_of, generalize_to, group, rollup};
pub(crate) use materialize::{dropped_columns, materialize_node, materialize_suppressed, node_label, released};
pub(crate) use recoded::{RecodedRows, STAR, materialize_recoded};
pub(crate) use shuffle::shuffle_rows;
pub(crate) use walk::EveryNode;
pub use walk::for_each_node;

use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, NULL_LEAF};
use crate::meta::TableMeta;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::prelude::{SessionContext, ident, lit};
use source::Source;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A quasi-identifier column of the frequency table.
#[derive(Debug, Clone)]
pub struct QiColumn {
    pub name: String,
    pub hierarchy: Arc<Hierarchy>,
    /// Leaf code of each frequency row.
    pub codes: Vec<u32>,
}

/// The sensitive column of the frequency table, dictionary-encoded.
#[derive(Debug, Clone)]
pub struct SensitiveColumn {
    pub name: String,
    /// Distinct values, sorted; a code indexes this list.
    pub values: Vec<String>,
    pub codes: Vec<u32>,
}

/// Distinct (quasi-identifier [, sensitive]) tuples with their counts, sorted by codes so
/// that everything computed from it is deterministic.
#[derive(Debug, Clone)]
pub struct FrequencyTable {
    pub qis: Vec<QiColumn>,
    pub sensitive: Option<SensitiveColumn>,
    pub counts: Vec<u64>,
}

impl FrequencyTable {
    /// Assemble from already-encoded columns (tests, generators); rows are sorted here.
    pub fn from_parts(qis: Vec<QiColumn>, sensitive: Option<SensitiveColumn>, counts: Vec<u64>) -> Result<Self> {
        let n = counts.len();
        let out_of_range =
            crate::parallel::map(&qis, |q| q.codes.iter().find(|&&c| c as usize >= q.hierarchy.leaf_count()).copied());
        for (q, bad) in qis.iter().zip(out_of_range) {
            if q.codes.len() != n {
                return Err(AnonError::column("frequency table", &q.name, "has a different number of rows"));
            }
            if let Some(bad) = bad {
                return Err(AnonError::column("frequency table", &q.name, format!("leaf code {bad} is out of range")));
            }
        }
        let mut ft = FrequencyTable { qis, sensitive, counts };
        ft.sort();
        Ok(ft)
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Records per leaf of each quasi-identifier: what every separable (per-attribute) loss
    /// needs, so that it is computed per level instead of per class of every node.
    pub(crate) fn leaf_marginals(&self) -> Vec<Vec<u64>> {
        self.qis
            .iter()
            .map(|q| {
                let mut m = vec![0u64; q.hierarchy.leaf_count()];
                for (&leaf, &n) in q.codes.iter().zip(&self.counts) {
                    m[leaf as usize] += n;
                }
                m
            })
            .collect()
    }
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
    /// Number of records the table stands for.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
    pub fn hierarchies(&self) -> Vec<Arc<Hierarchy>> {
        self.qis.iter().map(|q| q.hierarchy.clone()).collect()
    }
    pub fn heights(&self) -> Vec<u8> {
        self.qis.iter().map(|q| q.hierarchy.height() as u8).collect()
    }

    /// The sensitive column, which a method that publishes sensitive values needs; `table`
    /// names the table in the error.
    pub(crate) fn declared_sensitive(&self, table: &str) -> Result<&SensitiveColumn> {
        self.sensitive.as_ref().ok_or_else(|| AnonError::table(table, "no sensitive attribute declared"))
    }

    /// The table over the quasi-identifiers alone: the rows of each quasi-identifier tuple
    /// (adjacent, since rows sort by the quasi-identifiers first) merged into one. The same
    /// table as one counted without the sensitive column, so a call that needs the sensitive
    /// values only for its release counts once.
    pub(crate) fn without_sensitive(&self) -> FrequencyTable {
        if self.sensitive.is_none() {
            return self.clone();
        }
        let (_, codes, counts) = self.qi_runs();
        let qis = self
            .qis
            .iter()
            .zip(codes)
            .map(|(q, codes)| QiColumn { name: q.name.clone(), hierarchy: q.hierarchy.clone(), codes })
            .collect();
        FrequencyTable { qis, sensitive: None, counts }
    }

    /// The runs of rows with equal quasi-identifier codes (the rows are sorted by their codes,
    /// so a run is one class of the bottom node): each run's first row, its codes per
    /// quasi-identifier and its records, found on the pool in ranges of rows.
    pub(crate) fn qi_runs(&self) -> (Vec<u32>, Vec<Vec<u32>>, Vec<u64>) {
        let starts = self.run_starts();
        let codes =
            crate::parallel::map(&self.qis, |q| starts.iter().map(|&r| q.codes[r as usize]).collect::<Vec<u32>>());
        let counts = crate::parallel::run_sums(&self.counts, &starts);
        (starts, codes, counts)
    }

    /// The first row of each run of equal quasi-identifier codes, found on the pool in ranges of
    /// rows. A row opens a run when a column's code differs from the row before: each column
    /// is compared in one pass over the range (a loop the compiler vectorizes), where comparing
    /// row by row across the columns read them all for nearly every row (adjacent rows share
    /// their first codes) and cost as much as the search's bottom grouping.
    fn run_starts(&self) -> Vec<u32> {
        let ranges = crate::parallel::ranges(self.len(), RUN_ROWS);
        let starts = crate::parallel::map(&ranges, |r| {
            let mut opens = vec![false; r.len()];
            opens[0] = r.start == 0;
            let from = r.start.max(1);
            for q in &self.qis {
                let (now, before) = (&q.codes[from..r.end], &q.codes[from - 1..r.end - 1]);
                for ((o, a), b) in opens[from - r.start..].iter_mut().zip(now).zip(before) {
                    *o |= a != b;
                }
            }
            opens.iter().enumerate().filter(|&(_, &o)| o).map(|(i, _)| (r.start + i) as u32).collect::<Vec<u32>>()
        });
        starts.concat()
    }

    /// The table with its sensitive column replaced by `s`, the same rows' values re-coded (IPA's
    /// public table re-codes them to the declared domain's order). Only the order of rows within
    /// a run of equal quasi-identifiers can change, so each run is sorted by its new codes, runs
    /// side by side on the pool, and the quasi-identifiers' columns are kept: the order the full
    /// sort of [`FrequencyTable::from_parts`] gives, without keying and sorting every row.
    pub(crate) fn with_sensitive(&self, s: SensitiveColumn) -> Result<FrequencyTable> {
        let n = self.len();
        if s.codes.len() != n {
            return Err(AnonError::column("frequency table", &s.name, "has a different number of rows"));
        }
        let starts = self.run_starts();
        let end = |i: usize| starts.get(i + 1).map_or(n, |&e| e as usize);
        let mut order: Vec<u32> = (0..n as u32).collect();
        let groups = crate::parallel::ranges(starts.len(), RUN_ROWS);
        let spans: Vec<usize> = groups.iter().map(|g| end(g.end - 1) - starts[g.start] as usize).collect();
        let parts = crate::parallel::split_mut(&mut order, spans);
        crate::parallel::run(groups.into_iter().zip(parts).collect(), |(g, part)| {
            let base = starts[g.start] as usize;
            for i in g {
                part[starts[i] as usize - base..end(i) - base].sort_unstable_by_key(|&r| (s.codes[r as usize], r));
            }
        });
        let codes = crate::parallel::gather(&s.codes, &order);
        let counts = crate::parallel::gather(&self.counts, &order);
        Ok(FrequencyTable { qis: self.qis.clone(), sensitive: Some(SensitiveColumn { codes, ..s }), counts })
    }

    /// Rows in the order of their code tuples: by packed keys when the codes fit in 128 bits
    /// ([`count::Packing`]), else by the tuples themselves. Keys, sort and permutation run on
    /// the pool (the same order whatever the threads: keys are distinct, rows numbered); a
    /// table found in order is not permuted.
    fn sort(&mut self) {
        let n = self.len();
        let mut widths: Vec<usize> = self.qis.iter().map(|q| q.hierarchy.leaf_count()).collect();
        if let Some(s) = &self.sensitive {
            widths.push(s.codes.iter().map(|&c| c as usize + 1).max().unwrap_or(0).max(s.values.len()));
        }
        let tuple =
            |r: usize| self.qis.iter().map(move |q| q.codes[r]).chain(self.sensitive.iter().map(move |s| s.codes[r]));
        let order: Vec<u32> = match count::Packing::new(&widths) {
            Some(p) => {
                let mut keyed = vec![(0u128, 0u32); n];
                crate::parallel::in_ranges(&mut keyed, 1, SORT_ROWS, |rows, part| {
                    for (k, r) in part.iter_mut().zip(rows) {
                        *k = (p.pack(tuple(r)), r as u32);
                    }
                });
                crate::parallel::sort_unstable(&mut keyed);
                keyed.into_iter().map(|(_, r)| r).collect()
            }
            None => {
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_by_cached_key(|&r| tuple(r as usize).collect::<Vec<u32>>());
                order
            }
        };
        if order.iter().enumerate().all(|(i, &r)| i == r as usize) {
            return;
        }
        for q in &mut self.qis {
            q.codes = crate::parallel::gather(&q.codes, &order);
        }
        if let Some(s) = &mut self.sensitive {
            s.codes = crate::parallel::gather(&s.codes, &order);
        }
        self.counts = crate::parallel::gather(&self.counts, &order);
    }
}

/// Rows a job of [`FrequencyTable::sort`] keys.
const SORT_ROWS: usize = 1 << 16;

/// Aggregate `table` into its frequency table over the declared quasi-identifiers (in
/// declaration order) and, when given, the sensitive column. An in-memory table is counted in
/// this process ([`count`]); any other source, or a value only the plan's error reports, by a
/// DataFusion aggregation, which a distributed session runs on its cluster.
pub async fn frequency_table(
    ctx: &SessionContext,
    table: &str,
    meta: &TableMeta,
    sensitive: Option<&str>,
) -> Result<FrequencyTable> {
    frequency_table_of(&Source::of(ctx, table, meta).await?, sensitive).await
}

/// [`frequency_table`] of a read [`Source`].
pub(crate) async fn frequency_table_of(source: &Source, sensitive: Option<&str>) -> Result<FrequencyTable> {
    let (table, meta) = (source.name(), source.meta());
    let qis = meta.quasi_identifiers();
    if qis.is_empty() {
        return Err(AnonError::table(table, "no quasi-identifiers declared"));
    }
    let declared: Option<Vec<(&str, Arc<Hierarchy>)>> =
        qis.iter().map(|q| meta.hierarchy(table, q).ok().map(|h| (*q, h.clone()))).collect();
    if let Some(declared) = declared
        && let Some(ft) = count_off_the_worker(source.provider().clone(), declared, sensitive).await?
    {
        return Ok(ft);
    }
    aggregate(source.frame()?, table, meta, &qis, sensitive).await
}

/// [`count::count_in_memory`] on a blocking thread: a second or more over a million rows, during
/// which a caller racing this future against Ctrl-C (`block_on_cancellable`) can drop it and
/// return at once (the count finishes unseen). Inline where no tokio runtime runs it.
async fn count_off_the_worker(
    provider: Arc<dyn datafusion::catalog::TableProvider>,
    declared: Vec<(&str, Arc<Hierarchy>)>,
    sensitive: Option<&str>,
) -> Result<Option<FrequencyTable>> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(count::count_in_memory(&provider, &declared, sensitive));
    }
    let owned: Vec<(String, Arc<Hierarchy>)> = declared.into_iter().map(|(n, h)| (n.to_string(), h)).collect();
    let sensitive = sensitive.map(str::to_string);
    let counted = tokio::task::spawn_blocking(move || {
        let declared: Vec<(&str, Arc<Hierarchy>)> = owned.iter().map(|(n, h)| (n.as_str(), h.clone())).collect();
        count::count_in_memory(&provider, &declared, sensitive.as_deref())
    });
    counted.await.map_err(|e| match e.try_into_panic() {
        Ok(panic) => std::panic::resume_unwind(panic),
        Err(e) => AnonError::table("frequency table", e.to_string()),
    })
}

/// The frequency table by a DataFusion `GROUP BY` over the raw columns, each distinct tuple
/// then encoded against the hierarchies.
async fn aggregate(
    df: datafusion::dataframe::DataFrame,
    table: &str,
    meta: &TableMeta,
    qis: &[&str],
    sensitive: Option<&str>,
) -> Result<FrequencyTable> {
    let mut cols: Vec<&str> = qis.to_vec();
    cols.extend(sensitive);
    for c in &cols {
        if df.schema().field_with_unqualified_name(c).is_err() {
            return Err(AnonError::column(table, c, "is not a column of the table"));
        }
    }
    let group_by = cols.iter().map(|c| ident(*c)).collect();
    let batches = df.aggregate(group_by, vec![count(lit(1)).alias("__count")])?.collect().await?;

    let mut ft_qis = Vec::with_capacity(qis.len());
    for (i, name) in qis.iter().enumerate() {
        let h = meta.hierarchy(table, name)?.clone();
        let codes = encode_column(table, name, &h, &column(&batches, i))?;
        ft_qis.push(QiColumn { name: name.to_string(), hierarchy: h, codes });
    }
    let sens = match sensitive {
        Some(name) => Some(encode_sensitive(table, name, &column(&batches, qis.len()))?),
        None => None,
    };
    let counts_col = column(&batches, cols.len());
    let counts: Vec<u64> = counts_col
        .iter()
        .flat_map(|a| a.as_primitive::<Int64Type>().values().iter().map(|&v| v as u64).collect::<Vec<_>>())
        .collect();
    FrequencyTable::from_parts(ft_qis, sens, counts)
}

/// Column `i` of every batch.
fn column(batches: &[RecordBatch], i: usize) -> Vec<ArrayRef> {
    batches.iter().map(|b| b.column(i).clone()).collect()
}

/// Map a column's values to leaf codes of its hierarchy, applying the NULL rule. An error names
/// the column and counts, never a value: the values are originals, and whoever may run SQL
/// could otherwise probe which values occur (a membership oracle).
pub(crate) fn encode_column(table: &str, name: &str, h: &Hierarchy, parts: &[ArrayRef]) -> Result<Vec<u32>> {
    let mut codes = Vec::new();
    // Values, not tuples: `parts` holds the distinct tuples of all quasi-identifiers, so one
    // unknown value occurs in many of them (one unknown ICD-9 code was reported as 336).
    let mut missing: HashSet<String> = HashSet::new();
    let mut nulls = 0usize;
    let mut not_numbers: HashSet<String> = HashSet::new();
    let mut cache: HashMap<String, Option<u32>> = HashMap::new();
    for arr in parts {
        if h.is_numeric() {
            let v = cast(arr, &DataType::Float64)?;
            let v = v.as_primitive::<Float64Type>();
            for r in 0..arr.len() {
                if arr.is_null(r) {
                    nulls += 1;
                    codes.push(0);
                } else if v.is_null(r) {
                    not_numbers.insert(text_at(arr, r));
                    codes.push(0);
                } else {
                    let x = v.value(r);
                    match h.leaf_of_value(if x == 0.0 { 0.0 } else { x }) {
                        Some(c) => codes.push(c),
                        None => {
                            missing.insert(x.to_string());
                            codes.push(0);
                        }
                    }
                }
            }
        } else {
            let v = cast(arr, &DataType::Utf8)?;
            let v = v.as_string::<i32>();
            for r in 0..arr.len() {
                if arr.is_null(r) {
                    match h.null_leaf() {
                        Some(c) => codes.push(c),
                        None => {
                            nulls += 1;
                            codes.push(0);
                        }
                    }
                    continue;
                }
                let s = v.value(r);
                let c = *cache.entry(s.to_string()).or_insert_with(|| h.leaf_of_label(s));
                match c {
                    Some(c) => codes.push(c),
                    None => {
                        missing.insert(s.to_string());
                        codes.push(0);
                    }
                }
            }
        }
    }
    if nulls > 0 {
        return Err(AnonError::column(
            table,
            name,
            format!(
                "holds NULLs in {nulls} distinct tuple(s); add a leaf '{NULL_LEAF}' to its hierarchy to generalize them, or filter them out"
            ),
        ));
    }
    if !not_numbers.is_empty() {
        return Err(AnonError::column(
            table,
            name,
            format!("holds {} distinct value(s) that are not numbers, but its hierarchy is numeric", not_numbers.len()),
        ));
    }
    let missing_count = missing.len();
    if missing_count > 0 {
        return Err(AnonError::column(
            table,
            name,
            format!(
                "{missing_count} distinct value(s) not covered by its hierarchy (not shown: they are original values)"
            ),
        ));
    }
    Ok(codes)
}

/// Value `r` of `arr` as text, to tell distinct values apart (never shown).
fn text_at(arr: &ArrayRef, r: usize) -> String {
    cast(&arr.slice(r, 1), &DataType::Utf8).ok().map(|a| a.as_string::<i32>().value(0).to_string()).unwrap_or_default()
}

/// Rows a job of [`FrequencyTable::qi_runs`] scans.
const RUN_ROWS: usize = 1 << 16;

/// Why a NULL sensitive value is refused (the NULL rule), in every method's error.
const SENSITIVE_NULLS: &str = "the sensitive attribute needs a value in every record";

/// The NULL rule for declared sensitive columns a method does not encode (`except` is the one
/// it does, if any): the release carries them, so a NULL is refused here too. One counting
/// pass per column, naming the column and the number of records.
pub(crate) async fn check_sensitive_not_null(source: &Source, except: Option<&str>) -> Result<()> {
    for name in source.meta().columns_with(crate::meta::Role::Sensitive) {
        if Some(name) == except {
            continue;
        }
        let nulls = null_count(source, name).await?;
        if nulls > 0 {
            return Err(AnonError::column(
                source.name(),
                name,
                format!("holds NULLs in {nulls} record(s); {SENSITIVE_NULLS}"),
            ));
        }
    }
    Ok(())
}

/// NULLs in column `name` of the source. An in-memory table's arrays know theirs, so no query is
/// planned and run (a millisecond of every statement on a 30,000-row table); any other source
/// is counted by one.
async fn null_count(source: &Source, name: &str) -> Result<usize> {
    if let Some(mem) = source.provider().downcast_ref::<datafusion::datasource::MemTable>() {
        let mut nulls = 0;
        for part in &mem.batches {
            for batch in part.read().await.iter() {
                let column =
                    batch.column_by_name(name).ok_or_else(|| AnonError::column(source.name(), name, "not found"))?;
                nulls += column.logical_null_count();
            }
        }
        return Ok(nulls);
    }
    Ok(source.frame()?.filter(ident(name).is_null())?.count().await?)
}

fn encode_sensitive(table: &str, name: &str, parts: &[ArrayRef]) -> Result<SensitiveColumn> {
    let mut raw: Vec<String> = Vec::new();
    for arr in parts {
        let v = sensitive_text(arr)?;
        let v = v.as_string::<i32>();
        for r in 0..arr.len() {
            if arr.is_null(r) {
                return Err(AnonError::column(table, name, format!("holds NULLs; {SENSITIVE_NULLS}")));
            }
            raw.push(v.value(r).to_string());
        }
    }
    let values: Vec<String> = raw.iter().cloned().collect::<BTreeSet<_>>().into_iter().collect();
    let index: HashMap<&str, u32> = values.iter().enumerate().map(|(i, v)| (v.as_str(), i as u32)).collect();
    let codes = raw.iter().map(|v| index[v.as_str()]).collect();
    Ok(SensitiveColumn { name: name.to_string(), values, codes })
}

/// A sensitive column as the text its values are told apart by (both counts code it so).
pub(crate) fn sensitive_text(arr: &ArrayRef) -> Result<ArrayRef> {
    Ok(cast(&signed_zero_as_zero(arr)?, &DataType::Utf8)?)
}

/// A float column with every -0.0 made 0.0 (adding 0.0 does it, IEEE 754; NaN and NULL stay);
/// any other column as it is. Sensitive values are told apart by their text, where -0.0 and 0.0
/// read "-0" and "0": one number would count as two distinct values (overstating distinct l)
/// and be published as two.
fn signed_zero_as_zero(arr: &ArrayRef) -> Result<ArrayRef> {
    let float = match arr.data_type() {
        DataType::Dictionary(_, values) => values.as_ref().clone(),
        ty => ty.clone(),
    };
    if !float.is_floating() {
        return Ok(arr.clone());
    }
    let zero = cast(&(Arc::new(datafusion::arrow::array::Int8Array::from(vec![0])) as ArrayRef), &float)?;
    let arr = cast(arr, &float)?;
    Ok(datafusion::arrow::compute::kernels::numeric::add(&arr, &datafusion::arrow::array::Scalar::new(zero))?)
}

/// Numbers in labels: defined beside the label parser (`hierarchy::numeric`), which the query
/// harness shares without the encoder.
pub(crate) use crate::hierarchy::format_number;

/// Check that `h` covers every value in `parts` (one column's values, any type), applying the
/// NULL rule: the error names the column and how many values are missing.
pub(crate) fn check_coverage(table: &str, name: &str, h: &Hierarchy, parts: &[ArrayRef]) -> Result<()> {
    encode_column(table, name, h, parts).map(|_| ())
}

#[cfg(test)]
mod tests {
    /// A sensitive column re-coded in another order (values reversed, as a declared domain may
    /// list them): the runs re-sorted in place are the table the full sort gives, on pools of 1
    /// and 3 threads.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_re_coded_sensitive_column_sorts_as_the_full_sort() {
        let source = crate::methods::contract::testing::nps();
        let ft = super::frequency_table_of(&source, Some("disease")).await.unwrap();
        let s = ft.sensitive.as_ref().unwrap();
        let width = s.values.len() as u32;
        let reversed = super::SensitiveColumn {
            name: s.name.clone(),
            values: s.values.iter().rev().cloned().collect(),
            codes: s.codes.iter().map(|&c| width - 1 - c).collect(),
        };
        let full =
            super::FrequencyTable::from_parts(ft.qis.clone(), Some(reversed.clone()), ft.counts.clone()).unwrap();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let runs = pool.install(|| ft.with_sensitive(reversed.clone())).unwrap();
            assert_eq!(runs.counts, full.counts, "{threads} threads");
            assert_eq!(runs.sensitive.as_ref().unwrap().codes, full.sensitive.as_ref().unwrap().codes);
            assert!(runs.qis.iter().zip(&full.qis).all(|(a, b)| a.codes == b.codes));
        }
        assert_ne!(full.counts, ft.counts, "the re-coding moves rows");
    }

    /// Runs found column by column in ranges of rows open exactly where a quasi-identifier's
    /// code differs from the row before, also at the ranges' seams (a table of more than two
    /// ranges: the NPS-like table tiled, so that equal tuples sit side by side), on pools of 1
    /// and 3 threads.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_open_where_a_code_changes_across_ranges() {
        use super::{FrequencyTable, QiColumn, RUN_ROWS, SensitiveColumn};
        let source = crate::methods::contract::testing::nps();
        let ft = super::frequency_table_of(&source, Some("disease")).await.unwrap();
        let tiles = (3 * RUN_ROWS).div_ceil(ft.len());
        let qis = ft.qis.iter().map(|q| QiColumn { codes: q.codes.repeat(tiles), ..q.clone() }).collect();
        let s = ft.sensitive.clone().map(|s| SensitiveColumn { codes: s.codes.repeat(tiles), ..s });
        let big = FrequencyTable::from_parts(qis, s, ft.counts.repeat(tiles)).unwrap();
        assert!(big.len() > 2 * RUN_ROWS);
        let opens = |r: usize| r == 0 || big.qis.iter().any(|q| q.codes[r] != q.codes[r - 1]);
        let expected: Vec<u32> = (0..big.len()).filter(|&r| opens(r)).map(|r| r as u32).collect();
        assert!(expected.len() < big.len(), "tiled tuples make runs longer than a row");
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| big.run_starts()), expected, "{threads} threads");
        }
    }

    /// A table counted with the sensitive column, read without it, is the table counted without
    /// it: the same tuples in the same order with the same counts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_table_without_its_sensitive_column_is_the_one_counted_without() {
        let source = crate::methods::contract::testing::nps();
        let with = super::frequency_table_of(&source, Some("disease")).await.unwrap();
        let without = super::frequency_table_of(&source, None).await.unwrap();
        let read = with.without_sensitive();
        assert!(read.sensitive.is_none());
        assert!(with.len() > without.len(), "disease splits some tuples");
        assert_eq!(read.counts, without.counts);
        for (a, b) in read.qis.iter().zip(&without.qis) {
            assert_eq!((&a.name, &a.codes), (&b.name, &b.codes));
        }
    }
}
