//! Independent verifiers: check a release against the privacy and utility claims made for it.
//!
//! They read only the release (and a counterfeit catalog), plus the ORIGINAL table's declared
//! roles and hierarchies, and share no code with the anonymization methods: equivalence classes
//! are recomputed here from the published quasi-identifier columns (what an attacker sees), by
//! DataFusion aggregations over the release, and each property is evaluated from its paper's
//! definition. See `docs/verify.md` for the exact conditions.
//!
//! A suppressed record is a row that carries nothing: every quasi-identifier label `*`, numeric
//! bounds NULL and every other column but `class_id` NULL (the sensitive value withheld). It is
//! excluded from the class-based checks and counted in their detail. A row of `*` labels that
//! carries a value is no suppressed record: it is in the root tuple's class, checked as any.
//!
//! Every check also fails when the release carries a column the original declares
//! `identifier` (columns.rs): the README promises identifiers are dropped from every release.
//!
//! One thing IS shared: the splitter of code-set columns ([`crate::hierarchy::code_lists`]), so a
//! release or constraints table whose codes are a delimited string (`'(053.20,053.71);4019'`, as
//! `COPY ... TO '.csv'` writes lists) is read element for element as the methods and metrics read
//! it. It is input parsing, not algorithm: it decides no privacy property, only which text is one
//! element. Independence guards against a method's logic and its checker sharing a mistake; a
//! separate splitter would instead let the two disagree about what the data says (as artuc's and
//! load_hierarchy's readers once did), which no check could notice. The splitter has its own
//! tests (src/hierarchy/code_sets.rs) and tests/own_data.rs checks string- and list-typed releases
//! give the same verdicts.
//!
//! What is NOT shared, on purpose: `src/release` (the resolver from released labels and codes to
//! leaves, the counterfeit-catalog reader and its Fig. 4 weighting) and `src/formulas` (NCP,
//! EMD, entropy). The methods, `anon_metrics` and the query harness all build on those, so a
//! mistake there would be made identically by a method and by a report; this module reads
//! releases and catalogs (catalog.rs, classes.rs) and computes EMD and entropy (closeness.rs,
//! diversity.rs) with its own code from the papers' definitions, so that it can catch it.

mod catalog;
mod ceiling;
mod classes;
mod closeness;
mod columns;
mod constraints;
mod diversity;
mod km;
mod kmap;
mod options;

pub(crate) use classes::Layout;
pub use km::{KmClass, check_km_classes};
pub(crate) use options::{Check, parse_checks};

use crate::error::{AnonError, Result};
use crate::meta::{Role, TableMeta};
use datafusion::prelude::SessionContext;

/// One row of `verify_release`'s result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckRow {
    pub(crate) check: String,
    pub(crate) holds: bool,
    pub(crate) detail: String,
    pub(crate) violations: i64,
}

/// The verdict of one check before it is named.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub holds: bool,
    detail: String,
    pub violations: i64,
}

impl Verdict {
    pub(crate) fn holds(detail: String) -> Self {
        Verdict { holds: true, detail, violations: 0 }
    }
    pub(crate) fn fails(violations: i64, detail: String) -> Self {
        Verdict { holds: false, detail, violations }
    }
}

/// One equivalence class: its published description and its sensitive-value counts, as
/// (value index, count) sorted by value index.
#[derive(Debug, Clone)]
pub(crate) struct ClassHist {
    label: String,
    counts: Vec<(u32, u64)>,
}

impl ClassHist {
    pub(crate) fn size(&self) -> u64 {
        self.counts.iter().map(|c| c.1).sum()
    }
}

/// The class × sensitive-value histogram of a release.
#[derive(Debug, Clone)]
pub(crate) struct Histogram {
    classes: Vec<ClassHist>,
    /// Sensitive values as text, by value index.
    values: Vec<String>,
    /// For a numeric sensitive attribute, each value's number (ordered EMD).
    numeric: Option<Vec<f64>>,
    /// t-closeness's Q: counts over every row of the ORIGINAL table (empty unless t-closeness
    /// was asked for). Suppressed rows carry no value, so the release could not give it.
    overall: Vec<(u32, u64)>,
    /// Suppressed rows (they carry nothing), excluded from the classes.
    suppressed: u64,
}

impl Histogram {
    fn suppressed_note(&self) -> String {
        if self.suppressed == 0 { String::new() } else { format!("; {} suppressed rows excluded", self.suppressed) }
    }
}

/// Everything a verification needs to know about the call.
pub(crate) struct Request<'a> {
    pub(crate) original: &'a str,
    pub(crate) release: &'a str,
    pub(crate) catalog: Option<&'a str>,
    pub(crate) checks: Vec<Check>,
}

/// Run every requested check, in order. Errors are about the call (missing columns,
/// declarations, catalog); a property that does not hold is a row with `holds = false`.
pub(crate) async fn verify(ctx: &SessionContext, meta: &TableMeta, req: &Request<'_>) -> Result<Vec<CheckRow>> {
    let df = ctx.table(req.release).await.map_err(|_| AnonError::table(req.release, "not found"))?;
    let schema = df.schema().as_arrow().clone();
    let layout = Layout::new(meta, req.original, req.release, &schema)?;
    let needs_sensitive = req.checks.iter().any(|c| {
        matches!(
            c,
            Check::DistinctL { .. }
                | Check::EntropyL { .. }
                | Check::RecursiveCL { .. }
                | Check::TCloseness { .. }
                | Check::Catalog
        )
    });
    let sensitive = if needs_sensitive {
        Some(meta.sensitive(req.original)?.to_string())
    } else {
        meta.sensitive(req.original).ok().map(str::to_string)
    };
    let class_based =
        req.checks.iter().any(|c| !matches!(c, Check::HCeiling { .. } | Check::Catalog | Check::KKm { .. }));
    // t-closeness compares each class with the whole original table's distribution.
    let reference = req.checks.iter().any(|c| matches!(c, Check::TCloseness { .. })).then_some(req.original);
    let hist =
        if class_based { Some(classes::histogram(ctx, &layout, sensitive.as_deref(), reference).await?) } else { None };
    let identifiers = columns::published_identifiers(meta, &schema);
    let mut rows = Vec::new();
    for check in &req.checks {
        let outcome = run_one(ctx, meta, req, &layout, hist.as_ref(), sensitive.as_deref(), check).await?;
        let outcome = columns::apply(outcome, &identifiers, req.original);
        rows.push(CheckRow {
            check: check.name(),
            holds: outcome.holds,
            detail: outcome.detail,
            violations: outcome.violations,
        });
    }
    Ok(rows)
}

async fn run_one(
    ctx: &SessionContext,
    meta: &TableMeta,
    req: &Request<'_>,
    layout: &Layout,
    hist: Option<&Histogram>,
    sensitive: Option<&str>,
    check: &Check,
) -> Result<Verdict> {
    let h = || hist.ok_or_else(|| AnonError::table(req.release, "internal: histogram not computed"));
    Ok(match check {
        &Check::KAnonymity { k } => diversity::k_anonymity(h()?, k),
        &Check::DistinctL { l } => diversity::distinct_l(h()?, l),
        &Check::EntropyL { l } => diversity::entropy_l(h()?, l),
        &Check::RecursiveCL { c, l } => diversity::recursive_cl(h()?, c, l),
        &Check::TCloseness { t } => closeness::t_closeness(h()?, t),
        &Check::HCeiling { h } => ceiling::h_ceiling(ctx, meta, req.original, layout, h).await?,
        Check::Catalog => {
            let table = req.catalog.ok_or_else(|| {
                AnonError::argument(
                    "verify_release",
                    "catalog",
                    "the 'catalog' check needs the catalog table as the 4th argument",
                )
            })?;
            let sensitive = sensitive.unwrap_or_default();
            catalog::verify_catalog(ctx, req.release, table, sensitive).await?
        }
        &Check::KMap { k, population, alpha, zero_truncated } => {
            kmap::k_map(h()?, k, population, alpha, zero_truncated)?
        }
        &Check::KKm { k, m } => {
            let column = set_valued(meta, req.original)?;
            let hierarchy = meta.hierarchies.get(&column).cloned();
            km::verify_km(ctx, layout, &column, hierarchy.as_deref(), k, m).await?
        }
        Check::Constraints { table } => {
            let hs: Vec<_> =
                layout.qis.iter().map(|q| meta.hierarchy(req.original, &q.name).cloned()).collect::<Result<_>>()?;
            let hs: Vec<&crate::hierarchy::Hierarchy> = hs.iter().map(|h| h.as_ref()).collect();
            let set = set_valued(meta, req.original).ok();
            let set_h = set.as_ref().and_then(|c| meta.hierarchies.get(c).cloned());
            let set_arg = set.as_deref().map(|c| (c, set_h.as_deref()));
            constraints::verify_constraints(ctx, layout, &hs, table, set_arg).await?
        }
    })
}

fn set_valued(meta: &TableMeta, original: &str) -> Result<String> {
    match meta.columns_with(Role::SetValued).as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(AnonError::table(original, "declares no set-valued column, which the km check needs")),
        many => Err(AnonError::table(
            original,
            format!("declares {} set-valued columns; the km check takes one", many.len()),
        )),
    }
}
