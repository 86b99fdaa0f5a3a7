//! UCI Adult (30,162 rows without missing values) with the ARX hierarchies, as used by the
//! h-ceiling and entropy papers. Column names use `_` instead of ARX's `-` so they need no
//! quoting in SQL (`marital_status`, `native_country`, `salary_class`).

use super::DatasetTable;
use crate::error::{AnonError, Result};
use crate::hierarchy::{HierarchyKind, parse_arx_text};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use std::sync::Arc;

const DATA: &str = include_str!("../../data/adult/adult.csv");

/// (column, ARX hierarchy file, kind) for every column that has a hierarchy.
const HIERARCHIES: &[(&str, &str, HierarchyKind)] = &[
    ("age", include_str!("../../data/adult/adult_hierarchy_age.csv"), HierarchyKind::Numeric),
    ("sex", include_str!("../../data/adult/adult_hierarchy_sex.csv"), HierarchyKind::Categorical),
    ("race", include_str!("../../data/adult/adult_hierarchy_race.csv"), HierarchyKind::Categorical),
    ("marital_status", include_str!("../../data/adult/adult_hierarchy_marital-status.csv"), HierarchyKind::Categorical),
    ("education", include_str!("../../data/adult/adult_hierarchy_education.csv"), HierarchyKind::Categorical),
    ("native_country", include_str!("../../data/adult/adult_hierarchy_native-country.csv"), HierarchyKind::Categorical),
    ("workclass", include_str!("../../data/adult/adult_hierarchy_workclass.csv"), HierarchyKind::Categorical),
    ("occupation", include_str!("../../data/adult/adult_hierarchy_occupation.csv"), HierarchyKind::Categorical),
    ("salary_class", include_str!("../../data/adult/adult_hierarchy_salary-class.csv"), HierarchyKind::Categorical),
];

/// The seven quasi-identifiers of the h-ceiling paper's Adult experiments, lattice of 2,160 nodes.
pub const ADULT_QIS: [&str; 7] = ["age", "sex", "race", "marital_status", "education", "native_country", "workclass"];

pub fn adult() -> Result<DatasetTable> {
    let mut lines = DATA.lines().map(|l| l.trim_end_matches('\r'));
    let header: Vec<String> = lines.next().unwrap_or_default().split(';').map(|h| h.replace('-', "_")).collect();
    let mut cols: Vec<Vec<&str>> = vec![Vec::with_capacity(30_162); header.len()];
    for (i, line) in lines.enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(';').collect();
        if fields.len() != header.len() {
            return Err(AnonError::io("adult.csv", format!("line {} has {} fields", i + 2, fields.len())));
        }
        for (c, f) in fields.into_iter().enumerate() {
            cols[c].push(f);
        }
    }
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (name, values) in header.iter().zip(&cols) {
        if name == "age" {
            let ages: Vec<i64> = values
                .iter()
                .map(|v| v.parse::<i64>().map_err(|_| AnonError::io("adult.csv", "non-numeric age")))
                .collect::<Result<_>>()?;
            fields.push(Field::new(name, DataType::Int64, false));
            arrays.push(Arc::new(Int64Array::from(ages)));
        } else {
            fields.push(Field::new(name, DataType::Utf8, false));
            arrays.push(Arc::new(StringArray::from(values.clone())));
        }
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;

    let mut meta = TableMeta::default();
    for (col, text, kind) in HIERARCHIES {
        meta.hierarchies.insert(col.to_string(), Arc::new(parse_arx_text(text, col, *kind)?));
    }
    meta.roles = ADULT_QIS.iter().map(|c| (c.to_string(), Role::QuasiIdentifier)).collect();
    meta.roles.push(("occupation".into(), Role::Sensitive));
    meta.roles.push(("salary_class".into(), Role::Insensitive));
    Ok(DatasetTable { name: "adult".into(), batches: vec![batch], meta })
}
