//! Code sets (diagnosis codes) as every function reads them: a list column, or one delimited
//! string per record (`'25000 4019'`, `'2554;2765'`, a release written to CSV:
//! `'(053.20,053.71);4019'`). One splitter and one code-to-leaf reader, so attaching a
//! hierarchy, anonymizing, verifying and measuring see the same codes, and every reader drops
//! or refuses codes outside the hierarchy the same way ([`leaf_sets`]).

use super::Hierarchy;
use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, ListBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use std::collections::HashSet;
use std::sync::Arc;

/// What separates the codes of one record in a delimited string.
pub(crate) const CODE_DELIMITERS: [char; 5] = [',', ';', '|', ' ', '\t'];

/// The codes of one delimited string. A delimiter inside parentheses does not split: a
/// generalized code `(053.20,053.71)` of a release written as text stays one element.
pub(crate) fn split_codes(s: &str) -> impl Iterator<Item = &str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && CODE_DELIMITERS.contains(&c) => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|c| !c.is_empty())
}

/// Codes of a column that are not leaves of its code hierarchy: how many occurrences and how
/// many distinct codes, never which (a code is a patient's diagnosis; errors and reports must
/// not echo it).
#[derive(Debug, Default)]
pub(crate) struct UnknownCodes {
    pub(crate) occurrences: u64,
    distinct: HashSet<String>,
}

impl UnknownCodes {
    fn add(&mut self, code: &str) {
        self.occurrences += 1;
        if !self.distinct.contains(code) {
            self.distinct.insert(code.to_string());
        }
    }

    /// Distinct codes outside the hierarchy.
    pub(crate) fn distinct(&self) -> u64 {
        self.distinct.len() as u64
    }

    /// `Ok` when there are none or the hierarchy drops them (`unknown_codes=suppress`);
    /// otherwise the error naming the column and the counts.
    pub(crate) fn check(&self, table: &str, column: &str, h: &Hierarchy) -> Result<()> {
        if self.occurrences == 0 || h.suppresses_unknown_codes() {
            return Ok(());
        }
        Err(AnonError::column(
            table,
            column,
            format!(
                "{} diagnosis code occurrence(s), {} distinct, are not leaves of its code hierarchy \
                 (load_hierarchy's option unknown_codes=parent adopts them under their category, \
                 unknown_codes=suppress drops them, counted)",
                self.occurrences,
                self.distinct()
            ),
        ))
    }
}

/// Each record's codes as leaf codes of `h` (in the record's order, NULL record = no codes),
/// from a list or delimited-string column. Codes outside `h` are left out of the records and
/// counted in `unknown`; whether that is allowed is [`UnknownCodes::check`]'s decision, made
/// once by the caller after all parts are read.
pub(crate) fn leaf_sets(
    table: &str,
    column: &str,
    h: &Hierarchy,
    a: &ArrayRef,
    unknown: &mut UnknownCodes,
) -> Result<Vec<Vec<u32>>> {
    leaf_sets_with(table, column, h, a, |c| {
        unknown.add(c);
        None
    })
}

/// [`leaf_sets`], with `outside` deciding what a code outside `h` becomes: an id of the
/// caller's, or nothing (left out of the record).
pub(crate) fn leaf_sets_with(
    table: &str,
    column: &str,
    h: &Hierarchy,
    a: &ArrayRef,
    mut outside: impl FnMut(&str) -> Option<u32>,
) -> Result<Vec<Vec<u32>>> {
    let l = code_lists(table, column, a)?;
    let mut out = Vec::with_capacity(l.len());
    for r in 0..l.len() {
        let mut codes = Vec::new();
        if l.is_valid(r) {
            let v = l.value(r);
            let v = v.as_string::<i32>();
            for c in v.iter().flatten().map(str::trim).filter(|c| !c.is_empty()) {
                codes.extend(h.leaf_of_label(c).or_else(|| outside(c)));
            }
        }
        out.push(codes);
    }
    Ok(out)
}

/// A column of code sets as lists of text: lists are cast, strings split; NULL stays NULL.
pub(crate) fn code_lists(table: &str, column: &str, a: &ArrayRef) -> Result<ListArray> {
    if matches!(a.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        let s = cast(a, &DataType::Utf8)?;
        let mut b = ListBuilder::new(StringBuilder::new());
        for v in s.as_string::<i32>().iter() {
            if let Some(v) = v {
                split_codes(v).for_each(|c| b.values().append_value(c));
            }
            b.append(v.is_some());
        }
        return Ok(b.finish());
    }
    let wrong = || {
        AnonError::column(
            table,
            column,
            format!("has type {}, expected a list of codes or a delimited string", a.data_type()),
        )
    };
    // Arrow would cast a scalar to a one-element list; only lists are lists of codes.
    if !matches!(a.data_type(), DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)) {
        return Err(wrong());
    }
    let list = DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true)));
    let l = cast(a, &list).map_err(|_| wrong())?;
    Ok(l.as_list::<i32>().clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::StringArray;

    #[test]
    fn delimited_strings_split_like_lists() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            Some("25000 4019"),
            Some("2554;2765,,4582|486"),
            None,
            Some("(053.20,053.71);4019 (458.1, 458.21)"),
        ]));
        let l = code_lists("t", "codes", &a).unwrap();
        let row = |r: usize| -> Vec<String> {
            l.value(r).as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect()
        };
        assert_eq!(row(0), ["25000", "4019"]);
        assert_eq!(row(1), ["2554", "2765", "4582", "486"]);
        assert_eq!(row(3), ["(053.20,053.71)", "4019", "(458.1, 458.21)"]);
        assert!(l.is_null(2));
        let e = code_lists("t", "codes", &(Arc::new(datafusion::arrow::array::Int64Array::from(vec![1])) as ArrayRef));
        assert!(e.unwrap_err().to_string().contains("'codes'"));
    }
}
