//! Progress of long searches, reported to whoever embeds the engine.
//!
//! Methods report through the session's [`Registry`](crate::Registry); nothing is shown unless
//! an embedder installs a reporter (the command-line tool installs a progress bar on stderr).
//! Reports carry counts of lattice nodes only, never data values.

use std::sync::Arc;

pub trait Progress: Send + Sync + std::fmt::Debug {
    /// A task of `total` steps starts (`total` 0 when unknown).
    fn begin(&self, task: &str, total: u64);
    /// `n` more steps are done.
    fn advance(&self, n: u64);
    /// The task is over (finished or failed).
    fn finish(&self);
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
