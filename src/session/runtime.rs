//! The bridge from a table function's synchronous call to the async runtime, and the race of its
//! pipeline against Ctrl-C.

use crate::error::{AnonError, Result};

/// Run a future to completion from the synchronous table-function call. On a multi-thread
/// runtime the worker is handed over (`block_in_place`); otherwise (current-thread runtime, or
/// none) a scoped helper thread runs its own runtime, because `Handle::block_on` panics inside
/// a runtime and an executor would deadlock a current-thread one.
pub(crate) fn block_on<F>(fut: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Builder, Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(|| h.block_on(fut)),
        _ => std::thread::scope(|s| {
            s.spawn(|| {
                Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread tokio runtime")
                    .block_on(fut)
            })
            .join()
            // The future's own panic, not a new one: its message is what says what went wrong.
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }),
    }
}

/// [`block_on`] for a table function's pipeline, raced against `progress.cancelled()` (the
/// CLI's and the Python package's Ctrl-C): once it says so the future is dropped at its next
/// await (which aborts the DataFusion streams it runs) and the call fails with
/// [`AnonError::Cancelled`]. The methods' synchronous loops check the same flag themselves
/// ([`crate::progress`]); this covers what they await: reading the source, aggregating it,
/// materializing the release. The flag is looked at whenever the future is polled and, since a
/// signal cannot wake a future, every [`CANCEL_POLL`] by a helper thread that wakes it; no
/// tokio timer is needed, so an embedder's runtime without one works too. A panic in the future
/// stops the helper thread too and then propagates to the caller.
pub(crate) fn block_on_cancellable<F, T>(progress: &dyn crate::progress::Progress, fut: F) -> Result<T>
where
    F: Future<Output = Result<T>> + Send,
    T: Send,
{
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Poll, Waker};
    let done = AtomicBool::new(false);
    let waker: Mutex<Option<Waker>> = Mutex::new(None);
    std::thread::scope(|s| {
        // Parked rather than asleep: the scope waits for this thread, so once the future is
        // done it is unparked at once instead of finishing its nap (up to CANCEL_POLL of idle
        // wall time per call, twice in every method statement).
        let poller = s.spawn(|| {
            while !done.load(Ordering::SeqCst) {
                std::thread::park_timeout(CANCEL_POLL);
                if let Some(w) = waker.lock().expect("waker lock").as_ref() {
                    w.wake_by_ref();
                }
            }
        });
        // Set `done` however the call ends: the scope joins the poller before it returns or
        // re-raises a panic, so a future that panicked and left it looping would hang the call
        // (and the process) forever instead of failing.
        let _finish = Finish { done: &done, poller: poller.thread() };
        block_on(async {
            let mut fut = std::pin::pin!(fut);
            std::future::poll_fn(|cx| {
                if progress.cancelled() {
                    return Poll::Ready(Err(AnonError::Cancelled));
                }
                if let Poll::Ready(r) = fut.as_mut().poll(cx) {
                    return Poll::Ready(r);
                }
                *waker.lock().expect("waker lock") = Some(cx.waker().clone());
                Poll::Pending
            })
            .await
        })
    })
}

/// Ends [`block_on_cancellable`]'s poller when dropped, on return and on unwind alike.
struct Finish<'a> {
    done: &'a std::sync::atomic::AtomicBool,
    poller: &'a std::thread::Thread,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        // Unparked at once rather than at the end of its nap (see the poller).
        self.poller.unpark();
    }
}

/// How often [`block_on_cancellable`] looks at the cancellation flag while its future waits.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Whether `call` ended (returned or panicked) within a generous time, run on a thread of its
    /// own so that a hang shows as a timeout instead of hanging the test.
    fn ends<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> Option<std::thread::Result<T>> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)));
        });
        rx.recv_timeout(Duration::from_secs(20)).ok()
    }

    async fn boom() -> Result<()> {
        panic!("boom in the pipeline")
    }

    /// A panicking pipeline fails the call with its own panic, with no runtime (the helper
    /// thread) and on a multi-thread runtime (`block_in_place`); before the drop guard the
    /// poller looped forever and the scope waited on it.
    #[test]
    fn a_panicking_future_propagates_instead_of_hanging() {
        let plain = ends(|| block_on_cancellable(&crate::progress::Silent, boom()));
        let panic = plain.expect("no runtime: the call hung").expect_err("the future panicked");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"boom in the pipeline"));

        let in_runtime = ends(|| {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
            rt.block_on(async { tokio::spawn(async { block_on_cancellable(&crate::progress::Silent, boom()) }).await })
        });
        let joined = in_runtime.expect("multi-thread runtime: the call hung").expect("the runtime itself ends");
        assert!(joined.expect_err("the task panicked").is_panic());

        // A future that completes still returns its value.
        let fine = ends(|| block_on_cancellable(&crate::progress::Silent, async { Ok(7) }));
        assert_eq!(fine.expect("no hang").expect("no panic").unwrap(), 7);
    }
}
