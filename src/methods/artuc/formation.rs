//! Cluster formation (Steps 3–15): split each group into clusters of k records with small NCP.
//!
//! - Step 5 reads "while group G has more than k records"; the worked example (Section 4.2)
//!   forms C4 = {4, 5} from the 2-record group G2 with k = 2, so a cluster is formed while the
//!   group has **at least** k records.
//! - Step 13 picks the cluster minimizing "the NCP of C_NCP ∪ {r}", the text says the cluster
//!   whose "addition incurs the lowest increase in the NCP of the cluster": we follow the text
//!   (the absolute NCP would favour small clusters regardless of fit).
//! - Leftover records join a cluster of their own group only: a cluster spanning two groups
//!   would generalize beyond every constraint (Definition 9).

use super::data::RtTable;
use super::hull::Hull;
use rand::RngExt;
use rand::rngs::StdRng;
use std::collections::{BTreeSet, HashMap};

/// How Step 6 chooses the record that starts a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// "Move a random record" (seeded by the call's `seed`).
    Random,
    /// The first remaining record in table order: reproduces the worked example, which starts
    /// from record 0 (Section 4.2).
    First,
}

impl Pick {
    /// The `pick=random|first` option of `function`.
    pub(crate) fn parse(function: &str, value: &str) -> crate::error::Result<Pick> {
        crate::keyword::parse(&[(Pick::Random, &["random"]), (Pick::First, &["first"])], value).ok_or_else(|| {
            crate::error::AnonError::argument(function, "pick", format!("'{value}' is not random or first"))
        })
    }
}

/// A cluster being formed or merged: its group, records and generalized demographics.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub(crate) group: usize,
    pub records: Vec<u32>,
    pub(crate) hull: Hull,
}

impl Cluster {
    /// NCP(C) = Σ_{r ∈ C} NCP(r) = |C| · NCP of the hull (Definition 4).
    pub(crate) fn ncp(&self, table: &RtTable, weights: &[f64]) -> f64 {
        self.records.len() as f64 * self.hull.ncp(table, weights)
    }
}

/// Steps 4–14 for one group of at least k records (`group` is its index, for the clusters).
///
/// A record's cost in Step 13 depends only on its demographics, so records are indexed by
/// their distinct demographic tuple: each step evaluates every tuple once (192 tuples in EHRD)
/// instead of every pool record, and takes the first pool record (in pool order) of the
/// cheapest tuples, which is the record the per-record scan picks. The pool order is kept by
/// positions in `records`, so a random start is the same draw as before.
pub fn form_group(
    table: &RtTable,
    group: usize,
    records: &[u32],
    k: usize,
    weights: &[f64],
    pick: Pick,
    rng: &mut StdRng,
) -> Vec<Cluster> {
    form_group_cancellable(table, group, records, k, weights, pick, rng, &crate::progress::Silent)
        .expect("a silent reporter never cancels")
}

/// [`form_group`], stopped with "cancelled by the user" when `progress.cancelled()`: a large
/// group takes seconds (each cluster scans the pool), so the flag is read per cluster.
#[allow(clippy::too_many_arguments)]
pub(crate) fn form_group_cancellable(
    table: &RtTable,
    group: usize,
    records: &[u32],
    k: usize,
    weights: &[f64],
    pick: Pick,
    rng: &mut StdRng,
    progress: &dyn crate::progress::Progress,
) -> crate::error::Result<Vec<Cluster>> {
    let mut pool = Pool::new(table, records);
    let mut clusters: Vec<Cluster> = Vec::new();
    while pool.len() >= k.max(1) {
        progress.check()?;
        let seed = pool.take_nth(draw(pick, pool.len(), rng));
        clusters.push(grow(table, group, seed, k, |c, size| {
            pool.take_nearest(|h| size * c.hull.merged_ncp(table, h, weights))
        }));
    }
    place_rest(table, &mut clusters, pool.remaining(), weights);
    Ok(clusters)
}

/// Step 6's start of a cluster: the first record of the pool, or one drawn at random.
fn draw(pick: Pick, len: usize, rng: &mut StdRng) -> usize {
    match pick {
        Pick::First => 0,
        Pick::Random => rng.random_range(0..len),
    }
}

/// A cluster started at `seed` and grown to k records (Steps 7–9): `take_nearest(c, size)`
/// removes from the pool the record whose addition makes the cluster of `size` records cheapest.
fn grow(
    table: &RtTable,
    group: usize,
    seed: u32,
    k: usize,
    mut take_nearest: impl FnMut(&Cluster, f64) -> u32,
) -> Cluster {
    let mut c = Cluster { group, records: vec![seed], hull: Hull::of_record(table, seed) };
    while c.records.len() < k {
        let r = take_nearest(&c, (c.records.len() + 1) as f64);
        c.hull.add(table, r);
        c.records.push(r);
    }
    c
}

/// Steps 12–14: each record left over (fewer than k) joins the cluster whose NCP it raises least.
fn place_rest(table: &RtTable, clusters: &mut [Cluster], rest: impl IntoIterator<Item = u32>, weights: &[f64]) {
    for r in rest {
        let one = Hull::of_record(table, r);
        let best = nearest_cluster(clusters, |c| {
            (c.records.len() + 1) as f64 * c.hull.merged_ncp(table, &one, weights) - c.ncp(table, weights)
        });
        if let Some(i) = best {
            clusters[i].hull.add(table, r);
            clusters[i].records.push(r);
        }
    }
}

/// The records not yet in a cluster, by position in the group, indexed by demographic tuple.
struct Pool<'a> {
    records: &'a [u32],
    /// Per tuple: its hull and its remaining positions.
    tuples: Vec<(Hull, BTreeSet<usize>)>,
    tuple_of: Vec<usize>,
    /// Tuples with remaining records.
    active: Vec<usize>,
    /// Fenwick tree over positions (1 = remaining), for the n-th remaining record.
    fenwick: Vec<usize>,
    len: usize,
}

impl<'a> Pool<'a> {
    fn new(table: &RtTable, records: &'a [u32]) -> Self {
        let mut index: HashMap<Vec<u32>, usize> = HashMap::new();
        let mut tuples: Vec<(Hull, BTreeSet<usize>)> = Vec::new();
        let mut tuple_of = Vec::with_capacity(records.len());
        for (pos, &r) in records.iter().enumerate() {
            let key: Vec<u32> = table.demographics.iter().map(|q| q.codes[r as usize]).collect();
            let t = *index.entry(key).or_insert_with(|| {
                tuples.push((Hull::of_record(table, r), BTreeSet::new()));
                tuples.len() - 1
            });
            tuples[t].1.insert(pos);
            tuple_of.push(t);
        }
        let n = records.len();
        let mut fenwick = vec![0; n + 1];
        for i in 1..=n {
            fenwick[i] += 1;
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                fenwick[j] += fenwick[i];
            }
        }
        Pool { records, active: (0..tuples.len()).collect(), tuples, tuple_of, fenwick, len: n }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Remove the record at `pos` from the pool and return it.
    fn take(&mut self, pos: usize) -> u32 {
        let t = self.tuple_of[pos];
        self.tuples[t].1.remove(&pos);
        if self.tuples[t].1.is_empty() {
            self.active.retain(|&a| a != t);
        }
        let mut i = pos + 1;
        while i < self.fenwick.len() {
            self.fenwick[i] -= 1;
            i += i & i.wrapping_neg();
        }
        self.len -= 1;
        self.records[pos]
    }

    /// Remove and return the n-th remaining record (0-based, in pool order).
    fn take_nth(&mut self, n: usize) -> u32 {
        let (mut pos, mut left) = (0, n + 1);
        let mut step = (self.fenwick.len() - 1).next_power_of_two();
        while step > 0 {
            if pos + step < self.fenwick.len() && self.fenwick[pos + step] < left {
                pos += step;
                left -= self.fenwick[pos];
            }
            step /= 2;
        }
        self.take(pos)
    }

    /// Remove and return the first remaining record (in pool order) of minimum cost.
    fn take_nearest(&mut self, cost: impl Fn(&Hull) -> f64) -> u32 {
        let mut best: Option<(f64, usize)> = None;
        for &t in &self.active {
            let (hull, positions) = &self.tuples[t];
            let (c, first) = (cost(hull), *positions.first().expect("active tuples have records"));
            if best.is_none_or(|(b, p)| c < b || (c == b && first < p)) {
                best = Some((c, first));
            }
        }
        self.take(best.expect("the pool is not empty").1)
    }

    /// The remaining records, in pool order.
    fn remaining(&self) -> Vec<u32> {
        let mut pos: Vec<usize> = self.active.iter().flat_map(|&t| self.tuples[t].1.iter().copied()).collect();
        pos.sort_unstable();
        pos.into_iter().map(|p| self.records[p]).collect()
    }
}

/// The per-record scan of Steps 4–14, as first written: the reference the indexed
/// [`form_group`] must agree with.
#[cfg(test)]
pub(crate) fn form_group_reference(
    table: &RtTable,
    group: usize,
    records: &[u32],
    k: usize,
    weights: &[f64],
    pick: Pick,
    rng: &mut StdRng,
) -> Vec<Cluster> {
    let mut pool: Vec<u32> = records.to_vec();
    let mut clusters: Vec<Cluster> = Vec::new();
    while pool.len() >= k.max(1) {
        let seed = pool.remove(draw(pick, pool.len(), rng));
        clusters.push(grow(table, group, seed, k, |c, size| {
            pool.remove(nearest(&pool, |r| size * c.hull.merge(table, &Hull::of_record(table, r)).ncp(table, weights)))
        }));
    }
    place_rest(table, &mut clusters, pool, weights);
    clusters
}

/// Index of the pool record with the smallest cost (the first on ties).
#[cfg(test)]
fn nearest(pool: &[u32], cost: impl Fn(u32) -> f64) -> usize {
    let mut best = (0, f64::INFINITY);
    for (i, &r) in pool.iter().enumerate() {
        let c = cost(r);
        if c < best.1 {
            best = (i, c);
        }
    }
    best.0
}

fn nearest_cluster(clusters: &[Cluster], cost: impl Fn(&Cluster) -> f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in clusters.iter().enumerate() {
        let x = cost(c);
        if best.is_none_or(|b| x < b.1) {
            best = Some((i, x));
        }
    }
    best.map(|b| b.0)
}
