//! Frequency tables kept across calls of a session, so that anonymizing the same source again
//! (another k, model or metric) skips the aggregation, the expensive pass at 10^5–10^6 rows.
//!
//! An entry is reused only for the same session, table provider (the registered table
//! object, held weakly so a dropped or replaced table is never matched), quasi-identifiers
//! with the very same hierarchy objects (a redeclared hierarchy is a new object), and
//! sensitive column, and the same [`content_version`] (an in-memory table grows in place on
//! `INSERT INTO`). A few recent entries are kept.

use super::source::Source;
use super::{FrequencyTable, frequency_table_of};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::meta::TableMeta;
use datafusion::catalog::TableProvider;
use datafusion::prelude::SessionContext;
use std::sync::{Arc, Mutex, Weak};

/// Most frequency tables kept; the oldest goes first.
const ENTRIES: usize = 4;

struct Entry {
    session: String,
    table: String,
    provider: Weak<dyn TableProvider>,
    qis: Vec<(String, Arc<Hierarchy>)>,
    sensitive: Option<String>,
    version: u64,
    ft: Arc<FrequencyTable>,
}

/// A version of a table's contents where one can be had cheaply: for an in-memory table, a hash
/// of its batches' identities and sizes (batches are immutable; `INSERT INTO` adds some, a
/// replaced table has others). Other providers give 0: they are assumed not to change in place.
pub fn content_version(provider: &Arc<dyn TableProvider>) -> u64 {
    use std::hash::{Hash, Hasher};
    let Some(mem) = provider.downcast_ref::<datafusion::datasource::MemTable>() else {
        return 0;
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for part in &mem.batches {
        // Being written right now: a version no cached entry has.
        let Ok(batches) = part.try_read() else {
            return u64::MAX;
        };
        batches.len().hash(&mut h);
        for b in batches.iter() {
            (b.num_rows(), b.columns().first().map(|c| Arc::as_ptr(c) as *const () as usize)).hash(&mut h);
        }
    }
    h.finish()
}

impl Entry {
    fn matches(
        &self,
        session: &str,
        table: &str,
        provider: &Arc<dyn TableProvider>,
        qis: &[(String, Arc<Hierarchy>)],
        sensitive: Option<&str>,
        version: u64,
    ) -> bool {
        self.version == version
            && self.session == session
            && self.table == table
            && self.sensitive.as_deref() == sensitive
            && self.provider.strong_count() > 0
            && std::ptr::addr_eq(self.provider.as_ptr(), Arc::as_ptr(provider))
            && self.qis.len() == qis.len()
            && self.qis.iter().zip(qis).all(|((n, h), (m, g))| n == m && Arc::ptr_eq(h, g))
    }
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The frequency table of `table` ([`frequency_table`]), aggregated once per session while
/// the table and its declarations stay the same.
pub async fn cached_frequency_table(
    ctx: &SessionContext,
    table: &str,
    meta: &TableMeta,
    sensitive: Option<&str>,
) -> Result<Arc<FrequencyTable>> {
    cached_frequency_table_of(&Source::of(ctx, table, meta).await?, sensitive).await
}

/// [`cached_frequency_table`] of a read [`Source`].
pub(crate) async fn cached_frequency_table_of(source: &Source, sensitive: Option<&str>) -> Result<Arc<FrequencyTable>> {
    let (table, meta, provider) = (source.name(), source.meta(), source.provider());
    let mut qis = Vec::new();
    for q in meta.quasi_identifiers() {
        qis.push((q.to_string(), meta.hierarchy(table, q)?.clone()));
    }
    let session = source.session_id();
    let version = content_version(provider);
    {
        let mut cache = CACHE.lock().expect("frequency cache lock");
        cache.retain(|e| e.provider.strong_count() > 0);
        if let Some(i) = cache.iter().position(|e| e.matches(&session, table, provider, &qis, sensitive, version)) {
            let e = cache.remove(i);
            let ft = e.ft.clone();
            cache.push(e);
            return Ok(ft);
        }
    }
    let ft = Arc::new(frequency_table_of(source, sensitive).await?);
    let mut cache = CACHE.lock().expect("frequency cache lock");
    if cache.len() >= ENTRIES {
        cache.remove(0);
    }
    cache.push(Entry {
        session,
        table: table.to_string(),
        provider: Arc::downgrade(provider),
        qis,
        sensitive: sensitive.map(str::to_string),
        version,
        ft: ft.clone(),
    });
    Ok(ft)
}
