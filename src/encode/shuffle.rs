//! Row order of a release: a uniformly random permutation, the same rule for every method.
//!
//! A release whose rows keep the order of the source (or of anything computed from it, such as
//! classes formed in scan order) can be linked back row by row by anyone who holds the original
//! or a second release. Releases built in memory are permuted here, with the call's RNG: seeded
//! calls (tests) stay reproducible, unseeded ones draw from the OS. Releases written by a
//! DataFusion plan order their rows by `random()` in the plan instead ([`super::materialize`]).

use crate::dp::StreamKey;
use crate::error::Result;
use crate::release::labels::{label_type, relabelled};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, DictionaryArray, Int32Array, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
    UInt32Array,
};
use datafusion::arrow::buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::compute::{concat, interleave, take};
use datafusion::arrow::datatypes::{Int32Type, Int64Type, SchemaRef};
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use std::sync::{Arc, Mutex};

/// `batches` as one batch holding a uniformly random permutation of their rows. One batch, so
/// that reading it back (DataFusion may spread a table's batches over partitions and merge
/// them in whatever order they finish) shows the same order for the same seed.
///
/// The permutation is drawn on the caller's thread (the same draws whatever the threads); the
/// columns are permuted on the process's pool, each on its own: every row is copied once,
/// straight from its batch to its drawn place (no concatenation first), and a label column
/// whose batches share their label values ([`crate::release::labels`]) moves its keys only.
/// Each column's parts are dropped once it is permuted, so the rows are held about once, plus
/// the columns in flight.
pub(crate) fn shuffle_rows(schema: &SchemaRef, batches: Vec<RecordBatch>, rng: &mut impl Rng) -> Result<RecordBatch> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        return Ok(RecordBatch::new_empty(schema.clone()));
    }
    let order = permutation(rows, rng);
    let columns: Vec<Mutex<Vec<ArrayRef>>> =
        (0..schema.fields().len()).map(|c| Mutex::new(batches.iter().map(|b| b.column(c).clone()).collect())).collect();
    let rows_at = Rows::of(&batches, order);
    drop(batches);
    let permuted = crate::parallel::map(&columns, |parts| {
        gather(&std::mem::take(&mut *parts.lock().unwrap_or_else(|e| e.into_inner())), &rows_at)
    });
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(schema.clone(), permuted.into_iter().collect::<Result<_>>()?, &options)?)
}

/// Rows a bucket of [`permutation`] holds on average: a large release's order is drawn in
/// `rows / BUCKET_ROWS` buckets on the pool; below two buckets' worth, by one Fisher–Yates
/// shuffle on the caller's thread.
const BUCKET_ROWS: usize = 1 << 20;

/// Rows dealt to buckets by one job (and one generator stream) of [`permutation`].
const DEAL_ROWS: usize = 1 << 16;

/// A uniformly random order of `rows` rows: row `i` of a release is row `order[i]` of what
/// the method built. The same draws whatever the threads: a small order is one Fisher–Yates
/// shuffle with `rng`; a large one is drawn on the pool from streams keyed by `rng`
/// ([`permutation_in`]), each stream tied to a fixed range of rows or to one bucket.
pub(crate) fn permutation(rows: usize, rng: &mut impl Rng) -> Vec<u32> {
    permutation_in(rows, rows / BUCKET_ROWS, rng)
}

/// `values` in a uniformly random order: with the same draws as [`permutation`], the
/// values at `permutation(values.len(), rng)` (the dealing and the shuffles move each row's
/// value where they would move its number), without drawing the order first and then
/// gathering by it (a second pass over the rows, with a cache miss a row on a large table).
pub(crate) fn shuffled(values: &[u32], rng: &mut impl Rng) -> Vec<u32> {
    deal_in(values.len(), values.len() / BUCKET_ROWS, rng, |row| values[row])
}

/// [`permutation`] with `buckets` buckets (fewer than two: one Fisher–Yates shuffle).
///
/// Every row is dealt to a bucket drawn uniformly and independently (rows in fixed ranges of
/// [`DEAL_ROWS`], each range from its own stream); each bucket's rows are shuffled by a stream
/// of their own; the buckets are laid end to end. The order is uniform over all `rows!`: for
/// a given order π and bucket sizes s₁..s_B, exactly one dealing puts each row in the bucket
/// that holds its place in π (probability B^−rows), and the shuffles then give π with
/// probability Π 1/s_b!; summed over all sizes, B^−rows · Σ rows!/(s₁!···s_B!) · 1/rows! =
/// B^−rows · B^rows / rows! = 1/rows!. (Sanders, "Random permutations on distributed,
/// external and hierarchical memory", IPL 1998.) Each step is a job per range or bucket on the
/// pool, so the dealing and the shuffles scale with the cores that the serial shuffle, a cache
/// miss per row on a large table, did not.
fn permutation_in(rows: usize, buckets: usize, rng: &mut impl Rng) -> Vec<u32> {
    deal_in(rows, buckets, rng, |row| row as u32)
}

/// [`permutation_in`] of rows that each carry `value(row)`: the rows' values in the order
/// drawn (row numbers when `value` is the identity).
fn deal_in(rows: usize, buckets: usize, rng: &mut impl Rng, value: impl Fn(usize) -> u32 + Sync) -> Vec<u32> {
    if buckets < 2 {
        let mut order: Vec<u32> = (0..rows).map(value).collect();
        order.shuffle(rng);
        return order;
    }
    let key = StreamKey::from_rng(rng);
    let ranges = crate::parallel::ranges(rows, DEAL_ROWS);
    let dealt: Vec<Vec<Vec<u32>>> = crate::parallel::map(&ranges, |range| {
        let mut stream = key.stream((range.start / DEAL_ROWS) as u64);
        let expected = range.len() / buckets;
        let mut out: Vec<Vec<u32>> = (0..buckets).map(|_| Vec::with_capacity(expected + expected / 4 + 8)).collect();
        for row in range.clone() {
            out[stream.random_range(0..buckets)].push(value(row));
        }
        out
    });
    // Each bucket is gathered and shuffled in its own part of the order (no bucket built apart
    // and then copied into place by one thread).
    let mut order = vec![0u32; rows];
    let parts = crate::parallel::split_mut(&mut order, (0..buckets).map(|b| dealt.iter().map(|d| d[b].len()).sum()));
    crate::parallel::run(parts.into_iter().enumerate().collect(), |(b, part)| {
        let mut at = 0;
        for d in &dealt {
            part[at..at + d[b].len()].copy_from_slice(&d[b]);
            at += d[b].len();
        }
        // Streams past the ranges' ids: no bucket shares a stream with a dealing.
        part.shuffle(&mut key.stream((ranges.len() + b) as u64));
    });
    order
}

/// `array`'s values at `rows`, in that order: [`take`], with large gathers spread over the
/// pool. A string column without NULLs is gathered by [`gather_strings`] at any size (a
/// release's sensitive column: its few values copied to every row, which `take` did at a
/// third of the speed). A primitive column or a dictionary's keys (without nulls) are
/// gathered straight into one buffer; other columns in ranges of rows (zero-copy slices of
/// `rows`), then concatenated (a copy at memory speed).
pub(crate) fn gather_rows(array: &ArrayRef, rows: &UInt32Array) -> Result<ArrayRef> {
    if rows.null_count() > 0 {
        return Ok(take(array, rows, None)?);
    }
    if let Some(out) =
        array.as_string_opt::<i32>().filter(|s| s.null_count() == 0).and_then(|s| gather_strings(s, rows.values()))
    {
        return Ok(Arc::new(out));
    }
    if rows.len() < 2 * GATHER_ROWS || crate::parallel::threads() <= 1 {
        return Ok(take(array, rows, None)?);
    }
    if array.null_count() == 0 {
        if let Some(v) = array.as_primitive_opt::<Int64Type>() {
            return Ok(Arc::new(Int64Array::from(crate::parallel::gather(v.values(), rows.values()))));
        }
        if let Some(d) = array.as_dictionary_opt::<Int32Type>().filter(|d| d.keys().null_count() == 0) {
            let keys = Int32Array::from(crate::parallel::gather(d.keys().values(), rows.values()));
            // SAFETY: every key is one of `d`'s keys, which index `d`'s values (`d` is valid), so
            // `try_new` would succeed; it would check all of them again, on one core.
            let out = unsafe { DictionaryArray::<Int32Type>::new_unchecked(keys, d.values().clone()) };
            debug_assert!(out.to_data().validate_full().is_ok());
            return Ok(Arc::new(out));
        }
    }
    let ranges = crate::parallel::ranges(rows.len(), GATHER_ROWS);
    let parts = crate::parallel::map(&ranges, |r| take(array, &rows.slice(r.start, r.len()), None));
    let parts = parts.into_iter().collect::<Result<Vec<ArrayRef>, _>>()?;
    Ok(concat(&parts.iter().map(|p| p.as_ref()).collect::<Vec<_>>())?)
}

/// A string column without NULLs gathered straight into its final buffers: each range of rows
/// measures its bytes, then copies its strings into its own part of one values buffer and
/// writes its offsets, on the pool. Taking ranges and concatenating them, as other types are,
/// left the concatenation (every byte copied again, into memory faulted in by one thread) on
/// one core. `None` past `i32` offsets, where the caller's `take` reports the overflow.
fn gather_strings(a: &StringArray, rows: &[u32]) -> Option<StringArray> {
    let (offsets, bytes) = (a.value_offsets(), a.value_data());
    let span = |i: u32| offsets[i as usize] as usize..offsets[i as usize + 1] as usize;
    let ranges: Vec<&[u32]> = rows.chunks(GATHER_ROWS).collect();
    let sizes = crate::parallel::map(&ranges, |r| r.iter().map(|&i| span(i).len()).sum::<usize>());
    let total: usize = sizes.iter().sum();
    i32::try_from(total).ok()?;
    let (mut values, mut ends) = (vec![0u8; total], vec![0i32; rows.len() + 1]);
    let bases = sizes.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n)));
    let v_parts = crate::parallel::split_mut(&mut values, sizes.iter().copied());
    let e_parts = crate::parallel::split_mut(&mut ends[1..], ranges.iter().map(|r| r.len()));
    let jobs = ranges.into_iter().zip(v_parts).zip(e_parts).zip(bases).map(|(((r, v), e), base)| (r, v, e, base));
    crate::parallel::run(jobs.collect(), |(r, v, e, base)| {
        let mut at = 0;
        for (end, &i) in e.iter_mut().zip(r) {
            let from_at = span(i);
            let len = from_at.len();
            // A string of up to 16 bytes is copied as 16 (one load and one store of fixed size,
            // not a call to copy a variable length), the bytes past it overwritten by the next
            // string's; where either side lacks 16 bytes, as itself.
            match (bytes.get(from_at.start..from_at.start + 16), v.get_mut(at..at + 16)) {
                (Some(from), Some(to)) if len <= 16 => to.copy_from_slice(from),
                _ => v[at..at + len].copy_from_slice(&bytes[from_at]),
            }
            at += len;
            *end = (base + at) as i32;
        }
    });
    // SAFETY: the values are whole values of `a` (valid UTF-8) laid end to end, and `ends` their
    // ascending ends from 0, within i32 (checked above), so `try_new` would succeed; it would
    // validate every byte again, on one core.
    let out = unsafe {
        StringArray::new_unchecked(OffsetBuffer::new(ScalarBuffer::from(ends)), Buffer::from_vec(values), None)
    };
    debug_assert!(out.to_data().validate_full().is_ok());
    Some(out)
}

/// Rows a job of [`gather_rows`] takes.
const GATHER_ROWS: usize = 1 << 18;

/// Where each output row comes from: one batch's row numbers, or (batch, row) pairs.
enum Rows {
    One(UInt32Array),
    Many(Vec<(usize, usize)>),
}

impl Rows {
    /// `order` (row numbers over the batches laid end to end) as places in `batches`.
    fn of(batches: &[RecordBatch], order: Vec<u32>) -> Rows {
        if batches.len() == 1 {
            return Rows::One(UInt32Array::from(order));
        }
        let starts: Vec<usize> = batches
            .iter()
            .scan(0, |at, b| {
                let start = *at;
                *at += b.num_rows();
                Some(start)
            })
            .collect();
        Rows::Many(
            order
                .into_iter()
                .map(|i| {
                    // The last batch starting at or before row i (an empty batch is skipped).
                    let b = starts.partition_point(|&s| s <= i as usize) - 1;
                    (b, i as usize - starts[b])
                })
                .collect(),
        )
    }
}

/// One column's parts gathered into the drawn order, each value copied once; a dictionary
/// column whose parts share one values array keeps it and gathers keys.
fn gather(parts: &[ArrayRef], rows: &Rows) -> Result<ArrayRef> {
    let places = match rows {
        Rows::One(order) => return gather_rows(&parts[0], order),
        Rows::Many(places) => places,
    };
    if let Some(values) = shared_values(parts) {
        let keys: Vec<&dyn Array> = parts.iter().map(|p| p.as_dictionary::<Int32Type>().keys() as &dyn Array).collect();
        let keys = interleave(&keys, places)?.as_primitive::<Int32Type>().clone();
        return Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values)?));
    }
    let gathered = interleave(&parts.iter().map(|p| p.as_ref()).collect::<Vec<_>>(), places)?;
    match gathered.data_type() {
        // Parts with dictionaries of their own: arrow concatenates their values, which may then
        // name a label twice.
        t if *t == label_type() => Ok(relabelled(&gathered)?),
        _ => Ok(gathered),
    }
}

/// The values array every part shares, when the parts are `Dictionary(Int32, _)` columns
/// over one values array (a release's labels: [`crate::release::labels`]).
fn shared_values(parts: &[ArrayRef]) -> Option<ArrayRef> {
    let dicts: Vec<_> = parts.iter().map(|p| p.as_dictionary_opt::<Int32Type>()).collect::<Option<_>>()?;
    let first = dicts.first()?.values();
    let data = first.to_data();
    dicts.iter().all(|d| d.values().to_data().ptr_eq(&data)).then(|| first.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use rand::SeedableRng;

    #[test]
    fn a_permutation_of_every_row_reproducible_from_a_seed() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch = |r: std::ops::Range<i64>| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(r))]).unwrap()
        };
        let batches = [batch(0..10_000), batch(10_000..20_000)];
        let run = |seed| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let b = shuffle_rows(&schema, batches.to_vec(), &mut rng).unwrap();
            let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap().clone();
            (0..c.len()).map(|i| c.value(i)).collect::<Vec<i64>>()
        };
        let (a, b, c) = (run(1), run(1), run(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..20_000).collect::<Vec<_>>());
        // Not the input order, and not close to it: few rows stay where they were.
        assert!(a.iter().enumerate().filter(|(i, v)| *i as i64 == **v).count() < 20);
    }

    /// Permuted column by column on the pool, the rows come out in the order one `take` over
    /// the concatenated batches gives for the same draws: uneven batches, an empty one, strings.
    #[test]
    fn columns_permuted_in_parallel_match_one_take() {
        use datafusion::arrow::array::{StringArray, UInt32Array};
        use datafusion::arrow::compute::{concat_batches, take_record_batch};
        let schema =
            Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = |r: std::ops::Range<i64>| {
            let s: StringArray = r.clone().map(|i| (i % 5 != 0).then(|| format!("v{}", i % 97))).collect();
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(r)), Arc::new(s)]).unwrap()
        };
        let batches = [batch(0..70_000), batch(70_000..70_000), batch(70_000..150_001), batch(150_001..150_010)];
        let got = shuffle_rows(&schema, batches.to_vec(), &mut rand::rngs::StdRng::seed_from_u64(3)).unwrap();
        let mut order: Vec<u32> = (0..150_010).collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(3));
        let all = concat_batches(&schema, &batches).unwrap();
        assert_eq!(got, take_record_batch(&all, &UInt32Array::from(order)).unwrap());
        assert_eq!(shuffle_rows(&schema, Vec::new(), &mut rand::rngs::StdRng::seed_from_u64(3)).unwrap().num_rows(), 0);
    }

    /// Label columns whose batches share one values array come out sharing it: keys move,
    /// label text does not, and the labels read the same as a plain take of them.
    #[test]
    fn shared_label_values_stay_shared() {
        use crate::release::labels::{label_array, label_field};
        use datafusion::arrow::compute::{cast, concat};
        let schema = Arc::new(Schema::new(vec![label_field("age")]));
        let all = label_array((0..30_000).map(|i| ["0-9", "10-19", "*"][i % 3]));
        let batches: Vec<RecordBatch> = [(0, 10_000), (10_000, 0), (10_000, 20_000)]
            .iter()
            .map(|&(at, n)| RecordBatch::try_new(schema.clone(), vec![all.slice(at, n)]).unwrap())
            .collect();
        let got = shuffle_rows(&schema, batches.clone(), &mut rand::rngs::StdRng::seed_from_u64(5)).unwrap();
        let values = |a: &ArrayRef| a.as_dictionary::<Int32Type>().values().clone();
        assert!(values(got.column(0)).to_data().ptr_eq(&values(&all).to_data()));
        let mut order: Vec<u32> = (0..30_000).collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(5));
        let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(0).as_ref()).collect();
        let expected = take(&concat(&parts).unwrap(), &UInt32Array::from(order), None).unwrap();
        let text = |a: &ArrayRef| cast(a, &DataType::Utf8).unwrap();
        assert_eq!(text(got.column(0)).to_data(), text(&expected).to_data());
    }

    /// Drawn in buckets, every order of four rows comes out about as often as any other
    /// (24,000 draws, each order expected 1,000 times; a chi-square statistic of 23 degrees of
    /// freedom, which exceeds 75 with probability below 10^-6), and each row lands in each place
    /// about equally often over ten rows.
    #[test]
    fn orders_drawn_in_buckets_are_uniform() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let mut seen = std::collections::HashMap::new();
        for _ in 0..24_000 {
            *seen.entry(permutation_in(4, 3, &mut rng)).or_insert(0u32) += 1;
        }
        assert_eq!(seen.len(), 24);
        let chi2: f64 = seen.values().map(|&n| (n as f64 - 1000.0).powi(2) / 1000.0).sum();
        assert!(chi2 < 75.0, "chi-square {chi2}");
        let mut at = [[0u32; 10]; 10];
        for _ in 0..20_000 {
            for (place, &row) in permutation_in(10, 4, &mut rng).iter().enumerate() {
                at[row as usize][place] += 1;
            }
        }
        // 2,000 expected per (row, place); a binomial sd of 42: 6 sd either way.
        assert!(at.iter().flatten().all(|&n| (1_750..=2_250).contains(&n)), "{at:?}");
    }

    /// Values shuffled with a generator are the values at the order drawn with the same
    /// generator, in one Fisher–Yates shuffle and in buckets: what lets a release draw its rows'
    /// cells shuffled instead of an order it then gathers them by.
    #[test]
    fn values_shuffled_are_the_values_at_the_order_drawn() {
        let rows = 2 * DEAL_ROWS + 77;
        let values: Vec<u32> = (0..rows as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1_000).collect();
        for buckets in [0, 1, 5] {
            let rng = || rand::rngs::StdRng::seed_from_u64(21);
            let order = permutation_in(rows, buckets, &mut rng());
            let at_order: Vec<u32> = order.iter().map(|&i| values[i as usize]).collect();
            assert_eq!(deal_in(rows, buckets, &mut rng(), |row| values[row]), at_order, "{buckets} buckets");
        }
        assert_eq!(shuffled(&values, &mut rand::rngs::StdRng::seed_from_u64(3)), {
            let order = permutation(rows, &mut rand::rngs::StdRng::seed_from_u64(3));
            order.iter().map(|&i| values[i as usize]).collect::<Vec<_>>()
        });
    }

    /// A large order: every row once, the same for a seed on pools of 1, 2 and 3 threads,
    /// another for another seed, and few rows in their own place.
    #[test]
    fn orders_drawn_in_buckets_repeat_from_a_seed_whatever_the_threads() {
        let rows = 3 * DEAL_ROWS + 123;
        let run = |threads, seed| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| permutation_in(rows, 5, &mut rand::rngs::StdRng::seed_from_u64(seed)))
        };
        let one = run(1, 7);
        assert_eq!(run(2, 7), one);
        assert_eq!(run(3, 7), one);
        assert_ne!(run(2, 8), one);
        let mut sorted = one.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..rows as u32).collect::<Vec<_>>());
        assert!(one.iter().enumerate().filter(|(i, r)| *i as u32 == **r).count() < 20);
    }

    /// Large gathers on the pool, and small ones, give what one `take` gives: integers with and
    /// without nulls, labels (keys gathered, values shared), strings with nulls and without
    /// (of 0 to 40 bytes: copied as 16 bytes or as themselves).
    #[test]
    fn gathers_on_the_pool_match_one_take() {
        for n in [2 * GATHER_ROWS + 1_001, 5_003] {
            gathers_of_rows_match_one_take(UInt32Array::from_iter_values(
                (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 3_000),
            ));
        }
    }

    fn gathers_of_rows_match_one_take(rows: UInt32Array) {
        use crate::release::labels::label_array;
        use datafusion::arrow::array::StringArray;
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..3_000)),
            Arc::new(Int64Array::from_iter((0..3_000).map(|i| (i % 7 != 0).then_some(i)))),
            label_array((0..3_000).map(|i| ["a", "b", "*"][i % 3])),
            Arc::new((0..3_000).map(|i| (i % 5 != 0).then(|| format!("s{i}"))).collect::<StringArray>()),
            // Without NULLs (gathered into one buffer), and a slice whose offsets start past 0.
            Arc::new(StringArray::from_iter_values((0..3_000).map(|i| format!("é{}", "x".repeat(i % 13))))),
            Arc::new(StringArray::from_iter_values((0..4_000).map(|i| format!("v{i}"))).slice(1_000, 3_000)),
            Arc::new(StringArray::from_iter_values((0..3_000).map(|i| "é".repeat(i % 21) + &"x".repeat(i % 2)))),
        ];
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for a in &arrays {
            let got = pool.install(|| gather_rows(a, &rows)).unwrap();
            assert_eq!(got.to_data(), take(a, &rows, None).unwrap().to_data());
        }
        let labels = pool.install(|| gather_rows(&arrays[2], &rows)).unwrap();
        let values = |a: &ArrayRef| a.as_dictionary::<Int32Type>().values().to_data();
        assert!(values(&labels).ptr_eq(&values(&arrays[2])));
    }
}
