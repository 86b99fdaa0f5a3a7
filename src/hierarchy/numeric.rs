//! Numeric interval hierarchies: ARX interval labels and hierarchies built from band widths.

use super::{Hierarchy, HierarchyBuilder, HierarchyKind};
use crate::error::{AnonError, Result};

/// Numbers as users write them in labels and keys: `37`, not `37.0` (the inverse of how
/// [`parse_interval_label`] reads them). Releases' range labels, numeric leaf labels and the
/// query harness's group keys all write numbers with it.
pub fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{}", x as i64) } else { format!("{x}") }
}

/// Parse an interval label as ARX and the papers write them: `30-34`, `[35-66]`, `[30, 35[`,
/// `35`, `-10--1`. Returns inclusive bounds, or `None` for labels that are not intervals
/// (`*`, `>=90`), whose bounds then come from their leaves alone. A half-open upper bound
/// `[a, b[` over integers means `a..=b-1`.
pub fn parse_interval_label(label: &str) -> Option<(f64, f64)> {
    let s = label.trim();
    let half_open = s.ends_with('[') && s.len() > 1;
    let inner = s.trim_start_matches(['[', '(']).trim_end_matches([']', ')', '[']).trim();
    if inner.is_empty() {
        return None;
    }
    if let Ok(v) = inner.parse::<f64>() {
        return v.is_finite().then_some((v, v));
    }
    let (a, b) = split_range(inner)?;
    let lo: f64 = a.trim().parse().ok()?;
    let mut hi: f64 = b.trim().parse().ok()?;
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return None;
    }
    if half_open && lo.fract() == 0.0 && hi.fract() == 0.0 && hi > lo {
        hi -= 1.0;
    }
    Some((lo, hi))
}

/// Split `a-b` or `a, b` at the separator, allowing a minus sign on either bound.
fn split_range(s: &str) -> Option<(&str, &str)> {
    if let Some(i) = s.find(',') {
        return Some((&s[..i], &s[i + 1..]));
    }
    let bytes = s.as_bytes();
    (1..bytes.len()).find_map(|i| {
        let prev = bytes[i - 1];
        (bytes[i] == b'-' && (prev.is_ascii_digit() || prev == b'.' || prev == b' ')).then(|| (&s[..i], &s[i + 1..]))
    })
}

/// Build an interval hierarchy over every integer in `[lo, hi]` from band widths, e.g.
/// `[5, 10, 20]` gives the levels value; 5-year band; 10-year band; 20-year band; `*`.
/// Bands are aligned at multiples of their width (as ARX does), labelled `a-b`, and each width
/// must be a multiple of the one before so that every band has one parent.
pub fn widths_hierarchy(attribute: &str, lo: i64, hi: i64, widths: &[i64]) -> Result<Hierarchy> {
    let bad = |m: String| AnonError::argument("interval_hierarchy", "widths", m);
    // No bound is echoed: without both arguments they are the column's own min and max.
    if hi < lo {
        return Err(AnonError::argument("interval_hierarchy", "max", "max is below min"));
    }
    // In i128: `hi - lo` of two i64 overflows (and wrapped in a release build, so that
    // -9e18..9e18 passed this check and the loop below ran until memory ran out).
    if i128::from(hi) - i128::from(lo) > 10_000_000 {
        return Err(AnonError::argument(
            "interval_hierarchy",
            "max",
            "the domain holds more than 10 million integers; load an ARX file with the values that occur instead",
        ));
    }
    // Leaves are f64 values: beyond 2^53 neighbouring integers round to the same leaf.
    if lo < -MAX_EXACT_INTEGER || hi > MAX_EXACT_INTEGER {
        return Err(AnonError::argument(
            "interval_hierarchy",
            if lo < -MAX_EXACT_INTEGER { "min" } else { "max" },
            format!(
                "the domain reaches beyond ±2^53 ({MAX_EXACT_INTEGER}), the largest integers a numeric \
                 hierarchy's leaves hold exactly; declare bounds within it, or load an ARX file"
            ),
        ));
    }
    for (i, &w) in widths.iter().enumerate() {
        if w < 1 {
            return Err(bad(format!("width {w} must be at least 1")));
        }
        if i > 0 && (w <= widths[i - 1] || w % widths[i - 1] != 0) {
            return Err(bad(format!("width {w} must be a larger multiple of the width before it ({})", widths[i - 1])));
        }
    }
    let mut b = HierarchyBuilder::new(attribute, HierarchyKind::Numeric);
    for (line, v) in (lo..=hi).enumerate() {
        let mut fields = vec![v.to_string()];
        for &w in widths {
            // In i128, so that no width can overflow a band's bounds (within ±2^53 none does
            // today, but the check above is what keeps it so).
            let (v, w) = (i128::from(v), i128::from(w));
            let start = v.div_euclid(w) * w;
            fields.push(if w == 1 { v.to_string() } else { format!("{}-{}", start, start + w - 1) });
        }
        fields.push("*".into());
        b.row(line + 1, fields);
    }
    b.domain(lo as f64, hi as f64);
    b.build()
}

/// 2^53: every integer up to it in magnitude is an exact f64, the type of numeric leaves.
const MAX_EXACT_INTEGER: i64 = 1 << 53;

/// Parse a widths list such as `5,10,20,*` (the trailing `*` is implied).
pub fn parse_widths(spec: &str) -> Result<Vec<i64>> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(|s| {
            s.parse::<i64>().map_err(|_| {
                AnonError::argument("interval_hierarchy", "widths", format!("'{s}' is not an integer width"))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse_as_arx_and_the_papers_write_them() {
        assert_eq!(parse_interval_label("30-34"), Some((30.0, 34.0)));
        assert_eq!(parse_interval_label("[35-66]"), Some((35.0, 66.0)));
        assert_eq!(parse_interval_label("[ 35 - 66]"), Some((35.0, 66.0)));
        assert_eq!(parse_interval_label("[30, 35["), Some((30.0, 34.0)));
        assert_eq!(parse_interval_label("-10--1"), Some((-10.0, -1.0)));
        assert_eq!(parse_interval_label("42"), Some((42.0, 42.0)));
        assert_eq!(parse_interval_label("*"), None);
        assert_eq!(parse_interval_label(">=90"), None);
        assert_eq!(parse_interval_label("Europe"), None);
    }

    #[test]
    fn widths_build_nested_bands() {
        let h = widths_hierarchy("age", 0, 99, &[5, 10, 20]).unwrap();
        assert_eq!(h.height(), 4);
        assert_eq!(h.leaf_count(), 100);
        let leaf = h.leaf_of_value(37.0).unwrap();
        assert_eq!(h.label(1, h.up(1)[leaf as usize]), "35-39");
        assert_eq!(h.label(3, h.up(3)[leaf as usize]), "20-39");
        assert_eq!(h.label(4, h.up(4)[leaf as usize]), "*");
        assert_eq!(h.domain(), Some((0.0, 99.0)));
        assert_eq!(h.leaves_under(2, h.up(2)[leaf as usize]), 10);
    }

    #[test]
    fn widths_must_nest() {
        let e = widths_hierarchy("age", 0, 99, &[5, 7]).unwrap_err().to_string();
        assert!(e.contains("width 7"), "{e}");
        assert!(parse_widths("5,x").is_err());
        assert_eq!(parse_widths("5,10,20,*").unwrap(), vec![5, 10, 20]);
    }

    /// `hi - lo` wrapped in a release build (a debug build panicked): the widest domains got
    /// past the size check and the build ran until memory ran out.
    #[test]
    fn the_widest_domains_are_refused_without_overflow() {
        for (lo, hi) in [(-9_000_000_000_000_000_000, 9_000_000_000_000_000_000), (i64::MIN, i64::MAX)] {
            let e = widths_hierarchy("age", lo, hi, &[10]).unwrap_err().to_string();
            assert!(e.contains("more than 10 million integers"), "{e}");
        }
    }

    /// Leaves near i64::MAX collided through f64 rounding ("their leaves are the same number").
    #[test]
    fn bounds_beyond_exact_f64_integers_are_refused() {
        let e = widths_hierarchy("age", 9_223_372_036_854_775_800, i64::MAX, &[10]).unwrap_err().to_string();
        assert!(e.contains("2^53") && e.contains("max") && !e.contains("9223372036854775800"), "{e}");
        let e = widths_hierarchy("age", i64::MIN, i64::MIN + 5, &[10]).unwrap_err().to_string();
        assert!(e.contains("2^53") && e.contains("min"), "{e}");
        // At the edge the leaves are exact, also under the widest bands.
        let h = widths_hierarchy("age", (1 << 53) - 3, 1 << 53, &[10, i64::MAX / 10 * 10]).unwrap();
        assert_eq!(h.leaf_count(), 4);
        let h = widths_hierarchy("age", -(1 << 53), -(1 << 53) + 2, &[4_611_686_018_427_387_904]).unwrap();
        assert_eq!(h.leaf_count(), 3);
    }
}
