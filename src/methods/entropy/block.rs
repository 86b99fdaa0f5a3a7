//! One Q-block: what the clustering produces (src/methods/entropy/cluster.rs) and what the
//! counts (state.rs), the measures (loss.rs) and the release (release.rs) read. It lives apart
//! so that the counts need not import the clustering that updates them (they were a circle).

/// A generalized value of one attribute: (hierarchy level, node code at that level).
pub(crate) type Label = (u8, u32);

/// One Q-block: its labels and its records as (frequency-table row, records).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub label: Vec<Label>,
    pub members: Vec<(u32, u64)>,
}

impl Block {
    pub fn size(&self) -> u64 {
        self.members.iter().map(|m| m.1).sum()
    }
}
