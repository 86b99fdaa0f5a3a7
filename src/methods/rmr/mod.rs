//! RmR: (k, k^m)-anonymity of RT-datasets with a bound on the demographics' loss and no utility
//! constraints (Poulis, Loukides, Gkoulalas-Divanis, Skiadopoulos, "Anonymizing data with
//! relational and transaction attributes", ECML PKDD 2013). The ArtUC paper ([`super::artuc`])
//! cites it as [61] and compares against it in Figs. 7–10: "RmR generalizes demographic
//! attributes so the incurred information loss remains lower than a given threshold and performs
//! set-valued generalization to diagnosis codes".
//!
//! [61]'s framework has three steps, and RmR is the variant whose merging looks at the
//! demographics only (R-merge by Relational similarity, "Rmerge_R"):
//! 1. k-anonymize the demographics by clustering: k-record clusters of small NCP, formed
//!    greedily from a seed record;
//! 2. (k, k^m)-anonymize the codes of every cluster;
//! 3. merge clusters while the demographics' loss stays within δ: take the cluster c of least
//!    loss, merge it with the cluster c′ of the most similar demographics, keep the merge if
//!    NCP(D̃) ≤ δ.
//!
//! [61] itself is not among the project's papers; what the ArtUC paper does not fix is chosen
//! here, and each choice is in docs/artuc.md ("RmR"):
//! - step 1 is ArtUC's cluster formation ([`form_group_cancellable`]) over the whole table as one group:
//!   the same greedy k-member clustering by NCP increase, without constraints;
//! - "most similar demographics" is the least increase of NCP(D̃) (the merge that costs δ
//!   least); a cluster whose best merge would exceed δ stops being a seed but may still be
//!   merged into, so RmR, like ArtUC, spends δ ("the NCP scores of ArtUC and RmR were equal");
//! - step 2 is GenDiag ([`gendiag`]) with every code in one code set: with no utility
//!   constraints any codes may be generalized together (set-based generalization, the model
//!   the ArtUC paper says it took from [61]), so GenDiag suppresses only in a cluster whose
//!   records hold one code in all; it runs once on the final clusters, which is what running it
//!   before and after every merge (as [61] describes) publishes;
//! - ε bounds the suppressed codes as in ArtUC (Requirement 4).
//!
//! The result is an [`ArtucResult`], so it is published by [`release`](super::artuc::release)
//! and checked by `verify_release` like ArtUC's.

use super::artuc::formation::form_group_cancellable;
use super::artuc::publish::km_cells;
use super::artuc::{AnonCluster, ArtucResult, Cluster, KmConfig, Measures, RtTable, check_weights, gendiag, release};
use super::artuc::{PICK, WEIGHTS};
use super::contract::{Release, Rows, Value::*, seeded};
use crate::encode::source::Source;
use crate::error::{AnonError, Result};
use crate::methods::options::{Options, SEED};
use crate::progress::Progress;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub(crate) const F: &str = "rmr";

/// `rmr`'s options: ArtUC's cluster formation.
pub(crate) const OPTIONS: Options = Options { function: F, specs: &[SEED, PICK, WEIGHTS] };

/// The parameters of one call: ArtUC's, without utility constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct RmrConfig {
    pub(crate) km: KmConfig,
}

impl RmrConfig {
    pub fn new(k: u64, m: u64, delta: f64, epsilon: u64) -> Self {
        RmrConfig { km: KmConfig::new(k, m, delta, epsilon) }
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(mut self, options: &str) -> Result<Self> {
        self.km.read(F, &OPTIONS.parse(options)?)?;
        Ok(self)
    }

    /// Check the parameters against the table.
    pub(crate) fn validate(&self, table: &RtTable) -> Result<()> {
        let c = &self.km;
        if c.k < 1 || c.k > table.len() as u64 {
            return Err(AnonError::argument(
                F,
                "k",
                format!("must be between 1 and the table's {} records, got {}", table.len(), c.k),
            ));
        }
        if c.m < 1 {
            return Err(AnonError::argument(F, "m", format!("must be at least 1, got {}", c.m)));
        }
        if !(0.0..=1.0).contains(&c.delta) {
            return Err(AnonError::argument(F, "delta", format!("must be in [0, 1], got {}", c.delta)));
        }
        check_weights(F, c.weights.as_deref(), table)
    }
}

/// RmR on a read source, read in its stored order (the result depends on the order of the
/// records): the release and its report.
pub(crate) async fn rmr_release(source: &Source, config: &RmrConfig, progress: &dyn Progress) -> Result<Release> {
    let batches = source.batches_in_order().await?;
    let table = RtTable::from_batches(source.name(), source.meta(), &batches)?;
    let res = rmr(&table, config, progress)?;
    let published = release::release(&table, &res)?;
    let m = &res.measures;
    let mut cells = Vec::from(km_cells(&config.km, m));
    cells.extend([
        ("ul", Float(m.ul)),
        ("ul_gen", Float(m.ul_gen())),
        ("ul_sup", Float(m.ul_sup())),
        ("suppressed_codes", Int(m.suppressed_codes as i64)),
        // Codes outside the hierarchy, dropped before the method ran: counted, never named.
        ("unknown_codes", Int(table.codes.unknown.0 as i64)),
        // Whether the call was seeded, never the seed.
        seeded(config.km.seed),
    ]);
    Ok(Release::timed(Rows::Batches(published.schema, published.batches), cells, None))
}

/// Run RmR. Errors when the clusters formed already exceed δ or more than ε codes are
/// suppressed, saying which limit failed and by how much.
pub fn rmr(table: &RtTable, config: &RmrConfig, progress: &dyn Progress) -> Result<ArtucResult> {
    config.validate(table)?;
    let weights = config.km.weights_for(table);
    let mut rng = config.km.rng();
    let all: Vec<u32> = (0..table.len() as u32).collect();
    progress.begin("rmr: cluster formation", 1);
    let k = config.km.k as usize;
    let formed = form_group_cancellable(table, 0, &all, k, &weights, config.km.pick, &mut rng, progress)?;
    progress.finish();
    let n = table.len() as f64;
    // The same rounding slack as ArtUC's NCP ≤ δ (Σ of n terms summed in another order).
    let limit = config.km.delta + 8.0 * n.max(1.0) * f64::EPSILON;
    let mut merge = RmergeR::new(table, &weights, formed);
    if merge.ncp_sum / n > limit {
        return Err(AnonError::argument(
            F,
            "delta",
            format!(
                "NCP limit failed: the clusters formed have NCP {:.4} > delta = {}; no merge can lower it",
                merge.ncp_sum / n,
                config.km.delta
            ),
        ));
    }
    progress.begin("rmr: cluster merging", merge.alive() as u64);
    while merge.step(limit * n) {
        progress.tick(1)?;
    }
    progress.finish();
    let result = publish(table, config, merge.into_clusters(), &weights, progress)?;
    let s = result.measures.suppressed_codes;
    if s > config.km.epsilon {
        return Err(AnonError::argument(
            F,
            "epsilon",
            format!("suppression limit failed: {s} diagnosis codes suppressed > epsilon = {}", config.km.epsilon),
        ));
    }
    Ok(result)
}

/// Step 3: the clusters, each one's NCP(C) (its Rum), and the seeds not yet retired.
struct RmergeR<'a> {
    table: &'a RtTable,
    weights: &'a [f64],
    clusters: Vec<Option<Cluster>>,
    rum: Vec<f64>,
    /// Seeds by least NCP(C), then least id (NCP(C) ≥ 0, so its bits order as the value).
    seeds: BinaryHeap<Reverse<(u64, usize)>>,
    ncp_sum: f64,
}

impl<'a> RmergeR<'a> {
    fn new(table: &'a RtTable, weights: &'a [f64], formed: Vec<Cluster>) -> Self {
        let rum: Vec<f64> = formed.iter().map(|c| c.ncp(table, weights)).collect();
        let seeds = rum.iter().enumerate().map(|(i, r)| Reverse((r.to_bits(), i))).collect();
        let ncp_sum = rum.iter().sum();
        RmergeR { table, weights, clusters: formed.into_iter().map(Some).collect(), rum, seeds, ncp_sum }
    }

    fn alive(&self) -> usize {
        self.clusters.iter().flatten().count()
    }

    /// The partner of `seed` whose union raises NCP(D̃)·|D| least, and that increase.
    fn partner(&self, seed: usize) -> Option<(usize, f64)> {
        let s = self.clusters[seed].as_ref()?;
        let mut best: Option<(usize, f64)> = None;
        for (j, c) in self.clusters.iter().enumerate() {
            let Some(c) = c.as_ref().filter(|_| j != seed) else { continue };
            let size = (s.records.len() + c.records.len()) as f64;
            let rise = size * s.hull.merged_ncp(self.table, &c.hull, self.weights) - self.rum[seed] - self.rum[j];
            if best.is_none_or(|(_, b)| rise < b) {
                best = Some((j, rise));
            }
        }
        best
    }

    /// Take the next seed and merge it with its partner if NCP(D̃)·|D| stays within `limit`;
    /// a seed that cannot merge is retired. False when no seed is left.
    fn step(&mut self, limit: f64) -> bool {
        while let Some(Reverse((_, seed))) = self.seeds.pop() {
            if self.clusters[seed].is_none() {
                continue; // merged away since it was queued
            }
            let Some((j, rise)) = self.partner(seed) else { return false };
            if self.ncp_sum + rise <= limit {
                let (a, b) = (self.clusters[seed].take().expect("alive"), self.clusters[j].take().expect("alive"));
                let hull = a.hull.merge(self.table, &b.hull);
                let records = a.records.into_iter().chain(b.records).collect();
                let merged = Cluster { group: 0, records, hull };
                let rum = merged.ncp(self.table, self.weights);
                self.ncp_sum += rum - self.rum[seed] - self.rum[j];
                self.seeds.push(Reverse((rum.to_bits(), self.clusters.len())));
                self.clusters.push(Some(merged));
                self.rum.push(rum);
            }
            return true;
        }
        false
    }

    fn into_clusters(self) -> Vec<Cluster> {
        self.clusters.into_iter().flatten().collect()
    }
}

/// Step 2 on the final clusters (every code in one code set) and the release's measures; Ctrl-C
/// is looked at before each cluster's GenDiag run.
fn publish(
    table: &RtTable,
    config: &RmrConfig,
    clusters: Vec<Cluster>,
    weights: &[f64],
    progress: &dyn Progress,
) -> Result<ArtucResult> {
    let one_set = vec![Some(0); table.codes.hierarchy.leaf_count()];
    let (k, m) = (config.km.k as usize, config.km.m as usize);
    let diags = crate::parallel::map_cancellable(&clusters, progress, |c| {
        gendiag(&table.code_sets(&c.records), &one_set, k, m)
    })?;
    let out: Vec<AnonCluster> = clusters
        .into_iter()
        .zip(diags)
        .map(|(c, diag)| AnonCluster { group: 0, records: c.records, hull: c.hull, diag })
        .collect();
    let records = table.len() as u64;
    let ncp_sum: f64 = out.iter().map(|c| c.records.len() as f64 * c.hull.ncp(table, weights)).sum();
    let ul_sum: f64 = out.iter().map(|c| c.diag.ul).sum();
    let measures = Measures {
        records,
        clusters: out.len(),
        ncp: ncp_sum / records as f64,
        ncp_sum,
        ul: ul_sum / records as f64,
        ul_sum,
        suppressed_codes: out.iter().map(|c| c.diag.suppressed_total()).sum(),
        withheld_records: 0,
        withheld_codes: 0,
    };
    Ok(ArtucResult { clusters: out, withheld: Vec::new(), measures, evaluations: 0 })
}

#[cfg(test)]
mod contract_tests {
    use super::*;
    use crate::datasets::rt::{RtPreset, rt_dataset};
    use crate::progress::Silent;

    /// The method reads a source built from batches, with no session: its release holds the
    /// records its report counts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_release_without_a_session() {
        let rt = rt_dataset(RtPreset::Ehrd, Some(400), 7).unwrap();
        let source = Source::from_batches("ehrd", rt.batches[0].schema(), rt.batches, rt.meta).unwrap();
        let mut config = RmrConfig::new(5, 2, 0.1, 0);
        config.km.seed = Some(3);
        let release = rmr_release(&source, &config, &Silent).await.unwrap();
        let Rows::Batches(_, batches) = &release.rows else { panic!("RmR builds its release in the client") };
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert!(rows > 0);
        assert!(matches!(release.cell("records"), Some(Int(n)) if *n as usize == rows));
    }
}
