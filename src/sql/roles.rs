//! `declare_roles(table, 'col=role, ...' [, 'reset'])`: declare which columns are
//! identifiers, quasi-identifiers, sensitive, insensitive or set-valued. A call merges with the
//! table's earlier declaration: the columns it names get their new role, the others keep
//! theirs (insensitive if never declared), so declaring one more column never silently resets
//! the rest. `'reset'` replaces the whole declaration instead (unnamed columns insensitive).
//! Returns the table's declarations; `anon_roles` lists every table's.

use super::args::Args;
use super::glue::session_context;
use crate::error::{AnonError, Result};
use crate::meta::Role;
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const SIGNATURE: &str = "declare_roles(table, 'column=role, ...' [, 'reset']) with roles identifier, qi, \
                                     sensitive, insensitive, set_valued";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, "declare_roles", declare_roles);
}

/// Parse `col=role, col=role` against the table's columns: the columns named, with their roles.
pub(crate) fn parse_roles(table: &str, spec: &str, columns: &[(String, DataType)]) -> Result<Vec<(String, Role)>> {
    let mut declared: Vec<(String, Role)> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (col, role) = part.split_once('=').ok_or_else(|| {
            AnonError::argument(
                "declare_roles",
                "roles",
                format!("'{part}' is not of the form column=role (usage: {SIGNATURE})"),
            )
        })?;
        let (col, role_name) = (col.trim().trim_matches('"'), role.trim());
        let role = Role::parse(role_name).ok_or_else(|| {
            AnonError::argument(
                "declare_roles",
                "roles",
                format!("unknown role '{role_name}' for column '{col}' (usage: {SIGNATURE})"),
            )
        })?;
        let Some((_, ty)) = columns.iter().find(|(c, _)| c == col) else {
            let names: Vec<&str> = columns.iter().map(|c| c.0.as_str()).collect();
            return Err(AnonError::column(
                table,
                col,
                format!("is not a column of the table (columns: {})", names.join(", ")),
            ));
        };
        if declared.iter().any(|(c, _)| c == col) {
            return Err(AnonError::column(table, col, "is declared twice"));
        }
        if role == Role::SetValued
            && !matches!(
                ty,
                DataType::List(_) | DataType::LargeList(_) | DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
            )
        {
            return Err(AnonError::column(
                table,
                col,
                format!("is {ty}, but a set-valued column must be a list of codes or a delimited string"),
            ));
        }
        declared.push((col.to_string(), role));
    }
    if declared.is_empty() {
        return Err(AnonError::argument("declare_roles", "roles", format!("no roles given (usage: {SIGNATURE})")));
    }
    Ok(declared)
}

/// Every column with a role, in table order: the one just declared, else the one `earlier`
/// gave it, else insensitive.
pub(crate) fn merge_roles(
    columns: &[(String, DataType)],
    declared: &[(String, Role)],
    earlier: &[(String, Role)],
) -> Vec<(String, Role)> {
    let find = |list: &[(String, Role)], c: &str| list.iter().find(|(d, _)| d == c).map(|d| d.1);
    columns
        .iter()
        .map(|(c, _)| (c.clone(), find(declared, c).or_else(|| find(earlier, c)).unwrap_or(Role::Insensitive)))
        .collect()
}

fn declare_roles(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("declare_roles", SIGNATURE, args.exprs(), 2, 3)?;
    let table = a.str(0, "table")?;
    let spec = a.str(1, "roles")?;
    let reset = match a.opt_str(2, "mode")?.map(|m| m.trim().to_ascii_lowercase()) {
        None => false,
        Some(m) if m == "reset" => true,
        Some(m) if m == "merge" => false,
        Some(m) => {
            return Err(AnonError::argument(
                "declare_roles",
                "mode",
                format!("unknown mode '{m}': 'merge' (the default) or 'reset'"),
            )
            .into());
        }
    };
    let ctx = session_context(&args)?;
    if super::system::is_system_view(&ctx, &table) {
        return Err(AnonError::table(
            &table,
            "is a system view (the catalog, not records): roles are declared on data tables",
        )
        .into());
    }
    let columns = table_columns(&ctx, &table)?;
    let declared = parse_roles(&table, &spec, &columns)?;
    let earlier = if reset { Vec::new() } else { registry.get(&table).map(|m| m.roles.clone()).unwrap_or_default() };
    registry.set_roles(&table, merge_roles(&columns, &declared, &earlier));
    Ok(roles_table(registry, &table, &columns)?)
}

/// Columns and types of a registered table, or an error naming it.
pub(crate) fn table_columns(ctx: &SessionContext, table: &str) -> Result<Vec<(String, DataType)>> {
    let df = block_on(ctx.table(table)).map_err(|_| AnonError::table(table, "not found"))?;
    Ok(df.schema().fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect())
}

fn roles_table(registry: &Registry, table: &str, columns: &[(String, DataType)]) -> Result<Arc<dyn TableProvider>> {
    let meta = registry.require(table)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("column_name", DataType::Utf8, false),
        Field::new("data_type", DataType::Utf8, false),
        Field::new("role", DataType::Utf8, false),
        Field::new("hierarchy", DataType::Utf8, true),
    ]));
    let names: Vec<&str> = meta.roles.iter().map(|(c, _)| c.as_str()).collect();
    let types: Vec<String> = meta
        .roles
        .iter()
        .map(|(c, _)| columns.iter().find(|(n, _)| n == c).map(|(_, t)| t.to_string()).unwrap_or_default())
        .collect();
    let roles: Vec<&str> = meta.roles.iter().map(|(_, r)| r.name()).collect();
    let hier: Vec<Option<String>> = meta
        .roles
        .iter()
        .map(|(c, _)| meta.hierarchies.get(c).map(|h| format!("{} (height {})", h.kind().name(), h.height())))
        .collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(names)),
        Arc::new(StringArray::from(types)),
        Arc::new(StringArray::from(roles)),
        Arc::new(StringArray::from(hier)),
    ];
    super::glue::mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
