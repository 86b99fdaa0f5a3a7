//! What an `ipa_release` or `dp_histogram` call charges, promises and diagnoses, apart from
//! how the SQL layer lays it out (src/sql/ipa_fn.rs only names the cells):
//!
//! - the ledger charge: ε on the exact grid (the paper's four parts, or selection and counts),
//!   δ in approx mode, labelled when the guarantee is the paper's (none) or the call is seeded;
//! - the report's guarantee statement (a seeded call promises nothing) and the least count a
//!   released cell can have;
//! - the diagnostics of every candidate node, with its selection probability: Eq. 12's for the
//!   paper's algorithm, the sound selection's otherwise. Diagnostics read the original; they are
//!   opt-in and never published.

use super::call::{CallOptions, Mode};
use super::guarantee::{Guarantee, NOT_DP};
use super::histogram::CellNoise;
use super::search::choice_mechanism;
use super::sound::DpRelease;
use super::{IpaConfig, IpaResult};
use crate::dp::ledger::{Charge, grid_units};
use crate::error::Result;

impl CallOptions {
    /// Whether the call is seeded (tests only: not private, and its report says so).
    pub(crate) fn seeded(&self) -> bool {
        self.seed().is_some()
    }

    /// The most rows one privacy unit contributes (1 without `privacy_unit=`): the factor from
    /// the mechanisms' per-row ε to the ε a person is protected by and the ledger is charged.
    pub(crate) fn rows_per_unit(&self) -> u64 {
        self.unit.as_ref().map_or(1, |u| u.1)
    }

    /// `ipa_release`'s ledger charge and its parts: the paper's four budgets, or the sound
    /// mode's selection and counts.
    pub(crate) fn ipa_charge(&self) -> Result<(Charge, String)> {
        let (units, parts) = match &self.mode {
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
            Mode::Adaptive(c) => {
                let b = c.budget()?;
                let steps: u64 = b.steps.iter().map(|&e| grid_units(e)).sum();
                // The automatic plan's root choice (0 for a declared root) is charged too.
                let root = grid_units(b.root_count) + grid_units(b.root_choice);
                let units = root + steps + grid_units(b.coarse) + grid_units(b.cells);
                // The automatic plan's steps are chosen after the charge (from the privately
                // chosen root), so its partition is one part here: naming a count would say
                // "1 steps" of a release that takes several.
                let steps = if c.is_automatic() {
                    "split over the automatic plan's steps".to_string()
                } else {
                    format!("{} steps of {}", b.steps.len(), b.steps[0])
                };
                let parts = format!(
                    "root={}, partition={} ({steps}), coarse={}, cells={}",
                    b.root(),
                    b.partition(),
                    b.coarse,
                    b.cells
                );
                (units, parts)
            }
        };
        self.charge("ipa_release", units, &parts)
    }

    /// `dp_histogram`'s ledger charge: all of ε on the counts.
    pub(crate) fn histogram_charge(&self, epsilon: f64) -> Result<(Charge, String)> {
        let per_row = epsilon / self.rows_per_unit() as f64;
        self.charge("dp_histogram", grid_units(per_row), &format!("counts={per_row}"))
    }

    /// ε on the grid, δ in approx mode, and the ledger's description of the charge.
    fn charge(&self, function: &str, units: u64, parts: &str) -> Result<(Charge, String)> {
        let guarantee = self.guarantee();
        let seeded = self.seeded();
        let mut c = Charge::epsilon(units.saturating_mul(self.rows_per_unit())).seeded(seeded);
        let mut text = format!("guarantee={}, {parts}", guarantee.name());
        if let Some((column, rows)) = &self.unit {
            text.push_str(&format!(" per row, privacy_unit={column}, max_rows_per_unit={rows} (charged {rows} x)"));
        }
        if let Guarantee::Approx { delta } = guarantee {
            c = c.with_delta(function, delta)?;
            text.push_str(&format!(", delta={delta:e}"));
        }
        if guarantee == Guarantee::Paper {
            c = c.guarantee(NOT_DP);
            text.push_str(&format!(", {NOT_DP}"));
        }
        if seeded {
            text.push_str(", seeded (not private)");
        }
        Ok((c, text))
    }

    /// The report's guarantee text: a seeded call promises nothing (the seed is not written).
    pub(crate) fn statement(&self) -> String {
        let s = match &self.unit {
            Some((column, rows)) => format!(
                "epsilon-differentially private (add/remove one privacy unit '{column}' with at most {rows} rows)"
            ),
            None => self.guarantee().statement(),
        };
        if self.seeded() { format!("{NOT_DP}: seeded call (tests only), otherwise {s}") } else { s }
    }
}

/// approx's publication threshold τ, or pure's floor: the least published count of a cell.
pub(crate) fn least_published(mode: CellNoise) -> i64 {
    match mode {
        CellNoise::Threshold(t) | CellNoise::Pure { floor: t } => t as i64,
    }
}

/// Every candidate node of a call (exact statistics of the original: diagnostics only): its
/// levels, named columns of numbers, and whether it was the one released.
pub(crate) struct NodeDiagnostics {
    pub(crate) levels: Vec<Vec<u8>>,
    pub(crate) columns: Vec<(&'static str, Vec<f64>)>,
    pub(crate) chosen: Vec<bool>,
}

impl NodeDiagnostics {
    /// The paper's nodes: their IL parts and Eq. 12's probability of being chosen.
    pub(crate) fn paper(res: &IpaResult, config: &IpaConfig) -> Result<Self> {
        let s = &res.scores;
        let probabilities = choice_mechanism(s, config.budget()?.candidates)?.probabilities();
        Ok(NodeDiagnostics {
            levels: s.iter().map(|x| x.levels.clone()).collect(),
            columns: vec![
                ("ncp", s.iter().map(|x| x.loss.ncp).collect()),
                ("emd", s.iter().map(|x| x.loss.emd).collect()),
                ("rate", s.iter().map(|x| x.loss.rate).collect()),
                ("il", s.iter().map(|x| x.loss.il()).collect()),
                ("probability", probabilities),
            ],
            chosen: s.iter().map(|x| x.node == res.node).collect(),
        })
    }

    /// The sound selection's candidates: their utility terms and selection probability.
    pub(crate) fn sound(res: &DpRelease) -> Self {
        let c = &res.candidates;
        NodeDiagnostics {
            levels: c.iter().map(|x| x.levels.clone()).collect(),
            columns: vec![
                ("cells", c.iter().map(|x| x.cells as f64).collect()),
                ("ncp_total", c.iter().map(|x| x.ncp_total).collect()),
                ("noise_total", c.iter().map(|x| x.noise_total).collect()),
                ("class_total", c.iter().map(|x| x.class_total).collect()),
                ("utility", c.iter().map(|x| x.utility).collect()),
                ("probability", res.probabilities.clone()),
            ],
            chosen: (0..c.len()).map(|i| i == res.chosen).collect(),
        }
    }
}
