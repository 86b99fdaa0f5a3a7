//! Independent jobs on all cores, for the methods' CPU-bound inner loops (DataFusion's own
//! parallelism covers the plans, not work inside a table function).

use crate::error::{AnonError, Result};
use crate::progress::Progress;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every job, on up to `available_parallelism` threads; results in the order of
/// `jobs`. Jobs are handed out one at a time, so uneven costs still balance. With one core or
/// one job it runs on the caller's thread.
pub(crate) fn map<T: Sync, R: Send>(jobs: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    if threads <= 1 {
        return jobs.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = (0..jobs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break done };
                        done.push((i, f(job)));
                    }
                })
            })
            .collect();
        for w in workers {
            // A panic in `f` is a bug in the method; re-raise it on the caller's thread.
            for (i, r) in w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)) {
                out[i] = Some(r);
            }
        }
    });
    out.into_iter().map(|r| r.expect("every job ran")).collect()
}

/// [`map`], stopped when `progress` says the user cancelled (Ctrl-C): each job looks at the
/// flag before it starts, so a cancellation waits for the jobs already running (one per core),
/// not for the rest, and the call fails with [`AnonError::Cancelled`].
pub(crate) fn map_cancellable<T: Sync, R: Send>(
    jobs: &[T],
    progress: &dyn Progress,
    f: impl Fn(&T) -> R + Sync,
) -> Result<Vec<R>> {
    let out = map(jobs, |job| (!progress.cancelled()).then(|| f(job)));
    out.into_iter().map(|r| r.ok_or(AnonError::Cancelled)).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_order_of_the_jobs() {
        let jobs: Vec<u64> = (0..1000).collect();
        let out = super::map(&jobs, |&j| {
            // Uneven costs, so workers finish out of order.
            (0..(j % 7) * 1000).fold(j, |a, x| a.wrapping_add(x % 3))
        });
        let expected: Vec<u64> =
            jobs.iter().map(|&j| (0..(j % 7) * 1000).fold(j, |a, x| a.wrapping_add(x % 3))).collect();
        assert_eq!(out, expected);
        assert!(super::map(&[] as &[u8], |&x| x).is_empty());
    }

    /// Once the flag is up no further job starts, and the call says it was cancelled.
    #[test]
    fn a_cancelled_map_starts_no_more_jobs() {
        use crate::progress::Progress;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        #[derive(Debug, Default)]
        struct Flag(AtomicBool);
        impl Progress for Flag {
            fn begin(&self, _: &str, _: u64) {}
            fn advance(&self, _: u64) {}
            fn finish(&self) {}
            fn cancelled(&self) -> bool {
                self.0.load(Ordering::SeqCst)
            }
        }
        let (flag, started) = (Flag::default(), AtomicUsize::new(0));
        let jobs: Vec<u64> = (0..1000).collect();
        let out = super::map_cancellable(&jobs, &flag, |&j| {
            if started.fetch_add(1, Ordering::SeqCst) == 10 {
                flag.0.store(true, Ordering::SeqCst);
            }
            j
        });
        assert!(matches!(out, Err(crate::error::AnonError::Cancelled)));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(started.load(Ordering::SeqCst) <= 11 + cores, "{} jobs started", started.load(Ordering::SeqCst));
        assert_eq!(super::map_cancellable(&jobs, &Flag::default(), |&j| j * 2).unwrap()[999], 1998);
    }
}
