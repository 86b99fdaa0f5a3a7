//! The diagnosis-code model: a preset's code vocabulary, per-profile code distributions, the
//! record-size distribution, and the generation of each record's code set.

use super::demographics::{AGE_BANDS, BAND_AGE, Demographics, cumulative, size_factors};
use super::icd9::Icd9;
use super::{RtPreset, Spec};
use rand::{RngExt, rngs::StdRng};

/// Relative frequency of each chapter by age band (0, 1–4, 5–12, 13–19, 20s, ..., 70s, 80+).
const CHAPTER_AGE: [[f64; AGE_BANDS]; 19] = [
    [1.5, 2.0, 1.6, 1.0, 1.0, 1.0, 0.9, 0.9, 0.9, 1.0, 1.1], // infectious
    [0.1, 0.2, 0.2, 0.3, 0.4, 0.6, 1.0, 1.5, 2.0, 2.1, 1.8], // neoplasms
    [0.3, 0.3, 0.4, 0.5, 0.6, 0.8, 1.1, 1.4, 1.6, 1.6, 1.4], // endocrine
    [1.0, 1.0, 0.7, 0.7, 0.8, 0.8, 0.9, 1.0, 1.2, 1.5, 1.8], // blood
    [0.1, 0.6, 1.5, 1.8, 1.6, 1.4, 1.3, 1.1, 0.9, 0.9, 1.3], // mental
    [0.5, 1.8, 1.4, 1.0, 0.8, 0.8, 0.9, 1.0, 1.2, 1.4, 1.5], // nervous system, sense organs
    [0.1, 0.1, 0.1, 0.2, 0.3, 0.5, 0.9, 1.4, 1.9, 2.2, 2.4], // circulatory
    [1.2, 2.5, 1.8, 1.2, 0.9, 0.8, 0.8, 0.9, 1.0, 1.2, 1.3], // respiratory
    [0.6, 0.8, 0.8, 0.9, 1.0, 1.0, 1.1, 1.1, 1.1, 1.2, 1.2], // digestive
    [0.4, 0.5, 0.6, 0.9, 1.1, 1.0, 1.0, 1.0, 1.1, 1.3, 1.5], // genitourinary
    [0.0, 0.0, 0.0, 0.6, 3.0, 2.2, 0.4, 0.0, 0.0, 0.0, 0.0], // pregnancy (females 13-49 only)
    [1.2, 1.2, 1.0, 1.2, 1.0, 0.9, 0.9, 0.9, 1.0, 1.0, 1.1], // skin
    [0.1, 0.2, 0.4, 0.8, 0.9, 1.0, 1.2, 1.4, 1.4, 1.3, 1.2], // musculoskeletal
    [6.0, 3.0, 1.8, 1.0, 0.5, 0.4, 0.3, 0.2, 0.2, 0.2, 0.2], // congenital
    [6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], // perinatal (newborns only)
    [1.2, 1.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.1, 1.2], // symptoms, ill-defined
    [0.4, 1.2, 1.4, 1.8, 1.6, 1.2, 1.0, 0.9, 0.8, 0.9, 1.3], // injury and poisoning
    [3.0, 1.5, 1.2, 1.0, 1.2, 1.1, 1.0, 1.0, 1.0, 1.0, 1.0], // V codes
    [0.4, 1.2, 1.3, 1.6, 1.5, 1.2, 1.0, 0.9, 0.8, 0.9, 1.2], // E codes
];

/// Relative frequency of each chapter for (male, female).
const CHAPTER_SEX: [(f64, f64); 19] = [
    (1.0, 1.0),
    (1.0, 1.0),
    (1.0, 1.05),
    (0.9, 1.1),
    (1.0, 1.0),
    (1.0, 1.0),
    (1.15, 0.9),
    (1.0, 1.0),
    (1.0, 1.0),
    (0.8, 1.2),
    (1.0, 1.0),
    (1.0, 1.0),
    (0.9, 1.1),
    (1.0, 1.0),
    (1.0, 1.0),
    (1.0, 1.0),
    (1.3, 0.8),
    (1.0, 1.0),
    (1.3, 0.8),
];

/// Age- and sex-specific 3-digit categories beyond their chapter's curve.
fn category_factor(code: &str, band: usize, female: bool) -> f64 {
    let Some(cat) = code.get(..3).and_then(|c| c.parse::<u32>().ok()) else { return 1.0 };
    match cat {
        // dementias, cerebral degenerations (Alzheimer's)
        290 | 294 | 331 => [0.0, 0.0, 0.0, 0.02, 0.02, 0.05, 0.2, 0.5, 1.5, 3.0, 5.0][band],
        // otitis media
        381 | 382 => [1.0, 5.0, 4.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5][band],
        // hyperkinetic syndrome
        314 => [0.0, 0.5, 5.0, 3.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1][band],
        // osteoarthrosis
        715 => [0.0, 0.0, 0.0, 0.1, 0.2, 0.4, 0.8, 1.5, 2.2, 2.5, 2.5][band],
        // osteoporosis and other bone disorders
        733 => {
            if female {
                2.0
            } else {
                0.7
            }
        }
        _ => 1.0,
    }
}

/// A preset's code vocabulary: the leaves (indices into the ICD-9 table) that occur in it,
/// in ICD order, grouped by section.
pub(crate) struct Vocab {
    pub(crate) leaves: Vec<u32>,
    /// Start of each section's run in `leaves`, plus the end.
    sec_start: Vec<usize>,
}

impl Vocab {
    /// The `size` most popular eligible leaves of the preset (popularity from
    /// `base_weights`), so a smaller vocabulary is a prefix of a larger one.
    pub(crate) fn new(t: &Icd9, base: &[f64], size: usize, eligible: impl Fn(usize) -> bool) -> Vocab {
        let mut ranked: Vec<usize> = (0..t.code.len()).filter(|&i| base[i] > 0.0 && eligible(i)).collect();
        ranked.sort_by(|&a, &b| base[b].total_cmp(&base[a]).then(a.cmp(&b)));
        ranked.truncate(size);
        ranked.sort_by_key(|&i| (t.section[i], i));
        let leaves: Vec<u32> = ranked.iter().map(|&i| i as u32).collect();
        let mut sec_start = Vec::new();
        for (j, &i) in ranked.iter().enumerate() {
            if j == 0 || t.section[i] != t.section[ranked[j - 1]] {
                sec_start.push(j);
            }
        }
        sec_start.push(leaves.len());
        Vocab { leaves, sec_start }
    }

    pub(crate) fn len(&self) -> usize {
        self.leaves.len()
    }
}

/// Code distribution of each profile (sex × age band): section weights and, within each
/// section, cumulative leaf weights. Codes a profile may not carry have weight 0.
pub(crate) struct Profiles {
    sec_cum: Vec<Vec<f64>>,
    leaf_cum: Vec<Vec<f64>>,
    /// Number of codes each profile may carry.
    allowed: Vec<usize>,
}

impl Profiles {
    pub(crate) fn new(t: &Icd9, base: &[f64], vocab: &Vocab) -> Profiles {
        let n_prof = 2 * AGE_BANDS;
        let mut p = Profiles { sec_cum: Vec::new(), leaf_cum: Vec::new(), allowed: Vec::new() };
        for prof in 0..n_prof {
            let female = prof >= AGE_BANDS;
            let band = prof % AGE_BANDS;
            let age = BAND_AGE[band];
            let mut leaf_cum = Vec::with_capacity(vocab.len());
            let mut sec = Vec::with_capacity(vocab.sec_start.len());
            let mut allowed = 0;
            for s in 0..vocab.sec_start.len() - 1 {
                let mut acc = 0.0;
                for &leaf in &vocab.leaves[vocab.sec_start[s]..vocab.sec_start[s + 1]] {
                    let i = leaf as usize;
                    let ch = t.chapter[i] as usize;
                    let w = if t.restriction[i].allows(female, age) {
                        let sex = if female { CHAPTER_SEX[ch].1 } else { CHAPTER_SEX[ch].0 };
                        base[i] * CHAPTER_AGE[ch][band] * sex * category_factor(t.code[i], band, female)
                    } else {
                        0.0
                    };
                    allowed += (w > 0.0) as usize;
                    acc += w;
                    leaf_cum.push(acc);
                }
                sec.push(acc);
            }
            p.sec_cum.push(cumulative(&sec));
            p.leaf_cum.push(leaf_cum);
            p.allowed.push(allowed);
        }
        p
    }

    fn weight(&self, prof: usize, vocab: &Vocab, j: usize, sec: usize) -> f64 {
        let c = &self.leaf_cum[prof];
        if j == vocab.sec_start[sec] { c[j] } else { c[j] - c[j - 1] }
    }

    fn section(&self, prof: usize, rng: &mut StdRng) -> usize {
        let cum = &self.sec_cum[prof];
        let u = rng.random::<f64>() * cum[cum.len() - 1];
        cum.partition_point(|&c| c <= u).min(cum.len() - 1)
    }

    fn leaf(&self, prof: usize, vocab: &Vocab, sec: usize, rng: &mut StdRng) -> usize {
        let (a, b) = (vocab.sec_start[sec], vocab.sec_start[sec + 1]);
        let cum = &self.leaf_cum[prof][a..b];
        let u = rng.random::<f64>() * cum[cum.len() - 1];
        a + cum.partition_point(|&c| c <= u).min(cum.len() - 1)
    }
}

/// Section of each vocabulary position.
fn section_of(vocab: &Vocab) -> Vec<u32> {
    let mut s = vec![0u32; vocab.len()];
    for k in 0..vocab.sec_start.len() - 1 {
        for x in &mut s[vocab.sec_start[k]..vocab.sec_start[k + 1]] {
            *x = k as u32;
        }
    }
    s
}

/// Record sizes: 1 + a negative binomial (shape `spec.nb_shape`) whose mean is θ times the
/// patient's size factor, truncated to the maximum; θ is set by bisection so that the mean
/// of the realized sizes is the preset's. When `plant`, sizes stop one below the maximum and
/// the largest record is raised to it, so exactly one record has the maximum.
pub(crate) fn record_sizes(spec: &Spec, preset: RtPreset, d: &Demographics, plant: bool, rng: &mut StdRng) -> Vec<u32> {
    let n = d.size_class.len();
    let factors = size_factors(preset);
    let cap = if plant { spec.max_codes - 1 } else { spec.max_codes };
    let u: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
    let sizes_for = |theta: f64| -> (Vec<u32>, f64) {
        let cdfs: Vec<Vec<f64>> = factors.iter().map(|f| nb_cdf(spec.nb_shape, theta * f, cap)).collect();
        let mut sizes: Vec<u32> = (0..n)
            .map(|i| {
                let cdf = &cdfs[d.size_class[i] as usize];
                1 + cdf.partition_point(|&c| c <= u[i]).min(cap - 1) as u32
            })
            .collect();
        if plant && n > 0 {
            let top = (0..n).max_by_key(|&i| (sizes[i], std::cmp::Reverse(i))).unwrap_or(0);
            sizes[top] = spec.max_codes as u32;
        }
        let mean = sizes.iter().map(|&s| s as f64).sum::<f64>() / n.max(1) as f64;
        (sizes, mean)
    };
    let (mut lo, mut hi) = (0.0, 4.0 * spec.avg_codes);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if sizes_for(mid).1 < spec.avg_codes {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (a, ma) = sizes_for(lo);
    let (b, mb) = sizes_for(hi);
    if (ma - spec.avg_codes).abs() <= (mb - spec.avg_codes).abs() { a } else { b }
}

/// CDF of a negative binomial (shape r, mean m) on 0..cap, truncated and renormalized.
fn nb_cdf(r: f64, m: f64, cap: usize) -> Vec<f64> {
    let m = m.max(1e-9);
    let p = r / (r + m);
    let mut pmf = Vec::with_capacity(cap);
    // log P(0) = r ln p; recurrence P(k+1) = P(k) (k + r) / (k + 1) (1 - p).
    let mut lp = r * p.ln();
    for k in 0..cap {
        pmf.push(lp);
        lp += ((k as f64 + r) / (k as f64 + 1.0)).ln() + (1.0 - p).ln();
    }
    let top = pmf.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = pmf.iter().map(|x| (x - top).exp()).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect()
}

/// Generated code sets: `items[offsets[r]..offsets[r + 1]]` are record r's vocabulary
/// positions.
pub(crate) struct CodeSets {
    pub(crate) offsets: Vec<usize>,
    pub(crate) items: Vec<u32>,
    /// Codes placed by the coverage pass (diagnostics).
    placed: usize,
}

/// Draw every record's code set: clusters of codes from one section at a time (comorbidity),
/// sections and codes from the patient's profile distribution, no code twice in a record.
pub(crate) fn generate(
    spec: &Spec,
    vocab: &Vocab,
    prof: &Profiles,
    d: &Demographics,
    sizes: &[u32],
    rng: &mut StdRng,
) -> CodeSets {
    let n = sizes.len();
    let total: usize = sizes.iter().map(|&s| s as usize).sum();
    let mut items: Vec<u32> = Vec::with_capacity(total);
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut stamp = vec![u32::MAX; vocab.len()];
    let q = 1.0 - 1.0 / spec.cluster_mean;
    let sec = section_of(vocab);
    for (r, &size) in sizes.iter().enumerate() {
        let p = d.profile[r] as usize;
        let size = (size as usize).min(prof.allowed[p]);
        let start = items.len();
        let mut misses = 0;
        while items.len() - start < size {
            let remaining = size - (items.len() - start);
            let s = prof.section(p, rng);
            let mut c = 1;
            while c < remaining && rng.random::<f64>() < q {
                c += 1;
            }
            let mut got = 0;
            for _ in 0..(3 * c + 2) {
                if got == c {
                    break;
                }
                let j = prof.leaf(p, vocab, s, rng);
                if stamp[j] != r as u32 {
                    stamp[j] = r as u32;
                    items.push(j as u32);
                    got += 1;
                }
            }
            if got == 0 {
                misses += 1;
                if misses > 64 {
                    // Nearly every likely code is taken (a very long record): fill from the
                    // allowed codes in vocabulary order, from a random start.
                    let v = vocab.len();
                    let from = rng.random_range(0..v);
                    for k in 0..v {
                        if items.len() - start == size {
                            break;
                        }
                        let j = (from + k) % v;
                        if stamp[j] != r as u32 && prof.weight(p, vocab, j, sec[j] as usize) > 0.0 {
                            stamp[j] = r as u32;
                            items.push(j as u32);
                        }
                    }
                    break;
                }
            }
        }
        offsets.push(items.len());
    }
    let mut sets = CodeSets { offsets, items, placed: 0 };
    cover(&mut sets, vocab, prof, d, rng);
    sets
}

/// Coverage pass: every vocabulary code that no record drew replaces, in a random record that
/// may carry it, a code that occurs elsewhere too. Record sizes do not change; the number of
/// distinct codes becomes the vocabulary size (unless no record may carry a code).
fn cover(sets: &mut CodeSets, vocab: &Vocab, prof: &Profiles, d: &Demographics, rng: &mut StdRng) {
    let n = sets.offsets.len() - 1;
    if n == 0 {
        return;
    }
    let sec = section_of(vocab);
    let mut count = vec![0u32; vocab.len()];
    for &j in &sets.items {
        count[j as usize] += 1;
    }
    let missing: Vec<usize> = (0..vocab.len()).filter(|&j| count[j] == 0).collect();
    for j in missing {
        let s = sec[j] as usize;
        let try_record = |r: usize, sets: &mut CodeSets, count: &mut [u32], rng: &mut StdRng| -> bool {
            if prof.weight(d.profile[r] as usize, vocab, j, s) <= 0.0 {
                return false;
            }
            let rec = &mut sets.items[sets.offsets[r]..sets.offsets[r + 1]];
            if rec.is_empty() || rec.contains(&(j as u32)) {
                return false;
            }
            let from = rng.random_range(0..rec.len());
            for k in 0..rec.len() {
                let pos = (from + k) % rec.len();
                let old = rec[pos] as usize;
                if count[old] >= 2 {
                    count[old] -= 1;
                    count[j] += 1;
                    rec[pos] = j as u32;
                    return true;
                }
            }
            false
        };
        let mut done = false;
        for _ in 0..256 {
            let r = rng.random_range(0..n);
            if try_record(r, sets, &mut count, rng) {
                done = true;
                break;
            }
        }
        if !done {
            let from = rng.random_range(0..n);
            for k in 0..n {
                if try_record((from + k) % n, sets, &mut count, rng) {
                    done = true;
                    break;
                }
            }
        }
        sets.placed += done as usize;
    }
}
