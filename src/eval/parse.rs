//! The supported query subset: parse with sqlparser, validate, and lower to a small IR that the
//! estimator evaluates. Anything outside the subset is an error naming the construct, so the
//! harness never reports a number it cannot justify.

use crate::error::{AnonError, Result};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Query, Select, SelectItem,
    SetExpr, Statement, TableFactor, UnaryOperator, Value,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// A literal of a predicate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Num(f64),
    Str(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    fn flip(self) -> Self {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }
}

/// A WHERE clause over single-column atoms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pred {
    And(Vec<Pred>),
    Or(Vec<Pred>),
    Not(Box<Pred>),
    Cmp {
        col: String,
        op: CmpOp,
        lit: Lit,
    },
    In {
        col: String,
        list: Vec<Lit>,
        negated: bool,
    },
    Between {
        col: String,
        lo: Lit,
        hi: Lit,
        negated: bool,
    },
    /// `array_has(col, 'code')` on a set-valued column.
    Has {
        col: String,
        code: String,
    },
}

impl Pred {
    /// Columns the predicate reads, in first-use order.
    pub(crate) fn columns(&self, out: &mut Vec<String>) {
        let mut push = |c: &String| {
            if !out.contains(c) {
                out.push(c.clone())
            }
        };
        match self {
            Pred::And(v) | Pred::Or(v) => v.iter().for_each(|p| p.columns(out)),
            Pred::Not(p) => p.columns(out),
            Pred::Cmp { col, .. } | Pred::In { col, .. } | Pred::Between { col, .. } | Pred::Has { col, .. } => {
                push(col)
            }
        }
    }
}

/// A grouping expression: a column, or `FLOOR((col + offset) / width) * width`.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupExpr {
    Column(String),
    Bucket { col: String, offset: f64, width: f64, integer_literals: bool },
}

impl GroupExpr {
    pub(crate) fn column(&self) -> &str {
        match self {
            GroupExpr::Column(c) | GroupExpr::Bucket { col: c, .. } => c,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Agg {
    CountStar,
    Count(String),
    Sum(String),
    Avg(String),
}

impl Agg {
    pub(crate) fn measure(&self) -> Option<&str> {
        match self {
            Agg::CountStar => None,
            Agg::Count(c) | Agg::Sum(c) | Agg::Avg(c) => Some(c),
        }
    }
    /// Groups missing on one side answer 0 for counts and sums, nothing for averages.
    pub(crate) fn missing_is_zero(&self) -> bool {
        !matches!(self, Agg::Avg(_))
    }
}

/// A validated query of the supported subset.
#[derive(Debug, Clone)]
pub struct ParsedQuery {
    pub(crate) groups: Vec<GroupExpr>,
    pub agg: Agg,
    pub(crate) pred: Option<Pred>,
    /// The table the FROM names, as written (quotes kept, so it resolves as DataFusion would).
    pub(crate) from: String,
    group_sql: Vec<String>,
    agg_sql: String,
    where_sql: Option<String>,
}

impl ParsedQuery {
    /// The same question in a canonical shape for the original table: the grouping
    /// expressions (all of them, in GROUP BY order) then the aggregate, no ORDER BY.
    pub(crate) fn original_sql(&self, table: &str) -> String {
        let mut cols: Vec<String> = self.group_sql.iter().enumerate().map(|(i, g)| format!("{g} AS __g{i}")).collect();
        cols.push(format!("{} AS __v", self.agg_sql));
        let mut sql = format!("SELECT {} FROM \"{}\"", cols.join(", "), table.replace('"', "\"\""));
        if let Some(w) = &self.where_sql {
            sql.push_str(&format!(" WHERE {w}"));
        }
        if !self.group_sql.is_empty() {
            sql.push_str(&format!(" GROUP BY {}", self.group_sql.join(", ")));
        }
        sql
    }

    /// Every column the query reads.
    pub(crate) fn columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = &self.pred {
            p.columns(&mut out);
        }
        for g in &self.groups {
            if !out.iter().any(|c| c == g.column()) {
                out.push(g.column().to_string());
            }
        }
        if let Some(m) = self.agg.measure().filter(|m| !out.iter().any(|c| c == m)) {
            out.push(m.to_string());
        }
        out
    }
}

const SUPPORTED: &str = "supported: SELECT of grouping expressions and one COUNT(*)/COUNT(col)/SUM(col)/AVG(col) \
     FROM one table, WHERE with AND/OR/NOT of =, <>, IN, BETWEEN, <, <=, >, >= against literals and \
     array_has(col, 'code'), GROUP BY columns or FLOOR((col + a) / w) * w, ORDER BY";

fn unsupported(construct: impl Into<String>) -> AnonError {
    AnonError::argument("query_error", "query", format!("unsupported construct: {} ({SUPPORTED})", construct.into()))
}

/// Parse and validate one query.
pub fn parse_query(sql: &str) -> Result<ParsedQuery> {
    let statements = Parser::parse_sql(&GenericDialect {}, sql)
        .map_err(|e| AnonError::argument("query_error", "query", format!("cannot parse: {e}")))?;
    let query = match statements.as_slice() {
        [Statement::Query(q)] => q,
        [] => return Err(AnonError::argument("query_error", "query", "is empty")),
        [_] => return Err(unsupported("a statement other than SELECT")),
        _ => return Err(unsupported("several statements (give one query)")),
    };
    let select = check_query_shape(query)?;
    lower_select(select)
}

fn check_query_shape(q: &Query) -> Result<&Select> {
    if q.with.is_some() {
        return Err(unsupported("WITH (common table expression)"));
    }
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Err(unsupported("LIMIT/OFFSET/FETCH"));
    }
    let select = match q.body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::SetOperation { op, .. } => return Err(unsupported(format!("{op} (set operation)"))),
        SetExpr::Query(_) => return Err(unsupported("a parenthesized subquery")),
        _ => return Err(unsupported("a query body other than SELECT")),
    };
    if select.distinct.is_some() {
        return Err(unsupported("DISTINCT"));
    }
    if select.having.is_some() {
        return Err(unsupported("HAVING"));
    }
    if select.qualify.is_some() || !select.named_window.is_empty() {
        return Err(unsupported("QUALIFY/WINDOW"));
    }
    if select.top.is_some() || select.into.is_some() || !select.lateral_views.is_empty() {
        return Err(unsupported("TOP/INTO/LATERAL VIEW"));
    }
    match select.from.as_slice() {
        [one] if !one.joins.is_empty() => Err(unsupported("JOIN")),
        [one] => match &one.relation {
            TableFactor::Table { args: None, .. } => Ok(select),
            TableFactor::Table { .. } => Err(unsupported("a table function in FROM")),
            TableFactor::Derived { .. } => Err(unsupported("a subquery in FROM")),
            other => Err(unsupported(format!("FROM {other}"))),
        },
        [] => Err(unsupported("a query without FROM")),
        _ => Err(unsupported("several tables in FROM (a join)")),
    }
}

fn lower_select(s: &Select) -> Result<ParsedQuery> {
    // Select items: aliases (for GROUP BY / ORDER BY references) and expressions.
    let items: Vec<(&Expr, Option<String>)> = s
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Ok((e, None)),
            SelectItem::ExprWithAlias { expr, alias } => Ok((expr, Some(ident_name(alias)))),
            _ => Err(unsupported("a wildcard or multi-alias SELECT item")),
        })
        .collect::<Result<_>>()?;
    let group_exprs: Vec<&Expr> = match &s.group_by {
        GroupByExpr::All(_) => return Err(unsupported("GROUP BY ALL")),
        GroupByExpr::Expressions(_, mods) if !mods.is_empty() => return Err(unsupported("GROUP BY modifiers")),
        GroupByExpr::Expressions(v, _) => v.iter().map(|e| resolve_group_ref(e, &items)).collect::<Result<_>>()?,
    };
    let groups: Vec<GroupExpr> = group_exprs.iter().map(|e| lower_group(e)).collect::<Result<_>>()?;
    let mut agg: Option<(Agg, String)> = None;
    for (e, _) in &items {
        if let Some(a) = lower_agg(e)? {
            if agg.is_some() {
                return Err(unsupported("more than one aggregate in SELECT (use one query per aggregate)"));
            }
            agg = Some((a, e.to_string()));
        } else {
            let g = lower_group(e)?;
            if !groups.contains(&g) {
                return Err(unsupported(format!("SELECT item '{e}' that is neither an aggregate nor in GROUP BY")));
            }
        }
    }
    let (agg, agg_sql) = agg.ok_or_else(|| unsupported("a SELECT without COUNT, SUM or AVG"))?;
    let pred = s.selection.as_ref().map(lower_pred).transpose()?;
    Ok(ParsedQuery {
        groups,
        agg,
        pred,
        from: from_table(s)?,
        group_sql: group_exprs.iter().map(|e| e.to_string()).collect(),
        agg_sql,
        where_sql: s.selection.as_ref().map(|e| e.to_string()),
    })
}

/// The name of the one table in FROM (check_query_shape made sure there is one).
fn from_table(s: &Select) -> Result<String> {
    match s.from.first().map(|f| &f.relation) {
        Some(TableFactor::Table { name, .. }) => Ok(name.to_string()),
        _ => Err(unsupported("a query without a table in FROM")),
    }
}

/// `GROUP BY 1` and `GROUP BY alias` refer to SELECT items.
fn resolve_group_ref<'a>(e: &'a Expr, items: &[(&'a Expr, Option<String>)]) -> Result<&'a Expr> {
    if let Some(Lit::Num(n)) = literal(e) {
        let i = n as usize;
        if n.fract() != 0.0 || i == 0 || i > items.len() {
            return Err(unsupported(format!("GROUP BY position {n}")));
        }
        return Ok(items[i - 1].0);
    }
    if let Expr::Identifier(id) = e {
        let name = ident_name(id);
        if let Some((expr, _)) =
            items.iter().find(|(x, a)| a.as_deref() == Some(&name) && !matches!(x, Expr::Identifier(_)))
        {
            return Ok(expr);
        }
    }
    Ok(e)
}

/// DataFusion folds unquoted identifiers to lower case; do the same.
fn ident_name(id: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if id.quote_style.is_some() { id.value.clone() } else { id.value.to_ascii_lowercase() }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(inner) => strip(inner),
        other => other,
    }
}

fn column(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Identifier(id) => Some(ident_name(id)),
        Expr::CompoundIdentifier(ids) => ids.last().map(ident_name),
        _ => None,
    }
}

fn literal(e: &Expr) -> Option<Lit> {
    match strip(e) {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.to_string().parse().ok().map(Lit::Num),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(Lit::Str(s.clone())),
            _ => None,
        },
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => match literal(expr)? {
            Lit::Num(n) => Some(Lit::Num(-n)),
            Lit::Str(_) => None,
        },
        _ => None,
    }
}

fn is_integer_literal(e: &Expr) -> bool {
    match strip(e) {
        Expr::Value(v) => matches!(&v.value, Value::Number(n, _) if !n.to_string().contains(['.', 'e', 'E'])),
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => is_integer_literal(expr),
        _ => false,
    }
}

fn number(e: &Expr, what: &str) -> Result<f64> {
    match literal(e) {
        Some(Lit::Num(n)) if n.is_finite() => Ok(n),
        _ => Err(unsupported(format!("{what} '{e}' (a numeric literal is needed)"))),
    }
}

fn lower_group(e: &Expr) -> Result<GroupExpr> {
    if let Some(c) = column(e) {
        return Ok(GroupExpr::Column(c));
    }
    let bad = || unsupported(format!("grouping expression '{e}' (a column or FLOOR((col + a) / w) * w)"));
    let Expr::BinaryOp { left, op: BinaryOperator::Multiply, right } = strip(e) else {
        return Err(bad());
    };
    let (floor_arg, w_expr) = match (floor_argument(left), floor_argument(right)) {
        (Some(a), None) => (a, right.as_ref()),
        (None, Some(a)) => (a, left.as_ref()),
        _ => return Err(bad()),
    };
    let Expr::BinaryOp { left: num, op: BinaryOperator::Divide, right: div } = strip(floor_arg) else {
        return Err(bad());
    };
    let width = number(w_expr, "bucket width")?;
    if number(div, "bucket width")? != width || width <= 0.0 {
        return Err(unsupported(format!(
            "grouping expression '{e}': FLOOR(x / w) * w needs the same positive w twice"
        )));
    }
    let mut integer_literals = is_integer_literal(w_expr) && is_integer_literal(div);
    let (col, offset) = if let Some(c) = column(num) {
        (c, 0.0)
    } else {
        match strip(num) {
            Expr::BinaryOp { left, op: op @ (BinaryOperator::Plus | BinaryOperator::Minus), right } => {
                let (c, off) = match (column(left), column(right)) {
                    (Some(c), None) => (c, right.as_ref()),
                    (None, Some(c)) if *op == BinaryOperator::Plus => (c, left.as_ref()),
                    _ => return Err(bad()),
                };
                integer_literals &= is_integer_literal(off);
                let a = number(off, "bucket offset")?;
                (c, if *op == BinaryOperator::Minus { -a } else { a })
            }
            _ => return Err(bad()),
        }
    };
    Ok(GroupExpr::Bucket { col, offset, width, integer_literals })
}

fn floor_argument(e: &Expr) -> Option<&Expr> {
    match strip(e) {
        Expr::Floor { expr, field } => {
            let plain = match field {
                datafusion::sql::sqlparser::ast::CeilFloorKind::DateTimeField(f) => {
                    matches!(f, datafusion::sql::sqlparser::ast::DateTimeField::NoDateTime)
                }
                datafusion::sql::sqlparser::ast::CeilFloorKind::Scale(_) => false,
            };
            plain.then_some(expr.as_ref())
        }
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("floor") && f.over.is_none() => {
            match function_args(f).ok()?.as_slice() {
                [Some(a)] => Some(*a),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Plain positional arguments of a call; `None` stands for `*`.
fn function_args(f: &datafusion::sql::sqlparser::ast::Function) -> Result<Vec<Option<&Expr>>> {
    let name = f.name.to_string();
    match &f.args {
        FunctionArguments::None => Ok(vec![]),
        FunctionArguments::Subquery(_) => Err(unsupported("a subquery")),
        FunctionArguments::List(list) => {
            if list.duplicate_treatment.is_some() {
                return Err(unsupported(format!("DISTINCT/ALL inside {name}()")));
            }
            if !list.clauses.is_empty() {
                return Err(unsupported(format!("clauses inside {name}()")));
            }
            list.args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(Some(e)),
                    FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => Ok(None),
                    _ => Err(unsupported(format!("a named or qualified argument of {name}()"))),
                })
                .collect()
        }
    }
}

fn lower_agg(e: &Expr) -> Result<Option<Agg>> {
    let Expr::Function(f) = strip(e) else {
        return Ok(None);
    };
    let name = f.name.to_string().to_ascii_lowercase();
    if f.over.is_some() {
        return Err(unsupported(format!("a window function ({name} ... OVER)")));
    }
    if f.filter.is_some() || f.null_treatment.is_some() || !f.within_group.is_empty() {
        return Err(unsupported(format!("FILTER/WITHIN GROUP on {name}()")));
    }
    let args = function_args(f)?;
    let col = |what: &str| match args.as_slice() {
        [Some(a)] => column(a).ok_or_else(|| unsupported(format!("{what} of an expression ('{a}'); give a column"))),
        _ => Err(unsupported(format!("{what} with other than one column argument"))),
    };
    Ok(Some(match name.as_str() {
        "count" if matches!(args.as_slice(), [None]) => Agg::CountStar,
        "count" => match args.as_slice() {
            [Some(a)] if matches!(literal(a), Some(Lit::Num(_))) => Agg::CountStar,
            _ => Agg::Count(col("COUNT")?),
        },
        "sum" => Agg::Sum(col("SUM")?),
        "avg" | "mean" => Agg::Avg(col("AVG")?),
        "floor" => return Ok(None),
        other => return Err(unsupported(format!("function {other}() in SELECT"))),
    }))
}

fn lower_pred(e: &Expr) -> Result<Pred> {
    match strip(e) {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            Ok(flatten(Pred::And, lower_pred(left)?, lower_pred(right)?))
        }
        Expr::BinaryOp { left, op: BinaryOperator::Or, right } => {
            Ok(flatten(Pred::Or, lower_pred(left)?, lower_pred(right)?))
        }
        Expr::UnaryOp { op: UnaryOperator::Not, expr } => Ok(Pred::Not(Box::new(lower_pred(expr)?))),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Eq => CmpOp::Eq,
                BinaryOperator::NotEq => CmpOp::NotEq,
                BinaryOperator::Lt => CmpOp::Lt,
                BinaryOperator::LtEq => CmpOp::LtEq,
                BinaryOperator::Gt => CmpOp::Gt,
                BinaryOperator::GtEq => CmpOp::GtEq,
                other => return Err(unsupported(format!("operator {other} in WHERE"))),
            };
            match (column(left), literal(right), column(right), literal(left)) {
                (Some(col), Some(lit), _, _) => Ok(Pred::Cmp { col, op, lit }),
                (_, _, Some(col), Some(lit)) => Ok(Pred::Cmp { col, op: op.flip(), lit }),
                _ => Err(unsupported(format!("comparison '{e}' (column against a literal is needed)"))),
            }
        }
        Expr::InList { expr, list, negated } => {
            let col = column(expr).ok_or_else(|| unsupported(format!("IN on an expression ('{expr}')")))?;
            let list = list
                .iter()
                .map(|x| literal(x).ok_or_else(|| unsupported(format!("IN list item '{x}' (literals only)"))))
                .collect::<Result<_>>()?;
            Ok(Pred::In { col, list, negated: *negated })
        }
        Expr::Between { expr, negated, low, high } => {
            let col = column(expr).ok_or_else(|| unsupported(format!("BETWEEN on an expression ('{expr}')")))?;
            let lit = |x: &Expr| literal(x).ok_or_else(|| unsupported(format!("BETWEEN bound '{x}' (literals only)")));
            Ok(Pred::Between { col, lo: lit(low)?, hi: lit(high)?, negated: *negated })
        }
        Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("array_has") && f.over.is_none() => {
            match function_args(f)?.as_slice() {
                [Some(c), Some(x)] => match (column(c), literal(x)) {
                    (Some(col), Some(Lit::Str(code))) => Ok(Pred::Has { col, code }),
                    _ => Err(unsupported("array_has arguments (a column and a string literal are needed)")),
                },
                _ => Err(unsupported("array_has with other than two arguments")),
            }
        }
        Expr::Function(f) if f.over.is_some() => Err(unsupported("a window function")),
        Expr::Function(f) => Err(unsupported(format!("function {}() in WHERE", f.name))),
        Expr::Subquery(_) | Expr::InSubquery { .. } | Expr::Exists { .. } => Err(unsupported("a subquery")),
        Expr::Like { .. } | Expr::ILike { .. } => Err(unsupported("LIKE")),
        Expr::IsNull(_) | Expr::IsNotNull(_) => Err(unsupported("IS [NOT] NULL")),
        other => Err(unsupported(format!("WHERE expression '{other}'"))),
    }
}

fn flatten(make: fn(Vec<Pred>) -> Pred, a: Pred, b: Pred) -> Pred {
    let mut out = Vec::new();
    for p in [a, b] {
        match (make(vec![]), p) {
            (Pred::And(_), Pred::And(v)) | (Pred::Or(_), Pred::Or(v)) => out.extend(v),
            (_, p) => out.push(p),
        }
    }
    make(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q1_shape() {
        let q = parse_query(include_str!("../../sql/q1.sql")).unwrap();
        assert_eq!(
            q.groups,
            vec![GroupExpr::Bucket { col: "age".into(), offset: 0.0, width: 5.0, integer_literals: true }]
        );
        assert_eq!(q.agg, Agg::CountStar);
        assert_eq!(q.columns(), vec!["sex", "surgery", "disease", "age"]);
        assert!(q.original_sql("nps").starts_with("SELECT FLOOR(age / 5) * 5 AS __g0, COUNT(*) AS __v FROM \"nps\""));
    }

    #[test]
    fn ten_year_bucket_and_avg() {
        let q = parse_query(include_str!("../../sql/q3_10y.sql")).unwrap();
        assert_eq!(
            q.groups[0],
            GroupExpr::Bucket { col: "age".into(), offset: 5.0, width: 10.0, integer_literals: true }
        );
        assert_eq!(q.agg, Agg::Avg("length_of_stay".into()));
    }

    #[test]
    fn unsupported_constructs_are_named() {
        for (sql, name) in [
            ("SELECT COUNT(*) FROM a JOIN b ON a.x = b.x", "JOIN"),
            ("SELECT sex, COUNT(*) FROM t GROUP BY sex HAVING COUNT(*) > 1", "HAVING"),
            ("SELECT COUNT(*) OVER () FROM t", "window"),
            ("SELECT COUNT(*) FROM t WHERE age IN (SELECT age FROM u)", "subquery"),
            ("SELECT COUNT(*) FROM t LIMIT 3", "LIMIT"),
            ("SELECT MAX(age) FROM t", "max"),
            ("SELECT COUNT(*) FROM t WHERE name LIKE 'a%'", "LIKE"),
        ] {
            let e = parse_query(sql).unwrap_err().to_string();
            assert!(e.contains(name), "{sql}: {e}");
        }
    }
}
