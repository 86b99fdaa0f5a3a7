//! The encoding and lattice layer on real and random data: rolled-up grouping equals grouping
//! from scratch for every node, and D(r) follows the h-ceiling paper's worked example.

mod common;

use anonfusion::datasets::adult;
use anonfusion::encode::{
    FrequencyTable, NodeCache, QiColumn, class_degrees, class_sizes_of, for_each_node, frequency_table, group,
};
use anonfusion::hierarchy::{HierarchyBuilder, HierarchyKind, widths_hierarchy};
use anonfusion::lattice::Lattice;
use datafusion::prelude::SessionContext;
use proptest::prelude::*;
use std::sync::Arc;

/// Check every node of the table's lattice; returns the lattice size.
fn rollups_match_scratch(ft: &FrequencyTable) -> usize {
    let lattice = Lattice::new(&ft.heights());
    let mut seen = 0;
    let (bottom, bottom_rows) = group(ft, &lattice.levels(lattice.bottom())).unwrap();
    // A frequency row of every bottom class, and every third class as the probe's sample.
    let mut row_of = vec![usize::MAX; bottom.len()];
    for (r, &c) in bottom_rows.iter().enumerate().rev() {
        row_of[c as usize] = r;
    }
    let members: Vec<usize> = (0..bottom.len()).step_by(3).collect();
    for_each_node(ft, &lattice, |id, g| {
        assert_eq!(g.levels, lattice.levels(id));
        let (scratch, rows) = group(ft, &g.levels)?;
        // Equal as they are, not only as sets: classes come in the order of their first
        // frequency row whichever path rolled them up, so a search may group a node from any
        // specialization it has at hand and score the same classes in the same order.
        assert_eq!(*g, scratch, "node {:?}", g.levels);
        // The sampled class sizes (the search's failure probe) are the grouped classes' sizes,
        // one per class in the order the sample first meets it.
        let probed = class_sizes_of(&ft.hierarchies(), &bottom, &g.levels, &members)?;
        let mut want: Vec<u64> = Vec::new();
        let mut met = vec![false; scratch.len()];
        for &m in &members {
            let class = rows[row_of[m]] as usize;
            if !std::mem::replace(&mut met[class], true) {
                want.push(scratch.sizes[class]);
            }
        }
        assert_eq!(probed, want, "node {:?}", g.levels);
        assert_eq!(g.total(), ft.total());
        assert_eq!(rows.len(), ft.len());
        seen += 1;
        Ok(())
    })
    .unwrap();
    // The node cache's groupings (classes keyed alike at every node, a raised attribute's
    // code replaced in the source's keys): from the bottom (`get`) and from a direct
    // specialization (the depth-first walk) alike, the same as from scratch.
    let cache = NodeCache::new(ft, false).unwrap();
    let walked = cache.map_every(&anonfusion::progress::Silent, |_| true, |_, c| Ok(c.g.clone())).unwrap();
    assert_eq!(walked.len(), lattice.size());
    for (id, g) in walked {
        let (scratch, _) = group(ft, &lattice.levels(id)).unwrap();
        assert_eq!(g, scratch, "walked to node {:?}", g.levels);
        assert_eq!(cache.get(id).unwrap().g, scratch, "grouped from the bottom: node {:?}", g.levels);
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adult_lattice_has_2160_nodes_and_rollups_equal_scratch() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    ctx.sql("SELECT * FROM load_dataset('adult')").await.unwrap().collect().await.unwrap();
    let meta = registry.require("adult").unwrap();
    assert_eq!(meta.quasi_identifiers(), anonfusion::datasets::ADULT_QIS.to_vec());
    let ft = frequency_table(&ctx, "adult", &meta, None).await.unwrap();
    assert_eq!(ft.total(), 30_162);
    assert_eq!(Lattice::new(&ft.heights()).size(), 2160);
    assert_eq!(rollups_match_scratch(&ft), 2160);
}

/// The same frequency table (codes, counts, order) or the same error, whatever the counting.
fn same_table(a: &FrequencyTable, b: &FrequencyTable) {
    assert_eq!(a.counts, b.counts);
    for (x, y) in a.qis.iter().zip(&b.qis) {
        assert_eq!((&x.name, &x.codes), (&y.name, &y.codes));
        assert!(Arc::ptr_eq(&x.hierarchy, &y.hierarchy));
    }
    assert_eq!(a.qis.len(), b.qis.len());
    let s = |t: &FrequencyTable| t.sensitive.as_ref().map(|s| (s.name.clone(), s.values.clone(), s.codes.clone()));
    assert_eq!(s(a), s(b));
}

/// An in-memory table is counted in the process (packed codes in one hash table); a view of it
/// goes through DataFusion's GROUP BY, the path of files and clusters. Both give the same
/// table, with and without a sensitive column, at 7 and 9 quasi-identifiers, and the same
/// error on a value the hierarchies reject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_counting_equals_the_plan() {
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    ctx.sql("SELECT * FROM load_dataset('adult')").await.unwrap().collect().await.unwrap();
    ctx.sql("CREATE VIEW adult_view AS SELECT * FROM adult").await.unwrap();
    let meta = registry.require("adult").unwrap();
    let mut nine = meta.clone();
    for (col, role) in &mut nine.roles {
        if col == "occupation" || col == "salary_class" {
            *role = anonfusion::meta::Role::QuasiIdentifier;
        }
    }
    for (m, sensitive) in [(&meta, None), (&meta, Some("occupation")), (&nine, None), (&meta, Some("salary_class"))] {
        let counted = frequency_table(&ctx, "adult", m, sensitive).await.unwrap();
        let planned = frequency_table(&ctx, "adult_view", m, sensitive).await.unwrap();
        assert_eq!(counted.total(), 30_162);
        same_table(&counted, &planned);
    }

    // A NULL under a hierarchy without a NULL leaf, an age the hierarchy does not cover, a
    // sex it does not know: the plan's error, naming the column, from both.
    let age = Arc::new(widths_hierarchy("age", 0, 99, &[10]).unwrap());
    let mut b = HierarchyBuilder::new("sex", HierarchyKind::Categorical);
    b.row(1, vec!["F".into(), "*".into()]).row(2, vec!["M".into(), "*".into()]);
    let sex = Arc::new(b.build().unwrap());
    let small = anonfusion::meta::TableMeta {
        roles: vec![
            ("age".into(), anonfusion::meta::Role::QuasiIdentifier),
            ("sex".into(), anonfusion::meta::Role::QuasiIdentifier),
        ],
        hierarchies: [("age".to_string(), age), ("sex".to_string(), sex)].into_iter().collect(),
        ..Default::default()
    };
    for (i, values) in ["(30, 'F'), (31, 'M'), (30, 'F')", "(30, NULL)", "(130, 'F')", "(30, 'X')"].iter().enumerate() {
        ctx.sql(&format!("CREATE TABLE t{i} (age BIGINT, sex VARCHAR) AS VALUES {values}")).await.unwrap();
        ctx.sql(&format!("CREATE VIEW v{i} AS SELECT * FROM t{i}")).await.unwrap();
        let counted = frequency_table(&ctx, &format!("t{i}"), &small, None).await;
        let planned = frequency_table(&ctx, &format!("v{i}"), &small, None).await;
        match (counted, planned) {
            (Ok(a), Ok(b)) => {
                assert_eq!(i, 0);
                assert_eq!(a.counts, vec![2, 1]);
                same_table(&a, &b);
            }
            (Err(a), Err(b)) => {
                assert_ne!(i, 0);
                assert_eq!(a.to_string().replace(&format!("t{i}"), "T"), b.to_string().replace(&format!("v{i}"), "T"));
            }
            (a, b) => panic!("case {i}: {a:?} against {b:?}"),
        }
    }
}

#[test]
fn adult_loads_with_its_hierarchies() {
    let ds = adult().unwrap();
    assert_eq!(ds.num_rows(), 30_162);
    let heights: Vec<usize> =
        anonfusion::datasets::ADULT_QIS.iter().map(|q| ds.meta.hierarchies[*q].height()).collect();
    assert_eq!(heights, vec![4, 1, 1, 2, 3, 2, 2]);
}

/// Table 1 of the h-ceiling paper in one class (Table 2): D(r) = 0.55 for every record.
#[test]
fn generalization_degree_of_table_2_is_0_55() {
    let age = Arc::new(widths_hierarchy("age", 0, 99, &[]).unwrap());
    let zip = Arc::new(widths_hierarchy("zipcode", 0, 99_999, &[]).unwrap());
    let mut b = HierarchyBuilder::new("sex", HierarchyKind::Categorical);
    b.row(1, vec!["F".into(), "*".into()]).row(2, vec!["M".into(), "*".into()]);
    let sex = Arc::new(b.build().unwrap());
    let rows: [(u32, &str, u32); 7] = [
        (37, "F", 22071),
        (35, "F", 22098),
        (36, "F", 23061),
        (61, "M", 55107),
        (63, "M", 55099),
        (66, "M", 55324),
        (62, "M", 55229),
    ];
    let col = |name: &str, h: &Arc<anonfusion::hierarchy::Hierarchy>, codes: Vec<u32>| QiColumn {
        name: name.into(),
        hierarchy: h.clone(),
        codes,
    };
    let ft = FrequencyTable::from_parts(
        vec![
            col("age", &age, rows.iter().map(|r| age.leaf_of_value(r.0 as f64).unwrap()).collect()),
            col("sex", &sex, rows.iter().map(|r| sex.leaf_of_label(r.1).unwrap()).collect()),
            col("zipcode", &zip, rows.iter().map(|r| zip.leaf_of_value(r.2 as f64).unwrap()).collect()),
        ],
        None,
        vec![1; 7],
    )
    .unwrap();
    let hs = ft.hierarchies();
    let (g, _) = group(&ft, &[1, 1, 1]).unwrap();
    assert_eq!(g.len(), 1);
    let d = class_degrees(&hs, &g)[0];
    // (66-35)/99 = 0.31, (2-1)/(2-1) = 1, (55324-22071)/99999 = 0.33
    assert!((d - (31.0 / 99.0 + 1.0 + 33_253.0 / 99_999.0) / 3.0).abs() < 1e-12);
    assert_eq!((d * 100.0).round() / 100.0, 0.55);
    // Ungeneralized, every record has degree 0.
    let (g0, _) = group(&ft, &[0, 0, 0]).unwrap();
    assert!(class_degrees(&hs, &g0).iter().all(|&d| d == 0.0));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// Over random tables and hierarchies, rolling up gives the same classes as grouping from
    /// scratch at every node, and every grouping accounts for every record.
    #[test]
    fn random_rollups_equal_scratch(
        shapes in prop::collection::vec((1usize..9, 1usize..4, any::<bool>()), 1..4),
        cuts in prop::collection::vec(any::<u8>(), 1..16),
        rows in prop::collection::vec((any::<u32>(), 1u64..5), 1..60),
    ) {
        let ft = common::random_table(&shapes, &cuts, &rows, 0);
        let size = Lattice::new(&ft.heights()).size();
        prop_assert_eq!(rollups_match_scratch(&ft), size);
    }
}
