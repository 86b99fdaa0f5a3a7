//! The account a table's releases are charged to: a fingerprint of the rows of the columns a
//! differentially private release reads (the quasi-identifiers and the informative attribute),
//! independent of the table's name, of its other columns, of the order of its rows and columns
//! and of how the values are stored. The columns are taken in the order of their names, and
//! every number as a double, so `SELECT` of a subset, a reordering, an added or dropped column
//! the release does not read, `CAST(id AS DOUBLE)` of such a column, or an `INT` read column
//! stored as `BIGINT` or `DOUBLE` all reach the same account (docs/dp.md says what still opens
//! a new one).
//!
//! Each row is hashed to 128 bits (its columns in order, each value canonicalized: integers of
//! any width alike, strings of any Arrow encoding alike, -0.0 as 0.0, one NULL marker) and the
//! row hashes are added modulo 2^128. A sum is order-independent and merges across partitions,
//! so the fingerprint is one DataFusion aggregation (`anon_fingerprint`, registered on every
//! session so a Ballista executor can run it too). Two different row multisets collide with
//! probability about 2^-128 for data nobody crafted to collide; the hash is not keyed, so it
//! protects against mistakes and casual reuse (a copy, a rename, a reload), not against someone
//! who edits rows on purpose: one changed row is a different account.

use crate::error::{AnonError, Result};
use crate::stamp::{ContentStamp, StampedCache};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Float64Type, Int64Type, UInt64Type};
use datafusion::catalog::TableProvider;
use datafusion::common::ScalarValue;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{Accumulator, AggregateUDF, AggregateUDFImpl, Expr, Signature, Volatility};
use datafusion::prelude::{SessionContext, lit};
use std::sync::Arc;

/// The name of the aggregate in SQL and in plans.
pub const FINGERPRINT_FUNCTION: &str = "anon_fingerprint";

/// A table's account: the fingerprint of its rows, and the name it was reached under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// 32 hex digits.
    pub fingerprint: String,
    pub rows: u64,
    /// The name the caller used; the ledger lists every name an account was seen under.
    pub table: String,
}

/// The account of `table` as read through `columns` (the columns a DP release of it reads):
/// one aggregation pass over its rows, or none where the same in-memory table with the same
/// rows was fingerprinted through the same columns before ([`ACCOUNTS`]): a table's
/// `set_privacy_budget` and each of its DP releases read the same account, and the pass is a
/// third of an `ipa_release` of 5 M rows on one core.
pub async fn account_of(ctx: &SessionContext, table: &str, columns: &[&str]) -> Result<Account> {
    let provider = ctx.table_provider(table).await.map_err(|_| AnonError::table(table, "not found"))?;
    let mut names = columns.to_vec();
    names.sort_unstable();
    names.dedup();
    if let Some((fingerprint, rows)) = kept_account(&provider, &names) {
        return Ok(Account { fingerprint, rows, table: table.to_string() });
    }
    // Stamped before the read: rows written meanwhile end the stamp, never join the account.
    let stamp = ContentStamp::of(&provider);
    let account = fingerprint_pass(ctx, table, &names).await?;
    if stamp.is_in_memory() {
        let columns = names.iter().map(|n| n.to_string()).collect();
        ACCOUNTS.put(stamp, columns, (account.fingerprint.clone(), account.rows));
    }
    Ok(account)
}

/// The aggregation pass of [`account_of`] over `names` (sorted, distinct).
async fn fingerprint_pass(ctx: &SessionContext, table: &str, names: &[&str]) -> Result<Account> {
    let df = ctx.table(table).await.map_err(|_| AnonError::table(table, "not found"))?;
    if names.is_empty() {
        return Err(AnonError::table(table, "has no columns to fingerprint"));
    }
    let columns = names
        .iter()
        .map(|&name| {
            let field = df.schema().field_with_unqualified_name(name).map_err(|_| {
                AnonError::column(table, name, "is not a column of the table (the privacy account reads it)")
            })?;
            let c = datafusion::prelude::ident(name);
            // 5, 5.0 and CAST(5 AS BIGINT) are one value to a release.
            Ok(if field.data_type().is_numeric() { datafusion::prelude::cast(c, DataType::Float64) } else { c })
        })
        .collect::<Result<Vec<Expr>>>()?;
    let batches = df
        .aggregate(vec![], vec![fingerprint_udaf().call(columns).alias("fp"), count(lit(1)).alias("n")])?
        .collect()
        .await?;
    let batch = batches.iter().find(|b| b.num_rows() > 0).ok_or_else(|| AnonError::table(table, "no fingerprint"))?;
    let fp = cast(batch.column(0), &DataType::Utf8)?;
    let n = cast(batch.column(1), &DataType::UInt64)?;
    Ok(Account {
        fingerprint: fp.as_string::<i32>().value(0).to_string(),
        rows: n.as_primitive::<UInt64Type>().value(0),
        table: table.to_string(),
    })
}

/// The accounts of in-memory tables fingerprinted in this process, while each table holds its
/// [`ContentStamp`] (the same table object with the same arrays: `INSERT`, `UPDATE` and
/// `DELETE` end it), keyed by the columns read (sorted): (fingerprint, rows). Only in-memory
/// tables: a file-backed table's rows can change on disk without a sign, and an account is
/// what the budget is kept by. The four most recently used.
static ACCOUNTS: StampedCache<Vec<String>, (String, u64)> = StampedCache::new(4);

/// (fingerprint, rows) of `provider` read through `names`, if kept and still its rows.
fn kept_account(provider: &Arc<dyn TableProvider>, names: &[&str]) -> Option<(String, u64)> {
    ACCOUNTS.get(provider, |columns| columns.iter().map(String::as_str).eq(names.iter().copied()))
}

/// The `anon_fingerprint(col, ...)` aggregate.
pub fn fingerprint_udaf() -> Arc<AggregateUDF> {
    Arc::new(AggregateUDF::new_from_impl(Fingerprint { signature: Signature::variadic_any(Volatility::Immutable) }))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Fingerprint {
    signature: Signature,
}

impl AggregateUDFImpl for Fingerprint {
    fn name(&self) -> &str {
        FINGERPRINT_FUNCTION
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> datafusion::error::Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn accumulator(&self, _: AccumulatorArgs) -> datafusion::error::Result<Box<dyn Accumulator>> {
        Ok(Box::<RowSum>::default())
    }

    fn state_fields(&self, args: StateFieldsArgs) -> datafusion::error::Result<Vec<FieldRef>> {
        Ok(["rows", "sum_hi", "sum_lo"]
            .iter()
            .map(|s| Arc::new(Field::new(format!("{}_{s}", args.name), DataType::UInt64, false)))
            .collect())
    }
}

/// Rows seen and the sum of their hashes mod 2^128.
#[derive(Debug, Default)]
struct RowSum {
    rows: u64,
    sum: u128,
}

impl Accumulator for RowSum {
    fn update_batch(&mut self, values: &[ArrayRef]) -> datafusion::error::Result<()> {
        let n = values.first().map_or(0, |a| a.len());
        let mut lanes = vec![SEEDS; n];
        for column in values {
            absorb_column(&mut lanes, column)?;
        }
        for l in &lanes {
            self.sum = self.sum.wrapping_add(finish(l));
        }
        self.rows += n as u64;
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> datafusion::error::Result<()> {
        let col = |i: usize| states[i].as_primitive::<UInt64Type>();
        let (rows, hi, lo) = (col(0), col(1), col(2));
        for i in 0..rows.len() {
            self.rows += rows.value(i);
            self.sum = self.sum.wrapping_add((u128::from(hi.value(i)) << 64) | u128::from(lo.value(i)));
        }
        Ok(())
    }

    fn state(&mut self) -> datafusion::error::Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::UInt64(Some(self.rows)),
            ScalarValue::UInt64(Some((self.sum >> 64) as u64)),
            ScalarValue::UInt64(Some(self.sum as u64)),
        ])
    }

    fn evaluate(&mut self) -> datafusion::error::Result<ScalarValue> {
        // The row count is folded in so that tables whose hashes happen to sum alike but differ
        // in size (the empty table and a zero sum) still differ.
        let count = fmix(self.rows ^ 0x5851_F42D_4C95_7F2D);
        let hi = fmix((self.sum >> 64) as u64 ^ count);
        let lo = fmix(self.sum as u64 ^ count.rotate_left(32));
        Ok(ScalarValue::Utf8(Some(format!("{hi:016x}{lo:016x}"))))
    }

    fn size(&self) -> usize {
        size_of_val(self)
    }
}

/// Two 64-bit lanes per row, mixed differently, give 128 bits.
const SEEDS: [u64; 2] = [0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344];

/// Type tags, so that 1, 1.0, "1" and NULL hash apart. The values are part of every stored
/// fingerprint (the ledger file keeps them across restarts): never renumber.
#[derive(Clone, Copy)]
#[repr(u64)]
enum Tag {
    Null = 0x6e,
    Int = 0x69,
    Float = 0x66,
    Bool = 0x62,
    String = 0x73,
    Bytes = 0x79,
    Other = 0x6f,
}

#[inline]
fn absorb(l: &mut [u64; 2], w: u64) {
    l[0] = (l[0] ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(31);
    l[1] = (l[1].rotate_left(23) ^ w).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
}

/// MurmurHash3's 64-bit finalizer: a bijection with full avalanche.
fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

fn finish(l: &[u64; 2]) -> u128 {
    (u128::from(fmix(l[0])) << 64) | u128::from(fmix(l[1] ^ l[0].rotate_left(17)))
}

fn absorb_bytes(l: &mut [u64; 2], tag: Tag, bytes: &[u8]) {
    absorb(l, tag as u64);
    absorb(l, bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        absorb(l, u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        absorb(l, u64::from_le_bytes(w));
    }
}

/// Fold one column's values into every row's lanes.
fn absorb_column(lanes: &mut [[u64; 2]], a: &ArrayRef) -> datafusion::error::Result<()> {
    use DataType::*;
    let nulls = |lanes: &mut [[u64; 2]]| {
        for (i, l) in lanes.iter_mut().enumerate() {
            if a.is_null(i) {
                absorb(l, Tag::Null as u64);
            }
        }
    };
    match a.data_type() {
        Null => lanes.iter_mut().for_each(|l| absorb(l, Tag::Null as u64)),
        Int8 | Int16 | Int32 | Int64 => {
            let v = cast(a, &Int64)?;
            for (l, x) in lanes.iter_mut().zip(v.as_primitive::<Int64Type>().iter()) {
                if let Some(x) = x {
                    absorb(l, Tag::Int as u64);
                    absorb(l, x as u64);
                    absorb(l, if x < 0 { u64::MAX } else { 0 });
                }
            }
            nulls(lanes);
        }
        UInt8 | UInt16 | UInt32 | UInt64 => {
            let v = cast(a, &UInt64)?;
            for (l, x) in lanes.iter_mut().zip(v.as_primitive::<UInt64Type>().iter()) {
                if let Some(x) = x {
                    absorb(l, Tag::Int as u64);
                    absorb(l, x);
                    absorb(l, 0);
                }
            }
            nulls(lanes);
        }
        Float16 | Float32 | Float64 => {
            let v = cast(a, &Float64)?;
            for (l, x) in lanes.iter_mut().zip(v.as_primitive::<Float64Type>().iter()) {
                if let Some(x) = x {
                    let x = if x == 0.0 {
                        0.0
                    } else if x.is_nan() {
                        f64::NAN
                    } else {
                        x
                    };
                    absorb(l, Tag::Float as u64);
                    absorb(l, x.to_bits());
                }
            }
            nulls(lanes);
        }
        Boolean => {
            for (l, x) in lanes.iter_mut().zip(a.as_boolean().iter()) {
                if let Some(x) = x {
                    absorb(l, Tag::Bool as u64);
                    absorb(l, x as u64);
                }
            }
            nulls(lanes);
        }
        Utf8 => strings(lanes, a.as_string::<i32>().iter()),
        LargeUtf8 => strings(lanes, a.as_string::<i64>().iter()),
        Utf8View => strings(lanes, a.as_string_view().iter()),
        Binary => bytes(lanes, Tag::Bytes, a.as_binary::<i32>().iter()),
        LargeBinary => bytes(lanes, Tag::Bytes, a.as_binary::<i64>().iter()),
        BinaryView => bytes(lanes, Tag::Bytes, a.as_binary_view().iter()),
        Dictionary(_, value) => absorb_column(lanes, &cast(a, value)?)?,
        // Dates, times, decimals, nested values: by their display, which Arrow defines for all.
        _ => {
            let v = cast(a, &Utf8)?;
            let s: &StringArray = v.as_string::<i32>();
            for (l, x) in lanes.iter_mut().zip(s.iter()) {
                match x {
                    Some(x) => absorb_bytes(l, Tag::Other, x.as_bytes()),
                    None => absorb(l, Tag::Null as u64),
                }
            }
        }
    }
    Ok(())
}

fn strings<'a>(lanes: &mut [[u64; 2]], values: impl Iterator<Item = Option<&'a str>>) {
    bytes(lanes, Tag::String, values.map(|v| v.map(str::as_bytes)))
}

fn bytes<'a>(lanes: &mut [[u64; 2]], tag: Tag, values: impl Iterator<Item = Option<&'a [u8]>>) {
    for (l, x) in lanes.iter_mut().zip(values) {
        match x {
            Some(x) => absorb_bytes(l, tag, x),
            None => absorb(l, Tag::Null as u64),
        }
    }
}

/// For tests of the accumulator alone: the fingerprint of one batch of columns.
#[cfg(test)]
fn of_columns(columns: &[ArrayRef]) -> String {
    let mut acc = RowSum::default();
    acc.update_batch(columns).unwrap();
    match acc.evaluate().unwrap() {
        ScalarValue::Utf8(Some(s)) => s,
        other => panic!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        DictionaryArray, Float64Array, Int32Array, Int64Array, StringViewArray, UInt64Array,
    };

    /// A table's account is read once while its rows stay the same, and read again after an
    /// `UPDATE` of a column it reads that is not the table's first (whose arrays stay the
    /// same objects): before, a stale account would charge the updated rows to the old one's
    /// budget. A projection through other columns is another account.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_account_is_read_again_only_when_its_rows_change() {
        let ctx = SessionContext::new();
        let b = datafusion::arrow::record_batch::RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
            ("dx", Arc::new(StringArray::from(vec!["flu", "flu", "cold"])) as ArrayRef),
        ])
        .unwrap();
        let t: Arc<dyn TableProvider> =
            Arc::new(datafusion::datasource::MemTable::try_new(b.schema(), vec![vec![b]]).unwrap());
        ctx.register_table("visits", t.clone()).unwrap();
        let before = account_of(&ctx, "visits", &["dx"]).await.unwrap();
        assert_eq!(kept_account(&t, &["dx"]), Some((before.fingerprint.clone(), 3)), "kept for the next call");
        assert_eq!(account_of(&ctx, "visits", &["dx"]).await.unwrap(), before);
        assert!(kept_account(&t, &["dx", "id"]).is_none(), "other columns, another account");
        ctx.sql("UPDATE visits SET dx = 'cold' WHERE id = 1").await.unwrap().collect().await.unwrap();
        assert!(kept_account(&t, &["dx"]).is_none(), "the update ends the kept account");
        let after = account_of(&ctx, "visits", &["dx"]).await.unwrap();
        assert_ne!(after.fingerprint, before.fingerprint);
        let fresh = fingerprint_pass(&ctx, "visits", &["dx"]).await.unwrap();
        assert_eq!(after, fresh, "the account of the rows as they are");
    }

    /// A ledger file written by an earlier build names its accounts by these fingerprints, so
    /// the value of a fixed table is pinned: a change to the tags, seeds or mixing fails here.
    #[test]
    fn fingerprints_are_stable_across_builds() {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![Some(1), Some(-2), None])),
            Arc::new(Float64Array::from(vec![Some(0.5), None, Some(-0.0)])),
            Arc::new(StringArray::from(vec![Some("flu"), Some(""), None])),
            Arc::new(datafusion::arrow::array::BooleanArray::from(vec![Some(true), None, Some(false)])),
        ];
        assert_eq!(of_columns(&columns), "9ca68596bb57e42433d4c36b6305c15a");
    }
    use datafusion::arrow::datatypes::Int8Type;

    fn cols(ints: &[Option<i64>], strs: &[Option<&str>]) -> Vec<ArrayRef> {
        vec![Arc::new(Int64Array::from(ints.to_vec())), Arc::new(StringArray::from(strs.to_vec()))]
    }

    #[test]
    fn row_order_and_encodings_do_not_matter() {
        let a = of_columns(&cols(&[Some(1), Some(2), None], &[Some("x"), None, Some("zz")]));
        let shuffled = of_columns(&cols(&[None, Some(1), Some(2)], &[Some("zz"), Some("x"), None]));
        assert_eq!(a, shuffled);
        let other_encodings: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(2), None, Some(1)])),
            Arc::new(DictionaryArray::<Int8Type>::from_iter([None, Some("zz"), Some("x")])),
        ];
        assert_eq!(a, of_columns(&other_encodings));
        let view: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![Some(1), Some(2), None])),
            Arc::new(StringViewArray::from(vec![Some("x"), None, Some("zz")])),
        ];
        assert_eq!(a, of_columns(&view));
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn a_changed_row_a_moved_value_or_a_duplicate_is_another_account() {
        let a = of_columns(&cols(&[Some(1), Some(2)], &[Some("x"), Some("y")]));
        for other in [
            cols(&[Some(1), Some(3)], &[Some("x"), Some("y")]),
            cols(&[Some(1), Some(2)], &[Some("y"), Some("x")]),
            cols(&[Some(1), Some(2), Some(2)], &[Some("x"), Some("y"), Some("y")]),
            cols(&[Some(1), None], &[Some("x"), Some("y")]),
            cols(&[Some(1), Some(2)], &[Some("x"), Some("y\0")]),
        ] {
            assert_ne!(a, of_columns(&other));
        }
        // Value and type: 1 and 1.0 and "1" differ; -0.0 is 0.0.
        let one = |a: ArrayRef| of_columns(&[a]);
        let int = one(Arc::new(Int64Array::from(vec![1])));
        assert_ne!(int, one(Arc::new(Float64Array::from(vec![1.0]))));
        assert_ne!(int, one(Arc::new(StringArray::from(vec!["1"]))));
        assert_eq!(one(Arc::new(Float64Array::from(vec![0.0]))), one(Arc::new(Float64Array::from(vec![-0.0]))));
        // The empty table has a fingerprint of its own.
        assert_ne!(one(Arc::new(Int64Array::from(Vec::<i64>::new()))), int);
    }

    #[test]
    fn partial_states_merge_to_the_whole() {
        let whole = of_columns(&cols(&[Some(1), Some(2), Some(3)], &[Some("a"), Some("b"), Some("c")]));
        let mut a = RowSum::default();
        a.update_batch(&cols(&[Some(3)], &[Some("c")])).unwrap();
        let mut b = RowSum::default();
        b.update_batch(&cols(&[Some(1), Some(2)], &[Some("a"), Some("b")])).unwrap();
        let states: Vec<ArrayRef> = b.state().unwrap().into_iter().map(|s| s.to_array().unwrap()).collect::<Vec<_>>();
        a.merge_batch(&states).unwrap();
        assert_eq!(
            whole,
            match a.evaluate().unwrap() {
                ScalarValue::Utf8(Some(s)) => s,
                other => panic!("{other:?}"),
            }
        );
        let _: &UInt64Array = states[0].as_primitive::<UInt64Type>();
    }
}
