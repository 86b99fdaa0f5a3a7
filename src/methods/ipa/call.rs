//! One `ipa_release` or `dp_histogram` call: its options parsed into a mode, and the
//! pipeline from the declared table to the labelled release. The SQL glue only adds the
//! ledger and registers tables.
//!
//! `ipa_release`'s options are declared in [`IPA_OPTIONS`] (a `pure` call that names no
//! partition runs the table's declared plan, [`CallOptions::ipa_declared`]), `dp_histogram`'s in
//! [`HISTOGRAM_OPTIONS`].

use super::adaptive::{AdaptiveConfig, AdaptiveRelease};
use super::baseline::{HistogramRelease, dp_histogram_cancellable};
use super::domain::{check_declared, informative_domain, public_table, written_domain};
use super::guarantee::Guarantee;
use super::size::{self, DEFAULT_MAX_ROWS};
use super::sound::{DpConfig, DpRelease};
use super::{IpaConfig, IpaResult, SPLIT, T, release};
use crate::encode::contribution::Contribution;
use crate::encode::publish::Source;
use crate::encode::source;
use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use crate::methods::contract::Rows;
use crate::methods::options::{self, DIAGNOSTICS, Kind, OptionSpec, Options, Parsed, SEED, opt};
use crate::progress::Progress;

/// The default guarantee of `ipa_release`: the sound mode with the better measured utility on
/// the NPS-like table (docs/ipa.md, "Choosing the default"); with it a table's declared plan
/// (an adaptive partition) is the default partition.
pub const DEFAULT_GUARANTEE: Guarantee = Guarantee::Pure;

// The plan options (`declare_release_plan` declares them too).
pub(crate) const PARTITION: OptionSpec = opt(
    "partition",
    Kind::Choice(&["node", "adaptive"]),
    "the declared plan, else adaptive",
    "one lattice node chosen privately, or an adaptive partition (pure)",
);
pub(crate) const ROOT: OptionSpec =
    opt("root", Kind::Text("1:0:5:2:0"), "", "partition=adaptive: the root node's levels");
pub(crate) const STEPS: OptionSpec =
    opt("steps", Kind::Text("location:1|location:0"), "", "partition=adaptive: the refinement steps");
pub(crate) const THETA: OptionSpec =
    opt("theta", Kind::Text("1000"), "1000", "partition=adaptive: the refinement threshold, or one per step");
pub(crate) const COARSE: OptionSpec = opt(
    "coarse",
    Kind::Float { min: 0.0, max: 1.0 },
    "0.5",
    "partition=adaptive: epsilon's share for the coarse level",
);
pub(crate) const SELECTION: OptionSpec = opt(
    "selection",
    Kind::Float { min: 0.0, max: 1.0 },
    "0.2 (adaptive 0.1)",
    "epsilon's share for choosing the node or the partition",
);
const DELTA: OptionSpec = opt(
    "delta",
    Kind::Float { min: 0.0, max: 1.0 },
    "1e-9",
    "guarantee=approx: the delta of (epsilon, delta)-DP, in (0, 1)",
);
pub(crate) const VALUES: OptionSpec =
    opt("values", Kind::List, "", "the informative attribute's declared domain, when its column has no hierarchy");
pub(crate) const FLOOR: OptionSpec = opt(
    "floor",
    Kind::Int { min: 1, max: 1_000_000 },
    "",
    "guarantee=pure: the smallest noisy count published (1 publishes every positive one)",
);
const MAX_ROWS: OptionSpec = opt(
    "max_rows",
    Kind::Int { min: 1, max: u64::MAX },
    "20000000",
    "refuse a pure release whose noise alone is expected to realize more rows",
);
const PRIVACY_UNIT: OptionSpec = opt(
    "privacy_unit",
    Kind::Text("patient_id"),
    "",
    "guarantee=pure: the column naming the person whose rows are bounded (with max_rows_per_unit)",
);
const MAX_ROWS_PER_UNIT: OptionSpec =
    opt("max_rows_per_unit", Kind::Int { min: 1, max: 1000 }, "", "the most rows one privacy_unit contributes");

/// `ipa_release`'s options.
pub(crate) const IPA_OPTIONS: Options = Options {
    function: "ipa_release",
    specs: &[
        opt(
            "guarantee",
            Kind::Choice(&["pure", "approx", "paper"]),
            "pure",
            "epsilon-DP, (epsilon, delta)-DP, or the paper's algorithm (no guarantee)",
        ),
        DELTA,
        VALUES,
        PARTITION,
        ROOT,
        STEPS,
        THETA,
        COARSE,
        SELECTION,
        opt(
            "noise_weight",
            Kind::Float { min: 0.0, max: f64::INFINITY },
            "1",
            "partition=node: the weight of the noise's error in the node's score",
        ),
        opt(
            "class_weight",
            Kind::Float { min: 0.0, max: f64::INFINITY },
            "1000",
            "partition=node: the weight of the generalization's error in the node's score",
        ),
        FLOOR,
        opt(
            "max_cells",
            Kind::Int { min: 0, max: u64::MAX },
            "10000000",
            "partition=node: the largest node considered",
        ),
        MAX_ROWS,
        PRIVACY_UNIT,
        MAX_ROWS_PER_UNIT,
        DIAGNOSTICS,
        SEED,
        T,
        SPLIT,
    ],
};

/// `dp_histogram`'s options.
pub(crate) const HISTOGRAM_OPTIONS: Options = Options {
    function: "dp_histogram",
    specs: &[
        opt("guarantee", Kind::Choice(&["pure", "approx"]), "pure", "epsilon-DP, or (epsilon, delta)-DP"),
        DELTA,
        VALUES,
        FLOOR,
        MAX_ROWS,
        PRIVACY_UNIT,
        MAX_ROWS_PER_UNIT,
        DIAGNOSTICS,
        SEED,
    ],
};

/// What an `ipa_release` call runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    Paper(IpaConfig),
    Sound(DpConfig),
    /// `partition=adaptive` (guarantee `pure`): [`super::adaptive`].
    Adaptive(AdaptiveConfig),
}

/// Parsed options of one call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallOptions {
    pub(crate) mode: Mode,
    /// The informative attribute's declared values (`values=`), when given.
    values: Option<Vec<String>>,
    pub(crate) diagnostics: bool,
    /// The most rows noise alone may be expected to realize (`max_rows=`, [`super::size`]).
    max_rows: u64,
    /// `privacy_unit=` and `max_rows_per_unit=`: the person whose rows are bounded, and the
    /// bound; the mechanisms run at ε / bound (group privacy, [`crate::encode::contribution`]).
    pub(crate) unit: Option<(String, u64)>,
}

impl CallOptions {
    pub(crate) fn seed(&self) -> Option<u64> {
        match &self.mode {
            Mode::Paper(c) => c.seed,
            Mode::Sound(c) => c.seed,
            Mode::Adaptive(c) => c.seed,
        }
    }
    pub(crate) fn guarantee(&self) -> Guarantee {
        match &self.mode {
            Mode::Paper(_) => Guarantee::Paper,
            Mode::Sound(c) => c.guarantee,
            Mode::Adaptive(_) => Guarantee::Pure,
        }
    }

    /// `ipa_release`'s options.
    pub(crate) fn ipa(epsilon: f64, text: &str) -> Result<Self> {
        Self::ipa_with(epsilon, text, false)
    }

    /// The options as far as they can be checked before the table's declarations are known:
    /// plan options without `partition=` may be completing a declared plan
    /// ([`Self::ipa_declared`] checks them then).
    pub(crate) fn ipa_unresolved(epsilon: f64, text: &str) -> Result<Self> {
        Self::ipa_with(epsilon, text, true)
    }

    fn ipa_with(epsilon: f64, text: &str, plan_pending: bool) -> Result<Self> {
        const F: &str = "ipa_release";
        let o = IPA_OPTIONS.parse(text)?;
        let guarantee =
            Guarantee::parse(F, o.raw("guarantee"), o.raw("delta"), &["pure", "approx", "paper"], DEFAULT_GUARANTEE)?;
        let unit = privacy_unit(F, &o, guarantee)?;
        let per_row = epsilon / unit.as_ref().map_or(1, |u| u.1) as f64;
        let (mut paper, mut sound) = (IpaConfig::new(epsilon), DpConfig::new(per_row, guarantee));
        let is_paper = guarantee == Guarantee::Paper;
        // Each option of one mode only, in the order given (the first stray one is named).
        for key in o.names() {
            let paper_key = PAPER_ONLY.contains(&key);
            if (paper_key || SOUND_ONLY.contains(&key)) && paper_key != is_paper {
                let modes = if paper_key { "paper" } else { "pure and approx" };
                return Err(AnonError::argument(
                    F,
                    key,
                    format!("applies to guarantee={modes} only (this call is guarantee={})", guarantee.name()),
                ));
            }
        }
        (paper.seed, sound.seed) = (o.seed(), o.seed());
        paper.read_paper(&o)?;
        sound.selection = o.float("selection").unwrap_or(sound.selection);
        sound.noise_weight = o.float("noise_weight").unwrap_or(sound.noise_weight);
        sound.class_weight = o.float("class_weight").unwrap_or(sound.class_weight);
        sound.max_cells = o.int("max_cells").unwrap_or(sound.max_cells);
        sound.floor = o.int("floor");
        let plan = Plan::read(&o)?;
        let (values, diagnostics) = (o.list("values"), o.flag("diagnostics").unwrap_or(false));
        let max_rows = o.int("max_rows").unwrap_or(DEFAULT_MAX_ROWS);
        let mode = if is_paper {
            paper.check_parameters()?;
            Mode::Paper(paper)
        } else if let Some(adaptive) = plan.config(per_row, guarantee, sound.seed, plan_pending)? {
            adaptive.budget()?;
            Mode::Adaptive(adaptive)
        } else {
            sound.budget()?;
            if sound.floor.is_some() && guarantee != Guarantee::Pure {
                return Err(AnonError::argument(
                    F,
                    "floor",
                    "applies to guarantee=pure only (approx has its threshold)",
                ));
            }
            Mode::Sound(sound)
        };
        Ok(CallOptions { mode, values, diagnostics, max_rows, unit })
    }

    /// `ipa_release`'s options with the table's declared plan (`declare_release_plan`): when
    /// the call names no `partition=` and its guarantee is `pure` (the default), the plan's
    /// options come first and the call's own override them.
    pub(crate) fn ipa_declared(epsilon: f64, text: &str, plan: Option<&str>) -> Result<Self> {
        let own = Self::ipa_unresolved(epsilon, text)?;
        let given = options::pairs("ipa_release", text)?;
        let named = given.iter().any(|(k, _)| k == "partition");
        match plan {
            Some(plan) if !named && own.guarantee() == Guarantee::Pure => {
                // The plan's options the call does not give itself, then the call's.
                let plan = options::pairs("ipa_release", plan)?;
                let kept = plan.iter().filter(|(k, _)| !given.iter().any(|(g, _)| g == k));
                let mut all: Vec<String> = kept.map(|(k, v)| format!("{k}={v}")).collect();
                all.push(text.to_string());
                Self::ipa(epsilon, &all.join(", "))
            }
            // No declared plan: the automatic adaptive partition, unless the call asks for the
            // node release's own options.
            None if !named
                && own.guarantee() == Guarantee::Pure
                && !given.iter().any(|(k, _)| NODE_ONLY.contains(&k.as_str())) =>
            {
                let text = if text.trim().is_empty() { String::new() } else { format!(", {text}") };
                Self::ipa(epsilon, &format!("partition=adaptive{text}"))
            }
            _ => Self::ipa(epsilon, text),
        }
    }

    /// `dp_histogram`'s options (the mode is always `Sound`; only its guarantee and seed are used).
    pub(crate) fn histogram(epsilon: f64, text: &str) -> Result<Self> {
        const F: &str = "dp_histogram";
        let o = HISTOGRAM_OPTIONS.parse(text)?;
        let guarantee = Guarantee::parse(F, o.raw("guarantee"), o.raw("delta"), &["pure", "approx"], Guarantee::Pure)?;
        let unit = privacy_unit(F, &o, guarantee)?;
        let mut sound = DpConfig::new(epsilon / unit.as_ref().map_or(1, |u| u.1) as f64, guarantee);
        (sound.seed, sound.floor) = (o.seed(), o.int("floor"));
        let (values, diagnostics) = (o.list("values"), o.flag("diagnostics").unwrap_or(false));
        let max_rows = o.int("max_rows").unwrap_or(DEFAULT_MAX_ROWS);
        if sound.floor.is_some() && guarantee != Guarantee::Pure {
            return Err(AnonError::argument(F, "floor", "applies to guarantee=pure only (approx has its threshold)"));
        }
        Ok(CallOptions { mode: Mode::Sound(sound), values, diagnostics, max_rows, unit })
    }

    /// Refuse a `pure` release whose noise alone is expected to realize more than `max_rows=`
    /// rows ([`super::size`]): public quantities only, checked before the budget is reserved.
    /// `node`: `dp_histogram`'s fixed node.
    pub(crate) fn check_size(&self, function: &str, table: &str, meta: &TableMeta, node: Option<&[u8]>) -> Result<()> {
        // (cells of the largest possible output, ε of the cells' noise, floor)
        let (cells, epsilon, floor) = match &self.mode {
            Mode::Sound(c) if c.guarantee == Guarantee::Pure => {
                let (domain, hs) = self.public_domains(function, table, meta)?;
                let domain = domain.len();
                let counts = c.budget()?.1;
                let cells = match node {
                    Some(levels) if is_node(&hs, levels) => size::node_cells(&hs, levels, domain),
                    Some(_) => return Ok(()), // not a node of the lattice: the call refuses it itself
                    None => size::largest_candidate(&hs, domain, c.max_cells),
                };
                (cells, counts, c.floor)
            }
            // The automatic plan needs no bound here: its root (the coarse level) has at most 10^6
            // cells (root.rs), its depth stops at 10^7 combinations, a
            // child is refined only when its noisy count passes θ ≥ ln(1000)/ε_step (so a tiny ε
            // keeps the root), and a class whose noisy total is under its floor is released empty.
            Mode::Adaptive(c) if c.is_automatic() => return Ok(()),
            Mode::Adaptive(c) => {
                let (domain, hs) = self.public_domains(function, table, meta)?;
                let domain = domain.len();
                let b = c.budget()?;
                let finest = size::finest_node(&c.root, &c.steps, &meta.quasi_identifiers());
                if !is_node(&hs, &finest) {
                    return Ok(()); // the plan is checked against the lattice when it runs
                }
                let coarse = if b.coarse > 0.0 { size::node_cells(&hs, &c.root, domain) } else { 0.0 };
                (size::node_cells(&hs, &finest, domain) + coarse, b.cells, Some(c.floor))
            }
            _ => return Ok(()),
        };
        let noise = crate::dp::DiscreteLaplace::for_epsilon(epsilon, 1)?;
        let floor =
            floor.unwrap_or_else(|| super::guarantee::floor(&noise, super::guarantee::DEFAULT_FLOOR_PROBABILITY));
        size::check(function, cells, noise.q(), floor, self.max_rows)
    }

    /// The informative attribute's declared domain and the quasi-identifiers' hierarchies,
    /// refusing any derived from the data (a domain read from the data has no public size
    /// either): public quantities, checked before anything is read.
    fn public_domains<'m>(
        &self,
        function: &str,
        table: &str,
        meta: &'m TableMeta,
    ) -> Result<(Vec<String>, Vec<&'m crate::hierarchy::Hierarchy>)> {
        let informative = meta.sensitive(table)?;
        let domain = informative_domain(function, table, meta, informative, self.values.as_deref())?;
        let qis = meta.quasi_identifiers();
        let hs = qis.iter().map(|q| meta.hierarchy(table, q).map(|h| h.as_ref())).collect::<Result<Vec<_>>>()?;
        check_declared(function, qis.iter().copied().zip(hs.iter().copied()))?;
        Ok((domain, hs))
    }
}

/// `privacy_unit=<column>` with `max_rows_per_unit=<b>`: both or neither, `guarantee=pure` only
/// (group privacy turns ε′-DP per row into b·ε′-DP per person exactly; for (ε, δ) it would
/// also multiply δ by b·e^((b−1)ε′), which the threshold is not calibrated to).
fn privacy_unit(function: &str, o: &Parsed, guarantee: Guarantee) -> Result<Option<(String, u64)>> {
    let (column, rows) = match (o.text("privacy_unit"), o.int("max_rows_per_unit")) {
        (None, None) => return Ok(None),
        (Some(c), Some(r)) => (c.trim(), r),
        (Some(_), None) => {
            return Err(AnonError::argument(
                function,
                "max_rows_per_unit",
                "privacy_unit needs the most rows one unit may contribute, e.g. 'privacy_unit=patient_id, max_rows_per_unit=3'",
            ));
        }
        (None, Some(_)) => {
            return Err(AnonError::argument(function, "privacy_unit", "max_rows_per_unit needs privacy_unit=<column>"));
        }
    };
    if guarantee != Guarantee::Pure {
        return Err(AnonError::argument(
            function,
            "privacy_unit",
            format!("applies to guarantee=pure only (this call is guarantee={})", guarantee.name()),
        ));
    }
    if column.is_empty() {
        return Err(AnonError::argument(function, "privacy_unit", "needs a column name"));
    }
    Ok(Some((column.to_string(), rows)))
}

/// Whether `levels` is a node of the lattice of `hs`.
fn is_node(hs: &[&crate::hierarchy::Hierarchy], levels: &[u8]) -> bool {
    levels.len() == hs.len() && levels.iter().zip(hs).all(|(&l, h)| l as usize <= h.height())
}

/// Options only the node release reads: given without `partition=`, they choose it.
const NODE_ONLY: [&str; 3] = ["noise_weight", "class_weight", "max_cells"];

/// Options of `guarantee=paper` only, and of `pure` and `approx` only.
const PAPER_ONLY: [&str; 2] = ["t", "split"];
const SOUND_ONLY: [&str; 10] =
    ["values", "selection", "partition", "root", "steps", "theta", "coarse", "noise_weight", "class_weight", "floor"];

/// The `partition=adaptive` options as given; [`Plan::config`] checks them together.
#[derive(Debug, Default)]
struct Plan {
    adaptive: Option<bool>,
    root: Option<Vec<u8>>,
    steps: Option<Vec<(String, u8)>>,
    theta: Option<Vec<f64>>,
    coarse: Option<f64>,
    selection: Option<f64>,
    floor: Option<u64>,
    /// The first option given that only the node release reads.
    node_only: Option<&'static str>,
}

impl Plan {
    /// The plan options of a call ([`IPA_OPTIONS`]).
    fn read(o: &Parsed) -> Result<Self> {
        const F: &str = "ipa_release";
        let bad = |key: &str, what: &str| AnonError::argument(F, key, format!("must be {what}"));
        let partition = |v: &str| match v.trim() {
            "adaptive" => Some(true),
            "node" => Some(false),
            _ => None,
        };
        let mut plan = Plan {
            adaptive: o.choice("partition", partition)?,
            coarse: o.float("coarse"),
            selection: o.float("selection"),
            floor: o.int("floor"),
            node_only: o.names().find(|k| NODE_ONLY.contains(k)),
            ..Plan::default()
        };
        if let Some(value) = o.text("root") {
            let levels = value.split(':').map(|l| l.trim().parse::<u8>().ok()).collect::<Option<Vec<u8>>>();
            plan.root = Some(levels.ok_or_else(|| bad("root", "a node written as levels such as 1:0:5:2:0"))?);
        }
        if let Some(value) = o.text("steps") {
            let step = |s: &str| {
                let (name, level) = s.trim().rsplit_once(':')?;
                Some((name.trim().to_string(), level.trim().parse::<u8>().ok()?))
            };
            let steps = value.split('|').map(step).collect::<Option<Vec<_>>>();
            plan.steps =
                Some(steps.ok_or_else(|| bad("steps", "a list of refinements such as length_of_stay:3|location:0"))?);
        }
        if let Some(value) = o.text("theta") {
            let t = value.split('|').map(|t| t.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>();
            plan.theta = Some(t.ok_or_else(|| bad("theta", "a number, or one number per step separated by '|'"))?);
        }
        Ok(plan)
    }

    /// The adaptive configuration when `partition=adaptive`, `None` for a node release;
    /// plan options without it are an error naming the first one.
    /// `pending`: plan options without `partition=` are accepted (a declared plan may come).
    fn config(
        &self,
        epsilon: f64,
        guarantee: Guarantee,
        seed: Option<u64>,
        pending: bool,
    ) -> Result<Option<AdaptiveConfig>> {
        const F: &str = "ipa_release";
        if self.adaptive.is_none() && pending {
            return Ok(None);
        }
        if self.adaptive != Some(true) {
            let given = [("root", self.root.is_some()), ("steps", self.steps.is_some())];
            let given = given.into_iter().chain([("theta", self.theta.is_some()), ("coarse", self.coarse.is_some())]);
            if let Some((key, _)) = given.into_iter().find(|(_, g)| *g) {
                return Err(AnonError::argument(F, key, "applies to partition=adaptive only"));
            }
            return Ok(None);
        }
        if guarantee != Guarantee::Pure {
            return Err(AnonError::argument(F, "partition", "adaptive is a guarantee=pure release"));
        }
        if let Some(key) = self.node_only {
            return Err(AnonError::argument(F, key, "applies to partition=node only"));
        }
        if self.root.is_none() && self.steps.is_none() {
            // No root and no steps: the automatic plan (adaptive.rs), resolved on the table.
            let mut c = AdaptiveConfig::automatic(epsilon);
            c.seed = seed;
            c.theta = self.theta.clone().unwrap_or(c.theta);
            c.coarse = self.coarse.unwrap_or(c.coarse);
            c.partition = self.selection.unwrap_or(c.partition);
            c.floor = self.floor.unwrap_or(c.floor);
            return Ok(Some(c));
        }
        let root = self.root.clone().ok_or_else(|| {
            AnonError::argument(F, "root", "partition=adaptive needs the root node, e.g. 'root=1:0:5:2:0'")
        })?;
        let steps = self.steps.clone().ok_or_else(|| {
            AnonError::argument(
                F,
                "steps",
                "partition=adaptive needs its refinement steps, e.g. 'steps=location:1|location:0'",
            )
        })?;
        let mut c = AdaptiveConfig::new(epsilon, root, steps);
        c.seed = seed;
        c.theta = self.theta.clone().unwrap_or(c.theta);
        c.coarse = self.coarse.unwrap_or(c.coarse);
        c.partition = self.selection.unwrap_or(c.partition);
        c.floor = self.floor.unwrap_or(c.floor);
        Ok(Some(c))
    }
}

/// What a call produced: the labelled release and the result it came from.
pub enum Outcome {
    Paper(IpaResult),
    Sound(DpRelease),
    Adaptive(AdaptiveRelease),
}

/// What a call runs just before its first noise draw, once its data-dependent checks have
/// passed: the reservation of its budget (`Call::reserve_budget`).
pub(crate) type BeforeNoise<'a> = &'a (dyn Fn() -> Result<()> + Sync);

/// The session's hooks into a call: its Ctrl-C flag and what runs before the first noise draw.
pub(crate) struct Hooks<'a> {
    pub(crate) progress: &'a dyn Progress,
    pub(crate) before_noise: BeforeNoise<'a>,
}

/// Run `ipa_release` on a declared table: one aggregation (the frequency table), then the
/// paper's algorithm or the sound one, and the release labelled with its guarantee.
pub(crate) async fn ipa_release(
    source: &source::Source,
    call: &CallOptions,
    progress: &dyn Progress,
    before_noise: BeforeNoise<'_>,
) -> Result<(Outcome, Released)> {
    let guarantee = call.guarantee();
    match &call.mode {
        Mode::Paper(config) => {
            before_noise()?;
            let (res, p) = super::anonymize(source, config, progress).await?;
            let (schema, batches) =
                release::labelled(p.schema, p.batches, guarantee, call.statement(), res.spent.total())?;
            let records = batches.iter().map(|b| b.num_rows() as i64).sum();
            Ok((Outcome::Paper(res), Released { rows: Rows::Batches(schema, batches), records, dropped: p.dropped }))
        }
        Mode::Sound(config) => {
            let src = public_source(source, "ipa_release", call).await?;
            before_noise()?;
            let res = super::sound::release(&src.ft, config, progress)?;
            let epsilon = res.epsilon_selection + res.epsilon_counts;
            let published = publish(&src, &res.histogram, call, epsilon)?;
            Ok((Outcome::Sound(res), published))
        }
        Mode::Adaptive(config) => {
            let src = public_source(source, "ipa_release", call).await?;
            super::adaptive::check_declared_plan(&src.ft, config)?;
            before_noise()?;
            let res = super::adaptive::release_cancellable(&src.ft, config, progress)?;
            let published = publish(&src, &res, call, res.budget.total())?;
            Ok((Outcome::Adaptive(res), published))
        }
    }
}

/// Run `dp_histogram` on a declared table at node `levels` (checked against the lattice).
pub(crate) async fn histogram_release(
    source: &source::Source,
    levels: &[u8],
    epsilon: f64,
    call: &CallOptions,
    hooks: Hooks<'_>,
) -> Result<(HistogramRelease, Released)> {
    let Hooks { before_noise, progress } = hooks;
    let src = public_source(source, "dp_histogram", call).await?;
    let heights = src.ft.heights();
    if levels.len() != heights.len() || levels.iter().zip(&heights).any(|(l, h)| l > h) {
        return Err(AnonError::argument(
            "dp_histogram",
            "node",
            format!(
                "'{}' is not a node of the lattice (heights {})",
                crate::lattice::format_levels(levels),
                crate::lattice::format_levels(&heights)
            ),
        ));
    }
    let Mode::Sound(config) = &call.mode else { unreachable!("dp_histogram's options are always sound") };
    before_noise()?;
    let per_row = epsilon / call.rows_per_unit() as f64;
    let res =
        dp_histogram_cancellable(&src.ft, levels, per_row, call.guarantee(), config.floor, call.seed(), progress)?;
    let published = publish(&src, &res.histogram, call, res.epsilon)?;
    Ok((res, published))
}

/// A call's release before its rows are built, and what its report says of it.
pub(crate) struct Released {
    pub(crate) rows: Rows,
    pub(crate) records: i64,
    /// Source columns the release leaves out (neither identifier, dimension nor informative).
    pub(crate) dropped: Vec<String>,
}

impl Released {
    /// The dropped source columns as a report's `dropped_columns` (None when none).
    pub(crate) fn dropped_columns(&self) -> Option<String> {
        crate::release::dropped_list(&self.dropped)
    }
}

/// A sound release's class cells, labelled with the call's guarantee and ε, and the source's
/// columns it drops.
fn publish(src: &Source<'_>, released: &impl release::Cells, call: &CallOptions, epsilon: f64) -> Result<Released> {
    let cells = release::cells_release(&src.ft, &src.schema, released, src.dropped_columns())?;
    let epsilon = epsilon * call.rows_per_unit() as f64;
    let cells = release::labelled_cells(cells, call.guarantee(), call.statement(), epsilon);
    let (records, dropped) = (cells.rows() as i64, cells.dropped.clone());
    Ok(Released { rows: Rows::Classes(cells), records, dropped })
}

/// The source, its frequency table over the declared domains.
async fn public_source<'a>(source: &'a source::Source, function: &str, call: &CallOptions) -> Result<Source<'a>> {
    // Refuse data-derived hierarchies before the data are read.
    let (table, meta) = (source.name(), source.meta());
    let (domain, _) = call.public_domains(function, table, meta)?;
    let domain = written_domain(table, meta.sensitive(table)?, &source.schema(), &domain)?;
    let bound = call.unit.as_ref().map(|(column, rows)| Contribution {
        column: column.clone(),
        rows: *rows,
        seed: call.seed(),
    });
    let mut src = Source::of_bounded(source, bound.as_ref()).await?;
    src.ft = public_table(function, table, &src.ft, &domain)?;
    Ok(src)
}

/// Here rather than in adaptive.rs, which would otherwise import the options that import it.
impl AdaptiveConfig {
    /// A plan written as `ipa_release` options (`partition=adaptive, root=..., steps=...`, as
    /// `declare_release_plan` takes it); an error when they do not describe an adaptive partition.
    pub fn from_options(epsilon: f64, text: &str) -> Result<Self> {
        match CallOptions::ipa(epsilon, text)?.mode {
            Mode::Adaptive(c) => Ok(c),
            _ => Err(AnonError::argument(
                "ipa_release",
                "partition",
                "the options are not an adaptive partition ('partition=adaptive')",
            )),
        }
    }
}
