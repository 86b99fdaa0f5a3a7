//! The private maximum spanning tree: k − 1 rounds, each choosing one edge among the pairs that
//! join two different components of the edges chosen so far (Kruskal's rule), by the
//! exponential mechanism on the pair's score
//!
//!   u(a, b) = Σ_xy | M_ab(x, y) − m̂_a(x) m̂_b(y) / N̂ |,
//!
//! the L1 distance between the exact two-way marginal M_ab and what the noisy one-way
//! marginals (m̂, N̂: already published, fixed) predict if a and b were independent. Adding or
//! removing one record changes one cell of M_ab by 1 and nothing else, so u moves by at most 1:
//! sensitivity 1 whatever the candidates, and each round is ε_s-DP (MST scores its candidates
//! the same way, against its current model). Edges the call declares (`edges=`, public) join
//! the tree first and spend nothing; the private rounds complete it.
//!
//! Then, AIM's step on the fitted tree ([`triple`]): each further round chooses one three-way
//! marginal (p, e, c), c a child of p and e another neighbour of p, by the exponential mechanism
//! on how far the exact three-way marginal is from what the model predicts (c independent of e
//! given p), less the expected L1 error of measuring it (AIM's penalty on large marginals):
//!
//!   u(p, e, c) = Σ_uwv | M_pec(u, w, v) − T_pe(u, w) T_pc(u, v) / m_p(u) | − d_p d_e d_c · E|Z|,
//!
//! T and m the model's tables (post-processing of published measurements, fixed), E|Z| the
//! mean absolute noise of a marginal's cell (public). One record moves one cell of M_pec by 1:
//! sensitivity 1 again.

use super::model::{TreeModel, project, weighted_total};
use super::{Encoded, MAX_TRIPLE_CELLS};
use crate::dp::{DiscreteLaplace, ExponentialMechanism};
use crate::error::{AnonError, Result};
use crate::progress::Progress;
use std::collections::HashMap;

/// The exact two-way marginal of every pair (a < b).
pub(super) fn all_pairs(data: &Encoded, progress: &dyn Progress) -> Result<HashMap<(usize, usize), Vec<u64>>> {
    let k = data.sizes.len();
    let mut out = HashMap::new();
    for a in 0..k {
        for b in a + 1..k {
            out.insert((a, b), data.two_way(a, b));
            progress.check_after_noise()?;
        }
    }
    Ok(out)
}

/// Union-find over the attributes: the root of `x`'s component.
fn root(c: &mut [usize], mut x: usize) -> usize {
    while c[x] != x {
        c[x] = c[c[x]];
        x = c[x];
    }
    x
}

/// Check declared edges from their names' indices alone (public): distinct attributes below
/// `k`, no cycle. An error names `edges=`.
pub fn check_declared(k: usize, declared: &[(usize, usize)]) -> Result<()> {
    let mut component: Vec<usize> = (0..k).collect();
    for &(a, b) in declared {
        if a >= k || b >= k || a == b {
            return Err(AnonError::argument(
                "dp_synthesize",
                "edges",
                "an edge needs two different declared attributes",
            ));
        }
        let (ra, rb) = (root(&mut component, a), root(&mut component, b));
        if ra == rb {
            return Err(AnonError::argument(
                "dp_synthesize",
                "edges",
                "the declared edges close a cycle; a tree has none",
            ));
        }
        component[ra] = rb;
    }
    Ok(())
}

/// The tree's edges (a < b): the declared ones, then the private rounds' in the order chosen.
pub(super) fn tree(
    data: &Encoded,
    declared: &[(usize, usize)],
    pairs: &HashMap<(usize, usize), Vec<u64>>,
    one_way: &[Vec<i64>],
    noise: &DiscreteLaplace,
    epsilon: f64,
    rng: &mut impl rand::Rng,
) -> Result<Vec<(usize, usize)>> {
    let k = data.sizes.len();
    let total = weighted_total(one_way, &vec![noise.variance(); k]);
    let estimates: Vec<Vec<f64>> =
        one_way.iter().map(|m| project(&m.iter().map(|&x| x as f64).collect::<Vec<_>>(), total)).collect();
    let score = |a: usize, b: usize| -> f64 {
        let m = &pairs[&(a, b)];
        let width = data.sizes[b];
        let scale = if total > 0.0 { 1.0 / total } else { 0.0 };
        m.iter()
            .enumerate()
            .map(|(i, &n)| (n as f64 - estimates[a][i / width] * estimates[b][i % width] * scale).abs())
            .sum()
    };
    let scores: HashMap<(usize, usize), f64> = pairs.keys().map(|&(a, b)| ((a, b), score(a, b))).collect();
    check_declared(k, declared)?;
    let mut component: Vec<usize> = (0..k).collect();
    let mut edges = Vec::with_capacity(k - 1);
    for &(a, b) in declared {
        let (ra, rb) = (root(&mut component, a), root(&mut component, b));
        component[ra] = rb;
        edges.push((a.min(b), a.max(b)));
    }
    while edges.len() < k - 1 {
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        for a in 0..k {
            for b in a + 1..k {
                if root(&mut component, a) != root(&mut component, b) {
                    candidates.push((a, b));
                }
            }
        }
        let utilities: Vec<f64> = candidates.iter().map(|e| scores[e]).collect();
        let chosen = candidates[ExponentialMechanism::new(&utilities, epsilon, 1.0)?.sample(rng)];
        let (ra, rb) = (root(&mut component, chosen.0), root(&mut component, chosen.1));
        component[ra] = rb;
        edges.push(chosen);
    }
    Ok(edges)
}

/// One round of the three-way selection: (e, c), c's second parent e, or `None` where no
/// candidate is left (the round then measures nothing). `noise_abs`: E|Z| of a cell's noise.
pub(super) fn triple(
    data: &Encoded,
    model: &TreeModel,
    noise_abs: f64,
    epsilon: f64,
    rng: &mut impl rand::Rng,
    progress: &dyn Progress,
) -> Result<Option<(usize, usize)>> {
    let k = data.sizes.len();
    let mut candidates = Vec::new();
    let mut utilities = Vec::new();
    for c in 0..k {
        let Some(p) = model.parent[c] else { continue };
        if model.extra[c].is_some() {
            continue;
        }
        for e in (0..k).filter(|&e| e != c && (model.parent[e] == Some(p) || model.parent[p] == Some(e))) {
            let cells = data.sizes[p] * data.sizes[e] * data.sizes[c];
            if cells as u64 > MAX_TRIPLE_CELLS || model.depends_on(e, c) {
                continue;
            }
            let (pe, pc) = (model.pair_table(p, e).expect("a neighbour"), model.joints[c].as_ref().expect("a child"));
            let (de, dc) = (data.sizes[e], data.sizes[c]);
            let exact = data.three_way(p, e, c);
            let misfit: f64 = exact
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let (u, w, v) = (i / (de * dc), (i / dc) % de, i % dc);
                    let m = model.marginals[p][u];
                    let predicted = if m > 0.0 { pe[u * de + w] * pc[u * dc + v] / m } else { 0.0 };
                    (n as f64 - predicted).abs()
                })
                .sum();
            candidates.push((e, c));
            utilities.push(misfit - cells as f64 * noise_abs);
            progress.check_after_noise()?;
        }
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    Ok(Some(candidates[ExponentialMechanism::new(&utilities, epsilon, 1.0)?.sample(rng)]))
}
