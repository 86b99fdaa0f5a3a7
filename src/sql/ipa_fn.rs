//! `ipa_release(source, output, epsilon [, options])` and `dp_histogram(source, output,
//! epsilon, node [, options])`: glue only. Options, the pipeline and every number come from
//! `methods::ipa::call`; this file charges the ledger and registers the tables:
//!
//! - `output`: the release, its Arrow schema metadata `anonfusion.guarantee` saying what it is;
//! - `output_report`: the guarantee, epsilon and its parts, delta, the node, the parameters,
//!   and numbers computed from the release itself (nothing about the original, no seed);
//! - with `diagnostics=true` only: `output_diagnostics` (exact counts and IL against the
//!   original) and `output_diagnostics_nodes` (every candidate node), first column
//!   `not_for_publication`.
//!
//! The epsilon is reserved in the ledger before any noise is drawn and recorded once the
//! tables are built.

use super::method::{Call, MethodSpec, Outputs};
use super::report::{Value::*, one_row};
use super::{Args, block_on, mem_table};
use crate::dp::ledger::{Charge, epsilon_units, grid_units};
use crate::error::{AnonError, Result};
use crate::lattice::{format_levels, parse_levels};
use crate::methods::ipa::call::{self, CallOptions, Mode, Outcome};
use crate::methods::ipa::histogram::{CellNoise, Realized};
use crate::methods::ipa::search::choice_mechanism;
use crate::methods::ipa::{Guarantee, Published};
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use std::sync::Arc;

const F: &str = "ipa_release";
const H: &str = "dp_histogram";

/// First column of every diagnostics table.
pub(super) const NOT_FOR_PUBLICATION: &str = "NOT FOR PUBLICATION: exact statistics of the original data";

/// The ledger's description of a charge.
fn ledger_parts(guarantee: Guarantee, parts: &str, seeded: bool) -> String {
    let mut s = format!("guarantee={}, {parts}", guarantee.name());
    if let Guarantee::Approx { delta } = guarantee {
        s.push_str(&format!(", delta={delta:e}"));
    }
    if guarantee == Guarantee::Paper {
        s.push_str(&format!(", {}", crate::methods::ipa::guarantee::NOT_DP));
    }
    if seeded {
        s.push_str(", seeded (not private)");
    }
    s
}

/// The report's guarantee text: a seeded call promises nothing (the seed is not written).
fn statement(guarantee: Guarantee, seeded: bool) -> String {
    let s = guarantee.statement();
    if seeded { format!("{s}; VOID: seeded call (tests only)") } else { s }
}

/// approx's publication threshold τ, or pure's floor: the least published count of a cell.
fn threshold(mode: CellNoise) -> Option<i64> {
    match mode {
        CellNoise::Threshold(t) | CellNoise::Pure { floor: t } => Some(t as i64),
    }
}

/// The ledger charge of a call: epsilon on the grid, delta in approx mode, labelled when the
/// guarantee is the paper's (none) or the call is seeded (nothing spent).
fn charge(call: &CallOptions, units: u64, parts: &str) -> Result<Option<(Charge, String)>> {
    let guarantee = call.guarantee();
    let seeded = call.seed().is_some();
    let mut c = Charge::epsilon(units).seeded(seeded);
    if let Guarantee::Approx { delta } = guarantee {
        c = c.with_delta(F, delta)?;
    }
    if guarantee == Guarantee::Paper {
        c = c.guarantee(crate::methods::ipa::guarantee::NOT_DP);
    }
    Ok(Some((c, ledger_parts(guarantee, parts, seeded))))
}

/// `ipa_release(source, output, epsilon [, options])`.
#[derive(Debug)]
pub struct Ipa;

impl MethodSpec for Ipa {
    /// (epsilon, parsed options).
    type Params = (f64, CallOptions);
    const NAME: &'static str = F;
    const SIGNATURE: &'static str = "ipa_release(source, output, epsilon [, 'guarantee=pure|approx|paper, delta=1e-9, values=a|b, selection=0.2, noise_weight=1, class_weight=1000, floor=4, max_cells=N, diagnostics=true, seed=42, t=2, split=0.1:0.3:0.3:0.3'])";
    const ARITY: (usize, usize) = (3, 4);

    fn parse(&self, a: &Args) -> Result<(f64, CallOptions)> {
        let epsilon = a.f64(2, "epsilon")?;
        // The grid's limits, before the options: 1e308 is an error, not a clamp.
        epsilon_units(F, epsilon)?;
        Ok((epsilon, CallOptions::ipa(epsilon, &a.opt_str(3, "options")?.unwrap_or_default())?))
    }

    /// Only seeded calls are memoized: a repeat returns the same release and spends nothing.
    fn deterministic(&self, (_, call): &(f64, CallOptions)) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &(f64, CallOptions)) -> Vec<&'static str> {
        vec!["report", "diagnostics", "diagnostics_nodes"]
    }

    fn charge(&self, (_, call): &(f64, CallOptions)) -> Result<Option<(Charge, String)>> {
        let (units, parts) = match &call.mode {
            Mode::Paper(c) => {
                let b = c.budget()?;
                let units = [b.suppression, b.insertion, b.value, b.candidates].iter().map(|&e| grid_units(e)).sum();
                let parts = format!(
                    "suppression={}, insertion={}, value={}, candidates={}",
                    b.suppression, b.insertion, b.value, b.candidates
                );
                (units, parts)
            }
            Mode::Sound(c) => {
                let (sel, counts) = c.budget()?;
                (grid_units(sel) + grid_units(counts), format!("selection={sel}, counts={counts}"))
            }
        };
        charge(call, units, &parts)
    }

    fn seed(&self, (_, call): &(f64, CallOptions)) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (_, call): &(f64, CallOptions)) -> Result<Outputs> {
        let progress = c.registry.progress();
        let (outcome, published) = block_on(call::ipa_release(c.ctx, c.source, c.meta, call, progress.as_ref()))?;
        let ms = c.elapsed_ms();
        let release = mem_table(published.schema.clone(), published.batches.clone())?;
        let seeded = call.seed().is_some();
        let (report, diagnostics) = match &outcome {
            Outcome::Paper(res) => {
                (paper_report(c.source, call, res, &published, seeded)?, paper_diagnostics(res, call, ms)?)
            }
            Outcome::Sound(res) => {
                (sound_report(c.source, call, res, &published, seeded)?, sound_diagnostics(res, ms)?)
            }
        };
        let out = Outputs::new(release).with("report", report);
        Ok(if call.diagnostics {
            out.with("diagnostics", diagnostics.0).with("diagnostics_nodes", diagnostics.1)
        } else {
            out
        })
    }
}

fn released_cells(p: &Published) -> i64 {
    p.batches.iter().map(|b| b.num_rows() as i64).sum()
}

fn paper_report(
    source: &str,
    call: &CallOptions,
    res: &crate::methods::ipa::IpaResult,
    p: &Published,
    seeded: bool,
) -> Result<Arc<dyn TableProvider>> {
    let s = &res.spent;
    let t = match &call.mode {
        Mode::Paper(c) => c.t,
        Mode::Sound(_) => unreachable!("paper outcome"),
    };
    one_row(vec![
        ("method", Text(F.into())),
        ("source", Text(source.into())),
        ("guarantee", Text(statement(Guarantee::Paper, seeded))),
        ("epsilon", Float(s.total())),
        ("epsilon_suppression", Float(s.suppression)),
        ("epsilon_insertion", Float(s.insertion)),
        ("epsilon_value", Float(s.value)),
        ("epsilon_candidates", Float(s.candidates)),
        ("delta", Float(0.0)),
        ("t", Int(t as i64)),
        ("node", Text(res.node_label())),
        ("released_records", Int(released_cells(p))),
        ("dropped_columns", OptText((!p.dropped.is_empty()).then(|| p.dropped.join(", ")))),
    ])
}

fn sound_report(
    source: &str,
    call: &CallOptions,
    res: &crate::methods::ipa::sound::DpRelease,
    p: &Published,
    seeded: bool,
) -> Result<Arc<dyn TableProvider>> {
    let Mode::Sound(c) = &call.mode else { unreachable!("sound outcome") };
    one_row(vec![
        ("method", Text(F.into())),
        ("source", Text(source.into())),
        ("guarantee", Text(statement(c.guarantee, seeded))),
        ("epsilon", Float(res.epsilon_selection + res.epsilon_counts)),
        ("epsilon_selection", Float(res.epsilon_selection)),
        ("epsilon_counts", Float(res.epsilon_counts)),
        ("delta", Float(c.guarantee.delta())),
        ("threshold", OptInt(threshold(res.mode))),
        ("node", Text(format_levels(&res.histogram.levels))),
        ("selection", Float(c.selection)),
        ("noise_weight", Float(c.noise_weight)),
        ("class_weight", Float(c.class_weight)),
        ("max_cells", Int(c.max_cells as i64)),
        ("candidates", Int(res.candidates.len() as i64)),
        ("released_cells", Int(res.histogram.cells.len() as i64)),
        ("released_records", Int(released_cells(p))),
        ("dropped_columns", OptText((!p.dropped.is_empty()).then(|| p.dropped.join(", ")))),
    ])
}

type Diagnostics = (Arc<dyn TableProvider>, Arc<dyn TableProvider>);

fn paper_diagnostics(res: &crate::methods::ipa::IpaResult, call: &CallOptions, ms: f64) -> Result<Diagnostics> {
    let summary = one_row(vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("released_records", Int(res.released_records as i64)),
        ("suppressed_records", Int(res.suppressed_records as i64)),
        ("suppressed_classes", Int(res.suppressed_classes as i64)),
        ("withheld_records", Int(res.withheld_records as i64)),
        ("counterfeit_records", Int(res.counterfeit_records as i64)),
        ("ncp", Float(res.loss.ncp)),
        ("emd", Float(res.loss.emd)),
        ("rate", Float(res.loss.rate)),
        ("il", Float(res.il())),
        ("nodes_scored", Int(res.scores.len() as i64)),
        ("time_ms", Float(ms)),
    ])?;
    let Mode::Paper(c) = &call.mode else { unreachable!("paper outcome") };
    let probabilities = choice_mechanism(&res.scores, c.budget()?.candidates)?.probabilities();
    let s = &res.scores;
    let nodes = nodes_table(
        s.iter().map(|x| x.levels.clone()).collect(),
        vec![
            ("ncp", s.iter().map(|x| x.loss.ncp).collect()),
            ("emd", s.iter().map(|x| x.loss.emd).collect()),
            ("rate", s.iter().map(|x| x.loss.rate).collect()),
            ("il", s.iter().map(|x| x.loss.il()).collect()),
            ("probability", probabilities),
        ],
        s.iter().map(|x| x.node == res.node).collect(),
    )?;
    Ok((summary, nodes))
}

fn sound_diagnostics(res: &crate::methods::ipa::sound::DpRelease, ms: f64) -> Result<Diagnostics> {
    let mut cells = realized_cells(&res.realized, res.histogram.released_records);
    cells.extend([("chosen_probability", Float(res.probabilities[res.chosen])), ("time_ms", Float(ms))]);
    let summary = one_row(cells)?;
    let c = &res.candidates;
    let nodes = nodes_table(
        c.iter().map(|x| x.levels.clone()).collect(),
        vec![
            ("cells", c.iter().map(|x| x.cells as f64).collect()),
            ("ncp_total", c.iter().map(|x| x.ncp_total).collect()),
            ("noise_total", c.iter().map(|x| x.noise_total).collect()),
            ("class_total", c.iter().map(|x| x.class_total).collect()),
            ("utility", c.iter().map(|x| x.utility).collect()),
            ("probability", res.probabilities.clone()),
        ],
        (0..c.len()).map(|i| i == res.chosen).collect(),
    )?;
    Ok((summary, nodes))
}

/// The exact diagnostics of a released histogram (never published).
fn realized_cells(r: &Realized, released: u64) -> Vec<(&'static str, super::report::Value)> {
    vec![
        ("not_for_publication", Text(NOT_FOR_PUBLICATION.into())),
        ("released_records", Int(released as i64)),
        ("withheld_records", Int(r.withheld as i64)),
        ("counterfeit_records", Int(r.counterfeit as i64)),
        ("ncp", Float(r.loss.ncp)),
        ("emd", Float(r.loss.emd)),
        ("rate", Float(r.loss.rate)),
        ("il", Float(r.loss.il())),
    ]
}

/// Every candidate node: `not_for_publication`, node, height, the given columns, chosen.
fn nodes_table(
    levels: Vec<Vec<u8>>,
    columns: Vec<(&str, Vec<f64>)>,
    chosen: Vec<bool>,
) -> Result<Arc<dyn TableProvider>> {
    let mut fields = vec![
        Field::new("not_for_publication", DataType::Utf8, false),
        Field::new("node", DataType::Utf8, false),
        Field::new("height", DataType::Int64, false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(levels.iter().map(|_| NOT_FOR_PUBLICATION))),
        Arc::new(StringArray::from_iter_values(levels.iter().map(|l| format_levels(l)))),
        Arc::new(Int64Array::from_iter_values(levels.iter().map(|l| l.iter().map(|&x| x as i64).sum()))),
    ];
    for (name, values) in columns {
        fields.push(Field::new(name, DataType::Float64, false));
        cols.push(Arc::new(Float64Array::from(values)));
    }
    fields.push(Field::new("chosen", DataType::Int64, false));
    cols.push(Arc::new(Int64Array::from_iter_values(chosen.iter().map(|&c| c as i64))));
    let schema = Arc::new(Schema::new(fields));
    mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}

/// `dp_histogram(source, output, epsilon, node [, options])`.
#[derive(Debug)]
pub struct Histogram;

impl MethodSpec for Histogram {
    /// (epsilon, node levels, parsed options).
    type Params = (f64, Vec<u8>, CallOptions);
    const NAME: &'static str = H;
    const SIGNATURE: &'static str = "dp_histogram(source, output, epsilon, node [, 'guarantee=pure|approx, delta=1e-9, values=a|b, floor=3, diagnostics=true, seed=42'])";
    const ARITY: (usize, usize) = (4, 5);

    fn parse(&self, a: &Args) -> Result<Self::Params> {
        let epsilon = a.f64(2, "epsilon")?;
        epsilon_units(H, epsilon)?;
        let node = a.str(3, "node")?;
        let call = CallOptions::histogram(epsilon, &a.opt_str(4, "options")?.unwrap_or_default())?;
        let levels = parse_levels(&node).ok_or_else(|| {
            AnonError::argument(H, "node", format!("'{node}' is not a list of levels such as '1,0,2'"))
        })?;
        Ok((epsilon, levels, call))
    }

    fn deterministic(&self, (_, _, call): &Self::Params) -> bool {
        call.seed().is_some()
    }

    fn side_tables(&self, _: &Self::Params) -> Vec<&'static str> {
        vec!["report", "diagnostics"]
    }

    fn charge(&self, (epsilon, _, call): &Self::Params) -> Result<Option<(Charge, String)>> {
        charge(call, grid_units(*epsilon), &format!("counts={epsilon}"))
    }

    fn seed(&self, (_, _, call): &Self::Params) -> Option<u64> {
        call.seed()
    }

    fn run(&self, c: &Call<'_>, (epsilon, levels, call): &Self::Params) -> Result<Outputs> {
        let (res, published) = block_on(call::histogram_release(c.ctx, c.source, c.meta, levels, *epsilon, call))?;
        let ms = c.elapsed_ms();
        let release = mem_table(published.schema.clone(), published.batches.clone())?;
        let guarantee = call.guarantee();
        let seeded = call.seed().is_some();
        let out = Outputs::new(release).with_report(
            c,
            H,
            vec![
                ("guarantee", Text(statement(guarantee, seeded))),
                ("epsilon", Float(res.epsilon)),
                ("delta", Float(guarantee.delta())),
                ("threshold", OptInt(threshold(res.mode))),
                ("node", Text(format_levels(&res.histogram.levels))),
                ("released_cells", Int(res.histogram.cells.len() as i64)),
                ("released_records", Int(released_cells(&published))),
            ],
        )?;
        if !call.diagnostics {
            return Ok(out);
        }
        let mut cells = realized_cells(&res.realized, res.histogram.released_records);
        cells.push(("time_ms", Float(ms)));
        Ok(out.with("diagnostics", one_row(cells)?))
    }
}
