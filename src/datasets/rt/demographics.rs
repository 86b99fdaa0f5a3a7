//! Demographics of the two presets, and each patient's latent profile (sex, age band) that
//! drives how many codes, and which, the patient gets.
//!
//! EHRD-like (a university medical center's patients, Table 6a of the ArtUC paper): `age`
//! 0–95 (95 = 95 or older) and `gender`. Informs-like (the INFORMS 2008 data-mining contest
//! extract of the Medical Expenditure Panel Survey, as described by RmR [61]):
//! `month_of_birth`, `year_of_birth` 1918–2000, `race`, `years_of_schooling` 0–17 and `income`
//! (thousand USD a year, 0–199, 199 = 199 or more). Its patients' sex is latent: it shapes
//! their codes but is not published.

use super::RtPreset;
use rand::{RngExt, rngs::StdRng};

/// Age bands of the code model: 0, 1–4, 5–12, 13–19, 20–29, ..., 70–79, 80+.
pub(crate) const AGE_BANDS: usize = 11;

pub(crate) fn age_band(age: u32) -> usize {
    match age {
        0 => 0,
        1..=4 => 1,
        5..=12 => 2,
        13..=19 => 3,
        20..=79 => (age / 10 + 2) as usize,
        _ => 10,
    }
}

/// A representative age of each band (for restrictions, which only need 0, 1–12, 13–49, 50+).
pub(crate) const BAND_AGE: [u32; AGE_BANDS] = [0, 2, 8, 16, 25, 35, 45, 55, 65, 75, 85];

/// Reference year of the Informs-like data: age = 2001 - year_of_birth (1–83).
pub(crate) const INFORMS_YEAR: i64 = 2001;
pub(crate) const EHRD_MAX_AGE: i64 = 95;

pub(crate) const RACES: [&str; 6] = ["White", "Black", "Asian", "Pacific Islander", "American Indian", "Multiple"];
/// Middle level of the race hierarchy.
pub(crate) const RACE_GROUPS: [&str; 6] = [
    "White",
    "Black",
    "Asian or Pacific Islander",
    "Asian or Pacific Islander",
    "Other or multiple",
    "Other or multiple",
];
const RACE_WEIGHTS: [f64; 6] = [0.725, 0.165, 0.045, 0.007, 0.013, 0.045];
const MONTH_WEIGHTS: [f64; 12] = [8.1, 7.6, 8.3, 8.0, 8.3, 8.3, 8.8, 8.9, 8.7, 8.4, 8.0, 8.4];

/// Generated demographics: the published columns of the preset and the latent profile.
pub(crate) struct Demographics {
    /// Published columns, as Int64 (numeric) or race index.
    pub(crate) age: Vec<i64>,
    pub(crate) female: Vec<bool>,
    pub(crate) month: Vec<i64>,
    pub(crate) year: Vec<i64>,
    pub(crate) race: Vec<u8>,
    pub(crate) schooling: Vec<i64>,
    pub(crate) income: Vec<i64>,
    /// Code profile: sex * AGE_BANDS + band.
    pub(crate) profile: Vec<u8>,
    /// Size class: index into the preset's code-count factors.
    pub(crate) size_class: Vec<u8>,
}

pub(crate) fn profile_of(female: bool, band: usize) -> u8 {
    (female as usize * AGE_BANDS + band) as u8
}

/// Code-count factor of each size class (mean number of codes relative to the typical
/// patient): older patients, and poorer Informs patients, have more diagnoses.
pub(crate) fn size_factors(preset: RtPreset) -> Vec<f64> {
    const EHRD: [f64; AGE_BANDS] = [0.45, 0.5, 0.5, 0.6, 0.7, 0.8, 1.0, 1.25, 1.5, 1.7, 1.8];
    const INFORMS: [f64; AGE_BANDS] = [0.6, 0.6, 0.6, 0.65, 0.75, 0.85, 1.0, 1.2, 1.35, 1.5, 1.55];
    match preset {
        RtPreset::Ehrd => EHRD.to_vec(),
        // class = band * 2 + low_income
        RtPreset::Informs => INFORMS.iter().flat_map(|&f| [f, f * 1.2]).collect(),
    }
}

pub(crate) fn generate(preset: RtPreset, n: usize, rng: &mut StdRng) -> Demographics {
    let mut d = Demographics {
        age: Vec::with_capacity(n),
        female: Vec::with_capacity(n),
        month: Vec::new(),
        year: Vec::new(),
        race: Vec::new(),
        schooling: Vec::new(),
        income: Vec::new(),
        profile: Vec::with_capacity(n),
        size_class: Vec::with_capacity(n),
    };
    match preset {
        RtPreset::Ehrd => ehrd(&mut d, n, rng),
        RtPreset::Informs => informs(&mut d, n, rng),
    }
    d
}

fn ehrd(d: &mut Demographics, n: usize, rng: &mut StdRng) {
    // Patients of a university medical center: births, fewer children, most patients 45–84.
    let age_bands = [
        (0, 2.2),
        (4, 0.9),
        (12, 0.75),
        (17, 0.8),
        (29, 1.05),
        (44, 1.15),
        (64, 1.55),
        (74, 1.6),
        (84, 1.2),
        (OLDER, 0.5),
    ];
    let age_cum = cumulative(&(0..=EHRD_MAX_AGE as u32).map(|a| by_age(a, &age_bands)).collect::<Vec<_>>());
    // Women use more care in the childbearing years and outlive men.
    let female_bands = [(12, 0.49), (17, 0.52), (44, 0.60), (64, 0.54), (79, 0.55), (OLDER, 0.62)];
    for _ in 0..n {
        let age = pick(&age_cum, rng) as u32;
        let female = rng.random::<f64>() < by_age(age, &female_bands);
        let band = age_band(age);
        d.age.push(age as i64);
        d.female.push(female);
        d.profile.push(profile_of(female, band));
        d.size_class.push(band as u8);
    }
}

fn informs(d: &mut Demographics, n: usize, rng: &mut StdRng) {
    let age_bands = [(0, 0.0), (17, 0.9), (44, 1.0), (64, 1.2), (OLDER, 1.1)];
    let age_cum = cumulative(&(0..=83).map(|a| by_age(a, &age_bands)).collect::<Vec<_>>());
    let month_cum = cumulative(&MONTH_WEIGHTS);
    let race_cum = cumulative(&RACE_WEIGHTS);
    let female_bands = [(17, 0.49), (64, 0.55), (OLDER, 0.58)];
    for _ in 0..n {
        let age = pick(&age_cum, rng) as u32;
        let female = rng.random::<f64>() < by_age(age, &female_bands);
        let year = INFORMS_YEAR - age as i64;
        let month = pick(&month_cum, rng) as i64 + 1;
        let race = pick(&race_cum, rng);
        let school = schooling(age, year, race, rng);
        let inc = income(age, female, school, rng);
        let band = age_band(age);
        d.age.push(age as i64);
        d.female.push(female);
        d.month.push(month);
        d.year.push(year);
        d.race.push(race as u8);
        d.schooling.push(school);
        d.income.push(inc);
        d.profile.push(profile_of(female, band));
        d.size_class.push((band * 2 + (age >= 18 && inc < 15) as usize) as u8);
    }
}

/// Years of schooling completed (0–17, 17 = graduate school): children by age, adults by
/// birth cohort and race (later cohorts and Asian Americans more schooling).
fn schooling(age: u32, year: i64, race: usize, rng: &mut StdRng) -> i64 {
    if age <= 6 {
        return 0;
    }
    let in_school = (age as i64 - 6 - (rng.random::<f64>() < 0.15) as i64).clamp(0, 12);
    if age <= 18 {
        return in_school;
    }
    // Attainment classes: <9, 9–11, 12, 13–15, 16, 17.
    let mut w: [f64; 6] = match year {
        ..1940 => [0.25, 0.15, 0.35, 0.12, 0.08, 0.05],
        1940..1960 => [0.08, 0.10, 0.35, 0.22, 0.15, 0.10],
        _ => [0.05, 0.10, 0.32, 0.27, 0.18, 0.08],
    };
    let adj: [f64; 6] = match RACES[race] {
        "Asian" => [0.7, 0.7, 0.8, 1.0, 1.6, 1.8],
        "Black" => [1.1, 1.4, 1.1, 1.0, 0.7, 0.6],
        "American Indian" => [1.3, 1.5, 1.1, 0.9, 0.6, 0.5],
        "Pacific Islander" => [1.0, 1.2, 1.1, 1.0, 0.8, 0.8],
        _ => [1.0; 6],
    };
    for (x, a) in w.iter_mut().zip(adj) {
        *x *= a;
    }
    let years = match pick(&cumulative(&w), rng) {
        0 => [3, 5, 6, 6, 7, 8, 8, 8][rng.random_range(0..8)],
        1 => rng.random_range(9..12),
        2 => 12,
        3 => rng.random_range(13..16),
        4 => 16,
        _ => 17,
    };
    // Young adults still in college have not finished yet.
    years.min(age as i64 - 6)
}

/// Personal income in thousand USD a year (0–199): none for children, a log-normal around an
/// age curve otherwise, with ~9% more per year of schooling and a gap for women.
fn income(age: u32, female: bool, schooling: i64, rng: &mut StdRng) -> i64 {
    if age < 16 {
        return 0;
    }
    let p_zero = match age {
        16..=19 => 0.35,
        20..=64 => {
            if female {
                0.15
            } else {
                0.08
            }
        }
        _ => 0.03,
    };
    if rng.random::<f64>() < p_zero {
        return 0;
    }
    let median = match age {
        16..=19 => 5.0,
        20..=24 => 14.0,
        25..=34 => 28.0,
        35..=54 => 36.0,
        55..=64 => 34.0,
        _ => 18.0,
    } * 1.09f64.powi(schooling as i32 - 12)
        * if female { 0.78 } else { 1.0 };
    let v = median * (0.75 * normal(rng)).exp();
    (v.round() as i64).clamp(1, 199)
}

/// A standard normal draw (Box–Muller).
pub(crate) fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The last band of [`by_age`]: every older age.
const OLDER: u32 = u32::MAX;

/// The value of the band `age` is in: `bands` holds each band's last age and value, ascending,
/// the last band ending at [`OLDER`].
fn by_age(age: u32, bands: &[(u32, f64)]) -> f64 {
    bands.iter().find(|&&(last, _)| age <= last).map_or(0.0, |&(_, value)| value)
}

pub(crate) fn cumulative(w: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x;
            acc
        })
        .collect()
}

/// Index drawn with probability proportional to the weights behind `cum`.
pub(crate) fn pick(cum: &[f64], rng: &mut StdRng) -> usize {
    let total = cum.last().copied().unwrap_or(0.0);
    let u = rng.random::<f64>() * total;
    cum.partition_point(|&c| c <= u).min(cum.len() - 1)
}
