//! The indexed and counting paths give exactly what the first, per-record versions gave:
//! cluster formation by demographic tuple, Step 17 by sorted ids, GenDiag's Q by counting.

use super::formation::{Pick, form_group, form_group_reference};
use super::gendiag::{gendiag, gendiag_within};
use super::gendiag_reference::{RandomCluster, gendiag_reference, gendiag_v1};
use super::merge::Merger;
use super::{ArtucConfig, RtTable};
use crate::datasets;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

fn ehrd(rows: usize, seed: u64) -> RtTable {
    let ds = datasets::load("ehrd", Some(rows), Some(seed)).unwrap();
    RtTable::from_batches("ehrd", &ds.meta, &ds.batches).unwrap()
}

/// A subset of the table's records in a shuffled order (a group as grouping hands it over).
fn records(t: &RtTable, take: usize, seed: u64) -> Vec<u32> {
    use rand::seq::SliceRandom;
    let mut r: Vec<u32> = (0..t.len() as u32).collect();
    r.shuffle(&mut StdRng::seed_from_u64(seed));
    r.truncate(take);
    r
}

#[test]
fn formation_and_step_17_match_the_per_record_scan() {
    let t = ehrd(700, 11);
    let w = ArtucConfig::new(2, 2, 1.0, 0).km.weights_for(&t);
    for (seed, k, pick) in [(1, 2, Pick::Random), (2, 5, Pick::Random), (3, 10, Pick::First), (4, 7, Pick::Random)] {
        let recs = records(&t, 300 + 100 * seed as usize, seed);
        let fast = form_group(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        let slow = form_group_reference(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        assert_eq!(fast, slow, "seed {seed}, k {k}");
        let sets: Vec<Option<u32>> = (0..t.codes.hierarchy.leaf_count() as u32).map(|c| Some(c % 7)).collect();
        let mut a = Merger::new(&t, &sets, (k, 2), &w, fast.clone());
        let mut b = Merger::new(&t, &sets, (k, 2), &w, fast);
        assert_eq!(a.merge_identical().unwrap(), b.merge_identical_reference().unwrap());
        assert_eq!(a.clusters(), b.clusters());
        assert_eq!((a.ncp_sum(), a.ul_sum(), a.suppressed()), (b.ncp_sum(), b.ul_sum(), b.suppressed()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random clusters of small code vocabularies (many violating sets, merges and
    /// suppressions), k and m.
    #[test]
    fn gendiag_q_by_counting_matches_the_support_scan(
        c in RandomCluster::strategy(40, 8, 1..40, 1..6, true),
        k in 1usize..8,
        m in 1usize..4,
    ) {
        let (refs, set_of) = (c.refs(), &c.set_of);
        prop_assert_eq!(gendiag(&refs, set_of, k, m), gendiag_reference(&refs, set_of, k, m));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The optimized GenDiag (Q once, dense pair counts, Step 6 per code set over the smallest
    /// candidates, supports over record lists) against the first version.
    #[test]
    fn gendiag_matches_the_first_version(
        c in RandomCluster::strategy(60, 10, 1..80, 1..8, true),
        k in 1usize..9,
        m in 0usize..5,
    ) {
        let (refs, set_of) = (c.refs(), &c.set_of);
        prop_assert_eq!(gendiag(&refs, set_of, k, m), gendiag_v1(&refs, set_of, k, m));
    }

    /// A run given a suppression limit is given up exactly when the full run suppresses more
    /// codes than the limit, and otherwise is the full run.
    #[test]
    fn gendiag_within_gives_up_exactly_past_the_limit(
        c in RandomCluster::strategy(40, 8, 1..40, 1..8, false),
        k in 1usize..9,
        m in 1usize..4,
        limit in 0u64..60,
    ) {
        let (refs, set_of) = (c.refs(), &c.set_of);
        let full = gendiag(&refs, set_of, k, m);
        let expected = (full.suppressed_total() <= limit).then_some(full);
        prop_assert_eq!(gendiag_within(&refs, set_of, k, m, limit), expected);
    }
}

/// UC1's code sets on the synthetic data (the sets the scale runs use).
fn uc1(t: &RtTable, preset: crate::datasets::rt::RtPreset) -> Vec<Option<u32>> {
    use super::{ConstraintSet, constraints_from_batches};
    let u =
        constraints_from_batches("u", t, &[crate::datasets::rt::utility_constraints(preset, "UC1").unwrap()]).unwrap();
    ConstraintSet::new(&u, t).unwrap().set_of_code().to_vec()
}

#[test]
fn gendiag_matches_the_first_version_on_ehrd_and_informs_samples() {
    use crate::datasets::rt::RtPreset;
    let t = ehrd(3000, 5);
    let sets = uc1(&t, RtPreset::Ehrd);
    for (take, seed, k, m) in [(3000, 1, 10, 2), (1500, 2, 5, 2), (800, 3, 10, 1), (400, 4, 4, 3)] {
        let recs = records(&t, take, seed);
        let codes = t.code_sets(&recs);
        assert_eq!(gendiag(&codes, &sets, k, m), gendiag_v1(&codes, &sets, k, m), "ehrd {take} k {k} m {m}");
    }
    let ds = datasets::load("informs", Some(3000), Some(5)).unwrap();
    let t = RtTable::from_batches("informs", &ds.meta, &ds.batches).unwrap();
    let sets = uc1(&t, RtPreset::Informs);
    for (take, seed, k, m) in [(3000, 1, 10, 2), (1000, 2, 5, 2)] {
        let recs = records(&t, take, seed);
        let codes = t.code_sets(&recs);
        assert_eq!(gendiag(&codes, &sets, k, m), gendiag_v1(&codes, &sets, k, m), "informs {take} k {k} m {m}");
    }
}

#[test]
fn formation_matches_the_per_record_scan_on_informs() {
    let ds = datasets::load("informs", Some(900), Some(3)).unwrap();
    let t = RtTable::from_batches("informs", &ds.meta, &ds.batches).unwrap();
    let w = ArtucConfig::new(2, 2, 1.0, 0).km.weights_for(&t);
    for (seed, k, pick) in [(1, 3, Pick::Random), (2, 10, Pick::First), (3, 7, Pick::Random)] {
        let recs = records(&t, 500 + 100 * seed as usize, seed);
        let fast = form_group(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        let slow = form_group_reference(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        assert_eq!(fast, slow, "seed {seed}, k {k}");
    }
}

/// Step 20 with its shortcuts (partners skipped by a lower bound, runs given up past the best
/// UL) merges the same pairs, in the same order, as scoring every admissible partner, at m = 2
/// and m = 3 on UC1's code sets.
#[test]
fn merging_with_bounds_matches_scoring_every_partner() {
    use crate::datasets::rt::RtPreset;
    let t = ehrd(1500, 7);
    let sets = uc1(&t, RtPreset::Ehrd);
    let w = ArtucConfig::new(2, 2, 1.0, 0).km.weights_for(&t);
    for (seed, take, k, m, steps) in [(1, 400, 5, 2, 40), (2, 250, 4, 3, 25)] {
        let recs = records(&t, take, seed);
        let clusters = form_group(&t, 0, &recs, k, &w, Pick::Random, &mut StdRng::seed_from_u64(seed));
        let mut fast = Merger::new(&t, &sets, (k, m), &w, clusters.clone());
        let mut slow = Merger::new(&t, &sets, (k, m), &w, clusters);
        fast.merge_identical().unwrap();
        slow.merge_identical().unwrap();
        let n = take as f64;
        // A delta that stops merging part way, so admissibility prunes partners too.
        let admissible = |sum: f64| sum / n <= 0.3;
        for step in 0..steps {
            let pair = fast.select(&admissible).unwrap();
            assert_eq!(pair, slow.select_exhaustive(&admissible).unwrap(), "seed {seed}, m {m}, step {step}");
            let Some((a, b)) = pair else { break };
            fast.apply(a, b).unwrap();
            slow.apply(a, b).unwrap();
        }
        assert_eq!(fast.clusters(), slow.clusters());
        assert_eq!((fast.ul_sum(), fast.suppressed()), (slow.ul_sum(), slow.suppressed()));
        assert!(fast.evaluations < slow.evaluations, "{} vs {}", fast.evaluations, slow.evaluations);
        // The runs kept for the release are the ones GenDiag gives on the final clusters.
        let mut kept = 0;
        for (c, d) in fast.into_clusters() {
            if let Some(d) = d {
                assert_eq!(d, gendiag(&t.code_sets(&c.records), &sets, k, m), "seed {seed}, m {m}");
                kept += 1;
            }
        }
        assert!(kept > 0, "seed {seed}, m {m}: no run kept");
    }
}
