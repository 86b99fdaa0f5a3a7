//! Algorithm 2 as the paper states it, without the optimisations of [`super::cluster`]:
//! every remaining record is scored against the seed one by one, nothing is pruned, and the
//! table's counts are recounted from the blocks before every seed. It exists so that tests
//! can show the fast clustering gives the same blocks; it is quadratic and slow.

use super::block::Block;
use super::cluster::{Remaining, attach_leftovers, commit_block};
use super::pair::SeedView;
use super::state::State;
use crate::encode::FrequencyTable;
use crate::error::Result;
use rand::RngExt;
use rand::rngs::StdRng;

/// The Q-blocks of the plain algorithm, seeds drawn from `rng` exactly as the fast one does.
pub fn plain_blocks(ft: &FrequencyTable, k: u64, with_mi: bool, rng: &mut StdRng) -> Result<Vec<Block>> {
    let mut left: Vec<u64> = ft.counts.clone();
    let mut blocks: Vec<Block> = Vec::new();
    let mut sv = SeedView::default();
    while left.iter().sum::<u64>() >= k {
        let total: u64 = left.iter().sum();
        let mut state = State::recount(ft, with_mi, &blocks)?;
        let seed = nth_record(&left, rng.random_range(0..total));
        left[seed] -= 1;
        state.seed_view(seed, &mut sv);
        // One entry per record, in record order; a stable sort keeps that order among ties.
        let mut scored: Vec<(f64, u32)> = Vec::new();
        for (row, &c) in left.iter().enumerate() {
            for _ in 0..c {
                scored.push((state.pair_key(&sv, row), row as u32));
            }
        }
        scored.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut members: Vec<(u32, u64)> = vec![(seed as u32, 1)];
        for &(_, row) in scored.iter().take((k - 1) as usize) {
            left[row as usize] -= 1;
            match members.iter_mut().find(|m| m.0 == row) {
                Some(m) => m.1 += 1,
                None => members.push((row, 1)),
            }
        }
        members.sort_unstable();
        blocks.push(commit_block(&mut state, members));
    }
    let mut state = State::recount(ft, with_mi, &blocks)?;
    let mut remaining = Remaining::new(&left);
    attach_leftovers(&mut state, &mut blocks, &mut remaining);
    Ok(blocks)
}

fn nth_record(left: &[u64], mut r: u64) -> usize {
    for (row, &c) in left.iter().enumerate() {
        if r < c {
            return row;
        }
        r -= c;
    }
    unreachable!("r is below the number of records left")
}
