//! A fast hasher for the integer keys of grouping. Keys are packed class codes, already well
//! spread, and never attacker-chosen in a way that matters here (a slow hash would only cost
//! the data owner time), so one multiply is enough.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
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

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MulHasher>>;

pub fn fast_map<K, V>(capacity: usize) -> FastMap<K, V> {
    HashMap::with_capacity_and_hasher(capacity, Default::default())
}
