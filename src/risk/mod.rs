//! Re-identification risk of a table or a release on its quasi-identifiers, as ARX defines
//! it: the prosecutor, journalist and marketer attackers (records at risk above a threshold,
//! the highest and lowest individual risk, the success rate), sample uniques and pairs, and
//! population uniqueness by the Pitman, Zayatz and SNB models with Dankar et al.'s rule
//! choosing among them. Every number is a function of the class sizes alone (classes as an
//! attacker sees them: the published quasi-identifier values), so this module takes sizes in
//! and gives numbers out; `read` counts the classes of a table or a release. SUDA's special
//! uniques (`suda`) are the one measure that needs the records themselves. Formulas and
//! sources: docs/risk.md.

mod population;
pub(crate) mod read;
pub(crate) mod report;
mod solver;
mod special;
pub(crate) mod suda;

/// The class-size histogram: (size, number of classes of that size), ascending by size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Histogram {
    sizes: Vec<(u64, u64)>,
}

impl Histogram {
    pub(crate) fn from_sizes(sizes: impl IntoIterator<Item = u64>) -> Self {
        let mut counts = std::collections::BTreeMap::new();
        for s in sizes.into_iter().filter(|&s| s > 0) {
            *counts.entry(s).or_insert(0u64) += 1;
        }
        Histogram { sizes: counts.into_iter().collect() }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sizes.iter().copied()
    }

    /// Number of classes of exactly `size` records.
    pub(crate) fn count_of(&self, size: u64) -> u64 {
        self.sizes.iter().find(|(s, _)| *s == size).map_or(0, |(_, c)| *c)
    }

    pub(crate) fn records(&self) -> f64 {
        self.sizes.iter().map(|(s, c)| (s * c) as f64).sum()
    }

    pub(crate) fn classes(&self) -> f64 {
        self.sizes.iter().map(|(_, c)| *c as f64).sum()
    }
}

/// One class as the attacker sees it: its records in the sample (the table or release) and
/// in the population the journalist links against (the sample itself when none is given).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Class {
    pub(crate) sample: u64,
    pub(crate) population: u64,
}

/// An attacker's risk summary (ARX's RiskSummary): the share of records whose risk exceeds
/// the threshold, the highest and lowest individual risk, and the success rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub(crate) records_at_risk: f64,
    pub(crate) highest: f64,
    pub(crate) lowest: f64,
    pub(crate) success_rate: f64,
}

/// The prosecutor (knows the target is in the sample), the journalist (links against a
/// population) and the marketer (re-identifies as many records as possible).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SampleRisks {
    pub(crate) prosecutor: Summary,
    pub(crate) journalist: Summary,
    pub(crate) marketer: f64,
}

/// The three attackers over `classes` (sizes > 0, population ≥ sample) with risk threshold
/// `threshold` (a record is at risk when 1/size > threshold). No classes: every risk 0.
pub(crate) fn sample_risks(classes: &[Class], threshold: f64) -> SampleRisks {
    let zero = Summary { records_at_risk: 0.0, highest: 0.0, lowest: 0.0, success_rate: 0.0 };
    if classes.is_empty() {
        return SampleRisks { prosecutor: zero, journalist: zero, marketer: 0.0 };
    }
    let n: f64 = classes.iter().map(|c| c.sample as f64).sum();
    let u = classes.len() as f64;
    let summary = |size: &dyn Fn(&Class) -> u64| -> (f64, f64, f64) {
        // fold from +0: an empty f64 sum is −0.
        let at_risk =
            classes.iter().filter(|c| 1.0 / size(c) as f64 > threshold).fold(0.0, |acc, c| acc + c.sample as f64);
        let smallest = classes.iter().map(size).min().unwrap_or(1) as f64;
        let largest = classes.iter().map(size).max().unwrap_or(1) as f64;
        (at_risk / n, 1.0 / smallest, 1.0 / largest)
    };
    let (p_risk, p_high, p_low) = summary(&|c| c.sample);
    let (j_risk, j_high, j_low) = summary(&|c| c.population);
    // Σ f_j / F_j over n: the expected share of records a marketer matches correctly.
    let marketer = classes.iter().map(|c| c.sample as f64 / c.population as f64).sum::<f64>() / n;
    let population: f64 = classes.iter().map(|c| c.population as f64).sum();
    SampleRisks {
        prosecutor: Summary { records_at_risk: p_risk, highest: p_high, lowest: p_low, success_rate: u / n },
        journalist: Summary {
            records_at_risk: j_risk,
            highest: j_high,
            lowest: j_low,
            success_rate: (u / population).max(marketer),
        },
        marketer,
    }
}

pub(crate) use population::{Uniqueness, uniqueness};

/// Sample uniqueness: records alone in their class, and records in a class of two.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SampleUniques {
    pub(crate) uniques: u64,
    pub(crate) pair_records: u64,
}

pub(crate) fn sample_uniques(h: &Histogram) -> SampleUniques {
    SampleUniques { uniques: h.count_of(1), pair_records: 2 * h.count_of(2) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(sizes: &[u64]) -> Vec<Class> {
        sizes.iter().map(|&s| Class { sample: s, population: s }).collect()
    }

    #[test]
    fn prosecutor_on_a_small_table() {
        // Classes 1, 2, 5 (8 records): 1/1 and 1/2 exceed 0.2, 1/5 does not.
        let r = sample_risks(&classes(&[1, 2, 5]), 0.2);
        assert_eq!(r.prosecutor.records_at_risk, 3.0 / 8.0);
        assert_eq!(r.prosecutor.highest, 1.0);
        assert_eq!(r.prosecutor.lowest, 0.2);
        assert_eq!(r.prosecutor.success_rate, 3.0 / 8.0);
        // Without a population table the journalist links against the sample.
        assert_eq!(r.journalist, r.prosecutor);
        assert_eq!(r.marketer, 3.0 / 8.0);
    }

    #[test]
    fn journalist_links_against_the_population() {
        let c = [Class { sample: 1, population: 4 }, Class { sample: 2, population: 2 }];
        let r = sample_risks(&c, 0.3);
        // 1/4 ≤ 0.3 < 1/2: the class of two is at risk.
        assert_eq!(r.journalist.records_at_risk, 2.0 / 3.0);
        assert_eq!(r.journalist.highest, 0.5);
        assert_eq!(r.marketer, (0.25 + 1.0) / 3.0);
        assert_eq!(r.journalist.success_rate, (2.0f64 / 6.0).max(r.marketer));
    }

    #[test]
    fn uniques_and_pairs() {
        let h = Histogram::from_sizes([1, 1, 2, 3, 2, 1]);
        assert_eq!(sample_uniques(&h), SampleUniques { uniques: 3, pair_records: 4 });
        assert_eq!(h.records(), 10.0);
        assert_eq!(h.classes(), 6.0);
    }

    #[test]
    fn no_sample_uniques_means_no_population_uniques() {
        let u = uniqueness(&Histogram::from_sizes([2, 3, 5]), 1000.0);
        assert_eq!((u.dankar, u.chosen), (0.0, population::Model::None));
    }

    #[test]
    fn zayatz_at_full_sampling_counts_the_sample_uniques() {
        // f = 1: a population class of size s > 1 never yields exactly one record, so every
        // sample unique is a population unique.
        let h = Histogram::from_sizes([1, 1, 1, 2, 4]);
        assert!((population::zayatz(&h, 9.0) - 3.0).abs() < 1e-12);
    }
}
