//! Progress of long searches, reported to whoever embeds the engine.
//!
//! Methods report through the session's [`Registry`](crate::Registry); nothing is shown unless
//! an embedder installs a reporter (the command-line tool installs a progress bar on stderr).
//! Reports carry counts of lattice nodes only, never data values.
//!
//! The reporter also carries the user's request to stop: every search ticks through
//! [`Progress::tick`], which fails with [`AnonError::Cancelled`] once [`Progress::cancelled`]
//! says so. The search then takes its ordinary failure path, so a cancelled call registers
//! nothing and returns its budget reservation. Long loops that report no steps call
//! [`Progress::check`]; a differentially private method past its first noise draw calls
//! [`Progress::check_after_noise`] instead, which keeps the charge. The table functions also
//! race the DataFusion plans they await (reading, aggregating, materializing) against
//! `cancelled()` ([`crate::sql`]'s `block_on_cancellable`), so no method needs a checkpoint
//! inside a scan.

use crate::error::{AnonError, Result};
use std::sync::Arc;

pub trait Progress: Send + Sync + std::fmt::Debug {
    /// A task of `total` steps starts (`total` 0 when unknown).
    fn begin(&self, task: &str, total: u64);
    /// `n` more steps are done.
    fn advance(&self, n: u64);
    /// The task is over (finished or failed).
    fn finish(&self);
    /// Whether the user asked to stop the running statement (the CLI's Ctrl-C).
    fn cancelled(&self) -> bool {
        false
    }
    /// What searches call for each batch of steps: report them, then stop if cancelled.
    fn tick(&self, n: u64) -> Result<()> {
        self.advance(n);
        self.check()
    }
    /// A checkpoint in a long loop that reports no steps: stop if cancelled.
    fn check(&self) -> Result<()> {
        if self.cancelled() { Err(AnonError::Cancelled) } else { Ok(()) }
    }
    /// A checkpoint of a differentially private method once it has drawn noise: stop if
    /// cancelled, with [`AnonError::CancelledAfterNoise`], so the call's reservation is charged
    /// rather than returned (docs/dp.md, "Cancelling a release").
    fn check_after_noise(&self) -> Result<()> {
        if self.cancelled() { Err(AnonError::CancelledAfterNoise) } else { Ok(()) }
    }
}

/// The default: report nothing.
#[derive(Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

pub fn silent() -> Arc<dyn Progress> {
    Arc::new(Silent)
}
