//! Adult's own rows (`load_dataset('adult_uci')`) with deeper hierarchies than its declared
//! ones, so that the lattice is as large as a custodian's table with 9–10 attributes gives
//! (all ten columns: 147,456 nodes): age in nested bands of 2, 4, 8, 16, 32 and 64 years
//! (height 7 instead of 4); marital status, native country and relationship with one more
//! level above the leaves (each leaf's declared parent split in two by the leaf's code).
//! Shared by benches/lattice_wide.rs and tests/kanon.rs (`#[path]`).

use anonfusion::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind, widths_hierarchy};
use anonfusion::meta::{Role, TableMeta};
use std::sync::Arc;

/// The columns given one more level above their leaves.
const SPLIT: [&str; 3] = ["marital_status", "native_country", "relationship"];

/// A categorical hierarchy with one more level: each leaf's parent split in two, by the
/// leaf's code, labelled `parent|0` or `parent|1` (nested, as every hierarchy must be).
fn split_above_leaves(h: &Hierarchy) -> Hierarchy {
    let mut b = HierarchyBuilder::new(h.attribute(), HierarchyKind::Categorical);
    for leaf in 0..h.leaf_count() as u32 {
        let mut row = vec![h.label(0, leaf).to_string()];
        row.push(format!("{}|{}", h.label(1, h.up(1)[leaf as usize]), leaf % 2));
        row.extend((1..=h.height()).map(|j| h.label(j, h.up(j)[leaf as usize]).to_string()));
        b.row(leaf as usize + 1, row);
    }
    b.build().unwrap()
}

/// Adult's declarations with the deeper hierarchies; `sensitive` (if any) declared sensitive,
/// every other column a quasi-identifier.
pub fn deep_adult(meta: &TableMeta, sensitive: Option<&str>) -> TableMeta {
    let mut out = TableMeta::default();
    for (column, h) in &meta.hierarchies {
        let deep = match column.as_str() {
            "age" => widths_hierarchy("age", 0, 127, &[2, 4, 8, 16, 32, 64]).unwrap(),
            c if SPLIT.contains(&c) => split_above_leaves(h),
            _ => h.as_ref().clone(),
        };
        let role = if Some(column.as_str()) == sensitive { Role::Sensitive } else { Role::QuasiIdentifier };
        out.roles.push((column.clone(), role));
        out.hierarchies.insert(column.clone(), Arc::new(deep));
    }
    out
}
