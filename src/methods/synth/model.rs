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
    /// N̂, the estimated number of records.
    pub total: f64,
}

/// The inverse-variance average of the measurements' totals; `cell_variance[j]` is the noise
/// variance of each cell of measurement `j`, so its total has `len · cell_variance[j]`.
pub(crate) fn weighted_total(measurements: &[Vec<i64>], cell_variance: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (m, v) in measurements.iter().zip(cell_variance) {
        let w = 1.0 / (m.len() as f64 * v.max(f64::MIN_POSITIVE));
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
            let w1 = 1.0 / var.one_way;
            let mut num: Vec<f64> = measured.iter().map(|&y| w1 * y as f64).collect();
            let mut den = w1;
            for (&(x, y), m) in tree.iter().zip(two_way) {
                let (sums, other) = if x == a {
                    (row_sums(m, sizes[x], sizes[y]), sizes[y])
                } else if y == a {
                    (col_sums(m, sizes[x], sizes[y]), sizes[x])
                } else {
                    continue;
                };
                let w = 1.0 / (var.two_way * other as f64);
                num.iter_mut().zip(&sums).for_each(|(n, s)| *n += w * s);
                den += w;
            }
            marginals.push(project(&num.iter().map(|n| n / den).collect::<Vec<_>>(), total));
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
        Ok(TreeModel { sizes: sizes.to_vec(), order, parent, marginals, joints, total })
    }

    /// How many records to draw: N̂ rounded.
    pub fn records(&self) -> u64 {
        self.total.round().max(0.0) as u64
    }
}

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
        assert_eq!(m.records(), 60);
        let t = m.joints[1].as_ref().unwrap();
        for (a, b) in t.iter().zip(&joint) {
            assert!((a - *b as f64).abs() < 1e-6, "{t:?}");
        }
    }
}
