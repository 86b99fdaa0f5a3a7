//! Synthetic NPS-like patient table (`nps`), calibrated to the published answers of the
//! papers' queries Q1–Q4.
//!
//! The Korean National Patients Sample (HIRA 2011, 1,375,900 records in the h-ceiling paper)
//! is not public; only the answers of Q1–Q4 on it are (IPA paper, Tables 9–12). This generator
//! builds a table of the same shape whose Q1–Q4 answers reproduce the published `original`
//! column: the counts exactly, the averages to within 0.05 days.
//!
//! Columns (lower-case so unquoted SQL works): `age` Int64 0–99, `sex` 'M'/'F',
//! `length_of_stay` Int64 days 0–359 (0 = same-day visit; capped at 359 so the interval bands
//! 5/10/30/90 divide the domain evenly), `location` one of the 16 provinces and metropolitan
//! cities of 2011, `surgery` 'Y'/'N', `disease` one of [`DISEASES`] (lower-case, includes
//! `stroke`). Quasi-identifiers: age, sex, length_of_stay, location, surgery; sensitive: disease.
//!
//! **Age groups.** Q1/Q2 group by `FLOOR(age/5)*5`: label L covers ages L..L+4. The published
//! Q3/Q4 tables use 10-year labels; label L there covers ages L-5..L+4, i.e. the union of the
//! 5-year groups L-5 and L, computed as `FLOOR((age + 5)/10)*10` (e.g. Q3 label 10 = Q1 groups
//! 5 and 10: 1 + 2 = 3 male patients averaging 1.0 day). This is the reading consistent with
//! the k-anonymous column (bands 5–34, 35–64, 65–94). The cohort has no patients aged 0–4 or 95+.
//!
//! **Calibration cohort.** For each sex and 5-year group exactly the published number of
//! records with `disease = 'stroke' AND surgery = 'N'` (6,046 in all) is planted; their lengths
//! of stay are geometric draws adjusted so that each 10-year group's sum is
//! `round(published average × n)`. **Background.** Every other record is drawn from a model of a
//! 2011 Korean patient mix (older-skewed ages, age-dependent diseases, skewed stays, location by
//! population, surgery 10–20 %), in which no record is a stroke without surgery: background
//! stroke patients all have `surgery = 'Y'`. Cohort records sit at uniformly random positions.

use super::DatasetTable;
use crate::error::{AnonError, Result};
use crate::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind, widths_hierarchy};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use std::sync::Arc;

/// Records in the h-ceiling paper's NPS extract.
pub const DEFAULT_ROWS: usize = 1_375_900;
pub(crate) const DEFAULT_SEED: u64 = 20110101;
/// Rows per record batch.
pub(crate) const BATCH_ROWS: usize = 65_536;
/// Upper bound on `rows`, so a typo cannot exhaust memory (about 40 bytes per row).
pub(crate) const MAX_ROWS: usize = 50_000_000;
/// Longest length of stay, in days (0..=359: bands of 5, 10, 30 and 90 days divide it evenly).
pub(crate) const MAX_LOS: i64 = 359;
/// Band widths of the length-of-stay hierarchy (days).
pub(crate) const LOS_WIDTHS: [i64; 4] = [5, 10, 30, 90];
/// Band widths of the age hierarchy (years).
pub(crate) const AGE_WIDTHS: [i64; 3] = [5, 10, 20];

/// Published Q1 (male) and Q2 (female) answers on the original NPS: stroke patients without
/// surgery per 5-year group, groups 5, 10, ..., 90 (IPA paper, Tables 9–10).
pub(crate) const Q1_MALE: [u32; 18] = [1, 2, 1, 9, 12, 13, 27, 44, 104, 205, 341, 396, 472, 442, 430, 360, 197, 78];
pub(crate) const Q2_FEMALE: [u32; 18] = [0, 2, 7, 8, 4, 6, 10, 26, 63, 102, 178, 231, 279, 326, 457, 525, 445, 243];
/// Published Q3 (male) and Q4 (female) answers: average length of stay per 10-year group,
/// labels 10, 20, ..., 90 (IPA paper, Tables 11–12).
pub(crate) const Q3_MALE: [f64; 9] = [1.0, 1.4, 2.1, 2.7, 3.4, 4.0, 3.6, 4.3, 5.8];
pub(crate) const Q4_FEMALE: [f64; 9] = [3.0, 3.0, 7.7, 1.7, 2.7, 3.5, 3.5, 5.6, 8.0];

/// Size of the calibration cohort (3,134 male + 2,912 female); the smallest allowed `rows`.
pub(crate) fn cohort_size() -> usize {
    Q1_MALE.iter().chain(&Q2_FEMALE).map(|&c| c as usize).sum()
}

const SEX: [&str; 2] = ["M", "F"];
const SURGERY: [&str; 2] = ["N", "Y"];

/// Province or metropolitan city (2011), its region, and population in 2011 (millions).
pub(crate) const LOCATIONS: [(&str, &str, f64); 16] = [
    ("Seoul", "Capital area", 10.0),
    ("Busan", "Yeongnam", 3.5),
    ("Daegu", "Yeongnam", 2.5),
    ("Incheon", "Capital area", 2.8),
    ("Gwangju", "Honam", 1.5),
    ("Daejeon", "Chungcheong", 1.5),
    ("Ulsan", "Yeongnam", 1.1),
    ("Gyeonggi", "Capital area", 11.9),
    ("Gangwon", "Gangwon", 1.5),
    ("Chungbuk", "Chungcheong", 1.6),
    ("Chungnam", "Chungcheong", 2.1),
    ("Jeonbuk", "Honam", 1.9),
    ("Jeonnam", "Honam", 1.9),
    ("Gyeongbuk", "Yeongnam", 2.7),
    ("Gyeongnam", "Yeongnam", 3.3),
    ("Jeju", "Jeju", 0.6),
];

/// One disease of the background model, by position (so that each row of [`DISEASES`] is one
/// line): name; group; probability of surgery (stroke: 1, the background never holds a stroke
/// without surgery); mean length of stay (days) before the age and surgery factors; probability
/// that the patient is female; relative frequency among patients aged 0–14, 15–44, 45–64 and 65+.
pub(crate) struct Disease(&'static str, &'static str, f64, f64, f64, [f64; 4]);

impl Disease {
    fn name(&self) -> &'static str {
        self.0
    }
}

/// The diseases, their groups and background parameters. Index 0 is `stroke`.
pub(crate) const DISEASES: [Disease; 41] = [
    Disease("stroke", "circulatory", 1.0, 18.0, 0.5, [0.0, 0.01, 0.06, 0.25]),
    Disease("hypertension", "circulatory", 0.0, 0.5, 0.53, [0.0, 2.0, 10.0, 14.0]),
    Disease("ischemic_heart_disease", "circulatory", 0.3, 4.0, 0.4, [0.0, 0.3, 2.5, 4.5]),
    Disease("heart_failure", "circulatory", 0.02, 8.0, 0.55, [0.0, 0.05, 0.6, 2.2]),
    Disease("atrial_fibrillation", "circulatory", 0.05, 3.0, 0.45, [0.0, 0.1, 0.7, 1.8]),
    Disease("upper_respiratory_infection", "respiratory", 0.0, 0.2, 0.5, [30.0, 14.0, 8.0, 5.0]),
    Disease("pneumonia", "respiratory", 0.0, 6.0, 0.48, [6.0, 1.2, 1.2, 3.5]),
    Disease("asthma", "respiratory", 0.0, 1.0, 0.5, [4.0, 1.5, 1.5, 2.0]),
    Disease("copd", "respiratory", 0.0, 5.0, 0.3, [0.0, 0.1, 0.8, 2.5]),
    Disease("influenza", "respiratory", 0.0, 1.0, 0.5, [6.0, 3.0, 1.5, 1.0]),
    Disease("gastroenteritis", "digestive", 0.0, 1.0, 0.52, [12.0, 6.0, 3.5, 3.0]),
    Disease("gastritis", "digestive", 0.01, 0.4, 0.56, [1.0, 8.0, 8.0, 6.0]),
    Disease("appendicitis", "digestive", 0.95, 4.0, 0.45, [1.5, 1.5, 0.5, 0.2]),
    Disease("cholelithiasis", "digestive", 0.6, 5.0, 0.55, [0.0, 0.5, 1.2, 1.2]),
    Disease("hemorrhoids", "digestive", 0.6, 2.0, 0.45, [0.0, 1.5, 1.5, 0.8]),
    Disease("liver_cirrhosis", "digestive", 0.05, 9.0, 0.28, [0.0, 0.1, 0.8, 0.6]),
    Disease("diabetes", "endocrine", 0.0, 1.0, 0.47, [0.1, 1.5, 8.0, 9.0]),
    Disease("thyroid_disorder", "endocrine", 0.02, 0.5, 0.82, [0.2, 2.0, 2.5, 1.2]),
    Disease("dyslipidemia", "endocrine", 0.0, 0.2, 0.55, [0.0, 1.0, 5.0, 4.0]),
    Disease("osteoarthritis", "musculoskeletal", 0.2, 3.0, 0.72, [0.0, 1.0, 6.0, 10.0]),
    Disease("back_pain", "musculoskeletal", 0.12, 1.5, 0.58, [0.3, 6.0, 8.0, 7.0]),
    Disease("osteoporosis", "musculoskeletal", 0.01, 1.0, 0.9, [0.0, 0.1, 2.0, 4.5]),
    Disease("fracture", "injury", 0.6, 12.0, 0.45, [3.0, 3.0, 2.5, 3.5]),
    Disease("sprain", "injury", 0.0, 0.5, 0.45, [3.5, 5.0, 3.0, 1.5]),
    Disease("laceration", "injury", 0.8, 0.3, 0.35, [3.0, 3.0, 1.5, 1.0]),
    Disease("concussion", "injury", 0.05, 3.0, 0.35, [1.5, 1.0, 0.5, 0.5]),
    Disease("stomach_cancer", "neoplasm", 0.35, 10.0, 0.33, [0.0, 0.2, 1.2, 1.5]),
    Disease("colorectal_cancer", "neoplasm", 0.35, 11.0, 0.4, [0.0, 0.1, 0.8, 1.2]),
    Disease("lung_cancer", "neoplasm", 0.2, 12.0, 0.28, [0.0, 0.05, 0.5, 1.2]),
    Disease("liver_cancer", "neoplasm", 0.15, 11.0, 0.25, [0.0, 0.05, 0.6, 0.7]),
    Disease("breast_cancer", "neoplasm", 0.4, 8.0, 0.99, [0.0, 0.4, 0.8, 0.3]),
    Disease("thyroid_cancer", "neoplasm", 0.5, 4.0, 0.84, [0.0, 0.8, 0.9, 0.3]),
    Disease("dementia", "nervous_mental", 0.0, 45.0, 0.7, [0.0, 0.0, 0.2, 3.5]),
    Disease("parkinsons_disease", "nervous_mental", 0.0, 12.0, 0.55, [0.0, 0.0, 0.2, 0.9]),
    Disease("depression", "nervous_mental", 0.0, 3.0, 0.66, [0.3, 2.5, 2.0, 1.5]),
    Disease("epilepsy", "nervous_mental", 0.02, 2.0, 0.45, [0.8, 0.6, 0.3, 0.3]),
    Disease("urinary_tract_infection", "genitourinary", 0.0, 1.5, 0.8, [1.0, 2.5, 2.0, 3.0]),
    Disease("chronic_kidney_disease", "genitourinary", 0.05, 4.0, 0.45, [0.0, 0.2, 0.9, 1.6]),
    Disease("cataract", "eye_ear", 0.9, 0.5, 0.6, [0.0, 0.1, 1.5, 4.0]),
    Disease("otitis_media", "eye_ear", 0.02, 0.2, 0.48, [8.0, 1.0, 0.5, 0.4]),
    Disease("dental_caries", "oral", 0.35, 0.0, 0.5, [6.0, 6.0, 6.0, 4.0]),
];
const STROKE: u8 = 0;

/// Relative number of patients per 5-year age group 0–4, ..., 95–99 (older-skewed, as in the
/// 2011 Korean patient population).
const AGE_WEIGHTS: [f64; 20] =
    [5.0, 3.5, 3.0, 3.0, 3.2, 3.8, 4.6, 5.0, 5.8, 6.6, 7.4, 7.4, 6.8, 6.6, 6.6, 5.6, 3.8, 1.9, 0.7, 0.2];

fn band(age: i64) -> usize {
    match age {
        0..=14 => 0,
        15..=44 => 1,
        45..=64 => 2,
        _ => 3,
    }
}

/// Cumulative distribution for sampling an index from weights.
struct Cdf(Vec<f64>);

impl Cdf {
    fn new(weights: impl IntoIterator<Item = f64>) -> Self {
        let mut acc = 0.0;
        let mut c: Vec<f64> = weights
            .into_iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        c.iter_mut().for_each(|x| *x /= acc);
        Cdf(c)
    }
    fn sample(&self, rng: &mut StdRng) -> usize {
        let u: f64 = rng.random();
        self.0.partition_point(|&c| c <= u).min(self.0.len() - 1)
    }
}

/// Columns as codes: sex, surgery, location and disease index the constant tables.
#[derive(Default)]
struct Columns {
    age: Vec<i64>,
    sex: Vec<u8>,
    los: Vec<i64>,
    location: Vec<u8>,
    surgery: Vec<u8>,
    disease: Vec<u8>,
}

impl Columns {
    fn with_capacity(n: usize) -> Self {
        Columns {
            age: Vec::with_capacity(n),
            sex: Vec::with_capacity(n),
            los: Vec::with_capacity(n),
            location: Vec::with_capacity(n),
            surgery: Vec::with_capacity(n),
            disease: Vec::with_capacity(n),
        }
    }
}

/// One cohort record: (age, sex, length of stay, location).
type CohortRow = (i64, u8, i64, u8);

/// Lengths of stay for `n` patients with sum exactly `round(avg × n)`: geometric draws with
/// mean `avg`, then raised or lowered one day at a time on random patients.
fn calibrated_stays(rng: &mut StdRng, n: usize, avg: f64) -> Vec<i64> {
    if n == 0 {
        return Vec::new();
    }
    let target = (avg * n as f64).round() as i64;
    let q = (avg / (avg + 1.0)).ln(); // ln(1 - p), p = 1 / (avg + 1)
    let mut v: Vec<i64> = (0..n).map(|_| ((1.0 - rng.random::<f64>()).ln() / q).floor().min(60.0) as i64).collect();
    let mut sum: i64 = v.iter().sum();
    while sum < target {
        v[rng.random_range(0..n)] += 1;
        sum += 1;
    }
    while sum > target {
        let start = rng.random_range(0..n);
        // The first patient from `start` on (cyclically) with a stay to shorten; one exists.
        let i = (0..n).map(|k| (start + k) % n).find(|&i| v[i] > 0).expect("sum > target >= 0");
        v[i] -= 1;
        sum -= 1;
    }
    v
}

/// The calibration cohort, shuffled: for each sex and 5-year group the published number of
/// stroke patients without surgery, stays calibrated per 10-year group.
fn cohort(rng: &mut StdRng, location: &Cdf) -> Vec<CohortRow> {
    let mut out = Vec::with_capacity(cohort_size());
    for (sex, counts, avgs) in [(0u8, &Q1_MALE, &Q3_MALE), (1u8, &Q2_FEMALE, &Q4_FEMALE)] {
        for (t, &avg) in avgs.iter().enumerate() {
            // 10-year label 10(t+1) = 5-year groups 10t+5 (index 2t) and 10t+10 (index 2t+1).
            let (lo, hi) = (counts[2 * t] as usize, counts[2 * t + 1] as usize);
            let stays = calibrated_stays(rng, lo + hi, avg);
            for (k, &los) in stays.iter().enumerate() {
                let group = if k < lo { 10 * t as i64 + 5 } else { 10 * t as i64 + 10 };
                let age = group + rng.random_range(0..5i64);
                out.push((age, sex, los, location.sample(rng) as u8));
            }
        }
    }
    out.shuffle(rng);
    out
}

/// Generate the NPS-like table: `rows` records (at least [`cohort_size`]), deterministic for
/// `seed`, in batches of [`BATCH_ROWS`].
pub fn nps_like(rows: usize, seed: u64) -> Result<DatasetTable> {
    let min = cohort_size();
    if rows < min {
        return Err(AnonError::argument(
            "load_dataset",
            "rows",
            format!(
                "nps needs at least {min} rows (the calibration cohort of stroke patients without \
                 surgery that reproduces the published Q1-Q4 answers); got {rows}"
            ),
        ));
    }
    if rows > MAX_ROWS {
        return Err(AnonError::argument(
            "load_dataset",
            "rows",
            format!("nps generates at most {MAX_ROWS} rows; got {rows}"),
        ));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let loc_cdf = Cdf::new(LOCATIONS.iter().map(|l| l.2));
    let age_cdf = Cdf::new(AGE_WEIGHTS);
    let disease_cdf: Vec<Cdf> =
        (0..4).map(|b| Cdf::new(DISEASES.iter().map(|Disease(.., weight)| weight[b]))).collect();
    let cohort = cohort(&mut rng, &loc_cdf);

    let mut cols = Columns::with_capacity(rows);
    let mut next_cohort = 0usize;
    for i in 0..rows {
        // Selection sampling: each remaining position takes a cohort record with probability
        // (cohort records left) / (positions left), so exactly all of them are placed.
        let left = cohort.len() - next_cohort;
        if left > 0 && rng.random_range(0..rows - i) < left {
            let (age, sex, los, loc) = cohort[next_cohort];
            next_cohort += 1;
            cols.age.push(age);
            cols.sex.push(sex);
            cols.los.push(los);
            cols.location.push(loc);
            cols.surgery.push(0);
            cols.disease.push(STROKE);
            continue;
        }
        let age = age_cdf.sample(&mut rng) as i64 * 5 + rng.random_range(0..5i64);
        let di = disease_cdf[band(age)].sample(&mut rng);
        let &Disease(_, _, p_surgery, los_mean, p_female, _) = &DISEASES[di];
        let sex = u8::from(rng.random::<f64>() < p_female);
        let surgery = p_surgery >= 1.0 || rng.random::<f64>() < p_surgery;
        let mut mean = los_mean * (0.6 + age as f64 / 100.0);
        if surgery {
            mean *= 2.0;
        }
        let los = (-mean * (1.0 - rng.random::<f64>()).ln()).floor().min(MAX_LOS as f64) as i64;
        cols.age.push(age);
        cols.sex.push(sex);
        cols.los.push(los);
        cols.location.push(loc_cdf.sample(&mut rng) as u8);
        cols.surgery.push(u8::from(surgery));
        cols.disease.push(di as u8);
    }
    debug_assert_eq!(next_cohort, cohort.len());

    Ok(DatasetTable { name: "nps".into(), batches: batches(&cols)?, meta: meta()? })
}

pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("age", DataType::Int64, false),
        Field::new("sex", DataType::Utf8, false),
        Field::new("length_of_stay", DataType::Int64, false),
        Field::new("location", DataType::Utf8, false),
        Field::new("surgery", DataType::Utf8, false),
        Field::new("disease", DataType::Utf8, false),
    ]))
}

fn batches(cols: &Columns) -> Result<Vec<RecordBatch>> {
    let schema = schema();
    let n = cols.age.len();
    let strings = |codes: &[u8], names: &dyn Fn(u8) -> &'static str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(codes.iter().map(|&c| names(c))))
    };
    (0..n)
        .step_by(BATCH_ROWS)
        .map(|start| {
            let r = start..(start + BATCH_ROWS).min(n);
            let arrays: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(cols.age[r.clone()].to_vec())),
                strings(&cols.sex[r.clone()], &|c| SEX[c as usize]),
                Arc::new(Int64Array::from(cols.los[r.clone()].to_vec())),
                strings(&cols.location[r.clone()], &|c| LOCATIONS[c as usize].0),
                strings(&cols.surgery[r.clone()], &|c| SURGERY[c as usize]),
                strings(&cols.disease[r], &|c| DISEASES[c as usize].name()),
            ];
            Ok(RecordBatch::try_new(schema.clone(), arrays)?)
        })
        .collect()
}

fn categorical(attribute: &str, rows: impl IntoIterator<Item = Vec<&'static str>>) -> Result<Hierarchy> {
    let mut b = HierarchyBuilder::new(attribute, HierarchyKind::Categorical);
    for (i, r) in rows.into_iter().enumerate() {
        b.row(i + 1, r.into_iter().map(str::to_string).collect());
    }
    b.build()
}

/// The declared `ipa_release` plan (docs/results/ipa.md, "Adaptive partitions"): the root is
/// the grouping of the questions the release is for (sql/q1.sql .. q4.sql: 5-year ages, sex,
/// surgery), the steps refine length of stay and location where the noisy counts reach θ.
/// Public parameters, tuned on this synthetic table (stated there).
pub const RELEASE_PLAN: &str = "partition=adaptive, root=1:0:5:2:0, steps=length_of_stay:3|location:1|location:0, \
                                theta=1000, coarse=0.5, selection=0.1, floor=2";

/// Roles and hierarchies: age (5/10/20-year bands), sex, length_of_stay (5/10/30/90-day bands),
/// location (province → region → *), surgery; disease (disease → group → *) is sensitive.
pub fn meta() -> Result<TableMeta> {
    let mut meta = TableMeta::default();
    let h = &mut meta.hierarchies;
    h.insert("age".into(), Arc::new(widths_hierarchy("age", 0, 99, &AGE_WIDTHS)?));
    h.insert("sex".into(), Arc::new(categorical("sex", SEX.map(|s| vec![s, "*"]))?));
    h.insert("length_of_stay".into(), Arc::new(widths_hierarchy("length_of_stay", 0, MAX_LOS, &LOS_WIDTHS)?));
    h.insert("location".into(), Arc::new(categorical("location", LOCATIONS.iter().map(|l| vec![l.0, l.1, "*"]))?));
    h.insert("surgery".into(), Arc::new(categorical("surgery", SURGERY.map(|s| vec![s, "*"]))?));
    h.insert(
        "disease".into(),
        Arc::new(categorical("disease", DISEASES.iter().map(|&Disease(name, group, ..)| vec![name, group, "*"]))?),
    );
    meta.roles = ["age", "sex", "length_of_stay", "location", "surgery"]
        .iter()
        .map(|c| (c.to_string(), Role::QuasiIdentifier))
        .collect();
    meta.roles.push(("disease".into(), Role::Sensitive));
    meta.release_plan = Some(RELEASE_PLAN.to_string());
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::Int64Type;

    /// Rows of a table as (age, sex, los, location, surgery, disease).
    fn records(t: &DatasetTable) -> Vec<(i64, String, i64, String, String, String)> {
        let mut out = Vec::new();
        for b in &t.batches {
            let int = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
            let s = |i: usize| b.column(i).as_string::<i32>().clone();
            let (age, sex, los, loc, surg, dis) = (int(0), s(1), int(2), s(3), s(4), s(5));
            for r in 0..b.num_rows() {
                out.push((
                    age.value(r),
                    sex.value(r).into(),
                    los.value(r),
                    loc.value(r).into(),
                    surg.value(r).into(),
                    dis.value(r).into(),
                ));
            }
        }
        out
    }

    #[test]
    fn row_count_batches_and_determinism() {
        let a = nps_like(70_000, 7).unwrap();
        assert_eq!(a.num_rows(), 70_000);
        assert_eq!(a.batches.len(), 2);
        assert_eq!(a.batches[0].num_rows(), BATCH_ROWS);
        assert!(a.batches.iter().all(|b| b.columns().iter().all(|c| c.null_count() == 0)));
        let b = nps_like(70_000, 7).unwrap();
        assert_eq!(records(&a), records(&b));
        let c = nps_like(70_000, 8).unwrap();
        assert_ne!(records(&a), records(&c));
    }

    #[test]
    fn cohort_reproduces_published_answers() {
        let t = nps_like(20_000, DEFAULT_SEED).unwrap();
        let recs = records(&t);
        let mut count = [[0u32; 18]; 2];
        let mut sum = [[0i64; 9]; 2];
        for (age, sex, los, loc, surg, dis) in &recs {
            assert!((0..=99).contains(age) && (0..=MAX_LOS).contains(los));
            assert!(LOCATIONS.iter().any(|l| l.0 == loc));
            if dis == "stroke" && surg == "N" {
                let s = usize::from(sex == "F");
                count[s][(*age / 5 - 1) as usize] += 1;
                sum[s][((*age + 5) / 10 - 1) as usize] += *los;
            }
        }
        assert_eq!(count[0], Q1_MALE);
        assert_eq!(count[1], Q2_FEMALE);
        for (s, avgs) in [&Q3_MALE, &Q4_FEMALE].into_iter().enumerate() {
            for t in 0..9 {
                let n = count[s][2 * t] + count[s][2 * t + 1];
                let avg = sum[s][t] as f64 / n as f64;
                assert!((avg - avgs[t]).abs() < 0.05, "sex {s} label {}: {avg} vs {}", 10 * (t + 1), avgs[t]);
            }
        }
        // The cohort is spread over the table, not packed at its start.
        let first = recs.iter().position(|r| r.5 == "stroke" && r.4 == "N").unwrap();
        let last = recs.iter().rposition(|r| r.5 == "stroke" && r.4 == "N").unwrap();
        assert!(first < 2_000 && last > 18_000, "{first} {last}");
    }

    #[test]
    fn too_few_or_too_many_rows_are_argument_errors() {
        let e = nps_like(cohort_size() - 1, 1).unwrap_err().to_string();
        assert!(e.contains("rows") && e.contains("6046"), "{e}");
        assert!(nps_like(0, 1).is_err());
        assert!(nps_like(MAX_ROWS + 1, 1).is_err());
        assert_eq!(nps_like(cohort_size(), 1).unwrap().num_rows(), 6046);
    }

    #[test]
    fn meta_covers_the_data() {
        let t = nps_like(10_000, 3).unwrap();
        assert_eq!(t.meta.quasi_identifiers(), ["age", "sex", "length_of_stay", "location", "surgery"]);
        assert_eq!(t.meta.sensitive("nps").unwrap(), "disease");
        t.meta.check_complete("nps").unwrap();
        let h = &t.meta.hierarchies;
        assert_eq!(h["location"].height(), 2);
        assert_eq!(h["location"].width(1), 6);
        assert_eq!(h["length_of_stay"].height(), 5);
        for (age, sex, los, loc, surg, dis) in records(&t) {
            assert!(h["age"].leaf_of_value(age as f64).is_some());
            assert!(h["length_of_stay"].leaf_of_value(los as f64).is_some());
            for (col, v) in [("sex", &sex), ("location", &loc), ("surgery", &surg), ("disease", &dis)] {
                assert!(h[col].leaf_of_label(v).is_some(), "{col} {v}");
            }
        }
    }
}
