//! Row order of a release: a uniformly random permutation, the same rule for every method.
//!
//! A release whose rows keep the order of the source (or of anything computed from it, such as
//! classes formed in scan order) can be linked back row by row by anyone who holds the original
//! or a second release. Releases built in memory are permuted here, with the call's RNG: seeded
//! calls (tests) stay reproducible, unseeded ones draw from the OS. Releases written by a
//! DataFusion plan order their rows by `random()` in the plan instead ([`super::materialize`]).

use crate::error::Result;
use datafusion::arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::{concat, interleave};
use datafusion::arrow::datatypes::SchemaRef;
use rand::Rng;
use rand::seq::SliceRandom;

/// Rows of the permutation one job gathers: the gather reads rows at random, so it is the
/// costly pass, and small pieces spread it over every core.
const PIECE_ROWS: usize = 1 << 16;

/// `batches` as one batch holding a uniformly random permutation of their rows. One batch, so
/// that reading it back (DataFusion may spread a table's batches over partitions and merge
/// them in whatever order they finish) shows the same order for the same seed.
///
/// The permutation is drawn on the caller's thread (the same draws whatever the threads); the
/// rows are gathered piece by piece on the process's pool straight from `batches` (no copy of
/// them concatenated first), and each column's pieces are joined in order.
pub(crate) fn shuffle_rows(schema: &SchemaRef, batches: &[RecordBatch], rng: &mut impl Rng) -> Result<RecordBatch> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        return Ok(RecordBatch::new_empty(schema.clone()));
    }
    let order = permutation(rows, rng);
    let starts: Vec<usize> = batches.iter().scan(0, |at, b| Some(std::mem::replace(at, *at + b.num_rows()))).collect();
    let pieces: Vec<&[u32]> = order.chunks(PIECE_ROWS).collect();
    let gathered = crate::parallel::map(&pieces, |piece| gather(schema, batches, &starts, piece));
    let gathered: Vec<Vec<ArrayRef>> = gathered.into_iter().collect::<Result<_>>()?;
    let columns: Vec<usize> = (0..schema.fields().len()).collect();
    let joined = crate::parallel::map(&columns, |&c| join(gathered.iter().map(|g| g[c].as_ref())));
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(schema.clone(), joined.into_iter().collect::<Result<_>>()?, &options)?)
}

/// A uniformly random order of `rows` rows: row `i` of a release is row `order[i]` of what
/// the method built. Drawn on the caller's thread, so the same draws whatever the threads.
pub(crate) fn permutation(rows: usize, rng: &mut impl Rng) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rows as u32).collect();
    order.shuffle(rng);
    order
}

/// Every column's rows `piece` (indices over the batches laid end to end, `starts` their first
/// rows), in that order.
fn gather(schema: &SchemaRef, batches: &[RecordBatch], starts: &[usize], piece: &[u32]) -> Result<Vec<ArrayRef>> {
    let at: Vec<(usize, usize)> = piece
        .iter()
        .map(|&i| {
            let b = starts.partition_point(|&s| s <= i as usize) - 1;
            (b, i as usize - starts[b])
        })
        .collect();
    (0..schema.fields().len())
        .map(|c| {
            let arrays: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            Ok(interleave(&arrays, &at)?)
        })
        .collect()
}

/// One column's pieces as one array (no copy when there is one piece).
fn join<'a>(pieces: impl Iterator<Item = &'a dyn Array>) -> Result<ArrayRef> {
    let pieces: Vec<&dyn Array> = pieces.collect();
    match pieces.as_slice() {
        [one] => Ok(one.slice(0, one.len())),
        _ => Ok(concat(&pieces)?),
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
            let b = shuffle_rows(&schema, &batches, &mut rng).unwrap();
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

    /// Gathered in pieces on the pool, the rows come out in the order one `take` over the
    /// concatenated batches gives for the same draws: uneven batches, an empty one, strings,
    /// several pieces.
    #[test]
    fn pieces_gathered_in_parallel_match_one_take() {
        use datafusion::arrow::array::{StringArray, UInt32Array};
        use datafusion::arrow::compute::{concat_batches, take_record_batch};
        let schema =
            Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]));
        let batch = |r: std::ops::Range<i64>| {
            let s: StringArray = r.clone().map(|i| (i % 5 != 0).then(|| format!("v{}", i % 97))).collect();
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(r)), Arc::new(s)]).unwrap()
        };
        let batches = [batch(0..70_000), batch(70_000..70_000), batch(70_000..150_001), batch(150_001..150_010)];
        let got = shuffle_rows(&schema, &batches, &mut rand::rngs::StdRng::seed_from_u64(3)).unwrap();
        let mut order: Vec<u32> = (0..150_010).collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(3));
        let all = concat_batches(&schema, &batches).unwrap();
        assert_eq!(got, take_record_batch(&all, &UInt32Array::from(order)).unwrap());
        assert_eq!(shuffle_rows(&schema, &[], &mut rand::rngs::StdRng::seed_from_u64(3)).unwrap().num_rows(), 0);
    }
}
