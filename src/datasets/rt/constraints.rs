//! The utility constraint sets of the ArtUC paper's experiments (Table 6), adapted to the
//! synthetic demographics, as tables in the shape `verify_release(..., 'constraints=T')` and
//! `artuc` read (docs/verify.md): per numeric demographic `q`, `q_lo`/`q_hi` (inclusive); per
//! categorical one, a node label; `codes` a list of code-hierarchy node labels; plus a
//! `constraint` name column (`u1`, `u2`, ... as in the paper) that readers ignore.
//!
//! Reading of "u1={[0:12),All,Chapter1}, u2={[12:24),All,Chapter2}, ...": the constraint list
//! pairs the i-th demographic tuple with the i-th code set, cycling the shorter list, so that
//! every tuple and every code set occurs (coverage, Section 3.3). The pairing itself does not
//! matter: record grouping (Step 1) depends only on the demographic tuples, and Definition 9
//! lets any constraint's code set serve any record (GenDiag, `verify_release`), so every
//! covering pairing gives the same groups, the same code sets and the same release. Table 6b's
//! Informs sets pair several tuples with Chapter1, which only this reading explains.
//! docs/datasets.md has the adaptation of the bands.

use super::RtPreset;
use super::demographics::{EHRD_MAX_AGE, INFORMS_YEAR};
use super::icd9::icd9_hierarchy;
use crate::error::{AnonError, Result};
use crate::methods::artuc::build::{Elem, bands, constraints_batch};
use datafusion::arrow::array::RecordBatch;

/// The names of the nine sets of each dataset.
pub const UC_SETS: [&str; 9] = ["UC1", "UC2", "UC3", "UC4", "UC5", "UC6", "UC7", "UC8", "UC9"];

/// Level of the ICD-9 hierarchy (`leaf;3-digit;section;chapter;*`) of UC1, UC2, UC3's code
/// sets; UC4–6 and UC7–9 repeat the pattern.
const CODE_LEVELS: [usize; 3] = [3, 2, 1];

/// The index 0..9 of a set name (`UC1`..`UC9`, case-insensitive).
fn set_index(set: &str) -> Result<usize> {
    UC_SETS
        .iter()
        .position(|s| s.eq_ignore_ascii_case(set.trim()))
        .ok_or_else(|| AnonError::argument("load_constraints", "set", format!("'{set}' is not one of UC1..UC9")))
}

/// Table 6a: age bands of 12, 24 years, or [0:50) and [50:150) (clipped to the synthetic
/// maximum age 95), gender All.
fn ehrd_tuples(group: usize) -> Vec<Vec<Elem>> {
    let ages = match group {
        0 => bands(0, EHRD_MAX_AGE, 12),
        1 => bands(0, EHRD_MAX_AGE, 24),
        _ => vec![(0, 49), (50, EHRD_MAX_AGE)],
    };
    ages.into_iter().map(|(lo, hi)| vec![Elem::Range(lo, hi), Elem::Node("*".into())]).collect()
}

/// Table 6b: year-of-birth bands of 20 years from 1918, 50 years, or all of 1918–2000, crossed
/// with income bands (the paper's varying third element); month, race and schooling All.
fn informs_tuples(group: usize) -> Vec<Vec<Elem>> {
    let last = INFORMS_YEAR - 1;
    let years = match group {
        0 => bands(1918, last, 20),
        1 => bands(1918, last, 50),
        _ => vec![(1918, last)],
    };
    let mut out = Vec::new();
    for (ylo, yhi) in years {
        // Two income bands: [0:50) and [50:200). Finer high-income bands would leave fewer
        // than k records in some cohorts (children have no income), which Step 2 rejects.
        for (ilo, ihi) in [(0, 49), (50, 199)] {
            out.push(vec![
                Elem::Range(1, 12),
                Elem::Range(ylo, yhi),
                Elem::Node("*".into()),
                Elem::Range(0, 17),
                Elem::Range(ilo, ihi),
            ]);
        }
    }
    out
}

/// The constraint set `set` (UC1..UC9) of `preset` as one record batch.
pub fn utility_constraints(preset: RtPreset, set: &str) -> Result<RecordBatch> {
    let i = set_index(set)?;
    let tuples = match preset {
        RtPreset::Ehrd => ehrd_tuples(i / 3),
        RtPreset::Informs => informs_tuples(i / 3),
    };
    let h = icd9_hierarchy()?;
    let level = CODE_LEVELS[i % 3];
    let code_sets: Vec<Vec<String>> = (0..h.width(level)).map(|c| vec![h.label(level, c as u32).to_string()]).collect();
    let n = tuples.len().max(code_sets.len());
    let rows: Vec<(&[Elem], &[String])> =
        (0..n).map(|r| (tuples[r % tuples.len()].as_slice(), code_sets[r % code_sets.len()].as_slice())).collect();
    constraints_batch(preset.demographics(), "codes", &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_set_lists_every_band_and_code_set() {
        let b = utility_constraints(RtPreset::Ehrd, "uc1").unwrap();
        // 19 ICD-9 chapters (17 + V + E) outnumber the 8 age bands.
        let h = icd9_hierarchy().unwrap();
        assert_eq!(b.num_rows(), h.width(3).max(8));
        assert_eq!(b.schema().field(1).name(), "age_lo");
        let b = utility_constraints(RtPreset::Ehrd, "UC3").unwrap();
        assert_eq!(b.num_rows(), h.width(1));
        let b = utility_constraints(RtPreset::Informs, "UC7").unwrap();
        assert_eq!(b.num_rows(), h.width(3));
        assert!(utility_constraints(RtPreset::Ehrd, "UC10").unwrap_err().to_string().contains("set"));
    }

    #[test]
    fn bands_clip_the_last() {
        assert_eq!(bands(0, 95, 24), vec![(0, 23), (24, 47), (48, 71), (72, 95)]);
        assert_eq!(bands(1918, 2000, 50), vec![(1918, 1967), (1968, 2000)]);
    }
}
