//! `risk_report`'s options and rows: the numbers of this module, one row per measure
//! (`measure`, `value`, `detail`), in the order a reader asks them.

use super::{Class, Histogram, Uniqueness, sample_risks, sample_uniques, uniqueness};
use crate::error::{AnonError, Result};
use crate::methods::options::{Kind, Options as Declared, opt};

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
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Population {
    Size(f64),
    Fraction(f64),
}

/// ARX's default highest acceptable risk, 1/5: a record is at risk below class size 5.
const DEFAULT_THRESHOLD: f64 = 0.2;

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
        })
    }
}

/// One row of the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub(crate) measure: &'static str,
    pub(crate) value: f64,
    pub(crate) detail: String,
}

fn row(measure: &'static str, value: f64, detail: impl Into<String>) -> Row {
    Row { measure, value, detail: detail.into() }
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
    let size = match options.population {
        None => {
            let why = "declare population=N or fraction=f in the options";
            return Ok(vec![row("population_uniques", f64::NAN, format!("not estimated: {why}"))]);
        }
        Some(Population::Size(size)) => size,
        Some(Population::Fraction(f)) => n / f,
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
        };
        let e = rows(&classes, 0, &o).expect_err("refused").to_string();
        assert!(e.contains("options") && e.contains("smaller than the sample"), "{e}");
    }
}
