//! Drawing records from a [`TreeModel`], exactly: every distribution is first fixed as integer
//! weights (the model's real-valued counts scaled to a total near 2^53 and floored), and each
//! draw is an exactly uniform integer below the weights' total ([`crate::dp::uniform_below`],
//! rejection sampling, no floating point), located in the cumulative weights. So a value's
//! probability is exactly its weight over the total: [`Weights::probability`] is what the test
//! compares the sampled frequencies with. Sampling is post-processing: its exactness is about
//! the model being what the release says it is, not about privacy.

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

    /// One exact draw.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u32 {
        let u = uniform_below(rng, u128::from(*self.cumulative.last().expect("non-empty"))) as u64;
        self.cumulative.partition_point(|&c| c <= u) as u32
    }
}

/// The model's distributions as integer weights: the root's marginal, and each child's
/// conditional per value of its parent (a parent value with an empty row draws the child from
/// its own marginal).
#[derive(Debug, Clone)]
pub struct Sampler {
    order: Vec<usize>,
    parent: Vec<Option<usize>>,
    root: Weights,
    conditionals: Vec<Vec<Weights>>,
}

impl Sampler {
    pub fn new(model: &TreeModel) -> Self {
        let k = model.sizes.len();
        let mut conditionals = vec![Vec::new(); k];
        for (c, conditional) in conditionals.iter_mut().enumerate() {
            let (Some(p), Some(joint)) = (model.parent[c], &model.joints[c]) else { continue };
            let width = model.sizes[c];
            *conditional = (0..model.sizes[p])
                .map(|u| {
                    let row = &joint[u * width..(u + 1) * width];
                    if row.iter().any(|&x| x > 0.0) { Weights::new(row) } else { Weights::new(&model.marginals[c]) }
                })
                .collect();
        }
        let root = model.order[0];
        Sampler {
            order: model.order.clone(),
            parent: model.parent.clone(),
            root: Weights::new(&model.marginals[root]),
            conditionals,
        }
    }

    /// The exact probability of a whole record (`record[a]`: attribute `a`'s code).
    pub fn probability(&self, record: &[u32]) -> f64 {
        let mut p = self.root.probability(record[self.order[0]] as usize);
        for &c in &self.order[1..] {
            let parent = self.parent[c].expect("a child has a parent");
            p *= self.conditionals[c][record[parent] as usize].probability(record[c] as usize);
        }
        p
    }

    /// `n` records, as one column per attribute.
    pub fn draw(&self, n: u64, rng: &mut impl rand::Rng, progress: &dyn Progress) -> Result<Vec<Vec<u32>>> {
        let k = self.parent.len();
        let n = n as usize;
        let mut columns: Vec<Vec<u32>> = (0..k).map(|_| Vec::with_capacity(n)).collect();
        let root = self.order[0];
        for i in 0..n {
            columns[root].push(self.root.sample(rng));
            for &c in &self.order[1..] {
                let parent = self.parent[c].expect("a child has a parent");
                let v = self.conditionals[c][columns[parent][i] as usize].sample(rng);
                columns[c].push(v);
            }
            if i % CHECK_EVERY == CHECK_EVERY - 1 {
                progress.check_after_noise()?;
            }
        }
        Ok(columns)
    }
}

/// Records between two looks at the Ctrl-C flag.
const CHECK_EVERY: usize = 1 << 16;

/// `n` records drawn from `model`.
pub fn draw(model: &TreeModel, n: u64, rng: &mut impl rand::Rng, progress: &dyn Progress) -> Result<Vec<Vec<u32>>> {
    Sampler::new(model).draw(n, rng, progress)
}
