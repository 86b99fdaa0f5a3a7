//! The three entry points: Algorithm 1 ([`anonymize`]), Algorithm 2 ([`anytime`]) and the
//! paper's Baseline ([`baseline`]), sharing record grouping, cluster formation and the final
//! GenDiag of every cluster.
//!
//! Records of groups smaller than k (Step 2) are withheld from the release when the owner asks
//! for it (`small_groups=withhold`). They are not published, so NCP(D̃) and UL(D̃) are over the
//! published records, and their codes count as suppressed for ε: Requirement 4 bounds the
//! "diagnosis codes [that] have been suppressed to construct D̃", and `anon_metrics` counts
//! them the same way (codes of the original missing from the release).

use super::constraints::{ConstraintSet, Element, Group};
use super::data::RtTable;
use super::formation::{Cluster, form_group_cancellable};
use super::gendiag::{Diag, gendiag};
use super::hull::Hull;
use super::merge::Merger;
use super::{ArtucConfig, F};
use crate::error::{AnonError, Result};
use crate::progress::Progress;
use crate::release::Cell;

/// One published cluster: its records, generalized demographics and anonymized codes.
#[derive(Debug, Clone, PartialEq)]
pub struct AnonCluster {
    pub(crate) group: usize,
    /// Record indices into the table, in the order of `diag.records`.
    pub records: Vec<u32>,
    pub(crate) hull: Hull,
    pub diag: Diag,
}

/// What a release costs (Definitions 4 and 6, over the published records).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measures {
    /// Published records |D̃|.
    pub records: u64,
    pub clusters: usize,
    pub ncp: f64,
    pub ncp_sum: f64,
    pub ul: f64,
    pub ul_sum: f64,
    /// Codes GenDiag suppressed.
    pub suppressed_codes: u64,
    /// Records of groups smaller than k (Step 2) and the codes they held.
    pub(crate) withheld_records: u64,
    pub withheld_codes: u64,
}

impl Measures {
    /// The count bounded by ε: GenDiag's suppressions and the withheld records' codes.
    pub fn total_suppressed(&self) -> u64 {
        self.suppressed_codes + self.withheld_codes
    }

    /// UL's suppression term, Σ s(r) / |D̃| (the paper's UL_sup, Fig. 15b).
    pub(crate) fn ul_sup(&self) -> f64 {
        if self.records == 0 { 0.0 } else { self.suppressed_codes as f64 / self.records as f64 }
    }

    /// UL's generalization term, UL − UL_sup (the paper's UL_gen).
    pub fn ul_gen(&self) -> f64 {
        self.ul - self.ul_sup()
    }
}

/// The anonymized clusters of one call.
#[derive(Debug, Clone)]
pub struct ArtucResult {
    pub clusters: Vec<AnonCluster>,
    /// Records withheld by Step 2.
    pub withheld: Vec<u32>,
    pub measures: Measures,
    /// GenDiag runs made while merging (cost indicator).
    pub evaluations: u64,
}

/// Grouping, Step 2 and cluster formation.
struct Prepared {
    clusters: Vec<Cluster>,
    withheld: Vec<u32>,
}

/// Step 1 and Step 2: the groups, and the records withheld because their group is smaller than k.
fn groups(table: &RtTable, cs: &ConstraintSet, config: &ArtucConfig) -> Result<(Vec<Group>, Vec<u32>)> {
    config.validate(table)?;
    let k = config.km.k as usize;
    let (big, small): (Vec<Group>, Vec<Group>) = cs.group(table)?.into_iter().partition(|g| g.records.len() >= k);
    if let Some(g) = small.first()
        && (!config.withhold_small_groups || big.is_empty())
    {
        let names: Vec<String> = g.constraints.iter().map(|&u| format!("'{}'", cs.names[u])).collect();
        let hint = if big.is_empty() {
            "no group has k records"
        } else {
            "lower k, widen the constraints, or set small_groups=withhold to withhold them (Step 2)"
        };
        return Err(AnonError::argument(
            F,
            "k",
            format!(
                "k = {k} is larger than the group of utility constraint(s) {} ({} records); {} group(s) are \
                 smaller than k: {hint}",
                names.join(", "),
                g.records.len(),
                small.len()
            ),
        ));
    }
    Ok((big, small.into_iter().flat_map(|g| g.records).collect()))
}

fn prepare(table: &RtTable, cs: &ConstraintSet, config: &ArtucConfig, progress: &dyn Progress) -> Result<Prepared> {
    let (groups, withheld) = groups(table, cs, config)?;
    let weights = config.km.weights_for(table);
    let mut rng = config.km.rng();
    progress.begin("artuc: cluster formation", groups.len() as u64);
    let mut clusters = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let k = config.km.k as usize;
        clusters.extend(form_group_cancellable(table, i, &g.records, k, &weights, config.km.pick, &mut rng, progress)?);
        progress.tick(1)?;
    }
    progress.finish();
    Ok(Prepared { clusters, withheld })
}

/// Rounding slack for NCP ≤ δ: Σ NCP(r) adds n terms of at most 1, so summing in another order
/// (as `anon_metrics` does) moves NCP(D) by about n·ε_machine. A release at exactly δ must not
/// fail on that noise; a real excess is at least 1/(n·|A|) per record, far above it.
fn ncp_slack(n: f64) -> f64 {
    8.0 * n.max(1.0) * f64::EPSILON
}

fn published(clusters: &[Cluster]) -> f64 {
    clusters.iter().map(|c| c.records.len()).sum::<usize>() as f64
}

/// Algorithm 1. Errors when the NCP after cluster formation exceeds δ (Step 16) or when more
/// than ε codes are suppressed (Step 26), saying which limit failed and by how much.
pub fn anonymize(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    progress: &dyn Progress,
) -> Result<ArtucResult> {
    config.validate_limits()?;
    let prep = prepare(table, cs, config, progress)?;
    let weights = config.km.weights_for(table);
    let n = published(&prep.clusters);
    let (k, m) = (config.km.k as usize, config.km.m as usize);
    let mut merger = Merger::new(table, cs.set_of_code(), (k, m), &weights, prep.clusters).cancellable(progress);
    let ncp = merger.ncp_sum() / n;
    let limit = config.km.delta + ncp_slack(n);
    if ncp > limit {
        return Err(AnonError::argument(
            F,
            "delta",
            format!(
                "NCP limit failed: the clusters formed have NCP {ncp:.4} > delta = {} (by {:.4}); \
                 no merge can lower it (Step 16)",
                config.km.delta,
                ncp - config.km.delta
            ),
        ));
    }
    merger.merge_identical()?;
    progress.begin("artuc: cluster merging", merger.len() as u64);
    while let Some((a, b)) = merger.select(&|sum| sum / n <= limit)? {
        merger.apply(a, b)?;
        progress.tick(1)?;
    }
    progress.finish();
    let evaluations = merger.evaluations;
    let result = finish_with(table, cs, config, merger.into_clusters(), prep.withheld, evaluations, progress)?;
    check_epsilon(&result, config)?;
    Ok(result)
}

fn check_epsilon(result: &ArtucResult, config: &ArtucConfig) -> Result<()> {
    let s = result.measures.total_suppressed();
    if s > config.km.epsilon {
        let withheld = match result.measures.withheld_codes {
            0 => String::new(),
            w => format!(", {w} of them held by withheld records"),
        };
        return Err(AnonError::argument(
            F,
            "epsilon",
            format!(
                "suppression limit failed: {s} diagnosis codes suppressed > epsilon = {} (by {}){withheld} (Step 26)",
                config.km.epsilon,
                s - config.km.epsilon
            ),
        ));
    }
    Ok(())
}

/// Steps 23–25: GenDiag on every cluster, and the release's measures.
fn finish(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    clusters: Vec<Cluster>,
    withheld: Vec<u32>,
    progress: &dyn Progress,
) -> Result<ArtucResult> {
    let clusters = clusters.into_iter().map(|c| (c, None)).collect();
    finish_with(table, cs, config, clusters, withheld, 0, progress)
}

/// [`finish`] for clusters of which some come with their GenDiag run already made (merging
/// scored them by the same deterministic run on the same records in the same order), so
/// GenDiag runs only on the others. Ctrl-C (`progress`) stops it before the next run.
fn finish_with(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    clusters: Vec<(Cluster, Option<Diag>)>,
    withheld: Vec<u32>,
    evaluations: u64,
    progress: &dyn Progress,
) -> Result<ArtucResult> {
    let weights = config.km.weights_for(table);
    let (k, m) = (config.km.k as usize, config.km.m as usize);
    let missing: Vec<&Cluster> = clusters.iter().filter(|(_, d)| d.is_none()).map(|(c, _)| c).collect();
    let mut ran = crate::parallel::map_cancellable(&missing, progress, |c| {
        gendiag(&table.code_sets(&c.records), cs.set_of_code(), k, m)
    })?
    .into_iter();
    let out: Vec<AnonCluster> = clusters
        .into_iter()
        .map(|(c, kept)| {
            let diag = kept.or_else(|| ran.next()).expect("a run per cluster without one");
            AnonCluster { group: c.group, records: c.records, hull: c.hull, diag }
        })
        .collect();
    let records: u64 = out.iter().map(|c| c.records.len() as u64).sum();
    let ncp_sum: f64 = out.iter().map(|c| c.records.len() as f64 * c.hull.ncp(table, &weights)).sum();
    let ul_sum: f64 = out.iter().map(|c| c.diag.ul).sum();
    let per = |x: f64| if records == 0 { 0.0 } else { x / records as f64 };
    let measures = Measures {
        records,
        clusters: out.len(),
        ncp: per(ncp_sum),
        ncp_sum,
        ul: per(ul_sum),
        ul_sum,
        suppressed_codes: out.iter().map(|c| c.diag.suppressed_total()).sum(),
        withheld_records: withheld.len() as u64,
        withheld_codes: withheld.iter().map(|&r| table.codes.records[r as usize].len() as u64).sum(),
    };
    Ok(ArtucResult { clusters: out, withheld, measures, evaluations })
}

/// One state of Algorithm 2's merge trajectory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The cluster ids merged to reach this step (None for the first state).
    merged: Option<(usize, usize)>,
    pub(crate) clusters: usize,
    pub ncp: f64,
    pub ul: f64,
    /// Suppressed codes, withheld records' codes included (the count ε bounds).
    pub suppressed_codes: u64,
}

/// Algorithm 2's trajectory: every merge in order, with the release's measures after it.
#[derive(Debug, Clone)]
pub struct Trajectory {
    pub steps: Vec<Step>,
    config: ArtucConfig,
    initial: Vec<Cluster>,
    /// Every merge, Step 6's merges of identical clusters first.
    merges: Vec<(usize, usize)>,
    /// Merges made before `steps[0]` (Step 6).
    offset: usize,
    withheld: Vec<u32>,
}

impl Trajectory {
    /// The data owner's choice of Algorithm 2 with fixed thresholds: merge while the NCP is
    /// acceptable (Step 14), then return the last acceptable state if its suppressions are
    /// acceptable (Steps 17–18), or None ("return false").
    pub fn choose(&self, max_ncp: f64, max_suppressed: u64) -> Option<usize> {
        let last = self.steps.iter().take_while(|s| s.ncp <= max_ncp).count().checked_sub(1)?;
        (self.steps[last].suppressed_codes <= max_suppressed).then_some(last)
    }

    /// Publish step `step` (an index into `steps`).
    pub fn release(&self, table: &RtTable, cs: &ConstraintSet, step: usize) -> Result<ArtucResult> {
        self.release_cancellable(table, cs, step, &crate::progress::Silent)
    }

    /// [`Trajectory::release`], stopped by Ctrl-C (`progress`) between GenDiag runs.
    pub(crate) fn release_cancellable(
        &self,
        table: &RtTable,
        cs: &ConstraintSet,
        step: usize,
        progress: &dyn Progress,
    ) -> Result<ArtucResult> {
        if step >= self.steps.len() {
            return Err(AnonError::argument(
                F,
                "step",
                format!("the trajectory has steps 0..{}, got {step}", self.steps.len().saturating_sub(1)),
            ));
        }
        let mut nodes: Vec<Option<Cluster>> = self.initial.iter().cloned().map(Some).collect();
        for &(a, b) in &self.merges[..self.offset + step] {
            let (x, y) = (nodes[a].take(), nodes[b].take());
            let (Some(x), Some(y)) = (x, y) else {
                return Err(AnonError::argument(F, "step", "internal: the trajectory replays a retired cluster"));
            };
            let hull = x.hull.merge(table, &y.hull);
            let records = x.records.iter().chain(&y.records).copied().collect();
            nodes.push(Some(Cluster { group: x.group, records, hull }));
        }
        let clusters = nodes.into_iter().flatten().collect();
        finish(table, cs, &self.config, clusters, self.withheld.clone(), progress)
    }
}

/// Algorithm 2 without a human in the loop: merges by UL (Steps 8–9, no δ) while the NCP stays
/// within `max_ncp` (1.0: until every group is one cluster), recording every state. δ and ε
/// of `config` are not used; pick a state with [`Trajectory::choose`] or by hand.
pub fn anytime(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    max_ncp: f64,
    progress: &dyn Progress,
) -> Result<Trajectory> {
    let prep = prepare(table, cs, config, progress)?;
    let weights = config.km.weights_for(table);
    let n = published(&prep.clusters);
    let withheld_codes: u64 = prep.withheld.iter().map(|&r| table.codes.records[r as usize].len() as u64).sum();
    let initial = prep.clusters.clone();
    let (k, m) = (config.km.k as usize, config.km.m as usize);
    let mut merger = Merger::new(table, cs.set_of_code(), (k, m), &weights, prep.clusters).cancellable(progress);
    let mut merges = merger.merge_identical()?;
    let offset = merges.len();
    let state = |mg: &Merger, merged| Step {
        merged,
        clusters: mg.len(),
        ncp: mg.ncp_sum() / n,
        ul: mg.ul_sum() / n,
        suppressed_codes: mg.suppressed() + withheld_codes,
    };
    let mut steps = vec![state(&merger, None)];
    progress.begin("artuc: any-time merging", merger.len() as u64);
    while let Some((a, b)) = merger.select(&|_| true)? {
        if merger.ncp_sum_after(a, b) / n > max_ncp {
            break;
        }
        merger.apply(a, b)?;
        merges.push((a, b));
        steps.push(state(&merger, Some((a, b))));
        progress.tick(1)?;
    }
    progress.finish();
    Ok(Trajectory { steps, config: config.clone(), initial, merges, offset, withheld: prep.withheld })
}

/// The paper's Baseline: every group is one cluster whose demographics are pre-generalized to
/// its constraint's elements, then GenDiag (Steps 24–26). δ does not apply ("Baseline is not
/// affected by δ"); ε does (Step 26).
pub fn baseline(
    table: &RtTable,
    cs: &ConstraintSet,
    config: &ArtucConfig,
    progress: &dyn Progress,
) -> Result<ArtucResult> {
    let (groups, withheld) = groups(table, cs, config)?;
    progress.begin("artuc: baseline", groups.len() as u64);
    let clusters: Vec<Cluster> = groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            let cells = cs.elements[g.constraints[0]].iter().map(|e| element_cell(*e)).collect();
            Cluster { group: i, records: g.records, hull: Hull(cells) }
        })
        .collect();
    let result = finish(table, cs, config, clusters, withheld, progress)?;
    progress.finish();
    check_epsilon(&result, config)?;
    Ok(result)
}

fn element_cell(e: Element) -> Cell {
    match e {
        Element::Range(lo, hi) => Cell::Range { lo, hi },
        Element::Node(level, code) => Cell::Node { level: level as u8, code },
    }
}
