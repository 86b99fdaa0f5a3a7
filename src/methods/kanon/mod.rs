//! `kanon_anonymize`: the baseline every paper compares against. Full-domain generalization
//! (Samarati 2001; LeFevre et al. 2005) over the lattice of the declared hierarchies, globally
//! optimal for LM (default), NCP or DM, with an optional record-suppression limit and the
//! privacy models k-anonymity, distinct / entropy / recursive-(c,l)-diversity and t-closeness,
//! combinable.
//!
//! The search runs on the frequency table (see [`search`]); the release is built from the
//! frequency table as class cells ([`cells`]) when it holds every published column and the
//! rows are in this process, else materialized by one DataFusion plan over the source.

mod cells;
mod iterative;
mod judge;
pub(crate) mod kmap;
pub mod local;
pub(crate) mod loss;
pub(crate) mod models;
mod mondrian;
pub mod search;

pub use loss::Metric;
pub(crate) use models::Models;

use crate::encode::source::Source;
use crate::encode::{
    FrequencyTable, cached_frequency_table_of, check_sensitive_not_null, dropped_columns, materialize_suppressed,
    node_label,
};
use crate::error::{AnonError, Result};
use crate::lattice::format_levels;
use crate::methods::PassTimes;
use crate::methods::contract::{Release, Rows, Value};
use crate::methods::options::{Kind, Options, opt};
use crate::progress::{Progress, Silent};
use search::{Evaluation, Evaluator, SearchOptions, Strategy};
use std::sync::Arc;
use std::time::Instant;

/// `kanon_anonymize`'s options.
pub(crate) const OPTIONS: Options = Options {
    function: F,
    specs: &[
        opt("metric", Kind::Choice(&["lm", "ncp", "dm"]), "lm", "the information loss the search minimizes"),
        opt("suppression", Kind::Percent { none: false }, "0%", "most suppressed records, in percent of the table")
            .alias(&["suppression_limit"]),
        opt("distinct_l", Kind::Int { min: 1, max: u64::MAX }, "", "every class distinct l-diverse too").alias(&["l"]),
        opt("entropy_l", Kind::Float { min: 1.0, max: f64::INFINITY }, "", "every class entropy l-diverse too"),
        opt("recursive_cl", Kind::Text("c:l"), "", "every class recursive (c,l)-diverse too (c > 0, l >= 1)"),
        opt("t", Kind::Float { min: 0.0, max: 1.0 }, "", "every class t-close too (EMD)").alias(&["t_closeness"]),
        opt(
            "k_map",
            Kind::Int { min: 1, max: u64::MAX },
            "",
            "every class stands for at least this many people of the population",
        )
        .alias(&["kmap"]),
        opt(
            "population",
            Kind::Int { min: 1, max: u64::MAX },
            "",
            "k_map: the size of the population the table was sampled from",
        ),
        opt("fraction", Kind::Float { min: 0.0, max: 1.0 }, "", "k_map: the sampling fraction, instead of population="),
        opt("significance", Kind::Float { min: 0.0, max: 1.0 }, "0.01", "k_map: the estimator's significance level"),
        opt(
            "estimator",
            Kind::Choice(&["zt_poisson", "poisson"]),
            "zt_poisson",
            "k_map: the population class-size estimator",
        ),
        opt(
            "keep_insensitive",
            Kind::Flag,
            "false",
            "publish the columns declared insensitive too, not only the quasi-identifiers and the sensitive attribute",
        ),
        opt(
            "search",
            Kind::Choice(&["auto", "optimal", "heuristic"]),
            "auto",
            "optimal search, heuristic, or heuristic above max_nodes nodes",
        ),
        opt(
            "max_nodes",
            Kind::Int { min: 0, max: u64::MAX },
            "100000",
            "largest lattice search=auto searches optimally",
        ),
        opt("max_checks", Kind::Int { min: 1, max: u64::MAX }, "", "the heuristic's budget in node checks"),
        opt(
            "local",
            Kind::Choice(&["none", "suppression", "recoding", "iterative"]),
            "none",
            "local k-anonymity: suppress single cells (within suppression=) or recode classes to their own levels",
        ),
        opt(
            "importance",
            Kind::List,
            "",
            "quasi-identifiers from most to least important: local methods coarsen or star the least important first",
        ),
        // Replaced: a wall-clock budget made the release depend on the machine's load. Refused
        // rather than converted, since no rate of checks per millisecond holds on every machine.
        opt(
            "time_budget_ms",
            Kind::Removed(
                "was replaced by max_checks, a budget in node checks, so that a release does not depend \
                 on the machine's speed or load (the heuristic's default is enough for about a second \
                 on an idle machine; search=optimal has no limit)",
            ),
            "",
            "",
        ),
    ],
};

const F: &str = "kanon_anonymize";

/// `recursive_cl=c:l`.
fn recursive_cl(value: &str) -> Result<(f64, u64)> {
    let bad = || AnonError::argument(F, "recursive_cl", "must be of the form c:l (a number c > 0, an integer l >= 1)");
    let (c, l) = value.split_once(':').ok_or_else(bad)?;
    let c = c.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(bad)?;
    Ok((c, l.trim().parse::<u64>().map_err(|_| bad())?))
}

/// `k_map=K` with `population=N` or `fraction=f`, and optionally `significance=` and
/// `estimator=`; the population options without `k_map` are an error, not ignored.
fn k_map(o: &crate::methods::options::Parsed, old: Option<kmap::KMap>) -> Result<Option<kmap::KMap>> {
    let population = match (o.int("population"), o.float("fraction")) {
        (Some(_), Some(_)) => {
            return Err(AnonError::argument(F, "fraction", "give population= or fraction=, not both"));
        }
        (Some(n), None) => Some(kmap::Population::Size(n)),
        (None, Some(f)) => Some(kmap::Population::Fraction(f)),
        (None, None) => None,
    };
    let estimator = o.choice("estimator", kmap::Estimator::parse)?;
    let significance = o.float("significance");
    let Some(k) = o.int("k_map") else {
        if old.is_none() && (population.is_some() || estimator.is_some() || significance.is_some()) {
            return Err(AnonError::argument(
                F,
                "k_map",
                "population=, fraction=, significance= and estimator= belong to k_map=K: give k_map too",
            ));
        }
        return Ok(old);
    };
    let population =
        population.ok_or_else(|| AnonError::argument(F, "population", "k_map needs population=N or fraction=f"))?;
    Ok(Some(kmap::KMap {
        k,
        population,
        significance: significance.unwrap_or(kmap::SIGNIFICANCE),
        estimator: estimator.unwrap_or(kmap::Estimator::ZtPoisson),
        threshold: None,
    }))
}

/// A count option as a `usize` (a larger one is no limit anyway).
fn saturating(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// What to optimize and what to guarantee.
#[derive(Debug, Clone, PartialEq)]
pub struct KanonConfig {
    pub models: Models,
    pub metric: Metric,
    /// Most records that may be suppressed, in percent of the table.
    pub suppression_percent: f64,
    /// Publish the columns declared insensitive too (`keep_insensitive=true`); by default a
    /// release holds only the quasi-identifiers and the sensitive attribute.
    pub(crate) keep_insensitive: bool,
    /// Optimal or heuristic search, and the work budget.
    pub search: SearchOptions,
    /// Local suppression or local recoding ([`local`]).
    pub local: local::LocalOptions,
}

impl KanonConfig {
    pub fn new(k: u64) -> Self {
        KanonConfig {
            models: Models::k_only(k),
            metric: Metric::Lm,
            suppression_percent: 0.0,
            keep_insensitive: false,
            search: SearchOptions::default(),
            local: local::LocalOptions::default(),
        }
    }

    /// Parse the options [`OPTIONS`] declares.
    pub fn with_options(mut self, options: &str) -> Result<Self> {
        let o = OPTIONS.parse(options)?;
        self.metric = o.choice("metric", Metric::parse)?.unwrap_or(self.metric);
        self.suppression_percent = o.percent("suppression").flatten().unwrap_or(self.suppression_percent);
        self.models.distinct_l = o.int("distinct_l").or(self.models.distinct_l);
        self.models.entropy_l = o.float("entropy_l").or(self.models.entropy_l);
        if let Some(value) = o.text("recursive_cl") {
            self.models.recursive_cl = Some(recursive_cl(value)?);
        }
        self.models.t = o.float("t").or(self.models.t);
        self.models.k_map = k_map(&o, self.models.k_map.take())?;
        self.keep_insensitive = o.flag("keep_insensitive").unwrap_or(self.keep_insensitive);
        self.search.strategy = o.choice("search", Strategy::parse)?.unwrap_or(self.search.strategy);
        self.search.max_nodes = o.int("max_nodes").map_or(self.search.max_nodes, saturating);
        self.search.max_checks = o.int("max_checks").map(saturating).or(self.search.max_checks);
        if let Some(mode) = o.choice("local", |v| local::LocalMode::parse(v).ok())? {
            self.local.mode = mode;
        }
        if let Some(importance) = o.list("importance") {
            self.local.importance = importance;
        }
        Ok(self)
    }

    pub(crate) fn validate(&self, records: u64) -> Result<()> {
        self.models.validate("kanon_anonymize")?;
        if let Some(m) = &self.models.k_map {
            m.validate("kanon_anonymize", records)?;
        }
        if !(0.0..=100.0).contains(&self.suppression_percent) {
            return Err(AnonError::argument(
                "kanon_anonymize",
                "suppression",
                format!("must be a percentage in [0, 100], got {}", crate::dp::ledger::shown(self.suppression_percent)),
            ));
        }
        crate::methods::check_k_fits("kanon_anonymize", self.models.k, records)?;
        Ok(())
    }

    /// The suppression limit in records.
    pub fn budget(&self, records: u64) -> u64 {
        (self.suppression_percent / 100.0 * records as f64).floor() as u64
    }
}

/// The chosen node and what it costs.
#[derive(Debug, Clone)]
pub struct KanonResult {
    pub levels: Vec<u8>,
    pub loss: f64,
    pub suppressed_records: u64,
    /// Labels of the suppressed classes, one per quasi-identifier.
    suppressed_classes: Vec<Vec<String>>,
    pub(crate) classes: usize,
    pub nodes_total: usize,
    pub nodes_evaluated: usize,
    /// The heuristic ran first (the lattice is above `max_nodes`, or it was asked for).
    pub heuristic: bool,
    /// Proven optimal: no node that could beat it was left unchecked.
    pub proven_optimal: bool,
    /// A proven lower bound of the optimal loss; equals `loss` when proven optimal.
    pub loss_lower_bound: f64,
    /// The work budget the search ran under, in node checks (`None`: unlimited).
    pub max_checks: Option<usize>,
    /// Filled by [`anonymize`] (aggregation and search; the caller times the materialization).
    pub(crate) passes: PassTimes,
    /// What a local method suppressed and lost (`local=`); `None` for a full-domain release.
    pub local: Option<local::LocalSummary>,
}

/// Search the lattice of a frequency table. `None` when no node satisfies the models within
/// the suppression limit (possible with l-diversity or t-closeness), or, in heuristic mode,
/// when none was found within the work budget.
pub fn search(ft: &FrequencyTable, config: &KanonConfig) -> Result<Option<KanonResult>> {
    search_cancellable(ft, config, &Silent)
}

/// [`search`], stopped with [`AnonError::Cancelled`] when `progress.cancelled()` (Ctrl-C).
pub(crate) fn search_cancellable(
    ft: &FrequencyTable,
    config: &KanonConfig,
    progress: &dyn Progress,
) -> Result<Option<KanonResult>> {
    config.validate(ft.total())?;
    let models = config.models.for_table(ft.total());
    let mut ev = Evaluator::new(ft, models, config.metric, config.budget(ft.total()))?;
    let out = search::run_cancellable(&mut ev, &config.search, &|| progress.cancelled())?;
    let (heuristic, proven, lower, check_limit) = (out.heuristic, out.proven, out.lower_bound, out.check_limit);
    let Some(best) = out.best else {
        if proven {
            return Ok(None);
        }
        return Err(AnonError::argument(
            "kanon_anonymize",
            "max_checks",
            format!(
                "no generalization satisfying {} was found within the work budget ({} node checks); raise max_checks or use search=optimal",
                config.models.describe(),
                check_limit.unwrap_or(usize::MAX)
            ),
        ));
    };
    let mut res = result(&mut ev, ft, best)?;
    res.heuristic = heuristic;
    res.proven_optimal = proven;
    res.loss_lower_bound = lower.unwrap_or(res.loss).min(res.loss);
    res.max_checks = check_limit;
    Ok(Some(res))
}

fn result(ev: &mut Evaluator, ft: &FrequencyTable, e: Evaluation) -> Result<KanonResult> {
    let levels = ev.lattice.levels(e.node);
    let g = &ev.classes(e.node)?.g;
    let suppressed_classes = e
        .failing
        .iter()
        .map(|&c| {
            ft.qis
                .iter()
                .enumerate()
                .map(|(a, q)| node_label(&q.hierarchy, levels[a] as usize, g.codes[a][c as usize]))
                .collect()
        })
        .collect();
    Ok(KanonResult {
        levels,
        loss: e.loss,
        suppressed_records: e.suppressed_records,
        suppressed_classes,
        classes: e.classes - e.failing.len(),
        nodes_total: ev.lattice.size(),
        nodes_evaluated: ev.evaluated,
        heuristic: false,
        proven_optimal: true,
        loss_lower_bound: e.loss,
        max_checks: None,
        passes: PassTimes::default(),
        local: None,
    })
}

/// Anonymize a declared source: aggregate it into its frequency table, search, and prepare the
/// release: as class cells from the frequency table when it holds every published column and
/// the rows are in this process ([`cells`]), else as a plan over the source (the adapter runs
/// the plan or expands the cells, timed as `materialize_ms`).
pub(crate) async fn anonymize(source: &Source, config: &KanonConfig, progress: &dyn Progress) -> Result<Release> {
    let meta = source.meta();
    let sensitive = if config.models.need_sensitive() { Some(meta.sensitive(source.name())?) } else { None };
    let counted =
        if config.local.mode.is_none() { cells::counted_columns(source, config.keep_insensitive) } else { None };
    let start = Instant::now();
    let (ft, release_ft) = match &counted {
        // The release's sensitive column is counted with the quasi-identifiers (once per
        // session and source, like any frequency table); the search reads it without.
        Some(Some(column)) => {
            check_sensitive_not_null(source, None).await?;
            let with = cached_frequency_table_of(source, Some(column)).await?;
            let ft = if sensitive.is_some() { with.clone() } else { Arc::new(with.without_sensitive()) };
            (ft, Some(with))
        }
        _ => {
            // Aggregated once per session and source: repeated calls (another k, model) reuse it.
            let ft = cached_frequency_table_of(source, sensitive).await?;
            // The release carries every sensitive column, read by the models or not.
            check_sensitive_not_null(source, sensitive).await?;
            let release_ft = counted.is_some().then(|| ft.clone());
            (ft, release_ft)
        }
    };
    // k-map's threshold depends on the table's size; resolved once so the report shows it.
    let config = &KanonConfig { models: config.models.for_table(ft.total()), ..config.clone() };
    let aggregate_ms = PassTimes::since(start);
    let columns: Vec<String> = source.schema().fields().iter().map(|f| f.name().clone()).collect();
    let dropped_names = dropped_columns(meta, &columns, config.keep_insensitive);
    let dropped = crate::release::dropped_list(&dropped_names);
    if let Some(mode) = config.local.mode {
        let (res, df) = local::anonymize(source, config, (&ft, aggregate_ms), mode, progress).await?;
        return Ok(Release::timed(Rows::Plan(df), report(&res, config, dropped), Some(res.passes)));
    }
    let start = Instant::now();
    let mut res = search_cancellable(&ft, config, progress)?.ok_or_else(|| {
        AnonError::argument(
            "kanon_anonymize",
            "options",
            format!(
                "no generalization satisfies {} within a suppression limit of {}%; raise the limit or relax the models",
                config.models.describe(),
                config.suppression_percent
            ),
        )
    })?;
    res.passes = PassTimes { aggregate_ms, search_ms: PassTimes::since(start), materialize_ms: 0.0 };
    let start = Instant::now();
    let rows = match release_ft {
        Some(ft) => Rows::Classes(cells::release(source, &ft, &res.levels, &res.suppressed_classes, dropped_names)?),
        None => {
            Rows::Plan(materialize_suppressed(source, &res.levels, &res.suppressed_classes, config.keep_insensitive)?)
        }
    };
    // The adapter adds the time it takes to build the rows.
    res.passes.materialize_ms = PassTimes::since(start);
    Ok(Release::timed(rows, report(&res, config, dropped), Some(res.passes)))
}

/// The report's cells.
fn report(res: &KanonResult, config: &KanonConfig, dropped: Option<String>) -> Vec<(&'static str, Value)> {
    use Value::*;
    let mut cells = vec![
        ("node", Text(describe_node(&res.levels))),
        ("models", Text(config.models.describe())),
        ("metric", Text(config.metric.name().into())),
        ("metric_value", Float(res.loss)),
        ("suppression_limit_percent", Float(config.suppression_percent)),
        ("suppressed_records", Int(res.suppressed_records as i64)),
        ("classes", Int(res.classes as i64)),
        ("nodes_total", Int(res.nodes_total as i64)),
        ("nodes_evaluated", Int(res.nodes_evaluated as i64)),
        ("dropped_columns", OptText(dropped)),
        ("search", Text(if res.heuristic { "heuristic" } else { "optimal" }.into())),
        ("proven_optimal", Int(res.proven_optimal as i64)),
        // The work budget the search ran under (NULL: none), beside nodes_evaluated.
        ("max_checks", OptInt(res.max_checks.map(|n| n as i64))),
        ("loss_lower_bound", Float(res.loss_lower_bound)),
        ("bound_gap", Float(res.loss - res.loss_lower_bound)),
    ];
    // Local releases only, so a full-domain report keeps its columns.
    if let Some(l) = &res.local {
        cells.extend([
            ("local", Text(l.mode.name().into())),
            ("suppressed_cells", Int(l.suppressed_cells as i64)),
            ("records_with_suppressed_cells", Int(l.records_with_suppressed_cells as i64)),
            ("local_loss", Float(l.loss)),
        ]);
    }
    cells
}

/// The node as users read it, e.g. `[1, 0, 2]`.
pub(crate) fn describe_node(levels: &[u8]) -> String {
    format_levels(levels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Array;
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::DataType;
    use std::collections::HashMap;

    /// The method reads a source built from batches, with no session: its release yields
    /// every source row, in classes of at least k on the declared quasi-identifiers, and its
    /// report names the node.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_of_batches_gives_a_k_anonymous_release_without_a_session() {
        let source = crate::methods::contract::testing::nps();
        let release = anonymize(&source, &KanonConfig::new(5), &Silent).await.unwrap();
        let Some(Value::Text(node)) = release.cell("node") else { panic!("no node in the report") };
        assert!(node.starts_with('['), "{node}");
        let Rows::Classes(cells) = release.rows else { panic!("an in-memory source's release is built from cells") };
        let batches = [cells.batch_in(&(0..cells.rows() as u32).collect::<Vec<_>>()).unwrap()];
        let mut classes: HashMap<Vec<String>, usize> = HashMap::new();
        for b in &batches {
            let qis: Vec<_> = source
                .meta()
                .quasi_identifiers()
                .iter()
                .map(|q| cast(b.column_by_name(q).unwrap(), &DataType::Utf8).unwrap())
                .collect();
            for r in 0..b.num_rows() {
                let key = qis.iter().map(|c| {
                    c.as_any().downcast_ref::<datafusion::arrow::array::StringArray>().unwrap().value(r).to_string()
                });
                *classes.entry(key.collect()).or_default() += 1;
            }
        }
        assert_eq!(classes.values().sum::<usize>(), 7000);
        assert!(classes.values().all(|&n| n >= 5), "a class under k: {classes:?}");
    }
}
