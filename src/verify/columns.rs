//! The README's first release promise, "only declared columns ... identifiers dropped", checked
//! on the release's schema: a release must not carry a column the original declares
//! `identifier`. Nothing here comes from a method: the names are the original's declarations
//! (the registry) and the release's own schema.
//!
//! A release column is flagged when its name equals a declared identifier's, ignoring ASCII
//! case (`Name` for `name` still names the patient), unless it is exactly the name of a column
//! the original declares with another role, or one a release writes itself: `class_id`, and
//! `q_lo`/`q_hi` for a quasi-identifier `q`. So the quasi-identifiers and their bounds, the
//! sensitive and set-valued columns and insensitive or undeclared columns (which methods keep
//! with `keep_insensitive=true`) are never flagged.
//!
//! An identifier in the release voids every guarantee at once (each row names its record,
//! whatever its class), so [`apply`] turns every requested check into a failure that says why,
//! keeping the check's own verdict in the detail: docs/verify.md, "Identifier columns".

use super::Verdict;
use crate::meta::{Role, TableMeta};
use datafusion::arrow::datatypes::Schema;
use std::collections::BTreeSet;

/// The release's columns that carry a declared identifier of the original, in schema order.
pub(crate) fn published_identifiers(meta: &TableMeta, release: &Schema) -> Vec<String> {
    let identifiers: Vec<String> =
        meta.columns_with(Role::Identifier).into_iter().map(|c| c.to_ascii_lowercase()).collect();
    if identifiers.is_empty() {
        return vec![];
    }
    let mut allowed: BTreeSet<String> = BTreeSet::from(["class_id".to_string()]);
    for role in [Role::QuasiIdentifier, Role::Sensitive, Role::Insensitive, Role::SetValued] {
        allowed.extend(meta.columns_with(role).into_iter().map(str::to_string));
    }
    for q in meta.columns_with(Role::QuasiIdentifier) {
        allowed.extend([format!("{q}_lo"), format!("{q}_hi")]);
    }
    release
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|name| !allowed.contains(name.as_str()) && identifiers.contains(&name.to_ascii_lowercase()))
        .cloned()
        .collect()
}

/// `verdict` of a check on a release that publishes `published` (identifier columns of
/// `original`): a failure with one more violation per such column, the check's own verdict
/// kept at the end of the detail. Unchanged when `published` is empty.
pub(crate) fn apply(verdict: Verdict, published: &[String], original: &str) -> Verdict {
    if published.is_empty() {
        return verdict;
    }
    let names = published.iter().map(|c| format!("'{c}'")).collect::<Vec<_>>().join(", ");
    let own = if verdict.holds { "holds" } else { "fails" };
    Verdict::fails(
        verdict.violations + published.len() as i64,
        format!(
            "the release publishes {names}, declared identifier of '{original}' (every release drops \
             identifiers): each row names its record, so no guarantee holds; without it the check {own}: {}",
            verdict.detail
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_identifier_fails_a_check_that_held() {
        let v = apply(Verdict::holds("1 classes".into()), &["name".into()], "t");
        assert!(!v.holds && v.violations == 1, "{v:?}");
        assert!(v.detail.contains("'name'") && v.detail.contains("without it the check holds: 1 classes"), "{v:?}");
        let v = apply(Verdict::fails(3, "x".into()), &[], "t");
        assert!(!v.holds && v.violations == 3 && v.detail == "x");
    }
}
