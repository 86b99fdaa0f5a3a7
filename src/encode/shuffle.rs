//! Row order of a release: a uniformly random permutation, the same rule for every method.
//!
//! A release whose rows keep the order of the source (or of anything computed from it, such as
//! classes formed in scan order) can be linked back row by row by anyone who holds the original
//! or a second release. Releases built in memory are permuted here, with the call's RNG: seeded
//! calls (tests) stay reproducible, unseeded ones draw from the OS. Releases written by a
//! DataFusion plan order their rows by `random()` in the plan instead ([`super::materialize`]).

use crate::error::Result;
use crate::release::labels::{label_type, relabelled};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, DictionaryArray, RecordBatch, RecordBatchOptions, UInt32Array,
};
use datafusion::arrow::compute::{interleave, take};
use datafusion::arrow::datatypes::{Int32Type, SchemaRef};
use rand::Rng;
use rand::seq::SliceRandom;
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

/// A uniformly random order of `rows` rows: row `i` of a release is row `order[i]` of what
/// the method built. Drawn on the caller's thread, so the same draws whatever the threads.
pub(crate) fn permutation(rows: usize, rng: &mut impl Rng) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rows as u32).collect();
    order.shuffle(rng);
    order
}

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
        Rows::One(order) => return Ok(take(&parts[0], order, None)?),
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
}
