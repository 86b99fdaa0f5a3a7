//! Which of the paper's algorithms a call runs: ArtUC (Algorithm 1), the any-time variant
//! (Algorithm 2, with its trajectory and the released step) or the Baseline.

use super::{ArtucConfig, ArtucResult, ConstraintSet, RtTable, Trajectory, anonymize, anytime, baseline};
use crate::error::{AnonError, Result};
use crate::methods::options;
use crate::progress::Progress;

const F: &str = "artuc";

/// Which algorithm of the paper runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Variant {
    Artuc,
    /// The step to release, or the last one within delta and epsilon.
    Anytime(Option<usize>),
    Baseline,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Artuc => "artuc",
            Variant::Anytime(_) => "anytime",
            Variant::Baseline => "baseline",
        }
    }

    /// Split an options string into the method's own options and the variant (`variant`,
    /// `step`).
    pub fn split_options(opts: &str) -> Result<(String, Variant)> {
        let (mut rest, mut variant, mut step) = (Vec::new(), Variant::Artuc, None);
        for (k, v) in options::pairs(F, opts)? {
            match k.as_str() {
                "variant" => {
                    variant = match v.to_ascii_lowercase().as_str() {
                        "artuc" => Variant::Artuc,
                        "anytime" => Variant::Anytime(None),
                        "baseline" => Variant::Baseline,
                        _ => {
                            return Err(AnonError::argument(
                                F,
                                "variant",
                                format!("'{v}' is not artuc, anytime or baseline"),
                            ));
                        }
                    }
                }
                "step" => {
                    step = Some(v.parse::<usize>().map_err(|_| {
                        AnonError::argument(F, "step", format!("'{v}' is not a step number of the trajectory"))
                    })?)
                }
                _ => rest.push(format!("{k}={v}")),
            }
        }
        match (variant, step) {
            (Variant::Anytime(_), s) => Ok((rest.join(", "), Variant::Anytime(s))),
            (_, Some(_)) => Err(AnonError::argument(F, "step", "only the anytime variant has steps (variant=anytime)")),
            (v, None) => Ok((rest.join(", "), v)),
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
                    None => traj.choose(config.delta, config.epsilon).ok_or_else(|| no_step(&traj, config))?,
                };
                let res = traj.release(table, cs, step)?;
                Ok((res, Some(traj), Some(step)))
            }
        }
    }
}

/// Why no step of the trajectory can be released, with the first step's measures.
fn no_step(traj: &Trajectory, config: &ArtucConfig) -> AnonError {
    let detail = traj.steps.first().map_or("the trajectory is empty".to_string(), |s| {
        format!(
            "before any merge NCP is {:.4} (delta = {}) and {} codes are suppressed (epsilon = {})",
            s.ncp, config.delta, s.suppressed_codes, config.epsilon
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
