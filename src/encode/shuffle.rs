//! Row order of a release: a uniformly random permutation, the same rule for every method.
//!
//! A release whose rows keep the order of the source (or of anything computed from it, such as
//! classes formed in scan order) can be linked back row by row by anyone who holds the original
//! or a second release. Releases built in memory are permuted here, with the call's RNG: seeded
//! calls (tests) stay reproducible, unseeded ones draw from the OS. Releases written by a
//! DataFusion plan order their rows by `random()` in the plan instead ([`super::materialize`]).

use crate::error::Result;
use datafusion::arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, UInt32Array};
use datafusion::arrow::compute::{concat, take};
use datafusion::arrow::datatypes::SchemaRef;
use rand::Rng;
use rand::seq::SliceRandom;
use std::sync::Mutex;

/// `batches` as one batch holding a uniformly random permutation of their rows. One batch, so
/// that reading it back (DataFusion may spread a table's batches over partitions and merge
/// them in whatever order they finish) shows the same order for the same seed.
///
/// The permutation is drawn on the caller's thread (the same draws whatever the threads); the
/// columns are permuted on the process's pool, each on its own (a column is one job: joined,
/// then gathered in the drawn order). Each column's parts are dropped once it is permuted, so
/// the rows are held about once, plus the columns in flight, rather than three times (the
/// batches, them joined, and the permutation).
pub(crate) fn shuffle_rows(schema: &SchemaRef, batches: Vec<RecordBatch>, rng: &mut impl Rng) -> Result<RecordBatch> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        return Ok(RecordBatch::new_empty(schema.clone()));
    }
    let order = UInt32Array::from(permutation(rows, rng));
    let columns: Vec<Mutex<Vec<ArrayRef>>> =
        (0..schema.fields().len()).map(|c| Mutex::new(batches.iter().map(|b| b.column(c).clone()).collect())).collect();
    drop(batches);
    let permuted = crate::parallel::map(&columns, |parts| {
        let whole = join(std::mem::take(&mut *parts.lock().unwrap_or_else(|e| e.into_inner())))?;
        Ok(take(&whole, &order, None)?)
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

/// One column's parts as one array (no copy when there is one part).
fn join(parts: Vec<ArrayRef>) -> Result<ArrayRef> {
    match parts.as_slice() {
        [one] => Ok(one.clone()),
        _ => Ok(concat(&parts.iter().map(|p| p.as_ref()).collect::<Vec<_>>())?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use rand::SeedableRng;
    use std::sync::Arc;

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
}
