//! Synthetic RT-datasets: patients with demographics and a set of ICD-9-CM diagnosis codes,
//! shaped like the two datasets of the ArtUC paper (Table 5), which are not public.
//!
//! | preset | records | demographics | distinct codes | max / avg codes per record |
//! |---|---|---|---|---|
//! | `ehrd` | 208,387 | 2: `age`, `gender` | 13,963 | 185 / 16.21 |
//! | `informs` | 36,553 | 5: `month_of_birth`, `year_of_birth`, `race`, `years_of_schooling`, `income` | 619 | 17 / 4.27 |
//!
//! Every table has `patient_id` (Int64, identifier), its demographics (quasi-identifiers,
//! each with a hierarchy) and `codes` (List<Utf8>, set-valued, ICD-9-CM leaves written without
//! the dot as in the CMS files, e.g. `4019`; no code twice in a record; sorted in ICD order).
//!
//! The generative model (docs/datasets.md, "Generative model", has the details):
//! - **Vocabulary.** Leaf popularity is a nested Zipf law (sections in a chapter, 3-digit
//!   categories in a section, leaves in a category, in a fixed pseudo-random rank order)
//!   weighted by preset-specific chapter weights, plus a boost for ~30 codes that are frequent
//!   in real records (`4019`, `2724`, `25000`, ...). A preset's vocabulary is its most popular
//!   leaves: 13,963 of the 14,567 for EHRD; 619 concentrated in the chapters of an outpatient
//!   survey for Informs (no E codes, no perinatal codes).
//! - **Codes follow the patient.** Chapter frequencies depend on age band and sex (circulatory
//!   and neoplasms rise with age, respiratory and infectious peak in childhood, injuries in
//!   young men, ...); pregnancy codes only for females aged 13–49, perinatal and liveborn codes
//!   only at age 0, male and female genital codes only for that sex.
//! - **Comorbidity.** A record is built from clusters: a section drawn from the patient's
//!   distribution, then a geometric number of codes from it.
//! - **Record sizes.** 1 + a negative binomial whose mean grows with age (and, for Informs,
//!   low income), truncated to the preset's maximum; its scale is set by bisection so the mean
//!   is the preset's; exactly one record has the maximum.
//! - **Coverage.** Codes of the vocabulary that no record drew replace, in random records that
//!   may carry them, codes that occur elsewhere too, so the number of distinct codes is exactly
//!   the vocabulary's size.
//!
//! With `records = n` other than the preset's size N, the distributions stay the same and the
//! distinct-code target follows Heaps' law: `round(V * sqrt(n / N))` for n < N (at most half the
//! number of code slots), V for n >= N.

mod codes;
mod constraints;
mod demographics;
mod icd9;

pub use constraints::{UC_SETS, utility_constraints};
pub(crate) use demographics::{RACE_GROUPS, RACES};
pub use icd9::{CHAPTERS, ICD9_LEAVES, Restriction, icd9_hierarchy};

use super::DatasetTable;
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind, widths_hierarchy};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{ArrayRef, Int64Array, ListArray, StringArray, StringBuilder};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use rand::{SeedableRng, rngs::StdRng};
use std::sync::Arc;

/// EHRD's [`Spec::head`] and [`Spec::gamma`]: how concentrated its code frequencies are. Real ICU
/// patients' codes put 49 % of their occurrences on codes seen at least 5 times per 100
/// patients; the plain law (1, 1) gives 13-14 %, so clusters of a table generated with it share
/// few codes and ArtUC suppresses far more than on real codes. (2, 2.25) gives 48.6-48.7 %
/// at 52,097 and 208,387 patients (tests/rt_datasets.rs), hypertension (4019) in 23 % of the
/// patients, and leaves the share of a record's code pairs within one section at 9 %.
const HEAD_EHRD: f64 = 2.0;
const GAMMA_EHRD: f64 = 2.25;

/// Rows per record batch.
pub(crate) const BATCH_ROWS: usize = 65_536;
/// Upper bound on `rows`, so a typo cannot exhaust memory (EHRD: ~100 bytes per record).
pub(crate) const MAX_RECORDS: usize = 5_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtPreset {
    Ehrd,
    Informs,
}

/// The characteristics of a dataset as Table 5 of the ArtUC paper reports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Table5 {
    pub records: usize,
    pub demographics: usize,
    pub distinct_codes: usize,
    pub max_codes: usize,
    pub avg_codes: f64,
}

/// A preset: its Table 5 targets and the parameters of the code model.
pub(crate) struct Spec {
    records: usize,
    distinct_codes: usize,
    max_codes: usize,
    avg_codes: f64,
    /// Shape of the negative binomial of record sizes (smaller = more skewed).
    nb_shape: f64,
    /// Mean number of codes drawn from one section at a time.
    cluster_mean: f64,
    /// Share of code occurrences of each chapter before age and sex effects.
    chapters: [f64; 19],
    /// Multiplier of the frequent codes' boost ([`icd9::COMMON_CODES`]): how concentrated the
    /// code frequencies are (see [`icd9::base_weights`]).
    head: f64,
    /// Exponent on the nested Zipf popularity within a chapter (1 = the plain law).
    gamma: f64,
}

impl RtPreset {
    /// Table name (`ehrd`, `informs`).
    pub fn name(self) -> &'static str {
        match self {
            RtPreset::Ehrd => "ehrd",
            RtPreset::Informs => "informs",
        }
    }

    /// Table 5 of the ArtUC paper.
    pub fn table5(self) -> Table5 {
        let s = self.spec();
        Table5 {
            records: s.records,
            demographics: self.demographics().len(),
            distinct_codes: s.distinct_codes,
            max_codes: s.max_codes,
            avg_codes: s.avg_codes,
        }
    }

    /// The demographic columns, in table order.
    pub(crate) fn demographics(self) -> &'static [&'static str] {
        match self {
            RtPreset::Ehrd => &["age", "gender"],
            RtPreset::Informs => &["month_of_birth", "year_of_birth", "race", "years_of_schooling", "income"],
        }
    }

    /// Number of distinct codes the generator aims at for `records` records (the preset's
    /// own number at its own size; Heaps' law below it).
    pub fn distinct_target(self, records: usize) -> usize {
        let s = self.spec();
        if records >= s.records {
            return s.distinct_codes;
        }
        let heaps = (s.distinct_codes as f64 * (records as f64 / s.records as f64).sqrt()).round() as usize;
        let slots = (records as f64 * s.avg_codes / 2.0) as usize;
        heaps.min(slots).clamp(1, s.distinct_codes)
    }

    pub(crate) fn spec(self) -> Spec {
        match self {
            RtPreset::Ehrd => Spec {
                records: 208_387,
                distinct_codes: 13_963,
                max_codes: 185,
                avg_codes: 16.21,
                nb_shape: 1.3,
                cluster_mean: 2.2,
                // A university medical center's records: every chapter.
                chapters: [3., 5., 9., 3., 6., 7., 13., 6., 6., 5., 3., 3., 6., 1., 2., 9., 6., 9., 3.],
                head: HEAD_EHRD,
                gamma: GAMMA_EHRD,
            },
            RtPreset::Informs => Spec {
                records: 36_553,
                distinct_codes: 619,
                max_codes: 17,
                avg_codes: 4.27,
                nb_shape: 2.0,
                cluster_mean: 1.4,
                // Conditions reported in a household survey: chronic and common acute
                // conditions, few V codes, no perinatal or external-cause codes.
                chapters: [2., 2., 10., 1., 10., 9., 14., 14., 5., 4., 1., 4., 12., 0.3, 0., 8., 4., 1., 0.],
                head: 1.0,
                gamma: 1.0,
            },
        }
    }
}

/// Who may carry an ICD-9-CM leaf code (None when the code is not a leaf).
pub fn code_restriction(code: &str) -> Option<Restriction> {
    let t = icd9::table();
    let h = icd9_hierarchy().ok()?;
    let i = h.leaf_of_label(code)? as usize;
    t.restriction.get(i).copied()
}

/// Generate a preset. `records`: None = the preset's size, Some(n) = n records (same
/// distributions; distinct-code target [`RtPreset::distinct_target`]). Deterministic per seed.
pub fn rt_dataset(preset: RtPreset, records: Option<usize>, seed: u64) -> Result<DatasetTable> {
    let spec = preset.spec();
    let n = match records {
        None => spec.records,
        Some(0) => {
            return Err(AnonError::argument("load_dataset", "rows", "must be at least 1 record"));
        }
        Some(n) if n > MAX_RECORDS => {
            return Err(AnonError::argument(
                "load_dataset",
                "rows",
                format!("{n} records is more than the limit of {MAX_RECORDS} for '{}'", preset.name()),
            ));
        }
        Some(n) => n,
    };
    let t = icd9::table();
    let base = icd9::base_weights(t, &spec.chapters, spec.head, spec.gamma);
    // Informs-like patients are aged 1 or more: no newborn-only codes in its vocabulary.
    let vocab = codes::Vocab::new(t, &base, preset.distinct_target(n), |i| {
        preset == RtPreset::Ehrd || t.restriction[i] != Restriction::Newborn
    });
    let profiles = codes::Profiles::new(t, &base, &vocab);

    let salt = match preset {
        RtPreset::Ehrd => 0xE4D0,
        RtPreset::Informs => 0x1F0A,
    };
    let mut rng_demo = StdRng::seed_from_u64(mix(seed, salt, 1));
    let mut rng_size = StdRng::seed_from_u64(mix(seed, salt, 2));
    let mut rng_code = StdRng::seed_from_u64(mix(seed, salt, 3));
    let demo = demographics::generate(preset, n, &mut rng_demo);
    let plant = n as f64 * spec.avg_codes >= 50.0 * spec.max_codes as f64;
    let sizes = codes::record_sizes(&spec, preset, &demo, plant, &mut rng_size);
    let sets = codes::generate(&spec, &vocab, &profiles, &demo, &sizes, &mut rng_code);

    let batches = to_batches(preset, t, &vocab, &demo, &sets)?;
    Ok(DatasetTable { name: preset.name().into(), batches, meta: meta(preset)? })
}

/// A seed for one stage of one preset (SplitMix64 finalizer).
fn mix(seed: u64, salt: u64, stage: u64) -> u64 {
    let mut z = seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stage.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn schema(preset: RtPreset) -> SchemaRef {
    let mut fields = vec![Field::new("patient_id", DataType::Int64, false)];
    for &c in preset.demographics() {
        let ty = if c == "gender" || c == "race" { DataType::Utf8 } else { DataType::Int64 };
        fields.push(Field::new(c, ty, false));
    }
    fields.push(Field::new("codes", DataType::List(item_field()), false));
    Arc::new(Schema::new(fields))
}

fn item_field() -> FieldRef {
    Arc::new(Field::new("item", DataType::Utf8, false))
}

fn to_batches(
    preset: RtPreset,
    t: &icd9::Icd9,
    vocab: &codes::Vocab,
    d: &demographics::Demographics,
    sets: &codes::CodeSets,
) -> Result<Vec<RecordBatch>> {
    let schema = schema(preset);
    let n = sets.offsets.len() - 1;
    let mut batches = Vec::with_capacity(n.div_ceil(BATCH_ROWS));
    let mut leaf_buf: Vec<u32> = Vec::new();
    for lo in (0..n).step_by(BATCH_ROWS) {
        let hi = (lo + BATCH_ROWS).min(n);
        let ints = |v: &[i64]| -> ArrayRef { Arc::new(Int64Array::from(v[lo..hi].to_vec())) };
        let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values((lo as i64 + 1)..=(hi as i64)))];
        match preset {
            RtPreset::Ehrd => {
                cols.push(ints(&d.age));
                let g = d.female[lo..hi].iter().map(|&f| if f { "Female" } else { "Male" });
                cols.push(Arc::new(StringArray::from_iter_values(g)));
            }
            RtPreset::Informs => {
                cols.push(ints(&d.month));
                cols.push(ints(&d.year));
                let r = d.race[lo..hi].iter().map(|&r| RACES[r as usize]);
                cols.push(Arc::new(StringArray::from_iter_values(r)));
                cols.push(ints(&d.schooling));
                cols.push(ints(&d.income));
            }
        }
        let (a, b) = (sets.offsets[lo], sets.offsets[hi]);
        let mut values = StringBuilder::with_capacity(b - a, (b - a) * 5);
        let mut offsets: Vec<i32> = Vec::with_capacity(hi - lo + 1);
        offsets.push(0);
        for r in lo..hi {
            leaf_buf.clear();
            leaf_buf.extend(sets.items[sets.offsets[r]..sets.offsets[r + 1]].iter().map(|&j| vocab.leaves[j as usize]));
            leaf_buf.sort_unstable();
            for &leaf in &leaf_buf {
                values.append_value(t.code[leaf as usize]);
            }
            offsets.push((sets.offsets[r + 1] - a) as i32);
        }
        let list =
            ListArray::try_new(item_field(), OffsetBuffer::new(offsets.into()), Arc::new(values.finish()), None)?;
        cols.push(Arc::new(list));
        batches.push(RecordBatch::try_new(schema.clone(), cols)?);
    }
    Ok(batches)
}

fn meta(preset: RtPreset) -> Result<TableMeta> {
    let mut meta = TableMeta::default();
    meta.roles.push(("patient_id".into(), Role::Identifier));
    let hierarchies: Vec<Hierarchy> = match preset {
        RtPreset::Ehrd => vec![
            // 6-, 12-, 24- and 48-year bands: the 12- and 24-year bands are those of the
            // paper's utility constraints (Table 6a).
            widths_hierarchy("age", 0, demographics::EHRD_MAX_AGE, &[6, 12, 24, 48])?,
            categorical("gender", &[("Male", "*"), ("Female", "*")])?,
        ],
        RtPreset::Informs => vec![
            offset_bands("month_of_birth", 1, 12, &[3, 6])?,
            // Bands from 1918, as the paper's utility constraints (Table 6b: [1918:1938)).
            offset_bands("year_of_birth", 1918, demographics::INFORMS_YEAR - 1, &[5, 10, 20])?,
            categorical("race", &RACES.iter().zip(RACE_GROUPS).map(|(r, g)| (*r, g)).collect::<Vec<_>>())?,
            widths_hierarchy("years_of_schooling", 0, 17, &[2, 6])?,
            widths_hierarchy("income", 0, 199, &[10, 50, 100])?,
        ],
    };
    for h in hierarchies {
        let col = h.attribute().to_string();
        meta.roles.push((col.clone(), Role::QuasiIdentifier));
        meta.hierarchies.insert(col, Arc::new(h));
    }
    meta.roles.push(("codes".into(), Role::SetValued));
    meta.hierarchies.insert("codes".into(), icd9_hierarchy()?);
    Ok(meta)
}

/// A two-level categorical hierarchy `leaf; group; *`, or `leaf; *` when every group is `*`.
fn categorical(attribute: &str, rows: &[(&str, &str)]) -> Result<Hierarchy> {
    let mut b = HierarchyBuilder::new(attribute, HierarchyKind::Categorical);
    for (i, (leaf, group)) in rows.iter().enumerate() {
        let mut f = vec![leaf.to_string(), group.to_string()];
        if *group != "*" {
            f.push("*".into());
        }
        b.row(i + 1, f);
    }
    b.build()
}

/// Numeric bands aligned at `lo` (not at multiples of the width, as `widths_hierarchy` does),
/// the last band of each level clipped to `hi`: e.g. months 1-3, 4-6, ...; 1-6, 7-12.
fn offset_bands(attribute: &str, lo: i64, hi: i64, widths: &[i64]) -> Result<Hierarchy> {
    let mut b = HierarchyBuilder::new(attribute, HierarchyKind::Numeric);
    for (line, v) in (lo..=hi).enumerate() {
        let mut f = vec![v.to_string()];
        for &w in widths {
            let start = lo + (v - lo) / w * w;
            let end = (start + w - 1).min(hi);
            f.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        }
        f.push("*".into());
        b.row(line + 1, f);
    }
    b.domain(lo as f64, hi as f64);
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::AsArray;

    #[test]
    fn zero_records_is_an_argument_error() {
        let e = rt_dataset(RtPreset::Informs, Some(0), 1).unwrap_err().to_string();
        assert!(e.contains("load_dataset") && e.contains("rows"), "{e}");
        let e = rt_dataset(RtPreset::Ehrd, Some(MAX_RECORDS + 1), 1).unwrap_err().to_string();
        assert!(e.contains("rows"), "{e}");
    }

    #[test]
    fn small_tables_have_the_schema_and_hierarchies() {
        for preset in [RtPreset::Ehrd, RtPreset::Informs] {
            let ds = rt_dataset(preset, Some(500), 7).unwrap();
            assert_eq!(ds.name, preset.name());
            assert_eq!(ds.num_rows(), 500);
            let schema = ds.batches[0].schema();
            assert_eq!(schema.fields().len(), 2 + preset.demographics().len());
            assert_eq!(ds.meta.quasi_identifiers(), preset.demographics());
            ds.meta.check_complete(preset.name()).unwrap();
            assert_eq!(ds.meta.columns_with(Role::SetValued), vec!["codes"]);
            assert_eq!(ds.meta.columns_with(Role::Identifier), vec!["patient_id"]);
        }
    }

    #[test]
    fn tiny_tables_still_give_every_record_codes() {
        for preset in [RtPreset::Ehrd, RtPreset::Informs] {
            for n in [1, 2, 3, 10, 57] {
                let ds = rt_dataset(preset, Some(n), n as u64).unwrap();
                assert_eq!(ds.num_rows(), n);
                let list = ds.batches[0].column(ds.batches[0].num_columns() - 1).as_list::<i32>().clone();
                let max = preset.table5().max_codes;
                for r in 0..n {
                    let len = list.value_length(r) as usize;
                    assert!((1..=max).contains(&len), "{} n={n}: record {r} has {len} codes", preset.name());
                }
            }
        }
    }

    #[test]
    fn offset_bands_start_at_lo_and_clip_at_hi() {
        let h = offset_bands("year_of_birth", 1918, 2000, &[5, 10, 20]).unwrap();
        let leaf = h.leaf_of_value(1937.0).unwrap();
        assert_eq!(h.label(3, h.up(3)[leaf as usize]), "1918-1937");
        let leaf = h.leaf_of_value(2000.0).unwrap();
        assert_eq!(h.label(1, h.up(1)[leaf as usize]), "1998-2000");
        assert_eq!(h.domain(), Some((1918.0, 2000.0)));
        let m = offset_bands("month_of_birth", 1, 12, &[3, 6]).unwrap();
        assert_eq!(m.width(1), 4);
        assert_eq!(m.width(2), 2);
    }

    #[test]
    fn distinct_targets_scale_with_heaps_law() {
        assert_eq!(RtPreset::Ehrd.distinct_target(208_387), 13_963);
        assert_eq!(RtPreset::Ehrd.distinct_target(1_000_000), 13_963);
        assert!((309..=310).contains(&RtPreset::Informs.distinct_target(36_553 / 4)));
        assert_eq!(RtPreset::Informs.distinct_target(1), 2);
    }
}
