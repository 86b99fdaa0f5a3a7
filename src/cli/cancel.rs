//! Ctrl-C in the REPL cancels the running statement, never the session.
//!
//! While a statement runs the terminal is in cooked mode, so Ctrl-C arrives as SIGINT, whose
//! default action would end the process with every loaded table, release and ledger entry of
//! the session. The REPL installs a handler that only records the request; two places act on
//! it:
//! - a statement's future (planning and DataFusion's streams) is raced against [`requested`]
//!   and dropped when it is set, which aborts the streams' tasks;
//! - a table function runs its search inside planning on a blocked worker, where the race is
//!   not polled; the searches tick through the session's progress reporter, whose
//!   `cancelled()` reads the same flag ([`super::progress::Bar`]), and fail with "cancelled by
//!   the user", taking their ordinary failure path (nothing registered, no budget spent).
//!
//! While rustyline reads a line the terminal is raw and Ctrl-C is a key it handles itself.

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// How often a running statement looks at the flag: quick enough to feel immediate, rare
/// enough to cost nothing (a signal handler may not wake a future itself).
const POLL: Duration = Duration::from_millis(50);

extern "C" fn on_sigint(_: nix::libc::c_int) {
    // An atomic store is async-signal-safe.
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Make SIGINT a request to cancel (the REPL only: scripts and pipes keep the default).
pub(crate) fn install() -> Result<(), String> {
    let action = SigAction::new(SigHandler::Handler(on_sigint), SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { sigaction(Signal::SIGINT, &action) }.map(|_| ()).map_err(|e| format!("cannot handle Ctrl-C: {e}"))
}

/// Whether Ctrl-C was pressed since the running statement started.
pub(crate) fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Forget an earlier Ctrl-C: called as each statement starts.
pub(crate) fn reset() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Resolves once Ctrl-C is pressed.
pub(crate) async fn pressed() {
    while !requested() {
        tokio::time::sleep(POLL).await;
    }
}
