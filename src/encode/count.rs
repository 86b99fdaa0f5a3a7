//! The frequency table counted in this process, for sources whose rows it already holds.
//!
//! A DataFusion `GROUP BY` over the raw columns hashes and compares strings for every record,
//! then every distinct tuple is encoded against the hierarchies and sorted: 14 ms on Adult,
//! 83–133 ms on Adult x10 and seconds at 10^6 records, more than the search it feeds. Here each
//! column is encoded to leaf codes once per slice of rows (an integer lookup of the value, the
//! hierarchy consulted once per distinct value), the codes are packed into one `u128` key per
//! record ([`Packing`], the first column in the highest bits, so sorting keys sorts tuples),
//! and each slice's keys are sorted and counted, then the slices' runs merged, on all cores.
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
use std::sync::Arc;

/// Rows per parallel job: small enough that two cores share a 30,000-row table and that a
/// slice's keys sort in cache.
const SLICE_ROWS: usize = 16_384;

/// Bit fields of a packed tuple: column `j` (of codes below `widths[j]`) at `shifts[j]`, the
/// first column highest, so that keys compare as the tuples do.
pub(super) struct Packing {
    shifts: Vec<u32>,
    masks: Vec<u128>,
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
        Some(Packing { shifts, masks })
    }

    pub(super) fn field(&self, key: u128, j: usize) -> u32 {
        ((key >> self.shifts[j]) & self.masks[j]) as u32
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
        Some(c) => slices.iter().map(|b| utf8(b.column(c))).collect::<Option<_>>()?,
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
    let jobs: Vec<usize> = (0..slices.len()).collect();
    let runs: Vec<Option<Vec<(u128, u64)>>> = crate::parallel::map(&jobs, |&i| {
        let b = &slices[i];
        let mut keys = vec![0u128; b.num_rows()];
        for (j, (&c, (_, h))) in qi_cols.iter().zip(qis).enumerate() {
            encode_into(&mut keys, &packing, j, h, integer_leaves[j].as_ref(), b.column(c))?;
        }
        if let (Some((codes, _)), Some(global)) = (local.get(i), s_global.get(i)) {
            for (key, &c) in keys.iter_mut().zip(codes) {
                packing.put(key, qis.len(), global[c as usize]);
            }
        }
        keys.sort_unstable();
        Some(run_lengths(&keys))
    });
    let pieces = merge_runs(runs.into_iter().collect::<Option<Vec<_>>>()?);
    let (columns, counts) = unpack(&pieces, &packing, widths.len());
    drop(pieces);
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

/// The merged tuples, piece after piece, as `fields` code columns and their counts. Each piece
/// is unpacked by one job on the pool into its own part of every column, so the table is never
/// laid end to end as tuples first (a serial copy of every tuple, faulting in fresh memory on
/// one core) nor read once per column.
fn unpack(pieces: &[Vec<(u128, u64)>], packing: &Packing, fields: usize) -> (Vec<Vec<u32>>, Vec<u64>) {
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

/// Sorted keys as (key, records) runs.
fn run_lengths(keys: &[u128]) -> Vec<(u128, u64)> {
    let mut out: Vec<(u128, u64)> = Vec::new();
    for &k in keys {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// Sorted runs merged, counts of equal keys added: one sorted list, returned in the pieces of
/// its key ranges (laid end to end they are the list; [`unpack`] reads them in place). Sorting
/// each slice and merging beats one hash table when most tuples are distinct (10^6 records of
/// 12–15 attributes), and gives the sorted order the table needs. The key space is cut into ranges at keys sampled
/// from the runs, and each range's pieces of every run are merged by one job on the pool, so
/// the last merges are not one serial pass over all the table's tuples (a merge tree's top
/// levels have one or two jobs); the list is the same however it is cut.
fn merge_runs(runs: Vec<Vec<(u128, u64)>>) -> Vec<Vec<(u128, u64)>> {
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
fn splitters(runs: &[Vec<(u128, u64)>], parts: usize) -> Vec<u128> {
    if parts < 2 {
        return Vec::new();
    }
    let total: usize = runs.iter().map(Vec::len).sum();
    let wanted = 32 * parts;
    let mut sample: Vec<u128> = runs
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
    let mut cuts: Vec<u128> = (1..parts).filter_map(|i| sample.get(i * sample.len() / parts).copied()).collect();
    cuts.dedup();
    cuts
}

/// Sorted runs merged into one (serially: one job of [`merge_runs`]): laid end to end in one
/// buffer and sorted by a stable sort, which finds the runs already sorted and merges them
/// (Rust's driftsort), then equal keys' counts added in place. One buffer and the sort's
/// scratch, where merging two runs at a time wrote every tuple once per level into memory
/// freshly allocated (and faulted in by the kernel) at each of ~9 levels.
fn merge_pieces(pieces: Vec<&[(u128, u64)]>) -> Vec<(u128, u64)> {
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
    let (mut labels, mut met) = (Labels::default(), Vec::new());
    let codes = (0..a.len())
        .map(|r| {
            labels.code_of(a, r, |v| {
                met.push(v);
                Some(met.len() as u32 - 1)
            })
        })
        .collect::<Option<Vec<u32>>>()?;
    Some((codes, met))
}

/// A column as `Utf8` (a no-op when it is one).
fn utf8(a: &ArrayRef) -> Option<ArrayRef> {
    if a.data_type() == &DataType::Utf8 { Some(a.clone()) } else { cast(a, &DataType::Utf8).ok() }
}

/// Put column `j`'s leaf codes into the keys, applying the NULL rule as [`super::encode_column`]
/// does; `None` on any value it would reject.
fn encode_into(
    keys: &mut [u128],
    packing: &Packing,
    j: usize,
    h: &Hierarchy,
    integers: Option<&IntegerLeaves>,
    a: &ArrayRef,
) -> Option<()> {
    if h.is_numeric() {
        if a.null_count() > 0 {
            return None;
        }
        if let (Some(ints), Some(v)) = (integers, a.as_primitive_opt::<Int64Type>()) {
            for (key, &x) in keys.iter_mut().zip(v.values().iter()) {
                packing.put(key, j, ints.get(x)?);
            }
            return Some(());
        }
        let v = cast(a, &DataType::Float64).ok()?;
        let v = v.as_primitive::<Float64Type>();
        if v.null_count() > 0 {
            return None;
        }
        for (key, &x) in keys.iter_mut().zip(v.values().iter()) {
            packing.put(key, j, h.leaf_of_value(if x == 0.0 { 0.0 } else { x })?);
        }
    } else {
        let v = utf8(a)?;
        let v = v.as_string::<i32>();
        let null_leaf = h.null_leaf();
        let mut labels = Labels::default();
        for (r, key) in keys.iter_mut().enumerate() {
            let code = if v.is_null(r) { null_leaf? } else { labels.code_of(v, r, |s| h.leaf_of_label(s))? };
            packing.put(key, j, code);
        }
    }
    Some(())
}

/// Codes of the labels met so far (a hierarchy's leaf codes here, risk_report's dense codes in
/// `crate::risk::read`). A label of up to 15 bytes is looked up as one integer (its bytes and
/// length), so most lookups hash and compare no string.
#[derive(Default)]
pub(crate) struct Labels<'s> {
    short: ShortCodes,
    long: FastMap<&'s str, u32>,
}

/// The integer of a label of `len` < 16 bytes whose bytes start `word` (little-endian; what
/// follows them is ignored): the bytes, then the length in the top byte.
fn short_key(word: u128, len: usize) -> u128 {
    (word & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120)
}

/// Short labels' integers and their codes, in one open-addressed array probed linearly. A
/// column holds few distinct labels, so the array stays in cache and a lookup is one hash, one
/// slot read and one comparison, where a general hash map's probing cost about as much again
/// (a third of Adult's statement went to these lookups).
#[derive(Default)]
struct ShortCodes {
    /// (label's integer, code); [`ShortCodes::EMPTY`] as the code marks a free slot.
    slots: Vec<(u128, u32)>,
    len: usize,
}

impl ShortCodes {
    const EMPTY: u32 = u32::MAX;

    /// The slot holding `key`, or the free slot where it belongs.
    #[inline]
    fn slot(&self, key: u128) -> usize {
        let mask = self.slots.len() - 1;
        let h = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut i = (h >> 32) as usize & mask;
        loop {
            let (k, c) = self.slots[i];
            if c == Self::EMPTY || k == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get(&self, key: u128) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (_, c) = self.slots[self.slot(key)];
        (c != Self::EMPTY).then_some(c)
    }

    /// Keep `code` for `key` (not present; a code of [`ShortCodes::EMPTY`] is not kept, and is
    /// looked up again next time). At most half the slots are taken.
    fn insert(&mut self, key: u128, code: u32) {
        if code == Self::EMPTY {
            return;
        }
        if 2 * (self.len + 1) > self.slots.len() {
            let grown = vec![(0, Self::EMPTY); (2 * self.slots.len()).max(64)];
            let old = std::mem::replace(&mut self.slots, grown);
            for (k, c) in old.into_iter().filter(|&(_, c)| c != Self::EMPTY) {
                let i = self.slot(k);
                self.slots[i] = (k, c);
            }
        }
        let i = self.slot(key);
        self.slots[i] = (key, code);
        self.len += 1;
    }
}

impl<'s> Labels<'s> {
    /// The code of `s`, from `new_code` the first time it is met (`None`: no code, nothing kept).
    pub(crate) fn code(&mut self, s: &'s str, new_code: impl FnOnce(&'s str) -> Option<u32>) -> Option<u32> {
        let b = s.as_bytes();
        if b.len() < 16 {
            let mut word = [0u8; 16];
            word[..b.len()].copy_from_slice(b);
            return self.code_short(short_key(u128::from_le_bytes(word), b.len()), || s, new_code);
        }
        if let Some(&c) = self.long.get(s) {
            return Some(c);
        }
        let c = new_code(s)?;
        self.long.insert(s, c);
        Some(c)
    }

    /// [`Labels::code`] of row `r` of `a` (not NULL: a NULL row would read as its slot's bytes). A short label's integer is read straight
    /// from the array's bytes, 16 at once with the bytes past the label masked off, where
    /// building it byte by byte (a copy of variable length) was most of a lookup's cost.
    pub(crate) fn code_of(
        &mut self,
        a: &'s StringArray,
        r: usize,
        new_code: impl FnOnce(&'s str) -> Option<u32>,
    ) -> Option<u32> {
        let (offsets, data) = (a.value_offsets(), a.value_data());
        let (start, end) = (offsets[r] as usize, offsets[r + 1] as usize);
        let len = end - start;
        match data.get(start..start + 16) {
            Some(sixteen) if len < 16 => {
                let word = u128::from_le_bytes(sixteen.try_into().expect("sixteen bytes"));
                self.code_short(short_key(word, len), || a.value(r), new_code)
            }
            _ => self.code(a.value(r), new_code),
        }
    }

    /// The code of the short label whose integer is `key`.
    fn code_short(
        &mut self,
        key: u128,
        s: impl FnOnce() -> &'s str,
        new_code: impl FnOnce(&'s str) -> Option<u32>,
    ) -> Option<u32> {
        if let Some(c) = self.short.get(key) {
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
    /// labels of every length around 16 bytes, the empty one, multi-byte characters, labels at
    /// the end of the buffer (no 16 bytes left to read) and in a slice of the array, and more
    /// distinct labels than the first array of slots holds (it grows).
    #[test]
    fn labels_read_from_the_array_are_coded_as_their_text() {
        use super::Labels;
        use datafusion::arrow::array::{Array, StringArray};
        let words: Vec<String> = (0..18)
            .map(|n| "é".repeat(n / 2) + &"x".repeat(n % 2))
            .chain(["", "a", "ab", "Never-married", "Married-civ-spouse", "a"].map(String::from))
            .chain((0..100).map(|n| format!("v{n}")))
            .collect();
        let a = StringArray::from(words.iter().map(String::as_str).collect::<Vec<_>>());
        for array in [a.clone(), a.slice(3, a.len() - 5)] {
            let (mut by_text, mut by_bytes) = (Labels::default(), Labels::default());
            let (mut met_text, mut met_bytes) = (Vec::new(), Vec::new());
            for r in 0..array.len() {
                let t = by_text.code(array.value(r), |s| {
                    met_text.push(s);
                    Some(met_text.len() as u32 - 1)
                });
                let b = by_bytes.code_of(&array, r, |s| {
                    met_bytes.push(s);
                    Some(met_bytes.len() as u32 - 1)
                });
                assert_eq!(t, b, "row {r}: {:?}", array.value(r));
            }
            assert_eq!(met_text, met_bytes);
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
