//! entropy_anonymize on random tables and hierarchies, checked by code that shares nothing with
//! the method: every Q-block has at least k records and is generalized to its closest common
//! ancestors; the distance d is symmetric, non-negative and what Eqs. 6–8 give when computed
//! from the records themselves; the fast clustering makes the plain algorithm's blocks; the
//! report's losses are the blocks' losses; and the SQL release passes verify_release.

mod common;

use anonfusion::encode::FrequencyTable;
use anonfusion::methods::entropy::reference::plain_blocks;
use anonfusion::methods::entropy::{Block, Clusterer, Distance, EntropyConfig, cluster};
use anonfusion::progress::Silent;
use common::run;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::collections::HashMap;

type Labels = Vec<(u8, u32)>;

/// The closest common ancestor of some leaves, by walking up the hierarchy's levels.
fn cca(ft: &FrequencyTable, a: usize, leaves: &[u32]) -> (u8, u32) {
    let h = &ft.qis[a].hierarchy;
    (0..=h.height())
        .find(|&j| leaves.iter().all(|&x| h.up(j)[x as usize] == h.up(j)[leaves[0] as usize]))
        .map(|j| (j as u8, h.up(j)[leaves[0] as usize]))
        .unwrap()
}

fn leaves(ft: &FrequencyTable, row: usize) -> Vec<u32> {
    ft.qis.iter().map(|q| q.codes[row]).collect()
}

/// Every record as (row, labels): block members at their block's labels, the rest at their leaves.
fn records(ft: &FrequencyTable, blocks: &[Block]) -> Vec<(usize, Labels)> {
    let mut left = ft.counts.clone();
    let mut out = Vec::new();
    for b in blocks {
        for &(row, c) in &b.members {
            left[row as usize] -= c;
            out.extend((0..c).map(|_| (row as usize, b.label.clone())));
        }
    }
    for (row, &c) in left.iter().enumerate() {
        let leaf: Labels = leaves(ft, row).into_iter().map(|x| (0, x)).collect();
        out.extend((0..c).map(|_| (row, leaf.clone())));
    }
    out
}

/// H(X|Y) summed over the attributes plus I(Y;Z), from probabilities over the records (Eqs. 6–8).
fn d_by_definition(ft: &FrequencyTable, recs: &[(usize, Labels)], with_mi: bool) -> f64 {
    let n = recs.len() as f64;
    let plogp = |c: f64, of: f64| if c > 0.0 { c / n * (c / of).log2() } else { 0.0 };
    let mut h = 0.0;
    for a in 0..ft.qis.len() {
        let mut xy: HashMap<(u32, (u8, u32)), f64> = HashMap::new();
        let mut y: HashMap<(u8, u32), f64> = HashMap::new();
        for (row, labels) in recs {
            *xy.entry((ft.qis[a].codes[*row], labels[a])).or_default() += 1.0;
            *y.entry(labels[a]).or_default() += 1.0;
        }
        h -= xy.iter().map(|(k, &c)| plogp(c, y[&k.1])).sum::<f64>();
    }
    if !with_mi {
        return h;
    }
    let s = ft.sensitive.as_ref().unwrap();
    let mut yz: HashMap<(Labels, u32), f64> = HashMap::new();
    let mut y: HashMap<Labels, f64> = HashMap::new();
    let mut z: HashMap<u32, f64> = HashMap::new();
    for (row, labels) in recs {
        *yz.entry((labels.clone(), s.codes[*row])).or_default() += 1.0;
        *y.entry(labels.clone()).or_default() += 1.0;
        *z.entry(s.codes[*row]).or_default() += 1.0;
    }
    let mi: f64 = yz.iter().map(|((l, zz), &c)| plogp(c, y[l] * z[zz] / n)).sum();
    h + mi
}

/// d with one remaining record of row `a` and one of row `b` generalized together.
fn pair_by_definition(ft: &FrequencyTable, blocks: &[Block], a: usize, b: usize, with_mi: bool) -> f64 {
    let mut recs = records(ft, blocks);
    let leaf = |row: usize| -> Labels { leaves(ft, row).into_iter().map(|x| (0, x)).collect() };
    let pair: Labels = (0..ft.qis.len()).map(|i| cca(ft, i, &[leaves(ft, a)[i], leaves(ft, b)[i]])).collect();
    let ia = recs.iter().position(|r| r.0 == a && r.1 == leaf(a)).unwrap();
    recs[ia].1 = pair.clone();
    let ib = recs.iter().position(|r| r.0 == b && r.1 == leaf(b)).unwrap();
    recs[ib].1 = pair;
    d_by_definition(ft, &recs, with_mi)
}

/// Block-level facts checked from the records: sizes, coverage, closest common ancestors.
/// Unguarded blocks stay below 2k (only the fewer than k leftovers join a block); a guard
/// grows blocks as it needs.
fn check_blocks(ft: &FrequencyTable, blocks: &[Block], k: u64, guarded: bool) -> Result<(), TestCaseError> {
    let mut seen = vec![0u64; ft.len()];
    for b in blocks {
        prop_assert!(b.size() >= k, "block of {} < k = {}", b.size(), k);
        prop_assert!(
            guarded || b.size() < 2 * k,
            "block of {}: only the fewer than k leftovers join a block",
            b.size()
        );
        for &(row, c) in &b.members {
            seen[row as usize] += c;
        }
        for a in 0..ft.qis.len() {
            let xs: Vec<u32> = b.members.iter().map(|m| ft.qis[a].codes[m.0 as usize]).collect();
            prop_assert_eq!(
                b.label[a],
                cca(ft, a, &xs),
                "attribute {} of a block is not the closest common ancestor",
                a
            );
        }
    }
    prop_assert_eq!(seen, ft.counts.clone(), "every record in exactly one block");
    Ok(())
}

fn entropy(counts: &HashMap<u32, u64>, n: u64) -> f64 {
    counts.values().map(|&c| c as f64 / n as f64).map(|p| -p * p.log2()).sum()
}

/// Records per sensitive value of some frequency-table rows.
fn sensitive_counts(ft: &FrequencyTable, members: impl Iterator<Item = (u32, u64)>) -> HashMap<u32, u64> {
    let mut z: HashMap<u32, u64> = HashMap::new();
    for (row, c) in members {
        *z.entry(ft.sensitive.as_ref().unwrap().codes[row as usize]).or_default() += c;
    }
    z
}

/// Half the L1 distance between two histograms' distributions (the equal-distance EMD).
fn total_variation(p: &HashMap<u32, u64>, q: &HashMap<u32, u64>) -> f64 {
    let (np, nq) = (p.values().sum::<u64>() as f64, q.values().sum::<u64>() as f64);
    let at = |h: &HashMap<u32, u64>, z: &u32, n: f64| h.get(z).copied().unwrap_or(0) as f64 / n;
    0.5 * q
        .keys()
        .chain(p.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|z| (at(p, z, np) - at(q, z, nq)).abs())
        .sum::<f64>()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn q_blocks_hold_and_match_the_plain_algorithm(
        shapes in prop::collection::vec((1usize..7, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..30),
        values in 1usize..5,
        k in 2u64..5,
        seed in 0u64..1000,
        with_mi in any::<bool>(),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, values);
        prop_assume!(k <= ft.total());
        let mut fast = Clusterer::new(&ft, k, with_mi).unwrap();
        fast.run(&mut StdRng::seed_from_u64(seed), &Silent).unwrap();
        check_blocks(&ft, &fast.blocks, k, false)?;
        let plain = plain_blocks(&ft, k, with_mi, &mut StdRng::seed_from_u64(seed)).unwrap();
        prop_assert_eq!(&fast.blocks, &plain, "the optimisations changed the blocks");

        // The report's measures are the blocks' own.
        let distance = if with_mi { Distance::EntropyMi } else { Distance::ConditionalEntropy };
        let config = EntropyConfig { distance, seed: Some(seed), ..EntropyConfig::new(k) };
        let res = cluster(&ft, &config, &Silent).unwrap();
        prop_assert_eq!(&res.blocks, &fast.blocks);
        let n = ft.total();
        let (mut loss, mut l) = (0.0, [0u64; 3]);
        for b in &res.blocks {
            for a in 0..ft.qis.len() {
                let mut x: HashMap<u32, u64> = HashMap::new();
                for &(row, c) in &b.members { *x.entry(ft.qis[a].codes[row as usize]).or_default() += c; }
                loss += b.size() as f64 / n as f64 * entropy(&x, b.size());
            }
            let distinct: std::collections::HashSet<u32> =
                b.members.iter().map(|m| ft.sensitive.as_ref().unwrap().codes[m.0 as usize]).collect();
            l[distinct.len().min(3) - 1] += 1;
        }
        prop_assert!((res.measures.total_information_loss - loss).abs() < 1e-9, "{} vs {}", res.measures.total_information_loss, loss);
        prop_assert_eq!(res.measures.diversity, l);
        let recs = records(&ft, &res.blocks);
        prop_assert!((res.objective - d_by_definition(&ft, &recs, with_mi)).abs() < 1e-9);
    }

    #[test]
    fn d_is_symmetric_non_negative_and_eq_8(
        shapes in prop::collection::vec((1usize..7, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 4..30),
        values in 1usize..5,
        blocks_first in 0usize..3,
        picks in prop::collection::vec((any::<u16>(), any::<u16>()), 1..6),
        with_mi in any::<bool>(),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, values);
        let mut c = Clusterer::new(&ft, 2, with_mi).unwrap();
        // Some blocks first, so d is measured on a partly generalized table too.
        for _ in 0..blocks_first {
            if c.remaining() >= 4 {
                let seed = (0..ft.len()).find(|&r| c.left_of(r) > 0).unwrap();
                c.form_block(seed);
            }
        }
        let live: Vec<usize> = (0..ft.len()).filter(|&r| c.left_of(r) > 0).collect();
        for (i, j) in picks {
            let (a, b) = (live[i as usize % live.len()], live[j as usize % live.len()]);
            if a == b && c.left_of(a) < 2 { continue; }
            let (ab, ba) = (c.state.pair_distance(a, b), c.state.pair_distance(b, a));
            prop_assert_eq!(ab.to_bits(), ba.to_bits(), "d_ab {} != d_ba {}", ab, ba);
            prop_assert!(ab >= -1e-12, "negative d {}", ab);
            let by_def = pair_by_definition(&ft, &c.blocks, a, b, with_mi);
            prop_assert!((ab - by_def).abs() < 1e-9, "d {} vs Eq. 8 {}", ab, by_def);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, .. ProptestConfig::default() })]

    /// entropy_l= and t=: every block satisfies the guard, computed here from the definitions
    /// (entropy in nats against ln l; total variation against the whole table), every record
    /// is in exactly one block at its closest common ancestors, and the call fails exactly when
    /// the whole table fails the guard (then no partition can hold it).
    #[test]
    fn guarded_blocks_hold_their_guard(
        shapes in prop::collection::vec((1usize..7, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..30),
        values in 1usize..5,
        k in 2u64..5,
        seed in 0u64..1000,
        with_mi in any::<bool>(),
        entropy_guard in any::<bool>(),
        level in 0usize..4,
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, values);
        prop_assume!(k <= ft.total());
        let (entropy_l, t) =
            if entropy_guard { (Some([1.0, 1.5, 2.0, 3.0][level]), None) } else { (None, Some([0.0, 0.1, 0.3, 0.6][level])) };
        let distance = if with_mi { Distance::EntropyMi } else { Distance::ConditionalEntropy };
        let config = EntropyConfig { distance, seed: Some(seed), entropy_l, t, ..EntropyConfig::new(k) };
        let whole = sensitive_counts(&ft, ft.counts.iter().enumerate().map(|(r, &c)| (r as u32, c)));
        let nats = |z: &HashMap<u32, u64>| entropy(z, z.values().sum()) * std::f64::consts::LN_2;
        let whole_holds = entropy_l.is_none_or(|l| nats(&whole) >= l.ln() - 1e-12);
        match cluster(&ft, &config, &Silent) {
            Err(e) => prop_assert!(!whole_holds, "the whole table holds the guard, yet: {}", e),
            Ok(res) => {
                prop_assert!(whole_holds, "a partition into blocks that hold the guard, of a table that does not");
                check_blocks(&ft, &res.blocks, k, true)?;
                for b in &res.blocks {
                    let z = sensitive_counts(&ft, b.members.iter().copied());
                    if let Some(l) = entropy_l {
                        prop_assert!(nats(&z) >= l.ln() - 1e-12, "block entropy {} < ln {}", nats(&z), l);
                    }
                    if let Some(t) = t {
                        let tv = total_variation(&z, &whole);
                        prop_assert!(tv <= t + 1e-12, "block EMD {} > t = {}", tv, t);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, .. ProptestConfig::default() })]

    /// Through SQL: verify_release holds k, the diversity counts are anon_metrics', every original
    /// record aligns, and the same seed gives the same release.
    #[test]
    fn sql_releases_pass_the_verifiers(
        shapes in prop::collection::vec((1usize..6, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..12),
        rows in prop::collection::vec((any::<u32>(), 1u64..4), 2..30),
        values in 1usize..5,
        k in 2u64..5,
        seed in 0u64..1000,
        guard in 0usize..3,
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, values);
        prop_assume!(k <= ft.total());
        let ctx = SessionContext::new();
        let registry = anonfusion::register_all(&ctx);
        common::register_random(&ctx, &registry, &ft);
        let text = |sql: &str| pretty_format_batches(&run(&ctx, sql).unwrap()).unwrap().to_string();
        // No guard, entropy 1.5-diversity, or 0.4-closeness: verify_release checks the guard too.
        let guard = ["", ", entropy_l=1.5", ", t=0.4"][guard];
        let call = format!("SELECT * FROM entropy_anonymize('t', 'r', {k}, 'seed={seed}{guard}')");
        let first = match run(&ctx, &call) {
            Ok(b) => pretty_format_batches(&b).unwrap().to_string(),
            Err(e) => {
                // Only a table that fails the guard as a whole is refused.
                prop_assert!(!guard.is_empty() && e.to_string().contains("whole table"), "{}", e);
                return Ok(());
            }
        };
        let verified = text(&format!("SELECT check, holds, detail FROM verify_release('t', 'r', 'k={k}{guard}')"));
        prop_assert!(!verified.contains("| false"), "{}", verified);
        let reported = text("SELECT q_blocks, q_blocks_l1, q_blocks_l2, q_blocks_l3plus FROM r_report");
        let measured = text("SELECT CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks, \
            CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS q_blocks_l1, \
            CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS q_blocks_l2, \
            CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS q_blocks_l3plus \
            FROM anon_metrics('t', 'r')");
        prop_assert_eq!(reported, measured);
        // anon_metrics can account for every original record (its alignment completes by
        // augmenting paths where the greedy pass strands some).
        let unmatched = text("SELECT value FROM anon_metrics('t', 'r') WHERE metric = 'unmatched_original_records'");
        prop_assert!(unmatched.contains("| 0.0 "), "{}", unmatched);
        let again = text(&format!("SELECT * FROM entropy_anonymize('t', 'r2', {k}, 'seed={seed}{guard}')"));
        prop_assert_eq!(first, again);
    }
}
