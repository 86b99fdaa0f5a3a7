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
            .expect("table function helper thread panicked")
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
/// tokio timer is needed, so an embedder's runtime without one works too.
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
        let out = block_on(async {
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
        });
        done.store(true, Ordering::SeqCst);
        poller.thread().unpark();
        out
    })
}

/// How often [`block_on_cancellable`] looks at the cancellation flag while its future waits.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(50);
