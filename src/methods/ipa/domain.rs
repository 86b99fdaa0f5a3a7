//! Public domains: in a differentially private release nothing about the domain may come
//! from the data. The cells of a node are the cross product of the declared hierarchies'
//! nodes at its levels with the informative attribute's declared values (its hierarchy's
//! leaves, or a `values=` list), never the values that happen to occur (`SELECT DISTINCT`).
//! A hierarchy built from the data (an interval hierarchy whose bounds were read from the
//! column, a hierarchy read from the table itself) carries that provenance and is refused here.

use crate::encode::{FrequencyTable, SensitiveColumn};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::TableMeta;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::Schema;
use std::collections::HashMap;
use std::sync::Arc;

/// How to declare a domain, appended to every refusal.
const HOW: &str = "every domain must be declared independently of the data: load_hierarchy from a file, \
                   hierarchy_from_table over a table of its own, interval_hierarchy(table, column, widths, min, max), \
                   flat_hierarchy(table, column, 'values=a|b|c'), \
                   masking_hierarchy(table, column, 'right', 1, 'length=5, alphabet=digits'), \
                   date_hierarchy(table, column, from, to), or for the informative attribute the option 'values=a|b|c'";

/// The informative attribute's declared values: the `values=` list when given, else the
/// leaves of the hierarchy declared for the column. Errors when neither exists or the
/// hierarchy was derived from the data.
pub fn informative_domain(
    function: &str,
    table: &str,
    meta: &TableMeta,
    informative: &str,
    values: Option<&[String]>,
) -> Result<Vec<String>> {
    if let Some(v) = values {
        crate::methods::options::check_values(function, "values", v)?;
        return Ok(v.to_vec());
    }
    let h = meta.hierarchies.get(informative).ok_or_else(|| {
        AnonError::column(table, informative, format!("the informative attribute has no declared domain; {HOW}"))
    })?;
    if let Some(how) = h.derived_from_data() {
        return Err(AnonError::hierarchy(
            informative,
            format!("was derived from the data, so {function} cannot use it as the informative domain: {how}"),
        ));
    }
    Ok(h.level(0).labels.clone())
}

/// The declared domain of informative column `column` as the column's type writes it: each
/// value read as that type and written back as the text its records are told apart by
/// ([`crate::encode::sensitive_text`]), so `values=0|1` on a DOUBLE column names 0.0 and 1.0
/// as its records read. Refused, before anything is read or reserved: a value the type cannot
/// hold (published, it would be a NULL the release cannot hold), and two values that are one
/// value of the type. The error shows the declared value: a declaration, not a record's value.
pub(crate) fn written_domain(table: &str, column: &str, schema: &Schema, domain: &[String]) -> Result<Vec<String>> {
    let Ok(field) = schema.field_with_name(column) else { return Ok(domain.to_vec()) };
    let ty = field.data_type();
    let declared: ArrayRef = Arc::new(StringArray::from(domain.to_vec()));
    let typed = cast(&declared, ty)?;
    if let Some(i) = (0..typed.len()).find(|&i| typed.is_null(i)) {
        return Err(AnonError::column(
            table,
            column,
            format!("the informative domain declares '{}', which is not a value of the column's type {ty}", domain[i]),
        ));
    }
    let written = crate::encode::sensitive_text(&typed)?;
    let written: Vec<String> = written.as_string::<i32>().iter().map(|v| v.unwrap_or_default().to_string()).collect();
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, w) in written.iter().enumerate() {
        if let Some(&j) = first.get(w.as_str()) {
            return Err(AnonError::column(
                table,
                column,
                format!("the informative domain declares '{}' and '{}', one value of type {ty}", domain[j], domain[i]),
            ));
        }
        first.insert(w, i);
    }
    Ok(written)
}

/// Refuse any quasi-identifier hierarchy derived from the data, naming the column.
pub(crate) fn check_declared<'a>(
    function: &str,
    hierarchies: impl IntoIterator<Item = (&'a str, &'a Hierarchy)>,
) -> Result<()> {
    for (name, h) in hierarchies {
        if let Some(how) = h.derived_from_data() {
            return Err(AnonError::hierarchy(
                name,
                format!("was derived from the data, so {function} cannot use it: {how}"),
            ));
        }
    }
    Ok(())
}

/// The frequency table with the informative attribute re-coded onto `domain` (code i =
/// `domain[i]`, so empty values are cells too), after checking that no quasi-identifier's
/// hierarchy was derived from the data. Records outside the domain are an error naming the
/// column and how many records, never their values.
pub fn public_table(function: &str, table: &str, ft: &FrequencyTable, domain: &[String]) -> Result<FrequencyTable> {
    check_declared(function, ft.qis.iter().map(|q| (q.name.as_str(), q.hierarchy.as_ref())))?;
    let s = ft.sensitive.as_ref().ok_or_else(|| {
        AnonError::argument(function, "source", "needs an informative attribute: declare one column as sensitive")
    })?;
    let index: HashMap<&str, u32> = domain.iter().enumerate().map(|(i, v)| (v.as_str(), i as u32)).collect();
    let map: Vec<Option<u32>> = s.values.iter().map(|v| index.get(v.as_str()).copied()).collect();
    // Checked before the budget is reserved, so the error spends nothing; it says only that some
    // record lies outside the domain, never how many or which (docs/dp.md, "What an error reveals").
    if s.codes.iter().any(|&c| map[c as usize].is_none()) {
        return Err(AnonError::column(
            table,
            &s.name,
            "holds values outside the informative attribute's declared domain; add them to the domain (values=) \
             or filter those records out",
        ));
    }
    let codes = s.codes.iter().map(|&c| map[c as usize].expect("checked above")).collect();
    let sensitive = SensitiveColumn { name: s.name.clone(), values: domain.to_vec(), codes };
    ft.with_sensitive(sensitive)
}
