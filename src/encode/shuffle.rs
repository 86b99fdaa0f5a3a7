//! Row order of a release: a uniformly random permutation, the same rule for every method.
//!
//! A release whose rows keep the order of the source (or of anything computed from it, such as
//! classes formed in scan order) can be linked back row by row by anyone who holds the original
//! or a second release. Releases built in memory are permuted here, with the call's RNG: seeded
//! calls (tests) stay reproducible, unseeded ones draw from the OS. Releases written by a
//! DataFusion plan order their rows by `random()` in the plan instead ([`super::materialize`]).

use crate::error::Result;
use datafusion::arrow::array::{RecordBatch, UInt32Array};
use datafusion::arrow::compute::{concat_batches, take_record_batch};
use datafusion::arrow::datatypes::SchemaRef;
use rand::Rng;
use rand::seq::SliceRandom;

/// `batches` as one batch holding a uniformly random permutation of their rows. One batch, so
/// that reading it back (DataFusion may spread a table's batches over partitions and merge
/// them in whatever order they finish) shows the same order for the same seed.
pub(crate) fn shuffle_rows(schema: &SchemaRef, batches: &[RecordBatch], rng: &mut impl Rng) -> Result<RecordBatch> {
    let all = concat_batches(schema, batches)?;
    let mut order: Vec<u32> = (0..all.num_rows() as u32).collect();
    order.shuffle(rng);
    Ok(take_record_batch(&all, &UInt32Array::from(order))?)
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
}
