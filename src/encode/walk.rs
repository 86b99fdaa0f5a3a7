//! Grouping every node of a lattice, bottom-up, each node rolled up from its cheapest
//! already-grouped predecessor.

use super::{FrequencyTable, Grouping, group, rollup};
use crate::error::Result;
use crate::lattice::{Lattice, NodeId};
use std::collections::HashMap;

/// Call `f` with the grouping of every node of `lattice`, height by height from the bottom.
/// Only two heights of groupings are alive at a time.
pub fn for_each_node(
    ft: &FrequencyTable,
    lattice: &Lattice,
    mut f: impl FnMut(NodeId, &Grouping) -> Result<()>,
) -> Result<()> {
    let hs = ft.hierarchies();
    let (bottom, _) = group(ft, &lattice.levels(lattice.bottom()))?;
    f(lattice.bottom(), &bottom)?;
    let mut prev: HashMap<NodeId, Grouping> = HashMap::from([(lattice.bottom(), bottom)]);
    for ids in lattice.by_height().into_iter().skip(1) {
        let mut cur = HashMap::with_capacity(ids.len());
        for id in ids {
            // Fewest classes to relabel: the cheapest predecessor.
            let (attr, pred) = lattice
                .predecessors(id)
                .min_by_key(|(_, p)| prev[p].len())
                .expect("every node above the bottom has a predecessor");
            let (g, _) = rollup(&hs, &prev[&pred], attr)?;
            f(id, &g)?;
            cur.insert(id, g);
        }
        prev = cur;
    }
    Ok(())
}
