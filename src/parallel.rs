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

/// `0..n` cut into ranges of at most `size` (the last shorter): the jobs of a pass over `n`
/// items.
pub(crate) fn ranges(n: usize, size: usize) -> Vec<std::ops::Range<usize>> {
    (0..n).step_by(size.max(1)).map(|a| a..(a + size).min(n)).collect()
}

/// `buf` cut into consecutive parts of `lens` (their sum at most its length), each its own
/// `&mut`, so jobs on the pool ([`run`]) write their parts side by side.
pub(crate) fn split_mut<T>(mut buf: &mut [T], lens: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    lens.into_iter()
        .map(|n| {
            let (part, rest) = std::mem::take(&mut buf).split_at_mut(n);
            buf = rest;
            part
        })
        .collect()
}

/// `out`, `unit` values an item, written in ranges of at most `size` items, each range by one
/// job on the pool: `f(items, their values in out)`. A pass whose output is one value (or a
/// fixed number) per item of its input.
pub(crate) fn in_ranges<T: Send>(
    out: &mut [T],
    unit: usize,
    size: usize,
    f: impl Fn(std::ops::Range<usize>, &mut [T]) + Sync + Send,
) {
    let items = ranges(out.len() / unit.max(1), size);
    let parts = split_mut(out, items.iter().map(|r| r.len() * unit));
    run(items.into_iter().zip(parts).collect(), |(r, part)| f(r, part));
}

/// For each of `n` rows, the run it lies in, runs starting at `starts` (ascending, the first
/// 0): the bottom node's class of each frequency row. Filled on the pool in ranges of rows,
/// each finding its first run by a binary search, so one long run costs no more than many
/// short ones.
pub(crate) fn run_ids(starts: &[u32], n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    in_ranges(&mut out, 1, FILL_ROWS, |rows, part| {
        let mut run = starts.partition_point(|&s| s as usize <= rows.start) - 1;
        for (id, r) in part.iter_mut().zip(rows) {
            while starts.get(run + 1).is_some_and(|&s| s as usize <= r) {
                run += 1;
            }
            *id = run as u32;
        }
    });
    out
}

/// `f` applied to every job, each job consumed (jobs that own disjoint `&mut` parts of one
/// buffer, so the parts are written side by side); on the caller's thread with one thread or
/// one job.
pub(crate) fn run<T: Send>(jobs: Vec<T>, f: impl Fn(T) + Sync + Send) {
    if jobs.len() <= 1 || threads() <= 1 {
        return jobs.into_iter().for_each(f);
    }
    jobs.into_par_iter().for_each(f);
}

/// `v` sorted by `cmp`, stably, on the pool (rayon's merge sort): the same order as
/// `slice::sort_by` gives, whatever the threads.
pub(crate) fn sort_by<T: Send>(v: &mut [T], cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Sync) {
    if threads() <= 1 {
        return v.sort_by(cmp);
    }
    v.par_sort_by(cmp);
}

/// `v` sorted on the pool (rayon's unstable quicksort); for distinct elements the order
/// `slice::sort_unstable` gives, whatever the threads.
pub(crate) fn sort_unstable<T: Ord + Send>(v: &mut [T]) {
    if threads() <= 1 {
        return v.sort_unstable();
    }
    v.par_sort_unstable();
}

/// Each run `(value, n)` written `n` times, in order: a release's rows from its cells. The runs
/// are `run(item)` of `items`, read in place. Written on the pool, each job [`FILL_ROWS`]
/// values of the output, from the run that covers its first place on: a long run (a large
/// class of a big table, whose rows were one job when jobs were whole runs) is written by
/// several jobs.
pub(crate) fn repeat_by<C: Sync, T: Copy + Default + Send + Sync>(
    items: &[C],
    run: impl Fn(&C) -> (T, usize) + Sync,
) -> Vec<T> {
    // Where each run ends in the output.
    let ends: Vec<usize> = items
        .iter()
        .scan(0, |at, c| {
            *at += run(c).1;
            Some(*at)
        })
        .collect();
    let total = ends.last().copied().unwrap_or(0);
    let mut out = vec![T::default(); total];
    let parts = split_mut(&mut out, ranges(total, FILL_ROWS).iter().map(|r| r.len()));
    self::run(parts.into_iter().enumerate().collect(), |(p, part)| {
        let start = p * FILL_ROWS;
        // The first run ending past this part's start (empty runs end where they start).
        let mut i = ends.partition_point(|&e| e <= start);
        let mut at = 0;
        while at < part.len() {
            let n = (ends[i] - start - at).min(part.len() - at);
            part[at..at + n].fill(run(&items[i]).0);
            at += n;
            i += 1;
        }
    });
    out
}

/// Values a job of [`repeat_by`] writes (a job's fixed cost against its work).
const FILL_ROWS: usize = 1 << 16;

/// The sums of `values` over the runs that start at `starts` (ascending, the first 0; the last
/// run ends at the end of `values`), on the pool in ranges of runs.
pub(crate) fn run_sums(values: &[u64], starts: &[u32]) -> Vec<u64> {
    let ends = |i: usize| starts.get(i + 1).map_or(values.len(), |&e| e as usize);
    map(&ranges(starts.len(), FILL_ROWS), |r| {
        r.clone().map(|i| values[starts[i] as usize..ends(i)].iter().sum()).collect::<Vec<u64>>()
    })
    .concat()
}

/// `a` and `b` side by side on the pool (on the caller's thread one after the other with one
/// thread); their results.
pub(crate) fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    if threads() <= 1 {
        return (a(), b());
    }
    rayon::join(a, b)
}

/// `values[i]` for every `i` of `at`, in order, gathered on the pool in ranges of rows (a
/// release's columns from its class-level arrays, in the drawn row order). Fewer than one
/// job's rows are gathered on the caller's thread: the pool would make them one job anyway,
/// after a hand-off that costs more than the gather (h-ceiling's frontier gathers each of
/// tens of thousands of groupings' keys).
pub(crate) fn gather<T: Copy + Send + Sync>(values: &[T], at: &[u32]) -> Vec<T> {
    if threads() <= 1 || at.len() < GATHER_ROWS {
        return at.iter().map(|&i| values[i as usize]).collect();
    }
    at.par_iter().with_min_len(GATHER_ROWS).map(|&i| values[i as usize]).collect()
}

/// Rows a job of [`gather`] takes at least.
const GATHER_ROWS: usize = 1 << 14;

/// The pool's threads.
pub(crate) fn threads() -> usize {
    rayon::current_num_threads()
}

/// Whether a pass started here would have the pool to itself: the caller is not one of its
/// jobs (which have jobs beside them), and the pool has more than one thread.
pub(crate) fn outside_pool() -> bool {
    rayon::current_thread_index().is_none() && threads() > 1
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

    /// Runs longer than a job's share, empty runs, and runs ending exactly where a job's
    /// share ends are written as they are, however many threads write them.
    #[test]
    fn long_runs_are_written_by_several_jobs() {
        let f = super::FILL_ROWS;
        let runs: Vec<(u32, usize)> =
            vec![(0, 0), (1, 3 * f + 5), (2, 0), (3, f - 5), (4, 1), (5, 0), (6, 2 * f), (7, 0)];
        let expected: Vec<u32> = runs.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n)).collect();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| super::repeat_by(&runs, |&r| r)), expected, "{threads} threads");
        }
    }

    /// Runs repeated and runs summed on pools of 1 and 3 threads: what the serial loops give.
    #[test]
    fn runs_repeated_and_summed_on_the_pool() {
        let runs: Vec<(u32, usize)> = (0..5_000u32).map(|i| (i, (i as usize * 7919) % 97)).collect();
        let expected: Vec<u32> = runs.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n)).collect();
        let values: Vec<u64> = (0..expected.len() as u64).map(|i| i % 13).collect();
        let mut starts: Vec<u32> = vec![0];
        for &(_, n) in &runs[..runs.len() - 1] {
            starts.push(starts.last().unwrap() + n as u32);
        }
        starts.dedup();
        let sums: Vec<u64> = starts
            .iter()
            .enumerate()
            .map(|(i, &a)| values[a as usize..starts.get(i + 1).map_or(values.len(), |&e| e as usize)].iter().sum())
            .collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| super::repeat_by(&runs, |&r| r)), expected, "{threads} threads");
            assert_eq!(pool.install(|| super::run_sums(&values, &starts)), sums, "{threads} threads");
        }
        assert_eq!(super::ranges(10, 4), vec![0..4, 4..8, 8..10]);
        assert!(super::ranges(0, 4).is_empty());
        let mut buf = [0u8; 6];
        let lens: Vec<usize> = super::split_mut(&mut buf, [2, 0, 3]).iter().map(|p| p.len()).collect();
        assert_eq!(lens, [2, 0, 3]);
        assert!(super::repeat_by::<(u32, usize), u32>(&[], |&r| r).is_empty());
        let ids: Vec<u32> =
            runs.iter().filter(|r| r.1 > 0).enumerate().flat_map(|(i, r)| std::iter::repeat_n(i as u32, r.1)).collect();
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| super::run_ids(&starts, expected.len())), ids, "{threads} threads");
            let mut squares = vec![0usize; 2 * 1000];
            pool.install(|| {
                super::in_ranges(&mut squares, 2, 64, |items, part| {
                    for (i, v) in items.zip(part.chunks_mut(2)) {
                        v.copy_from_slice(&[i, i * i]);
                    }
                })
            });
            assert!(squares.chunks(2).enumerate().all(|(i, v)| v == [i, i * i]), "{threads} threads");
        }
        assert!(super::run_ids(&[], 0).is_empty());
        assert!(super::run_sums(&[], &[]).is_empty());
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
