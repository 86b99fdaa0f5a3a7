//! The driver's traversals against judging every node, on random lattices with random
//! criteria and bounds: each returns the node that brute force ranks best ([`better`]).

use super::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// A random problem over one lattice: a monotone level bound `Σ w·level`, a key at or above
/// it, an up-closed set `pass` (acceptance is `pass` and a random `lucky` subset unless the
/// criterion is monotone), and an up-closed ceiling `over` that fails upward.
struct Toy {
    lattice: Lattice,
    weights: Vec<f64>,
    extra: Vec<f64>,
    pass: Vec<bool>,
    lucky: Vec<bool>,
    over: Vec<bool>,
    checks: usize,
    /// The batches [`Scorer::score`] was handed, in order.
    scored: Vec<Vec<NodeId>>,
}

#[derive(Debug, Clone, Copy)]
struct Judged {
    node: NodeId,
    accepted: bool,
    key: Key,
    pass: bool,
    over: bool,
}

/// An up-closed set: the up-sets of a few random nodes.
fn up_set(l: &Lattice, rng: &mut StdRng, anchors: usize) -> Vec<bool> {
    let tops: Vec<NodeId> = (0..anchors).map(|_| rng.random_range(0..l.size())).collect();
    (0..l.size()).map(|n| tops.iter().any(|&t| l.generalizes(n, t))).collect()
}

impl Toy {
    fn new(seed: u64, monotone: bool) -> Toy {
        let mut rng = StdRng::seed_from_u64(seed);
        let heights: Vec<u8> = (0..4).map(|_| rng.random_range(1..4)).collect();
        let lattice = Lattice::new(&heights);
        let n = lattice.size();
        Toy {
            weights: (0..heights.len()).map(|_| rng.random_range(0.0..1.0)).collect(),
            extra: (0..n).map(|_| rng.random_range(0.0..0.5)).collect(),
            pass: up_set(&lattice, &mut rng, 3),
            lucky: (0..n).map(|_| monotone || rng.random_bool(0.6)).collect(),
            over: up_set(&lattice, &mut rng, 2),
            lattice,
            checks: 0,
            scored: Vec::new(),
        }
    }

    fn level_bound(&self, levels: &[u8]) -> f64 {
        levels.iter().zip(&self.weights).map(|(&l, w)| l as f64 * w).sum()
    }

    fn judge(&self, n: NodeId) -> Judged {
        let key = (self.level_bound(&self.lattice.levels(n)) + self.extra[n], 0.0);
        let accepted = self.pass[n] && self.lucky[n] && !self.over[n];
        Judged { node: n, accepted, key, pass: self.pass[n], over: self.over[n] }
    }

    /// The best accepted node by brute force.
    fn brute_force(&self) -> Option<NodeId> {
        let all = (0..self.lattice.size()).map(|n| self.judge(n)).filter(|j| j.accepted);
        all.fold(None, |best: Option<Judged>, j| {
            if best.is_none_or(|b| better(&self.lattice, (j.node, j.key), (b.node, b.key))) { Some(j) } else { best }
        })
        .map(|j| j.node)
    }
}

impl Evaluator for Toy {
    type Judged = Judged;

    fn node(j: &Judged) -> NodeId {
        j.node
    }

    fn evaluate(&mut self, nodes: &[NodeId]) -> Result<Vec<Judged>> {
        self.checks += nodes.len();
        Ok(nodes.iter().map(|&n| self.judge(n)).collect())
    }

    fn checks(&self) -> usize {
        self.checks
    }
}

impl Scorer for Toy {
    type Scored = Judged;

    fn score(&mut self, nodes: &[NodeId]) -> Result<Vec<Judged>> {
        self.scored.push(nodes.to_vec());
        self.evaluate(nodes)
    }
}

/// Acceptance of the level-bound search (the ceiling left out: it is not monotone downward).
struct ByLevels(bool);

impl Criterion<Judged> for ByLevels {
    fn accepted(&self, j: &Judged) -> Option<(NodeId, Key)> {
        j.accepted.then_some((j.node, j.key))
    }
    fn tag(&self, j: &Judged) -> Option<Tag> {
        Some(if j.pass { Tag::PassesAbove } else { Tag::FailsBelow })
    }
    fn monotone(&self) -> bool {
        self.0
    }
}

/// The criteria of the grouped-bound traversals: the ceiling, then acceptance.
struct Grouped;

impl Criterion<Judged> for Grouped {
    fn accepted(&self, j: &Judged) -> Option<(NodeId, Key)> {
        j.accepted.then_some((j.node, j.key))
    }
    fn tag(&self, j: &Judged) -> Option<Tag> {
        j.over.then_some(Tag::FailsAbove)
    }
}

struct Bounds<'t>(&'t Toy);

impl Bound<Judged> for Bounds<'_> {
    fn of_levels(&self, levels: &[u8]) -> f64 {
        self.0.level_bound(levels)
    }
    fn of_judged(&self, j: &Judged) -> Key {
        (self.0.level_bound(&self.0.lattice.levels(j.node)), 0.0)
    }
    fn open(&self, bound: Key, best: Key) -> bool {
        compare(bound, best).is_le()
    }
}

/// The level-bound search (with and without the heuristic start, monotone or not) finds the
/// brute-force optimum of `pass` (and `lucky` when not monotone), judging fewer nodes than the
/// lattice holds on some lattices; under a budget its stopping bound is below the optimum.
#[test]
fn level_search_finds_the_optimum_of_judging_every_node() {
    let mut pruned = 0;
    for seed in 0..40 {
        for (monotone, heuristic) in [(true, false), (true, true), (false, false), (false, true)] {
            let mut toy = Toy::new(seed, monotone);
            // Acceptance here is `pass` (and `lucky` when not monotone), ceiling aside.
            toy.over = vec![false; toy.lattice.size()];
            let want = toy.brute_force();
            let (lattice, twin) = (toy.lattice.clone(), Toy::new(seed, monotone));
            let bounds = Bounds(&twin);
            let criterion = ByLevels(monotone);
            let found = Levels::new(&lattice, (&mut toy, &criterion, &bounds), None, &|| false).run(heuristic).unwrap();
            assert_eq!(found.best.map(|j| j.node), want, "seed {seed}, monotone {monotone}, heuristic {heuristic}");
            assert!(found.stopped_at.is_none(), "unlimited: proven");
            pruned += usize::from(toy.checks < lattice.size());
            // Two checks: the bound where the budget ended is a lower bound of the optimum.
            let mut toy = Toy::new(seed, monotone);
            toy.over = vec![false; toy.lattice.size()];
            let found = Levels::new(&lattice, (&mut toy, &criterion, &bounds), Some(2), &|| false).run(false).unwrap();
            if let (Some(lb), Some(w)) = (found.stopped_at, want) {
                assert!(lb <= toy.judge(w).key.0 + 1e-12, "seed {seed}: {lb} above the optimum");
            }
        }
    }
    assert!(pruned > 40, "tagging and the bound skip nodes: {pruned}");
}

/// Best-first on a grouped bound and the sorted scan of the ceiling's down-set return the
/// brute-force optimum; the scan's first stage is the ceiling's down-set, bottom-up.
#[test]
fn grouped_bound_traversals_find_the_optimum_of_judging_every_node() {
    for seed in 0..60 {
        let mut toy = Toy::new(seed, false);
        let want = toy.brute_force();
        let (lattice, twin) = (toy.lattice.clone(), Toy::new(seed, false));
        let bounds = Bounds(&twin);
        let lazy = best_first(&lattice, &mut toy, (&Grouped, &Grouped), &bounds, (3, 3)).unwrap();
        assert_eq!(lazy.map(|j| j.node), want, "best-first, seed {seed}");
        // Grouping more nodes at once than are taken: the same optimum, from the same batches.
        let batches = std::mem::take(&mut toy.scored);
        let wide = best_first(&lattice, &mut toy, (&Grouped, &Grouped), &bounds, (3, 17)).unwrap();
        assert_eq!(wide.map(|j| j.node), want, "best-first, 17 grouped at once, seed {seed}");
        assert_eq!(toy.scored, batches, "the same batches taken, seed {seed}");
        let down = down_set(&lattice, &mut toy, &Grouped).unwrap();
        assert!(down.iter().all(|j| !j.over), "the ceiling's down-set only");
        let expect: Vec<NodeId> = lattice.by_height().concat().into_iter().filter(|&n| !toy.over[n]).collect();
        assert_eq!(down.iter().map(|j| j.node).collect::<Vec<_>>(), expect, "bottom-up, seed {seed}");
        let nodes = down.iter().map(|j| (j.node, bounds.of_judged(j))).collect();
        let sorted = by_sorted_bound(&lattice, nodes, &mut toy, &Grouped, |b, k| bounds.open(b, k), 3).unwrap();
        assert_eq!(sorted.map(|j| j.node), want, "sorted scan, seed {seed}");
    }
}

/// [`every`] judges exactly the wanted nodes, in id order.
#[test]
fn every_judges_the_wanted_nodes_in_id_order() {
    let mut toy = Toy::new(7, true);
    let lattice = toy.lattice.clone();
    let wanted = |lv: &[u8]| lv.iter().map(|&l| l as usize).sum::<usize>() >= 2;
    let got: Vec<NodeId> = every(&lattice, &mut toy, wanted).unwrap().into_iter().map(|j| j.node).collect();
    let want: Vec<NodeId> = (0..lattice.size()).filter(|&n| wanted(&lattice.levels(n))).collect();
    assert_eq!(got, want);
}
