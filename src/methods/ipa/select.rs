//! The private node choice of the sound `ipa_release`: the exponential mechanism over the
//! lattice with a utility that is a TOTAL over records and cells (as SafePub does in ARX),
//! computed from the exact data, so only the chosen node is ever perturbed.
//!
//! For node L with public cell count C_L (value combinations × declared informative values):
//!
//! u(L) = −( Σ_records NCP_L(r) + w · Noise_L + λ · Σ_combinations h_L(x) )
//!
//! - Σ_r NCP_L(r): each record's NCP (Eq. 5 averaged over the dimension attributes) lies in
//!   [0, 1], so adding or removing one record moves the total by at most 1. It is computed
//!   exactly in integers per attribute (leaves covered × records), then divided once.
//! - pure with floor T: Noise_L = Σ_cells f_T(c), f_T(c) = E|R(c + X) − c| with R(y) = y for
//!   y ≥ T and 0 below, the expected count error of the released histogram (closed form in
//!   [`floored_error`]); computed as C_L · f_T(0) (data-independent) plus the non-empty cells'
//!   f_T(c) − f_T(0). One record moves one cell's f_T by at most q/(1 + q) < 1/2 (T = 1,
//!   where f_1(c) = A (2 − q^c), A = q/((1 − q)(1 + q))) or T − 1 (T ≥ 2).
//! - approx: Noise_L = Σ_cells min(c, τ), the mass thresholding can lose; 1-Lipschitz in c.
//!
//! - Σ_x h_L(x), the class term: IPA's IL averages EMD and Rate per class, so a node with many
//!   small classes loses much even when its totals are small. Each value combination x of the
//!   node that can become a released class (pure: all of the domain's, approx: the non-empty
//!   ones) scores h = min(1, E_x / n_x) ∈ [0, 1]: the expected count error of its cells over
//!   its real size (an empty combination under pure: the probability that any of its cells
//!   reaches the floor, 1 − (1 − q^T/(1 + q))^V over V values: it then becomes a class of
//!   counterfeits only).
//!   E_x is the pure cells' expected absolute error, or under approx the real records expected
//!   in cells the threshold drops, Σ c · P(c + X < τ). Each h is quantized down onto a grid of
//!   2^−32 and summed in integers, so the sum is exact.
//!
//! One record changes one cell by one, so Δu ≤ 1 + w·b + λ with b = q/(1 + q) (pure, T = 1),
//! T − 1 (pure, T ≥ 2) or 1 (approx): the class term changes only at the record's combination, whose h stays in [0, 1].
//! The mechanism is given Δ = (1 + w·b + λ)(1 + 1e−6): the margin covers the rounding of the
//! few floating-point operations on exact integer totals (docs/dp.md has the proof).
//! `w` (`noise_weight`) and λ (`class_weight`) are public parameters. Nodes whose cell count exceeds a public limit
//! are excluded before anything is read (a data-independent rule).

use super::histogram::{CellNoise, cell_count};
use crate::dp::{DiscreteLaplace, ExponentialMechanism};
use crate::encode::{Cached, EveryNode, FrequencyTable, NodeCache};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::lattice::{NodeId, search as driver};
use crate::progress::Progress;
use std::sync::Arc;

/// Relative margin on the sensitivity for floating-point rounding (module doc).
const ROUNDING_MARGIN: f64 = 1e-6;

/// One node's score. Diagnostic: it is computed from the exact data.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub node: NodeId,
    pub levels: Vec<u8>,
    /// Public: cells of the node's domain.
    pub(crate) cells: u64,
    pub(crate) ncp_total: f64,
    pub(crate) noise_total: f64,
    /// Σ_x h_L(x) (module doc).
    pub class_total: f64,
    pub utility: f64,
}

/// The utility's parameters (all public).
#[derive(Debug, Clone)]
pub struct Utility {
    mode: CellNoise,
    /// q = e^−ε_counts of the count noise.
    q: f64,
    noise_weight: f64,
    /// λ: the weight of the class term.
    class_weight: f64,
    /// E(0): the expected error of an empty cell ([`Utility::cell_error`]).
    empty_error: f64,
    /// E(c) − E(0) of the counts below [`ERROR_TABLE`] ([`Utility::excess`]), computed once:
    /// every node scores every cell, and the closed forms take a power each.
    excesses: Vec<f64>,
}

/// Cell counts whose expected error is tabulated (larger ones are rare and computed).
const ERROR_TABLE: u32 = 4096;

/// Grid of the class term's summands (module doc): 2^32 units per class.
const CLASS_UNITS: f64 = 4_294_967_296.0;

impl Utility {
    pub fn new(mode: CellNoise, noise: &DiscreteLaplace, noise_weight: f64, class_weight: f64) -> Self {
        let mut u = Utility { mode, q: noise.q(), noise_weight, class_weight, empty_error: 0.0, excesses: Vec::new() };
        u.empty_error = u.cell_error(0);
        u.excesses = (0..ERROR_TABLE).map(|c| u.cell_error(c) - u.empty_error).collect();
        u
    }

    /// The sensitivity passed to the exponential mechanism (module doc).
    pub fn sensitivity(&self) -> f64 {
        let b = match self.mode {
            CellNoise::Pure { floor } if floor <= 1 => self.q / (1.0 + self.q),
            CellNoise::Pure { floor } => (floor - 1) as f64,
            CellNoise::Threshold(_) => 1.0,
        };
        (1.0 + self.noise_weight * b + self.class_weight) * (1.0 + ROUNDING_MARGIN)
    }

    /// Noise_L and Σ_x h_L(x) (module doc) in one pass over the node's cells: the pass is
    /// most of a node's score, every node is scored, and the two sums read the same cells.
    ///
    /// A class of V cells has E_x = V · E(0) + Σ_cells (E(c) − E(0)), and Noise_L's non-empty
    /// cells are the same excesses (an empty cell's is 0), so one sum of tabulated excesses a
    /// class serves both, without a branch on empty cells. The excesses are summed in two
    /// alternating partial sums (even and odd cells), so the additions of a class are two
    /// chains of half the length; the classes' excesses are then added in class order. Each
    /// total is a sum of the same values as the definition in another order: the floating-point
    /// margin of the sensitivity covers the rounding, and h may take any value in [0, 1]
    /// (docs/dp.md). Against one chain of every cell with a branch on empty ones, the 9-QI
    /// node scan takes 0.8× the time (docs/kanon.md, "IPA's cells summed as excesses").
    pub(crate) fn cell_totals(&self, cached: &Cached, width: usize, cells: u64) -> (f64, f64) {
        let g = &cached.g;
        let empty_error = self.empty_error;
        let class_empty = width as f64 * empty_error;
        let tau = match self.mode {
            CellNoise::Threshold(tau) => tau,
            CellNoise::Pure { .. } => 0,
        };
        let (mut filled, mut capped, mut units) = (0.0f64, 0u64, 0u64);
        for c in 0..g.len() {
            let hist = cached.class_hist(c, width);
            let (mut n, mut class_capped, mut even, mut odd) = (0u64, 0u64, 0.0f64, 0.0f64);
            let mut pairs = hist.chunks_exact(2);
            for pair in &mut pairs {
                even += self.excess(pair[0]);
                odd += self.excess(pair[1]);
                n += u64::from(pair[0]) + u64::from(pair[1]);
                class_capped += u64::from(pair[0]).min(tau) + u64::from(pair[1]).min(tau);
            }
            for &x in pairs.remainder() {
                even += self.excess(x);
                n += u64::from(x);
                class_capped += u64::from(x).min(tau);
            }
            let excess = even + odd;
            filled += excess;
            capped += class_capped;
            let h = if n == 0 { 1.0 } else { ((class_empty + excess) / n as f64).clamp(0.0, 1.0) };
            units += (h * CLASS_UNITS) as u64;
        }
        let noise = match self.mode {
            CellNoise::Pure { .. } => cells as f64 * empty_error + filled,
            CellNoise::Threshold(_) => capped as f64,
        };
        (noise, self.class_total(units, g.len(), width, cells / width.max(1) as u64))
    }

    /// E(c) − E(0) for a cell of real count `c` (0 for an empty cell).
    fn excess(&self, c: u32) -> f64 {
        self.excesses.get(c as usize).copied().unwrap_or_else(|| self.cell_error(c) - self.empty_error)
    }

    /// Expected error E of one cell of real count `c` (module doc), by its closed form: pure,
    /// f_T(c) ([`floored_error`]); approx, c · P(X ≤ τ − c − 1), with P(X ≤ −m) = q^m / (1 + q)
    /// for m ≥ 0.
    fn cell_error(&self, c: u32) -> f64 {
        let q = self.q;
        match self.mode {
            CellNoise::Pure { floor } => floored_error(q, floor, u64::from(c)),
            CellNoise::Threshold(tau) => {
                let c = u64::from(c);
                let below = if c >= tau {
                    q.powf((c - tau + 1) as f64) / (1.0 + q)
                } else {
                    1.0 - q.powf((tau - c) as f64) / (1.0 + q)
                };
                c as f64 * below
            }
        }
    }

    /// Σ_x h_L(x) (module doc) from the `units` of the node's `classes` and, under pure, its
    /// `combos − classes` empty combinations (h = 1 each), exactly in units of 2^−32.
    fn class_total(&self, units: u64, classes: usize, width: usize, combos: u64) -> f64 {
        let empty = match self.mode {
            CellNoise::Pure { floor } => {
                let published = self.q.powf(floor.max(1) as f64) / (1.0 + self.q);
                let h = 1.0 - (1.0 - published).powi(width.min(i32::MAX as usize) as i32);
                combos.saturating_sub(classes as u64) * (h.clamp(0.0, 1.0) * CLASS_UNITS) as u64
            }
            CellNoise::Threshold(_) => 0,
        };
        (units + empty) as f64 / CLASS_UNITS
    }

    pub fn score(&self, ncp: &NcpTotals, cached: &Cached, cells: u64, width: usize, node: NodeId) -> Candidate {
        let ncp_total = ncp.total(&cached.g.levels);
        let (noise_total, class_total) = self.cell_totals(cached, width, cells);
        Candidate {
            node,
            levels: cached.g.levels.clone(),
            cells,
            ncp_total,
            noise_total,
            class_total,
            utility: -(ncp_total + self.noise_weight * noise_total + self.class_weight * class_total),
        }
    }
}

/// Σ_r NCP_L(r) (module doc) per attribute and level: NCP is separable by attribute, so a
/// node's total is one tabulated entry per attribute instead of a sum over its classes.
pub struct NcpTotals {
    /// Per attribute and level: the integer Σ records × leaves covered (a leaf covers 0,
    /// Eq. 5), the same integer as summed over any node's classes at that level.
    covered: Vec<Vec<u128>>,
    leaves: Vec<usize>,
}

impl NcpTotals {
    pub fn new(ft: &FrequencyTable) -> Self {
        let hs = ft.hierarchies();
        let covered = hs
            .iter()
            .zip(ft.leaf_marginals())
            .map(|(h, marginal)| (0..=h.height()).map(|level| Self::covered(h, level, &marginal)).collect())
            .collect();
        NcpTotals { covered, leaves: hs.iter().map(|h| h.leaf_count()).collect() }
    }

    fn covered(h: &Hierarchy, level: usize, marginal: &[u64]) -> u128 {
        let up = h.up(level);
        marginal
            .iter()
            .enumerate()
            .map(|(leaf, &n)| {
                let leaves = h.leaves_under(level, up[leaf]);
                if leaves <= 1 { 0 } else { u128::from(n) * u128::from(leaves) }
            })
            .sum()
    }

    /// Σ_r NCP_L(r) of the node at `levels`: per attribute the integer divided by the
    /// attribute's leaves, averaged over the attributes.
    pub(crate) fn total(&self, levels: &[u8]) -> f64 {
        let q = self.leaves.len().max(1) as f64;
        self.covered
            .iter()
            .zip(&self.leaves)
            .zip(levels)
            .map(|((c, &n), &l)| c[l as usize] as f64 / n as f64)
            .sum::<f64>()
            / q
    }
}

/// f_T(c) = E|R(c + X) − c|, R(y) = y for y ≥ T and 0 below, X discrete Laplace with
/// q = e^−ε (docs/dp.md derives it): with p₀ = (1 − q)/(1 + q) and k = q/(1 − q)²,
/// - c ≥ T, s = c − T + 1: E|X| − p₀ q^s ((1 − T)/(1 − q) + k), E|X| = 2q/((1 − q)(1 + q));
/// - c < T, m = T − c: p₀ q^m (m/(1 − q) + k) + c (1 − q^m/(1 + q)).
///
/// T = 1 gives A (2 − q^c) for c ≥ 1 and A for c = 0, A = q/((1 − q)(1 + q)).
pub(crate) fn floored_error(q: f64, floor: u64, c: u64) -> f64 {
    let floor = floor.max(1);
    let t = floor as f64;
    let (p0, k) = ((1.0 - q) / (1.0 + q), q / ((1.0 - q) * (1.0 - q)));
    if c >= floor {
        let s = (c - floor + 1) as f64;
        2.0 * q / ((1.0 - q) * (1.0 + q)) - p0 * q.powf(s) * ((1.0 - t) / (1.0 - q) + k)
    } else {
        let m = t - c as f64;
        p0 * q.powf(m) * (m / (1.0 - q) + k) + c as f64 * (1.0 - q.powf(m) / (1.0 + q))
    }
}

/// Score every node of the lattice whose cell count is at most `max_cells`, in node-id order.
pub fn score_lattice(
    nodes: &mut NodeCache,
    utility: &Utility,
    max_cells: u64,
    progress: &dyn Progress,
) -> Result<Vec<Candidate>> {
    let ncp = NcpTotals::new(nodes.frequency_table());
    let width = nodes.width();
    let scored = map_lattice(nodes, max_cells, progress, "IPA: scoring the lattice", |node, c, cells| {
        utility.score(&ncp, c, cells, width, node)
    })?;
    Ok(scored.into_iter().map(|(_, c)| c).collect())
}

/// `f(node, classes, cells)` for every node of the lattice whose cell count (a public rule on
/// the declared domain) is at most `max_cells`, in node-id order: the search driver's
/// traversal of every node ([`driver::every`]), grouped depth-first ([`EveryNode`]); an error
/// naming `max_cells` when there is none.
pub(crate) fn map_lattice<T: Send>(
    nodes: &mut NodeCache,
    max_cells: u64,
    progress: &dyn Progress,
    task: &str,
    f: impl Fn(NodeId, &Cached, u64) -> T + Sync,
) -> Result<Vec<(NodeId, T)>> {
    let lattice = nodes.lattice.clone();
    let hs: Vec<Arc<Hierarchy>> = nodes.hierarchies().to_vec();
    let width = nodes.width();
    let allowed = |levels: &[u8]| cell_count(&hs, levels, width).filter(|&n| n <= max_cells);
    // Cells only shrink upward, so the nodes within `max_cells` are an up-set and nothing can
    // be ruled out from below: every node is grouped, only those within the cap are scored.
    progress.begin(task, lattice.size() as u64);
    let f = |node: NodeId, c: &Cached| Ok(f(node, c, allowed(&c.g.levels).expect("wanted")));
    let out = driver::every(&lattice, &mut EveryNode { cache: nodes, progress, f }, |lv| allowed(lv).is_some())?;
    progress.finish();
    if out.is_empty() {
        return Err(AnonError::argument(
            "ipa_release",
            "max_cells",
            format!("no node of the lattice has at most {max_cells} cells"),
        ));
    }
    Ok(out)
}

/// The exponential mechanism over the candidates.
pub(crate) fn mechanism(candidates: &[Candidate], utility: &Utility, epsilon: f64) -> Result<ExponentialMechanism> {
    let u: Vec<f64> = candidates.iter().map(|c| c.utility).collect();
    ExponentialMechanism::new(&u, epsilon, utility.sensitivity())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{QiColumn, SensitiveColumn};
    use rand::{RngExt, SeedableRng};

    /// A random table: three categorical quasi-identifiers of 6, 4 and 3 leaves under three,
    /// one and two levels, and a sensitive attribute of 5 values.
    fn random_table(seed: u64) -> FrequencyTable {
        use crate::hierarchy::{HierarchyKind, from_rows};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let h = |name: &str, leaves: usize, ups: &[usize]| {
            let rows = (0..leaves)
                .map(|i| {
                    let mut row = vec![format!("{name}{i}")];
                    row.extend(ups.iter().map(|&u| format!("{name}/{u}:{}", i / u)));
                    row.push("*".into());
                    (i + 1, row)
                })
                .collect();
            Arc::new(from_rows(rows, name, HierarchyKind::Categorical).unwrap())
        };
        let hs = [h("a", 6, &[2, 4]), h("b", 4, &[]), h("c", 3, &[2])];
        let rows = 60;
        let qis = hs
            .iter()
            .map(|h| QiColumn {
                name: h.attribute().into(),
                hierarchy: h.clone(),
                codes: (0..rows).map(|_| rng.random_range(0..h.leaf_count() as u32)).collect(),
            })
            .collect();
        let values = (0..5).map(|v| format!("v{v}")).collect();
        let sensitive =
            SensitiveColumn { name: "s".into(), values, codes: (0..rows).map(|_| rng.random_range(0..5)).collect() };
        FrequencyTable::from_parts(qis, Some(sensitive), (0..rows).map(|_| rng.random_range(1..4)).collect()).unwrap()
    }

    /// The score as the module doc defines it, summed cell by cell over the node's domain (the
    /// oracle of [`Utility::score`], which tabulates NCP and reads each cell once).
    fn by_definition(u: &Utility, hs: &[Arc<Hierarchy>], c: &Cached, width: usize, cells: u64) -> (f64, f64, f64) {
        let g = &c.g;
        let ncp = hs
            .iter()
            .enumerate()
            .map(|(a, h)| {
                let level = g.levels[a] as usize;
                let covered: u128 = (0..g.len())
                    .map(|k| {
                        let leaves = h.leaves_under(level, g.codes[a][k]);
                        if leaves <= 1 { 0 } else { u128::from(g.sizes[k]) * u128::from(leaves) }
                    })
                    .sum();
                covered as f64 / h.leaf_count() as f64
            })
            .sum::<f64>()
            / hs.len() as f64;
        let counts = c.hist.iter().copied().filter(|&x| x > 0);
        let noise = match u.mode {
            // Every cell of the node's domain: the empty ones at E(0), the non-empty ones read.
            CellNoise::Pure { .. } => {
                let empty = u.cell_error(0);
                (cells - counts.clone().count() as u64) as f64 * empty + counts.map(|x| u.cell_error(x)).sum::<f64>()
            }
            CellNoise::Threshold(tau) => counts.map(|x| u64::from(x).min(tau)).sum::<u64>() as f64,
        };
        let units: u64 = (0..g.len())
            .map(|k| {
                let hist = c.class_hist(k, width);
                let n: u64 = hist.iter().map(|&x| u64::from(x)).sum();
                let error: f64 = hist.iter().map(|&x| u.cell_error(x)).sum();
                let h = if n == 0 { 1.0 } else { (error / n as f64).clamp(0.0, 1.0) };
                (h * CLASS_UNITS) as u64
            })
            .sum();
        (ncp, noise, u.class_total(units, g.len(), width, cells / width as u64))
    }

    /// Every node of random tables, under pure and approximate noise: the tabulated NCP is the
    /// definition's bit for bit, and the one-pass cell sums are the definition's up to the
    /// order of floating-point additions (relative 10^−12; the class term within one grid
    /// unit a class, where the rounding of E_x / n_x may cross a unit).
    #[test]
    fn scores_equal_the_definition() {
        let noise = DiscreteLaplace::for_epsilon(0.7, 1).unwrap();
        for seed in 0..4 {
            let ft = random_table(seed);
            let nodes = NodeCache::new(&ft, true).unwrap();
            let (hs, width, ncp) = (nodes.hierarchies().to_vec(), nodes.width(), NcpTotals::new(&ft));
            for mode in [CellNoise::Pure { floor: 1 }, CellNoise::Pure { floor: 3 }, CellNoise::Threshold(4)] {
                let u = Utility::new(mode, &noise, 0.5, 2.0);
                for node in 0..nodes.lattice.size() {
                    let c = nodes.get(node).unwrap();
                    let cells = cell_count(&hs, &c.g.levels, width).unwrap();
                    let got = u.score(&ncp, &c, cells, width, node);
                    let (n, e, k) = by_definition(&u, &hs, &c, width, cells);
                    let at = format!("seed {seed}, node {node}, {mode:?}");
                    assert_eq!(got.ncp_total.to_bits(), n.to_bits(), "{at}");
                    assert!(
                        (got.noise_total - e).abs() <= 1e-12 * e.abs().max(1.0),
                        "{at}: {} vs {e}",
                        got.noise_total
                    );
                    let unit = c.g.len() as f64 / CLASS_UNITS;
                    assert!((got.class_total - k).abs() <= unit, "{at}: {} vs {k}", got.class_total);
                }
            }
        }
    }

    /// f_T(c) by direct summation of the discrete Laplace pmf over a wide window.
    fn by_sum(q: f64, t: u64, c: u64) -> f64 {
        let p0 = (1.0 - q) / (1.0 + q);
        (-3000i64..3000)
            .map(|x| {
                let y = c as i64 + x;
                let released = if y >= t as i64 { y } else { 0 };
                p0 * q.powi(x.unsigned_abs() as i32) * (released - c as i64).abs() as f64
            })
            .sum()
    }

    #[test]
    fn floored_error_closed_form_matches_the_sum_and_moves_within_the_bound() {
        for eps in [0.1f64, 0.8, 1.0, 3.0] {
            let q = (-eps).exp();
            for t in 1..=7u64 {
                let bound = if t == 1 { q / (1.0 + q) } else { (t - 1) as f64 };
                let mut worst = 0.0f64;
                for c in 0..40u64 {
                    let (f, s) = (floored_error(q, t, c), by_sum(q, t, c));
                    assert!((f - s).abs() < 1e-9 * (1.0 + s), "eps {eps} T {t} c {c}: {f} vs {s}");
                    worst = worst.max((floored_error(q, t, c + 1) - f).abs());
                }
                assert!(worst <= bound + 1e-12, "eps {eps} T {t}: moved {worst} > {bound}");
            }
        }
        // T = 1 is the plain max(0, c + X): A (2 − q^c), A for an empty cell.
        let q = (-0.8f64).exp();
        let a = q / ((1.0 - q) * (1.0 + q));
        assert!((floored_error(q, 1, 0) - a).abs() < 1e-15);
        assert!((floored_error(q, 1, 3) - a * (2.0 - q.powi(3))).abs() < 1e-15);
    }
}
