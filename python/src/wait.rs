//! Running a statement without holding the interpreter: the statement runs on the engine's
//! tokio runtime while the calling thread waits with the GIL released, waking every
//! [`POLL`] to let Python handle signals. Ctrl-C (or a notebook's stop button) raises
//! KeyboardInterrupt in the caller at once; the kernel lives on.
//!
//! What an interrupt stops: a query is dropped at its next await (scans, joins, sorts stop).
//! A table function's search runs synchronously inside planning, where dropping the future
//! cannot reach it: the interrupt also raises the session's cancel flag, which the engine's
//! searches read through `Progress::cancelled` at their next batch of nodes and stop with
//! "cancelled by the user", registering nothing and charging nothing (as Ctrl-C in the CLI).
//! Until it has stopped the session's next call waits for it, so calls never overlap and the
//! catalog is never changed behind a later call's back.

use crate::engine_error;
use anonfusion::datafusion::error::DataFusionError;
use pyo3::prelude::*;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// How long a signal may wait to be noticed.
const POLL: Duration = Duration::from_millis(50);

/// One runtime for the process, shared by its sessions (as the CLI has one).
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the engine's tokio runtime")
    })
}

/// A session's statements, one at a time.
#[derive(Default)]
pub struct Calls {
    /// An interrupted statement still running (see the module's note).
    interrupted: Mutex<Option<JoinHandle<()>>>,
}

impl Calls {
    /// Run `fut` to its end, or until Ctrl-C, which also raises `cancel` (the flag the session's
    /// progress reporter answers `cancelled()` from) until the interrupted statement has ended.
    pub fn run<T, F>(&self, py: Python<'_>, cancel: &AtomicBool, fut: F) -> PyResult<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, DataFusionError>> + Send + 'static,
    {
        self.finish_interrupted(py)?;
        cancel.store(false, Ordering::SeqCst);
        let (tx, mut rx) = mpsc::channel();
        let handle = runtime().spawn(async move {
            let _ = tx.send(fut.await);
        });
        loop {
            let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
            rx = back;
            match got {
                Ok(result) => return result.map_err(engine_error),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupt) = py.check_signals() {
                        cancel.store(true, Ordering::SeqCst);
                        handle.abort();
                        *self.interrupted.lock().expect("calls lock") = Some(handle);
                        return Err(interrupt);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(panicked(handle)),
            }
        }
    }

    /// Wait (interruptibly) for an interrupted statement that is still running. The lock is
    /// not held while waiting: another Python thread may hold the GIL meanwhile.
    fn finish_interrupted(&self, py: Python<'_>) -> PyResult<()> {
        let Some(pending) = self.interrupted.lock().expect("calls lock").take() else {
            return Ok(());
        };
        while !pending.is_finished() {
            py.detach(|| std::thread::sleep(POLL));
            if let Err(interrupt) = py.check_signals() {
                *self.interrupted.lock().expect("calls lock") = Some(pending);
                return Err(interrupt);
            }
        }
        Ok(())
    }
}

/// The statement's task ended without a result: it panicked (a bug; the session goes on).
fn panicked(handle: JoinHandle<()>) -> PyErr {
    let message = match runtime().block_on(handle) {
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string())
        }
        _ => "the statement's task ended without a result".to_string(),
    };
    crate::Error::new_err(format!("internal error (please report): {message}"))
}
