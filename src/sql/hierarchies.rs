//! Hierarchy functions:
//! - `load_hierarchy(table, column, path [, kind])`: an ARX-format file;
//! - `hierarchy_from_table(table, column, hierarchy_table [, kind])`: a table of the same shape;
//! - `interval_hierarchy(table, column, widths [, min, max])`: numeric bands, e.g. `'5,10,20,*'`;
//! - `hierarchy(table, column)`: the hierarchy in ARX shape (one row per leaf);
//! - `hierarchy_nodes(table, column)`: one row per node with its leaf count, bounds and degree.
//!
//! Loading validates the hierarchy and its coverage of the column's values before anything is
//! registered, so a failing call leaves the declarations as they were.

use super::roles::table_columns;
use super::{Args, block_on, session_context};
use crate::encode::{check_coverage, format_number};
use crate::error::{AnonError, Result};
use crate::hierarchy::{self, Hierarchy, HierarchyKind, load_arx_file, parse_widths, widths_hierarchy};
use crate::meta::{Registry, Role};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::functions_aggregate::expr_fn::{max, min};
use datafusion::prelude::{SessionContext, ident};
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
enum Op {
    LoadFile,
    FromTable,
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

pub(super) const LOAD_SIG: &str = "load_hierarchy(table, column, path [, kind])";
pub(super) const FROM_TABLE_SIG: &str = "hierarchy_from_table(table, column, hierarchy_table [, kind])";
pub(super) const INTERVALS_SIG: &str = "interval_hierarchy(table, column, 'w1,w2,...,*' [, min, max])";
pub(super) const SHOW_SIG: &str = "hierarchy(table, column)";
pub(super) const NODES_SIG: &str = "hierarchy_nodes(table, column)";

pub fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    for (name, op) in [
        ("load_hierarchy", Op::LoadFile),
        ("hierarchy_from_table", Op::FromTable),
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
                let a = Args::new("load_hierarchy", LOAD_SIG, e, 3, 4)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
                let kind = self.kind(&ctx, &a, 3, &table, &column)?;
                let h = load_arx_file(&a.str(2, "path")?, &column, kind)?;
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
                if source.eq_ignore_ascii_case(&table) {
                    h = h.derived_from(&format!("its rows were read from table '{table}' itself"));
                }
                self.install(&ctx, &table, &column, h)?
            }
            Op::Intervals => {
                let a = Args::new("interval_hierarchy", INTERVALS_SIG, e, 3, 5)?;
                let (table, column) = (a.str(0, "table")?, a.str(1, "column")?);
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
                    h = h.derived_from(
                        "its min or max was taken from the data (interval_hierarchy without both bounds)",
                    );
                }
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
        let columns = table_columns(ctx, table)?;
        let ty = columns
            .iter()
            .find(|(c, _)| c == column)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| AnonError::column(table, column, "is not a column of the table"))?;
        if let Some(k) = a.opt_str(i, "kind")? {
            return HierarchyKind::parse(&k).ok_or_else(|| {
                AnonError::argument(a.function(), "kind", format!("unknown kind '{k}' (categorical, numeric, codes)"))
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
        let values = distinct_values(ctx, table, column, h.kind())?;
        check_coverage(table, column, &h, &values)?;
        let h = Arc::new(h);
        self.registry.set_hierarchy(table, column, h.clone());
        Ok(h)
    }
}

/// Distinct values of a column; a set-valued column's codes are unnested (lists) or split on
/// `,;|` and whitespace (delimited strings).
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
            _ if kind == HierarchyKind::Codes => {
                let s = cast(col, &DataType::Utf8)?;
                let codes: Vec<&str> = s
                    .as_string::<i32>()
                    .iter()
                    .flatten()
                    .flat_map(|v| v.split([',', ';', '|', ' ', '\t']).filter(|c| !c.is_empty()))
                    .collect();
                out.push(Arc::new(StringArray::from(codes)) as ArrayRef);
            }
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
    let v = |i: usize| -> Option<i64> {
        let c = cast(b.first()?.column(i), &DataType::Int64).ok()?;
        let c = c.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        (!c.is_null(0)).then(|| c.value(0))
    };
    match (v(0), v(1)) {
        (Some(lo), Some(hi)) => Ok((lo, hi)),
        _ => Err(AnonError::column(table, column, "has no values to take min and max from")),
    }
}

/// One row per leaf: its label at every level (`level_0` … `level_h`).
fn arx_table(h: &Hierarchy) -> Result<Arc<dyn TableProvider>> {
    let depth = h.height() + 1;
    let fields: Vec<Field> = (0..depth).map(|j| Field::new(format!("level_{j}"), DataType::Utf8, false)).collect();
    let schema = Arc::new(Schema::new(fields));
    let rows = h.arx_rows();
    let cols: Vec<ArrayRef> = (0..depth)
        .map(|j| Arc::new(StringArray::from(rows.iter().map(|r| r[j]).collect::<Vec<_>>())) as ArrayRef)
        .collect();
    super::mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}

/// One row per node: level, label, parent label, leaves under it, bounds, degree (Eqs. 1–2).
fn nodes_table(h: &Hierarchy) -> Result<Arc<dyn TableProvider>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("level", DataType::Int64, false),
        Field::new("label", DataType::Utf8, false),
        Field::new("parent", DataType::Utf8, true),
        Field::new("leaves", DataType::Int64, false),
        Field::new("lo", DataType::Float64, true),
        Field::new("hi", DataType::Float64, true),
        Field::new("degree", DataType::Float64, false),
    ]));
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
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(lv)),
        Arc::new(StringArray::from(lab)),
        Arc::new(StringArray::from(par)),
        Arc::new(Int64Array::from(leaves)),
        Arc::new(Float64Array::from(lo)),
        Arc::new(Float64Array::from(hi)),
        Arc::new(Float64Array::from(deg)),
    ];
    super::mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
