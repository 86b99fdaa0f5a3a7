//! The indexed and counting paths give exactly what the first, per-record versions gave:
//! cluster formation by demographic tuple, Step 17 by sorted ids, GenDiag's Q by counting.

use super::formation::{Pick, form_group, form_group_reference};
use super::gendiag::{gendiag, gendiag_reference};
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
    let w = ArtucConfig::new(2, 2, 1.0, 0).weights_for(&t);
    for (seed, k, pick) in [(1, 2, Pick::Random), (2, 5, Pick::Random), (3, 10, Pick::First), (4, 7, Pick::Random)] {
        let recs = records(&t, 300 + 100 * seed as usize, seed);
        let fast = form_group(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        let slow = form_group_reference(&t, 0, &recs, k, &w, pick, &mut StdRng::seed_from_u64(seed));
        assert_eq!(fast, slow, "seed {seed}, k {k}");
        let sets: Vec<Option<u32>> = (0..t.codes.hierarchy.leaf_count() as u32).map(|c| Some(c % 7)).collect();
        let mut a = Merger::new(&t, &sets, (k, 2), &w, fast.clone());
        let mut b = Merger::new(&t, &sets, (k, 2), &w, fast);
        assert_eq!(a.merge_identical(), b.merge_identical_reference());
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
        recs in prop::collection::vec(prop::collection::btree_set(0u32..40, 0..8), 1..40),
        sets in 1u32..6,
        none in 0u32..40,
        k in 1usize..8,
        m in 1usize..4,
    ) {
        let set_of: Vec<Option<u32>> = (0..40).map(|c| (c != none).then_some(c % sets)).collect();
        let recs: Vec<Vec<u32>> = recs.into_iter().map(|s| s.into_iter().collect()).collect();
        let refs: Vec<&[u32]> = recs.iter().map(|r| r.as_slice()).collect();
        prop_assert_eq!(gendiag(&refs, &set_of, k, m), gendiag_reference(&refs, &set_of, k, m));
    }
}
