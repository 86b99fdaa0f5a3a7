//! The generator policy for DP noise.
//!
//! Exact samplers are only as private as their random bits are unpredictable: anyone who can
//! predict the generator's stream can subtract the noise. DP releases therefore draw from
//! `StdRng`, which in rand 0.10 is ChaCha12 (the ChaCha stream cipher with 12 rounds), a
//! cryptographically secure generator, keyed directly from the operating system's entropy
//! source (`getrandom`, via rand's `SysRng`) rather than through the thread-local generator.
//!
//! A seed makes the stream reproducible, which tests need, and makes every release computed
//! with it predictable to anyone who knows or guesses the seed (a u64 can be brute-forced):
//! seeded releases carry no privacy guarantee. rand also documents `StdRng` streams as not
//! portable across rand versions, so seeded outputs may change when rand is upgraded.

use crate::error::{AnonError, Result};
use rand::{Rng, SeedableRng, rngs::StdRng, rngs::SysRng};

/// The generator for DP noise: ChaCha12 from OS entropy when `seed` is `None` (the only
/// setting for real releases); with `Some(seed)`, ChaCha12 keyed from the seed (expanded with
/// `SeedableRng::seed_from_u64`), reproducible and therefore predictable: tests only.
/// Errors only if the OS entropy source fails.
pub fn dp_rng(seed: Option<u64>) -> Result<StdRng> {
    match seed {
        Some(seed) => Ok(StdRng::seed_from_u64(seed)),
        None => StdRng::try_from_rng(&mut SysRng).map_err(|e| AnonError::io("the OS entropy source (getrandom)", e)),
    }
}

/// The key of a family of independent generators, one per stream id (a lattice node, say),
/// so that what a stream draws does not depend on the order or thread in which streams are
/// used. The key is 256 bits from [`dp_rng`] (OS entropy without a seed, so an unseeded
/// release is as unpredictable as one [`dp_rng`] stream); stream `id` is ChaCha12 keyed with
/// the key XOR `id` in its first eight bytes, distinct keys for distinct ids.
#[derive(Clone)]
pub struct StreamKey([u8; 32]);

impl StreamKey {
    pub fn new(seed: Option<u64>) -> Result<Self> {
        let mut key = [0u8; 32];
        dp_rng(seed)?.fill_bytes(&mut key);
        Ok(StreamKey(key))
    }

    /// A key drawn from `rng` (a call's generator: OS entropy unless the call is seeded).
    pub(crate) fn from_rng(rng: &mut impl Rng) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        StreamKey(key)
    }

    /// The generator of stream `id`.
    pub fn stream(&self, id: u64) -> StdRng {
        let mut key = self.0;
        for (k, b) in key.iter_mut().zip(id.to_le_bytes()) {
            *k ^= b;
        }
        StdRng::from_seed(key)
    }
}

impl std::fmt::Debug for StreamKey {
    // The key is the secret of an unseeded release: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamKey(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn seeded_streams_repeat_and_entropy_streams_differ() {
        let stream = |seed| {
            let mut r = dp_rng(seed).unwrap();
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(stream(Some(9)), stream(Some(9)));
        assert_ne!(stream(Some(9)), stream(Some(10)));
        assert_ne!(stream(None), stream(None));
    }

    #[test]
    fn streams_repeat_per_id_and_differ_across_ids() {
        let key = StreamKey::new(Some(3)).unwrap();
        let first = |id| key.stream(id).next_u64();
        assert_eq!(first(5), first(5));
        assert_ne!(first(5), first(6));
        assert_ne!(
            StreamKey::new(None).unwrap().stream(5).next_u64(),
            StreamKey::new(None).unwrap().stream(5).next_u64()
        );
    }
}
