//! Drawing records from a [`TreeModel`], exactly: every distribution is first fixed as integer
//! weights (the model's real-valued counts scaled to a total near 2^53 and floored), and each
//! draw is an exactly uniform integer below the weights' total ([`crate::dp::uniform_below`],
//! rejection sampling, no floating point), located in the cumulative weights. So a value's
//! probability is exactly its weight over the total: [`Weights::probability`] is what the test
//! compares the sampled frequencies with. Sampling is post-processing: its exactness is about
//! the model being what the release says it is, not about privacy.
//!
//! The records are drawn *balanced* ([`Weights::counts`], systematic sampling): the root's
//! values are allotted to the n records in counts that are n·p rounded up or down at random
//! (each count's expectation exactly n·p), and each child's values to the records of each
//! parent value the same way, every allotment then placed in uniformly random order. Each
//! record is still distributed exactly as the model says (its value is a uniformly random slot
//! of an allotment whose expected counts are the model's), but the counts of the release are
//! within one record of the model's along every edge instead of off by the √(n·p) of
//! independent draws: sampling adds almost no error of its own to any table's marginals.

use super::TreeModel;
use crate::dp::uniform_below;
use crate::error::Result;
use crate::progress::Progress;

/// A distribution over `0..n` as integer weights.
#[derive(Debug, Clone)]
pub struct Weights {
    /// Running sums of the weights; the last is the total.
    cumulative: Vec<u64>,
}

/// The weights' scale: real values are scaled so they sum to about 2^53 (exact in f64).
const SCALE: f64 = (1u64 << 53) as f64;

impl Weights {
    /// From nonnegative reals; all zero (or none positive) is the uniform distribution.
    pub fn new(values: &[f64]) -> Self {
        let sum: f64 = values.iter().filter(|v| **v > 0.0).sum();
        let mut acc = 0u64;
        let cumulative = values
            .iter()
            .map(|&v| {
                let w = if sum > 0.0 { if v > 0.0 { (v / sum * SCALE).floor() as u64 } else { 0 } } else { 1 };
                acc += w;
                acc
            })
            .collect::<Vec<_>>();
        if acc == 0 {
            // Every positive value floored to 0 (a sum of subnormals): uniform.
            return Weights { cumulative: (1..=values.len() as u64).collect() };
        }
        Weights { cumulative }
    }

    /// The exact probability of `i`, as f64.
    pub fn probability(&self, i: usize) -> f64 {
        let lo = if i == 0 { 0 } else { self.cumulative[i - 1] };
        (self.cumulative[i] - lo) as f64 / *self.cumulative.last().expect("non-empty") as f64
    }

    /// Counts of each value among `n` draws, balanced (systematic sampling): with one exactly
    /// uniform offset r below the total W, draw j (j < n) is the value whose scaled interval
    /// [n·C_{i−1}, n·C_i) holds r + j·W. Value i's count is ⌊n·w_i/W⌋ or one more, its
    /// expectation exactly n·w_i/W, and the counts sum to n.
    pub fn counts<R: rand::Rng + ?Sized>(&self, n: u64, rng: &mut R) -> Vec<u64> {
        let total = u128::from(*self.cumulative.last().expect("non-empty"));
        let r = uniform_below(rng, total);
        // Draws j < n with r + j·W < x.
        let below = |x: u128| if x <= r { 0 } else { (x - r).div_ceil(total).min(u128::from(n)) as u64 };
        let mut last = 0u64;
        self.cumulative
            .iter()
            .map(|&c| {
                let upto = below(u128::from(n) * u128::from(c));
                let count = upto - last;
                last = upto;
                count
            })
            .collect()
    }

    /// `n` values with balanced [`Weights::counts`], in uniformly random order.
    pub fn allot<R: rand::Rng + ?Sized>(&self, n: u64, rng: &mut R) -> Vec<u32> {
        use rand::seq::SliceRandom;
        let mut values = Vec::with_capacity(n as usize);
        for (v, count) in self.counts(n, rng).into_iter().enumerate() {
            values.extend(std::iter::repeat_n(v as u32, count as usize));
        }
        values.shuffle(rng);
        values
    }

    /// One exact draw.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let u = uniform_below(rng, u128::from(*self.cumulative.last().expect("non-empty"))) as u64;
        self.cumulative.partition_point(|&c| c <= u) as u32
    }
}

/// The model's distributions as integer weights: the root's marginal, and each child's
/// conditional per value of its parents (its parent's code u, or with a second parent e the
/// pair's key u·d_e + w); a key with an empty row draws the child from its conditional given
/// its parent alone, or, that row empty too, from its own marginal.
#[derive(Debug, Clone)]
pub struct Sampler {
    order: Vec<usize>,
    parent: Vec<Option<usize>>,
    /// A child's second parent and its domain size.
    extra: Vec<Option<(usize, usize)>>,
    root: Weights,
    conditionals: Vec<Vec<Weights>>,
}

impl Sampler {
    pub fn new(model: &TreeModel) -> Self {
        let k = model.sizes.len();
        let mut conditionals = vec![Vec::new(); k];
        let positive = |row: &[f64]| row.iter().any(|&x| x > 0.0);
        for (c, conditional) in conditionals.iter_mut().enumerate() {
            let (Some(p), Some(joint)) = (model.parent[c], &model.joints[c]) else { continue };
            let width = model.sizes[c];
            let given_parent = |u: usize| {
                let row = &joint[u * width..(u + 1) * width];
                if positive(row) { Weights::new(row) } else { Weights::new(&model.marginals[c]) }
            };
            *conditional = match (model.extra[c], &model.triples[c]) {
                (Some(e), Some(t)) => (0..model.sizes[p] * model.sizes[e])
                    .map(|key| {
                        let row = &t[key * width..(key + 1) * width];
                        if positive(row) { Weights::new(row) } else { given_parent(key / model.sizes[e]) }
                    })
                    .collect(),
                _ => (0..model.sizes[p]).map(given_parent).collect(),
            };
        }
        let root = model.order[0];
        let extra = (0..k).map(|c| model.extra[c].map(|e| (e, model.sizes[e]))).collect();
        Sampler {
            order: model.order.clone(),
            parent: model.parent.clone(),
            extra,
            root: Weights::new(&model.marginals[root]),
            conditionals,
        }
    }

    /// The key of child `c`'s conditional in a record: its parent's code, or with a second
    /// parent the pair's.
    fn key(&self, c: usize, parent_code: u32, record_extra: impl FnOnce(usize) -> u32) -> usize {
        match self.extra[c] {
            Some((e, width)) => parent_code as usize * width + record_extra(e) as usize,
            None => parent_code as usize,
        }
    }

    /// The exact probability of a whole record (`record[a]`: attribute `a`'s code).
    pub fn probability(&self, record: &[u32]) -> f64 {
        let mut p = self.root.probability(record[self.order[0]] as usize);
        for &c in &self.order[1..] {
            let parent = self.parent[c].expect("a child has a parent");
            let key = self.key(c, record[parent], |e| record[e]);
            p *= self.conditionals[c][key].probability(record[c] as usize);
        }
        p
    }

    /// `n` records, as one column per attribute, drawn balanced: the root's values allotted
    /// to all records, then each child's values to the records of each value of its parents.
    pub fn draw(&self, n: u64, rng: &mut impl rand::Rng, progress: &dyn Progress) -> Result<Vec<Vec<u32>>> {
        let k = self.parent.len();
        let mut columns: Vec<Vec<u32>> = vec![Vec::new(); k];
        let root = self.order[0];
        columns[root] = self.root.allot(n, rng);
        progress.check_after_noise()?;
        for &c in &self.order[1..] {
            let parent = self.parent[c].expect("a child has a parent");
            // The records of each key, in record order.
            let mut groups: Vec<Vec<usize>> = vec![Vec::new(); self.conditionals[c].len()];
            for (i, &u) in columns[parent].iter().enumerate() {
                groups[self.key(c, u, |e| columns[e][i])].push(i);
            }
            let mut column = vec![0u32; n as usize];
            for (weights, records) in self.conditionals[c].iter().zip(&groups) {
                for (&i, v) in records.iter().zip(weights.allot(records.len() as u64, rng)) {
                    column[i] = v;
                }
            }
            columns[c] = column;
            progress.check_after_noise()?;
        }
        Ok(columns)
    }
}

/// `n` records drawn from `model`.
pub fn draw(model: &TreeModel, n: u64, rng: &mut impl rand::Rng, progress: &dyn Progress) -> Result<Vec<Vec<u32>>> {
    Sampler::new(model).draw(n, rng, progress)
}
