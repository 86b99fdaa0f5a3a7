//! Random tables and hierarchies shared by the property tests.
#![allow(dead_code)]

use anonfusion::encode::{FrequencyTable, QiColumn, SensitiveColumn};
use anonfusion::hierarchy::{HierarchyBuilder, HierarchyKind};
use std::sync::Arc;

/// A random hierarchy: `leaves` leaves, each level merging neighbouring nodes in random runs.
fn random_hierarchy(
    name: &str,
    leaves: usize,
    height: usize,
    numeric: bool,
    cuts: &[u8],
) -> anonfusion::hierarchy::Hierarchy {
    let kind = if numeric { HierarchyKind::Numeric } else { HierarchyKind::Categorical };
    let mut b = HierarchyBuilder::new(name, kind);
    // Group ids per level: a node at level j+1 merges consecutive nodes of level j.
    let mut ids: Vec<usize> = (0..leaves).collect();
    let mut columns: Vec<Vec<String>> =
        vec![(0..leaves).map(|i| if numeric { (i * 3).to_string() } else { format!("v{i}") }).collect()];
    for j in 1..height {
        let mut next = Vec::with_capacity(leaves);
        let mut cur = 0usize;
        for i in 0..leaves {
            if i > 0 && ids[i] != ids[i - 1] && cuts[(i * 7 + j) % cuts.len()].is_multiple_of(2) {
                cur += 1;
            }
            next.push(cur);
        }
        ids = next;
        columns.push(ids.iter().map(|g| format!("L{j}_{g}")).collect());
    }
    for i in 0..leaves {
        let mut row: Vec<String> = columns.iter().map(|c| c[i].clone()).collect();
        row.push("*".into());
        b.row(i + 1, row);
    }
    b.build().unwrap()
}

/// A random frequency table: `shapes` = (leaves, height, numeric) per quasi-identifier, rows =
/// (seed, count), and `sensitive` distinct values (0 = no sensitive column).
pub fn random_table(
    shapes: &[(usize, usize, bool)],
    cuts: &[u8],
    rows: &[(u32, u64)],
    sensitive: usize,
) -> FrequencyTable {
    let qis: Vec<QiColumn> = shapes
        .iter()
        .enumerate()
        .map(|(a, &(leaves, height, numeric))| {
            let h = Arc::new(random_hierarchy(&format!("q{a}"), leaves, height, numeric, cuts));
            let codes = rows.iter().map(|(r, _)| (r.rotate_left(a as u32 * 8) as usize % leaves) as u32).collect();
            QiColumn { name: format!("q{a}"), hierarchy: h, codes }
        })
        .collect();
    let sens = (sensitive > 0).then(|| SensitiveColumn {
        name: "s".into(),
        values: (0..sensitive).map(|i| format!("s{i}")).collect(),
        codes: rows.iter().map(|(r, _)| (r.rotate_right(5) as usize % sensitive) as u32).collect(),
    });
    FrequencyTable::from_parts(qis, sens, rows.iter().map(|r| r.1).collect()).unwrap()
}
