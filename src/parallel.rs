//! Independent jobs on all cores, for the methods' CPU-bound passes (DataFusion's own
//! parallelism covers the plans, not work inside a table function).
//!
//! Every job runs on one pool for the process, rayon's global pool, started once at the first
//! call and kept: threads started per batch (what this module did before) each wait to be
//! scheduled when the machine is loaded (issue 36), and nested calls (a pass inside a parallel
//! search) would start threads of their own. The pool has one thread per core the process may
//! run on (`available_parallelism`, which follows `taskset`; `RAYON_NUM_THREADS` overrides
//! it), as DataFusion's default `target_partitions` does. Results never depend on the number of
//! threads: every function returns its results in the order of its jobs, and callers merge
//! them in that order.

use crate::error::{AnonError, Result};
use crate::progress::Progress;
use rayon::prelude::*;

/// `f` applied to every job, on the process's pool; results in the order of `jobs`. Idle
/// threads steal jobs from busy ones, so uneven costs still balance. With one thread or one job
/// it runs on the caller's thread.
pub(crate) fn map<T: Sync, R: Send>(jobs: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if jobs.len() <= 1 || threads() <= 1 {
        return jobs.iter().map(f).collect();
    }
    // A panic in `f` is a bug in the method; rayon re-raises it on the caller's thread.
    jobs.par_iter().map(&f).collect()
}

/// `values[i]` for every `i` of `at`, in order, gathered on the pool in ranges of rows (a
/// release's columns from its class-level arrays, in the drawn row order).
pub(crate) fn gather<T: Copy + Send + Sync>(values: &[T], at: &[u32]) -> Vec<T> {
    if threads() <= 1 {
        return at.iter().map(|&i| values[i as usize]).collect();
    }
    at.par_iter().with_min_len(1 << 14).map(|&i| values[i as usize]).collect()
}

/// The pool's threads.
pub(crate) fn threads() -> usize {
    rayon::current_num_threads()
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

    /// The same results, in the same order, on pools of 1, 2, 3 and 8 threads.
    #[test]
    fn results_do_not_depend_on_the_threads() {
        let jobs: Vec<u64> = (0..500).collect();
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| super::map(&jobs, |&j| (0..j % 11 * 100).fold(j, |a, x| a.rotate_left(3) ^ x)))
        };
        let one = run(1);
        for threads in [2, 3, 8] {
            assert_eq!(run(threads), one, "{threads} threads");
        }
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
        // At most one job a thread was past the flag when it went up.
        assert!(
            started.load(Ordering::SeqCst) <= 11 + super::threads(),
            "{} jobs started",
            started.load(Ordering::SeqCst)
        );
        assert_eq!(super::map_cancellable(&jobs, &Flag::default(), |&j| j * 2).unwrap()[999], 1998);
    }
}
