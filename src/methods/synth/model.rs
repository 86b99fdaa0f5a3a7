//! One consistent tree model from the noisy marginals: post-processing of what the mechanisms
//! published, so it costs no budget (docs/dp.md, "Synthetic records from a tree of marginals").
//!
//! The estimator, in three steps:
//!
//! 1. **Each attribute's marginal.** An attribute's counts are measured once directly (its noisy
//!    one-way marginal, variance v₁ per cell) and once more by every selected pair it belongs
//!    to (the noisy two-way table summed over the other attribute, d_o cells of variance v₂
//!    each). Unbiased estimates of the same counts, independent, so they are averaged with
//!    inverse-variance weights (the least-squares combination). The number of records N̂ is
//!    the inverse-variance average of every measurement's total. The averaged vector is then
//!    projected (Euclidean) onto {x ≥ 0, Σx = N̂}: the nearest vector of counts that can be a
//!    marginal of N̂ records.
//! 2. **Each edge's table.** The noisy two-way table, projected the same way onto {x ≥ 0,
//!    Σx = N̂} (a common θ off every cell: the positive noise of empty cells goes too, which
//!    clipping negatives would keep), is raked (iterative proportional fitting) to the two
//!    projected marginals of its attributes, so its row sums are the parent's marginal and its
//!    column sums the child's.
//! 3. **The tree.** Rooted at attribute 0, each child's conditional given its parent is its
//!    edge's raked table normalized by row. A tree's pairwise tables that agree on their
//!    shared attributes are the marginals of exactly one distribution with this independence
//!    structure (a junction tree): the model draws the root from its marginal and each child
//!    from its conditional, and its one-way and selected two-way marginals are the estimates.
//! 4. **Three-way marginals** ([`TreeModel::add_triple`]): a child c whose parent p has another
//!    neighbour e gains e as a second parent. The noisy table of (p, e, c) is projected the same
//!    way and raked (three-dimensional iterative proportional fitting) to the model's tables of
//!    (p, c) and (p, e); c is then drawn from its conditional given (p, e), so the model keeps
//!    every two-way table it had and adds the measured dependence of c on e given p.

use crate::error::{AnonError, Result};

/// Variance of one cell's noise, per kind of marginal.
#[derive(Debug, Clone, Copy)]
pub struct Variances {
    pub one_way: f64,
    pub two_way: f64,
}

/// The model records are drawn from.
#[derive(Debug, Clone)]
pub struct TreeModel {
    pub sizes: Vec<usize>,
    /// Attributes in the order they are drawn: the root, then each after its parent.
    pub order: Vec<usize>,
    pub parent: Vec<Option<usize>>,
    /// Each attribute's estimated counts (nonnegative, summing to `total`).
    pub marginals: Vec<Vec<f64>>,
    /// A child's raked table with its parent, row-major by the parent's code (`None`: the root).
    pub joints: Vec<Option<Vec<f64>>>,
    /// A child's second parent e, from a three-way marginal (`None`: its parent alone).
    pub extra: Vec<Option<usize>>,
    /// A child's raked table with its parent p and second parent e, row-major by (p, e): cell
    /// (u, w, v) at (u·d_e + w)·d_c + v.
    pub triples: Vec<Option<Vec<f64>>>,
    /// N̂, the estimated number of records.
    pub total: f64,
}

/// Weights proportional to 1/v for each variance v (the inverse-variance, least-squares weights),
/// scaled by the least variance so that each lies in [0, 1] and no sum of them overflows. The
/// least variance can be 0: at a huge ε the discrete Laplace's q = e^(−ε) underflows to 0, its
/// noise is exactly 0 and its variance 0, and 1/v would be infinite (the weights' sums then
/// inf, the estimates inf or NaN). Its limit is taken instead: every measurement of the least
/// variance weighs 1 and every noisier one 0, so the exact measurements decide.
pub(crate) fn inverse_variance_weights(variances: &[f64]) -> Vec<f64> {
    let least = variances.iter().copied().fold(f64::INFINITY, f64::min);
    variances.iter().map(|&v| if v <= least { 1.0 } else { least / v }).collect()
}

/// The inverse-variance average of the measurements' totals; `cell_variance[j]` is the noise
/// variance of each cell of measurement `j`, so its total has `len · cell_variance[j]`. A
/// measurement with no cells measures nothing and is left out.
pub(crate) fn weighted_total(measurements: &[Vec<i64>], cell_variance: &[f64]) -> f64 {
    let measured: Vec<(&Vec<i64>, f64)> = measurements
        .iter()
        .zip(cell_variance)
        .filter(|(m, _)| !m.is_empty())
        .map(|(m, &v)| (m, m.len() as f64 * v))
        .collect();
    let weights = inverse_variance_weights(&measured.iter().map(|&(_, v)| v).collect::<Vec<_>>());
    let (mut num, mut den) = (0.0, 0.0);
    for ((m, _), w) in measured.iter().zip(weights) {
        num += w * m.iter().sum::<i64>() as f64;
        den += w;
    }
    if den > 0.0 { (num / den).max(0.0) } else { 0.0 }
}

/// The Euclidean projection of `v` onto {x ≥ 0, Σx = total} (total ≤ 0: all zeros): x = max(v −
/// θ, 0) with θ chosen so the sum is `total` (Held, Wolfe, Crowder 1974; sort-based).
pub(crate) fn project(v: &[f64], total: f64) -> Vec<f64> {
    if total <= 0.0 || v.is_empty() {
        return vec![0.0; v.len()];
    }
    let mut sorted = v.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let (mut sum, mut theta) = (0.0, 0.0);
    for (j, &u) in sorted.iter().enumerate() {
        sum += u;
        let t = (sum - total) / (j + 1) as f64;
        if u - t > 0.0 {
            theta = t;
        }
    }
    v.iter().map(|&x| (x - theta).max(0.0)).collect()
}

/// Rake `table` (rows × cols, nonnegative) so its row sums are `rows` and its column sums
/// `cols` (both summing to the same total): iterative proportional fitting. A row or column
/// with nothing in it but a positive target is filled in proportion to the other margin. When
/// the table's zeros admit a table with both margins, raking converges to it; when they admit
/// none (a column whose only nonzero cells lie in rows too small for it), it approaches the
/// nearest and stops after [`RAKE_ROUNDS`] with the columns met and the rows close.
pub(crate) fn rake(table: &mut [f64], rows: &[f64], cols: &[f64]) {
    let (r, c) = (rows.len(), cols.len());
    let total: f64 = rows.iter().sum();
    if total <= 0.0 {
        table.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    for _ in 0..RAKE_ROUNDS {
        for i in 0..r {
            let row = &mut table[i * c..(i + 1) * c];
            let sum: f64 = row.iter().sum();
            if sum > 0.0 {
                row.iter_mut().for_each(|x| *x *= rows[i] / sum);
            } else {
                row.iter_mut().zip(cols).for_each(|(x, &m)| *x = rows[i] * m / total);
            }
        }
        let mut worst = 0.0f64;
        for j in 0..c {
            let sum: f64 = (0..r).map(|i| table[i * c + j]).sum();
            worst = worst.max((sum - cols[j]).abs());
            if sum > 0.0 {
                (0..r).for_each(|i| table[i * c + j] *= cols[j] / sum);
            } else {
                (0..r).for_each(|i| table[i * c + j] = cols[j] * rows[i] / total);
            }
        }
        if worst <= RAKE_TOLERANCE * total {
            break;
        }
    }
}

/// Rake the three-way table `t` of (p, e, c) (sizes `d`, row-major) so that its (p, e) margin is
/// `pe` and its (p, c) margin `pc` (both row-major by p, with the same p-margin): iterative
/// proportional fitting over the two-dimensional margins; an empty fibre with a positive target
/// is filled in proportion to the other margin's row of p.
pub(crate) fn rake3(t: &mut [f64], (dp, de, dc): (usize, usize, usize), pe: &[f64], pc: &[f64]) {
    let total: f64 = pc.iter().sum();
    if total <= 0.0 {
        t.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    let at = |u: usize, w: usize, v: usize| (u * de + w) * dc + v;
    for _ in 0..RAKE_ROUNDS {
        for u in 0..dp {
            let pe_row: f64 = pe[u * de..(u + 1) * de].iter().sum();
            for v in 0..dc {
                let sum: f64 = (0..de).map(|w| t[at(u, w, v)]).sum();
                let target = pc[u * dc + v];
                for w in 0..de {
                    let x = &mut t[at(u, w, v)];
                    *x = if sum > 0.0 {
                        *x * target / sum
                    } else if pe_row > 0.0 {
                        target * pe[u * de + w] / pe_row
                    } else {
                        0.0
                    };
                }
            }
        }
        let mut worst = 0.0f64;
        for u in 0..dp {
            let pc_row: f64 = pc[u * dc..(u + 1) * dc].iter().sum();
            for w in 0..de {
                let fibre = &mut t[at(u, w, 0)..at(u, w, 0) + dc];
                let sum: f64 = fibre.iter().sum();
                let target = pe[u * de + w];
                worst = worst.max((sum - target).abs());
                if sum > 0.0 {
                    fibre.iter_mut().for_each(|x| *x *= target / sum);
                } else if pc_row > 0.0 {
                    fibre.iter_mut().zip(&pc[u * dc..]).for_each(|(x, &m)| *x = target * m / pc_row);
                }
            }
        }
        if worst <= RAKE_TOLERANCE * total {
            break;
        }
    }
}

/// Raking stops after this many rounds, or once every column is within the tolerance.
const RAKE_ROUNDS: usize = 200;
const RAKE_TOLERANCE: f64 = 1e-9;

impl TreeModel {
    /// The model from the noisy one-way marginals and the tree's noisy two-way tables
    /// (`two_way[e]` for edge `tree[e] = (a, b)`, row-major by `a`).
    pub fn estimate(
        sizes: &[usize],
        one_way: &[Vec<i64>],
        tree: &[(usize, usize)],
        two_way: &[Vec<i64>],
        var: Variances,
    ) -> Result<Self> {
        let k = sizes.len();
        if one_way.len() != k || two_way.len() != tree.len() || (k > 0 && tree.len() != k - 1) {
            return Err(AnonError::argument(
                "dp_synthesize",
                "source",
                "internal: the measurements do not match the tree",
            ));
        }
        // N̂ from every measurement's total.
        let mut all: Vec<Vec<i64>> = one_way.to_vec();
        all.extend(two_way.iter().cloned());
        let cell_var: Vec<f64> =
            std::iter::repeat_n(var.one_way, k).chain(std::iter::repeat_n(var.two_way, tree.len())).collect();
        let total = weighted_total(&all, &cell_var);
        // Step 1: each attribute's counts, inverse-variance averaged, projected.
        let mut marginals = Vec::with_capacity(k);
        for (a, measured) in one_way.iter().enumerate() {
            // Its measurements: the one-way marginal (cell variance v₁), then each tree edge's
            // table summed over the other attribute (d_other · v₂).
            let mut sums: Vec<Vec<f64>> = vec![measured.iter().map(|&y| y as f64).collect()];
            let mut variances = vec![var.one_way];
            for (&(x, y), m) in tree.iter().zip(two_way) {
                let (s, other) = if x == a {
                    (row_sums(m, sizes[x], sizes[y]), sizes[y])
                } else if y == a {
                    (col_sums(m, sizes[x], sizes[y]), sizes[x])
                } else {
                    continue;
                };
                sums.push(s);
                variances.push(var.two_way * other as f64);
            }
            let weights = inverse_variance_weights(&variances);
            let den: f64 = weights.iter().sum();
            let average: Vec<f64> =
                (0..sizes[a]).map(|i| sums.iter().zip(&weights).map(|(s, w)| w * s[i]).sum::<f64>() / den).collect();
            marginals.push(project(&average, total));
        }
        // Step 3's order: breadth-first from attribute 0.
        let (mut order, mut parent) = (vec![0usize], vec![None; k]);
        let mut joints: Vec<Option<Vec<f64>>> = vec![None; k];
        let mut seen = vec![false; k];
        if k > 0 {
            seen[0] = true;
        }
        let mut i = 0;
        while i < order.len() {
            let p = order[i];
            for (&(x, y), m) in tree.iter().zip(two_way) {
                let c = if x == p {
                    y
                } else if y == p {
                    x
                } else {
                    continue;
                };
                if seen[c] {
                    continue;
                }
                seen[c] = true;
                // Step 2: the edge's table, parent's code first, projected and raked.
                let mut t: Vec<f64> = vec![0.0; sizes[p] * sizes[c]];
                for u in 0..sizes[p] {
                    for v in 0..sizes[c] {
                        let cell = if x == p { m[u * sizes[c] + v] } else { m[v * sizes[p] + u] };
                        t[u * sizes[c] + v] = cell as f64;
                    }
                }
                let mut t = project(&t, total);
                rake(&mut t, &marginals[p], &marginals[c]);
                parent[c] = Some(p);
                joints[c] = Some(t);
                order.push(c);
            }
            i += 1;
        }
        if order.len() != k {
            return Err(AnonError::argument("dp_synthesize", "source", "internal: the selected edges are not a tree"));
        }
        let (extra, triples) = (vec![None; k], vec![None; k]);
        Ok(TreeModel { sizes: sizes.to_vec(), order, parent, marginals, joints, extra, triples, total })
    }

    /// The model's table of (p, x) for a tree neighbour x of p, row-major by p.
    pub(crate) fn pair_table(&self, p: usize, x: usize) -> Option<Vec<f64>> {
        if self.parent[x] == Some(p) {
            return self.joints[x].clone();
        }
        if self.parent[p] != Some(x) {
            return None;
        }
        let (dp, dx, t) = (self.sizes[p], self.sizes[x], self.joints[p].as_ref()?);
        Some((0..dp * dx).map(|i| t[(i % dx) * dp + i / dx]).collect())
    }

    /// Whether `a` is drawn from `b` (its parent, second parent, or theirs, transitively).
    pub(crate) fn depends_on(&self, a: usize, b: usize) -> bool {
        let mut stack = vec![a];
        let mut seen = vec![false; self.sizes.len()];
        while let Some(x) = stack.pop() {
            for y in [self.parent[x], self.extra[x]].into_iter().flatten() {
                if y == b {
                    return true;
                }
                if !std::mem::replace(&mut seen[y], true) {
                    stack.push(y);
                }
            }
        }
        false
    }

    /// Step 4: child `c` (parent p) gains its parent's neighbour `e` as a second parent, from the
    /// noisy three-way table `measured` of (p, e, c) (row-major in that order). `e` must not
    /// depend on `c`; the drawing order is updated so that e comes before c.
    pub fn add_triple(&mut self, e: usize, c: usize, measured: &[i64]) -> Result<()> {
        let internal = |m: &str| AnonError::argument("dp_synthesize", "source", format!("internal: {m}"));
        let p = self.parent[c].ok_or_else(|| internal("a three-way marginal needs a child"))?;
        let (dp, de, dc) = (self.sizes[p], self.sizes[e], self.sizes[c]);
        if measured.len() != dp * de * dc || self.extra[c].is_some() || self.depends_on(e, c) {
            return Err(internal("the three-way marginal does not fit the model"));
        }
        let pc = self.joints[c].clone().ok_or_else(|| internal("a child has a table"))?;
        let pe = self.pair_table(p, e).ok_or_else(|| internal("the second parent is not a neighbour"))?;
        let mut t = project(&measured.iter().map(|&x| x as f64).collect::<Vec<_>>(), self.total);
        rake3(&mut t, (dp, de, dc), &pe, &pc);
        self.extra[c] = Some(e);
        self.triples[c] = Some(t);
        self.order = self.drawing_order();
        Ok(())
    }

    /// The attributes in an order where each comes after its parents: the current order, each
    /// attribute moved after its second parent where it stood before it.
    fn drawing_order(&self) -> Vec<usize> {
        let k = self.sizes.len();
        let (mut order, mut placed) = (Vec::with_capacity(k), vec![false; k]);
        while order.len() < k {
            let next = self
                .order
                .iter()
                .copied()
                .find(|&a| !placed[a] && [self.parent[a], self.extra[a]].into_iter().flatten().all(|q| placed[q]));
            let a = next.expect("the parents form no cycle (add_triple checks)");
            placed[a] = true;
            order.push(a);
        }
        order
    }

    /// How many records to draw: N̂ rounded; an error (naming ε) when that is no count the
    /// release could draw, rather than a cast to `u64` that turns inf into u64::MAX and an
    /// allocation of that many records that aborts. N̂ is an average of measured totals, so
    /// this only follows from noise (or a table) of billions of records.
    pub fn records(&self) -> Result<u64> {
        // NaN is checked before the floor at 0, which would turn it into 0 records.
        let n = self.total.round();
        if n.is_finite() && n <= MAX_RECORDS as f64 {
            return Ok(n.max(0.0) as u64);
        }
        Err(AnonError::argument(
            "dp_synthesize",
            "epsilon",
            format!(
                "the noisy estimate of the number of records ({}) is not a count of at most {MAX_RECORDS} records \
                 to draw; a larger epsilon brings it nearer the table's size",
                self.total
            ),
        ))
    }
}

/// The most records a release draws ([`TreeModel::records`]): each attribute's column holds
/// one u32 per record.
pub const MAX_RECORDS: u64 = u32::MAX as u64;

fn row_sums(m: &[i64], rows: usize, cols: usize) -> Vec<f64> {
    (0..rows).map(|i| m[i * cols..(i + 1) * cols].iter().sum::<i64>() as f64).collect()
}

fn col_sums(m: &[i64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols).map(|j| (0..rows).map(|i| m[i * cols + j]).sum::<i64>() as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection against its definition: nonnegative, the right sum, and no point of the
    /// set nearer (checked against random points of the set).
    #[test]
    fn project_is_the_nearest_nonnegative_vector_with_the_sum() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let n = rng.random_range(1..8);
            let v: Vec<f64> = (0..n).map(|_| rng.random_range(-20.0..40.0)).collect();
            let total = rng.random_range(0.5..60.0);
            let x = project(&v, total);
            assert!(x.iter().all(|&e| e >= 0.0));
            assert!((x.iter().sum::<f64>() - total).abs() < 1e-9, "{v:?} {total} {x:?}");
            let dist = |y: &[f64]| v.iter().zip(y).map(|(a, b)| (a - b).powi(2)).sum::<f64>();
            for _ in 0..50 {
                let raw: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
                let s: f64 = raw.iter().sum();
                let y: Vec<f64> = raw.iter().map(|r| r * total / s).collect();
                assert!(dist(&x) <= dist(&y) + 1e-9);
            }
        }
        assert_eq!(project(&[3.0, -1.0], -2.0), vec![0.0, 0.0]);
    }

    /// A table whose zero pattern admits both margins (the second row, empty, is filled first).
    #[test]
    fn raking_meets_both_margins() {
        let mut t = vec![1.0, 1.0, 5.0, 0.0, 0.0, 0.0];
        let (rows, cols) = ([4.0, 2.0], [1.0, 2.0, 3.0]);
        rake(&mut t, &rows, &cols);
        for i in 0..2 {
            assert!((t[i * 3..i * 3 + 3].iter().sum::<f64>() - rows[i]).abs() < 1e-6, "{t:?}");
        }
        for j in 0..3 {
            assert!(((0..2).map(|i| t[i * 3 + j]).sum::<f64>() - cols[j]).abs() < 1e-6, "{t:?}");
        }
    }

    /// Noise-free measurements of a table with a tree structure give back its marginals.
    #[test]
    fn exact_measurements_give_the_table_back() {
        let sizes = [2usize, 3];
        let joint = vec![10i64, 0, 30, 5, 15, 0];
        let one_way = vec![vec![40, 20], vec![15, 15, 30]];
        let var = Variances { one_way: 1.0, two_way: 1.0 };
        let m = TreeModel::estimate(&sizes, &one_way, &[(0, 1)], std::slice::from_ref(&joint), var).unwrap();
        assert_eq!(m.records().unwrap(), 60);
        let t = m.joints[1].as_ref().unwrap();
        for (a, b) in t.iter().zip(&joint) {
            assert!((a - *b as f64).abs() < 1e-6, "{t:?}");
        }
    }

    /// At a huge ε the noise's variance underflows to 0 (q = e^(−ε) = 0): the exact measurements
    /// decide. Before, 1/0 weights made N̂ inf (records() u64::MAX, then a capacity overflow in
    /// the sampler) and the marginals NaN.
    #[test]
    fn zero_variance_measurements_give_the_table_back() {
        let vanished = crate::dp::DiscreteLaplace::for_epsilon(30000.0, 1).unwrap().variance();
        assert_eq!(vanished, 0.0);
        let (sizes, joint) = ([2usize, 3], vec![10i64, 0, 30, 5, 15, 0]);
        let one_way = vec![vec![40, 20], vec![15, 15, 30]];
        let var = Variances { one_way: vanished, two_way: vanished };
        let m = TreeModel::estimate(&sizes, &one_way, &[(0, 1)], std::slice::from_ref(&joint), var).unwrap();
        assert_eq!(m.records().unwrap(), 60);
        assert_eq!(m.marginals, vec![vec![40.0, 20.0], vec![15.0, 15.0, 30.0]]);
        // One exact measurement among noisy ones is the estimate.
        assert_eq!(weighted_total(&[vec![3, 4], vec![100, 0]], &[0.0, 2.0]), 7.0);
        assert_eq!(weighted_total(&[vec![3, 4], vec![1, 6]], &[0.0, 0.0]), 7.0);
        // No count to draw: an error naming epsilon, not a cast to u64::MAX.
        for total in [f64::INFINITY, f64::NAN, 1e300] {
            let e = TreeModel { total, ..m.clone() }.records().unwrap_err().to_string();
            assert!(e.contains("epsilon"), "{e}");
        }
    }
}
