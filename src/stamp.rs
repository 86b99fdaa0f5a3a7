//! What a table's contents are, as far as can be told without reading a row: the identity of
//! the table object and, for an in-memory table, of every column array of every batch. What
//! is computed from a table once per session (its frequency table, its privacy account, a
//! memoized release) is reused only while its [`ContentStamp`] still holds.
//!
//! Every column, not only the first: `UPDATE t SET b = ...` replaces column `b`'s arrays and
//! keeps the others' objects (DataFusion's in-memory table), so a stamp of the first column
//! took the updated table for the old one, and a second `kanon_anonymize` of it was built
//! from the frequency table of the rows before the update. Held weakly, not by address: a
//! weak reference keeps the array's allocation (not its buffers) from being reused, so an
//! array made after two updates cannot sit at the address of one the stamp saw and pass for
//! it, which a hash of addresses allowed.

use datafusion::arrow::array::Array;
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use std::sync::{Arc, Mutex, Weak};

/// A table's identity and, for an in-memory table, its contents' (see the module).
#[derive(Debug, Clone)]
pub struct ContentStamp {
    provider: Weak<dyn TableProvider>,
    contents: Contents,
}

#[derive(Debug, Clone)]
enum Contents {
    /// Not an in-memory table: assumed not to change in place (a file-backed table changed on
    /// disk is read again only once it is registered again).
    Opaque,
    /// Being written when stamped: matches nothing.
    Unknown,
    /// Per partition, per batch: its rows and its columns.
    Batches(Stamped),
}

impl ContentStamp {
    /// The stamp of `provider` now.
    pub fn of(provider: &Arc<dyn TableProvider>) -> Self {
        let contents = match provider.downcast_ref::<MemTable>() {
            None => Contents::Opaque,
            Some(mem) => batches_of(mem).map_or(Contents::Unknown, Contents::Batches),
        };
        ContentStamp { provider: Arc::downgrade(provider), contents }
    }

    /// Is `provider` the very table stamped, with the same contents?
    pub fn holds_for(&self, provider: &Arc<dyn TableProvider>) -> bool {
        if !self.is_of(provider) {
            return false;
        }
        match &self.contents {
            Contents::Opaque => true,
            Contents::Unknown => false,
            Contents::Batches(stamped) => {
                provider.downcast_ref::<MemTable>().is_some_and(|mem| same_batches(mem, stamped))
            }
        }
    }

    /// Is `provider` the very table stamped, whatever its contents now?
    pub fn is_of(&self, provider: &Arc<dyn TableProvider>) -> bool {
        // The weak reference keeps the stamped table's allocation, so an equal address is it.
        std::ptr::addr_eq(self.provider.as_ptr(), Arc::as_ptr(provider)) && self.is_alive()
    }

    /// Are the stamped table's rows in memory, so that any change of them ends the stamp?
    pub fn is_in_memory(&self) -> bool {
        matches!(self.contents, Contents::Batches(_))
    }

    /// Is the stamped table still alive (held by someone other than stamps)?
    pub fn is_alive(&self) -> bool {
        self.provider.strong_count() > 0
    }
}

/// A few values computed from tables (a frequency table, a privacy account), each kept with
/// the stamp its table had before it was read and a key of what else it depends on, and
/// given back only while the stamp holds. Entries of dropped tables, and of tables whose rows
/// changed, go when next looked at; past `capacity` the least recently used goes.
pub struct StampedCache<K, V> {
    entries: Mutex<Vec<(ContentStamp, K, V)>>,
    capacity: usize,
}

impl<K, V: Clone> StampedCache<K, V> {
    pub const fn new(capacity: usize) -> Self {
        StampedCache { entries: Mutex::new(Vec::new()), capacity }
    }

    /// The value kept for `provider` under a key `matches` accepts, if its stamp still holds;
    /// it becomes the most recently used.
    pub fn get(&self, provider: &Arc<dyn TableProvider>, matches: impl Fn(&K) -> bool) -> Option<V> {
        let mut entries = self.entries.lock().expect("stamped cache lock");
        // A stamp of this table that no longer holds never will again (its arrays are held).
        entries.retain(|(stamp, ..)| stamp.is_alive() && (!stamp.is_of(provider) || stamp.holds_for(provider)));
        let i = entries.iter().position(|(stamp, key, _)| matches(key) && stamp.is_of(provider))?;
        let entry = entries.remove(i);
        let value = entry.2.clone();
        entries.push(entry);
        Some(value)
    }

    /// Keep `value`, computed from the table `stamp` was taken of before it was read.
    pub fn put(&self, stamp: ContentStamp, key: K, value: V) {
        let mut entries = self.entries.lock().expect("stamped cache lock");
        while entries.len() >= self.capacity.max(1) {
            entries.remove(0);
        }
        entries.push((stamp, key, value));
    }
}

/// Per partition, its batches; per batch, its rows and its columns.
type Stamped = Vec<Vec<StampedBatch>>;
type StampedBatch = (usize, Vec<Weak<dyn Array>>);

/// Every batch's rows and columns, or `None` while a partition is being written.
fn batches_of(mem: &MemTable) -> Option<Stamped> {
    mem.batches
        .iter()
        .map(|part| {
            let batches = part.try_read().ok()?;
            Some(batches.iter().map(|b| (b.num_rows(), b.columns().iter().map(Arc::downgrade).collect())).collect())
        })
        .collect()
}

fn same_batches(mem: &MemTable, stamped: &Stamped) -> bool {
    mem.batches.len() == stamped.len()
        && mem.batches.iter().zip(stamped).all(|(part, stamped)| {
            let Ok(batches) = part.try_read() else {
                return false;
            };
            batches.len() == stamped.len()
                && batches.iter().zip(stamped).all(|(b, (rows, columns))| {
                    b.num_rows() == *rows
                        && b.num_columns() == columns.len()
                        && b.columns().iter().zip(columns).all(|(c, w)| std::ptr::addr_eq(w.as_ptr(), Arc::as_ptr(c)))
                })
        })
}

#[cfg(test)]
mod tests {
    use super::{ContentStamp, StampedCache};
    use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::catalog::TableProvider;
    use datafusion::datasource::MemTable;
    use datafusion::prelude::SessionContext;
    use std::sync::Arc;

    fn table() -> Arc<dyn TableProvider> {
        let b = RecordBatch::try_from_iter([
            ("a", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
            ("b", Arc::new(StringArray::from(vec!["x", "y", "z"])) as ArrayRef),
        ])
        .unwrap();
        Arc::new(MemTable::try_new(b.schema(), vec![vec![b]]).unwrap())
    }

    async fn run(ctx: &SessionContext, sql: &str) {
        ctx.sql(sql).await.unwrap().collect().await.unwrap();
    }

    /// An update of a column other than the first, an insert and a delete each end a stamp,
    /// twice over (the second update's arrays may be allocated where the first's old ones
    /// were); the same table untouched, or read, keeps it; another table never has it.
    #[tokio::test]
    async fn a_stamp_ends_with_any_change_of_the_rows() {
        let ctx = SessionContext::new();
        let t = table();
        ctx.register_table("t", t.clone()).unwrap();
        let first = ContentStamp::of(&t);
        run(&ctx, "SELECT * FROM t").await;
        assert!(first.holds_for(&t));
        assert!(!first.holds_for(&table()));
        run(&ctx, "UPDATE t SET b = 'w' WHERE a = 2").await;
        assert!(!first.holds_for(&t), "an update of the second column ends the stamp");
        let second = ContentStamp::of(&t);
        assert!(second.holds_for(&t));
        run(&ctx, "UPDATE t SET b = 'y' WHERE a = 2").await;
        assert!(!first.holds_for(&t) && !second.holds_for(&t), "the rows are the first's again, the arrays are not");
        let third = ContentStamp::of(&t);
        run(&ctx, "INSERT INTO t VALUES (4, 'v')").await;
        assert!(!third.holds_for(&t));
        let fourth = ContentStamp::of(&t);
        run(&ctx, "DELETE FROM t WHERE a = 1").await;
        assert!(!fourth.holds_for(&t));
        drop(ctx);
        let last = ContentStamp::of(&t);
        assert!(last.is_alive());
        drop(t);
        assert!(!last.is_alive());
    }

    /// A value comes back only for its key and its table's rows as stamped; past capacity the
    /// least recently used goes (a hit counts as a use); a dropped table's value goes.
    #[tokio::test]
    async fn a_stamped_cache_answers_for_the_rows_it_was_computed_from() {
        let ctx = SessionContext::new();
        let (t, u) = (table(), table());
        ctx.register_table("t", t.clone()).unwrap();
        let cache: StampedCache<&str, u32> = StampedCache::new(2);
        cache.put(ContentStamp::of(&t), "x", 1);
        cache.put(ContentStamp::of(&u), "x", 2);
        assert_eq!(cache.get(&t, |k| *k == "x"), Some(1));
        assert_eq!(cache.get(&t, |k| *k == "y"), None, "another key");
        assert_eq!(cache.get(&u, |k| *k == "x"), Some(2));
        assert_eq!(cache.get(&t, |k| *k == "x"), Some(1), "t's entry is now the most recent");
        cache.put(ContentStamp::of(&t), "y", 3);
        assert_eq!(cache.get(&u, |k| *k == "x"), None, "u's, least recently used, went");
        assert_eq!(cache.get(&t, |k| *k == "x"), Some(1));
        run(&ctx, "UPDATE t SET b = 'w' WHERE a = 2").await;
        assert_eq!(cache.get(&t, |_| true), None, "the update ends both of t's");
        assert_eq!(cache.entries.lock().unwrap().len(), 0, "and they go");
        let v = table();
        cache.put(ContentStamp::of(&v), "z", 4);
        cache.put(ContentStamp::of(&t), "x", 5);
        drop(v);
        assert_eq!(cache.get(&t, |k| *k == "x"), Some(5));
        assert_eq!(cache.entries.lock().unwrap().len(), 1, "entries of dropped tables go");
    }
}
