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

/// How Step 6 chooses the record that starts a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// "Move a random record" (seeded by the call's `seed`).
    Random,
    /// The first remaining record in table order: reproduces the worked example, which starts
    /// from record 0 (Section 4.2).
    First,
}

/// A cluster being formed or merged: its group, records and generalized demographics.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    pub group: usize,
    pub records: Vec<u32>,
    pub hull: Hull,
}

impl Cluster {
    /// NCP(C) = Σ_{r ∈ C} NCP(r) = |C| · NCP of the hull (Definition 4).
    pub fn ncp(&self, table: &RtTable, weights: &[f64]) -> f64 {
        self.records.len() as f64 * self.hull.ncp(table, weights)
    }
}

/// Steps 4–14 for one group of at least k records (`group` is its index, for the clusters).
pub fn form_group(
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
        let start = match pick {
            Pick::First => 0,
            Pick::Random => rng.random_range(0..pool.len()),
        };
        let seed = pool.remove(start);
        let mut c = Cluster { group, records: vec![seed], hull: Hull::of_record(table, seed) };
        while c.records.len() < k {
            let size = (c.records.len() + 1) as f64;
            let best = nearest(&pool, |r| size * c.hull.merge(table, &Hull::of_record(table, r)).ncp(table, weights));
            let r = pool.remove(best);
            c.hull.add(table, r);
            c.records.push(r);
        }
        clusters.push(c);
    }
    for r in pool {
        let one = Hull::of_record(table, r);
        let best = nearest_cluster(&clusters, |c| {
            (c.records.len() + 1) as f64 * c.hull.merge(table, &one).ncp(table, weights) - c.ncp(table, weights)
        });
        if let Some(i) = best {
            clusters[i].hull.add(table, r);
            clusters[i].records.push(r);
        }
    }
    clusters
}

/// Index of the pool record with the smallest cost (the first on ties).
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
