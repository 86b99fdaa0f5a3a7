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
use crate::stamp::ContentStamp;
use datafusion::catalog::TableProvider;
use datafusion::prelude::SessionContext;
use std::sync::{Arc, Mutex};

/// Most frequency tables kept; the oldest goes first.
const ENTRIES: usize = 4;

struct Entry {
    session: String,
    table: String,
    stamp: ContentStamp,
    qis: Vec<(String, Arc<Hierarchy>)>,
    sensitive: Option<String>,
    ft: Arc<FrequencyTable>,
}

impl Entry {
    fn matches(
        &self,
        session: &str,
        table: &str,
        provider: &Arc<dyn TableProvider>,
        qis: &[(String, Arc<Hierarchy>)],
        sensitive: Option<&str>,
    ) -> bool {
        self.session == session
            && self.table == table
            && self.sensitive.as_deref() == sensitive
            && self.stamp.holds_for(provider)
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
    {
        let mut cache = CACHE.lock().expect("frequency cache lock");
        cache.retain(|e| e.stamp.is_alive());
        if let Some(i) = cache.iter().position(|e| e.matches(&session, table, provider, &qis, sensitive)) {
            let e = cache.remove(i);
            let ft = e.ft.clone();
            cache.push(e);
            return Ok(ft);
        }
    }
    // Stamped before the read: rows written meanwhile end the stamp, never join the table.
    let stamp = ContentStamp::of(provider);
    let ft = Arc::new(frequency_table_of(source, sensitive).await?);
    let mut cache = CACHE.lock().expect("frequency cache lock");
    if cache.len() >= ENTRIES {
        cache.remove(0);
    }
    cache.push(Entry {
        session,
        table: table.to_string(),
        stamp,
        qis,
        sensitive: sensitive.map(str::to_string),
        ft: ft.clone(),
    });
    Ok(ft)
}
