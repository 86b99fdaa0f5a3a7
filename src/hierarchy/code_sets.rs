//! Code sets (diagnosis codes) as every function reads them: a list column, or one delimited
//! string per record (`'25000 4019'`, `'2554;2765'`). One splitter, so attaching a hierarchy
//! and anonymizing see the same codes.

use crate::error::{AnonError, Result};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, ListBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use std::sync::Arc;

/// What separates the codes of one record in a delimited string.
pub const CODE_DELIMITERS: [char; 5] = [',', ';', '|', ' ', '\t'];

/// The codes of one delimited string.
pub fn split_codes(s: &str) -> impl Iterator<Item = &str> {
    s.split(CODE_DELIMITERS).filter(|c| !c.is_empty())
}

/// A column of code sets as lists of text: lists are cast, strings split; NULL stays NULL.
pub fn code_lists(table: &str, column: &str, a: &ArrayRef) -> Result<ListArray> {
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
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("25000 4019"), Some("2554;2765,,4582|486"), None]));
        let l = code_lists("t", "codes", &a).unwrap();
        let row = |r: usize| -> Vec<String> {
            l.value(r).as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect()
        };
        assert_eq!(row(0), ["25000", "4019"]);
        assert_eq!(row(1), ["2554", "2765", "4582", "486"]);
        assert!(l.is_null(2));
        let e = code_lists("t", "codes", &(Arc::new(datafusion::arrow::array::Int64Array::from(vec![1])) as ArrayRef));
        assert!(e.unwrap_err().to_string().contains("'codes'"));
    }
}
