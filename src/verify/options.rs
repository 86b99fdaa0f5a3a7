//! The `checks` options string of `verify_release`: `'k=5, distinct_l=3, entropy_l=2,
//! recursive_cl=3:2, t=0.15, h=0.3, catalog, km=2:2, kmap=5:100000'`. Every key is parsed strictly; an unknown
//! key or a bad value is an error naming the key, so a typo never silently skips a check.

use crate::error::{AnonError, Result};

const FUNCTION: &str = "verify_release";
const KEYS: &str = "k=N, distinct_l=N, entropy_l=X, recursive_cl=C:L, t=X, h=X, catalog, km=K:M, kmap=K:N[:ALPHA[:poisson|zt_poisson]], constraints=TABLE";

/// One requested check with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Check {
    KAnonymity {
        k: u64,
    },
    DistinctL {
        l: u64,
    },
    EntropyL {
        l: f64,
    },
    RecursiveCL {
        c: f64,
        l: u64,
    },
    TCloseness {
        t: f64,
    },
    HCeiling {
        h: f64,
    },
    Catalog,
    KKm {
        k: u64,
        m: u64,
    },
    /// k-map against a population of `population` people at significance `alpha`.
    KMap {
        k: u64,
        population: u64,
        alpha: f64,
        zero_truncated: bool,
    },
    Constraints {
        table: String,
    },
}

impl Check {
    /// The name shown in the `check` column.
    pub(crate) fn name(&self) -> String {
        match self {
            Check::KAnonymity { k } => format!("k-anonymity(k={k})"),
            Check::DistinctL { l } => format!("distinct-l-diversity(l={l})"),
            Check::EntropyL { l } => format!("entropy-l-diversity(l={l})"),
            Check::RecursiveCL { c, l } => format!("recursive-(c,l)-diversity(c={c},l={l})"),
            Check::TCloseness { t } => format!("t-closeness(t={t})"),
            Check::HCeiling { h } => format!("h-ceiling(h={h})"),
            Check::Catalog => "catalog-safety".to_string(),
            Check::KKm { k, m } => format!("(k,k^m)-anonymity(k={k},m={m})"),
            Check::KMap { k, population, alpha, zero_truncated } => {
                let est = if *zero_truncated { "zt_poisson" } else { "poisson" };
                format!("k-map(k={k},population={population},significance={alpha},{est})")
            }
            Check::Constraints { table } => format!("utility-constraints({table})"),
        }
    }
}

fn err(key: &str, message: impl Into<String>) -> AnonError {
    AnonError::argument(FUNCTION, "checks", format!("'{key}': {} (keys: {KEYS})", message.into()))
}

fn positive_int(key: &str, v: &str) -> Result<u64> {
    match v.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(err(key, format!("'{v}' is not a positive integer"))),
    }
}

fn number(key: &str, v: &str, lo: f64, hi: f64) -> Result<f64> {
    // The range as a reader writes it: an open end is not f64::MAX's 309 digits.
    let range = if hi == f64::MAX {
        if lo == f64::MIN_POSITIVE { "> 0".to_string() } else { format!(">= {lo}") }
    } else {
        format!("in [{lo}, {hi}]")
    };
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_nan() => Err(err(key, format!("'{v}' is NaN, not a number; give a number {range}"))),
        Ok(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
        Ok(x) if x.is_finite() => Err(err(key, format!("'{v}' is out of range: give a number {range}"))),
        _ => Err(err(key, format!("'{v}' is not a finite number; give a number {range}"))),
    }
}

fn pair<'a>(key: &str, v: &'a str) -> Result<(&'a str, &'a str)> {
    v.split_once(':').ok_or_else(|| err(key, format!("'{v}' is not of the form A:B")))
}

fn parse_one(key: &str, value: Option<&str>) -> Result<Check> {
    let need = || value.ok_or_else(|| err(key, "needs a value (key=value)"));
    let check = match key {
        "k" => Check::KAnonymity { k: positive_int(key, need()?)? },
        "distinct_l" | "l" => Check::DistinctL { l: positive_int(key, need()?)? },
        "entropy_l" => Check::EntropyL { l: number(key, need()?, 1.0, f64::MAX)? },
        "recursive_cl" => {
            let (c, l) = pair(key, need()?)?;
            let c = number(key, c, f64::MIN_POSITIVE, f64::MAX)?;
            Check::RecursiveCL { c, l: positive_int(key, l)? }
        }
        "t" => Check::TCloseness { t: number(key, need()?, 0.0, 1.0)? },
        "h" => Check::HCeiling { h: number(key, need()?, 0.0, 1.0)? },
        "catalog" => match value {
            None => Check::Catalog,
            Some(_) => return Err(err(key, "takes no value; pass the catalog table as the 4th argument")),
        },
        "km" => {
            let (k, m) = pair(key, need()?)?;
            Check::KKm { k: positive_int(key, k)?, m: positive_int(key, m)? }
        }
        "kmap" => kmap(key, need()?)?,
        "constraints" => {
            let table = need()?.trim();
            if table.is_empty() || !table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(err(key, format!("'{table}' is not a table name")));
            }
            Check::Constraints { table: table.to_string() }
        }
        _ => return Err(err(key, "unknown check")),
    };
    Ok(check)
}

/// The significance level `kmap` checks at when none is given (the method's default).
const KMAP_ALPHA: f64 = 0.01;

/// `kmap=K:N[:ALPHA[:ESTIMATOR]]`, zero-truncated Poisson unless `poisson` is named.
fn kmap(key: &str, v: &str) -> Result<Check> {
    let parts: Vec<&str> = v.split(':').collect();
    if !(2..=4).contains(&parts.len()) {
        return Err(err(key, format!("'{v}' is not of the form K:N[:ALPHA[:poisson|zt_poisson]]")));
    }
    let alpha = match parts.get(2) {
        Some(a) => number(key, a, 0.0, 1.0)?,
        None => KMAP_ALPHA,
    };
    let zero_truncated = match parts.get(3).map(|s| s.trim()) {
        None | Some("zt_poisson") => true,
        Some("poisson") => false,
        Some(other) => return Err(err(key, format!("'{other}' is not an estimator (poisson, zt_poisson)"))),
    };
    Ok(Check::KMap { k: positive_int(key, parts[0])?, population: positive_int(key, parts[1])?, alpha, zero_truncated })
}

/// Parse the options string into checks, in the order written. A key given twice is an error.
pub(crate) fn parse_checks(spec: &str) -> Result<Vec<Check>> {
    let mut checks: Vec<(String, Check)> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = match part.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), Some(v.trim())),
            None => (part.to_ascii_lowercase(), None),
        };
        let check = parse_one(&key, value)?;
        // `l` is `distinct_l`'s other name: both given are one check given twice.
        let canonical = |k: &str| if k == "l" { "distinct_l".to_string() } else { k.to_string() };
        if let Some((first, _)) = checks.iter().find(|(k, _)| canonical(k) == canonical(&key)) {
            return Err(if *first == key {
                err(&key, "is given twice")
            } else {
                err(&key, format!("is given twice ('{first}' and '{key}' are one check, distinct l-diversity)"))
            });
        }
        checks.push((key, check));
    }
    if checks.is_empty() {
        return Err(AnonError::argument(FUNCTION, "checks", format!("no checks given (keys: {KEYS})")));
    }
    Ok(checks.into_iter().map(|(_, c)| c).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let c =
            parse_checks("k=5, distinct_l=3, entropy_l=2, recursive_cl=3:2, t=0.15, h=0.3, catalog, km=2:2").unwrap();
        assert_eq!(c.len(), 8);
        assert_eq!(c[3], Check::RecursiveCL { c: 3.0, l: 2 });
        assert_eq!(c[7], Check::KKm { k: 2, m: 2 });
    }

    #[test]
    fn rejects_unknown_and_bad_values() {
        let e = parse_checks("k=5, kk=3").unwrap_err().to_string();
        assert!(e.contains("'kk'") && e.contains("unknown"), "{e}");
        assert!(parse_checks("k=0").unwrap_err().to_string().contains("'k'"));
        assert!(parse_checks("t=1.5").is_err());
        assert!(parse_checks("km=2").unwrap_err().to_string().contains("A:B"));
        assert_eq!(
            parse_checks("kmap=5:1000").unwrap(),
            vec![Check::KMap { k: 5, population: 1000, alpha: 0.01, zero_truncated: true }]
        );
        assert_eq!(
            parse_checks("kmap=5:1000:0.05:poisson").unwrap()[0],
            Check::KMap { k: 5, population: 1000, alpha: 0.05, zero_truncated: false }
        );
        assert!(parse_checks("kmap=5").unwrap_err().to_string().contains("'kmap'"));
        assert!(parse_checks("kmap=5:1000:0.05:binomial").unwrap_err().to_string().contains("binomial"));
        assert!(parse_checks("k=2, k=3").unwrap_err().to_string().contains("twice"));
        assert!(parse_checks(" , ").is_err());
    }
}
