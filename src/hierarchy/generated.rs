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
    let levels = longest.div_ceil(step);
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
}
