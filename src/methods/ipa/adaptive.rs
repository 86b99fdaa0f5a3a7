//! The adaptive-partition release (`ipa_release(..., 'partition=adaptive')`, guarantee
//! `pure`): instead of one node of the lattice, a partition of the domain refined only where
//! the data are dense, chosen privately from noisy counts, then the generalized histogram of
//! that partition with an optional coarse level that the classes are made consistent with.
//! Proof: docs/dp.md, "The adaptive partition"; measurements: docs/results/ipa.md.
//!
//! Public parameters: a root node R (levels), a fixed sequence of S refinement steps (each
//! takes one attribute to a finer level of its declared hierarchy), thresholds θ_k, the
//! split ε = ε_partition + ε_coarse + ε_cells and a publication floor T.
//!
//! 1. **Partition (ε_partition, ε_partition / S per step).** The root's combinations (a public
//!    set) are the nodes of depth 0, all kept. At step k every child of every node kept at
//!    depth k − 1 (every value of the declared hierarchy below the parent's value, empty ones
//!    included) gets its count plus discrete Laplace noise; a child whose noisy count reaches
//!    θ_k is kept. A parent's children that are not kept, if any, are pooled into one class
//!    published with the parent's generalization. The nodes kept after step S are classes.
//! 2. **Coarse level (ε_coarse, optional).** Every (root combination, informative value) cell
//!    gets its count plus noise.
//! 3. **Cells (ε_cells).** Every (class, informative value) cell, empty ones included, gets its
//!    count plus noise.
//! 4. **Post-processing.** Without a coarse level a cell is published iff its noisy count is
//!    at least T (the pure histogram's rule). With one, per coarse cell: the target is the
//!    inverse-variance combination of its noisy count and its classes' noisy sum (Hay et al.
//!    2010), rounded, and 0 below the coarse floor T_c (the smallest T_c at which an empty
//!    coarse cell's noisy count reaches T_c with probability at most 0.05, from ε_coarse alone:
//!    without it every empty root cell whose noise came out positive was released as
//!    counterfeits, up to 2 N rows from a fine root); the classes' values below T are set to 0 and projected
//!    onto {x ≥ 0, Σ x = target} (scaled up when the target exceeds their sum, else the L2
//!    projection), then made integers by largest remainders, so the target is kept exactly.
//!
//! The noise of every stage is drawn in a canonical order (nodes and classes ascending by
//! their mixed-radix index, values ascending), from its own stream, so a seed gives one
//! release whatever order the frequency table was grouped in.

use super::histogram::{Realized, realized_loss};
use super::radix::Radix;
use super::score::codes_ncp;
use crate::dp::{DiscreteLaplace, StreamKey};
use crate::encode::FrequencyTable;
use crate::encode::hash::{FastMap, FastSet};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::lattice::format_levels;
use crate::progress::Progress;
use rand::Rng;
use std::sync::Arc;

const F: &str = "ipa_release";

/// Default share of ε for choosing the partition (docs/results/ipa.md, "Adaptive partitions").
pub(crate) const DEFAULT_PARTITION_SHARE: f64 = 0.1;
/// Default share of ε for the coarse level.
pub(crate) const DEFAULT_COARSE_SHARE: f64 = 0.5;
/// Default threshold θ: a child is refined further when its noisy count reaches it. Sized for
/// tables of about a million records (the NPS-like table); scale it with the table.
pub(crate) const DEFAULT_THETA: f64 = 1000.0;
/// Default publication floor T of the cells.
pub(crate) const DEFAULT_FLOOR: u64 = 2;
/// Most cells a depth of the plan may have (a public rule on the declared domain).
const MAX_CELLS: u128 = 10_000_000;

/// The automatic plan (`partition=adaptive` without `root=` and `steps=`; the default of a
/// table without a declared plan, issue 32): its root is chosen privately
/// ([`super::root`], share [`super::root::ROOT_SHARE`] of ε), the rest of the plan is built
/// from that root and public quantities only (the declared hierarchies, the number of
/// informative values V and ε). Share of ε on its partition...
pub(crate) const AUTO_PARTITION_SHARE: f64 = 0.1;
/// ... and on its coarse level (the chosen root's cells); the cells get the rest.
pub(crate) const AUTO_COARSE_SHARE: f64 = 0.5;
/// θ of the automatic plan is at least the class size at which its V cells' expected absolute
/// noise is this share of its records (a kept class is expected to lose at most that much;
/// 0.02 from a sweep of θ on Adult and the NPS-like table, docs/results/ipa.md: smaller
/// classes leave many small pooled remainders, each a class that loses most of its records)...
const AUTO_CLASS_LOSS: f64 = 0.02;
/// ... and at least the noisy count an empty child reaches with probability at most this.
const AUTO_SPURIOUS: f64 = 1e-3;
/// The automatic plan's publication floor T until it is resolved (no `floor=` given): then
/// the node release's rule, the smallest T with P(X ≥ T) ≤ 0.05 at ε_cells (9 at ε = 1). With
/// the old T = 2 every cell's noise reached the floor with probability 0.15, and the
/// counterfeits of the many classes covering a rare group outweighed its few real records
/// (NPS-like Q1 0.85, docs/results/ipa.md "Your own table"). Post-processing: ε is unchanged.
const AUTO_FLOOR: u64 = 0;
/// A level of a hierarchy is a step of the automatic plan when it has at least this many
/// times the nodes of the level it refines (levels that split little cost a step's budget for
/// little gain); the leaves always are.
const AUTO_SPLIT: usize = 3;

/// Noise streams of the three stages.
const PARTITION_STREAM: u64 = u64::MAX - 2;
const COARSE_STREAM: u64 = u64::MAX - 3;
const CELLS_STREAM: u64 = u64::MAX - 4;

/// The parameters of an adaptive release (all public).
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveConfig {
    epsilon: f64,
    /// The root node's levels, one per quasi-identifier in declaration order.
    pub(crate) root: Vec<u8>,
    /// (attribute name, new level) per refinement step.
    pub(crate) steps: Vec<(String, u8)>,
    /// θ per step (one value stands for every step).
    pub(crate) theta: Vec<f64>,
    /// Shares of ε for the partition and the coarse level (0: no coarse level); the cells get
    /// the rest.
    pub(crate) partition: f64,
    pub(crate) coarse: f64,
    /// Share of ε for choosing the root privately (the automatic plan; 0: the root is given).
    pub(crate) root_share: f64,
    pub(crate) floor: u64,
    pub seed: Option<u64>,
}

/// The budgets as the samplers realize them (each rounded down onto the exact grid).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AdaptiveBudget {
    /// ε of the automatic plan's root: the noisy record count that bounds its combinations,
    /// and the choice among them (both 0: a declared root).
    pub(crate) root_count: f64,
    pub(crate) root_choice: f64,
    /// ε of each refinement step (the partition's share split equally), then of the coarse
    /// level (0: none) and of the cells.
    pub(crate) steps: Vec<f64>,
    pub(crate) coarse: f64,
    pub(crate) cells: f64,
}

impl AdaptiveBudget {
    pub(crate) fn partition(&self) -> f64 {
        self.steps.iter().sum()
    }
    pub(crate) fn total(&self) -> f64 {
        self.root() + self.partition() + self.coarse + self.cells
    }
    pub(crate) fn root(&self) -> f64 {
        self.root_count + self.root_choice
    }
}

impl AdaptiveConfig {
    /// The defaults but for the plan (root and steps), which the caller declares.
    pub fn new(epsilon: f64, root: Vec<u8>, steps: Vec<(String, u8)>) -> Self {
        AdaptiveConfig {
            epsilon,
            root,
            steps,
            theta: vec![DEFAULT_THETA],
            partition: DEFAULT_PARTITION_SHARE,
            coarse: DEFAULT_COARSE_SHARE,
            root_share: 0.0,
            floor: DEFAULT_FLOOR,
            seed: None,
        }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The automatic plan (module doc of [`AUTO_PARTITION_SHARE`]): root and steps are chosen
    /// when the table's hierarchies are known ([`Self::resolved`]).
    pub fn automatic(epsilon: f64) -> Self {
        AdaptiveConfig {
            theta: Vec::new(),
            partition: AUTO_PARTITION_SHARE,
            coarse: AUTO_COARSE_SHARE,
            root_share: super::root::ROOT_SHARE,
            floor: AUTO_FLOOR,
            ..AdaptiveConfig::new(epsilon, Vec::new(), Vec::new())
        }
    }

    /// Whether the plan is the automatic one, not yet resolved against a table.
    pub(crate) fn is_automatic(&self) -> bool {
        self.root.is_empty() && self.steps.is_empty()
    }

    /// The automatic plan for `ft`'s public domain from `root` (chosen privately,
    /// [`super::root`]): pass after pass, every quasi-identifier (fewest leaves first: a split
    /// into few children removes as much NCP per record as one into many and keeps classes
    /// large) goes one level finer than the root, through the levels of its hierarchy that
    /// split at least [`AUTO_SPLIT`]-fold, down to its leaves unless a depth would pass
    /// [`MAX_CELLS`] combinations. Pass by pass rather than attribute by attribute, so that
    /// where the data thin out every attribute is left at a middle level rather than some at
    /// their leaves and the rest at `*` (measured on Adult and the NPS-like table:
    /// docs/results/ipa.md, "Your own table"). θ (unless given) is the larger of
    /// V·E|X_cells| / [`AUTO_CLASS_LOSS`] and (1/ε_step)·ln(1/[`AUTO_SPURIOUS`]); the floor
    /// (unless given) is [`AUTO_FLOOR`]'s rule. Besides the root, everything read is public
    /// (hierarchies, V, ε).
    pub(crate) fn resolved(&self, ft: &FrequencyTable, root: Vec<u8>) -> Result<Self> {
        let steps = automatic_steps(ft, &root);
        if steps.is_empty() {
            return Err(AnonError::argument(
                F,
                "partition",
                "no quasi-identifier has a hierarchy to refine; declare one, or use partition=node",
            ));
        }
        let mut plan = AdaptiveConfig { root, steps, theta: vec![0.0], ..self.clone() };
        let b = plan.budget()?;
        let cell_noise = DiscreteLaplace::for_epsilon(b.cells, 1)?;
        if self.floor == AUTO_FLOOR {
            plan.floor = super::guarantee::floor(&cell_noise, super::guarantee::DEFAULT_FLOOR_PROBABILITY);
        }
        if self.theta.is_empty() {
            let spurious = AUTO_SPURIOUS.recip().ln() / b.steps[0];
            plan.theta = vec![class_theta(ft, &cell_noise).max(spurious).ceil()];
        } else {
            plan.theta = self.theta.clone();
        }
        Ok(plan)
    }

    /// θ: one value for every step, or one per step.
    pub fn with_theta(mut self, theta: Vec<f64>) -> Self {
        self.theta = theta;
        self
    }

    /// The shares of ε for the partition and the coarse level (0: none); the cells get the rest.
    pub fn with_shares(mut self, partition: f64, coarse: f64) -> Self {
        (self.partition, self.coarse) = (partition, coarse);
        self
    }

    pub fn with_floor(mut self, floor: u64) -> Self {
        self.floor = floor;
        self
    }

    /// The realized budgets; errors name the option at fault.
    pub(crate) fn budget(&self) -> Result<AdaptiveBudget> {
        if !self.epsilon.is_finite() || self.epsilon <= 0.0 {
            return Err(AnonError::argument(
                F,
                "epsilon",
                format!("must be a finite number > 0, got {}", self.epsilon),
            ));
        }
        if self.steps.is_empty() && !self.is_automatic() {
            return Err(AnonError::argument(F, "steps", "needs at least one refinement step, e.g. 'location:0'"));
        }
        if !(self.partition > 0.0 && self.partition < 1.0) {
            return Err(AnonError::argument(F, "selection", format!("must be in (0, 1), got {}", self.partition)));
        }
        if !(self.coarse >= 0.0 && self.partition + self.coarse + self.root_share < 1.0) {
            return Err(AnonError::argument(
                F,
                "coarse",
                format!(
                    "must be >= 0 and leave part of epsilon for the cells (selection + coarse < 1), got {}",
                    self.coarse
                ),
            ));
        }
        if self.theta.len() != 1 && self.theta.len() != self.steps.len() && !self.is_automatic() {
            return Err(AnonError::argument(
                F,
                "theta",
                format!("give one threshold or one per step ({} steps), got {}", self.steps.len(), self.theta.len()),
            ));
        }
        // A class is refined when its noisy count exceeds theta; a negative theta refines
        // empty classes too, which no plan means.
        if let Some(t) = self.theta.iter().find(|t| !(t.is_finite() && **t >= 0.0)) {
            return Err(AnonError::argument(F, "theta", format!("must be a finite number >= 0, got {t}")));
        }
        let part = |e: f64, name: &str| {
            DiscreteLaplace::for_epsilon(e, 1)
                .map(|d| d.epsilon(1))
                .map_err(|_| AnonError::argument(F, name, format!("the {name} budget {e} is too small")))
        };
        // The automatic plan before it is resolved: its partition as one part (what the ledger
        // is charged; the resolved steps' parts, each rounded down, sum to at most that).
        let steps = self.steps.len().max(1);
        let coarse = if self.coarse > 0.0 { part(self.epsilon * self.coarse, "coarse")? } else { 0.0 };
        let root = |share: f64| {
            if self.root_share > 0.0 { part(self.epsilon * self.root_share * share, "root") } else { Ok(0.0) }
        };
        Ok(AdaptiveBudget {
            root_count: root(super::root::COUNT_SHARE)?,
            root_choice: root(1.0 - super::root::COUNT_SHARE)?,
            steps: vec![part(self.epsilon * self.partition / steps as f64, "selection")?; steps],
            coarse,
            cells: part(self.epsilon * (1.0 - self.partition - self.coarse - self.root_share), "cells")?,
        })
    }

    fn theta(&self, step: usize) -> f64 {
        if self.theta.len() == 1 { self.theta[0] } else { self.theta[step] }
    }

    /// The plan's text, as the report shows it: `length_of_stay:3|location:1`.
    pub(crate) fn steps_text(&self) -> String {
        self.steps.iter().map(|(a, l)| format!("{a}:{l}")).collect::<Vec<_>>().join("|")
    }
    pub(crate) fn theta_text(&self) -> String {
        self.theta.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("|")
    }
}

/// One class of the chosen partition: a node of some depth, whole (kept to the last step) or
/// pooled (its children that were not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionClass {
    /// The depth whose levels generalize the class (0 = the root).
    pub depth: usize,
    /// Node codes at that depth's levels.
    pub codes: Vec<u32>,
    /// Whether the class is the pooled remainder of the node's children.
    pub pooled: bool,
}

/// One published cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionCell {
    pub class: u32,
    pub value: u32,
    pub count: u64,
}

/// A released adaptive partition.
#[derive(Debug, Clone)]
pub struct AdaptiveRelease {
    /// Levels of each depth (0 = the root, S = after the last step).
    pub levels: Vec<Vec<u8>>,
    pub classes: Vec<PartitionClass>,
    /// Cells with a positive count, class by class, values ascending.
    pub cells: Vec<PartitionCell>,
    pub released_records: u64,
    pub(crate) budget: AdaptiveBudget,
    /// The plan released: as given, or the automatic plan resolved against the table.
    pub(crate) plan: AdaptiveConfig,
    /// Diagnostics only (reads the original): IL of the release, counterfeit and withheld.
    pub(crate) realized: Realized,
}

impl AdaptiveRelease {
    /// The plan released, as `ipa_release` options (`root=…, steps=…, theta=…`): the declared
    /// one, or the automatic plan resolved from the table's public domain.
    pub fn plan_text(&self) -> String {
        let p = &self.plan;
        format!("root={}, steps={}, theta={}", format_levels(&p.root), p.steps_text(), p.theta_text())
    }

    /// ε spent on the root's private choice (0 for a declared root).
    pub fn epsilon_root(&self) -> f64 {
        self.budget.root()
    }
    /// Diagnostics (exact data): released rows beyond their cell's real count.
    pub fn realized_counterfeit(&self) -> u64 {
        self.realized.counterfeit
    }
    /// Diagnostics (exact data): real records of a cell not released.
    pub fn realized_withheld(&self) -> u64 {
        self.realized.withheld
    }

    /// Number of classes of the chosen partition at each depth: a function of the noisy counts
    /// of stage 1 (post-processing), not of the original.
    pub(crate) fn classes_by_depth(&self) -> String {
        let mut n = vec![0usize; self.levels.len()];
        self.classes.iter().for_each(|c| n[c.depth] += 1);
        n.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("|")
    }
}

/// The levels of `h` the automatic plan steps through, finest first (so `pop` gives the next
/// coarser-to-finer one): each has at least [`AUTO_SPLIT`] times the nodes of the one before,
/// starting from `*`; the leaves always.
fn splitting_levels(h: &Hierarchy) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = h.height();
    for l in (0..h.height()).rev() {
        if l == 0 || h.width(l) >= AUTO_SPLIT * h.width(from) {
            out.push(l);
            from = l;
        }
    }
    out.reverse();
    out
}

/// The class size at which a class's V cells' expected absolute noise is [`AUTO_CLASS_LOSS`]
/// of its records: the automatic plan's θ (at least) and what bounds its root's combinations.
fn class_theta(ft: &FrequencyTable, cell_noise: &DiscreteLaplace) -> f64 {
    let values = ft.sensitive.as_ref().map_or(0, |s| s.values.len()) as f64;
    values * cell_noise.mean_abs() / AUTO_CLASS_LOSS
}

/// The automatic plan's steps from `root` ([`AdaptiveConfig::resolved`]): empty when no
/// attribute can be refined. Reads the hierarchies only.
pub(crate) fn automatic_steps(ft: &FrequencyTable, root: &[u8]) -> Vec<(String, u8)> {
    let hs = ft.hierarchies();
    let mut order: Vec<usize> = (0..hs.len()).filter(|&a| root[a] > 0).collect();
    order.sort_by_key(|&a| (hs[a].leaf_count(), a));
    // Each attribute's levels below the root that split at least AUTO_SPLIT-fold, coarse to fine.
    let mut todo: Vec<(usize, Vec<usize>)> = order
        .iter()
        .map(|&a| (a, splitting_levels(&hs[a]).into_iter().filter(|&l| l < root[a] as usize).collect()))
        .collect();
    let (mut levels, mut steps) = (root.to_vec(), Vec::new());
    // Pass after pass, each attribute one such level finer, until all are at their leaves
    // or would pass MAX_CELLS.
    while todo.iter().any(|(_, ls): &(usize, Vec<usize>)| !ls.is_empty()) {
        for (a, ls) in &mut todo {
            let Some(l) = ls.pop() else { continue };
            let from = levels[*a];
            levels[*a] = l as u8;
            if Radix::new(&hs, levels.clone()).size().is_none_or(|n| n > MAX_CELLS) {
                levels[*a] = from;
                ls.clear();
                continue;
            }
            steps.push((ft.qis[*a].name.clone(), l as u8));
        }
    }
    steps
}

/// The numbering of a depth's combinations, refused (naming `option`) past [`MAX_CELLS`].
fn bounded(hs: &[Arc<Hierarchy>], levels: Vec<u8>, option: &str) -> Result<Radix> {
    let radix = Radix::new(hs, levels);
    match radix.size() {
        Some(n) if n <= MAX_CELLS => Ok(radix),
        _ => Err(AnonError::argument(
            F,
            option,
            format!("the node {} has more than {MAX_CELLS} combinations; refine less", format_levels(&radix.levels)),
        )),
    }
}

/// The plan resolved against the table: each depth's numbering and each step's attribute.
struct Plan {
    depths: Vec<Radix>,
    /// Number of the root's combinations.
    roots: u128,
    /// Per step: the refined attribute, and for each of its codes at the parent level, its
    /// children at the new level (ascending).
    steps: Vec<(usize, Vec<Vec<u32>>)>,
}

impl Plan {
    fn new(ft: &FrequencyTable, config: &AdaptiveConfig) -> Result<Self> {
        let hs = ft.hierarchies();
        if config.root.len() != hs.len() || config.root.iter().zip(&hs).any(|(&l, h)| l as usize > h.height()) {
            let heights: Vec<u8> = hs.iter().map(|h| h.height() as u8).collect();
            return Err(AnonError::argument(
                F,
                "root",
                format!(
                    "'{}' is not a node of the lattice (one level per quasi-identifier, heights {})",
                    format_levels(&config.root),
                    format_levels(&heights)
                ),
            ));
        }
        let mut levels = config.root.clone();
        let mut depths = vec![bounded(&hs, levels.clone(), "root")?];
        let mut steps = Vec::new();
        for (name, lv) in &config.steps {
            let a = ft.qis.iter().position(|q| &q.name == name).ok_or_else(|| {
                let names: Vec<&str> = ft.qis.iter().map(|q| q.name.as_str()).collect();
                AnonError::argument(F, "steps", format!("'{name}' is not a quasi-identifier ({})", names.join(", ")))
            })?;
            let from = levels[a];
            if *lv >= from {
                return Err(AnonError::argument(
                    F,
                    "steps",
                    format!("'{name}:{lv}' does not refine {name}, which is at level {from} there"),
                ));
            }
            let h = &hs[a];
            let mut kids = vec![Vec::new(); h.width(from as usize)];
            for c in 0..h.width(*lv as usize) as u32 {
                kids[h.ancestor(*lv as usize, from as usize, c) as usize].push(c);
            }
            levels[a] = *lv;
            depths.push(bounded(&hs, levels.clone(), "steps")?);
            steps.push((a, kids));
        }
        let roots = depths[0].size().unwrap_or_default();
        Ok(Plan { depths, roots, steps })
    }
}

/// Every frequency row's node index at every depth, and each depth's record totals. The maps
/// are only looked up (never iterated), so their hasher cannot move a draw; the depths are
/// counted side by side on the pool.
struct Counts {
    /// `index[k][i]`: row i's node at depth k.
    index: Vec<Vec<u128>>,
    totals: Vec<FastMap<u128, u64>>,
}

impl Counts {
    fn new(ft: &FrequencyTable, plan: &Plan, progress: &dyn Progress) -> Result<Self> {
        let hs = ft.hierarchies();
        progress.check()?;
        let depths = crate::parallel::map(&plan.depths, |d| {
            let up: Vec<&[u32]> = hs.iter().zip(&d.levels).map(|(h, &l)| h.up(l as usize)).collect();
            let idx: Vec<u128> = (0..ft.len()).map(|i| d.index(|a| up[a][ft.qis[a].codes[i] as usize])).collect();
            let mut t: FastMap<u128, u64> = FastMap::default();
            for (&x, &n) in idx.iter().zip(&ft.counts) {
                *t.entry(x).or_default() += n;
            }
            (idx, t)
        });
        let (index, totals) = depths.into_iter().unzip();
        Ok(Counts { index, totals })
    }
}

/// A class as stage 1 chose it: its depth, node index there, whether pooled, and its root
/// combination (the coarse cell group it belongs to).
#[derive(Debug, Clone, Copy)]
struct Chosen {
    depth: usize,
    node: u128,
    pooled: bool,
    root: u128,
}

/// How many classes are noised (or histogrammed) between two looks at Ctrl-C.
const CHECK_EVERY: usize = 1 << 14;

/// Stage 1: the partition's classes in canonical order, and the kept nodes of every depth.
/// Its first draw is the release's first noise: a cancellation from there on is charged.
fn choose_partition<R: Rng + ?Sized>(
    plan: &Plan,
    counts: &Counts,
    config: &AdaptiveConfig,
    noise: &[DiscreteLaplace],
    rng: &mut R,
    progress: &dyn Progress,
) -> Result<(Vec<Chosen>, Vec<FastSet<u128>>)> {
    let mut frontier: Vec<(u128, u128)> = (0..plan.roots).map(|i| (i, i)).collect();
    let mut classes = Vec::new();
    let mut kept = vec![frontier.iter().map(|&(_, v)| v).collect::<FastSet<u128>>()];
    for (k, (a, kids)) in plan.steps.iter().enumerate() {
        let (parent, child) = (&plan.depths[k], &plan.depths[k + 1]);
        let theta = config.theta(k);
        let mut next = Vec::new();
        for (i, &(g, v)) in frontier.iter().enumerate() {
            if i % CHECK_EVERY == CHECK_EVERY - 1 {
                progress.check_after_noise()?;
            }
            let codes = parent.decode(v);
            let mut sparse = false;
            for &c in &kids[codes[*a] as usize] {
                let u = child.index(|b| if b == *a { c } else { codes[b] });
                let n = counts.totals[k + 1].get(&u).copied().unwrap_or(0);
                if n as f64 + noise[k].sample(rng) as f64 >= theta {
                    next.push((g, u));
                } else {
                    sparse = true;
                }
            }
            if sparse {
                classes.push(Chosen { depth: k, node: v, pooled: true, root: g });
            }
        }
        kept.push(next.iter().map(|&(_, u)| u).collect());
        frontier = next;
    }
    let last = plan.steps.len();
    classes.extend(frontier.into_iter().map(|(g, v)| Chosen { depth: last, node: v, pooled: false, root: g }));
    Ok((classes, kept))
}

/// Every class's real histogram over `width` values (class-major).
fn class_histograms(
    ft: &FrequencyTable,
    counts: &Counts,
    kept: &[FastSet<u128>],
    ids: &FastMap<(usize, u128), usize>,
    width: usize,
) -> Result<Vec<u32>> {
    let s = ft.sensitive.as_ref().ok_or_else(|| AnonError::argument(F, "source", "needs an informative attribute"))?;
    // Each row's class found by its lookups on the pool, a block of rows at a time (the
    // classes of a block, not of the table, held at once), then added up in one cheap pass.
    let mut hist = vec![0u32; ids.len() * width];
    let mut class = vec![0u32; HIST_BLOCK.min(ft.len())];
    for block in crate::parallel::ranges(ft.len(), HIST_BLOCK) {
        let class = &mut class[..block.len()];
        crate::parallel::in_ranges(class, 1, HIST_ROWS, |rows, part| {
            for (c, i) in part.iter_mut().zip(rows.start + block.start..rows.end + block.start) {
                // The first depth whose node was not kept: the record is in its parent's pool.
                let depth = (1..kept.len()).find(|&k| !kept[k].contains(&counts.index[k][i]));
                let key = match depth {
                    Some(k) => (k - 1, counts.index[k - 1][i]),
                    None => (kept.len() - 1, counts.index[kept.len() - 1][i]),
                };
                *c = ids.get(&key).map_or(u32::MAX, |&c| c as u32);
            }
        });
        for (&c, i) in class.iter().zip(block) {
            if c == u32::MAX {
                return Err(AnonError::table(F, "a record outside the partition (internal)"));
            }
            hist[c as usize * width + s.codes[i] as usize] += ft.counts[i] as u32;
        }
    }
    Ok(hist)
}

/// Rows a job of [`class_histograms`] classes.
const HIST_ROWS: usize = 1 << 16;

/// Rows [`class_histograms`] classes at a time (their classes held at once: 16 MiB).
const HIST_BLOCK: usize = 1 << 22;

/// Release the adaptive partition of `ft`, which must be the public table
/// ([`super::domain::public_table`]).
pub fn release(ft: &FrequencyTable, config: &AdaptiveConfig) -> Result<AdaptiveRelease> {
    release_cancellable(ft, config, &crate::progress::Silent)
}

/// Check a declared plan (`root=`, `steps=`) against the table's hierarchies, and the
/// informative domain, before the call's budget is reserved: these are public quantities, and
/// an error after the reservation is charged (docs/dp.md, "Cancelling a release"). The
/// automatic plan is resolved from noisy counts and checked as it is drawn.
pub(crate) fn check_declared_plan(ft: &FrequencyTable, config: &AdaptiveConfig) -> Result<()> {
    config.budget()?;
    if ft.sensitive.as_ref().is_none_or(|s| s.values.is_empty()) {
        return Err(AnonError::argument(F, "source", "needs an informative attribute with a declared domain"));
    }
    if !config.is_automatic() {
        Plan::new(ft, config)?;
    }
    Ok(())
}

/// [`release`], stopped when `progress.cancelled()` (Ctrl-C): as [`AnonError::Cancelled`]
/// before the partition's first draw, [`AnonError::CancelledAfterNoise`] after it.
pub(crate) fn release_cancellable(
    ft: &FrequencyTable,
    config: &AdaptiveConfig,
    progress: &dyn Progress,
) -> Result<AdaptiveRelease> {
    let key = StreamKey::new(config.seed)?;
    let resolved;
    let automatic = config.is_automatic();
    let config = if automatic {
        let b = config.budget()?;
        let (coarse, cells) = (DiscreteLaplace::for_epsilon(b.coarse, 1)?, DiscreteLaplace::for_epsilon(b.cells, 1)?);
        let mut candidates = super::root::candidates(ft, &coarse, |r| !automatic_steps(ft, r).is_empty(), progress)?;
        progress.check()?;
        // The root's combinations are at most N̂ / θ₀ (N̂ a noisy record count): finer roots
        // leave classes too small for any step to refine, whatever their gain.
        let most = super::root::most_combinations(ft, b.root_count, class_theta(ft, &cells), &key)?;
        let hs = ft.hierarchies();
        candidates.retain(|c| Radix::new(&hs, c.levels.clone()).size().is_some_and(|n| n <= most));
        resolved = config.resolved(ft, super::root::choose(&candidates, b.root_choice, &key)?)?;
        &resolved
    } else {
        config
    };
    // Once the root is drawn, a cancellation keeps the charge.
    let after_root = AfterNoise(progress);
    let progress: &dyn Progress = if automatic { &after_root } else { progress };
    let budget = config.budget()?;
    let width = ft.sensitive.as_ref().map_or(0, |s| s.values.len());
    if width == 0 {
        return Err(AnonError::argument(F, "source", "needs an informative attribute with a declared domain"));
    }
    let plan = Plan::new(ft, config)?;
    let counts = Counts::new(ft, &plan, progress)?;
    let step_noise = budget.steps.iter().map(|&e| DiscreteLaplace::for_epsilon(e, 1)).collect::<Result<Vec<_>>>()?;
    progress.check()?;
    let (chosen, kept) =
        choose_partition(&plan, &counts, config, &step_noise, &mut key.stream(PARTITION_STREAM), progress)?;
    let ids: FastMap<(usize, u128), usize> = chosen.iter().enumerate().map(|(i, c)| ((c.depth, c.node), i)).collect();
    progress.check_after_noise()?;
    let hist = class_histograms(ft, &counts, &kept, &ids, width)?;
    progress.check_after_noise()?;
    let cell_noise = DiscreteLaplace::for_epsilon(budget.cells, 1)?;
    let mut rng = key.stream(CELLS_STREAM);
    let noisy: Vec<i64> = hist.iter().map(|&n| i64::from(n) + cell_noise.sample(&mut rng)).collect();
    let released = if budget.coarse > 0.0 {
        let groups: Vec<u128> = chosen.iter().map(|c| c.root).collect();
        let coarse = coarse_counts(ft, &counts, plan.roots, width, budget.coarse, &key)?;
        progress.check_after_noise()?;
        let coarse_noise = DiscreteLaplace::for_epsilon(budget.coarse, 1)?;
        let var = (coarse_noise.variance(), cell_noise.variance());
        let floors = (coarse_floor(&coarse_noise), config.floor);
        consistent(&noisy, &groups, &coarse, width, var, floors)
    } else {
        let least = class_floor(&cell_noise, width, super::guarantee::DEFAULT_FLOOR_PROBABILITY);
        floored(&noisy, width, least, config.floor)
    };
    let classes: Vec<PartitionClass> = chosen
        .iter()
        .map(|c| PartitionClass { depth: c.depth, codes: plan.depths[c.depth].decode(c.node), pooled: c.pooled })
        .collect();
    let levels: Vec<Vec<u8>> = plan.depths.iter().map(|d| d.levels.clone()).collect();
    let cells: Vec<PartitionCell> = released
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(i, &count)| PartitionCell { class: (i / width) as u32, value: (i % width) as u32, count })
        .collect();
    let hs = ft.hierarchies();
    let realized = realized_loss(classes.iter().enumerate().map(|(p, c)| {
        let ncp = codes_ncp(&hs, &levels[c.depth], |a| c.codes[a]);
        (ncp, &hist[p * width..(p + 1) * width], &released[p * width..(p + 1) * width])
    }));
    let released_records = cells.iter().map(|c| c.count).sum();
    Ok(AdaptiveRelease { levels, classes, cells, released_records, budget, plan: config.clone(), realized })
}

/// A progress whose checkpoints are [`Progress::check_after_noise`]: the automatic plan's
/// stages run after its root was drawn.
#[derive(Debug)]
struct AfterNoise<'a>(&'a dyn Progress);

impl Progress for AfterNoise<'_> {
    fn begin(&self, task: &str, total: u64) {
        self.0.begin(task, total)
    }
    fn advance(&self, n: u64) {
        self.0.advance(n)
    }
    fn finish(&self) {
        self.0.finish()
    }
    fn cancelled(&self) -> bool {
        self.0.cancelled()
    }
    fn check(&self) -> Result<()> {
        self.0.check_after_noise()
    }
}

/// The coarse level: every (root combination, value) cell's noisy count, root-major.
fn coarse_counts(
    ft: &FrequencyTable,
    counts: &Counts,
    roots: u128,
    width: usize,
    epsilon: f64,
    key: &StreamKey,
) -> Result<Vec<i64>> {
    let s = ft.sensitive.as_ref().ok_or_else(|| AnonError::argument(F, "source", "needs an informative attribute"))?;
    let mut exact = vec![0i64; roots as usize * width];
    for i in 0..ft.len() {
        exact[counts.index[0][i] as usize * width + s.codes[i] as usize] += ft.counts[i] as i64;
    }
    let noise = DiscreteLaplace::for_epsilon(epsilon, 1)?;
    let mut rng = key.stream(COARSE_STREAM);
    Ok(exact.into_iter().map(|n| n + noise.sample(&mut rng)).collect())
}

/// Without a coarse level: a class whose noisy total (the sum of its `width` noisy cells) is
/// below `least` is released empty, and in the others a cell is published iff its noisy count
/// reaches `floor` (module doc, step 4). Reads noisy counts and public numbers only.
fn floored(noisy: &[i64], width: usize, least: i64, floor: u64) -> Vec<u64> {
    noisy
        .chunks(width.max(1))
        .flat_map(|class| {
            let kept = class.iter().sum::<i64>() >= least;
            class.iter().map(move |&y| if kept && y >= floor.max(1) as i64 { y as u64 } else { 0 })
        })
        .collect()
}

/// The least noisy total of a class without a coarse level: the smallest t with
/// P(X_1 + … + X_V ≥ t) ≤ `p` for V = `width` independent draws of `noise`, bounded by
/// Chernoff, min over λ of e^(−λt) M(λ)^V with the discrete Laplace's moment generating
/// function M(λ) = (1 − q)² / ((1 − q e^λ)(1 − q e^(−λ))), 0 < λ < −ln q. An empty class (an
/// empty pooled remainder, a child kept on noise alone) is then released with probability at
/// most p: every one would otherwise be a class of counterfeits only, V cells that each reach
/// the floor with some probability. Public: it reads ε_cells, V and p only.
fn class_floor(noise: &DiscreteLaplace, width: usize, p: f64) -> i64 {
    let q = noise.q();
    let v = width.max(1) as f64;
    let log_mgf = |l: f64| 2.0 * (1.0 - q).ln() - (1.0 - q * l.exp()).ln() - (1.0 - q * (-l).exp()).ln();
    let top = -q.ln();
    let bound = |t: f64| {
        (1..200).map(|i| top * i as f64 / 200.0).map(|l| -l * t + v * log_mgf(l)).fold(f64::INFINITY, f64::min)
    };
    let mut t = 1i64;
    while t < 1 << 40 && bound(t as f64) > p.ln() {
        t += 1;
    }
    t
}

/// The coarse floor T_c (module doc, step 4): read off the public noise scale only, so
/// applying it is post-processing.
fn coarse_floor(noise: &DiscreteLaplace) -> u64 {
    super::guarantee::floor(noise, super::guarantee::DEFAULT_FLOOR_PROBABILITY)
}

/// Post-processing with a coarse level: per (root combination g, value w), the classes'
/// values made consistent with the combined target (module doc, step 4). `noisy` is
/// class-major, `groups[p]` class p's root combination, `var` = (coarse, cell) variances,
/// `floors` = (the coarse floor T_c, the cells' floor T).
fn consistent(
    noisy: &[i64],
    groups: &[u128],
    coarse: &[i64],
    width: usize,
    var: (f64, f64),
    (coarse_floor, floor): (u64, u64),
) -> Vec<u64> {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); coarse.len() / width.max(1)];
    for (p, &g) in groups.iter().enumerate() {
        members[g as usize].push(p);
    }
    let mut out = vec![0u64; noisy.len()];
    let mut buf = Vec::new();
    for (g, kids) in members.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        for w in 0..width {
            let sum: f64 = kids.iter().map(|&p| noisy[p * width + w] as f64).sum();
            let t = hay_target(coarse[g * width + w] as f64, var.0, sum, kids.len(), var.1);
            let t = if t < coarse_floor as f64 { 0.0 } else { t };
            buf.clear();
            buf.extend(
                kids.iter().map(|&p| noisy[p * width + w]).map(|y| if y < floor as i64 { 0.0 } else { y as f64 }),
            );
            project(&mut buf, t);
            for (&p, n) in kids.iter().zip(integerize(&buf)) {
                out[p * width + w] = n;
            }
        }
    }
    out
}

/// The inverse-variance combination of a coarse cell's noisy count (variance `var_coarse`)
/// and the sum of its `m` classes' noisy values (each `var_fine`), rounded, at least 0.
///
/// The weights 1/v are scaled by the smaller variance, so they lie in [0, 1]: the same
/// combination, and defined when a variance is 0. At a huge ε (about 5000 and up) the discrete
/// Laplace's q = e^(−ε) underflows, its noise is exactly 0 and its variance 0; 1/0 made both
/// weights infinite, inf/inf NaN, and NaN rounded and floored at 0 released nothing at all.
/// The zero-variance limit is what weighting means: a noise-free measurement takes all the
/// weight from a noisy one, and two noise-free ones (which then agree) are averaged.
fn hay_target(coarse: f64, var_coarse: f64, sum: f64, m: usize, var_fine: f64) -> f64 {
    let var_sum = m as f64 * var_fine;
    let least = var_coarse.min(var_sum);
    let weight = |v: f64| if v <= least { 1.0 } else { least / v };
    let (a, b) = (weight(var_coarse), weight(var_sum));
    let target = (a * coarse + b * sum) / (a + b);
    // NaN only from a NaN input: fall back on the classes' own sum, which is what they release
    // without a coarse level, rather than on 0, which would silently withhold them all.
    if target.is_nan() { sum } else { target }.round().max(0.0)
}

/// `y` onto {x ≥ 0, Σ x = s}: when s is at least the positive values' sum (and that is
/// positive) they are scaled up, which keeps empty classes empty; else the L2 projection
/// x = max(0, y − λ).
fn project(y: &mut [f64], s: f64) {
    if s <= 0.0 {
        y.iter_mut().for_each(|x| *x = 0.0);
        return;
    }
    let positive: f64 = y.iter().map(|v| v.max(0.0)).sum();
    if positive > 0.0 && s >= positive {
        y.iter_mut().for_each(|x| *x = x.max(0.0) * s / positive);
        return;
    }
    let mut sorted = y.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let (mut sum, mut lambda) = (0.0, 0.0);
    for (k, &v) in sorted.iter().enumerate() {
        sum += v;
        let l = (sum - s) / (k + 1) as f64;
        if v - l <= 0.0 {
            break;
        }
        lambda = l;
    }
    y.iter_mut().for_each(|x| *x = (*x - lambda).max(0.0));
}

/// Non-negative integers with the same (rounded) total: floors, then one more for the
/// largest remainders (ties to the first).
fn integerize(x: &[f64]) -> Vec<u64> {
    let mut out: Vec<u64> = x.iter().map(|v| v.floor().max(0.0) as u64).collect();
    let total = x.iter().sum::<f64>().round().max(0.0) as u64;
    let mut rest: Vec<(f64, usize)> = x.iter().enumerate().map(|(i, v)| (v - v.floor(), i)).collect();
    rest.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = total.saturating_sub(out.iter().sum()) as usize;
    for &(_, i) in rest.iter().take(missing) {
        out[i] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_keeps_the_target_and_empty_classes() {
        // Target above the positive sum: scaled up, the zero stays zero.
        let mut y = vec![2.0, 0.0, 6.0];
        project(&mut y, 12.0);
        assert_eq!(y, vec![3.0, 0.0, 9.0]);
        // Target below: x = max(0, y - λ) with Σ = s.
        let mut y = vec![5.0, 1.0, 3.0];
        project(&mut y, 4.0);
        assert_eq!(y, vec![3.0, 0.0, 1.0]);
        // Nothing positive: the target is spread evenly.
        let mut y = vec![0.0, 0.0];
        project(&mut y, 3.0);
        assert_eq!(y, vec![1.5, 1.5]);
    }

    #[test]
    fn integers_keep_the_total() {
        assert_eq!(integerize(&[1.5, 1.5]), vec![2, 1]);
        assert_eq!(integerize(&[0.2, 0.3, 2.5]), vec![0, 0, 3]);
        let x = [3.3, 2.2, 1.1, 0.4];
        assert_eq!(integerize(&x).iter().sum::<u64>(), 7);
    }

    #[test]
    fn class_floor_bounds_the_sum_of_the_cells_noise() {
        // The exact tail of a sum of V discrete Laplace draws (by convolution) at the floor is
        // at most p, and the floor grows with V.
        let noise = DiscreteLaplace::for_epsilon(0.75, 1).unwrap();
        let mut last = 0;
        for v in [1usize, 5, 14, 41] {
            let t = class_floor(&noise, v, 0.05);
            let one: Vec<f64> = (-400i64..=400).map(|x| noise.pmf(x)).collect();
            let mut sum = vec![1.0];
            for _ in 0..v {
                let mut next = vec![0.0; sum.len() + one.len() - 1];
                for (i, a) in sum.iter().enumerate().filter(|(_, a)| **a > 1e-300) {
                    for (j, b) in one.iter().enumerate() {
                        next[i + j] += a * b;
                    }
                }
                sum = next;
            }
            let offset = 400 * v as i64;
            let tail =
                |t: i64| sum.iter().enumerate().filter(|(i, _)| *i as i64 - offset >= t).map(|(_, p)| p).sum::<f64>();
            assert!(tail(t) <= 0.05, "V {v}: P(sum >= {t}) = {}", tail(t));
            assert!(t >= last, "V {v}: {t} < {last}");
            last = t;
        }
        // A class below it is released empty, the others floored cell by cell.
        assert_eq!(floored(&[3, 1, 0, 9, 2, -1], 3, 5, 2), vec![0, 0, 0, 9, 2, 0]);
    }

    #[test]
    fn hay_target_weights_by_inverse_variance() {
        // Equal variances of the coarse count and of the one-class sum: the mean.
        assert_eq!(hay_target(10.0, 2.0, 20.0, 1, 2.0), 15.0);
        // Two classes: the sum has twice the variance, so the coarse count weighs 2/3.
        assert_eq!(hay_target(30.0, 2.0, 0.0, 2, 2.0), 20.0);
        assert_eq!(hay_target(-5.0, 1.0, -5.0, 1, 1.0), 0.0);
    }

    /// Noise that vanished (variance 0 at a huge ε) takes all the weight; two noise-free
    /// measurements are averaged. 1/0 weights gave NaN here, which became a target of 0.
    #[test]
    fn hay_target_with_zero_variance_is_the_exact_measurement() {
        assert_eq!(hay_target(12.0, 0.0, 12.0, 3, 0.0), 12.0);
        assert_eq!(hay_target(12.0, 0.0, 20.0, 3, 1.0), 12.0);
        assert_eq!(hay_target(30.0, 2.0, 9.0, 3, 0.0), 9.0);
        // A variance that underflowed from a huge ε, as the release computes it.
        let vanished = DiscreteLaplace::for_epsilon(5000.0, 1).unwrap().variance();
        assert_eq!(vanished, 0.0);
        assert_eq!(hay_target(8.0, vanished, 8.0, 2, vanished), 8.0);
        assert_eq!(hay_target(8.0, f64::NAN, 7.0, 2, 1.0), 7.0);
    }
}
