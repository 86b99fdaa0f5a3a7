//! A fast hasher for the integer keys of grouping. Keys are packed class codes, already well
//! spread, and never attacker-chosen in a way that matters here (a slow hash would only cost
//! the data owner time), so one multiply is enough.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub(crate) struct MulHasher(u64);

impl Hasher for MulHasher {
    /// The product's high half folded into the low one: a table indexes buckets by the low
    /// bits, which on their own depend only on the key's low bits (often one small column).
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
    /// Eight bytes a round (strings: the frequency table hashes every record's values).
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.write_u64(u64::from_le_bytes(c.try_into().expect("eight bytes")));
        }
        let rest = chunks.remainder();
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        // Grouping keys are u128 but mostly fit in 64 bits: one round for those.
        if n >> 64 != 0 {
            self.write_u64((n >> 64) as u64);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64)
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64)
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MulHasher>>;
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<MulHasher>>;

pub(crate) fn fast_map<K, V>(capacity: usize) -> FastMap<K, V> {
    HashMap::with_capacity_and_hasher(capacity, Default::default())
}
