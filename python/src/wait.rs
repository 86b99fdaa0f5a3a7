//! Running a statement without holding the interpreter: the statement runs on the engine's
//! tokio runtime while the calling thread waits with the GIL released, waking every
//! [`POLL`] to let Python handle signals.
//!
//! Ctrl-C (or a notebook's stop button) cancels the statement and waits for it to stop before
//! raising KeyboardInterrupt, so when the exception arrives nothing runs behind the caller's
//! back. A query is dropped at its next await (scans, joins, sorts stop). A table function
//! runs synchronously inside planning, where dropping the future cannot reach it: the
//! interrupt raises the session's cancel flag, which the engine's methods read through
//! `Progress::cancelled` at their checkpoints and stop with "cancelled by the user",
//! registering nothing and charging nothing (as Ctrl-C in the CLI). A second Ctrl-C while
//! waiting stops the wait; the session's next call then waits for the statement to end, so
//! calls never overlap and the catalog is never changed behind a later call's back.

use crate::errors::{Cancelled, engine_error};
use anonfusion::datafusion::error::DataFusionError;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// How long a signal may wait to be noticed.
const POLL: Duration = Duration::from_millis(50);

/// One runtime for the process, shared by its sessions (as the CLI has one).
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("the engine's tokio runtime")
    })
}

/// A session's statements, one at a time.
#[derive(Default)]
pub struct Calls {
    /// A statement still running after a second Ctrl-C gave up waiting for it.
    interrupted: Mutex<Option<JoinHandle<()>>>,
}

/// A running statement: its task and where its result arrives.
struct Running<T> {
    handle: JoinHandle<()>,
    /// Moved into each wait without the GIL (a receiver cannot be shared) and back.
    rx: Option<Receiver<Result<T, DataFusionError>>>,
}

/// How a wait ended.
enum Waited<T> {
    Done(Result<T, DataFusionError>),
    /// The task ended without a result: aborted at an await, or panicked.
    Ended,
    Signal(PyErr),
}

impl<T: Send + 'static> Running<T> {
    /// Wait for the result with the GIL released, returning early when a signal's handler
    /// raises (Ctrl-C).
    fn wait(&mut self, py: Python<'_>) -> Waited<T> {
        loop {
            let rx = self.rx.take().expect("the receiver is put back after each wait");
            let (got, rx) = py.detach(move || (rx.recv_timeout(POLL), rx));
            self.rx = Some(rx);
            match got {
                Ok(result) => return Waited::Done(result),
                Err(RecvTimeoutError::Disconnected) => return Waited::Ended,
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(signal) = py.check_signals() {
                        return Waited::Signal(signal);
                    }
                }
            }
        }
    }
}

impl Calls {
    /// Run the statement `make(planned)` builds to its end, or until Ctrl-C, which raises
    /// `cancel` (the flag the session's progress reporter answers `cancelled()` from), waits
    /// for the statement to stop and raises KeyboardInterrupt. The statement raises `planned`
    /// once its planning (where table functions publish and charge) is over.
    pub fn run<T, F>(&self, py: Python<'_>, cancel: &AtomicBool, make: impl FnOnce(Arc<AtomicBool>) -> F) -> PyResult<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, DataFusionError>> + Send + 'static,
    {
        self.finish_interrupted(py)?;
        cancel.store(false, Ordering::SeqCst);
        let planned = Arc::new(AtomicBool::new(false));
        let fut = make(planned.clone());
        let (tx, rx) = mpsc::channel();
        let handle = runtime().spawn(async move {
            let _ = tx.send(fut.await);
        });
        let mut running = Running { handle, rx: Some(rx) };
        let interrupt = match running.wait(py) {
            Waited::Done(result) => return result.map_err(engine_error),
            Waited::Ended => return Err(panicked(running.handle)),
            Waited::Signal(interrupt) => interrupt,
        };
        cancel.store(true, Ordering::SeqCst);
        running.handle.abort();
        let outcome = match running.wait(py) {
            Waited::Done(result) => result.err(),
            Waited::Ended => None,
            Waited::Signal(again) => {
                // A second Ctrl-C: stop waiting; the next call waits instead.
                *self.interrupted.lock().expect("calls lock") = Some(running.handle);
                return Err(again);
            }
        };
        Err(interrupted(py, interrupt, outcome, planned.load(Ordering::SeqCst)))
    }

    /// Wait (interruptibly) for a statement that a second Ctrl-C left running. The lock is not
    /// held while waiting: another Python thread may hold the GIL meanwhile.
    pub fn finish_interrupted(&self, py: Python<'_>) -> PyResult<()> {
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

/// The exception for a statement stopped by `interrupt`: the KeyboardInterrupt (or whatever a
/// signal handler raised) itself, caused by the engine's `Cancelled` when the engine stopped
/// the statement. A statement whose planning had ended (a table function had published and
/// charged, a CREATE TABLE had run) kept those effects: the exception says so.
fn interrupted(py: Python<'_>, interrupt: PyErr, error: Option<DataFusionError>, planned: bool) -> PyErr {
    if !interrupt.is_instance_of::<PyKeyboardInterrupt>(py) {
        return interrupt;
    }
    let cause = error.map(engine_error);
    let stopped = cause.as_ref().is_some_and(|c| c.is_instance_of::<Cancelled>(py));
    let err = if planned && !stopped {
        PyKeyboardInterrupt::new_err(
            "interrupted after the statement was planned: any table it created and any release it published \
             (with its privacy-budget charge) stand",
        )
    } else {
        interrupt
    };
    err.set_cause(py, cause);
    err
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
    crate::errors::Error::new_err(format!("internal error (please report): {message}"))
}
