//! Which of the paper's algorithms a call runs: ArtUC (Algorithm 1), the any-time variant
//! (Algorithm 2, with its trajectory and the released step) or the Baseline; and [`call`], the
//! one entry point from Arrow batches that the SQL function, `examples/artuc_scale` and
//! `benches/artuc.rs` all run, so a SQL call and a library call on the same rows in the same
//! order build the same table, constraint set and algorithm, and publish the same release.

use super::{
    ArtucConfig, ArtucResult, ConstraintSet, RtTable, Trajectory, anonymize, anytime, baseline,
    constraints_from_batches,
};
use crate::error::{AnonError, Result};
use crate::meta::TableMeta;
use crate::methods::options::{Kind, Options, Parsed, SEED, opt};
use crate::progress::Progress;
use datafusion::arrow::array::RecordBatch;

const F: &str = "artuc";

/// The SQL function's options: [`super::OPTIONS`] and the variant.
pub(crate) const SQL_OPTIONS: Options = Options {
    function: F,
    specs: &[
        SEED,
        super::PICK,
        super::WEIGHTS,
        super::SMALL_GROUPS,
        opt(
            "variant",
            Kind::Choice(&["artuc", "anytime", "baseline"]),
            "artuc",
            "Algorithm 1; Algorithm 2 with its trajectory (output_trajectory); or the paper's Baseline",
        ),
        opt("step", Kind::Int { min: 0, max: u64::MAX }, "", "the anytime variant's step to release"),
    ],
};

/// Which algorithm of the paper runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Variant {
    Artuc,
    /// The step to release, or the last one within delta and epsilon.
    Anytime(Option<usize>),
    Baseline,
}

impl Variant {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Artuc => "artuc",
            Variant::Anytime(_) => "anytime",
            Variant::Baseline => "baseline",
        }
    }

    /// The variant [`SQL_OPTIONS`] names (`variant`, `step`).
    pub(crate) fn of(o: &Parsed) -> Result<Variant> {
        let words = |v: &str| {
            crate::keyword::parse(
                &[
                    (Variant::Artuc, &["artuc"]),
                    (Variant::Anytime(None), &["anytime"]),
                    (Variant::Baseline, &["baseline"]),
                ],
                v,
            )
        };
        let step = o.int("step").map(|s| usize::try_from(s).unwrap_or(usize::MAX));
        match (o.choice("variant", words)?.unwrap_or(Variant::Artuc), step) {
            (Variant::Anytime(_), s) => Ok(Variant::Anytime(s)),
            (_, Some(_)) => Err(AnonError::argument(F, "step", "only the anytime variant has steps (variant=anytime)")),
            (v, None) => Ok(v),
        }
    }

    /// Run it; for the anytime variant also its trajectory and released step.
    pub fn run(
        self,
        table: &RtTable,
        cs: &ConstraintSet,
        config: &ArtucConfig,
        progress: &dyn Progress,
    ) -> Result<(ArtucResult, Option<Trajectory>, Option<usize>)> {
        match self {
            Variant::Artuc => Ok((anonymize(table, cs, config, progress)?, None, None)),
            Variant::Baseline => Ok((baseline(table, cs, config, progress)?, None, None)),
            Variant::Anytime(step) => {
                let traj = anytime(table, cs, config, 1.0, progress)?;
                let step = match step {
                    Some(s) => s,
                    None => traj.choose(config.km.delta, config.km.epsilon).ok_or_else(|| no_step(&traj, config))?,
                };
                let res = traj.release_cancellable(table, cs, step, progress)?;
                Ok((res, Some(traj), Some(step)))
            }
        }
    }
}

/// A table as a call reads it: its name, declarations and rows in order. ArtUC's result depends
/// on the order of the records (Step 6 draws them by index), so the batches must come in the
/// table's own order.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub name: &'a str,
    pub meta: &'a TableMeta,
    pub batches: &'a [RecordBatch],
}

/// What one call publishes: the encoded table the release is built from, the result, and for
/// the any-time variant its trajectory and the released step.
#[derive(Debug)]
pub struct Outcome {
    pub table: RtTable,
    pub result: ArtucResult,
    pub(crate) trajectory: Option<Trajectory>,
    pub(crate) step: Option<usize>,
}

/// One call: encode `source`, read the constraints table (`constraints`: its name and batches)
/// against it, and run `variant`.
pub fn call(
    source: Source<'_>,
    constraints: (&str, &[RecordBatch]),
    config: &ArtucConfig,
    variant: Variant,
    progress: &dyn Progress,
) -> Result<Outcome> {
    let table = RtTable::from_batches(source.name, source.meta, source.batches)?;
    let cs = ConstraintSet::new(&constraints_from_batches(constraints.0, &table, constraints.1)?, &table)?;
    let (result, trajectory, step) = variant.run(&table, &cs, config, progress)?;
    Ok(Outcome { table, result, trajectory, step })
}

/// Why no step of the trajectory can be released, with the first step's measures.
fn no_step(traj: &Trajectory, config: &ArtucConfig) -> AnonError {
    let detail = traj.steps.first().map_or("the trajectory is empty".to_string(), |s| {
        format!(
            "before any merge NCP is {:.4} (delta = {}) and {} codes are suppressed (epsilon = {})",
            s.ncp, config.km.delta, s.suppressed_codes, config.km.epsilon
        )
    });
    AnonError::argument(
        F,
        "delta",
        format!(
            "no step of the any-time trajectory is within delta and epsilon: {detail}; raise a limit or choose a step with step=N"
        ),
    )
}
