//! Plain `EXPLAIN` (and `DESCRIBE` of a query) has no effect, like PostgreSQL's: it plans the
//! statement and shows the plan. Our table functions run at planning time, so without care
//! `EXPLAIN SELECT * FROM ipa_release(...)` would publish a release and charge the privacy
//! budget. [`run`], the session's SQL entry point, parses the statement first and plans a
//! plan-only one inside a scope the side-effect functions check ([`refuse_when_planning_only`]);
//! `EXPLAIN ANALYZE` executes the statement and so runs them, as PostgreSQL does.
//!
//! DataFusion's own `SessionContext::sql` offers no hook before table functions are called, so
//! statements sent to it directly are not covered: embedders run SQL through [`run`].

use crate::error::{AnonError, Result};
use crate::session::outputs::Journal;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{DescribeAlias, Statement};

tokio::task_local! {
    /// Set while a plan-only statement is planned.
    static PLANNING_ONLY: ();
}

/// Run one SQL statement on `ctx` as `ctx.sql` does, except that a plan-only statement (plain
/// `EXPLAIN`, `DESCRIBE <query>`) cannot run a function with side effects.
///
/// A statement that fails while it is planned (a table function ran, then a column is not
/// found, or `CREATE TABLE t AS ...` finds `t`) leaves the catalog as it was: the outputs its
/// table functions registered are unregistered and the names' earlier tables put back
/// ([`Journal::atomic`]), except a differentially private release, whose charge stands. An
/// error while the planned statement's rows are read comes after this and keeps the outputs.
pub async fn run(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<DataFrame> {
    if analyzes_a_copy(ctx, sql) {
        return Err(AnonError::argument(
            "EXPLAIN ANALYZE",
            "statement",
            "a COPY is not run under EXPLAIN ANALYZE: DataFusion would write its files without the checks of a \
             plain COPY (never over a table's files, nothing left by a failed write); run the COPY itself",
        )
        .into());
    }
    let planned =
        async { if plan_only(ctx, sql) { PLANNING_ONLY.scope((), ctx.sql(sql)).await } else { ctx.sql(sql).await } };
    Journal::atomic(ctx, planned).await
}

/// Is `sql` an `EXPLAIN ANALYZE COPY ...`? DataFusion plans the COPY inside it with its own
/// planner, not the session's (`super::copy`), so its writes would skip the COPY's checks.
fn analyzes_a_copy(ctx: &SessionContext, sql: &str) -> bool {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    match state.sql_to_statement(sql, &dialect) {
        Ok(DFStatement::Explain(e)) => e.options.analyze && matches!(*e.statement, DFStatement::CopyTo(_)),
        _ => false,
    }
}

/// Is `sql` a statement that is only planned, never executed? A statement that does not parse
/// is not: `ctx.sql` reports the parse error itself.
fn plan_only(ctx: &SessionContext, sql: &str) -> bool {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    match state.sql_to_statement(sql, &dialect) {
        Ok(DFStatement::Explain(e)) => !e.options.analyze,
        Ok(DFStatement::Statement(s)) => match *s {
            Statement::Explain { analyze, describe_alias, .. } => {
                !analyze || matches!(describe_alias, DescribeAlias::Describe | DescribeAlias::Desc)
            }
            Statement::ExplainTable { .. } => true,
            _ => false,
        },
        _ => false,
    }
}

/// An error if the statement being planned is plan-only: `function` would publish outputs,
/// change declarations or charge a budget.
pub(crate) fn refuse_when_planning_only(function: &str) -> Result<()> {
    if PLANNING_ONLY.try_with(|_| ()).is_err() {
        return Ok(());
    }
    Err(AnonError::argument(
        function,
        "statement",
        format!(
            "EXPLAIN without ANALYZE has no effect, and {function} has effects (it registers tables and a \
             differentially private method charges the privacy budget), so it is not run; EXPLAIN ANALYZE runs \
             it, or run it first and EXPLAIN a query on its output"
        ),
    ))
}
