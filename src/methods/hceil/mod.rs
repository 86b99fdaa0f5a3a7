//! `hceil_anonymize`: k-anonymity under an h-ceiling with counterfeit records and a
//! counterfeit catalog (Kim et al., "Utility-preserving anonymization for health data
//! publishing", BMC Med. Inform. Decis. Mak. 17:104, 2017).
//!
//! - h-ceiling (Def. 1): every released record has D(r) ≤ h (Eqs. 1–3, numeric degrees over
//!   the class's published min–max range).
//! - Counterfeit records (Def. 2): a class smaller than k is padded to k with records that
//!   copy its quasi-identifiers and carry a drawn sensitive value ([`counterfeit`]).
//! - Catalog (Def. 3): per group of classes and sensitive value, how many records are
//!   counterfeit; groups are built so that Lemma 1 conceals every counterfeit (Algorithm 2).
//! - Algorithm 1 ([`search`]): the node of the h-ceiled lattice with the least RCE (or another
//!   [`Objective`]); without h, every node is a candidate and the chosen node's largest D(r) is
//!   the h reported. An optional suppression limit removes the smallest classes below k
//!   instead of padding them ([`score::suppressed`]).
//!
//! The search runs on the frequency table with per-class sensitive histograms; the release is
//! built from the chosen node's classes ([`release`]).

pub(crate) mod counterfeit;
pub(crate) mod release;
pub(crate) mod score;
pub mod search;
pub(crate) mod truthful;

pub use counterfeit::{NodeCatalog, ValueDraw};
pub use score::Objective;

use crate::dp::ledger::shown;
use crate::encode::publish::Source;
use crate::encode::source;
use crate::encode::{FrequencyTable, NodeCache};
use crate::error::{AnonError, Result};
use crate::lattice::format_levels;
use crate::methods::PassTimes;
use crate::methods::contract::{NOT_FOR_PUBLICATION, Release, Rows, Side, Value, seeded};
use crate::methods::options::{DIAGNOSTICS, Kind, Options, SEED, opt};
use crate::progress::Progress;
use search::{Params, Scored, Stats};
use std::time::Instant;

const F: &str = "hceil_anonymize";

/// `hceil_anonymize`'s options.
pub(crate) const OPTIONS: Options = Options {
    function: F,
    specs: &[
        SEED,
        opt(
            "counterfeit_values",
            Kind::Choice(&["concealable", "domain"]),
            "concealable",
            "the sensitive values a counterfeit draws from: those its class can conceal, or the whole domain (the paper)",
        )
        .alias(&["values"]),
        opt(
            "max_counterfeits",
            Kind::Percent { none: true },
            "10%",
            "most counterfeit records, in percent of the table; none lifts the limit (the paper)",
        ),
        opt("suppression", Kind::Percent { none: false }, "0%", "most suppressed records, in percent of the table")
            .alias(&["suppression_limit"]),
        opt(
            "objective",
            Kind::Choice(&["rce", "charged", "fewest"]),
            "rce",
            "what the search minimizes: RCE (the paper), RCE charged for counterfeits, or fewest counterfeits",
        ),
        DIAGNOSTICS,
        opt(
            "search",
            Kind::Choice(&["bounded", "exhaustive"]),
            "bounded",
            "stop at the bound, or evaluate every candidate node",
        ),
    ],
};

/// Default limit on counterfeit records, in percent of the table. Eq. 4 with the catalog's
/// weights (Fig. 4) charges a counterfeit little: left alone, the least-RCE node on Adult
/// (k = 5, h = 0.3) is the ungeneralized table padded with 36,353 counterfeits for 30,162
/// real records. The limit plays the part ARX's suppression limit plays for k-anonymity, and
/// its value is arbitrary (9% already releases every setting of the paper's Adult experiments;
/// Table 1's toy example needs 15%). `objective=charged` needs no limit
/// (docs/hceil.md, "The objective"); `max_counterfeits=none` lifts it.
pub(crate) const DEFAULT_MAX_COUNTERFEITS_PERCENT: f64 = 10.0;

/// The parameters of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct HceilConfig {
    pub(crate) k: u64,
    /// The ceiling; `None` searches every node for the RCE-minimal h.
    pub(crate) h: Option<f64>,
    pub(crate) draw: ValueDraw,
    /// `None` draws from OS entropy.
    pub(crate) seed: Option<u64>,
    /// Most counterfeit records, in percent of the table; `None` for no limit (the paper).
    /// Defaults to [`DEFAULT_MAX_COUNTERFEITS_PERCENT`].
    max_counterfeits_percent: Option<f64>,
    /// Most suppressed records, in percent of the table (default 0: none).
    pub(crate) suppression_percent: f64,
    /// What the search minimizes (default [`Objective::Rce`], the paper's).
    pub(crate) objective: Objective,
    /// Register `output_diagnostics` (exact numbers of the original; not for publication).
    pub(crate) diagnostics: bool,
    /// Evaluate every candidate instead of stopping at the bound.
    exhaustive: bool,
}

impl HceilConfig {
    pub fn new(k: u64, h: Option<f64>) -> Self {
        HceilConfig {
            k,
            h,
            draw: ValueDraw::Concealable,
            seed: None,
            max_counterfeits_percent: Some(DEFAULT_MAX_COUNTERFEITS_PERCENT),
            suppression_percent: 0.0,
            objective: Objective::Rce,
            diagnostics: false,
            exhaustive: false,
        }
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(mut self, options: &str) -> Result<Self> {
        let o = OPTIONS.parse(options)?;
        self.seed = o.seed().or(self.seed);
        self.draw = o.choice("counterfeit_values", ValueDraw::parse)?.unwrap_or(self.draw);
        self.max_counterfeits_percent = o.percent("max_counterfeits").unwrap_or(self.max_counterfeits_percent);
        self.suppression_percent = o.percent("suppression").flatten().unwrap_or(self.suppression_percent);
        self.objective = o.choice("objective", Objective::parse)?.unwrap_or(self.objective);
        self.diagnostics = o.flag("diagnostics").unwrap_or(self.diagnostics);
        let search = |s: &str| crate::keyword::parse(&[(true, &["exhaustive"]), (false, &["bounded"])], s);
        self.exhaustive = o.choice("search", search)?.unwrap_or(self.exhaustive);
        Ok(self)
    }

    /// Check the parameters against the table: its size and its sensitive values.
    pub(crate) fn validate(&self, records: u64, sensitive_values: usize) -> Result<()> {
        if self.k < 2 {
            return Err(AnonError::argument(F, "k", format!("must be at least 2, got {}", self.k)));
        }
        if let Some(h) = self.h
            && !(h > 0.0 && h <= 1.0)
        {
            return Err(AnonError::argument(F, "h", format!("must be in (0, 1], got {}", shown(h))));
        }
        crate::methods::check_k_fits(F, self.k, records)?;
        if sensitive_values < 2 {
            return Err(AnonError::argument(
                F,
                "source",
                format!(
                    "the sensitive attribute has {sensitive_values} distinct value(s); counterfeits cannot be concealed \
                     without at least two"
                ),
            ));
        }
        if let Some(p) = self.max_counterfeits_percent
            && !(0.0..=100.0).contains(&p)
        {
            // A percentage of the table's records; more than all of them is no limit at all.
            return Err(AnonError::argument(
                F,
                "max_counterfeits",
                format!("must be a percentage in [0, 100] ('none' lifts the limit), got {p}"),
            ));
        }
        if !(0.0..=100.0).contains(&self.suppression_percent) {
            return Err(AnonError::argument(
                F,
                "suppression",
                format!("must be a percentage in [0, 100], got {}", shown(self.suppression_percent)),
            ));
        }
        Ok(())
    }

    /// The suppression limit in records, rounded down as `kanon_anonymize` rounds it.
    pub(crate) fn suppression_budget(&self, records: u64) -> u64 {
        let kanon = crate::methods::kanon::KanonConfig {
            suppression_percent: self.suppression_percent,
            ..crate::methods::kanon::KanonConfig::new(self.k)
        };
        kanon.budget(records)
    }

    fn params(&self, records: u64, seed: u64) -> Params {
        Params {
            k: self.k,
            ceiling: self.h.unwrap_or(1.0),
            draw: self.draw,
            seed,
            max_counterfeits: self.max_counterfeits_percent.map(|p| (p / 100.0 * records as f64).floor() as u64),
            suppression: self.suppression_budget(records),
            objective: self.objective,
            exhaustive: self.exhaustive,
        }
    }
}

/// The chosen node, its catalog and what it costs.
#[derive(Debug, Clone)]
pub struct HceilResult {
    levels: Vec<u8>,
    /// The ceiling applied, or for a search without h the chosen node's largest D(r).
    pub(crate) h: f64,
    /// The chosen node with its counterfeits, catalog and costs. Its objective value and
    /// suppressed records are not publishable: the release does not show how many records
    /// the source had.
    pub(crate) best: Scored,
    /// Rows of the release: genuine records kept plus counterfeits.
    published_records: u64,
    pub(crate) stats: Stats,
    /// Filled by [`anonymize`] (aggregation and search; the caller times the materialization).
    pub(crate) passes: PassTimes,
}

impl HceilResult {
    /// The chosen node's RCE.
    pub fn rce(&self) -> f64 {
        self.best.rce
    }

    pub(crate) fn node(&self) -> String {
        format_levels(&self.levels)
    }

    /// What the search touched, as the report counts it: nodes grouped within the ceiling,
    /// evaluated and rejected (for benchmarks, which print it beside their times).
    pub fn nodes_touched(&self) -> (usize, usize, usize) {
        (self.stats.candidates, self.stats.evaluated, self.stats.rejected)
    }

    /// A mean loss over the published records, with every suppressed record counted as a
    /// record losing 1 (as `kanon_anonymize` and `anon_metrics` count a suppressed record).
    pub(crate) fn counting_suppressed(&self, lm: f64) -> f64 {
        let (p, s) = (self.published_records as f64, self.best.suppressed_records as f64);
        (lm * p + s) / (p + s).max(1.0)
    }
}

/// Search a frequency table (with its sensitive column). Errors when no node of the pruned
/// lattice can be released.
pub fn search(ft: &FrequencyTable, config: &HceilConfig, progress: &dyn Progress) -> Result<HceilResult> {
    let values = ft.sensitive.as_ref().map_or(0, |s| s.values.len());
    config.validate(ft.total(), values)?;
    let seed = config.seed.unwrap_or_else(os_seed);
    let params = config.params(ft.total(), seed);
    let mut nodes = NodeCache::new(ft, true)?;
    let (best, stats) = search::run(&mut nodes, &params, progress)?;
    if stats.candidates == 0 {
        return Err(AnonError::argument(
            F,
            "h",
            format!("no generalization keeps every record within h = {}; raise h", shown(params.ceiling)),
        ));
    }
    let best = best.ok_or_else(|| {
        AnonError::argument(
            F,
            "h",
            format!(
                "none of the {} nodes within h = {} has a catalog that conceals its counterfeits{} raise h",
                stats.candidates,
                shown(params.ceiling),
                match config.max_counterfeits_percent {
                    Some(p) => format!(
                        " with at most {}% counterfeit records{}; raise max_counterfeits or",
                        shown(p),
                        if config.suppression_percent > 0.0 { " after suppression" } else { "" }
                    ),
                    None => ";".into(),
                }
            ),
        )
    })?;
    let levels = nodes.lattice.levels(best.node);
    let published_records = ft.total() - best.suppressed_records + best.catalog.total;
    let result = HceilResult {
        levels,
        h: config.h.unwrap_or(best.max_degree),
        best,
        published_records,
        stats,
        passes: PassTimes::default(),
    };
    Ok(result)
}

/// A seed from OS entropy: a release must not be predictable without one.
fn os_seed() -> u64 {
    use rand::RngExt;
    rand::make_rng::<rand::rngs::StdRng>().random()
}

/// Anonymize a declared source: aggregate, search, prepare the release as class cells and
/// build the catalog. The adapter builds the release's rows, in the client or by a plan.
pub(crate) async fn anonymize(
    source: &source::Source,
    config: &HceilConfig,
    progress: &dyn Progress,
) -> Result<Release> {
    let start = Instant::now();
    let src = Source::of(source).await?;
    let aggregate_ms = PassTimes::since(start);
    let start = Instant::now();
    let mut res = search(&src.ft, config, progress)?;
    res.passes = PassTimes { aggregate_ms, search_ms: PassTimes::since(start), materialize_ms: 0.0 };
    let cached = res.best.grouping.clone();
    let ids = release::class_ids(&cached, &res.best.suppressed);
    let values = &src.sensitive_column()?.values;
    let (cells, catalog) = crate::parallel::join(
        || release::release(&src, &cached, &res.best.catalog, &ids),
        || release::catalog_batch(&res.best.catalog, &ids, values, src.sensitive),
    );
    let (cells, catalog) = (cells?, catalog?);
    let dropped = crate::release::dropped_list(&cells.dropped);
    let mut out = Release::timed(Rows::Classes(cells), report(&res, config, dropped), Some(res.passes))
        .with("catalog", Side::Rows(catalog.schema(), vec![catalog]));
    if config.diagnostics {
        out = out.with("diagnostics", Side::Row(diagnostics(&res)));
    }
    Ok(out)
}

/// The report's cells.
fn report(res: &HceilResult, config: &HceilConfig, dropped: Option<String>) -> Vec<(&'static str, Value)> {
    use Value::*;
    vec![
        ("node", Text(res.node())),
        ("k", Int(config.k as i64)),
        ("h", Float(res.h)),
        ("h_searched", Text(if config.h.is_none() { "yes" } else { "no" }.into())),
        ("max_degree", Float(res.best.max_degree)),
        ("counterfeit_records", Int(res.best.catalog.total as i64)),
        ("catalog_rows", Int(res.best.catalog.entries.len() as i64)),
        ("lm", Float(res.best.lm)),
        ("lm_intervals", Float(res.best.lm_intervals)),
        ("rce", Float(res.best.rce)),
        ("classes", Int(res.best.classes as i64)),
        ("counterfeit_values", Text(config.draw.name().into())),
        ("objective", Text(config.objective.name().into())),
        // The limit, never the count: how many records were suppressed needs the
        // source's size, which the release does not show (output_diagnostics has it).
        ("suppression_limit_percent", Float(config.suppression_percent)),
        seeded(config.seed),
        ("nodes_total", Int(res.stats.nodes_total as i64)),
        ("candidate_nodes", Int(res.stats.candidates as i64)),
        ("nodes_evaluated", Int(res.stats.evaluated as i64)),
        ("nodes_rejected", Int(res.stats.rejected as i64)),
        ("dropped_columns", OptText(dropped)),
    ]
}

/// Exact numbers of the original the release does not show: opt-in, never for publication.
fn diagnostics(res: &HceilResult) -> Vec<(&'static str, Value)> {
    use Value::*;
    vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("suppressed_records", Int(res.best.suppressed_records as i64)),
        ("suppressed_classes", Int(res.best.suppressed.iter().filter(|&&s| s).count() as i64)),
        ("objective_value", Float(res.best.key.0)),
        ("objective_tiebreak", Float(res.best.key.1)),
        ("lm_with_suppressed", Float(res.counting_suppressed(res.best.lm))),
        ("lm_intervals_with_suppressed", Float(res.counting_suppressed(res.best.lm_intervals))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Silent;
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::UInt64Type;
    use std::collections::HashMap;

    /// The method reads a source built from batches, with no session: its release is every
    /// source record plus the counterfeits the report counts, in classes of at least k, with the
    /// catalog beside it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_release_and_catalog_without_a_session() {
        let source = crate::methods::contract::testing::nps();
        let config = HceilConfig::new(10, Some(0.3)).with_seed(1);
        let release = anonymize(&source, &config, &Silent).await.unwrap();
        let Some(Value::Int(counterfeits)) = release.cell("counterfeit_records") else { panic!("no count") };
        let Rows::Classes(cells) = &release.rows else { panic!("hceil builds its release from classes") };
        let mut classes: HashMap<u64, usize> = HashMap::new();
        let order: Vec<u32> = (0..cells.rows() as u32).collect();
        let b = cells.batch_in(&order).unwrap();
        let ids = datafusion::arrow::compute::cast(
            b.column_by_name("class_id").unwrap(),
            &datafusion::arrow::datatypes::DataType::UInt64,
        )
        .unwrap();
        for id in ids.as_primitive::<UInt64Type>().iter().flatten() {
            *classes.entry(id).or_default() += 1;
        }
        // Built in any order, the rows are those of the cells' order, permuted.
        let reversed: Vec<u32> = order.iter().rev().copied().collect();
        let expected = datafusion::arrow::compute::take_record_batch(
            &b,
            &datafusion::arrow::array::UInt32Array::from(reversed.clone()),
        )
        .unwrap();
        assert_eq!(cells.batch_in(&reversed).unwrap(), expected);
        // Drawn with a generator, the rows are those of the order it draws.
        let rng = || <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(9);
        let drawn = crate::encode::shuffle::permutation(cells.rows(), &mut rng());
        assert_eq!(cells.batch_drawn(&mut rng()).unwrap(), cells.batch_in(&drawn).unwrap());
        assert_eq!(classes.values().sum::<usize>() as i64, 7000 + counterfeits);
        assert!(classes.values().all(|&n| n >= 10), "a class under k: {classes:?}");
        assert!(matches!(release.side.iter().find(|(s, _)| *s == "catalog"), Some((_, Side::Rows(..)))));
    }
}
