//! Nothing starts that cannot finish: a `pure` histogram noises every cell of its domain, empty
//! ones included, and realizes each published cell as that many rows, so a tiny ε or a huge
//! domain asks for more rows than any machine holds (ε = 1e-6 on 8,000 rows: ~22 GB). The
//! expected number of rows that noise alone realizes depends only on public quantities (the
//! declared hierarchies and domain, ε and the floor), so it is computed and checked before the
//! budget is reserved and before the data are read; a call over the limit is refused and
//! spends nothing. `max_rows=` raises the limit.
//!
//! The bound: an empty cell realizes X·1{X ≥ T} rows, X discrete Laplace (q = e^−ε), T ≥ 1 the
//! floor, with expectation Σ_{k≥T} k·P(X = k) = q^T·(T(1 − q) + q) / ((1 + q)(1 − q)); the
//! release's cells are at most the largest number of cells any of its possible outputs has
//! (node: the largest candidate node; adaptive: its finest reachable partition plus the
//! coarse level). `approx` publishes no empty cell (but with probability δ), so only its real
//! records are realized and it has no such bound.

use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;

/// The default limit on the rows noise alone is expected to realize: 20 M rows is a few GB.
pub(crate) const DEFAULT_MAX_ROWS: u64 = 20_000_000;

/// Expected rows an empty cell realizes under discrete Laplace noise with parameter `q` and
/// publication floor `floor` (≥ 1).
pub(crate) fn empty_cell_rows(q: f64, floor: u64) -> f64 {
    let t = floor.max(1) as f64;
    q.powf(t) * (t * (1.0 - q) + q) / ((1.0 + q) * (1.0 - q))
}

/// Cells of the node at `levels` over the quasi-identifiers' hierarchies, times the
/// informative domain's size, as a float (a product can pass u64).
pub(crate) fn node_cells(hierarchies: &[&Hierarchy], levels: &[u8], domain: usize) -> f64 {
    hierarchies.iter().zip(levels).map(|(h, &l)| h.width(l as usize) as f64).product::<f64>() * domain as f64
}

/// The largest number of cells of any lattice node with at most `max_cells` cells: the most a
/// node release can noise, whichever node its selection picks.
pub(crate) fn largest_candidate(hierarchies: &[&Hierarchy], domain: usize, max_cells: u64) -> f64 {
    let heights: Vec<u8> = hierarchies.iter().map(|h| h.height() as u8).collect();
    let mut levels = vec![0u8; heights.len()];
    let mut best = 0.0f64;
    loop {
        let cells = node_cells(hierarchies, &levels, domain);
        if cells <= max_cells as f64 {
            best = best.max(cells);
        }
        // Next node in mixed radix; done after the top.
        let Some(i) = levels.iter().zip(&heights).position(|(l, h)| l < h) else { return best };
        levels[i] += 1;
        levels[..i].iter_mut().for_each(|l| *l = 0);
    }
}

/// The finest node an adaptive partition can reach: `root` with every attribute a step
/// refines at its lowest stepped level (`qis`: the quasi-identifiers in the root's order).
pub(crate) fn finest_node(root: &[u8], steps: &[(String, u8)], qis: &[&str]) -> Vec<u8> {
    let mut levels = root.to_vec();
    for (attribute, level) in steps {
        if let Some(i) = qis.iter().position(|q| q == attribute) {
            levels[i] = levels[i].min(*level);
        }
    }
    levels
}

/// Refuse when `cells` empty cells under noise `q` and `floor` are expected to realize more
/// than `max_rows` rows, with an error that says what to change.
pub(crate) fn check(function: &str, cells: f64, q: f64, floor: u64, max_rows: u64) -> Result<()> {
    let rows = cells * empty_cell_rows(q, floor);
    if rows <= max_rows as f64 {
        return Ok(());
    }
    Err(AnonError::argument(
        function,
        "epsilon",
        format!(
            "this release would realize about {} rows of noise alone ({} cells of the declared domain, each \
             published as its noisy count), over the limit of {max_rows}; use a larger epsilon, coarser \
             hierarchies or a smaller max_cells, or raise the limit with max_rows=N. Nothing was charged",
            crate::hierarchy::format_number(rows.round()),
            crate::hierarchy::format_number(cells),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form against the sum it stands for.
    #[test]
    fn empty_cell_rows_is_the_expected_published_count() {
        for (q, t) in [(0.5f64, 1u64), (0.449, 3), (0.9, 1), (0.99, 5)] {
            let p = |k: i64| (1.0 - q) / (1.0 + q) * q.powi(k.abs() as i32);
            let sum: f64 = (t as i64..20_000).map(|k| k as f64 * p(k)).sum();
            assert!((empty_cell_rows(q, t) - sum).abs() < 1e-9 * sum.max(1.0), "q {q} T {t}");
        }
    }

    #[test]
    fn largest_candidate_is_the_biggest_node_under_the_cap() {
        let age = crate::hierarchy::widths_hierarchy("age", 0, 99, &[10, 50]).unwrap();
        let hs = [&age, &age];
        let widths: Vec<usize> = (0..=age.height()).map(|l| age.width(l)).collect();
        let all: Vec<f64> = widths.iter().flat_map(|a| widths.iter().map(move |b| (a * b * 3) as f64)).collect();
        for cap in [1u64, 100, 400, 30_000, 100_000] {
            let want = all.iter().copied().filter(|&c| c <= cap as f64).fold(0.0, f64::max);
            assert_eq!(largest_candidate(&hs, 3, cap), want, "cap {cap}");
        }
    }
}
