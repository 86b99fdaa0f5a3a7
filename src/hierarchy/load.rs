//! Loading hierarchies from ARX-format files and from tables.

use super::{Hierarchy, HierarchyBuilder, HierarchyKind};
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;

/// Read an ARX hierarchy file (`leaf;level1;...;*`, no header; `;`-separated, or `,` when
/// the file has no `;` at all).
pub fn load_arx_file(path: &str, attribute: &str, kind: HierarchyKind) -> Result<Hierarchy> {
    let text = std::fs::read_to_string(path).map_err(|e| AnonError::io(path, e))?;
    parse_arx_text(&text, attribute, kind)
}

/// Parse ARX hierarchy text; errors name the attribute and the line.
pub fn parse_arx_text(text: &str, attribute: &str, kind: HierarchyKind) -> Result<Hierarchy> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let sep = if text.contains(';') { ';' } else { ',' };
    let mut b = HierarchyBuilder::new(attribute, kind);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        b.row(i + 1, line.split(sep).map(str::to_string).collect());
    }
    b.build()
}

/// Rows of a table in ARX shape (every column, in order, read as text), for hierarchies kept
/// as tables. NULL cells are reported with their row number.
pub fn rows_from_batches(batches: &[RecordBatch], attribute: &str) -> Result<Vec<(usize, Vec<String>)>> {
    let mut rows = Vec::new();
    let mut offset = 0;
    for batch in batches {
        let cols: Vec<_> =
            batch.columns().iter().map(|c| cast(c, &DataType::Utf8)).collect::<std::result::Result<_, _>>()?;
        for r in 0..batch.num_rows() {
            let mut fields = Vec::with_capacity(cols.len());
            for (j, c) in cols.iter().enumerate() {
                if c.is_null(r) {
                    return Err(AnonError::hierarchy(
                        attribute,
                        format!("row {}: column {} is NULL", offset + r + 1, j + 1),
                    ));
                }
                fields.push(c.as_string::<i32>().value(r).to_string());
            }
            rows.push((offset + r + 1, fields));
        }
        offset += batch.num_rows();
    }
    Ok(rows)
}

/// Build a hierarchy from table rows.
pub fn from_rows(rows: Vec<(usize, Vec<String>)>, attribute: &str, kind: HierarchyKind) -> Result<Hierarchy> {
    let mut b = HierarchyBuilder::new(attribute, kind);
    for (line, fields) in rows {
        b.row(line, fields);
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_with_two_parents_is_rejected() {
        let text = "Spain;Europe;*\nFrance;Europe;*\nMexico;America;*\nPortugal;Europe;*\nMexico;Europe;*\n";
        let e = parse_arx_text(text, "country", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("'country'") && e.contains("two parents: lines 3 and 5"), "{e}");
        assert!(!e.contains("Mexico") && !e.contains("America") && !e.contains("Europe"), "no label shown: {e}");
        let text = "a;X;*\nb;X;**\n";
        let e = parse_arx_text(text, "c", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("a node at level 1 has two parents: lines 1 and 2") && !e.contains("'X'"), "{e}");
    }

    #[test]
    fn ragged_heights_are_rejected() {
        let e = parse_arx_text("a;A;*\nb;*\n", "c", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("ragged heights") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn malformed_lines_are_rejected_with_their_line() {
        let e = parse_arx_text("a;A;*\nb;;*\n", "c", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("empty"), "{e}");
        let e = parse_arx_text("1;0-4;*\nx;0-4;*\n", "age", HierarchyKind::Numeric).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("not a number"), "{e}");
        let e = parse_arx_text("a;A\nb;B\n", "c", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("single root"), "{e}");
        let e = parse_arx_text("\n\n", "c", HierarchyKind::Categorical).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn leaf_counts_and_degrees_follow_eq2() {
        let text = "a;AB;*\nb;AB;*\nc;C;*\nd;C;*\ne;C;*\n";
        let h = parse_arx_text(text, "c", HierarchyKind::Categorical).unwrap();
        let c = h.leaf_of_label("c").unwrap();
        let node = h.up(1)[c as usize];
        assert_eq!(h.leaves_under(1, node), 3);
        assert!((h.degree(1, node) - 0.5).abs() < 1e-12); // (3-1)/(5-1)
        assert_eq!(h.degree(0, c), 0.0);
        assert_eq!(h.degree(2, 0), 1.0);
    }

    #[test]
    fn numeric_bounds_hull_labels_and_leaves() {
        // ARX's Adult file puts leaf 100 under 95-99: the node keeps the leaf inside.
        let text = "99;95-99;*\n100;95-99;*\n96;95-99;*\n";
        let h = parse_arx_text(text, "age", HierarchyKind::Numeric).unwrap();
        assert_eq!(h.leaf_values(), &[96.0, 99.0, 100.0]);
        assert_eq!(h.bounds(1, 0), Some((95.0, 100.0)));
        assert_eq!(h.domain(), Some((95.0, 100.0)));
        assert_eq!(h.leaf_of_value(99.0), Some(1));
        assert_eq!(h.leaf_of_value(98.0), None);
    }
}
