//! The frequency table counted in this process, for sources whose rows it already holds.
//!
//! A DataFusion `GROUP BY` over the raw columns hashes and compares strings for every record,
//! then every distinct tuple is encoded against the hierarchies and sorted: 14 ms on Adult,
//! 83–133 ms on Adult x10 and seconds at 10^6 records, more than the search it feeds. Here each
//! column is encoded to leaf codes once per slice of rows (an integer lookup of the value, the
//! hierarchy consulted once per distinct value), the codes are packed into one key per record
//! ([`Packing`]: 64 bits where they fit, else 128; the first column in the highest bits, so
//! sorting keys sorts tuples), and each job's keys are sorted and counted, then the jobs' runs
//! merged, on all cores.
//!
//! Only in-memory tables ([`MemTable`]) take this path: their rows are in this process
//! already, so counting them here moves no data. Every other source (files, views, a Ballista
//! cluster's tables) is aggregated by the DataFusion plan, which a distributed session runs on
//! its executors. A value this path cannot encode (a NULL without a `NULL` leaf, a value the
//! hierarchy does not cover, a non-number under a numeric hierarchy) sends the call to the plan
//! too, whose error names the column and counts: both paths give the same table or the same
//! error.

use super::hash::FastMap;
use super::{FrequencyTable, QiColumn, SensitiveColumn};
use crate::hierarchy::Hierarchy;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

/// Rows of a slice: the table's batches are cut into slices of at most this many rows, and
/// consecutive slices make one job of [`Count::table`] (one sorted run) of up to
/// [`job_rows`].
const SLICE_ROWS: usize = 16_384;

/// Rows a job of [`Count::table`] sorts into one run, at most: a table has about two jobs per
/// thread, each of at least [`SLICE_ROWS`] rows (so two cores share a 30,000-row table) and
/// at most 65,536 (whose 64-bit keys sort in a core's cache). A table's batches are often
/// smaller than a slice (8,192 rows as DataFusion writes them), and one run per batch left
/// Adult ×10 with 37 runs of mostly distinct tuples to merge, a sixth of its statement.
fn job_rows(rows: usize) -> usize {
    (rows / (2 * crate::parallel::threads())).clamp(SLICE_ROWS, 4 * SLICE_ROWS)
}

/// Bit fields of a packed tuple: column `j` (of codes below `widths[j]`) at `shifts[j]`, the
/// first column highest, so that keys compare as the tuples do.
pub(super) struct Packing {
    shifts: Vec<u32>,
    masks: Vec<u128>,
    /// Bits all fields take together.
    bits: u32,
}

impl Packing {
    /// `None` when the fields need more than 128 bits.
    pub(super) fn new(widths: &[usize]) -> Option<Packing> {
        let bits: Vec<u32> = widths.iter().map(|&w| usize::BITS - w.saturating_sub(1).leading_zeros()).collect();
        let total: u32 = bits.iter().sum();
        if total > 128 {
            return None;
        }
        let mut shifts = Vec::with_capacity(bits.len());
        let mut used = 0;
        for &b in &bits {
            used += b;
            shifts.push(total - used);
        }
        let masks = bits.iter().map(|&b| if b == 0 { 0 } else { u128::MAX >> (128 - b) }).collect();
        Some(Packing { shifts, masks, bits: total })
    }

    /// Field `j` of a key of either width.
    fn field<K: Key>(&self, key: K, j: usize) -> u32 {
        key.field(self.shifts[j], self.masks[j])
    }

    /// Field `j` of every key set to its code in `codes` (the keys' field `j` is zero). One
    /// pass per column over the slice, its shift fixed: the compiler vectorizes it, where
    /// setting each field as its value was coded cost as much again as the lookups.
    fn put_codes<K: Key>(&self, keys: &mut [K], j: usize, codes: &[u32]) {
        let shift = self.shifts[j];
        for (key, &c) in keys.iter_mut().zip(codes) {
            *key = key.with(c, shift);
        }
    }

    fn put(&self, key: &mut u128, j: usize, code: u32) {
        *key |= (code as u128) << self.shifts[j];
    }

    /// The key of a whole tuple (one code per field, in order).
    pub(super) fn pack(&self, codes: impl Iterator<Item = u32>) -> u128 {
        let mut key = 0;
        for (j, c) in codes.enumerate() {
            self.put(&mut key, j, c);
        }
        key
    }
}

/// A packed tuple ([`Packing`]): `u64` when the fields fit in 64 bits (Adult's 8 columns take
/// 31), so slices sort and merge half the bytes; `u128` otherwise.
trait Key: Copy + Ord + Default + Send + Sync {
    /// This key with `code` set at `shift` (those bits zero before).
    fn with(self, code: u32, shift: u32) -> Self;
    /// The field at `shift` under `mask`.
    fn field(self, shift: u32, mask: u128) -> u32;
}

/// [`Key`] for an unsigned integer type (a field's mask fits it: the fields fit the key).
macro_rules! key {
    ($t:ty) => {
        impl Key for $t {
            #[inline]
            fn with(self, code: u32, shift: u32) -> Self {
                self | (code as $t) << shift
            }
            #[inline]
            fn field(self, shift: u32, mask: u128) -> u32 {
                ((self >> shift) & mask as $t) as u32
            }
        }
    };
}
key!(u64);
key!(u128);

/// The frequency table of an in-memory `provider` (see the module); `None` when the source is
/// not one, is being written, or holds a value only the plan's error can report.
pub(super) fn count_in_memory(
    provider: &Arc<dyn TableProvider>,
    qis: &[(&str, Arc<Hierarchy>)],
    sensitive: Option<&str>,
) -> Option<FrequencyTable> {
    let mem = provider.downcast_ref::<MemTable>()?;
    let schema = provider.schema();
    let qi_cols: Vec<usize> = qis.iter().map(|(n, _)| schema.index_of(n).ok()).collect::<Option<_>>()?;
    let s_col = match sensitive {
        Some(n) => Some(schema.index_of(n).ok()?),
        None => None,
    };
    let slices = slices(mem)?;

    // The sensitive column's distinct values, sorted: a code indexes them (as the plan's
    // encoding does). Each slice codes its values in the order met (one hash lookup a row),
    // then the few distinct values are sorted once and each slice's codes mapped onto theirs.
    let s_arrays: Vec<ArrayRef> = match s_col {
        Some(c) => slices.iter().map(|b| super::sensitive_text(b.column(c)).ok()).collect::<Option<_>>()?,
        None => Vec::new(),
    };
    let s_strings: Vec<&StringArray> = s_arrays.iter().map(|a| a.as_string::<i32>()).collect();
    let local: Vec<(Vec<u32>, Vec<&str>)> =
        crate::parallel::map(&s_strings, |a| met_codes(a)).into_iter().collect::<Option<_>>()?;
    let values: Vec<&str> =
        local.iter().flat_map(|(_, met)| met.iter().copied()).collect::<BTreeSet<&str>>().into_iter().collect();
    let s_index: FastMap<&str, u32> = values.iter().enumerate().map(|(i, v)| (*v, i as u32)).collect();
    // Per slice: its code of a value met -> the value's code (applied in the slice's job).
    let s_global: Vec<Vec<u32>> = local.iter().map(|(_, met)| met.iter().map(|v| s_index[v]).collect()).collect();

    let mut widths: Vec<usize> = qis.iter().map(|(_, h)| h.leaf_count()).collect();
    if s_col.is_some() {
        widths.push(values.len());
    }
    let packing = Packing::new(&widths)?;
    let integer_leaves: Vec<Option<IntegerLeaves>> = qis.iter().map(|(_, h)| IntegerLeaves::new(h)).collect();
    let count = Count {
        slices: &slices,
        qi_cols: &qi_cols,
        qis,
        integer_leaves: &integer_leaves,
        local: &local,
        s_global: &s_global,
        packing: &packing,
    };
    let (columns, counts) = if packing.bits <= u64::BITS { count.table::<u64>()? } else { count.table::<u128>()? };
    let mut columns = columns.into_iter();
    let ft_qis = qis
        .iter()
        .map(|(name, h)| QiColumn {
            name: name.to_string(),
            hierarchy: h.clone(),
            codes: columns.next().unwrap_or_default(),
        })
        .collect();
    let sens = sensitive.map(|name| SensitiveColumn {
        name: name.to_string(),
        values: values.iter().map(|v| v.to_string()).collect(),
        codes: columns.next().unwrap_or_default(),
    });
    Some(FrequencyTable { qis: ft_qis, sensitive: sens, counts })
}

/// What [`count_in_memory`] counts, once its columns' codings are known.
struct Count<'a> {
    slices: &'a [RecordBatch],
    qi_cols: &'a [usize],
    qis: &'a [(&'a str, Arc<Hierarchy>)],
    integer_leaves: &'a [Option<IntegerLeaves>],
    /// Each slice's codes of the sensitive column, in the order its values were met (empty
    /// without one), and ...
    local: &'a [(Vec<u32>, Vec<&'a str>)],
    /// ... each slice's map from those codes to the column's codes.
    s_global: &'a [Vec<u32>],
    packing: &'a Packing,
}

impl Count<'_> {
    /// The code columns (quasi-identifiers, then the sensitive one) and counts of the distinct
    /// tuples, sorted: each slice's rows coded column by column into one scratch buffer, packed
    /// into keys of type `K`, sorted and counted, on the pool; then the slices' runs merged.
    fn table<K: Key>(&self) -> Option<(Vec<Vec<u32>>, Vec<u64>)> {
        let fields = self.qis.len() + usize::from(!self.local.is_empty());
        let jobs = jobs(self.slices, job_rows(self.slices.iter().map(RecordBatch::num_rows).sum()));
        let runs: Vec<Option<Vec<(K, u64)>>> = crate::parallel::map(&jobs, |slices| {
            let rows = || self.slices[slices.clone()].iter().map(RecordBatch::num_rows);
            // Keys appended slice by slice, and one slice's scratch codes: neither is zeroed
            // first (the job's keys were written twice).
            let mut keys = Vec::with_capacity(rows().sum());
            let mut codes = vec![0u32; rows().max().unwrap_or(0)];
            for i in slices.clone() {
                self.code_slice(i, &mut keys, &mut codes[..self.slices[i].num_rows()])?;
            }
            sort_keys(&mut keys, self.packing.bits);
            Some(run_lengths(&keys))
        });
        let pieces = merge_runs(runs.into_iter().collect::<Option<Vec<_>>>()?);
        Some(unpack(&pieces, self.packing, fields))
    }

    /// Slice `i`'s keys appended to `keys`: its columns coded one after the other into `codes`
    /// (as scratch, one code a row) and packed, the first column's codes making the keys.
    fn code_slice<K: Key>(&self, i: usize, keys: &mut Vec<K>, codes: &mut [u32]) -> Option<()> {
        let (b, start) = (&self.slices[i], keys.len());
        let put = |keys: &mut Vec<K>, j: usize, codes: &[u32]| {
            if keys.len() == start {
                keys.extend(codes.iter().map(|&c| K::default().with(c, self.packing.shifts[j])));
            } else {
                self.packing.put_codes(&mut keys[start..], j, codes);
            }
        };
        for (j, (&c, (_, h))) in self.qi_cols.iter().zip(self.qis).enumerate() {
            encode_into(codes, h, self.integer_leaves[j].as_ref(), b.column(c))?;
            put(keys, j, codes);
        }
        if let (Some((met, _)), Some(global)) = (self.local.get(i), self.s_global.get(i)) {
            for (code, &m) in codes.iter_mut().zip(met) {
                *code = global[m as usize];
            }
            put(keys, self.qis.len(), codes);
        }
        keys.resize(start + codes.len(), K::default());
        Some(())
    }
}

/// Consecutive slices grouped into jobs of at most `rows` rows (a larger slice alone).
fn jobs(slices: &[RecordBatch], rows: usize) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut held = 0;
    for (i, b) in slices.iter().enumerate() {
        match out.last_mut() {
            Some(job) if held + b.num_rows() <= rows => {
                job.end = i + 1;
                held += b.num_rows();
            }
            _ => {
                out.push(i..i + 1);
                held = b.num_rows();
            }
        }
    }
    out
}

/// The merged tuples, piece after piece, as `fields` code columns and their counts. Each piece
/// is unpacked by one job on the pool into its own part of every column, so the table is never
/// laid end to end as tuples first (a serial copy of every tuple, faulting in fresh memory on
/// one core) nor read once per column.
fn unpack<K: Key>(pieces: &[Vec<(K, u64)>], packing: &Packing, fields: usize) -> (Vec<Vec<u32>>, Vec<u64>) {
    let lens = || pieces.iter().map(Vec::len);
    let n = lens().sum();
    let mut columns: Vec<Vec<u32>> = (0..fields).map(|_| vec![0u32; n]).collect();
    let mut counts = vec![0u64; n];
    let mut parts: Vec<_> = columns.iter_mut().map(|c| crate::parallel::split_mut(c, lens()).into_iter()).collect();
    let jobs: Vec<_> = pieces
        .iter()
        .zip(crate::parallel::split_mut(&mut counts, lens()))
        .map(|(piece, count)| (piece, count, parts.iter_mut().map(|p| p.next().expect("a part a piece")).collect()))
        .collect();
    crate::parallel::run(jobs, |(piece, count, mut codes): (_, _, Vec<&mut [u32]>)| {
        for (i, &(key, n)) in piece.iter().enumerate() {
            count[i] = n;
            for (j, c) in codes.iter_mut().enumerate() {
                c[i] = packing.field(key, j);
            }
        }
    });
    (columns, counts)
}

/// Bits a pass of [`sort_keys`]' radix sort orders by: its 2,048 counters (16 KB) stay in a
/// core's first-level cache, and 31-bit keys (Adult's eight columns) take three passes.
const DIGIT_BITS: u32 = 11;

/// `keys` (of fields taking `bits` bits together) sorted: by a least-significant-digit radix
/// sort when that takes at most four passes, else by `sort_unstable`. On a job of 60,000
/// 31-bit keys with repeats (Adult ×10) the radix sort took 8.5 ns a key on this machine, the
/// comparison sort 18.6: a comparison sort does log2(n) ≈ 16 passes of unpredictable branches,
/// the radix sort one pass counting every digit, then one scatter a digit. Past four passes
/// (keys of more than 44 bits) the passes cost about what the comparisons do.
fn sort_keys<K: Key>(keys: &mut Vec<K>, bits: u32) {
    let passes = bits.div_ceil(DIGIT_BITS) as usize;
    if passes > 4 || keys.len() < 1 << DIGIT_BITS {
        keys.sort_unstable();
        return;
    }
    const BUCKETS: usize = 1 << DIGIT_BITS;
    let mask = (BUCKETS - 1) as u128;
    let digit = |k: K, p: usize| k.field(p as u32 * DIGIT_BITS, mask) as usize;
    let mut counts = vec![[0usize; BUCKETS]; passes];
    for &k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[digit(k, p)] += 1;
        }
    }
    let mut from = std::mem::take(keys);
    // Filled by the first pass that scatters, not zeroed first (half a job's key bytes again).
    let mut to: Vec<K> = Vec::with_capacity(from.len());
    for (p, c) in counts.iter_mut().enumerate() {
        // A digit every key shares orders nothing.
        if c.contains(&from.len()) {
            continue;
        }
        let mut start = 0;
        for n in c.iter_mut() {
            start += std::mem::replace(n, start);
        }
        if to.is_empty() {
            let spare = &mut to.spare_capacity_mut()[..from.len()];
            for &k in &from {
                let at = &mut c[digit(k, p)];
                spare[*at].write(k);
                *at += 1;
            }
            // SAFETY: the counts' running sums start each digit's keys where the smaller
            // digits' end, and every key was counted once, so the keys went to distinct places
            // covering 0..from.len(): all of them are written.
            unsafe { to.set_len(from.len()) };
        } else {
            for &k in &from {
                let at = &mut c[digit(k, p)];
                to[*at] = k;
                *at += 1;
            }
        }
        std::mem::swap(&mut from, &mut to);
    }
    *keys = from;
}

/// Sorted keys as (key, records) runs. Where each run starts is written first, without a
/// branch a key: on Adult ×10 about a third of the keys start a run, in no pattern, and a
/// branch on it was mispredicted often.
fn run_lengths<K: Key>(keys: &[K]) -> Vec<(K, u64)> {
    if keys.is_empty() {
        return Vec::new();
    }
    let mut starts = vec![0usize; keys.len() + 1];
    let mut runs = 1;
    for (i, pair) in keys.windows(2).enumerate() {
        starts[runs] = i + 1;
        runs += usize::from(pair[0] != pair[1]);
    }
    starts[runs] = keys.len();
    starts[..=runs].windows(2).map(|s| (keys[s[0]], (s[1] - s[0]) as u64)).collect()
}

/// Sorted runs merged, counts of equal keys added: one sorted list, returned in the pieces of
/// its key ranges (laid end to end they are the list; [`unpack`] reads them in place). Sorting
/// each slice and merging beats one hash table when most tuples are distinct (10^6 records of
/// 12–15 attributes), and gives the sorted order the table needs. The key space is cut into ranges at keys sampled
/// from the runs, and each range's pieces of every run are merged by one job on the pool, so
/// the last merges are not one serial pass over all the table's tuples (a merge tree's top
/// levels have one or two jobs); the list is the same however it is cut.
fn merge_runs<K: Key>(runs: Vec<Vec<(K, u64)>>) -> Vec<Vec<(K, u64)>> {
    let total: usize = runs.iter().map(Vec::len).sum();
    let splitters = splitters(&runs, (4 * crate::parallel::threads()).min(total / MERGE_ROWS));
    let ranges: Vec<usize> = (0..=splitters.len()).collect();
    crate::parallel::map(&ranges, |&r| {
        let (lo, hi) = (r.checked_sub(1).map(|i| splitters[i]), splitters.get(r).copied());
        let pieces = runs.iter().map(|run| {
            let from = lo.map_or(0, |lo| run.partition_point(|e| e.0 < lo));
            let to = hi.map_or(run.len(), |hi| run.partition_point(|e| e.0 < hi));
            &run[from..to]
        });
        merge_pieces(pieces.filter(|p| !p.is_empty()).collect())
    })
}

/// Tuples below which [`merge_runs`] cuts no more ranges (a job's fixed cost against its work).
const MERGE_ROWS: usize = 1 << 14;

/// Up to `parts − 1` increasing keys cutting the runs' keys into ranges of about equal size:
/// every run sampled in proportion to its length, sorted, then taken at even spacing. Run `r`'s
/// samples sit at positions shifted by its own fraction of a step (the golden ratio's multiples),
/// so when there are more runs than samples wanted (one sample a run), the runs' samples still
/// spread over their quantiles; sampled at their first key alone, as before, every cut fell
/// among the smallest keys, and one job merged nearly the whole table (a single core for about
/// a third of a second at 5 M rows).
fn splitters<K: Key>(runs: &[Vec<(K, u64)>], parts: usize) -> Vec<K> {
    if parts < 2 {
        return Vec::new();
    }
    let total: usize = runs.iter().map(Vec::len).sum();
    let wanted = 32 * parts;
    let mut sample: Vec<K> = runs
        .iter()
        .enumerate()
        .filter(|(_, run)| !run.is_empty())
        .flat_map(|(r, run)| {
            let n = (run.len() * wanted).div_ceil(total.max(1)).min(run.len());
            let shift = ((r as f64 + 1.0) * 0.618_033_988_749_894_9).fract();
            (0..n).map(move |i| run[(((i as f64 + shift) * run.len() as f64 / n as f64) as usize).min(run.len() - 1)].0)
        })
        .collect();
    sample.sort_unstable();
    let mut cuts: Vec<K> = (1..parts).filter_map(|i| sample.get(i * sample.len() / parts).copied()).collect();
    cuts.dedup();
    cuts
}

/// Sorted runs merged into one (serially: one job of [`merge_runs`]): laid end to end in one
/// buffer and sorted by a stable sort, which finds the runs already sorted and merges them
/// (Rust's driftsort), then equal keys' counts added in place. One buffer and the sort's
/// scratch, where merging two runs at a time wrote every tuple once per level into memory
/// freshly allocated (and faulted in by the kernel) at each of ~9 levels. (A radix sort of
/// 64-bit keys, here and for each slice, measured no faster on Adult ×10.)
fn merge_pieces<K: Key>(pieces: Vec<&[(K, u64)]>) -> Vec<(K, u64)> {
    if let [one] = pieces[..] {
        return one.to_vec();
    }
    let mut all = pieces.concat();
    all.sort_by_key(|e| e.0);
    all.dedup_by(|next, kept| {
        let same = next.0 == kept.0;
        if same {
            kept.1 += next.1;
        }
        same
    });
    all
}

/// A numeric hierarchy whose leaves are integers in a range of at most [`IntegerLeaves::SPAN`]
/// values: the leaf of an integer is one array read instead of a binary search.
struct IntegerLeaves {
    min: i64,
    /// Leaf of `min + i`, or `u32::MAX` for an integer that is no leaf.
    leaf: Vec<u32>,
}

impl IntegerLeaves {
    const SPAN: usize = 1 << 20;

    fn new(h: &Hierarchy) -> Option<IntegerLeaves> {
        let vs = h.leaf_values();
        if !h.is_numeric() || vs.iter().any(|v| v.fract() != 0.0 || v.abs() > 1e15) {
            return None;
        }
        let (min, max) = (*vs.first()? as i64, *vs.last()? as i64);
        let span = usize::try_from(max - min).ok()?.checked_add(1).filter(|&s| s <= Self::SPAN)?;
        let mut leaf = vec![u32::MAX; span];
        for (code, &v) in vs.iter().enumerate() {
            leaf[(v as i64 - min) as usize] = code as u32;
        }
        Some(IntegerLeaves { min, leaf })
    }

    fn get(&self, v: i64) -> Option<u32> {
        let i = usize::try_from(v.checked_sub(self.min)?).ok()?;
        self.leaf.get(i).copied().filter(|&c| c != u32::MAX)
    }
}

/// The table's batches cut into slices of at most [`SLICE_ROWS`] rows (zero-copy); `None`
/// while a writer holds a partition.
fn slices(mem: &MemTable) -> Option<Vec<RecordBatch>> {
    let mut out = Vec::new();
    for part in &mem.batches {
        let batches = part.try_read().ok()?;
        for b in batches.iter() {
            let mut at = 0;
            while at < b.num_rows() {
                let len = SLICE_ROWS.min(b.num_rows() - at);
                out.push(b.slice(at, len));
                at += len;
            }
        }
    }
    Some(out)
}

/// The code of each value of `a` in the order its distinct values are first met, and those
/// values; `None` when it holds a NULL (which only the plan's error reports).
fn met_codes(a: &StringArray) -> Option<(Vec<u32>, Vec<&str>)> {
    if a.null_count() > 0 {
        return None;
    }
    let (mut labels, mut met, mut codes) = (Labels::default(), Vec::new(), vec![0; a.len()]);
    labels.code_rows(a, &mut codes, |v| {
        met.push(v);
        Some(met.len() as u32 - 1)
    })?;
    Some((codes, met))
}

/// A column as `Utf8` (a no-op when it is one).
fn utf8(a: &ArrayRef) -> Option<ArrayRef> {
    if a.data_type() == &DataType::Utf8 { Some(a.clone()) } else { cast(a, &DataType::Utf8).ok() }
}

/// Column `a`'s leaf codes into `codes`, applying the NULL rule as [`super::encode_column`]
/// does; `None` on any value it would reject.
fn encode_into(codes: &mut [u32], h: &Hierarchy, integers: Option<&IntegerLeaves>, a: &ArrayRef) -> Option<()> {
    if h.is_numeric() {
        if a.null_count() > 0 {
            return None;
        }
        if let (Some(ints), Some(v)) = (integers, a.as_primitive_opt::<Int64Type>()) {
            for (code, &x) in codes.iter_mut().zip(v.values().iter()) {
                *code = ints.get(x)?;
            }
            return Some(());
        }
        let v = cast(a, &DataType::Float64).ok()?;
        let v = v.as_primitive::<Float64Type>();
        if v.null_count() > 0 {
            return None;
        }
        for (code, &x) in codes.iter_mut().zip(v.values().iter()) {
            *code = h.leaf_of_value(if x == 0.0 { 0.0 } else { x })?;
        }
    } else {
        let v = utf8(a)?;
        let v = v.as_string::<i32>();
        let null_leaf = h.null_leaf();
        let mut labels = Labels::default();
        if v.null_count() == 0 {
            return labels.code_rows(v, codes, |s| h.leaf_of_label(s));
        }
        for (r, code) in codes.iter_mut().enumerate() {
            *code = if v.is_null(r) { null_leaf? } else { labels.code_of(v, r, |s| h.leaf_of_label(s))? };
        }
    }
    Some(())
}

/// Codes of the labels met so far (a hierarchy's leaf codes here, risk_report's dense codes in
/// `crate::risk::read`). A label of up to [`SHORT`] − 1 bytes is looked up as four integers (its
/// bytes and length), so most lookups hash and compare no string.
#[derive(Default)]
pub(crate) struct Labels<'s> {
    short: ShortCodes,
    long: FastMap<&'s str, u32>,
}

/// Labels shorter than this many bytes are [`ShortKey`]s. 32, not 16: Adult's most common
/// marital status ("Married-civ-spouse") and a quarter of its occupations are 16–21 bytes, and
/// a column mixing both lengths took the string path, and a mispredicted branch, for each of
/// them.
const SHORT: usize = 32;

/// A label of fewer than [`SHORT`] bytes as four integers: its bytes (little-endian, zeros past
/// its end), with its length in the last one's top byte (free: that word holds at most 7 of
/// the label's bytes).
type ShortKey = [u64; 4];

/// The [`ShortKey`] of a label of `len` < [`SHORT`] bytes that starts `bytes` (what follows it
/// there is ignored). The masks come from a table, not from shifts by `len`: a shift by a
/// variable amount is several instructions and a conditional move, and it was a third of a
/// lookup's time.
#[inline]
fn short_key(bytes: &[u8; SHORT], len: usize) -> ShortKey {
    let keep = &KEEP[len % SHORT];
    let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes")) & keep[i];
    [word(0), word(1), word(2), word(3) | ((len as u64) << 56)]
}

/// For each length below [`SHORT`], the masks keeping that many bytes of four words.
static KEEP: [[u64; 4]; SHORT] = {
    let mut keep = [[0; 4]; SHORT];
    let mut len = 1;
    while len < SHORT {
        let mut w = 0;
        while w < 4 {
            keep[len][w] = match len.saturating_sub(8 * w) {
                0 => 0,
                n if n >= 8 => u64::MAX,
                n => u64::MAX >> (64 - 8 * n),
            };
            w += 1;
        }
        len += 1;
    }
    keep
};

/// Short labels' integers and their codes, in one open-addressed table probed linearly. A
/// column holds few distinct labels, so the table stays in cache, at most a quarter full, and
/// most labels sit in the slot their hash names: a lookup is one hash, one slot read and one
/// comparison, with the probing out of line (a general hash map's probing cost about as much
/// again; a third of Adult's statement went to these lookups).
struct ShortCodes {
    /// Labels' integers by slot; [`ShortCodes::FREE`] marks a free slot.
    keys: Vec<ShortKey>,
    /// The code of the label in the same slot. Apart from the keys, so that a slot's key is 32
    /// bytes, not 40 padded to 48, and two sit in a cache line.
    codes: Vec<u32>,
    /// 64 − log2(slots): a hash's top bits name a slot (a multiplicative hash's best bits; its
    /// middle bits depend only on a label's first bytes, which many labels share).
    shift: u32,
    len: usize,
}

impl Default for ShortCodes {
    fn default() -> Self {
        ShortCodes { keys: vec![Self::FREE; 64], codes: vec![0; 64], shift: 64 - 6, len: 0 }
    }
}

impl ShortCodes {
    /// No label's integers: its length byte would say 255.
    const FREE: ShortKey = [0, 0, 0, u64::MAX];

    /// The slot `key` hashes to.
    #[inline]
    fn home(&self, key: &ShortKey) -> usize {
        let mixed = key[0] ^ key[1].rotate_left(29) ^ key[2].rotate_left(43) ^ key[3];
        (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The code of `key`, if held. The home slot's key is compared in one test (the four
    /// words' differences or-ed), not word by word.
    #[inline]
    fn get(&self, key: &ShortKey) -> Option<u32> {
        let i = self.home(key) & (self.keys.len() - 1);
        let k = &self.keys[i];
        if (k[0] ^ key[0]) | (k[1] ^ key[1]) | (k[2] ^ key[2]) | (k[3] ^ key[3]) == 0 {
            Some(self.codes[i])
        } else {
            self.probe(key)
        }
    }

    /// [`ShortCodes::get`] past the home slot.
    #[cold]
    #[inline(never)]
    fn probe(&self, key: &ShortKey) -> Option<u32> {
        let i = self.slot(key);
        (self.keys[i] == *key).then(|| self.codes[i])
    }

    /// The slot holding `key`, or the free slot where it belongs.
    fn slot(&self, key: &ShortKey) -> usize {
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        while self.keys[i] != *key && self.keys[i] != Self::FREE {
            i = (i + 1) & mask;
        }
        i
    }

    /// Slots up to which a label whose home slot is taken doubles the table rather than
    /// sitting past it (32 KiB of keys, a core's first-level cache).
    const SPREAD_SLOTS: usize = 1 << 10;

    /// Keep `code` for `key` (not present). At most a quarter of the slots are taken, and up to
    /// [`ShortCodes::SPREAD_SLOTS`] the table doubles until the label has its home slot: a
    /// label past its home is looked up out of line after a mispredicted test, and at a
    /// quarter full a quarter of Adult's education rows and a twelfth of its workclass rows
    /// were.
    fn insert(&mut self, key: ShortKey, code: u32) {
        while 4 * (self.len + 1) > self.keys.len()
            || (self.keys.len() < Self::SPREAD_SLOTS && self.keys[self.home(&key)] != Self::FREE)
        {
            self.grow();
        }
        let i = self.slot(&key);
        (self.keys[i], self.codes[i]) = (key, code);
        self.len += 1;
    }

    /// The table with twice the slots, every label placed again.
    fn grow(&mut self) {
        let slots = 2 * self.keys.len();
        let old_keys = std::mem::replace(&mut self.keys, vec![Self::FREE; slots]);
        let old_codes = std::mem::replace(&mut self.codes, vec![0; slots]);
        self.shift -= 1;
        for (k, c) in old_keys.into_iter().zip(old_codes).filter(|&(k, _)| k != Self::FREE) {
            let i = self.slot(&k);
            (self.keys[i], self.codes[i]) = (k, c);
        }
    }
}

/// Codes the rows of `rows` whose labels `short` holds, into `codes`, up to the first row
/// it does not hold (a short label met for the first time, or a label of [`SHORT`] bytes or
/// more), whose index it returns (`rows.end` when there is none). Every row's 32 bytes from
/// its start must lie in `data`. Out of line and reading a table it does not change, the loop
/// keeps its state in registers: inlined in [`Labels::code_rows`] beside the insertion and the
/// long labels' path, it spilled it to the stack.
#[inline(never)]
fn code_met(short: &ShortCodes, offsets: &[i32], data: &[u8], codes: &mut [u32], rows: Range<usize>) -> usize {
    let ends = offsets[rows.start..=rows.end].windows(2);
    for ((r, code), ends) in codes[rows.clone()].iter_mut().enumerate().zip(ends) {
        let (start, len) = (ends[0] as usize, (ends[1] - ends[0]) as usize);
        if len >= SHORT {
            return rows.start + r;
        }
        match short.get(&short_key(data[start..start + SHORT].try_into().expect("32 bytes"), len)) {
            Some(c) => *code = c,
            None => return rows.start + r,
        }
    }
    rows.end
}

impl<'s> Labels<'s> {
    /// The code of `s`, from `new_code` the first time it is met (`None`: no code, nothing kept).
    pub(crate) fn code(&mut self, s: &'s str, new_code: impl FnOnce(&'s str) -> Option<u32>) -> Option<u32> {
        let b = s.as_bytes();
        if b.len() < SHORT {
            let mut word = [0u8; SHORT];
            word[..b.len()].copy_from_slice(b);
            return self.code_short(short_key(&word, b.len()), || s, new_code);
        }
        if let Some(&c) = self.long.get(s) {
            return Some(c);
        }
        let c = new_code(s)?;
        self.long.insert(s, c);
        Some(c)
    }

    /// [`Labels::code`] of row `r` of `a` (not NULL: a NULL row would read as its slot's
    /// bytes). A short label's integers are read straight from the array's bytes, 32 at once
    /// with the bytes past the label masked off, where building them byte by byte (a copy of
    /// variable length) was most of a lookup's cost.
    pub(crate) fn code_of(
        &mut self,
        a: &'s StringArray,
        r: usize,
        new_code: impl FnOnce(&'s str) -> Option<u32>,
    ) -> Option<u32> {
        let (offsets, data) = (a.value_offsets(), a.value_data());
        self.code_at(a, data, r, offsets[r] as usize, offsets[r + 1] as usize, new_code)
    }

    /// [`Labels::code_of`] of every row of `a`, which holds no NULL, into `codes`; `None` as
    /// soon as `new_code` gives none. The array's offsets and bytes are read once for the
    /// column, not once a row.
    pub(crate) fn code_rows(
        &mut self,
        a: &'s StringArray,
        codes: &mut [u32],
        mut new_code: impl FnMut(&'s str) -> Option<u32>,
    ) -> Option<()> {
        debug_assert_eq!(a.null_count(), 0);
        let (offsets, data) = (a.value_offsets(), a.value_data());
        // Rows whose label's 32 bytes from its start lie in `data` (all but the last few).
        let whole = offsets[..codes.len()].partition_point(|&o| o as usize + SHORT <= data.len());
        let mut r = 0;
        while r < codes.len() {
            r = if r < whole { code_met(&self.short, offsets, data, codes, r..whole) } else { r };
            if r == codes.len() {
                break;
            }
            codes[r] = self.code_at(a, data, r, offsets[r] as usize, offsets[r + 1] as usize, &mut new_code)?;
            r += 1;
        }
        Some(())
    }

    /// The code of row `r` of `a`, whose bytes are `data[start..end]`.
    #[inline]
    fn code_at(
        &mut self,
        a: &'s StringArray,
        data: &[u8],
        r: usize,
        start: usize,
        end: usize,
        new_code: impl FnOnce(&'s str) -> Option<u32>,
    ) -> Option<u32> {
        let len = end - start;
        match data.get(start..start + SHORT) {
            Some(bytes) if len < SHORT => {
                self.code_short(short_key(bytes.try_into().expect("32 bytes"), len), || a.value(r), new_code)
            }
            _ => self.code(a.value(r), new_code),
        }
    }

    /// The code of the short label whose integers are `key`.
    #[inline]
    fn code_short(
        &mut self,
        key: ShortKey,
        s: impl FnOnce() -> &'s str,
        new_code: impl FnOnce(&'s str) -> Option<u32>,
    ) -> Option<u32> {
        if let Some(c) = self.short.get(&key) {
            return Some(c);
        }
        let c = new_code(s())?;
        self.short.insert(key, c);
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::Packing;

    /// Runs merged in key ranges on the pool give the one sorted list with equal keys' counts
    /// added, for small and large inputs (one range, many), on pools of 1 and 3 threads.
    #[test]
    fn runs_merged_in_ranges_are_one_sorted_list() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for (runs, len, space) in [(1usize, 10usize, 50u128), (7, 300, 1_000), (40, 5_000, 150_000), (3, 0, 5)] {
            let input: Vec<Vec<(u128, u64)>> = (0..runs)
                .map(|_| {
                    let mut keys: Vec<u128> = (0..len).map(|_| rng.random_range(0..space)).collect();
                    keys.sort_unstable();
                    super::run_lengths(&keys)
                })
                .collect();
            let mut expected = std::collections::BTreeMap::new();
            for &(k, n) in input.iter().flatten() {
                *expected.entry(k).or_insert(0u64) += n;
            }
            let expected: Vec<(u128, u64)> = expected.into_iter().collect();
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert_eq!(
                    pool.install(|| super::merge_runs(input.clone())).concat(),
                    expected,
                    "{runs} runs, {threads} threads"
                );
            }
        }
    }

    /// Keys sorted by `sort_keys` (radix passes for up to 44 bits, else a comparison sort) are
    /// the keys sorted, for widths of one pass to past four, with repeats and a digit all keys
    /// share, in keys of 64 and 128 bits.
    #[test]
    fn keys_sorted_by_digits_are_sorted() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(6);
        for (bits, len) in
            [(1u32, 5_000usize), (11, 3_000), (12, 70_000), (31, 60_000), (44, 9_000), (45, 9_000), (64, 4_000)]
        {
            let space = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            // Few distinct keys (repeats), and the second digit zero in every key.
            let distinct: Vec<u64> = (0..len / 3 + 1).map(|_| rng.random_range(0..=space) & !(0x7ff << 11)).collect();
            let keys: Vec<u64> = (0..len).map(|_| distinct[rng.random_range(0..distinct.len())]).collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            let mut sorted = keys.clone();
            super::sort_keys(&mut sorted, bits);
            assert_eq!(sorted, expected, "{bits} bits, 64-bit keys");
            let mut wide: Vec<u128> = keys.iter().map(|&k| k as u128).collect();
            super::sort_keys(&mut wide, bits);
            assert!(wide.iter().map(|&k| k as u64).eq(expected.iter().copied()), "{bits} bits, 128-bit keys");
            assert_eq!(super::run_lengths(&sorted).iter().map(|r| r.1).sum::<u64>(), len as u64);
        }
    }

    /// Keys of 64 bits (a table whose codes fit in them) merge to the same list as by a map,
    /// for keys of few bits and of all 64, with repeated keys.
    #[test]
    fn runs_of_64_bit_keys_merge_into_one_sorted_list() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for (bits, runs, len) in [(5u32, 9usize, 40usize), (31, 30, 2_000), (64, 12, 3_000)] {
            let space = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let input: Vec<Vec<(u64, u64)>> = (0..runs)
                .map(|_| {
                    let mut keys: Vec<u64> = (0..len).map(|_| rng.random_range(0..=space)).collect();
                    keys.sort_unstable();
                    super::run_lengths(&keys)
                })
                .collect();
            let mut expected = std::collections::BTreeMap::new();
            for &(k, n) in input.iter().flatten() {
                *expected.entry(k).or_insert(0u64) += n;
            }
            let merged = super::merge_runs(input).concat();
            assert_eq!(merged, expected.into_iter().collect::<Vec<_>>(), "{bits} bits");
        }
    }

    /// The ranges a merge is cut into hold about equal shares of the tuples, also when there are
    /// more runs than samples wanted (each slice of a large table is one run, and each run holds
    /// most of the same keys): before, every run was sampled at its first key, and one range
    /// held nearly everything.
    #[test]
    fn merge_ranges_are_balanced_with_many_runs() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let input: Vec<Vec<(u128, u64)>> = (0..300)
            .map(|_| {
                let mut keys: Vec<u128> = (0..2_000).map(|_| rng.random_range(0..5_000u128) << 64).collect();
                keys.sort_unstable();
                super::run_lengths(&keys)
            })
            .collect();
        let total: usize = input.iter().map(Vec::len).sum();
        for parts in [2usize, 8, 64] {
            let cuts = super::splitters(&input, parts);
            assert_eq!(cuts.len(), parts - 1, "{parts} parts");
            let mut bounds = vec![None];
            bounds.extend(cuts.iter().copied().map(Some));
            bounds.push(None);
            for w in bounds.windows(2) {
                let share: usize = input
                    .iter()
                    .map(|run| {
                        run.iter().filter(|e| w[0].is_none_or(|lo| e.0 >= lo) && w[1].is_none_or(|hi| e.0 < hi)).count()
                    })
                    .sum();
                assert!(share <= 2 * total / parts, "{parts} parts: a range holds {share} of {total} tuples");
            }
        }
    }

    /// A label's code read from the array's bytes (`code_of`) is its code as text (`code`):
    /// labels of every length around 16 and 32 bytes, the empty one, multi-byte characters, labels at
    /// the end of the buffer (no 16 bytes left to read) and in a slice of the array, and more
    /// distinct labels than the first array of slots holds (it grows).
    #[test]
    fn labels_read_from_the_array_are_coded_as_their_text() {
        use super::Labels;
        use datafusion::arrow::array::{Array, StringArray};
        let words: Vec<String> = (0..34)
            .map(|n| "é".repeat(n / 2) + &"x".repeat(n % 2))
            .chain(["", "a", "ab", "Never-married", "Married-civ-spouse", "a"].map(String::from))
            .chain([15, 16, 17, 18, 31, 32, 33].map(|n| "a".repeat(n)))
            .chain((0..100).map(|n| format!("v{n}")))
            .collect();
        // Every label met again, after the others and in another order (the table's lookups
        // of labels it holds), and short labels last (rows whose 32 bytes pass the array's end).
        let once = words.iter().map(String::as_str);
        let again = once.clone().rev().chain(once.clone().step_by(3)).chain(["a", "ab", "", "a"]);
        let all: Vec<&str> = once.chain(again).collect();
        let a = StringArray::from(all);
        for array in [a.clone(), a.slice(3, a.len() - 5)] {
            let (mut by_text, mut by_bytes, mut by_rows) = (Labels::default(), Labels::default(), Labels::default());
            let (mut met_text, mut met_bytes, mut met_rows) = (Vec::new(), Vec::new(), Vec::new());
            let mut rows = vec![u32::MAX; array.len()];
            by_rows.code_rows(&array, &mut rows, |s| {
                met_rows.push(s);
                Some(met_rows.len() as u32 - 1)
            });
            for (r, &coded) in rows.iter().enumerate() {
                let t = by_text.code(array.value(r), |s| {
                    met_text.push(s);
                    Some(met_text.len() as u32 - 1)
                });
                let b = by_bytes.code_of(&array, r, |s| {
                    met_bytes.push(s);
                    Some(met_bytes.len() as u32 - 1)
                });
                assert_eq!(t, b, "row {r}: {:?}", array.value(r));
                assert_eq!(t, Some(coded), "row {r} coded with the others: {:?}", array.value(r));
            }
            assert_eq!(met_text, met_bytes);
            assert_eq!(met_text, met_rows);
            let distinct: std::collections::BTreeSet<&str> = (0..array.len()).map(|r| array.value(r)).collect();
            assert_eq!(met_text.len(), distinct.len(), "distinct labels share no code");
        }
    }

    #[test]
    fn packed_keys_order_as_the_tuples_and_unpack_to_them() {
        let widths = [3usize, 1, 200, 2, 70_000];
        let p = Packing::new(&widths).unwrap();
        let tuples: Vec<[u32; 5]> = vec![[0, 0, 199, 1, 69_999], [1, 0, 0, 0, 0], [1, 0, 5, 1, 3], [2, 0, 5, 0, 9]];
        let keys: Vec<u128> = tuples.iter().map(|t| p.pack(t.iter().copied())).collect();
        for w in keys.windows(2) {
            assert!(w[0] < w[1], "keys must order as the tuples do");
        }
        for (t, &k) in tuples.iter().zip(&keys) {
            let back: Vec<u32> = (0..5).map(|j| p.field(k, j)).collect();
            assert_eq!(back, t.to_vec());
        }
        assert!(Packing::new(&[1 << 40, 1 << 40, 1 << 40, 1 << 10]).is_none(), "130 bits do not fit");
        assert!(Packing::new(&[1 << 40, 1 << 40, 1 << 40, 1 << 8]).is_some(), "128 bits fit");
    }
}
