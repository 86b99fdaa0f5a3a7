//! `risk_report`'s options and rows: the numbers of this module, one row per measure
//! (`measure`, `value`, `detail`), in the order a reader asks them.

use super::read::Records;
use super::suda::{MAX_COLUMNS, Suda, suda};
use super::{Class, Histogram, Uniqueness, sample_risks, sample_uniques, uniqueness};
use crate::error::{AnonError, Result};
use crate::methods::options::{Kind, Options as Declared, opt};
use crate::progress::Progress;

/// What the custodian declares: the threshold above which a record's risk counts, the
/// population the sample was drawn from, and the quasi-identifiers to consider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub(crate) threshold: f64,
    pub(crate) population: Option<Population>,
    /// None: every declared quasi-identifier.
    pub(crate) qis: Option<Vec<String>>,
    /// The journalist's linking table: the population, with the quasi-identifiers' raw values.
    pub(crate) population_table: Option<String>,
    /// An h-ceiling release's counterfeit catalog: measure the records it proves genuine.
    pub(crate) catalog: Option<String>,
    /// SUDA's special uniques, with MSUs of up to this many quasi-identifiers (None: every one).
    pub(crate) suda: Option<Option<usize>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Population {
    Size(f64),
    Fraction(f64),
}

/// ARX's default highest acceptable risk, 1/5: a record is at risk below class size 5.
const DEFAULT_THRESHOLD: f64 = 0.2;

/// sdcMicro's `suda2` default sampling fraction for DIS (`DisFraction`), taken when the
/// custodian declares no population.
const DEFAULT_DIS_FRACTION: f64 = 0.01;

/// `risk_report`'s options, declared once: the parser, the usage line and `\df` come from here.
pub(crate) const OPTIONS: Declared = Declared {
    function: "risk_report",
    specs: &[
        opt(
            "threshold",
            Kind::Float { min: 0.0, max: 1.0 },
            "0.2",
            "a record is at risk when its risk is above this (ARX's highest acceptable risk; above 0)",
        ),
        opt(
            "population",
            Kind::Float { min: 1.0, max: f64::INFINITY },
            "",
            "the population's size (not with fraction=)",
        ),
        opt(
            "fraction",
            Kind::Float { min: 0.0, max: 1.0 },
            "",
            "the sampling fraction, above 0 (not with population=)",
        ),
        opt("qis", Kind::Text("a b c"), "every declared quasi-identifier", "the quasi-identifiers to consider"),
        opt(
            "population_table",
            Kind::Text("table"),
            "",
            "the journalist's linking table: the population with the quasi-identifiers' raw values",
        ),
        opt(
            "catalog",
            Kind::Text("table"),
            "",
            "an h-ceiling release's catalog: measure the records it proves genuine",
        ),
        opt(
            "suda",
            Kind::Flag,
            "false",
            "SUDA's special uniques: minimal sample uniques by size, SUDA and DIS-SUDA scores (sdcMicro's suda2)",
        ),
        opt(
            "suda_max_size",
            Kind::Int { min: 1, max: MAX_COLUMNS as u64 },
            "every quasi-identifier",
            "the largest minimal sample unique SUDA looks for, in quasi-identifiers (with suda=true)",
        ),
    ],
};

impl Options {
    /// Read the options [`OPTIONS`] declares.
    pub(crate) fn parse(text: &str) -> Result<Options> {
        let o = OPTIONS.parse(text)?;
        let above_zero = |key: &str, v: Option<f64>| match v {
            Some(x) if x <= 0.0 => Err(AnonError::argument(OPTIONS.function, key, "must be above 0")),
            _ => Ok(v),
        };
        let threshold = above_zero("threshold", o.float("threshold"))?.unwrap_or(DEFAULT_THRESHOLD);
        let population = match (o.float("population"), above_zero("fraction", o.float("fraction"))?) {
            (Some(_), Some(_)) => {
                return Err(AnonError::argument(
                    OPTIONS.function,
                    "options",
                    "give one of population= and fraction=, not both",
                ));
            }
            (Some(n), None) => Some(Population::Size(n)),
            (None, Some(f)) => Some(Population::Fraction(f)),
            (None, None) => None,
        };
        Ok(Options {
            threshold,
            population,
            qis: o.text("qis").map(|v| v.split_whitespace().map(str::to_string).collect()),
            population_table: o.text("population_table").map(str::to_string),
            catalog: o.text("catalog").map(str::to_string),
            suda: match (o.flag("suda").unwrap_or(false), o.int("suda_max_size")) {
                (true, max) => Some(max.map(|k| k as usize)),
                (false, None) => None,
                (false, Some(_)) => {
                    return Err(AnonError::argument(OPTIONS.function, "suda_max_size", "needs suda=true"));
                }
            },
        })
    }

    /// The population's size for a sample of `n` records, as declared (None: not declared).
    fn population_size(&self, n: f64) -> Option<f64> {
        match self.population? {
            Population::Size(size) => Some(size),
            Population::Fraction(f) => Some(n / f),
        }
    }
}

/// One row of the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) measure: String,
    pub(crate) value: f64,
    pub(crate) detail: String,
}

fn row(measure: impl Into<String>, value: f64, detail: impl Into<String>) -> Row {
    // `+ 0.0` turns an empty sum's -0.0 (an all-suppressed release's records) into 0.
    Row { measure: measure.into(), value: value + 0.0, detail: detail.into() }
}

/// The report over `classes` (of a table or a release; `suppressed` records left out of
/// them; with a catalog, the records it leaves in doubt).
pub(crate) fn rows(classes: &[Class], suppressed: u64, options: &Options) -> Result<Vec<Row>> {
    let h = Histogram::from_sizes(classes.iter().map(|c| c.sample));
    let n = h.records();
    let t = options.threshold;
    let r = sample_risks(classes, t);
    let u = sample_uniques(&h);
    let share = |x: f64| if n > 0.0 { x / n } else { 0.0 };
    let journalist_basis = if let Some(p) = &options.population_table {
        format!("classes' sizes in the population table '{p}'")
    } else {
        "no population table: the sample stands for the population, as in ARX".to_string()
    };
    let mut out = vec![
        row("records", n, "records in classes (suppressed records excluded)"),
        row("suppressed_records", suppressed as f64, suppressed_detail(options)),
        row("classes", h.classes(), "distinct combinations of the quasi-identifiers as published"),
        row(
            "prosecutor_records_at_risk",
            r.prosecutor.records_at_risk,
            format!("share of records with 1/class size > {t}"),
        ),
        row("prosecutor_highest_risk", r.prosecutor.highest, "1 / smallest class"),
        row("prosecutor_lowest_risk", r.prosecutor.lowest, "1 / largest class"),
        row("prosecutor_success_rate", r.prosecutor.success_rate, "classes / records"),
        row("journalist_records_at_risk", r.journalist.records_at_risk, journalist_basis.clone()),
        row("journalist_highest_risk", r.journalist.highest, journalist_basis.clone()),
        row("journalist_lowest_risk", r.journalist.lowest, journalist_basis.clone()),
        row("journalist_success_rate", r.journalist.success_rate, journalist_basis.clone()),
        row("marketer_success_rate", r.marketer, journalist_basis),
        row("sample_uniques", share(u.uniques as f64), format!("{} records alone in their class", u.uniques)),
        row("sample_pairs", share(u.pair_records as f64), format!("{} records in classes of two", u.pair_records)),
    ];
    out.extend(population_rows(&h, options)?);
    Ok(out)
}

fn suppressed_detail(options: &Options) -> String {
    match &options.catalog {
        None => "records whose every quasi-identifier is suppressed".into(),
        Some(c) => format!(
            "records the catalog '{c}' leaves in doubt (may be counterfeit: truthful_view suppresses them); \
             the classes are those of the records it proves genuine, so each risk is an upper bound for them"
        ),
    }
}

fn population_rows(h: &Histogram, options: &Options) -> Result<Vec<Row>> {
    let n = h.records();
    let Some(size) = options.population_size(n) else {
        let why = "declare population=N or fraction=f in the options";
        return Ok(vec![row("population_uniques", f64::NAN, format!("not estimated: {why}"))]);
    };
    if size < n {
        return Err(AnonError::argument(
            "risk_report",
            "options",
            format!("population={size} is smaller than the sample's {n} records"),
        ));
    }
    if n == 0.0 {
        return Ok(vec![row("population_uniques", 0.0, "no records in classes")]);
    }
    let Uniqueness { pitman, zayatz, snb, dankar, chosen } = uniqueness(h, size);
    let model = |name: &'static str, v: Option<f64>, source: &str| match v {
        Some(v) => row(name, v / size, format!("{v:.3} population uniques ({source})")),
        None => row(name, f64::NAN, format!("no estimate: the model's equations have no admissible root ({source})")),
    };
    Ok(vec![
        row("population_size", size, format!("sampling fraction {:.6}", n / size)),
        model("pitman_uniques", pitman, "Pitman sampling formula, Hoshino 2001"),
        model("zayatz_uniques", zayatz, "Zayatz 1991"),
        model("snb_uniques", snb, "slide negative binomial, Chen & Keller-McNulty 1998"),
        row(
            "population_uniques",
            dankar / size,
            format!("{dankar:.3} population uniques by {} (Dankar et al. 2012's rule)", chosen.name()),
        ),
    ])
}

/// SUDA's rows over `records` (the report's records in classes): how many records have
/// minimal sample uniques and of which sizes, the SUDA and DIS-SUDA scores, and sdcMicro's
/// table of records by DIS-SUDA score (`print.suda2`).
pub(crate) fn suda_rows(
    records: &Records,
    max_size: Option<usize>,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Vec<Row>> {
    let m = records.codes.len();
    let n = records.records() as f64;
    let (fraction, basis) = match options.population_size(n) {
        Some(size) => (n / size, "the declared population"),
        None => (DEFAULT_DIS_FRACTION, "sdcMicro's default, no population declared"),
    };
    let s = suda(records, max_size.unwrap_or(m), fraction, progress)?;
    let share = |x: f64| if n > 0.0 { x / n } else { 0.0 };
    let with_msu = s.scores.iter().filter(|&&x| x > 0.0).count() as f64;
    let weights = super::suda::weights(m, s.max_size).iter().map(|w| w.to_string()).collect::<Vec<_>>().join(", ");
    let mut out = vec![row(
        "suda_records_with_msus",
        share(with_msu),
        format!("{with_msu} records unique on some set of at most {} quasi-identifiers", s.max_size),
    )];
    out.extend(msu_rows(&s));
    let highest = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    // A row with a score stands for one record.
    let mean = |v: &[f64]| share(v.iter().sum());
    out.extend([
        row("suda_score_highest", highest(&s.scores), format!("MSU weights by size 1..{}: {weights}", s.max_size)),
        row("suda_score_mean", mean(&s.scores), "mean over the records (0 without an MSU)"),
        row(
            "dis",
            s.dis,
            format!(
                "chance a sample unique is a population unique (Skinner & Elliot): {} uniques, {} records in pairs, \
                 sampling fraction {fraction:.6} ({basis})",
                s.uniques, s.pair_records
            ),
        ),
        row("dis_suda_score_highest", highest(&s.dis_scores), "DIS spread over the records by SUDA score"),
        row("dis_suda_score_mean", mean(&s.dis_scores), "mean over the records"),
    ]);
    out.extend(dis_table(&s.dis_scores, &records.counts, share));
    Ok(out)
}

/// One row per MSU size: how many MSUs, in how many records.
fn msu_rows(s: &Suda) -> Vec<Row> {
    (1..=s.max_size)
        .map(|k| {
            let counts = (0..s.scores.len()).map(|i| s.msus_of(i)[k - 1]);
            let (total, records) = counts.fold((0u64, 0u64), |(t, r), c| (t + u64::from(c), r + u64::from(c > 0)));
            row(
                format!("suda_msus_size_{k}"),
                total as f64,
                format!("minimal sample uniques of size {k}, in {records} records"),
            )
        })
        .collect()
}

/// sdcMicro's table of records by DIS-SUDA score: 0, then tenths up to 0.7, then above (its
/// breaks are the tenths plus machine epsilon, so a score of exactly 0.1 is in (0, 0.1]).
fn dis_table(scores: &[f64], counts: &[u64], share: impl Fn(f64) -> f64) -> Vec<Row> {
    let bound = |i: usize| i as f64 / 10.0 + f64::EPSILON;
    let count = |low: f64, high: f64| {
        // Counted as integers: an empty f64 sum is -0.0, which the table printed as "-0.0".
        scores.iter().zip(counts).filter(|&(&x, _)| x > low && x <= high).map(|(_, &n)| n).sum::<u64>() as f64
    };
    let mut out =
        vec![row("dis_suda_records_0", share(count(f64::NEG_INFINITY, bound(0))), "records with DIS-SUDA score 0")];
    for i in 1..=7 {
        let c = count(bound(i - 1), bound(i));
        let range = format!("({:.1}, {:.1}]", (i - 1) as f64 / 10.0, i as f64 / 10.0);
        out.push(row(
            format!("dis_suda_records_{:.1}_{:.1}", (i - 1) as f64 / 10.0, i as f64 / 10.0),
            share(c),
            format!("{c} records with DIS-SUDA score in {range}"),
        ));
    }
    let c = count(bound(7), f64::INFINITY);
    out.push(row("dis_suda_records_above_0.7", share(c), format!("{c} records with DIS-SUDA score above 0.7")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_refuse() {
        let o = Options::parse("threshold=0.1, fraction=0.5, qis=age sex").expect("parses");
        assert_eq!(o.threshold, 0.1);
        assert_eq!(o.population, Some(Population::Fraction(0.5)));
        assert_eq!(o.qis, Some(vec!["age".to_string(), "sex".to_string()]));
        for bad in [
            "threshold=2",
            "threshold=0",
            "population=0",
            "fraction=1.5",
            "fraction=0",
            "population=10, fraction=0.1",
            "k=3",
            "population",
        ] {
            assert!(Options::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_population_smaller_than_the_sample_is_refused() {
        let classes = [Class { sample: 3, population: 3 }];
        let o = Options {
            threshold: 0.2,
            population: Some(Population::Size(2.0)),
            qis: None,
            population_table: None,
            catalog: None,
            suda: None,
        };
        let e = rows(&classes, 0, &o).expect_err("refused").to_string();
        assert!(e.contains("options") && e.contains("smaller than the sample"), "{e}");
    }
}
