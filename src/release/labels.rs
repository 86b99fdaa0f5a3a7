//! The Arrow type of a release's generalized label columns, and the one builder of them.
//!
//! A generalized column holds few distinct labels (a hierarchy level's nodes, a class's
//! range) over many rows, so a release stores it as `Dictionary(Int32, Utf8)`: the labels once,
//! a 4-byte key per row. Building a release's rows then gathers keys, never label bytes, and
//! every batch of a release shares one values array, so concatenating or permuting batches
//! moves keys only. Readers cast to `Utf8` (Arrow's `cast` expands a dictionary), and SQL
//! compares, groups and prints a dictionary column as its values, so a query reads the same.

use datafusion::arrow::array::{ArrayRef, DictionaryArray, Int32Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type};
use std::collections::HashMap;
use std::sync::Arc;

/// `Dictionary(Int32, Utf8)`: the type of every generalized label column of a release.
pub(crate) fn label_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
}

/// A non-nullable label column's field.
pub(crate) fn label_field(name: &str) -> Field {
    Field::new(name, label_type(), false)
}

/// Labels as one dictionary array: each distinct label stored once, in first-seen order, and a
/// key per entry. Used for class-level arrays and lookups, which releases gather by key.
pub(crate) fn label_array<'a>(labels: impl IntoIterator<Item = &'a str>) -> ArrayRef {
    let (mut seen, mut values, mut keys) = (HashMap::new(), Vec::new(), Vec::new());
    for l in labels {
        let key = *seen.entry(l).or_insert_with(|| {
            values.push(l);
            values.len() as i32 - 1
        });
        keys.push(key);
    }
    let dict = DictionaryArray::<Int32Type>::try_new(Int32Array::from(keys), Arc::new(StringArray::from(values)))
        .expect("keys index the values they were made from");
    Arc::new(dict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;

    #[test]
    fn each_label_stored_once_and_read_back_as_text() {
        let a = label_array(["30-39", "*", "30-39", "40-49", "*"]);
        assert_eq!(a.data_type(), &label_type());
        let d = a.as_dictionary::<Int32Type>();
        assert_eq!(d.values().len(), 3);
        let text = cast(&a, &DataType::Utf8).unwrap();
        let text: Vec<_> = text.as_string::<i32>().iter().map(Option::unwrap).collect();
        assert_eq!(text, ["30-39", "*", "30-39", "40-49", "*"]);
    }
}
