//! The Arrow type of a release's generalized label columns, and the one builder of them.
//!
//! A generalized column holds few distinct labels (a hierarchy level's nodes, a class's
//! range) over many rows, so a release stores it as `Dictionary(Int32, Utf8)`: the labels once,
//! a 4-byte key per row. Building a release's rows then gathers keys, never label bytes, and
//! every batch of a release shares one values array, so concatenating or permuting batches
//! moves keys only. Readers cast to `Utf8` (Arrow's `cast` expands a dictionary), and SQL
//! compares, groups and prints a dictionary column as its values, so a query reads the same.

use datafusion::arrow::array::{ArrayRef, DictionaryArray, Int32Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Int32Type};
use datafusion::arrow::error::ArrowError;
use std::collections::HashMap;
use std::hash::Hash;
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
    label_array_by(labels, |l| *l)
}

/// [`label_array`] of the labels of `keys`, each distinct key's label written once
/// (`label(key)`): a class-level column keyed by what tells its labels apart (a node's level and
/// code, a range's leaf bounds), so a release of 10^6 classes formats a label per distinct
/// node, not per class. Keys whose labels are equal share one dictionary entry, as with
/// [`label_array`].
pub(crate) fn label_array_by<K: Hash + Eq, S: AsRef<str>>(
    keys: impl IntoIterator<Item = K>,
    label: impl Fn(&K) -> S,
) -> ArrayRef {
    let (mut by_key, mut by_label) = (HashMap::new(), HashMap::new());
    let mut values: Vec<String> = Vec::new();
    let keys: Vec<i32> = keys
        .into_iter()
        .map(|k| match by_key.get(&k) {
            Some(&i) => i,
            None => {
                let l = label(&k);
                let i = *by_label.entry(l.as_ref().to_string()).or_insert_with(|| {
                    values.push(l.as_ref().to_string());
                    values.len() as i32 - 1
                });
                by_key.insert(k, i);
                i
            }
        })
        .collect();
    let dict = DictionaryArray::<Int32Type>::try_new(Int32Array::from(keys), Arc::new(StringArray::from(values)))
        .expect("keys index the values they were made from");
    Arc::new(dict)
}

/// `labels` (text or dictionary) as a [`label_type`] column holding each distinct label once.
/// For arrays whose dictionaries were concatenated rather than shared (pandas, for one, refuses
/// a dictionary that names a category twice).
pub(crate) fn relabelled(labels: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    cast(&cast(labels, &DataType::Utf8)?, &label_type())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::concat;

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

    /// Labels made from keys: one label written per distinct key, keys with equal labels sharing
    /// one entry, and the same array as the labels given as text.
    #[test]
    fn labels_by_key_are_the_labels_as_text() {
        let keys = [(0u32, 9u32), (3, 3), (0, 9), (1, 1), (3, 3), (7, 7)];
        let label = |&(lo, hi): &(u32, u32)| if lo == hi { format!("{lo}") } else { format!("[{lo}-{hi}]") };
        let calls = std::cell::Cell::new(0);
        let by_key = label_array_by(keys, |k| {
            calls.set(calls.get() + 1);
            label(k)
        });
        assert_eq!(calls.get(), 4, "one label a distinct key");
        let text: Vec<String> = keys.iter().map(label).collect();
        assert_eq!(by_key.to_data(), label_array(text.iter().map(String::as_str)).to_data());
        // Two keys, one label: one dictionary entry.
        let same = label_array_by([1u32, 2, 1, 3], |&k| if k == 3 { "b" } else { "a" });
        assert_eq!(same.as_dictionary::<Int32Type>().values().len(), 2);
        assert_eq!(same.as_dictionary::<Int32Type>().keys().values().to_vec(), [0, 0, 0, 1]);
    }

    #[test]
    fn concatenated_dictionaries_relabelled_name_each_label_once() {
        let (a, b) = (label_array(["*", "30-39"]), label_array(["40-49", "*"]));
        let both = concat(&[a.as_ref(), b.as_ref()]).unwrap();
        let once = relabelled(&both).unwrap();
        assert_eq!(once.as_dictionary::<Int32Type>().values().len(), 3);
        assert_eq!(cast(&once, &DataType::Utf8).unwrap().to_data(), cast(&both, &DataType::Utf8).unwrap().to_data());
    }
}
