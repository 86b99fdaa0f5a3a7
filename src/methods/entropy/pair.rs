//! The pair distance d_{s,j} of Algorithm 1: the table's d after records s and j are
//! generalized to their closest common ancestors (Table 4), as a change of N·d.
//!
//! For a seed s, what a candidate j adds to N·H(X_a|Y_a) depends only on j's leaf x_a, so
//! one pass over each hierarchy's leaves per seed turns the H part of every candidate into m
//! lookups ([`SeedView`]). The I part needs the counts of three label tuples: the two leaf
//! tuples, kept in arrays, and the pair's generalized tuple Y*, a hash lookup that is skipped
//! when one of Y*'s labels has no record yet (then Y* has none either).

use super::state::{FLog, State};

/// What every pair with one seed shares.
#[derive(Debug, Clone, Default)]
pub(crate) struct SeedView {
    row: usize,
    tid: u32,
    z: u32,
    /// Per attribute and leaf x: Y*'s label as a node index, its share of the H part, and
    /// the records labelled Y* already.
    node: Vec<Vec<u32>>,
    h: Vec<Vec<f64>>,
    count: Vec<Vec<u64>>,
    /// ΔW of the seed's own leaf tuple losing the seed.
    w_seed: f64,
}

impl State {
    /// Fill `sv` for seed `row` (reusing its buffers).
    pub(crate) fn seed_view(&self, row: usize, sv: &mut SeedView) {
        let f = &self.f;
        sv.row = row;
        sv.tid = self.tid[row];
        sv.z = self.z[row];
        sv.w_seed = f.step(self.tuple_leaf[sv.tid as usize], -1) - f.step(self.at_leaf[self.slot[row] as usize], -1);
        let m = self.attributes();
        sv.node.resize(m, Vec::new());
        sv.h.resize(m, Vec::new());
        sv.count.resize(m, Vec::new());
        for (a, attr) in self.attrs.iter().enumerate() {
            let xs = self.leaves(row)[a];
            let leaves = attr.h.leaf_count();
            let (node, h, count) = (&mut sv.node[a], &mut sv.h[a], &mut sv.count[a]);
            node.clear();
            h.clear();
            count.clear();
            for x in 0..leaves as u32 {
                let y = attr.cca(xs, x);
                node.push(attr.node(y));
                count.push(attr.label_count(xs, y));
                h.push(if y.0 == 0 {
                    0.0
                } else {
                    h_share(f, attr.label_count(xs, y), attr.joint(xs, y.0), attr.joint(x, y.0), xs, x)
                });
            }
        }
    }

    /// Stage one of the pair key: the H part and an upper bound on the records Y* holds.
    #[inline]
    pub(crate) fn pair_h(&self, sv: &SeedView, row: usize) -> (f64, u64) {
        let mut h = 0.0;
        let mut e = u64::MAX;
        for (a, &x) in self.leaves(row).iter().enumerate() {
            h += sv.h[a][x as usize];
            e = e.min(sv.count[a][x as usize]);
        }
        (h, e)
    }

    /// A lower bound on the pair key from stage one. Removing a record from a tuple never
    /// raises its W (W = c·H(Z|Y) loses f(c)−f(c−1) ≥ f(c_z)−f(c_z−1)), and two records raise
    /// Y*'s W by at most f(e+2) − f(e), so the I part is at least −(f(e+2) − f(e)).
    #[inline]
    pub(crate) fn pair_bound(&self, h: f64, e_max: u64) -> f64 {
        if self.with_mi { h - self.f.step(e_max, 2) } else { h }
    }

    /// The change of N·d when the seed and a record of `row` are generalized together.
    pub(crate) fn pair_key(&self, sv: &SeedView, row: usize) -> f64 {
        if self.tid[row] == sv.tid {
            return 0.0; // same quasi-identifiers: nothing is generalized
        }
        let (h, e_max) = self.pair_h(sv, row);
        if self.with_mi { h + self.pair_i(sv, row, e_max) } else { h }
    }

    /// The I part, −ΔΣW, for records of different leaf tuples.
    pub(crate) fn pair_i(&self, sv: &SeedView, row: usize, e_max: u64) -> f64 {
        let f = &self.f;
        let w_j =
            f.step(self.tuple_leaf[self.tid[row] as usize], -1) - f.step(self.at_leaf[self.slot[row] as usize], -1);
        let (zs, zj) = (sv.z, self.z[row]);
        let (e, ezs, ezj) = if e_max == 0 {
            (0, 0, 0)
        } else {
            let mut key: u128 = 0;
            for (a, &x) in self.leaves(row).iter().enumerate() {
                key += sv.node[a][x as usize] as u128 * self.radix(a);
            }
            self.general.get(&key).map_or((0, 0, 0), |t| (t.total, t.z(zs), t.z(zj)))
        };
        let w_star = if zs == zj {
            f.step(e, 2) - f.step(ezs, 2)
        } else {
            let (lo, hi) = if zs < zj { (ezs, ezj) } else { (ezj, ezs) };
            f.step(e, 2) - (f.step(lo, 1) + f.step(hi, 1))
        };
        let (first, second) = if sv.row < row { (sv.w_seed, w_j) } else { (w_j, sv.w_seed) };
        -((first + second) + w_star)
    }

    /// d_{a,b}: the table's d with one record of row `a` and one of row `b` generalized
    /// together (the paper's Table 4 and Algorithm 1).
    pub fn pair_distance(&self, a: usize, b: usize) -> f64 {
        let mut sv = SeedView::default();
        self.seed_view(a, &mut sv);
        self.objective() + self.pair_key(&sv, b) / self.n as f64
    }
}

/// One attribute's share of the H part when leaves xs ≠ x go to a generalized label holding
/// `e` records, `cs` and `cx` of them with values xs and x. The two joint terms are taken in
/// leaf order so the key is the same whichever record is the seed.
#[inline]
fn h_share(f: &FLog, e: u64, cs: u64, cx: u64, xs: u32, x: u32) -> f64 {
    let (first, second) = if xs < x { (cs, cx) } else { (cx, cs) };
    f.step(e, 2) - f.step(first, 1) - f.step(second, 1)
}
