//! The estimation plan of one query: how each referenced column is released, the variables
//! of the probability model, the compiled WHERE clause, the grouping and the measure.

use super::dist::LabelIndex;
use super::parse::{Agg, GroupExpr, Lit, ParsedQuery, Pred};
use super::prob::{Node, Test};
use crate::error::{AnonError, Result};
use crate::hierarchy::format_number;
use crate::hierarchy::{Hierarchy, HierarchyKind};
use crate::meta::{Role, TableMeta};
use datafusion::arrow::datatypes::{DataType, Schema};
use std::sync::Arc;

/// Variables are bits of a `u64` mask in the probability model.
const MAX_VARS: usize = 64;

fn too_many_vars() -> AnonError {
    AnonError::argument("query_error", "query", format!("reads more than {MAX_VARS} attributes and codes"))
}

/// How one column of the original appears in the release.
#[derive(Debug, Clone)]
pub(crate) enum AttrKind {
    /// Numeric quasi-identifier: `c_lo`, `c_hi` bound the hierarchy leaves it may be.
    Numeric(Arc<Hierarchy>),
    /// Categorical quasi-identifier: `c` holds a node label.
    Categorical(Arc<Hierarchy>, Arc<LabelIndex>),
    /// Set-valued column: a list of (possibly generalized) codes.
    Codes(Arc<Hierarchy>, Arc<LabelIndex>),
    /// Released as it is.
    ExactNum,
    ExactStr,
}

impl AttrKind {
    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, AttrKind::Numeric(_) | AttrKind::ExactNum)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Attr {
    pub(crate) name: String,
    pub(crate) kind: AttrKind,
    /// Integer column in the original (integer division in FLOOR buckets).
    integer: bool,
}

/// A variable of the model: an attribute's value, or whether a set holds one code.
#[derive(Debug, Clone)]
pub(crate) enum Var {
    Attr(usize),
    Has(usize, String),
}

/// A grouping expression over a variable.
#[derive(Debug, Clone)]
pub struct Group {
    pub(crate) var: usize,
    pub(crate) bucket: Option<(f64, f64, bool)>,
}

#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) attrs: Vec<Attr>,
    pub(crate) vars: Vec<Var>,
    pub(crate) pred: Option<Node>,
    pub(crate) groups: Vec<Group>,
    pub(crate) measure: Option<usize>,
    /// Variables enumerated per record: grouped ones, and the measure when it is not
    /// independent of the predicate or the grouping.
    pub(crate) cond: Vec<usize>,
}

/// Names used in errors.
pub(crate) struct Names<'a> {
    pub(crate) original: &'a str,
    pub(crate) release: &'a str,
}

impl Plan {
    pub(crate) fn new(
        q: &ParsedQuery,
        meta: &TableMeta,
        original: &Schema,
        release: &Schema,
        names: &Names,
    ) -> Result<Plan> {
        check_release_schema(meta, original, release, names)?;
        let mut attrs = Vec::new();
        for c in q.columns() {
            let a = attr(&c, meta, original, names)?;
            if matches!(a.kind, AttrKind::ExactNum | AttrKind::ExactStr | AttrKind::Codes(..))
                && release.field_with_name(&c).is_err()
            {
                return Err(not_released(&c, meta, names));
            }
            attrs.push(a);
        }
        let index = |c: &str| attrs.iter().position(|a| a.name == c).expect("referenced column");
        let mut vars: Vec<Var> =
            (0..attrs.len()).filter(|&i| !matches!(attrs[i].kind, AttrKind::Codes(..))).map(Var::Attr).collect();
        if vars.len() > MAX_VARS {
            return Err(too_many_vars());
        }
        let pred = q.pred.as_ref().map(|p| compile(p, &attrs, &mut vars, &index)).transpose()?;
        let var_of = |c: &str, what: &str| -> Result<usize> {
            let i = index(c);
            match attrs[i].kind {
                AttrKind::Codes(..) => Err(AnonError::argument(
                    "query_error",
                    "query",
                    format!("{what} on set-valued column '{c}': only array_has(col, 'code') reads it"),
                )),
                _ => Ok(vars.iter().position(|v| matches!(v, Var::Attr(a) if *a == i)).expect("attribute variable")),
            }
        };
        let mut groups = Vec::new();
        for g in &q.groups {
            let var = var_of(g.column(), "GROUP BY")?;
            let bucket = match g {
                GroupExpr::Column(_) => None,
                GroupExpr::Bucket { col, offset, width, integer_literals } => {
                    if !attrs[index(col)].kind.is_numeric() {
                        return Err(AnonError::column(names.original, col, "FLOOR bucket of a non-numeric column"));
                    }
                    Some((*offset, *width, *integer_literals && attrs[index(col)].integer))
                }
            };
            groups.push(Group { var, bucket });
        }
        let measure = match q.agg.measure() {
            None => None,
            Some(m) => {
                let v = var_of(m, "an aggregate")?;
                if !matches!(q.agg, Agg::Count(_)) && !attrs[index(m)].kind.is_numeric() {
                    return Err(AnonError::column(names.original, m, "SUM/AVG of a non-numeric column"));
                }
                Some(v)
            }
        };
        let mut cond: Vec<usize> = groups.iter().map(|g| g.var).collect();
        cond.dedup();
        let entangled = |v: usize| cond.contains(&v) || pred.as_ref().is_some_and(|p: &Node| p.mask() & (1 << v) != 0);
        if let Some(m) = measure.filter(|&m| entangled(m) && !cond.contains(&m)) {
            cond.push(m);
        }
        let mut seen = Vec::new();
        cond.retain(|v| {
            if seen.contains(v) {
                false
            } else {
                seen.push(*v);
                true
            }
        });
        Ok(Plan { attrs, vars, pred, groups, measure, cond })
    }
}

/// Every quasi-identifier and set-valued column of the original must be in the release, in
/// the release schema's shape.
fn check_release_schema(meta: &TableMeta, original: &Schema, release: &Schema, names: &Names) -> Result<()> {
    for (col, role) in &meta.roles {
        if original.field_with_name(col).is_err() {
            continue;
        }
        let needed: Vec<String> = match role {
            Role::QuasiIdentifier if meta.hierarchy(names.original, col)?.is_numeric() => {
                vec![col.clone(), format!("{col}_lo"), format!("{col}_hi")]
            }
            // A code set is published by artuc only: other releases leave it out, and only a
            // query that reads it needs it ([`not_released`]).
            Role::QuasiIdentifier | Role::Sensitive => vec![col.clone()],
            _ => vec![],
        };
        for n in needed {
            if release.field_with_name(&n).is_err() {
                return Err(AnonError::column(
                    names.release,
                    &n,
                    format!(
                        "is missing: '{col}' is a {} of '{}', so the release must have it (is '{}' a release of '{}'?)",
                        role.name(),
                        names.original,
                        names.release,
                        names.original
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A column the query reads as published that the release left out: methods drop columns
/// declared insensitive (every undeclared column is) unless asked to keep them.
fn not_released(c: &str, meta: &TableMeta, names: &Names) -> AnonError {
    if meta.role(c) == Some(Role::SetValued) {
        return AnonError::column(
            names.release,
            c,
            format!(
                "is not in the release: '{c}' is declared set_valued in '{}', and only artuc publishes code sets",
                names.original
            ),
        );
    }
    // Columns never declared are insensitive (declare_roles).
    let role = meta.role(c).unwrap_or(Role::Insensitive).name();
    AnonError::column(
        names.release,
        c,
        format!(
            "is not in the release: '{c}' is declared {role} in '{}', and methods leave such columns out; \
             make the release with 'keep_insensitive=true' to publish it",
            names.original
        ),
    )
}

fn attr(c: &str, meta: &TableMeta, original: &Schema, names: &Names) -> Result<Attr> {
    let field = original
        .field_with_name(c)
        .map_err(|_| AnonError::column(names.original, c, "is not a column of the table"))?;
    let ty = field.data_type();
    let integer = ty.is_integer();
    let numeric = ty.is_numeric();
    let role = meta.role(c);
    let hierarchy = meta.hierarchies.get(c).cloned();
    let kind = match (role, hierarchy) {
        (Some(Role::Identifier), _) => {
            return Err(AnonError::column(names.original, c, "is an identifier: it is not released, so no estimate"));
        }
        (_, Some(h)) if h.kind() == HierarchyKind::Codes => {
            if !matches!(ty, DataType::List(_) | DataType::LargeList(_)) {
                // The workload's queries run array_has on the original itself, which needs a list.
                return Err(AnonError::column(
                    names.original,
                    c,
                    format!(
                        "has a code hierarchy but is not a list, which the workload's queries (array_has) need: \
                         register a copy with string_to_array({c}, ';') as the column"
                    ),
                ));
            }
            let idx = Arc::new(LabelIndex::new(&h));
            AttrKind::Codes(h, idx)
        }
        (Some(Role::QuasiIdentifier), Some(h)) if h.is_numeric() => AttrKind::Numeric(h),
        (Some(Role::QuasiIdentifier), Some(h)) => {
            let idx = Arc::new(LabelIndex::new(&h));
            AttrKind::Categorical(h, idx)
        }
        (Some(Role::QuasiIdentifier), None) => {
            return Err(AnonError::column(names.original, c, "is a quasi-identifier without a hierarchy"));
        }
        _ if numeric => AttrKind::ExactNum,
        _ => AttrKind::ExactStr,
    };
    Ok(Attr { name: c.to_string(), kind, integer })
}

/// Lower a predicate to model nodes, coercing literals to the column's kind.
fn compile(p: &Pred, attrs: &[Attr], vars: &mut Vec<Var>, index: &dyn Fn(&str) -> usize) -> Result<Node> {
    let lit = |col: &str, l: &Lit| -> Result<Lit> {
        let a = &attrs[index(col)];
        match (a.kind.is_numeric(), l) {
            (true, Lit::Str(s)) => s.trim().parse().map(Lit::Num).map_err(|_| {
                AnonError::argument("query_error", "query", format!("column '{col}' is numeric; '{s}' is not a number"))
            }),
            (false, Lit::Num(x)) => Ok(Lit::Str(format_number(*x))),
            _ => Ok(l.clone()),
        }
    };
    let var = |col: &str, vars: &mut Vec<Var>| -> Result<usize> {
        let i = index(col);
        if matches!(attrs[i].kind, AttrKind::Codes(..)) {
            return Err(AnonError::argument(
                "query_error",
                "query",
                format!("set-valued column '{col}' is only supported in array_has(col, 'code')"),
            ));
        }
        Ok(vars.iter().position(|v| matches!(v, Var::Attr(a) if *a == i)).expect("attribute variable"))
    };
    Ok(match p {
        Pred::And(v) => Node::and(v.iter().map(|x| compile(x, attrs, vars, index)).collect::<Result<_>>()?),
        Pred::Or(v) => Node::or(v.iter().map(|x| compile(x, attrs, vars, index)).collect::<Result<_>>()?),
        Pred::Not(x) => Node::Not(Box::new(compile(x, attrs, vars, index)?)),
        Pred::Cmp { col, op, lit: l } => Node::Atom(var(col, vars)?, Test::Cmp(*op, lit(col, l)?)),
        Pred::In { col, list, negated } => {
            let list = list.iter().map(|l| lit(col, l)).collect::<Result<_>>()?;
            Node::Atom(var(col, vars)?, Test::In(list, *negated))
        }
        Pred::Between { col, lo, hi, negated } => {
            Node::Atom(var(col, vars)?, Test::Between(lit(col, lo)?, lit(col, hi)?, *negated))
        }
        Pred::Has { col, code } => {
            let i = index(col);
            if !matches!(attrs[i].kind, AttrKind::Codes(..)) {
                return Err(AnonError::argument(
                    "query_error",
                    "query",
                    format!("array_has on '{col}', which is not a set-valued column with a code hierarchy"),
                ));
            }
            let v = match vars.iter().position(|v| matches!(v, Var::Has(a, c) if *a == i && c == code)) {
                Some(v) => v,
                None if vars.len() >= MAX_VARS => return Err(too_many_vars()),
                None => {
                    vars.push(Var::Has(i, code.clone()));
                    vars.len() - 1
                }
            };
            Node::Atom(v, Test::IsTrue)
        }
    })
}
