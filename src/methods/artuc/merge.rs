//! Cluster merging (Steps 17–22 of Algorithm 1, Steps 6–21 of Algorithm 2).
//!
//! Step 19 selects "the cluster C_UL ∈ C with minimum UL" and Step 20 the partner C′_UL that
//! minimizes UL(C_UL ∪ C′_UL) while the NCP stays within δ. Read literally, merging stops as
//! soon as the minimum-UL cluster has no admissible partner, even when other pairs could still
//! merge; the example instead explains the stop by "any further merging of clusters results in
//! a set of clusters having a higher NCP than δ". We follow the example: clusters are tried in
//! increasing UL and the first one with an admissible partner is merged; merging stops when no
//! pair is admissible. Partners come from the same group only: the union of two groups'
//! clusters would generalize beyond every constraint (Definition 9).

use super::data::RtTable;
use super::formation::Cluster;
use super::gendiag::{Diag, gendiag_below, gendiag_within};
use crate::error::Result;
use crate::progress::Progress;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether partner b with UL `ul` beats the best (UL, partner) so far in Step 20's order: the
/// lower UL, ties to the lower id. (`select_exhaustive`, the tests' reference, keeps its own.)
fn improves(best: Option<(f64, usize)>, ul: f64, b: usize) -> bool {
    best.is_none_or(|x| ul < x.0 || (ul == x.0 && b < x.1))
}

/// UL(C) and the codes GenDiag suppresses from C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Score {
    ul: f64,
    suppressed: u64,
}

#[derive(Debug, Clone)]
struct Node {
    cluster: Cluster,
    ncp: f64,
    /// None until needed: clusters merged away by Step 17 are never scored.
    score: Option<Score>,
    /// The GenDiag run that scored it, when kept: the release's Steps 23–25 reuse it instead of
    /// running GenDiag on every final cluster again.
    diag: Option<Diag>,
    /// Per code set, the records holding it and its codes' occurrences (for [`forced`]).
    sets: SetProfile,
}

/// Per constraint code set (a code without a set is its own), ascending by key: the records of
/// a cluster holding some code of the set, and the occurrences of the set's codes in them.
type SetProfile = Vec<(u64, u32, u32)>;

/// The code-set profile of a cluster whose records hold `records` (leaf codes).
fn profile(records: &[&[u32]], set_of_code: &[Option<u32>]) -> SetProfile {
    let mut counts: HashMap<u64, (u32, u32)> = HashMap::new();
    let mut in_record: Vec<u64> = Vec::new();
    for codes in records {
        in_record.clear();
        for &c in *codes {
            let key = match set_of_code.get(c as usize) {
                Some(Some(s)) => *s as u64,
                _ => 1 << 32 | c as u64,
            };
            counts.entry(key).or_default().1 += 1;
            in_record.push(key);
        }
        in_record.sort_unstable();
        in_record.dedup();
        for key in &in_record {
            counts.get_mut(key).expect("counted").0 += 1;
        }
    }
    let mut out: SetProfile = counts.into_iter().map(|(key, (n, occ))| (key, n, occ)).collect();
    out.sort_unstable();
    out
}

/// The profiles of two disjoint clusters, set by set: the union's profile.
fn zip_profiles(a: &SetProfile, b: &SetProfile, mut visit: impl FnMut(u64, u32, u32)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (x, y) = (a.get(i), b.get(j));
        match (x, y) {
            (Some(&(ka, na, oa)), Some(&(kb, nb, ob))) if ka == kb => {
                visit(ka, na + nb, oa + ob);
                (i, j) = (i + 1, j + 1);
            }
            (Some(&(ka, na, oa)), Some(&(kb, _, _))) if ka < kb => {
                visit(ka, na, oa);
                i += 1;
            }
            (Some(&(ka, na, oa)), None) => {
                visit(ka, na, oa);
                i += 1;
            }
            (_, Some(&(kb, nb, ob))) => {
                visit(kb, nb, ob);
                j += 1;
            }
            (None, None) => unreachable!("loop condition"),
        }
    }
}

/// Codes GenDiag must suppress from the union of two clusters: every code of a code set held
/// by fewer than k of the union's records. Merging all of the set's codes into one item would
/// still leave it below k, and no violating set survives GenDiag's pass, so every item of the
/// set is suppressed, each code from every record holding it. So UL(a ∪ b) ≥ this count (UL
/// adds s(r) to a non-negative term per record): a sound lower bound for Step 20.
fn forced(a: &SetProfile, b: &SetProfile, k: usize) -> u64 {
    let mut sum = 0;
    zip_profiles(a, b, |_, n, occ| {
        if (n as usize) < k {
            sum += occ as u64;
        }
    });
    sum
}

/// A GenDiag run's score.
fn score(d: &Diag) -> Score {
    Score { ul: d.ul, suppressed: d.suppressed_total() }
}

/// The clusters of a run, by id (a merge retires two ids and creates the next one).
pub(crate) struct Merger<'a> {
    table: &'a RtTable,
    set_of_code: &'a [Option<u32>],
    k: usize,
    m: usize,
    weights: &'a [f64],
    nodes: Vec<Option<Node>>,
    ncp_sum: f64,
    pairs: HashMap<(usize, usize), Score>,
    /// The runs of the current [`Merger::select`], by (C_UL, partner) in the order their
    /// records were joined: the chosen union's run becomes its cluster's.
    recent: HashMap<(usize, usize), Diag>,
    /// GenDiag runs so far (for reports).
    pub(crate) evaluations: u64,
    /// Read before every GenDiag run: Ctrl-C stops the merging within one run per core.
    progress: &'a dyn Progress,
}

impl<'a> Merger<'a> {
    pub(crate) fn new(
        table: &'a RtTable,
        set_of_code: &'a [Option<u32>],
        (k, m): (usize, usize),
        weights: &'a [f64],
        clusters: Vec<Cluster>,
    ) -> Self {
        let mut me = Merger {
            table,
            set_of_code,
            k,
            m,
            weights,
            nodes: Vec::new(),
            ncp_sum: 0.0,
            pairs: HashMap::new(),
            recent: HashMap::new(),
            evaluations: 0,
            progress: &crate::progress::Silent,
        };
        for c in clusters {
            me.push(c, None, None, None);
        }
        me
    }

    /// The merger, stopped with [`crate::error::AnonError::Cancelled`] once `progress` says so
    /// (Ctrl-C): its GenDiag runs over every cluster take seconds at EHRD's size.
    pub(crate) fn cancellable(self, progress: &'a dyn Progress) -> Self {
        Merger { progress, ..self }
    }

    /// GenDiag on each set of records, on all cores: the runs are independent and each is
    /// deterministic, so the scores are the ones a sequential loop gives, in the same order.
    /// A run suppressing more than `limit` codes is given up (None).
    fn score_many(&mut self, jobs: &[Vec<u32>], limit: u64) -> Result<Vec<Option<Diag>>> {
        self.evaluations += jobs.len() as u64;
        let (table, sets, k, m) = (self.table, self.set_of_code, self.k, self.m);
        crate::parallel::map_cancellable(jobs, self.progress, |records| {
            gendiag_within(&table.code_sets(records), sets, k, m, limit)
        })
    }

    fn push(&mut self, cluster: Cluster, score: Option<Score>, diag: Option<Diag>, sets: Option<SetProfile>) -> usize {
        let ncp = cluster.ncp(self.table, self.weights);
        self.ncp_sum += ncp;
        let sets = sets.unwrap_or_else(|| profile(&self.table.code_sets(&cluster.records), self.set_of_code));
        self.nodes.push(Some(Node { cluster, ncp, score, diag, sets }));
        self.nodes.len() - 1
    }

    fn alive(&self) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes.iter().enumerate().filter_map(|(i, n)| n.as_ref().map(|n| (i, n)))
    }

    /// Σ NCP(C) over the clusters.
    pub(crate) fn ncp_sum(&self) -> f64 {
        self.ncp_sum
    }
    /// Σ UL(C) over the clusters, each anonymized by GenDiag.
    /// (Clusters are scored once [`Merger::merge_identical`] has run.)
    pub(crate) fn ul_sum(&self) -> f64 {
        self.alive().map(|(_, n)| n.score.map_or(0.0, |s| s.ul)).sum()
    }
    pub(crate) fn suppressed(&self) -> u64 {
        self.alive().map(|(_, n)| n.score.map_or(0, |s| s.suppressed)).sum()
    }

    /// Run GenDiag on every cluster not scored yet.
    fn score_all(&mut self) -> Result<()> {
        let ids: Vec<usize> = self.alive().filter(|(_, n)| n.score.is_none()).map(|(i, _)| i).collect();
        let jobs: Vec<Vec<u32>> = ids.iter().map(|&i| self.node(i).cluster.records.clone()).collect();
        for (i, d) in ids.into_iter().zip(self.score_many(&jobs, u64::MAX)?) {
            let node = self.nodes[i].as_mut().expect("alive");
            node.score = d.as_ref().map(score);
            node.diag = d;
        }
        Ok(())
    }
    pub(crate) fn len(&self) -> usize {
        self.alive().count()
    }

    /// The current clusters, by id (the equivalence tests compare them).
    #[cfg(test)]
    pub(crate) fn clusters(&self) -> Vec<(usize, Cluster)> {
        self.alive().map(|(i, n)| (i, n.cluster.clone())).collect()
    }

    /// The current clusters, by id, each with its GenDiag run when one was kept (the run
    /// GenDiag gives on the cluster's records in their order).
    pub(crate) fn into_clusters(self) -> Vec<(Cluster, Option<Diag>)> {
        self.nodes.into_iter().flatten().map(|n| (n.cluster, n.diag)).collect()
    }

    /// Step 17: merge clusters with the same generalized values (same values imply the same
    /// group: groups' elements are disjoint in some attribute). Returns the merges made.
    ///
    /// The order is the one of a rescan after every merge: the lowest id that repeats an earlier
    /// alive cluster's values merges with that one (their union gets the next id). Per value the
    /// alive ids are kept sorted, so the next pair is the value whose second-lowest id is the
    /// lowest. The unions are scored once, at the end, not at every intermediate size.
    pub(crate) fn merge_identical(&mut self) -> Result<Vec<(usize, usize)>> {
        let mut by_key: HashMap<Vec<u64>, BTreeSet<usize>> = HashMap::new();
        for (i, n) in self.alive() {
            by_key.entry(n.cluster.hull.key()).or_default().insert(i);
        }
        let second = |ids: &BTreeSet<usize>| ids.iter().nth(1).copied();
        let mut next: BTreeSet<(usize, Vec<u64>)> =
            by_key.iter().filter_map(|(key, ids)| second(ids).map(|i| (i, key.clone()))).collect();
        let mut done = Vec::new();
        while let Some((b, key)) = next.pop_first() {
            let ids = by_key.get_mut(&key).expect("a key with repeats");
            let a = ids.pop_first().expect("two ids");
            ids.remove(&b);
            let merged = self.union(a, b, None, None, false);
            ids.insert(merged);
            if let Some(i) = second(ids) {
                next.insert((i, key));
            }
            done.push((a, b));
        }
        let alive: Vec<bool> = self.nodes.iter().map(Option::is_some).collect();
        self.pairs.retain(|&(p, q), _| alive[p] && alive[q]);
        self.ncp_sum = self.alive().map(|(_, n)| n.ncp).sum();
        self.score_all()?;
        Ok(done)
    }

    /// Step 17 by a rescan after every merge, as first written: the reference for
    /// [`Merger::merge_identical`].
    #[cfg(test)]
    pub(crate) fn merge_identical_reference(&mut self) -> Result<Vec<(usize, usize)>> {
        let mut done = Vec::new();
        loop {
            let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
            let pair = self.alive().find_map(|(i, n)| seen.insert(n.cluster.hull.key(), i).map(|j| (j, i)));
            match pair {
                Some((a, b)) => {
                    self.union(a, b, None, None, true);
                    done.push((a, b));
                }
                None => break,
            }
        }
        self.score_all()?;
        Ok(done)
    }

    fn pair_score(&mut self, a: usize, b: usize) -> Result<Score> {
        Ok(self.pair_scores(a, &[b], u64::MAX)?[0].expect("no limit"))
    }

    /// UL(a ∪ b) for each b, from the cache or by GenDiag (the missing ones in parallel); None
    /// for a union that suppresses more than `limit` codes (not cached: it was not finished).
    fn pair_scores(&mut self, a: usize, partners: &[usize], limit: u64) -> Result<Vec<Option<Score>>> {
        let key = |b: usize| (a.min(b), a.max(b));
        let missing: Vec<usize> = partners.iter().copied().filter(|&b| !self.pairs.contains_key(&key(b))).collect();
        let jobs: Vec<Vec<u32>> = missing.iter().map(|&b| self.union_records(a, b)).collect();
        let mut given_up = Vec::new();
        for (b, d) in missing.into_iter().zip(self.score_many(&jobs, limit)?) {
            match d {
                Some(d) => {
                    self.pairs.insert(key(b), score(&d));
                    self.recent.insert((a, b), d);
                }
                None => given_up.push(b),
            }
        }
        Ok(partners.iter().map(|&b| if given_up.contains(&b) { None } else { Some(self.pairs[&key(b)]) }).collect())
    }

    fn union_records(&self, a: usize, b: usize) -> Vec<u32> {
        let (x, y) = (self.node(a), self.node(b));
        x.cluster.records.iter().chain(&y.cluster.records).copied().collect()
    }

    fn node(&self, i: usize) -> &Node {
        self.nodes[i].as_ref().expect("merger: a retired cluster id was used")
    }

    /// Σ NCP(C) after merging a and b.
    pub(crate) fn ncp_sum_after(&self, a: usize, b: usize) -> f64 {
        let (x, y) = (self.node(a), self.node(b));
        let hull = x.cluster.hull.merge(self.table, &y.cluster.hull);
        let merged = (x.cluster.records.len() + y.cluster.records.len()) as f64 * hull.ncp(self.table, self.weights);
        self.ncp_sum - x.ncp - y.ncp + merged
    }

    /// Steps 19–20: the next pair (C_UL, C′_UL) whose merge keeps `admissible(Σ NCP)`.
    ///
    /// Scoring every admissible partner by a full GenDiag run was nearly all of a call. Two
    /// exact shortcuts keep the partner that scoring them all chooses (minimum UL, ties to the
    /// lowest id): partners are scored on all cores, each thread taking the next partner when
    /// its run ends ([`Merger::score_queue`]), skipping any whose lower bound on
    /// UL(C_UL ∪ C′) (the cached score, else [`forced`] suppression) exceeds the best UL found
    /// so far; and a run is given up once it has suppressed more codes than that best UL
    /// (UL ≥ Σ s(r), and suppressions only accumulate), the best as lowered by any thread.
    /// Partners are tried cached scores first, then by their lower bound and their own UL, so
    /// a low best is found early.
    pub(crate) fn select(&mut self, admissible: &dyn Fn(f64) -> bool) -> Result<Option<(usize, usize)>> {
        self.recent.clear();
        self.score_all()?;
        let mut order: Vec<(f64, usize, usize)> =
            self.alive().map(|(i, n)| (n.score.map_or(0.0, |s| s.ul), i, n.cluster.group)).collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        let cores = crate::parallel::threads();
        for &(_, a, group) in &order {
            // (cached first, lower bound, own UL, id)
            let mut partners: Vec<(bool, f64, f64, usize)> = order
                .iter()
                .filter(|o| o.2 == group && o.1 != a && admissible(self.ncp_sum_after(a, o.1)))
                .map(|o| {
                    let cached = self.pairs.contains_key(&(a.min(o.1), a.max(o.1)));
                    (!cached, self.lower_bound(a, o.1), o.0, o.1)
                })
                .collect();
            partners
                .sort_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)).then(x.2.total_cmp(&y.2)).then(x.3.cmp(&y.3)));
            // Cached scores first (no run), then the others as a work queue on all cores.
            let mut best: Option<(f64, usize)> = None;
            let cached = partners.iter().take_while(|p| !p.0).count();
            for &(_, _, _, b) in &partners[..cached] {
                let s = self.pairs[&(a.min(b), a.max(b))];
                if improves(best, s.ul, b) {
                    best = Some((s.ul, b));
                }
            }
            let queue: Vec<(f64, usize)> = partners[cached..].iter().map(|p| (p.1, p.3)).collect();
            let (done, runs) = self.score_queue(a, &queue, best, cores);
            self.evaluations += runs;
            // The queue stops taking partners once cancelled: its runs are then incomplete.
            self.progress.check()?;
            for (b, d) in done {
                let s = score(&d);
                if improves(best, s.ul, b) {
                    best = Some((s.ul, b));
                }
                self.pairs.insert((a.min(b), a.max(b)), s);
                self.recent.insert((a, b), d);
            }
            if let Some((_, b)) = best {
                return Ok(Some((a, b)));
            }
        }
        Ok(None)
    }

    /// GenDiag on a ∪ b for the partners b (with their lower bounds, in the order to try), on
    /// `cores` threads taking the next partner as they finish: a partner whose lower bound
    /// exceeds the best UL found so far (`best` to start with) is skipped, and a run is given up
    /// once it has suppressed more codes than that best, which the other threads lower as they
    /// finish (Σ s(r) > UL_best ⟺ Σ s(r) > ⌊UL_best⌋ for the integer Σ s(r)). Every partner
    /// skipped or given up has a UL above a UL found, so the minimum (ties to the lowest id) is
    /// among the finished runs, whichever thread finished first. Returns the finished runs and
    /// the number of runs started.
    fn score_queue(
        &self,
        a: usize,
        partners: &[(f64, usize)],
        best: Option<(f64, usize)>,
        cores: usize,
    ) -> (Vec<(usize, Diag)>, u64) {
        let (table, sets, k, m) = (self.table, self.set_of_code, self.k, self.m);
        let floor = |best: Option<(f64, usize)>| best.map_or(u64::MAX, |x| x.0.floor() as u64);
        let limit = AtomicU64::new(floor(best));
        // (next partner, best so far, runs started)
        let shared = Mutex::new((0, best, 0u64));
        let work = || {
            let mut done = Vec::new();
            loop {
                let next = {
                    let mut sh = shared.lock().expect("a run panicked");
                    loop {
                        if self.progress.cancelled() {
                            break None;
                        }
                        let Some(&(lb, b)) = partners.get(sh.0) else { break None };
                        sh.0 += 1;
                        if sh.1.is_none_or(|x: (f64, usize)| lb <= x.0) {
                            sh.2 += 1;
                            break Some(b);
                        }
                    }
                };
                let Some(b) = next else { break done };
                let records = self.union_records(a, b);
                if let Some(d) = gendiag_below(&table.code_sets(&records), sets, k, m, &limit) {
                    let mut sh = shared.lock().expect("a run panicked");
                    if improves(sh.1, d.ul, b) {
                        sh.1 = Some((d.ul, b));
                        limit.fetch_min(floor(sh.1), Ordering::Relaxed);
                    }
                    done.push((b, d));
                }
            }
        };
        let threads = cores.min(partners.len());
        let mut done = if threads <= 1 {
            work()
        } else {
            std::thread::scope(|scope| {
                let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
                let mut done = work();
                for t in others {
                    // A panic in a run is a bug in the method; re-raise it on the caller's thread.
                    done.extend(t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
                }
                done
            })
        };
        // The partners' order, whichever thread ran them.
        done.sort_by_key(|&(b, _)| partners.iter().position(|p| p.1 == b));
        let runs = shared.into_inner().expect("a run panicked").2;
        (done, runs)
    }

    /// A lower bound on UL(a ∪ b): its score when cached, else the codes GenDiag must suppress.
    fn lower_bound(&self, a: usize, b: usize) -> f64 {
        match self.pairs.get(&(a.min(b), a.max(b))) {
            Some(s) => s.ul,
            None => forced(&self.node(a).sets, &self.node(b).sets, self.k) as f64,
        }
    }

    /// Steps 19–20 scoring every admissible partner, as first written: the reference for
    /// [`Merger::select`].
    #[cfg(test)]
    pub(crate) fn select_exhaustive(&mut self, admissible: &dyn Fn(f64) -> bool) -> Result<Option<(usize, usize)>> {
        self.score_all()?;
        let mut order: Vec<(f64, usize, usize)> =
            self.alive().map(|(i, n)| (n.score.map_or(0.0, |s| s.ul), i, n.cluster.group)).collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        for &(_, a, group) in &order {
            let partners: Vec<usize> = order
                .iter()
                .filter(|o| o.2 == group && o.1 != a && admissible(self.ncp_sum_after(a, o.1)))
                .map(|o| o.1)
                .collect();
            let mut best: Option<(f64, usize)> = None;
            for (b, s) in partners.iter().copied().zip(self.pair_scores(a, &partners, u64::MAX)?) {
                let s = s.expect("no limit");
                if best.is_none_or(|x| s.ul < x.0 || (s.ul == x.0 && b < x.1)) {
                    best = Some((s.ul, b));
                }
            }
            if let Some((_, b)) = best {
                return Ok(Some((a, b)));
            }
        }
        Ok(None)
    }

    /// Step 21: replace a and b by their union; returns the new cluster's id.
    pub(crate) fn apply(&mut self, a: usize, b: usize) -> Result<usize> {
        let score = self.pair_score(a, b)?;
        // The run is kept when this select ran it on a's records then b's, the union's order.
        let diag = self.recent.remove(&(a, b));
        self.recent.clear();
        Ok(self.union(a, b, Some(score), diag, true))
    }

    /// Replace a and b by their union. `exact` keeps Σ NCP and the pair cache exact after the
    /// merge; Step 17's run of merges restores both once at its end instead.
    fn union(&mut self, a: usize, b: usize, score: Option<Score>, diag: Option<Diag>, exact: bool) -> usize {
        let (x, y) = (self.nodes[a].take(), self.nodes[b].take());
        let (x, y) = (x.expect("merger: retired id"), y.expect("merger: retired id"));
        self.ncp_sum -= x.ncp + y.ncp;
        let mut records = x.cluster.records;
        records.extend(y.cluster.records);
        let hull = x.cluster.hull.merge(self.table, &y.cluster.hull);
        let mut sets = SetProfile::with_capacity(x.sets.len().max(y.sets.len()));
        zip_profiles(&x.sets, &y.sets, |key, n, occ| sets.push((key, n, occ)));
        let id = self.push(Cluster { group: x.cluster.group, records, hull }, score, diag, Some(sets));
        if exact {
            self.pairs.retain(|&(p, q), _| p != a && p != b && q != a && q != b);
            // Re-add from the clusters' own NCPs so repeated merges do not accumulate rounding.
            self.ncp_sum = self.alive().map(|(_, n)| n.ncp).sum();
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::artuc::gendiag::gendiag;
    use crate::methods::artuc::gendiag_reference::RandomCluster;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The forced suppression of two clusters' union never exceeds what GenDiag suppresses
        /// from it (so it bounds UL from below), and the union's profile is the profiles'.
        #[test]
        fn forced_suppression_is_a_lower_bound(
            c in RandomCluster::strategy(40, 8, 2..40, 1..12, true),
            split in 1usize..39,
            k in 1usize..9,
            m in 1usize..4,
        ) {
            let (refs, set_of) = (c.refs(), &c.set_of);
            let split = split.min(refs.len() - 1);
            let (a, b) = (profile(&refs[..split], set_of), profile(&refs[split..], set_of));
            let mut union = SetProfile::new();
            zip_profiles(&a, &b, |key, n, occ| union.push((key, n, occ)));
            prop_assert_eq!(&union, &profile(&refs, set_of));
            prop_assert!(forced(&a, &b, k) <= gendiag(&refs, set_of, k, m).suppressed_total());
        }
    }
}
