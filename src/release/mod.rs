//! What a method publishes and what a released value means, in one place.
//!
//! - [`Published`]: the released table of one call (schema, batches, the source columns left
//!   out), the one type every method returns for its release (entropy, ArtUC, IPA and the DP
//!   histogram; h-ceiling and `kanon_anonymize` return it from
//!   [`crate::encode::publish::ClassCells`], its release before the rows exist, h-ceiling
//!   plus its catalog). Side tables (reports, catalogs,
//!   diagnostics) are the glue's to build from a method's result.
//! - [`Cell`]: one quasi-identifier value of a released record (node, range, suppressed), as
//!   the readers decode it and as ArtUC's clusters carry it.
//! - [`cover`]: the one resolver from a released label or generalized code to the hierarchy
//!   leaves it covers, with its edge-case rules (dots, unknown codes) documented there.
//! - [`catalog`]: the one counterfeit-catalog reader and the one Fig. 4 real-record weighting.
//! - [`columns`]: reading a release's Arrow columns with errors that name them.
//! - [`labels`]: the type of a release's generalized label columns (`Dictionary(Int32, Utf8)`)
//!   and the one builder of them.
//!
//! Readers build on it: `metrics` decodes a release into cells (src/metrics/decode.rs), `eval`
//! into distributions (src/eval/dist.rs). `src/verify` does not: it reads releases and catalogs
//! with its own code on purpose (src/verify/mod.rs). This module depends on `hierarchy` and
//! `error` only, so methods, metrics and eval can all stand on it. (`crate::releases`, beside
//! it, is something else: the session's record of which registered tables are outputs.)

pub(crate) mod catalog;
mod cell;
pub(crate) mod columns;
pub(crate) mod cover;
pub(crate) mod labels;

pub use catalog::{CatalogRow, ClassValueCounts, decode_catalog};
pub(crate) use cell::Cell;
pub(crate) use cover::{LabelIndex, SUPPRESSED};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;

/// The released table of one call.
#[derive(Debug, Clone)]
pub struct Published {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    /// Source columns the release leaves out (neither identifier, quasi-identifier nor
    /// sensitive/informative).
    pub dropped: Vec<String>,
}

impl Published {
    /// The dropped source columns as a report's `dropped_columns` (None when none).
    pub(crate) fn dropped_columns(&self) -> Option<String> {
        dropped_list(&self.dropped)
    }
}

/// Dropped source columns as a report's `dropped_columns`: comma-separated, None when none.
pub(crate) fn dropped_list(dropped: &[String]) -> Option<String> {
    (!dropped.is_empty()).then(|| dropped.join(", "))
}
