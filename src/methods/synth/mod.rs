//! `dp_synthesize`'s method: differentially private microdata from a tree of noisy marginals
//! (the MST recipe: McKenna, Miklau, Sheldon, "Winning the NIST Contest", 2021), as a pure
//! function of encoded columns, their public domain sizes, ε and a seed. No session, no SQL:
//! [`call`] declares the options, the public domains and the charge, [`publish`] encodes a
//! read source and builds the tables; src/sql/synth_fn.rs is the SQL spec.
//!
//! 1. [`budget`]: pure ε-DP, ε split over every one-way marginal, the tree's selection rounds
//!    and its two-way marginals (docs/dp.md, "Synthetic records from a tree of marginals");
//! 2. every one-way marginal measured with exact discrete Laplace noise;
//! 3. [`select`]: a maximum spanning tree over the attributes, one edge per round by the
//!    exponential mechanism on how far each pair's exact two-way marginal is from independence
//!    under the noisy one-way marginals (sensitivity 1);
//! 4. every selected two-way marginal measured with exact discrete Laplace noise;
//! 5. [`model`]: one consistent, nonnegative tree model from the noisy measurements
//!    (post-processing);
//! 6. [`sample`]: records drawn from it exactly and balanced, root first, each attribute's
//!    values allotted to the records of each value of its parent by its conditional.

pub mod budget;
pub(crate) mod call;
pub mod model;
pub(crate) mod publish;
pub mod sample;
mod select;

pub use select::check_declared;

pub use budget::{Budget, DEFAULT_SPLIT, DEFAULT_TRIPLES};
pub use model::TreeModel;

use crate::dp::{DiscreteLaplace, StreamKey};
use crate::encode::FrequencyTable;
use crate::error::{AnonError, Result};
use crate::progress::Progress;

/// The name errors carry.
const F: &str = "dp_synthesize";

/// The generator streams of one release, so each step's draws do not depend on another's.
const ONE_WAY_STREAM: u64 = 1;
const SELECT_STREAM: u64 = 2;
const TWO_WAY_STREAM: u64 = 3;
const SAMPLE_STREAM: u64 = 4;
const TRIPLE_SELECT_STREAM: u64 = 5;
const THREE_WAY_STREAM: u64 = 6;

/// The most cells of all two-way marginals together (all pairs are scored): 2·10^7 cells of
/// 8 bytes is 160 MB, the bound checked before any budget is charged ([`Encoded::check_size`]).
pub const MAX_PAIR_CELLS: u64 = 20_000_000;

/// The most cells of a three-way marginal the selection considers (a public bound on its
/// memory and time: larger candidates are left out, from their domain sizes alone).
pub const MAX_TRIPLE_CELLS: u64 = 4_000_000;

/// A table encoded for synthesis: distinct combinations (rows) of the attributes' codes with
/// how many records each stands for. Codes of attribute `a` lie below `sizes[a]`, its declared
/// (public) domain size, whatever values the data hold.
#[derive(Debug, Clone)]
pub struct Encoded {
    pub sizes: Vec<usize>,
    /// `columns[a][row]`: the code of attribute `a` in combination `row`.
    pub columns: Vec<Vec<u32>>,
    pub counts: Vec<u64>,
}

impl Encoded {
    /// Check the shapes; an error names the attribute at fault by index.
    pub fn new(sizes: Vec<usize>, columns: Vec<Vec<u32>>, counts: Vec<u64>) -> Result<Self> {
        if sizes.is_empty() || sizes.len() != columns.len() {
            return Err(AnonError::argument(F, "source", "needs at least one attribute, with one column each"));
        }
        for (a, (col, &size)) in columns.iter().zip(&sizes).enumerate() {
            if size == 0 {
                return Err(AnonError::argument(F, "source", format!("attribute {a} has an empty domain")));
            }
            if col.len() != counts.len() || col.iter().any(|&c| c as usize >= size) {
                return Err(AnonError::argument(F, "source", format!("attribute {a}'s codes do not fit its domain")));
            }
        }
        Ok(Encoded { sizes, columns, counts })
    }

    /// A frequency table over public domains (the informative attribute recoded onto its declared
    /// values, `ipa::domain::public_table`) encoded for synthesis: each quasi-identifier as its
    /// node at `levels[a]` (a domain of that level's width), then the informative attribute.
    pub fn from_table(ft: &FrequencyTable, levels: &[u8]) -> Result<Self> {
        let s = ft.sensitive.as_ref().ok_or_else(|| {
            AnonError::argument(F, "source", "needs an informative attribute: declare one column as sensitive")
        })?;
        if levels.len() != ft.qis.len() {
            return Err(AnonError::argument(F, "levels", "needs one level per quasi-identifier"));
        }
        let mut sizes = Vec::with_capacity(levels.len() + 1);
        let mut columns = Vec::with_capacity(levels.len() + 1);
        for (q, &level) in ft.qis.iter().zip(levels) {
            let (h, level) = (&q.hierarchy, level as usize);
            if level > h.height() {
                return Err(AnonError::argument(F, "levels", format!("'{}' has no level {level}", q.name)));
            }
            sizes.push(h.width(level));
            columns.push(q.codes.iter().map(|&c| h.up(level)[c as usize]).collect());
        }
        sizes.push(s.values.len());
        columns.push(s.codes.clone());
        Encoded::new(sizes, columns, ft.counts.clone())
    }

    /// Refuse, from the public domain sizes alone, a table whose two-way marginals would not
    /// fit in [`MAX_PAIR_CELLS`] cells.
    pub fn check_size(sizes: &[usize]) -> Result<()> {
        let cells: u64 = pair_cells(sizes);
        if cells > MAX_PAIR_CELLS {
            return Err(AnonError::argument(
                F,
                "levels",
                format!(
                    "the attributes' pairs have {cells} two-way cells at these levels, over the limit of \
                     {MAX_PAIR_CELLS}; choose coarser levels. Nothing was charged"
                ),
            ));
        }
        Ok(())
    }

    /// The exact marginal of attribute `a`.
    fn one_way(&self, a: usize) -> Vec<u64> {
        let mut m = vec![0u64; self.sizes[a]];
        for (&c, &n) in self.columns[a].iter().zip(&self.counts) {
            m[c as usize] += n;
        }
        m
    }

    /// The exact three-way marginal of `(a, b, c)`, row-major in that order.
    fn three_way(&self, a: usize, b: usize, c: usize) -> Vec<u64> {
        let (db, dc) = (self.sizes[b], self.sizes[c]);
        let mut m = vec![0u64; self.sizes[a] * db * dc];
        for (i, &n) in self.counts.iter().enumerate() {
            let (x, y, z) = (self.columns[a][i] as usize, self.columns[b][i] as usize, self.columns[c][i] as usize);
            m[(x * db + y) * dc + z] += n;
        }
        m
    }

    /// The exact two-way marginal of `(a, b)`, row-major (`a`'s code times `b`'s size, plus `b`'s).
    fn two_way(&self, a: usize, b: usize) -> Vec<u64> {
        let width = self.sizes[b];
        let mut m = vec![0u64; self.sizes[a] * width];
        for ((&x, &y), &n) in self.columns[a].iter().zip(&self.columns[b]).zip(&self.counts) {
            m[x as usize * width + y as usize] += n;
        }
        m
    }
}

/// The default limit on the records a release may be expected to draw beyond the table's own
/// (as `ipa_release`'s `max_rows=`, src/methods/ipa/size.rs).
pub const DEFAULT_MAX_ROWS: u64 = 20_000_000;

/// Refuse, from public quantities alone, a release whose record count N̂ could be inflated by
/// its noise past `max_rows`: N̂ is an inverse-variance average that always includes the
/// smallest one-way marginal's total, so its noise has a standard deviation of at most
/// √(d_min · v₁) (v₁ the one-way cells' noise variance); ten of those must fit the limit.
pub fn check_rows(sizes: &[usize], budget: &Budget, max_rows: u64) -> Result<()> {
    let smallest = sizes.iter().copied().min().unwrap_or(1) as f64;
    let noise = 10.0 * (smallest * DiscreteLaplace::for_epsilon(budget.one_way, 1)?.variance()).sqrt();
    if noise <= max_rows as f64 {
        return Ok(());
    }
    Err(AnonError::argument(
        F,
        "epsilon",
        format!(
            "the number of records this release draws could be off by about {} rows of noise (ten standard \
             deviations at this epsilon), over the limit of {max_rows}; use a larger epsilon, or raise the limit \
             with max_rows=N. Nothing was charged",
            crate::hierarchy::format_number(noise.round())
        ),
    ))
}

/// Cells of all two-way marginals of attributes with these domain sizes.
pub fn pair_cells(sizes: &[usize]) -> u64 {
    let mut cells = 0u64;
    for (i, &a) in sizes.iter().enumerate() {
        for &b in &sizes[i + 1..] {
            cells = cells.saturating_add((a as u64).saturating_mul(b as u64));
        }
    }
    cells
}

/// A call's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthConfig {
    pub epsilon: f64,
    /// Fractions of ε for the one-way marginals, the selection and the two-way marginals.
    pub split: [f64; 3],
    /// Tree edges the call declares (attribute indices; public, no selection budget).
    pub declared: Vec<(usize, usize)>,
    /// Three-way marginals asked for beside the tree (at most [`Budget::most_triples`]).
    pub triples: usize,
    /// Tests only: a seeded release is predictable, hence not private.
    pub seed: Option<u64>,
}

impl SynthConfig {
    pub fn new(epsilon: f64) -> Self {
        SynthConfig { epsilon, split: DEFAULT_SPLIT, declared: Vec::new(), triples: DEFAULT_TRIPLES, seed: None }
    }
}

/// What a release measured (all of it differentially private) and the records it drew.
#[derive(Debug, Clone)]
pub struct Synthesis {
    pub budget: Budget,
    /// The selected tree's edges, in the order chosen.
    pub tree: Vec<(usize, usize)>,
    /// The selected three-way marginals as (parent, second parent, child), in the order chosen.
    pub triples: Vec<(usize, usize, usize)>,
    /// The estimated number of records (from the noisy marginals), which is how many were drawn.
    pub records: u64,
    pub model: TreeModel,
    /// `columns[a][i]`: attribute `a` of synthetic record `i`.
    pub columns: Vec<Vec<u32>>,
}

/// A noisy marginal: exact counts plus independent discrete Laplace noise.
fn noisy(exact: &[u64], noise: &DiscreteLaplace, rng: &mut impl rand::Rng) -> Vec<i64> {
    exact.iter().map(|&n| n as i64 + noise.sample(rng)).collect()
}

/// The release (steps 2 to 6 above); `progress`: Ctrl-C, [`AnonError::Cancelled`] before the
/// first draw, [`AnonError::CancelledAfterNoise`] after it.
pub fn synthesize(data: &Encoded, config: &SynthConfig, progress: &dyn Progress) -> Result<Synthesis> {
    Encoded::check_size(&data.sizes)?;
    let k = data.sizes.len();
    let budget = Budget::with_declared(config.epsilon, config.split, k, config.declared.len(), config.triples)?;
    let key = StreamKey::new(config.seed)?;
    progress.check()?;
    let one_noise = DiscreteLaplace::for_epsilon(budget.one_way, 1)?;
    let mut rng = key.stream(ONE_WAY_STREAM);
    let one_way: Vec<Vec<i64>> = (0..k).map(|a| noisy(&data.one_way(a), &one_noise, &mut rng)).collect();
    progress.check_after_noise()?;
    let (tree, two_way) = if k > 1 {
        let pairs = select::all_pairs(data, progress)?;
        let tree = select::tree(
            data,
            &config.declared,
            &pairs,
            &one_way,
            &one_noise,
            budget.selection,
            &mut key.stream(SELECT_STREAM),
        )?;
        progress.check_after_noise()?;
        let two_noise = DiscreteLaplace::for_epsilon(budget.two_way, 1)?;
        let mut rng = key.stream(TWO_WAY_STREAM);
        let measured = tree.iter().map(|&(a, b)| noisy(&pairs[&(a, b)], &two_noise, &mut rng)).collect();
        (tree, measured)
    } else {
        (Vec::new(), Vec::new())
    };
    progress.check_after_noise()?;
    let variances = model::Variances { one_way: one_noise.variance(), two_way: budget.two_way_variance()? };
    let mut model = TreeModel::estimate(&data.sizes, &one_way, &tree, &two_way, variances)?;
    progress.check_after_noise()?;
    let triples = if budget.triples > 0 { three_way(data, &mut model, &budget, &key, progress)? } else { Vec::new() };
    let records = model.records()?;
    let columns = sample::draw(&model, records, &mut key.stream(SAMPLE_STREAM), progress)?;
    Ok(Synthesis { budget, tree, triples, records, model, columns })
}

/// Step 5 continued, AIM's way: `budget.triples` rounds, each selecting a three-way marginal
/// against the current model ([`select::triple`]), measuring it and adding it to the model.
fn three_way(
    data: &Encoded,
    model: &mut TreeModel,
    budget: &Budget,
    key: &StreamKey,
    progress: &dyn Progress,
) -> Result<Vec<(usize, usize, usize)>> {
    let noise = DiscreteLaplace::for_epsilon(budget.two_way, 1)?;
    let (mut select_rng, mut rng) = (key.stream(TRIPLE_SELECT_STREAM), key.stream(THREE_WAY_STREAM));
    let mut chosen = Vec::with_capacity(budget.triples);
    for _ in 0..budget.triples {
        let Some((e, c)) = select::triple(data, model, noise.mean_abs(), budget.selection, &mut select_rng, progress)?
        else {
            break;
        };
        let p = model.parent[c].expect("a child");
        let measured = noisy(&data.three_way(p, e, c), &noise, &mut rng);
        model.add_triple(e, c, &measured)?;
        chosen.push((p, e, c));
        progress.check_after_noise()?;
    }
    Ok(chosen)
}
