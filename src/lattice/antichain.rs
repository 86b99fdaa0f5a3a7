//! What monotone privacy models let a search infer without checking (predictive tagging, as
//! in Flash and OLA): everything below a node known to fail fails, everything above a node
//! known to pass passes. Only the extreme nodes are kept, as level vectors in one flat
//! buffer, so a test costs a few comparisons per kept node and no memory scales with the
//! lattice.

/// Which way a kept node's knowledge extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Toward {
    /// Covers the node and its specializations (non-anonymous nodes).
    Down,
    /// Covers the node and its generalizations (anonymous nodes).
    Up,
}

/// The maximal (`Down`) or minimal (`Up`) nodes of a set that is closed downward or upward.
#[derive(Debug, Clone)]
pub(crate) struct Antichain {
    toward: Toward,
    dims: usize,
    levels: Vec<u8>,
}

impl Antichain {
    pub(crate) fn new(toward: Toward, dims: usize) -> Self {
        Antichain { toward, dims, levels: Vec::new() }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.levels.len() / self.dims.max(1)
    }

    /// The kept nodes' level vectors.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.levels.chunks_exact(self.dims.max(1))
    }

    /// Does a kept node `k` cover `x`?
    fn covers_one(&self, k: &[u8], x: &[u8]) -> bool {
        match self.toward {
            Toward::Down => x.iter().zip(k).all(|(a, b)| a <= b),
            Toward::Up => x.iter().zip(k).all(|(a, b)| a >= b),
        }
    }

    /// Is the node with these levels in the set?
    pub(crate) fn covers(&self, x: &[u8]) -> bool {
        self.cover(x).is_some()
    }

    /// A kept node covering `x`, if any.
    pub(crate) fn cover(&self, x: &[u8]) -> Option<&[u8]> {
        if self.dims == 0 {
            return None;
        }
        self.levels.chunks_exact(self.dims).find(|k| self.covers_one(k, x))
    }

    /// Add a node (and its down- or up-set); kept nodes it covers are dropped.
    pub(crate) fn insert(&mut self, x: &[u8]) {
        if self.covers(x) {
            return;
        }
        let dims = self.dims;
        let mut kept = Vec::with_capacity(self.levels.len() + dims);
        for k in self.levels.chunks_exact(dims) {
            let dominated = match self.toward {
                Toward::Down => k.iter().zip(x).all(|(a, b)| a <= b),
                Toward::Up => k.iter().zip(x).all(|(a, b)| a >= b),
            };
            if !dominated {
                kept.extend_from_slice(k);
            }
        }
        kept.extend_from_slice(x);
        self.levels = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_extreme_nodes() {
        let mut down = Antichain::new(Toward::Down, 2);
        down.insert(&[1, 0]);
        down.insert(&[0, 2]);
        down.insert(&[2, 1]);
        assert_eq!(down.len(), 2, "[1, 0] lies below [2, 1]");
        assert!(down.covers(&[1, 1]) && down.covers(&[0, 2]) && !down.covers(&[1, 2]));
        let mut up = Antichain::new(Toward::Up, 2);
        up.insert(&[2, 1]);
        up.insert(&[1, 1]);
        assert_eq!(up.len(), 1);
        assert!(up.covers(&[2, 2]) && !up.covers(&[0, 3]));
    }
}
