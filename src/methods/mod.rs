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
