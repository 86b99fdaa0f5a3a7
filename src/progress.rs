//! Progress of long searches, reported to whoever embeds the engine.
//!
//! Methods report through the session's [`Registry`](crate::Registry); nothing is shown unless
//! an embedder installs a reporter (the command-line tool installs a progress bar on stderr).
//! Reports carry counts of lattice nodes only, never data values.
//!
//! The reporter also carries the user's request to stop: every search ticks through
//! [`Progress::tick`], which fails with [`AnonError::Cancelled`] once [`Progress::cancelled`]
//! says so. The search then takes its ordinary failure path, so a cancelled call registers
//! nothing and returns its budget reservation.

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
        if self.cancelled() { Err(AnonError::Cancelled) } else { Ok(()) }
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
