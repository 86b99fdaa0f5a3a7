//! Hierarchy functions:
//! - `load_hierarchy(table, column, path [, kind | options])`: an ARX-format file, or a bundled
//!   hierarchy by name (`'bundled:icd9'`, ICD-9-CM with retired codes, for a code column);
//!   options `kind=...` and, for codes, `unknown_codes=error|parent|suppress`: a code outside
//!   the hierarchy is an error (the default), becomes a leaf under the category its longest
//!   prefix names (`'2554'` under `'255'`, a category used as a code like `'585'` under itself),
//!   or is dropped from its record before any method sees it. `suppress` is kept with the
//!   hierarchy, so every reader of the column (artuc, the verifiers, the metrics) drops the same
//!   codes; artuc's report counts them (`unknown_codes`, `unknown_codes_distinct`), never names
//!   them;
//! - `flat_hierarchy(table, column [, 'values=F|M'])`: every value directly under `*`;
//! - `masking_hierarchy(table, column [, 'right'|'left' [, step [, 'length=5, alphabet=digits']]])`:
//!   `step` more characters masked per level (`02139 → 0213* → ... → *****`), for zip codes and
//!   similar text codes: values of at most 1,000 characters and 1 GiB of labels in all
//!   (`hierarchy::MAX_MASKED_CHARS`, `MAX_MASKING_BYTES`), since its size grows with the
//!   square of a value's length;
//! - `date_hierarchy(table, column [, from, to])`: a DATE column's days → month → year →
//!   decade → `*`;
//! - `hierarchy_from_table(table, column, hierarchy_table [, kind])`: a table of the same shape;
//! - `interval_hierarchy(table, column, widths [, min, max])`: numeric bands, e.g. `'5,10,20,*'`,
//!   over an integer or floating-point column, bounds within ±2^53;
//! - `hierarchy(table, column)`: the hierarchy in ARX shape (one row per leaf);
//! - `hierarchy_nodes(table, column)`: one row per node with its leaf count, bounds and degree.
//!
//! Loading validates the hierarchy and its coverage of the column's values before anything is
//! registered, so a failing call leaves the declarations as they were.
//!
//! **Declared or read.** A differentially private release may not learn its domain from the
//! data (a leaf that exists only because one record holds it is released with that record).
//! Every builder that can read its leaves from the column also has a declared form: the
//! `values=` list (flat), a length and alphabet (masking), a date range (dates), public bounds
//! (intervals), extra codes named in `extra_codes=` (code hierarchies), a file or another
//! table. The forms that read the column mark the hierarchy as derived from the data
//! ([`Hierarchy::derived_from`]), with the declared form to use instead, and every DP function
//! refuses it (`methods::ipa::domain`).

use super::args::Args;
use super::glue::session_context;
use super::report::{Column, table};
use super::roles::table_columns;
use crate::encode::{check_coverage, format_number};
use crate::error::{AnonError, Result};
use crate::hierarchy::{
    self, Hierarchy, HierarchyKind, MaskFrom, date_domain, date_hierarchy, flat_hierarchy, load_arx_file,
    masked_domain, masking_hierarchy, parse_widths, widths_hierarchy,
};
use crate::meta::Role;
use crate::methods::options::{Kind, Options, opt};
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::compute::{can_cast_types, cast};
use datafusion::arrow::datatypes::DataType;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::functions_aggregate::expr_fn::{max, min};
use datafusion::prelude::{SessionContext, ident};
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
enum Op {
    LoadFile,
    FromTable,
    Flat,
    Masking,
    Dates,
    Intervals,
    ShowArx,
    ShowNodes,
}

#[derive(Debug)]
struct HierarchyFn {
    registry: Arc<Registry>,
    op: Op,
    name: &'static str,
}

pub(super) const LOAD_SIG: &str = "load_hierarchy(table, column, path | 'bundled:icd9' [, kind | options])";
pub(super) const FROM_TABLE_SIG: &str = "hierarchy_from_table(table, column, hierarchy_table [, kind])";
pub(super) const INTERVALS_SIG: &str = "interval_hierarchy(table, column, 'w1,w2,...,*' [, min, max])";
pub(super) const SHOW_SIG: &str = "hierarchy(table, column)";
pub(super) const NODES_SIG: &str = "hierarchy_nodes(table, column)";
pub(super) const FLAT_SIG: &str = "flat_hierarchy(table, column [, options])";
pub(super) const MASKING_SIG: &str = "masking_hierarchy(table, column [, 'right'|'left' [, step [, options]]])";
pub(super) const DATES_SIG: &str = "date_hierarchy(table, column [, from, to])";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    for (name, op) in [
        ("load_hierarchy", Op::LoadFile),
        ("hierarchy_from_table", Op::FromTable),
        ("flat_hierarchy", Op::Flat),
        ("masking_hierarchy", Op::Masking),
        ("date_hierarchy", Op::Dates),
        ("interval_hierarchy", Op::Intervals),
        ("hierarchy", Op::ShowArx),
        ("hierarchy_nodes", Op::ShowNodes),
    ] {
        ctx.register_udtf(name, Arc::new(HierarchyFn { registry: registry.clone(), op, name }));
    }
}

impl TableFunctionImpl for HierarchyFn {
    fn call_with_args(&self, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let ctx = session_context(&args)?;
        let e = args.exprs();
        if !matches!(self.op, Op::ShowArx | Op::ShowNodes) {
            // Loading changes the declarations: not under a plain EXPLAIN.
            super::explain::refuse_when_planning_only(self.name)?;
        }
        let h = match self.op {
            Op::LoadFile => {
                let a = Args::with_options("load_hierarchy", LOAD_SIG, Some(&LOAD_OPTIONS), e, 3, 4)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                let path = a.str(2, "path")?;
                let (kind, unknown, extra) = load_options(a.opt_str(3, "options")?.as_deref())?;
                let mut h = match path.strip_prefix(BUNDLED) {
                    Some(name) => bundled(name, &column)?,
                    None => {
                        load_arx_file(&path, &column, self.kind_named(&ctx, "load_hierarchy", kind, &table, &column)?)?
                    }
                };
                let key = if extra.is_some() { "extra_codes" } else { "unknown_codes" };
                if (unknown != Unknown::Error || extra.is_some())
                    && (h.kind() != HierarchyKind::Codes || h.height() < 2)
                {
                    return Err(AnonError::argument(
                        "load_hierarchy",
                        key,
                        "applies to code hierarchies with categories (kind=codes, height 2 or more)",
                    )
                    .into());
                }
                if let Some(codes) = &extra {
                    h = with_declared_codes(h, &column, codes)?;
                }
                match unknown {
                    Unknown::Error => {}
                    Unknown::Parent => {
                        h = adopt_unknown_codes(&ctx, &table, &column, h)?.derived_from(&format!(
                            "unknown_codes=parent added the column's own unknown codes as leaves; declare them \
                             instead: load_hierarchy('{table}', '{column}', '{path}', 'extra_codes=code1|code2')"
                        ))
                    }
                    Unknown::Suppress => h = h.suppressing_unknown_codes(),
                }
                self.install(&ctx, &table, &column, h)?
            }
            Op::FromTable => {
                let a = Args::new("hierarchy_from_table", FROM_TABLE_SIG, e, 3, 4)?;
                let (table, column, source) = (a.str(0, "table")?, a.str(1, "column")?, a.str(2, "hierarchy_table")?);
                let kind = self.kind(&ctx, &a, 3, &table, &column)?;
                let batches = block_on(async { ctx.table(source.as_str()).await?.collect().await })
                    .map_err(|_| AnonError::table(&source, "not found"))?;
                let rows = hierarchy::rows_from_batches(&batches, &column)?;
                let mut h = hierarchy::from_rows(rows, &column, kind)?;
                // A hierarchy read from the data table itself has the data's values as leaves.
                if reads_the_table(&ctx, &source, &table) {
                    h = h.derived_from(&format!(
                        "its rows were read from table '{table}' itself; declare the hierarchy in a table or file of \
                         its own instead"
                    ));
                }
                self.install(&ctx, &table, &column, h)?
            }
            Op::Intervals => {
                let a = Args::new("interval_hierarchy", INTERVALS_SIG, e, 3, 5)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                numeric_column(&ctx, "interval_hierarchy", &table, &column)?;
                let widths = parse_widths(&a.str(2, "widths")?)?;
                let (lo, hi, derived) = match (a.opt_i64(3, "min")?, a.opt_i64(4, "max")?) {
                    (Some(lo), Some(hi)) => (lo, hi, false),
                    (lo, hi) => {
                        let (dlo, dhi) = integer_range(&ctx, &table, &column)?;
                        (lo.unwrap_or(dlo), hi.unwrap_or(dhi), true)
                    }
                };
                let mut h = widths_hierarchy(&column, lo, hi, &widths)?;
                if derived {
                    h = h.derived_from(&format!(
                        "its min or max was taken from the data (interval_hierarchy without both bounds); declare \
                         them instead: interval_hierarchy('{table}', '{column}', widths, min, max)"
                    ));
                }
                self.install(&ctx, &table, &column, h)?
            }
            Op::Flat => {
                let a = Args::with_options("flat_hierarchy", FLAT_SIG, Some(&FLAT_OPTIONS), e, 2, 3)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                let values = declared_values(a.opt_str(2, "options")?.as_deref())?;
                let h = match values {
                    Some(values) => flat_hierarchy(&column, &values)?,
                    None => flat_hierarchy(&column, &text_values(&ctx, &table, &column)?)?.derived_from(&format!(
                        "its leaves are the column's own values; declare them instead: \
                         flat_hierarchy('{table}', '{column}', 'values=a|b|c')"
                    )),
                };
                self.install(&ctx, &table, &column, h)?
            }
            Op::Masking => {
                let a = Args::with_options("masking_hierarchy", MASKING_SIG, Some(&MASKING_OPTIONS), e, 2, 5)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                let from = a.opt_str(2, "from")?.unwrap_or_else(|| "right".into());
                let from = MaskFrom::parse(&from).ok_or_else(|| {
                    AnonError::argument("masking_hierarchy", "from", format!("'{from}' is neither 'right' nor 'left'"))
                })?;
                let step = a.opt_u64(3, "step")?.unwrap_or(1) as usize;
                if column_type(&ctx, &table, &column)?.is_integer() {
                    return Err(
                        integer_codes(&table, &column, "masking_hierarchy masks the characters of text codes").into()
                    );
                }
                let h = match masking_domain(a.opt_str(4, "options")?.as_deref())? {
                    Some(domain) => masking_hierarchy(&column, &domain, from, step)?,
                    None => masking_hierarchy(&column, &text_values(&ctx, &table, &column)?, from, step)?.derived_from(
                        &format!(
                            "its leaves are the column's own codes; declare the codes' length and alphabet instead: \
                             masking_hierarchy('{table}', '{column}', 'right', {step}, 'length=5, alphabet=digits')"
                        ),
                    ),
                };
                self.install(&ctx, &table, &column, h)?
            }
            Op::Dates => {
                let a = Args::new("date_hierarchy", DATES_SIG, e, 2, 4)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                let ty = column_type(&ctx, &table, &column)?;
                if !matches!(ty, DataType::Date32 | DataType::Date64) {
                    return Err(AnonError::column(
                        &table,
                        &column,
                        format!("is {ty}, not a DATE; register it as DATE (or CAST({column} AS DATE)) first"),
                    )
                    .into());
                }
                let h = match (a.opt_str(2, "from")?, a.opt_str(3, "to")?) {
                    (Some(from), Some(to)) => date_hierarchy(&column, &date_domain("date_hierarchy", &from, &to)?)?,
                    (None, None) => {
                        date_hierarchy(&column, &text_values(&ctx, &table, &column)?)?.derived_from(&format!(
                            "its leaves are the column's own dates; declare the range instead: \
                             date_hierarchy('{table}', '{column}', '2000-01-01', '2030-12-31')"
                        ))
                    }
                    _ => {
                        return Err(
                            AnonError::argument("date_hierarchy", "to", "needs 'from' and 'to' together").into()
                        );
                    }
                };
                self.install(&ctx, &table, &column, h)?
            }
            Op::ShowArx | Op::ShowNodes => {
                let (f, sig) = if matches!(self.op, Op::ShowArx) {
                    ("hierarchy", SHOW_SIG)
                } else {
                    ("hierarchy_nodes", NODES_SIG)
                };
                let a = Args::new(f, sig, e, 2, 2)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                self.registry.require(&table)?.hierarchy(&table, &column)?.clone()
            }
        };
        Ok(match self.op {
            Op::ShowNodes => nodes_table(&h)?,
            _ => arx_table(&h)?,
        })
    }
}

impl HierarchyFn {
    /// The kind argument, or a default from the column: numbers are numeric, lists and
    /// set-valued columns are codes, everything else categorical.
    fn kind(&self, ctx: &SessionContext, a: &Args, i: usize, table: &str, column: &str) -> Result<HierarchyKind> {
        self.kind_named(ctx, a.function(), a.opt_str(i, "kind")?, table, column)
    }

    fn kind_named(
        &self,
        ctx: &SessionContext,
        function: &str,
        given: Option<String>,
        table: &str,
        column: &str,
    ) -> Result<HierarchyKind> {
        let columns = table_columns(ctx, table)?;
        let ty = columns
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| AnonError::column(table, column, "is not a column of the table"))?;
        if let Some(k) = given {
            return HierarchyKind::parse(&k).ok_or_else(|| {
                AnonError::argument(function, "kind", format!("unknown kind '{k}' (categorical, numeric, codes)"))
            });
        }
        let set_valued = self.registry.get(table).and_then(|m| m.role(column)) == Some(Role::SetValued);
        Ok(match ty {
            DataType::List(_) | DataType::LargeList(_) => HierarchyKind::Codes,
            _ if set_valued => HierarchyKind::Codes,
            t if t.is_numeric() => HierarchyKind::Numeric,
            _ => HierarchyKind::Categorical,
        })
    }

    /// Check coverage of the column's values, then attach the hierarchy to the column.
    fn install(&self, ctx: &SessionContext, table: &str, column: &str, h: Hierarchy) -> Result<Arc<Hierarchy>> {
        if h.is_numeric() {
            numeric_column(ctx, self.name, table, column)?;
        }
        if column_type(ctx, table, column)?.is_integer() && has_leading_zero_leaf(&h) {
            return Err(integer_codes(table, column, "the hierarchy's leaves keep leading zeros"));
        }
        let mut values = distinct_values(ctx, table, column, h.kind())?;
        if h.suppresses_unknown_codes() {
            // Codes outside the hierarchy are dropped wherever the column is read.
            values = values.iter().map(|v| known_codes(&h, v)).collect::<Result<_>>()?;
        }
        check_coverage(table, column, &h, &values)?;
        let h = Arc::new(h);
        self.registry.set_hierarchy(table, column, h.clone());
        Ok(h)
    }
}

/// What `load_hierarchy` does with codes outside a code hierarchy (`unknown_codes=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unknown {
    Error,
    Parent,
    Suppress,
}

/// `load_hierarchy`'s options.
pub(super) const LOAD_OPTIONS: Options = Options {
    function: "load_hierarchy",
    specs: &[
        opt("kind", Kind::Text("numeric|categorical"), "from the column's type", "how the file's leaves are read"),
        opt(
            "unknown_codes",
            Kind::Choice(&["error", "parent", "suppress"]),
            "error",
            "a code outside the hierarchy is an error, a leaf under its category, or dropped from its record",
        ),
        opt("extra_codes", Kind::List, "", "codes declared as leaves beside the hierarchy's"),
    ],
};

/// `flat_hierarchy`'s options.
pub(super) const FLAT_OPTIONS: Options = Options {
    function: "flat_hierarchy",
    specs: &[opt("values", Kind::List, "the column's own values", "the declared leaves")],
};

/// `masking_hierarchy`'s options: the declared domain, both or neither.
pub(super) const MASKING_OPTIONS: Options = Options {
    function: "masking_hierarchy",
    specs: &[
        opt("length", Kind::Int { min: 0, max: u64::MAX }, "", "the codes' number of characters"),
        opt(
            "alphabet",
            Kind::Text("digits|upper|lower|alnum|<chars>"),
            "",
            "the codes' characters (with length=; without both, the column's own codes)",
        ),
    ],
};

/// `load_hierarchy`'s 4th argument: a bare kind, or options. Returns the kind, what to do
/// with codes outside the hierarchy, and the declared extra codes (`extra_codes=a|b`).
fn load_options(arg: Option<&str>) -> Result<(Option<String>, Unknown, Option<Vec<String>>)> {
    let Some(arg) = arg else { return Ok((None, Unknown::Error, None)) };
    if !arg.contains('=') {
        return Ok((Some(arg.to_string()), Unknown::Error, None));
    }
    let o = LOAD_OPTIONS.parse(arg)?;
    let unknown = |v: &str| match v {
        "error" => Some(Unknown::Error),
        "parent" => Some(Unknown::Parent),
        "suppress" => Some(Unknown::Suppress),
        _ => None,
    };
    let unknown = o.choice("unknown_codes", unknown)?.unwrap_or(Unknown::Error);
    Ok((o.text("kind").map(str::to_string), unknown, o.list("extra_codes")))
}

/// `flat_hierarchy`'s options: the declared leaves (`values=a|b|c`), if given.
fn declared_values(options: Option<&str>) -> Result<Option<Vec<Option<String>>>> {
    let o = FLAT_OPTIONS.parse(options.unwrap_or_default())?;
    Ok(o.list("values").map(|v| v.into_iter().map(Some).collect()))
}

/// `masking_hierarchy`'s options: the declared domain (`length=`, `alphabet=`, both or neither).
fn masking_domain(options: Option<&str>) -> Result<Option<Vec<Option<String>>>> {
    const F: &str = "masking_hierarchy";
    let o = MASKING_OPTIONS.parse(options.unwrap_or_default())?;
    match (o.int("length"), o.text("alphabet")) {
        (Some(n), Some(a)) => Ok(Some(masked_domain(F, usize::try_from(n).unwrap_or(usize::MAX), a)?)),
        (None, None) => Ok(None),
        _ => Err(AnonError::argument(F, "options", "a declared domain needs both length= and alphabet=")),
    }
}

/// `h` with the declared `codes` as leaves, each under the category (level-1 node) its longest
/// prefix names; a code that is already a leaf is kept as it is, one with no category is an
/// error naming it (a declared code, not a patient's value).
fn with_declared_codes(h: Hierarchy, column: &str, codes: &[String]) -> Result<Hierarchy> {
    let categories = categories(&h);
    let mut adopted = Vec::new();
    for code in codes.iter().filter(|c| h.leaf_of_label(c).is_none()) {
        let category = longest_category(code, &categories).ok_or_else(|| {
            AnonError::argument(
                "load_hierarchy",
                "extra_codes",
                format!("'{code}' starts with no category of the hierarchy"),
            )
        })?;
        adopted.push((code.clone(), category.to_string()));
    }
    with_leaves_under(&h, column, &adopted)
}

/// The labels of the hierarchy's categories (its level-1 nodes).
fn categories(h: &Hierarchy) -> std::collections::HashSet<&str> {
    (0..h.width(1) as u32).map(|c| h.label(1, c)).collect()
}

/// The longest prefix of `code` that names a category.
fn longest_category<'a>(code: &'a str, categories: &std::collections::HashSet<&str>) -> Option<&'a str> {
    (1..=code.len()).rev().filter(|&k| code.is_char_boundary(k)).map(|k| &code[..k]).find(|p| categories.contains(p))
}

/// The codes of `values` (text) that are leaves of `h`: the coverage check of a hierarchy that
/// drops the others.
fn known_codes(h: &Hierarchy, values: &ArrayRef) -> Result<ArrayRef> {
    let v = cast(values, &DataType::Utf8)?;
    let kept: StringArray =
        v.as_string::<i32>().iter().filter(|c| c.is_none_or(|c| h.leaf_of_label(c).is_some())).collect();
    Ok(Arc::new(kept))
}

/// `h` with every code of the column that is not one of its leaves added as a leaf under the
/// category (level-1 node) its longest prefix names. Codes with no such prefix stay unknown,
/// and the coverage check names them.
fn adopt_unknown_codes(ctx: &SessionContext, table: &str, column: &str, h: Hierarchy) -> Result<Hierarchy> {
    let categories = categories(&h);
    let mut adopted: Vec<(String, String)> = Vec::new();
    for part in distinct_values(ctx, table, column, HierarchyKind::Codes)? {
        let part = cast(&part, &DataType::Utf8)?;
        for code in part.as_string::<i32>().iter().flatten().filter(|c| h.leaf_of_label(c).is_none()) {
            if let Some(category) = longest_category(code, &categories) {
                adopted.push((code.to_string(), category.to_string()));
            }
        }
    }
    adopted.sort();
    adopted.dedup();
    with_leaves_under(&h, column, &adopted)
}

/// `h` plus leaves, each under the category (level-1 node) it names.
fn with_leaves_under(h: &Hierarchy, column: &str, leaves: &[(String, String)]) -> Result<Hierarchy> {
    let rows = h.arx_rows();
    let above: std::collections::HashMap<&str, &[&str]> = rows.iter().map(|r| (r[1], &r[1..])).collect();
    let mut b = hierarchy::HierarchyBuilder::new(column, h.kind());
    for (i, r) in rows.iter().enumerate() {
        b.row(i + 1, r.iter().map(|f| f.to_string()).collect());
    }
    for (i, (leaf, category)) in leaves.iter().enumerate() {
        let path = above
            .get(category.as_str())
            .ok_or_else(|| AnonError::hierarchy(column, format!("extra leaf {}: no category '{category}'", i + 1)))?;
        b.row(
            rows.len() + i + 1,
            std::iter::once(leaf.as_str()).chain(path.iter().copied()).map(String::from).collect(),
        );
    }
    b.build()
}

/// The prefix of `load_hierarchy`'s path that names a bundled hierarchy instead of a file.
const BUNDLED: &str = "bundled:";

/// A hierarchy compiled into the binary, by name, for `column`.
fn bundled(name: &str, column: &str) -> Result<Hierarchy> {
    match name.trim().to_ascii_lowercase().as_str() {
        "icd9" | "icd9cm" | "icd-9-cm" => icd9_with_retired(column),
        _ => Err(AnonError::argument(
            "load_hierarchy",
            "path",
            format!(
                "no bundled hierarchy '{name}' (bundled: icd9, ICD-9-CM v32 with the retired codes of earlier versions)"
            ),
        )),
    }
}

/// Codes of earlier ICD-9-CM versions that v32 no longer has (subdivided since, e.g. 255.4 into
/// 255.41 and 255.42), each with its v32 category: `code;category;description`. Provenance in
/// data/icd9/README.md.
const RETIRED_ICD9: &str = include_str!("../../data/icd9/icd9cm_retired_codes.csv");

/// ICD-9-CM v32 (the RT datasets' hierarchy) plus the retired codes as leaves under their
/// categories, so real records coded under an earlier version attach as they are.
fn icd9_with_retired(column: &str) -> Result<Hierarchy> {
    let retired: Vec<(String, String)> = RETIRED_ICD9
        .lines()
        .map(|line| {
            let mut fields = line.split(';');
            (fields.next().unwrap_or_default().to_string(), fields.next().unwrap_or_default().to_string())
        })
        .collect();
    let v32 = crate::datasets::rt::icd9_hierarchy()?;
    with_leaves_under(&v32, column, &retired)
}

fn column_type(ctx: &SessionContext, table: &str, column: &str) -> Result<DataType> {
    table_columns(ctx, table)?
        .into_iter()
        .find(|(c, _)| c == column)
        .map(|(_, t)| t)
        .ok_or_else(|| AnonError::column(table, column, "is not a column of the table"))
}

/// A leaf such as `02139`: a code whose leading zero an integer column has already lost.
fn has_leading_zero_leaf(h: &Hierarchy) -> bool {
    h.arx_rows().iter().any(|r| r[0].len() > 1 && r[0].starts_with('0') && r[0].bytes().all(|b| b.is_ascii_digit()))
}

/// The error for codes (zip codes, ...) that a CSV schema inference read as integers.
fn integer_codes(table: &str, column: &str, why: &str) -> AnonError {
    AnonError::column(
        table,
        column,
        format!(
            "is an integer column, but {why}: CSV schema inference reads codes such as zip codes as \
             numbers and drops their leading zeros (02139 becomes 2139). Register the table with the \
             column as text (CREATE EXTERNAL TABLE {table} ({column} VARCHAR, ...) STORED AS CSV ...), \
             or restore the digits with lpad(CAST({column} AS VARCHAR), 5, '0') in a table of your own"
        ),
    )
}

/// Distinct values of a column as text (NULL as `None`), for hierarchies built from them.
fn text_values(ctx: &SessionContext, table: &str, column: &str) -> Result<Vec<Option<String>>> {
    let parts = distinct_values(ctx, table, column, HierarchyKind::Categorical)?;
    let mut out = Vec::new();
    for p in parts {
        let s = cast(&p, &DataType::Utf8)?;
        out.extend(s.as_string::<i32>().iter().map(|v| v.map(str::to_string)));
    }
    // An empty leaf is refused by the hierarchy builder as "line 1: field 1 is empty", a line
    // the user never wrote: say what the column holds instead (no value to echo here).
    if out.iter().any(|v| v.as_deref() == Some("")) {
        return Err(AnonError::column(
            table,
            column,
            "holds empty strings, which cannot be a hierarchy's leaves; make them NULL (NULLIF(column, '')) or a \
             placeholder such as 'unknown' in a view of your own, or declare the values",
        ));
    }
    Ok(out)
}

/// Distinct values of a column; a set-valued column's codes are unnested (lists) or split
/// (delimited strings, [`hierarchy::split_codes`]).
fn distinct_values(ctx: &SessionContext, table: &str, column: &str, kind: HierarchyKind) -> Result<Vec<ArrayRef>> {
    let batches = block_on(async {
        let df = ctx.table(table).await?.select(vec![ident(column)])?;
        df.distinct()?.collect().await
    })?;
    let mut out = Vec::new();
    for b in batches {
        let col = b.column(0);
        match col.data_type() {
            DataType::List(_) => out.push(col.as_list::<i32>().values().clone()),
            DataType::LargeList(_) => out.push(col.as_list::<i64>().values().clone()),
            _ if kind == HierarchyKind::Codes => out.push(hierarchy::code_lists(table, column, col)?.values().clone()),
            _ => out.push(col.clone()),
        }
    }
    Ok(out)
}

/// Smallest and largest value of an integer column.
fn integer_range(ctx: &SessionContext, table: &str, column: &str) -> Result<(i64, i64)> {
    let columns = table_columns(ctx, table)?;
    let ty = columns.iter().find(|(c, _)| c == column).map(|(_, t)| t.clone());
    match ty {
        None => return Err(AnonError::column(table, column, "is not a column of the table")),
        Some(t) if !t.is_integer() => {
            return Err(AnonError::column(
                table,
                column,
                format!("is {t}; interval_hierarchy builds integer leaves, so pass min and max or load an ARX file"),
            ));
        }
        _ => {}
    }
    let b = block_on(async {
        ctx.table(table).await?.aggregate(vec![], vec![min(ident(column)), max(ident(column))])?.collect().await
    })?;
    let Some(b) = b.first().filter(|b| b.num_rows() > 0 && !b.column(0).is_null(0) && !b.column(1).is_null(0)) else {
        return Err(AnonError::column(table, column, "has no values to take min and max from"));
    };
    // A cast that fails (a UInt64 above i64::MAX) gives NULL: told apart from an empty column.
    let v = |i: usize| -> Option<i64> {
        let c = cast(b.column(i), &DataType::Int64).ok()?;
        let c = c.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        (!c.is_null(0)).then(|| c.value(0))
    };
    match (v(0), v(1)) {
        (Some(lo), Some(hi)) => Ok((lo, hi)),
        _ => Err(AnonError::column(
            table,
            column,
            "holds values that do not fit a 64-bit signed integer (BIGINT), the type of interval_hierarchy's \
             leaves; load an ARX file, or band a smaller number derived from the column in a view of your own",
        )),
    }
}

/// Refuse a column whose values are not numbers before a numeric hierarchy is built for it:
/// a DATE column's coverage check failed with arrow's raw "Casting from Date32 to Float64 not
/// supported".
fn numeric_column(ctx: &SessionContext, function: &str, table: &str, column: &str) -> Result<()> {
    let ty = column_type(ctx, table, column)?;
    if ty.is_numeric() || can_cast_types(&ty, &DataType::Float64) {
        return Ok(());
    }
    let date = if ty == DataType::Date32 {
        format!(
            "; for a DATE column use date_hierarchy('{table}', '{column}', from, to) (day, month, year, decade), \
             or band its day numbers, CAST({column} AS INT) (days since 1970-01-01), in a view of your own"
        )
    } else {
        String::new()
    };
    Err(AnonError::column(
        table,
        column,
        format!("is {ty}, and {function} builds a numeric hierarchy, for integer and floating-point columns{date}"),
    ))
}

/// One row per leaf: its label at every level (`level_0` … `level_h`).
fn arx_table(h: &Hierarchy) -> Result<Arc<dyn TableProvider>> {
    let rows = h.arx_rows();
    let level = |j: usize| Column::Text(rows.iter().map(|r| r[j].to_string()).collect());
    table((0..=h.height()).map(|j| (format!("level_{j}"), level(j))).collect())
}

/// One row per node: level, label, parent label, leaves under it, bounds, degree (Eqs. 1–2).
fn nodes_table(h: &Hierarchy) -> Result<Arc<dyn TableProvider>> {
    let (mut lv, mut lab, mut par, mut leaves, mut lo, mut hi, mut deg) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for j in 0..=h.height() {
        for code in 0..h.width(j) as u32 {
            lv.push(j as i64);
            let label = if j == 0 && h.is_numeric() {
                format_number(h.leaf_value(code).unwrap_or_default())
            } else {
                h.label(j, code).to_string()
            };
            lab.push(label);
            par.push((j < h.height()).then(|| h.label(j + 1, h.parent(j, code)).to_string()));
            leaves.push(h.leaves_under(j, code) as i64);
            let b = h.bounds(j, code);
            lo.push(b.map(|b| b.0));
            hi.push(b.map(|b| b.1));
            deg.push(h.degree(j, code));
        }
    }
    table(vec![
        ("level", Column::Int(lv)),
        ("label", Column::Text(lab)),
        ("parent", Column::OptText(par)),
        ("leaves", Column::Int(leaves)),
        ("lo", Column::OptFloat(lo)),
        ("hi", Column::OptFloat(hi)),
        ("degree", Column::Float(deg)),
    ])
}

/// Does reading table `source` read table `table`'s rows: the same table however its name is
/// written (`w`, `W`, `public.w`, `"w"`), or a view over it (every table the optimized plan
/// scans, views inlined)? A hierarchy read that way has the data's own values as leaves. A copy
/// (`CREATE TABLE h AS SELECT ...`) is a table of its own, as a file of the values would be.
fn reads_the_table(ctx: &SessionContext, source: &str, table: &str) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::LogicalPlan;
    let target = crate::session::resolve(table);
    if crate::session::resolve(source) == target {
        return true;
    }
    let Ok(plan) = block_on(async { ctx.table(source).await?.into_optimized_plan() }) else {
        return false;
    };
    let defaults = datafusion::config::CatalogOptions::default();
    let mut found = false;
    let _ = plan.apply(|node| {
        if let LogicalPlan::TableScan(scan) = node
            && scan.table_name.clone().resolve(&defaults.default_catalog, &defaults.default_schema) == target
        {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}
