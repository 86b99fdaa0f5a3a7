//! Minimum-cost flow for UL's exact suppression bounds ([`super::ul`]): the cheapest and the
//! dearest assignment of original records to released rows is a transportation problem
//! (originals supply their records, released rows take theirs, an edge costs the codes the
//! record would lose there).
//!
//! Primal-dual algorithm: Dijkstra on reduced costs gives the shortest augmenting distance and
//! new potentials; then a blocking flow (Dinic) over the edges of reduced cost 0 sends every
//! unit that can go at that distance. Costs are small integers (codes a record loses), so the
//! distance takes few values and there are few phases, each O(E log V) plus the blocking flow;
//! sending one unit per Dijkstra (successive shortest paths) would run one per record, tens of
//! thousands on the bundled Informs. Written here rather than taken from a crate: the crates
//! that offer it are either dense assignment (Hungarian, O(n³) on 36,553 records) or
//! unmaintained, and this is ~150 lines tested against brute force.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A flow network with integer capacities and non-negative integer costs.
#[derive(Debug, Default)]
pub(crate) struct Network {
    adj: Vec<Vec<usize>>,
    to: Vec<usize>,
    cap: Vec<u64>,
    cost: Vec<i64>,
}

const UNREACHED: i64 = i64::MAX;

impl Network {
    pub(crate) fn new(nodes: usize) -> Self {
        Network { adj: vec![Vec::new(); nodes], ..Default::default() }
    }

    /// An edge `from → to` of capacity `cap` and cost `cost` (≥ 0), with its residual twin.
    pub(crate) fn edge(&mut self, from: usize, to: usize, cap: u64, cost: i64) {
        debug_assert!(cost >= 0, "costs are non-negative");
        for (a, b, c, k) in [(from, to, cap, cost), (to, from, 0, -cost)] {
            self.adj[a].push(self.to.len());
            self.to.push(b);
            self.cap.push(c);
            self.cost.push(k);
        }
    }

    /// Send as much flow as possible from `s` to `t`, at least cost among maximum flows:
    /// (flow, cost).
    pub(crate) fn min_cost_max_flow(&mut self, s: usize, t: usize) -> (u64, i64) {
        let n = self.adj.len();
        let mut potential = vec![0i64; n];
        let (mut flow, mut cost) = (0u64, 0i64);
        loop {
            let dist = self.distances(s, &potential);
            let reach = dist[t];
            if reach == UNREACHED {
                return (flow, cost);
            }
            // Capped at t's distance, the reduced costs stay non-negative for every edge, and
            // each shortest path to t has reduced cost 0.
            for (p, d) in potential.iter_mut().zip(&dist) {
                *p += (*d).min(reach);
            }
            let sent = self.blocking_flows(s, t, &potential);
            flow += sent;
            cost += sent as i64 * (potential[t] - potential[s]);
        }
    }

    fn reduced(&self, e: usize, from: usize, potential: &[i64]) -> i64 {
        self.cost[e] + potential[from] - potential[self.to[e]]
    }

    /// Dijkstra over residual edges on reduced costs.
    fn distances(&self, s: usize, potential: &[i64]) -> Vec<i64> {
        let mut dist = vec![UNREACHED; self.adj.len()];
        let mut heap = BinaryHeap::new();
        dist[s] = 0;
        heap.push(Reverse((0i64, s)));
        while let Some(Reverse((d, u))) = heap.pop() {
            if d > dist[u] {
                continue;
            }
            for &e in &self.adj[u] {
                if self.cap[e] == 0 {
                    continue;
                }
                let v = self.to[e];
                let nd = d + self.reduced(e, u, potential);
                if nd < dist[v] {
                    dist[v] = nd;
                    heap.push(Reverse((nd, v)));
                }
            }
        }
        dist
    }

    /// Dinic over the admissible edges (residual, reduced cost 0): the units sent.
    fn blocking_flows(&mut self, s: usize, t: usize, potential: &[i64]) -> u64 {
        let n = self.adj.len();
        let mut sent = 0;
        loop {
            // BFS levels over admissible edges.
            let mut level = vec![u32::MAX; n];
            level[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for &e in &self.adj[u] {
                    let v = self.to[e];
                    if self.cap[e] > 0 && level[v] == u32::MAX && self.reduced(e, u, potential) == 0 {
                        level[v] = level[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            if level[t] == u32::MAX {
                return sent;
            }
            sent += self.blocking_flow(s, t, &mut level, potential);
        }
    }

    /// One blocking flow along increasing levels, with an explicit stack (paths can be long).
    fn blocking_flow(&mut self, s: usize, t: usize, level: &mut [u32], potential: &[i64]) -> u64 {
        let mut next = vec![0usize; self.adj.len()];
        let mut path: Vec<usize> = Vec::new();
        let mut sent = 0;
        let mut u = s;
        loop {
            if u == t {
                let f = path.iter().map(|&e| self.cap[e]).min().expect("a path to t has an edge");
                for &e in &path {
                    self.cap[e] -= f;
                    self.cap[e ^ 1] += f;
                }
                sent += f;
                path.clear();
                u = s;
                continue;
            }
            let admissible =
                |e: usize| self.cap[e] > 0 && level[self.to[e]] == level[u] + 1 && self.reduced(e, u, potential) == 0;
            while next[u] < self.adj[u].len() && !admissible(self.adj[u][next[u]]) {
                next[u] += 1;
            }
            match self.adj[u].get(next[u]) {
                Some(&e) => {
                    path.push(e);
                    u = self.to[e];
                }
                None => {
                    // A dead end: never enter it again in this phase.
                    level[u] = u32::MAX;
                    match path.pop() {
                        Some(e) => u = self.to[e ^ 1],
                        None => return sent,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// Least cost of a perfect assignment of `cost.len()` rows to columns, by trying them all.
    fn brute_force(cost: &[Vec<Option<i64>>]) -> Option<i64> {
        fn go(cost: &[Vec<Option<i64>>], row: usize, used: &mut Vec<bool>) -> Option<i64> {
            if row == cost.len() {
                return Some(0);
            }
            let mut best = None;
            for c in 0..used.len() {
                if let (false, Some(k)) = (used[c], cost[row][c]) {
                    used[c] = true;
                    if let Some(rest) = go(cost, row + 1, used) {
                        best = Some(best.map_or(k + rest, |b: i64| b.min(k + rest)));
                    }
                    used[c] = false;
                }
            }
            best
        }
        go(cost, 0, &mut vec![false; cost[0].len()])
    }

    /// Random assignment problems with forbidden pairs: the flow's cost is the brute force's,
    /// and it is short of a perfect assignment exactly when none exists.
    #[test]
    fn matches_brute_force_on_random_assignments() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..400 {
            let n = rng.random_range(1..7usize);
            let cost: Vec<Vec<Option<i64>>> = (0..n)
                .map(|_| (0..n).map(|_| rng.random_bool(0.7).then(|| rng.random_range(0..6i64))).collect())
                .collect();
            let mut net = Network::new(2 * n + 2);
            let (s, t) = (2 * n, 2 * n + 1);
            for (i, row) in cost.iter().enumerate() {
                net.edge(s, i, 1, 0);
                net.edge(n + i, t, 1, 0);
                for (j, k) in row.iter().enumerate() {
                    if let Some(k) = *k {
                        net.edge(i, n + j, 1, k);
                    }
                }
            }
            let (flow, total) = net.min_cost_max_flow(s, t);
            match brute_force(&cost) {
                Some(best) => assert_eq!((flow, total), (n as u64, best), "{cost:?}"),
                None => assert!(flow < n as u64, "{cost:?}"),
            }
        }
    }

    /// Capacities above one: supplies and demands of several units, as UL's weighted records
    /// and rows use them; checked against the same problem expanded to unit nodes.
    #[test]
    fn weighted_supplies_match_their_unit_expansion() {
        let mut rng = StdRng::seed_from_u64(11);
        for _ in 0..200 {
            let (a, b) = (rng.random_range(1..4usize), rng.random_range(1..4usize));
            let supply: Vec<u64> = (0..a).map(|_| rng.random_range(1..3)).collect();
            let demand: Vec<u64> = (0..b).map(|_| rng.random_range(1..3)).collect();
            let cost: Vec<Vec<Option<i64>>> = (0..a)
                .map(|_| (0..b).map(|_| rng.random_bool(0.8).then(|| rng.random_range(0..5i64))).collect())
                .collect();
            let mut net = Network::new(a + b + 2);
            let (s, t) = (a + b, a + b + 1);
            for (i, (row, &w)) in cost.iter().zip(&supply).enumerate() {
                net.edge(s, i, w, 0);
                for (j, k) in row.iter().enumerate() {
                    if let Some(k) = *k {
                        net.edge(i, a + j, u64::MAX / 4, k);
                    }
                }
            }
            for (j, &w) in demand.iter().enumerate() {
                net.edge(a + j, t, w, 0);
            }
            let (flow, total) = net.min_cost_max_flow(s, t);
            let rows: Vec<usize> = (0..a).flat_map(|i| std::iter::repeat_n(i, supply[i] as usize)).collect();
            let cols: Vec<usize> = (0..b).flat_map(|j| std::iter::repeat_n(j, demand[j] as usize)).collect();
            if rows.len() == cols.len() && flow == rows.len() as u64 {
                let unit: Vec<Vec<Option<i64>>> =
                    rows.iter().map(|&i| cols.iter().map(|&j| cost[i][j]).collect()).collect();
                assert_eq!(Some(total), brute_force(&unit), "{supply:?} {demand:?} {cost:?}");
            }
            assert!(flow <= rows.len().min(cols.len()) as u64);
        }
    }
}
