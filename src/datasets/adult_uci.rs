//! `adult_uci`: the bundled Adult with UCI's `relationship` column added (data/adult_uci/README.md
//! says where it comes from and how its rows align), declared as the entropy paper's Results
//! used it: the 9 categorical attributes, occupation sensitive and the 8 others
//! quasi-identifying; `age`, the one numeric column, is kept but insensitive. The `adult`
//! table itself is untouched.

use super::{DatasetTable, adult};
use crate::error::{AnonError, Result};
use crate::hierarchy::{HierarchyKind, parse_arx_text};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{ArrayRef, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use std::sync::Arc;

const RELATIONSHIP: &str = include_str!("../../data/adult_uci/adult_relationship.csv");
const HIERARCHY: &str = include_str!("../../data/adult_uci/adult_hierarchy_relationship.csv");

/// The quasi-identifiers of the entropy paper's Results ("9 attributes where numeric attributes
/// are not included", occupation sensitive, the others quasi-identifying).
pub(crate) const ADULT_UCI_QIS: [&str; 8] =
    ["sex", "race", "marital_status", "relationship", "education", "native_country", "workclass", "salary_class"];

pub(crate) fn adult_uci() -> Result<DatasetTable> {
    let base = adult()?;
    let batch = &base.batches[0];
    let mut lines = RELATIONSHIP.lines().map(|l| l.trim_end_matches('\r'));
    if lines.next() != Some("relationship") {
        return Err(AnonError::io("adult_relationship.csv", "the header is not 'relationship'"));
    }
    let values: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    if values.len() != batch.num_rows() {
        return Err(AnonError::io(
            "adult_relationship.csv",
            format!("has {} rows, adult.csv {}", values.len(), batch.num_rows()),
        ));
    }
    // `relationship` goes after `marital_status`, the attribute it refines.
    let at = batch.schema().index_of("marital_status")? + 1;
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut arrays: Vec<ArrayRef> = batch.columns().to_vec();
    fields.insert(at, Field::new("relationship", DataType::Utf8, false));
    arrays.insert(at, Arc::new(StringArray::from(values)));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;

    let mut meta = TableMeta { hierarchies: base.meta.hierarchies, ..TableMeta::default() };
    meta.hierarchies.insert(
        "relationship".into(),
        Arc::new(parse_arx_text(HIERARCHY, "relationship", HierarchyKind::Categorical)?),
    );
    meta.roles = ADULT_UCI_QIS.iter().map(|c| (c.to_string(), Role::QuasiIdentifier)).collect();
    meta.roles.push(("occupation".into(), Role::Sensitive));
    meta.roles.push(("age".into(), Role::Insensitive));
    Ok(DatasetTable { name: "adult_uci".into(), batches: vec![batch], meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_relationship_and_keeps_adult_as_it_is() {
        let (base, uci) = (adult().unwrap(), adult_uci().unwrap());
        let (b, u) = (&base.batches[0], &uci.batches[0]);
        assert_eq!(u.num_rows(), 30_162);
        assert_eq!(u.num_columns(), b.num_columns() + 1);
        for f in b.schema().fields() {
            assert_eq!(u.column_by_name(f.name()).unwrap(), b.column_by_name(f.name()).unwrap(), "{}", f.name());
        }
        // The first records of UCI adult.data: Not-in-family, Husband, Not-in-family, Husband, Wife.
        let rel = u.column_by_name("relationship").unwrap();
        let rel = rel.as_any().downcast_ref::<StringArray>().unwrap();
        let first: Vec<&str> = (0..5).map(|i| rel.value(i)).collect();
        assert_eq!(first, ["Not-in-family", "Husband", "Not-in-family", "Husband", "Wife"]);
        assert_eq!(uci.meta.sensitive("adult_uci").unwrap(), "occupation");
        assert_eq!(uci.meta.quasi_identifiers().len(), 8);
        assert!(uci.meta.hierarchy("adult_uci", "relationship").unwrap().leaf_count() == 6);
    }
}
