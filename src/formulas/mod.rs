//! Pure formulas: what a method optimizes and the report measures, written once (`metrics`
//! holds the metrics of a release, which read a release back and apply these).
//!
//! Each is a function of numbers, histograms or released values ([`crate::release::Cell`]) and
//! nothing else: no table, no method state. `methods` and `metrics` both build on this module,
//! so "the algorithm optimizes what the report measures" holds by construction (IPA's IL scores
//! a node with the NCP and EMD `anon_metrics` reports; ArtUC's clustering uses the NCP and UL
//! the report gives; t-closeness checks the EMD the report shows). `src/verify` keeps its own
//! formulas on purpose: a checker that shared them could not catch a mistake in them.
//!
//! - [`ncp`]: Normalized Certainty Penalty (ArtUC Defs. 3–4, IPA Eqs. 5–6);
//! - [`emd`]: Earth Mover's Distance with the equal and the ordered ground distance (Li et al.);
//! - [`entropy`]: Shannon entropy of a histogram, in bits and in nats;
//! - [`ul`]: Utility Loss of a generalized diagnosis code and of a record (ArtUC Defs. 5–6).

pub mod emd;
pub(crate) mod entropy;
pub(crate) mod ncp;
pub mod ul;
