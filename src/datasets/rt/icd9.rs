//! The embedded ICD-9-CM v32 code hierarchy (`leaf;3-digit;section;chapter;*`, 14,567 billable
//! leaves written without the dot) and what the generator knows about its codes: which sex and
//! age may carry them, and how popular they are.

use crate::error::Result;
use crate::hierarchy::{Hierarchy, HierarchyKind, parse_arx_text};
use rand::{RngExt, SeedableRng, rngs::StdRng};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The ARX-format ICD-9-CM v32 hierarchy (see data/icd9 and docs/datasets.md).
pub(crate) const ICD9_TEXT: &str = include_str!("../../../data/icd9/icd9cm_v32_hierarchy.csv");

/// Number of billable leaves in ICD-9-CM v32.
pub const ICD9_LEAVES: usize = 14_567;

/// The 19 chapters, in code order.
pub const CHAPTERS: [&str; 19] = [
    "001-139",
    "140-239",
    "240-279",
    "280-289",
    "290-319",
    "320-389",
    "390-459",
    "460-519",
    "520-579",
    "580-629",
    "630-679",
    "680-709",
    "710-739",
    "740-759",
    "760-779",
    "780-799",
    "800-999",
    "V01-V91",
    "E000-E999",
];

/// The ICD-9-CM hierarchy as a code hierarchy for the `codes` column, parsed once.
pub fn icd9_hierarchy() -> Result<Arc<Hierarchy>> {
    static H: OnceLock<Arc<Hierarchy>> = OnceLock::new();
    if let Some(h) = H.get() {
        return Ok(h.clone());
    }
    let h = Arc::new(parse_arx_text(ICD9_TEXT, "codes", HierarchyKind::Codes)?);
    Ok(H.get_or_init(|| h).clone())
}

/// Who may carry a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restriction {
    Any,
    Male,
    Female,
    /// Pregnancy, childbirth and the puerperium (630–679, V22–V24, V27, V28, V72.4x, V91):
    /// females aged 13–49.
    Pregnancy,
    /// Perinatal conditions (760–779) and newborn encounters (V29–V39, V20.3x): age 0.
    Newborn,
}

impl Restriction {
    /// May a patient of this sex and age carry the code?
    pub fn allows(self, female: bool, age: u32) -> bool {
        match self {
            Restriction::Any => true,
            Restriction::Male => !female,
            Restriction::Female => female,
            Restriction::Pregnancy => female && (13..=49).contains(&age),
            Restriction::Newborn => age == 0,
        }
    }
}

/// The leaves of the embedded file, in file (= hierarchy leaf) order.
pub(crate) struct Icd9 {
    pub(crate) code: Vec<&'static str>,
    cat3: Vec<u16>,
    pub(crate) section: Vec<u16>,
    pub(crate) chapter: Vec<u8>,
    pub(crate) restriction: Vec<Restriction>,
    n_cat3: usize,
    n_sections: usize,
}

/// The parsed leaf table (the embedded text is fixed; malformed lines would be skipped, and
/// a unit test checks that all 14,567 leaves are here and agree with [`icd9_hierarchy`]).
pub(crate) fn table() -> &'static Icd9 {
    static T: OnceLock<Icd9> = OnceLock::new();
    T.get_or_init(parse_table)
}

fn parse_table() -> Icd9 {
    let mut t = Icd9 {
        code: Vec::with_capacity(ICD9_LEAVES),
        cat3: Vec::with_capacity(ICD9_LEAVES),
        section: Vec::with_capacity(ICD9_LEAVES),
        chapter: Vec::with_capacity(ICD9_LEAVES),
        restriction: Vec::with_capacity(ICD9_LEAVES),
        n_cat3: 0,
        n_sections: 0,
    };
    let mut cats: HashMap<&str, u16> = HashMap::new();
    let mut secs: HashMap<&str, u16> = HashMap::new();
    for line in ICD9_TEXT.lines() {
        let mut f = line.trim_end_matches('\r').split(';');
        let (Some(code), Some(cat), Some(sec), Some(chap)) = (f.next(), f.next(), f.next(), f.next()) else {
            continue;
        };
        let Some(ch) = CHAPTERS.iter().position(|c| *c == chap) else { continue };
        let n = cats.len() as u16;
        let c = *cats.entry(cat).or_insert(n);
        let n = secs.len() as u16;
        let s = *secs.entry(sec).or_insert(n);
        t.code.push(code);
        t.cat3.push(c);
        t.section.push(s);
        t.chapter.push(ch as u8);
        t.restriction.push(restriction(code, cat, ch));
    }
    t.n_cat3 = cats.len();
    t.n_sections = secs.len();
    t
}

/// Sex and age restriction of a leaf, from its 3-digit category and a few 4/5-digit codes.
pub(crate) fn restriction(code: &str, cat3: &str, chapter: usize) -> Restriction {
    use Restriction::*;
    match CHAPTERS[chapter] {
        "630-679" => return Pregnancy,
        "760-779" => return Newborn,
        _ => {}
    }
    let starts = |p: &[&str]| p.iter().any(|x| code.starts_with(x));
    if let Some(v) = cat3.strip_prefix('V') {
        let v: u32 = v.parse().unwrap_or(0);
        return match v {
            22..=24 | 27 | 28 | 91 => Pregnancy,
            29..=39 => Newborn,
            _ if starts(&["V2031", "V2032"]) => Newborn,
            _ if starts(&["V724"]) => Pregnancy,
            // contraception (V25.2 sterilization is for either sex)
            25 if !code.starts_with("V252") => Female,
            _ if starts(&["V1040", "V1041", "V1042", "V1043", "V1044", "V131", "V132", "V762", "V7646", "V7647"]) => {
                Female
            }
            _ if starts(&["V1045", "V1046", "V1047", "V1048", "V1049", "V1361", "V7644", "V7645"]) => Male,
            _ => Any,
        };
    }
    if cat3.starts_with('E') {
        return Any;
    }
    let n: u32 = cat3.parse().unwrap_or(0);
    match n {
        174 | 179..=184 | 218..=221 | 256 | 614..=629 => Female,
        175 | 185..=187 | 222 | 257 | 600..=608 => Male,
        233 if starts(&["2331", "2332", "2333"]) => Female,
        233 if starts(&["2334", "2335", "2336"]) => Male,
        236 if starts(&["2360", "2361", "2362", "2363"]) => Female,
        236 if starts(&["2364", "2365", "2366"]) => Male,
        752 if starts(&["7520", "7521", "7522", "7523", "7524"]) => Female,
        752 if starts(&["7525", "7526"]) => Male,
        _ => Any,
    }
}

/// Frequent codes of US hospital and outpatient records, with their share of all code
/// occurrences before age and sex effects (hypertension, hyperlipidemia, diabetes, ...).
pub(crate) const COMMON_CODES: &[(&str, f64)] = &[
    ("4019", 0.016),  // essential hypertension, unspecified
    ("2724", 0.010),  // hyperlipidemia
    ("25000", 0.008), // diabetes mellitus type II
    ("41401", 0.006), // coronary atherosclerosis of native vessel
    ("53081", 0.006), // esophageal reflux
    ("3051", 0.005),  // tobacco use disorder
    ("42731", 0.005), // atrial fibrillation
    ("311", 0.005),   // depressive disorder NEC
    ("2449", 0.005),  // hypothyroidism
    ("4280", 0.004),  // congestive heart failure
    ("2720", 0.004),  // pure hypercholesterolemia
    ("2859", 0.004),  // anemia
    ("5990", 0.004),  // urinary tract infection
    ("4659", 0.004),  // acute upper respiratory infection
    ("30000", 0.003), // anxiety state
    ("5849", 0.003),  // acute kidney failure
    ("49390", 0.003), // asthma
    ("496", 0.003),   // chronic airway obstruction
    ("7242", 0.003),  // lumbago
    ("71590", 0.003), // osteoarthrosis
    ("78650", 0.003), // chest pain
    ("78060", 0.003), // fever
    ("4660", 0.003),  // acute bronchitis
    ("27800", 0.003), // obesity
    ("V5861", 0.003), // long-term anticoagulants
    ("V1582", 0.003), // history of tobacco use
    ("V3000", 0.003), // single liveborn, born in hospital
    ("38200", 0.002), // acute suppurative otitis media
    ("5859", 0.002),  // chronic kidney disease
    ("2768", 0.002),  // hypopotassemia
    ("V202", 0.002),  // routine child health check
    ("V7231", 0.002), // routine gynecological examination
    ("486", 0.003),   // pneumonia, organism unspecified
    ("4779", 0.003),  // allergic rhinitis
    ("51881", 0.002), // acute respiratory failure
    ("462", 0.002),   // acute pharyngitis
    ("4619", 0.002),  // acute sinusitis
    ("3829", 0.002),  // otitis media, unspecified
    ("7295", 0.002),  // pain in limb
    ("71946", 0.002), // pain in joint, lower leg
    ("34690", 0.002), // migraine
    ("7840", 0.002),  // headache
    ("7804", 0.002),  // dizziness
    ("78079", 0.002), // malaise and fatigue
    ("5589", 0.002),  // noninfectious gastroenteritis
    ("6929", 0.002),  // contact dermatitis
    ("412", 0.002),   // old myocardial infarction
    ("2761", 0.002),  // hyposmolality
    ("2851", 0.002),  // acute posthemorrhagic anemia
    ("40390", 0.002), // hypertensive chronic kidney disease
    ("V5867", 0.002), // long-term insulin use
    ("V700", 0.002),  // routine general medical examination
    ("V290", 0.002),  // newborn observation for suspected infection
    ("7231", 0.001),  // cervicalgia
    ("7140", 0.001),  // rheumatoid arthritis
    ("4240", 0.001),  // mitral valve disorders
    ("2762", 0.001),  // acidosis
    ("2875", 0.001),  // thrombocytopenia
    ("0389", 0.001),  // septicemia
    ("99592", 0.001), // severe sepsis
    ("V4581", 0.001), // aortocoronary bypass status
    ("5641", 0.001),  // irritable bowel syndrome
    ("3540", 0.001),  // carpal tunnel syndrome
    ("7061", 0.001),  // acne
];

/// Popularity of every leaf (not normalized), given the weight of each chapter: a nested
/// Zipf law (sections within a chapter, 3-digit categories within a section, leaves within a
/// category, each in a fixed pseudo-random rank order; sections and categories with more
/// leaves weigh more, so a one-code section cannot dominate its chapter) plus the boost of
/// [`COMMON_CODES`] times `head`, which gives the head of the distribution its real-world codes.
/// `gamma` > 1 concentrates each chapter's mass on its popular codes (popularity^gamma).
/// The ranks do not depend on the user's seed, so a preset has the same code vocabulary and
/// the same popular codes for every seed.
pub(crate) fn base_weights(t: &Icd9, chapter_weight: &[f64; 19], head: f64, gamma: f64) -> Vec<f64> {
    const RANK_SEED: u64 = 0x1CD9_C0DE;
    let n = t.code.len();
    let mut rng = StdRng::seed_from_u64(RANK_SEED);
    let sec_key: Vec<f64> = (0..t.n_sections).map(|_| rng.random::<f64>()).collect();
    let cat_key: Vec<f64> = (0..t.n_cat3).map(|_| rng.random::<f64>()).collect();
    let leaf_key: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();

    // Members of each group, then Zipf shares by rank of key.
    let mut sec_parent = vec![0usize; t.n_sections];
    let mut cat_parent = vec![0usize; t.n_cat3];
    let mut cat_leaves = vec![0usize; t.n_cat3];
    for i in 0..n {
        sec_parent[t.section[i] as usize] = t.chapter[i] as usize;
        cat_parent[t.cat3[i] as usize] = t.section[i] as usize;
        cat_leaves[t.cat3[i] as usize] += 1;
    }
    let mut sec_leaves = vec![0usize; t.n_sections];
    for &s in &t.section {
        sec_leaves[s as usize] += 1;
    }
    let sec_share = zipf_shares(&sec_parent, 19, &sec_key, 0.6, |s| (sec_leaves[s] as f64).powf(0.6));
    let cat_share = zipf_shares(&cat_parent, t.n_sections, &cat_key, 0.8, |c| (cat_leaves[c] as f64).powf(0.5));
    let leaf_parent: Vec<usize> = t.cat3.iter().map(|&c| c as usize).collect();
    let leaf_share = zipf_shares(&leaf_parent, t.n_cat3, &leaf_key, 1.0, |_| 1.0);

    let total: f64 = chapter_weight.iter().sum();
    let zipf: Vec<f64> = (0..n)
        .map(|i| {
            let s = t.section[i] as usize;
            sec_share[s] * cat_share[t.cat3[i] as usize] * leaf_share[i]
        })
        .collect();
    // Within each chapter, popularity^gamma rescaled to the chapter's weight: the same order
    // of codes within a chapter, more of the chapter's mass on its popular codes.
    let (mut raw, mut powered) = ([0.0; 19], [0.0; 19]);
    for i in 0..n {
        raw[t.chapter[i] as usize] += zipf[i];
        powered[t.chapter[i] as usize] += zipf[i].powf(gamma);
    }
    let mut w: Vec<f64> = (0..n)
        .map(|i| {
            let ch = t.chapter[i] as usize;
            chapter_weight[ch] * zipf[i].powf(gamma) * raw[ch] / powered[ch]
        })
        .collect();
    for &(code, share) in COMMON_CODES {
        if let Some(i) = t.code.iter().position(|c| *c == code)
            && chapter_weight[t.chapter[i] as usize] > 0.0
        {
            w[i] += head * share * total;
        }
    }
    w
}

/// Share of each member within its parent group: `mass(m) / (rank + 1)^s`, normalized.
fn zipf_shares(parent: &[usize], n_parents: usize, key: &[f64], s: f64, mass: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); n_parents];
    for (m, &p) in parent.iter().enumerate() {
        groups[p].push(m);
    }
    let mut share = vec![0.0; parent.len()];
    for g in &mut groups {
        g.sort_by(|&a, &b| key[a].total_cmp(&key[b]));
        let raw: Vec<f64> = g.iter().enumerate().map(|(r, &m)| mass(m) / ((r + 1) as f64).powf(s)).collect();
        let sum: f64 = raw.iter().sum();
        for (&m, x) in g.iter().zip(raw) {
            share[m] = x / sum;
        }
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_the_hierarchy() {
        let t = table();
        let h = icd9_hierarchy().unwrap();
        assert_eq!(t.code.len(), ICD9_LEAVES);
        assert_eq!(h.leaf_count(), ICD9_LEAVES);
        assert_eq!(h.height(), 4);
        for (i, c) in t.code.iter().enumerate() {
            assert_eq!(h.leaf_of_label(c), Some(i as u32), "{c}");
            assert_eq!(h.label(3, h.up(3)[i]), CHAPTERS[t.chapter[i] as usize]);
        }
        assert_eq!(t.n_cat3, 1_234);
        assert_eq!(t.n_sections, 156);
        assert!(Arc::ptr_eq(&h, &icd9_hierarchy().unwrap()));
    }

    #[test]
    fn restrictions_follow_the_chapters_and_categories() {
        use Restriction::*;
        // Per restriction, the (code, category, chapter) that carry it.
        type Codes = &'static [(&'static str, &'static str, usize)];
        let cases: [(Restriction, Codes); 5] = [
            (Pregnancy, &[("6400", "640", 10), ("V220", "V22", 17)]),
            (Male, &[("600", "600", 9), ("185", "185", 1), ("V7644", "V76", 17)]),
            (Female, &[("6169", "616", 9), ("1749", "174", 1), ("V2501", "V25", 17)]),
            (Newborn, &[("V3000", "V30", 17)]),
            (Any, &[("V252", "V25", 17), ("4019", "401", 6), ("E8120", "E812", 18)]),
        ];
        for (expected, codes) in cases {
            for &(code, category, chapter) in codes {
                assert_eq!(restriction(code, category, chapter), expected, "{code}");
            }
        }
        assert!(Pregnancy.allows(true, 30) && !Pregnancy.allows(true, 55) && !Pregnancy.allows(false, 30));
        for (code, _) in COMMON_CODES {
            assert!(table().code.contains(code), "{code}");
        }
    }
}
