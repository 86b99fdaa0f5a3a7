//! The engine's session settings, as DataFusion configuration (`SET anonfusion.<key> = <value>`,
//! `SHOW anonfusion.<key>`), registered on every session so that they are per session and never
//! outlive it:
//!
//! - `anonfusion.seeded_dp` (default `false`): whether a differentially private call may take a
//!   `seed=`. A seeded DP release is a test fixture, not a private release (the noise can be
//!   recomputed from the seed), so it is refused unless a session asks for it on purpose; with
//!   the setting on, every label it writes says it is not private.

use crate::error::{AnonError, Result};
use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;
use datafusion::prelude::SessionContext;

extensions_options! {
    /// The `anonfusion.*` session settings.
    pub struct Settings {
        /// Allow `seed=` in differentially private calls (tests only: such releases are not private).
        pub seeded_dp: bool, default = false
    }
}

impl ConfigExtension for Settings {
    const PREFIX: &'static str = "anonfusion";
}

/// Add the settings (at their defaults) to `ctx`'s configuration unless a session builder already did.
pub(crate) fn register(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut state = state.write();
    let options = state.config_mut().options_mut();
    if options.extensions.get::<Settings>().is_none() {
        options.extensions.insert(Settings::default());
    }
}

/// The session's settings (the defaults when none were registered).
pub(crate) fn of(ctx: &SessionContext) -> Settings {
    ctx.state().config().options().extensions.get::<Settings>().cloned().unwrap_or_default()
}

/// Refuse a seeded differentially private call unless the session allows it.
pub(crate) fn check_seeded_dp(ctx: &SessionContext, function: &str) -> Result<()> {
    if of(ctx).seeded_dp {
        return Ok(());
    }
    Err(AnonError::argument(
        function,
        "seed",
        "a seeded differentially private call is not private (its noise can be recomputed from the seed), so it \
         is for tests only: run SET anonfusion.seeded_dp = true first to make one, labelled not private; leave \
         seed= out for a private release",
    ))
}
