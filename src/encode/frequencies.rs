//! Frequency tables kept across calls of a session, so that anonymizing the same source again
//! (another k, model or metric) skips the aggregation, the expensive pass at 10^5–10^6 rows.
//!
//! An entry is reused only for the same session, table (its [`ContentStamp`]: the registered
//! table object, and for an in-memory table the arrays of its rows, which `INSERT INTO`,
//! `UPDATE` and `DELETE` change in place), quasi-identifiers with the very same hierarchy
//! objects (a redeclared hierarchy is a new object), and sensitive column. A few recent
//! entries are kept.

use super::source::Source;
use super::{FrequencyTable, frequency_table_of};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::meta::TableMeta;
use crate::stamp::{ContentStamp, StampedCache};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// What besides the table's rows a frequency table depends on.
struct Key {
    session: String,
    table: String,
    qis: Vec<(String, Arc<Hierarchy>)>,
    sensitive: Option<String>,
}

impl Key {
    fn matches(&self, session: &str, table: &str, qis: &[(String, Arc<Hierarchy>)], sensitive: Option<&str>) -> bool {
        self.session == session
            && self.table == table
            && self.sensitive.as_deref() == sensitive
            && self.qis.len() == qis.len()
            && self.qis.iter().zip(qis).all(|((n, h), (m, g))| n == m && Arc::ptr_eq(h, g))
    }
}

/// The four most recently used frequency tables.
static CACHE: StampedCache<Key, Arc<FrequencyTable>> = StampedCache::new(4);

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
    if let Some(ft) = CACHE.get(provider, |k| k.matches(&session, table, &qis, sensitive)) {
        return Ok(ft);
    }
    // Stamped before the read: rows written meanwhile end the stamp, never join the table.
    let stamp = ContentStamp::of(provider);
    let ft = Arc::new(frequency_table_of(source, sensitive).await?);
    let key = Key { session, table: table.to_string(), qis, sensitive: sensitive.map(str::to_string) };
    CACHE.put(stamp, key, ft.clone());
    Ok(ft)
}
