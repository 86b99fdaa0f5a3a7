//! SUDA, special uniques detection (Elliot, Manning, Mayes, Gurd & Bane, *SUDA: a program for
//! detecting special uniques*; the search after Manning, Haglin & Keane's SUDA2, *Data Min.
//! Knowl. Disc.* 16, 2008), with the scores of sdcMicro's `suda2` (original_scores=TRUE).
//!
//! A *minimal sample unique* (MSU) of a record is a non-empty set S of quasi-identifiers on
//! which the record's values are shared by no other record, while on every proper subset of S
//! they are shared. A value that says nothing (`Records::missing`: NULL, a suppressed `*`) is in
//! no MSU. A record's SUDA score adds a weight per MSU that falls with the MSU's size; its
//! DIS-SUDA score spreads Skinner & Elliot's estimate of the chance that a sample unique is a
//! population unique over the records by their SUDA scores. Formulas: docs/risk.md.
//!
//! The search refines the partition of the rows (a frequency table's: a row per class, with
//! its records) one quasi-identifier at a time, depth first over the sets in increasing column
//! order (SUDA2's recursion): a row alone in its class, standing for one record, is unique on
//! every superset, so it leaves the partition, and only classes of two or more rows are
//! refined further. The sets on which a record leaves hold all its MSUs; its MSUs are the
//! minimal ones among them.

use super::read::Records;
use crate::error::Result;
use crate::progress::Progress;

/// SUDA's numbers for every row of the records (a row of identical records has none).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suda {
    /// The largest MSU size searched.
    pub(crate) max_size: usize,
    /// `msus[i * max_size + k - 1]`: row i's MSUs of size k.
    pub(crate) msus: Vec<u32>,
    pub(crate) scores: Vec<f64>,
    pub(crate) dis_scores: Vec<f64>,
    /// Skinner & Elliot's DIS: the estimated chance that a sample unique is a population unique.
    pub(crate) dis: f64,
    /// The records alone in their class, and in a class of two, on every quasi-identifier.
    pub(crate) uniques: f64,
    pub(crate) pair_records: f64,
}

impl Suda {
    /// Row i's MSUs by size (index k − 1).
    pub(crate) fn msus_of(&self, i: usize) -> &[u32] {
        &self.msus[i * self.max_size..(i + 1) * self.max_size]
    }
}

/// The most quasi-identifiers SUDA takes: a set of them is a bit mask.
pub(crate) const MAX_COLUMNS: usize = 32;

/// SUDA over `records` with MSUs of up to `max_size` quasi-identifiers (at most
/// [`MAX_COLUMNS`] columns) and sampling fraction `fraction` for DIS.
/// Ctrl-C (`progress`) stops the search between two refinements.
pub(crate) fn suda(records: &Records, max_size: usize, fraction: f64, progress: &dyn Progress) -> Result<Suda> {
    let m = records.codes.len();
    assert!(m <= MAX_COLUMNS, "SUDA takes at most {MAX_COLUMNS} quasi-identifiers");
    let max_size = max_size.clamp(1, m.max(1));
    let n = records.len();
    let mut msus = vec![0u32; n * max_size];
    for (record, set) in minimal_uniques(records, max_size, progress)? {
        msus[record as usize * max_size + set.count_ones() as usize - 1] += 1;
    }
    let weights = weights(m, max_size);
    let scores: Vec<f64> =
        msus.chunks(max_size).map(|c| c.iter().zip(&weights).map(|(&k, w)| k as f64 * w).sum()).collect();
    let sizes = records.class_sizes();
    let uniques = sizes.iter().filter(|&&s| s == 1).count() as f64;
    let pair_records = 2.0 * sizes.iter().filter(|&&s| s == 2).count() as f64;
    // No sample unique: none can be a population unique (sdcMicro divides 0 by 0).
    let dis =
        if uniques > 0.0 { uniques * fraction / (uniques * fraction + pair_records * (1.0 - fraction)) } else { 0.0 };
    let dis_scores = dis_scores(&scores, m, uniques, dis);
    Ok(Suda { max_size, msus, scores, dis_scores, dis, uniques, pair_records })
}

/// The weight of an MSU of size k (index k − 1) among m quasi-identifiers, MSUs searched up
/// to size K: Π_{i=k}^{min(K, m−1)} (m − i) (Elliot et al.; with K = m, sdcMicro's (m − k)!).
pub(crate) fn weights(m: usize, max_size: usize) -> Vec<f64> {
    (1..=max_size).map(|k| (k..=max_size.min(m.saturating_sub(1))).map(|i| (m - i) as f64).product()).collect()
}

/// Each row's DIS-SUDA score (sdcMicro's `Suda2.h`): with Q = 1 + (8 − m)/20 and A the sum
/// of score^−Q over the records with a score (each alone in its row), 1 / (1 + (U/DIS − U) / (score^Q · A)); 0 without
/// a score.
fn dis_scores(scores: &[f64], m: usize, uniques: f64, dis: f64) -> Vec<f64> {
    let q = 1.0 + (8.0 - m as f64) / 20.0;
    let adjust: f64 = scores.iter().filter(|&&s| s > 0.0).map(|s| s.powf(-q)).sum();
    let spread = uniques / dis - uniques;
    scores.iter().map(|&s| if s > 0.0 { 1.0 / (1.0 + spread / (s.powf(q) * adjust)) } else { 0.0 }).collect()
}

/// Every (record, MSU as a bit set of columns) of up to `max_size` columns.
fn minimal_uniques(records: &Records, max_size: usize, progress: &dyn Progress) -> Result<Vec<(u32, u32)>> {
    let search = Search { records, max_size, progress };
    let root = Partition { records: (0..records.len() as u32).collect(), ends: vec![records.len() as u32] };
    let first: Vec<usize> = if records.len() == 0 { Vec::new() } else { (0..records.codes.len()).collect() };
    // One job per first column: the subtrees share nothing.
    let found = crate::parallel::map(&first, |&v| {
        let mut out = Vec::new();
        let child = search.refine(&root, v, 1 << v, &mut out);
        search.visit(&child, 1 << v, v + 1, 1, &mut out);
        out
    });
    progress.check()?;
    let mut found: Vec<(u32, u32)> = found.into_iter().flatten().collect();
    found.sort_unstable();
    let mut msus = Vec::new();
    for group in found.chunk_by(|a, b| a.0 == b.0) {
        // Unique sets grow upwards: a set the record left on is an MSU unless a smaller one is
        // inside it.
        msus.extend(group.iter().filter(|&&(_, s)| !group.iter().any(|&(_, t)| t != s && t & s == t)));
    }
    Ok(msus)
}

/// Classes of two or more records: `records[ends[c-1]..ends[c]]` is class c.
struct Partition {
    records: Vec<u32>,
    ends: Vec<u32>,
}

struct Search<'a> {
    records: &'a Records,
    max_size: usize,
    progress: &'a dyn Progress,
}

impl Search<'_> {
    /// Refine the classes of `part` (on the columns of `set`) by every later column in turn.
    fn visit(&self, part: &Partition, set: u32, from: usize, size: usize, out: &mut Vec<(u32, u32)>) {
        // A cancelled search unwinds without looking further; `minimal_uniques` reports it.
        if size == self.max_size || part.ends.is_empty() || self.progress.cancelled() {
            return;
        }
        for v in from..self.records.codes.len() {
            let child = self.refine(part, v, set | 1 << v, out);
            self.visit(&child, set | 1 << v, v + 1, size + 1, out);
        }
    }

    /// The classes of `part` split by column `v`'s codes: a record alone in its new class is
    /// unique on `set` (pushed to `out`); a record whose value says nothing leaves (no set with
    /// `v` is an MSU of it, and it matches no one's value on `v`).
    fn refine(&self, part: &Partition, v: usize, set: u32, out: &mut Vec<(u32, u32)>) -> Partition {
        let (codes, missing) = (&self.records.codes[v], &self.records.missing[v]);
        let mut next = Partition { records: Vec::new(), ends: Vec::new() };
        let mut keyed: Vec<u64> = Vec::new();
        let mut start = 0;
        for &end in &part.ends {
            keyed.clear();
            keyed.extend(
                part.records[start as usize..end as usize]
                    .iter()
                    .filter(|&&r| !missing[codes[r as usize] as usize])
                    .map(|&r| u64::from(codes[r as usize]) << 32 | u64::from(r)),
            );
            keyed.sort_unstable();
            for class in keyed.chunk_by(|a, b| a >> 32 == b >> 32) {
                if let [only] = class {
                    // A row of identical records is unique on no set.
                    if self.records.counts[*only as u32 as usize] == 1 {
                        out.push((*only as u32, set));
                    }
                } else {
                    next.records.extend(class.iter().map(|&k| k as u32));
                    next.ends.push(next.records.len() as u32);
                }
            }
            start = end;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AnonError;
    use crate::progress::Silent;

    /// A progress whose user has pressed Ctrl-C.
    #[derive(Debug)]
    struct Cancelled;

    impl Progress for Cancelled {
        fn begin(&self, _: &str, _: u64) {}
        fn advance(&self, _: u64) {}
        fn finish(&self) {}
        fn cancelled(&self) -> bool {
            true
        }
    }

    #[test]
    fn ctrl_c_stops_the_search() {
        let r = table(&[&["a", "x", "1"], &["a", "y", "1"], &["b", "y", "2"]]);
        assert!(matches!(suda(&r, 3, 0.01, &Cancelled), Err(AnonError::Cancelled)));
    }

    /// Records from rows of labels (each column's labels numbered in order met).
    fn table(rows: &[&[&str]]) -> Records {
        let m = rows[0].len();
        let codes = (0..m)
            .map(|j| {
                let mut seen: Vec<&str> = Vec::new();
                rows.iter()
                    .map(|r| {
                        let v = r[j];
                        seen.iter().position(|s| *s == v).unwrap_or_else(|| {
                            seen.push(v);
                            seen.len() - 1
                        }) as u32
                    })
                    .collect()
            })
            .collect();
        Records::from_codes(codes, &[])
    }

    #[test]
    fn sdcmicro_weights() {
        // (m − k)!: 4 quasi-identifiers give 6, 2, 1, 1.
        assert_eq!(weights(4, 4), vec![6.0, 2.0, 1.0, 1.0]);
        // Elliot et al. with MSUs up to 3 of 7: 6·5·4, 5·4, 4.
        assert_eq!(weights(7, 3), vec![120.0, 20.0, 4.0]);
    }

    #[test]
    fn the_scores_of_sdcmicros_three_column_example() {
        // sdcMicro's tests/testthat/test_suda2.R: a = (2, 1, 1), b = (0, 3, 0), c = (0, 6, 0).
        let r = Records::from_codes(vec![vec![0, 1, 1], vec![0, 1, 0], vec![0, 1, 0]], &[]);
        let s = suda(&r, 3, 0.01, &Silent).unwrap();
        // Record 1: {a}; record 2: {b}, {c}; record 3: {a, b}, {a, c}.
        assert_eq!(s.scores, vec![2.0, 4.0, 2.0]);
        assert_eq!(s.msus_of(1), &[2, 0, 0]);
        assert_eq!(s.msus_of(2), &[0, 2, 0]);
    }

    #[test]
    fn the_scores_of_sdcmicros_book_example() {
        // sdcMicro's test "suda2 book example": records 5 to 8 score 4, 2, 6, 8.
        let rows: Vec<&[&str]> = vec![
            &["20s", "male", "50k+", "highschool"],
            &["20s", "male", "50k+", "highschool"],
            &["20s", "male", "50k-", "highschool"],
            &["20s", "male", "50k-", "highschool"],
            &["20s", "female", "50k-", "university"],
            &["20s", "female", "50k-", "highschool"],
            &["20s", "female", "50k-", "middleschool"],
            &["60s", "male", "50k-", "university"],
        ];
        let s = suda(&table(&rows), 4, 0.01, &Silent).unwrap();
        assert_eq!(s.scores, vec![0.0, 0.0, 0.0, 0.0, 4.0, 2.0, 6.0, 8.0]);
    }

    #[test]
    fn the_scores_of_the_sdc_guideline_example() {
        // sdcMicro's test "suda2 sdc guideline": 0, 0, 6, 0, 12, 0, 6, 10, 0, 0.
        let rows: Vec<&[&str]> = vec![
            &["Urban", "Female", "Secondary incomplete", "Employed"],
            &["Urban", "Female", "Secondary incomplete", "Employed"],
            &["Urban", "Female", "Primary incomplete", "Non-LF"],
            &["Urban", "Male", "Secondary complete", "Employed"],
            &["Rural", "Female", "Secondary complete", "Unemployed"],
            &["Urban", "Male", "Secondary complete", "Employed"],
            &["Urban", "Female", "Primary complete", "Non-LF"],
            &["Urban", "Male", "Post-secondary", "Unemployed"],
            &["Urban", "Female", "Secondary incomplete", "Non-LF"],
            &["Urban", "Female", "Secondary incomplete", "Non-LF"],
        ];
        let s = suda(&table(&rows), 4, 0.01, &Silent).unwrap();
        assert_eq!(s.scores, vec![0.0, 0.0, 6.0, 0.0, 12.0, 0.0, 6.0, 10.0, 0.0, 0.0]);
        // 4 sample uniques (records 3, 5, 7, 8), 2 pairs' records (4 and 6; 1 and 2, 9 and 10 too).
        let (u, p, f) = (4.0, 6.0, 0.01);
        assert!((s.dis - u * f / (u * f + p * (1.0 - f))).abs() < 1e-15);
        // DIS scores rise with the SUDA score.
        assert!(s.dis_scores[4] > s.dis_scores[7] && s.dis_scores[7] > s.dis_scores[2]);
        assert_eq!(s.dis_scores[0], 0.0);
    }

    #[test]
    fn a_value_that_says_nothing_is_in_no_msu() {
        // Column a's code 2 is missing: record 3 is unique there, yet {a} is no MSU of it.
        let r = Records::from_codes(vec![vec![0, 0, 2], vec![0, 1, 1]], &[2]);
        let s = suda(&r, 2, 0.01, &Silent).unwrap();
        assert_eq!(s.msus_of(2), &[0, 0]);
        // Record 2's b = 1 is shared with record 3; on {a, b} record 3 has no value, so
        // record 2 is unique there... but {a} and {b} are shared: an MSU of size 2.
        assert_eq!(s.msus_of(1), &[0, 1]);
    }

    #[test]
    fn max_size_stops_the_search() {
        let r = Records::from_codes(vec![vec![0, 0, 1], vec![0, 1, 0], vec![0, 0, 0]], &[]);
        // The first record, (0, 0, 0), shares each of its values with another record and is
        // unique on {a, b}.
        assert_eq!(suda(&r, 1, 0.01, &Silent).unwrap().msus_of(0), &[0]);
        assert_eq!(suda(&r, 2, 0.01, &Silent).unwrap().msus_of(0), &[0, 1]);
    }
}
