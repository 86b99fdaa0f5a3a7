//! Hierarchies generated from a column's own values, as ARX offers them: flat (value → `*`),
//! character masking (`02139 → 0213* → 021** → ... → *****`) and calendar dates (day → month →
//! year → decade → `*`). Each produces ARX rows that go through [`HierarchyBuilder`], so a
//! generated hierarchy is validated exactly like a loaded one. A NULL among the values becomes
//! the [`NULL_LEAF`] leaf, kept apart up to the root.

use super::{Hierarchy, HierarchyBuilder, HierarchyKind, NULL_LEAF};
use crate::error::{AnonError, Result};

/// Which end of a value masking starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaskFrom {
    Right,
    Left,
}

impl MaskFrom {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        crate::keyword::parse(&[(MaskFrom::Right, &["right"]), (MaskFrom::Left, &["left"])], s)
    }
}

/// Every value directly under the root `*`.
pub(crate) fn flat_hierarchy(attribute: &str, values: &[Option<String>]) -> Result<Hierarchy> {
    build(attribute, values, |v| Ok(vec![v.to_string(), "*".into()]))
}

/// The longest value `masking_hierarchy` masks: codes (zip codes, IDs) are far shorter; a
/// longer value is free text, whose hierarchy would take memory quadratic in its length.
pub(crate) const MAX_MASKED_CHARS: usize = 1_000;

/// The most bytes of labels a masking hierarchy may hold (1 GiB; the build holds about three
/// times that at its peak): a million distinct 20-character codes masked one character per
/// level take 420 MB.
pub(crate) const MAX_MASKING_BYTES: usize = 1 << 30;

/// Mask `step` more characters per level from one end with `*`, until every character is
/// masked; a root `*` joins values of different lengths.
pub(crate) fn masking_hierarchy(
    attribute: &str,
    values: &[Option<String>],
    from: MaskFrom,
    step: usize,
) -> Result<Hierarchy> {
    if step == 0 {
        return Err(AnonError::argument("masking_hierarchy", "step", "must be at least 1"));
    }
    let longest = values.iter().flatten().map(|v| v.chars().count()).max().unwrap_or(0);
    // Every value gets one label per level, each as long as the value: memory grows with the
    // square of the longest value (one of 50,000 characters took 7.4 GB). Neither error names
    // a value: they are the column's own.
    if longest > MAX_MASKED_CHARS {
        return Err(AnonError::hierarchy(
            attribute,
            format!(
                "masking_hierarchy masks codes of at most {MAX_MASKED_CHARS} characters, and the column holds a \
                 longer value; mask a shorter code derived from it (substr) in a view of your own, or use \
                 flat_hierarchy"
            ),
        ));
    }
    let levels = longest.div_ceil(step);
    let bytes = values.iter().flatten().try_fold(0usize, |n, v| n.checked_add(v.len().checked_mul(levels + 1)?));
    if bytes.is_none_or(|b| b > MAX_MASKING_BYTES) {
        return Err(AnonError::hierarchy(
            attribute,
            format!(
                "masking_hierarchy's labels would take more than {} MiB (the column's distinct values times \
                 their masking levels); use a larger step, fewer distinct codes, or load a hierarchy file",
                MAX_MASKING_BYTES >> 20
            ),
        ));
    }
    let same_length = values.iter().flatten().all(|v| v.chars().count() == longest);
    build(attribute, values, |v| {
        let chars: Vec<char> = v.chars().collect();
        let mut row = vec![v.to_string()];
        for level in 1..=levels {
            let masked = (level * step).min(chars.len());
            let kept = chars.len() - masked;
            let label: String = match from {
                MaskFrom::Right => chars[..kept].iter().copied().chain(std::iter::repeat_n('*', masked)).collect(),
                MaskFrom::Left => std::iter::repeat_n('*', masked).chain(chars[masked..].iter().copied()).collect(),
            };
            row.push(label);
        }
        // Values of one length meet in the fully masked node; otherwise a root joins them.
        if !same_length || levels == 0 {
            row.push("*".into());
        }
        Ok(row)
    })
}

/// Calendar dates `YYYY-MM-DD` generalized to month `YYYY-MM`, year `YYYY`, decade `YYY0s`, `*`.
pub(crate) fn date_hierarchy(attribute: &str, values: &[Option<String>]) -> Result<Hierarchy> {
    build(attribute, values, |v| {
        let (year, month) = parse_date(v).ok_or_else(|| {
            AnonError::hierarchy(attribute, "holds a value that is not a date YYYY-MM-DD; cast the column to DATE")
        })?;
        Ok(vec![
            v.to_string(),
            format!("{year:04}-{month:02}"),
            format!("{year:04}"),
            format!("{}s", year / 10 * 10),
            "*".into(),
        ])
    })
}

/// Year and month of `YYYY-MM-DD`.
fn parse_date(v: &str) -> Option<(i32, u32)> {
    let mut parts = v.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let (year, month, day): (i32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    (y.len() == 4 && (1..=12).contains(&month) && (1..=31).contains(&day)).then_some((year, month))
}

/// The most leaves a declared domain may enumerate (a masked code's every string, a date
/// range's every day): a million leaves is a hierarchy of a few hundred MB at most, and a DP
/// release over more cells than that realizes mostly noise.
pub(crate) const MAX_DECLARED_LEAVES: usize = 1_000_000;

/// Every string of `length` characters over `alphabet`, in alphabet order: the public domain of
/// a masked code (`length=5, alphabet=0123456789` is every 5-digit zip code), declared instead
/// of read from the column. Named alphabets: `digits`, `upper`, `lower`, `alnum`; anything else
/// is the list of characters itself.
pub(crate) fn masked_domain(function: &str, length: usize, alphabet: &str) -> Result<Vec<Option<String>>> {
    let chars: Vec<char> = match alphabet {
        "digits" => ('0'..='9').collect(),
        "upper" => ('A'..='Z').collect(),
        "lower" => ('a'..='z').collect(),
        "alnum" => ('0'..='9').chain('A'..='Z').chain('a'..='z').collect(),
        other => {
            let mut c: Vec<char> = other.chars().collect();
            c.sort_unstable();
            c.dedup();
            c
        }
    };
    if chars.is_empty() || chars.contains(&'*') {
        return Err(AnonError::argument(function, "alphabet", "needs at least one character, and not '*' (the mask)"));
    }
    let size = (0..length).try_fold(1usize, |n, _| n.checked_mul(chars.len()).filter(|&n| n <= MAX_DECLARED_LEAVES));
    let size = match (length, size) {
        (0, _) => return Err(AnonError::argument(function, "length", "must be at least 1")),
        (_, Some(n)) => n,
        _ => {
            return Err(AnonError::argument(
                function,
                "length",
                format!(
                    "{length} characters over {} give more than {MAX_DECLARED_LEAVES} codes; declare the codes in a hierarchy file (load_hierarchy) instead",
                    chars.len()
                ),
            ));
        }
    };
    Ok((0..size)
        .map(|mut i| {
            let mut code = vec![chars[0]; length];
            for slot in code.iter_mut().rev() {
                *slot = chars[i % chars.len()];
                i /= chars.len();
            }
            Some(code.into_iter().collect())
        })
        .collect())
}

/// Every day from `from` to `to` (`YYYY-MM-DD`, both included): the public domain of a date
/// column, declared instead of read from it.
pub(crate) fn date_domain(function: &str, from: &str, to: &str) -> Result<Vec<Option<String>>> {
    let day = |name: &str, v: &str| {
        parse_day(v).ok_or_else(|| AnonError::argument(function, name, format!("'{v}' is not a date YYYY-MM-DD")))
    };
    let (mut d, last) = (day("from", from)?, day("to", to)?);
    if d > last {
        return Err(AnonError::argument(function, "to", "comes before 'from'"));
    }
    let mut out = Vec::new();
    while d <= last {
        if out.len() == MAX_DECLARED_LEAVES {
            return Err(AnonError::argument(
                function,
                "to",
                format!("the range holds more than {MAX_DECLARED_LEAVES} days"),
            ));
        }
        out.push(Some(format!("{:04}-{:02}-{:02}", d.0, d.1, d.2)));
        d = next_day(d);
    }
    Ok(out)
}

/// (year, month, day) of a valid calendar date `YYYY-MM-DD`.
fn parse_day(v: &str) -> Option<(i32, u32, u32)> {
    let (year, month) = parse_date(v)?;
    let day: u32 = v.rsplit('-').next()?.parse().ok()?;
    (day <= days_in_month(year, month)).then_some((year, month, day))
}

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn next_day((y, m, d): (i32, u32, u32)) -> (i32, u32, u32) {
    match (d < days_in_month(y, m), m < 12) {
        (true, _) => (y, m, d + 1),
        (false, true) => (y, m + 1, 1),
        (false, false) => (y + 1, 1, 1),
    }
}

/// ARX rows from `row` for each distinct value, plus the NULL leaf's row if a value is NULL.
fn build(attribute: &str, values: &[Option<String>], row: impl Fn(&str) -> Result<Vec<String>>) -> Result<Hierarchy> {
    let mut distinct: Vec<&str> = values.iter().flatten().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut rows = distinct.into_iter().map(&row).collect::<Result<Vec<_>>>()?;
    if values.iter().any(Option::is_none) {
        let depth = rows.first().map_or(2, Vec::len);
        let root = rows.first().and_then(|r| r.last().cloned()).unwrap_or_else(|| "*".into());
        let mut null_row = vec![NULL_LEAF.to_string(); depth - 1];
        null_row.push(root);
        rows.push(null_row);
    }
    let mut b = HierarchyBuilder::new(attribute, HierarchyKind::Categorical);
    for (i, r) in rows.into_iter().enumerate() {
        b.row(i + 1, r);
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    fn path(h: &Hierarchy, leaf: &str) -> Vec<String> {
        h.arx_rows().into_iter().find(|r| r[0] == leaf).unwrap().into_iter().map(String::from).collect()
    }

    #[test]
    fn masking_from_the_right_ends_in_the_fully_masked_root() {
        let h = masking_hierarchy("zip", &vals(&["02139", "02138", "02141"]), MaskFrom::Right, 1).unwrap();
        assert_eq!(path(&h, "02139"), ["02139", "0213*", "021**", "02***", "0****", "*****"]);
        assert_eq!(h.height(), 5);
        let h = masking_hierarchy("zip", &vals(&["02139", "02141"]), MaskFrom::Right, 2).unwrap();
        assert_eq!(path(&h, "02141"), ["02141", "021**", "0****", "*****"]);
        let h = masking_hierarchy("id", &vals(&["AB12", "XY12"]), MaskFrom::Left, 2).unwrap();
        assert_eq!(path(&h, "AB12"), ["AB12", "**12", "****"]);
    }

    #[test]
    fn masking_values_of_different_lengths_meet_in_a_root() {
        let h = masking_hierarchy("c", &[Some("123".into()), Some("45".into()), None], MaskFrom::Right, 1).unwrap();
        assert_eq!(path(&h, "45"), ["45", "4*", "**", "**", "*"]);
        assert_eq!(path(&h, "123"), ["123", "12*", "1**", "***", "*"]);
        assert_eq!(path(&h, NULL_LEAF), [NULL_LEAF, NULL_LEAF, NULL_LEAF, NULL_LEAF, "*"]);
        let e = masking_hierarchy("c", &vals(&["1"]), MaskFrom::Right, 0).unwrap_err().to_string();
        assert!(e.contains("step"), "{e}");
    }

    /// A value of 50,000 characters took 7.4 GB and one of 950,000 got the process killed:
    /// values and the labels' total are bounded, and the error names neither value nor its length.
    #[test]
    fn masking_refuses_long_values_and_huge_hierarchies() {
        let at_limit = "7".repeat(MAX_MASKED_CHARS);
        assert!(masking_hierarchy("zip", &vals(&[&at_limit]), MaskFrom::Right, 1).is_ok());
        let long = format!("{at_limit}8");
        let e = masking_hierarchy("zip", &vals(&[&long, "02139"]), MaskFrom::Right, 1).unwrap_err().to_string();
        assert!(e.contains("'zip'") && e.contains("at most 1000 characters") && !e.contains("777"), "{e}");
        // 1,100 distinct values of 1,000 characters: 1.1 GB of labels, refused before building.
        let many: Vec<Option<String>> = (0..1100).map(|i| Some(format!("{i:0>1000}"))).collect();
        let e = masking_hierarchy("zip", &many, MaskFrom::Left, 1).unwrap_err().to_string();
        assert!(e.contains("'zip'") && e.contains("more than 1024 MiB") && !e.contains("000"), "{e}");
    }

    #[test]
    fn flat_and_dates() {
        let h = flat_hierarchy("sex", &vals(&["F", "M", "F"])).unwrap();
        assert_eq!((h.height(), h.width(0)), (1, 2));
        let h = date_hierarchy("admitted", &vals(&["2019-12-31", "2021-03-05"])).unwrap();
        assert_eq!(path(&h, "2021-03-05"), ["2021-03-05", "2021-03", "2021", "2020s", "*"]);
        assert_eq!(path(&h, "2019-12-31"), ["2019-12-31", "2019-12", "2019", "2010s", "*"]);
        let e = date_hierarchy("admitted", &vals(&["2021-13-01"])).unwrap_err().to_string();
        assert!(e.contains("'admitted'") && e.contains("not a date") && !e.contains("2021-13"), "{e}");
    }

    #[test]
    fn declared_domains_enumerate_every_code_and_day() {
        let zips = masked_domain("f", 2, "digits").unwrap();
        assert_eq!(zips.len(), 100);
        assert_eq!((zips[0].as_deref(), zips[99].as_deref()), (Some("00"), Some("99")));
        assert_eq!(masked_domain("f", 3, "ba").unwrap()[1].as_deref(), Some("aab"));
        assert!(masked_domain("f", 7, "digits").unwrap_err().to_string().contains("more than"));
        assert!(masked_domain("f", 2, "a*").is_err());
        let days = date_domain("f", "2019-12-30", "2020-03-01").unwrap();
        assert_eq!(days.len(), 2 + 31 + 29 + 1, "2020 is a leap year");
        assert_eq!(days[2].as_deref(), Some("2020-01-01"));
        assert_eq!(date_domain("f", "2100-02-28", "2100-03-01").unwrap().len(), 2, "2100 is not");
        assert!(date_domain("f", "2020-02-30", "2020-03-01").is_err());
        assert!(date_domain("f", "2020-03-01", "2020-02-01").is_err());
    }
}
