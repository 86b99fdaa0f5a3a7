//! Mixed-radix numbering of a node's value combinations (first attribute fastest): the one
//! canonical order in which the node releases and the adaptive partition draw their noise, so a
//! seed gives one release whatever order the data were grouped in.

use crate::hierarchy::Hierarchy;
use std::sync::Arc;

/// The combinations of one vector of levels, numbered.
#[derive(Debug, Clone)]
pub(crate) struct Radix {
    pub(crate) levels: Vec<u8>,
    widths: Vec<u128>,
}

impl Radix {
    pub(crate) fn new(hs: &[Arc<Hierarchy>], levels: Vec<u8>) -> Self {
        let widths = hs.iter().zip(&levels).map(|(h, &l)| h.width(l as usize) as u128).collect();
        Radix { levels, widths }
    }

    /// Number of combinations, `None` past u128.
    pub(crate) fn size(&self) -> Option<u128> {
        self.widths.iter().try_fold(1u128, |acc, &w| acc.checked_mul(w))
    }

    /// The number of the combination whose attribute `a` has node code `code(a)`.
    pub(crate) fn index(&self, code: impl Fn(usize) -> u32) -> u128 {
        let (mut idx, mut stride) = (0u128, 1u128);
        for (a, w) in self.widths.iter().enumerate() {
            idx += u128::from(code(a)) * stride;
            stride *= w;
        }
        idx
    }

    /// The node codes of combination `idx`.
    pub(crate) fn decode(&self, mut idx: u128) -> Vec<u32> {
        self.widths
            .iter()
            .map(|w| {
                let c = (idx % w) as u32;
                idx /= w;
                c
            })
            .collect()
    }
}
