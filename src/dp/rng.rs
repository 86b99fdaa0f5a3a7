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
use rand::{SeedableRng, rngs::StdRng, rngs::SysRng};

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
}
