//! One folder per method (paper).

pub mod artuc;
pub(crate) mod contract;
pub mod entropy;
pub mod hceil;
pub mod ipa;
pub mod kanon;
pub(crate) mod options;
pub mod rmr;
pub mod synth;

/// Wall time of each pass of a lattice method, in milliseconds: the two raw-data passes
/// (aggregation into the frequency table, materialization of the release), which run
/// wherever the session runs its plans (a Ballista cluster, docs/scale-out.md), and the search
/// between them, which always runs in the client. Reported by the methods' `_report` tables.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PassTimes {
    pub(crate) aggregate_ms: f64,
    pub(crate) search_ms: f64,
    pub(crate) materialize_ms: f64,
}

impl PassTimes {
    /// Milliseconds since `start`.
    pub(crate) fn since(start: std::time::Instant) -> f64 {
        start.elapsed().as_secs_f64() * 1e3
    }
}

/// Refuse a `k` the table cannot meet: more than its records, or any k on an empty table (no
/// class can hold k records of nothing). `function` names the caller in the error.
pub(crate) fn check_k_fits(function: &str, k: u64, records: u64) -> crate::error::Result<()> {
    let why = match records {
        0 => "the table is empty: there are no records to anonymize".to_string(),
        n if k > n => format!("k = {k} is larger than the table ({n} records)"),
        _ => return Ok(()),
    };
    Err(crate::error::AnonError::argument(function, "k", why))
}
