//! `lattice_nodes(table)`: every node of the table's generalization lattice with its
//! equivalence classes summarized (count, smallest class, largest generalization degree).
//! It is the lattice a method searches, laid out for the custodian to look at: the smallest
//! class is the k the node achieves without suppression.

use super::args::Args;
use super::glue::session_context;
use crate::encode::{class_degrees, for_each_node, frequency_table};
use crate::error::Result;
use crate::lattice::{Lattice, format_levels};
use crate::session::Registry;
use crate::session::runtime::block_on;
use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::{TableFunctionArgs, TableProvider};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

pub(super) const SIGNATURE: &str = "lattice_nodes(table)";

pub(crate) fn register(ctx: &SessionContext, registry: Arc<Registry>) {
    super::glue::register_fn(ctx, &registry, "lattice_nodes", lattice_nodes);
}

fn lattice_nodes(registry: &Registry, args: TableFunctionArgs) -> datafusion::error::Result<Arc<dyn TableProvider>> {
    let a = Args::new("lattice_nodes", SIGNATURE, args.exprs(), 1, 1)?;
    let table = a.str(0, "table")?;
    let meta = registry.require(&table)?;
    meta.check_complete(&table)?;
    let ctx = session_context(&args)?;
    let ft = block_on(frequency_table(&ctx, &table, &meta, None))?;
    Ok(summarize(&ft)?)
}

fn summarize(ft: &crate::encode::FrequencyTable) -> Result<Arc<dyn TableProvider>> {
    let lattice = Lattice::new(&ft.heights());
    let hs = ft.hierarchies();
    let total = ft.total() as f64;
    let n = lattice.size();
    let (mut node, mut height, mut classes, mut min_size, mut max_deg, mut mean_deg) =
        (vec![String::new(); n], vec![0i64; n], vec![0i64; n], vec![0i64; n], vec![0f64; n], vec![0f64; n]);
    for_each_node(ft, &lattice, |id, g| {
        let d = class_degrees(&hs, g);
        node[id] = format_levels(&g.levels);
        height[id] = lattice.height(id) as i64;
        classes[id] = g.len() as i64;
        min_size[id] = g.sizes.iter().copied().min().unwrap_or(0) as i64;
        max_deg[id] = d.iter().copied().fold(0.0, f64::max);
        mean_deg[id] = d.iter().zip(&g.sizes).map(|(d, &s)| d * s as f64).sum::<f64>() / total.max(1.0);
        Ok(())
    })?;
    let mut fields = vec![
        Field::new("node_id", DataType::Int64, false),
        Field::new("node", DataType::Utf8, false),
        Field::new("height", DataType::Int64, false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from((0..n as i64).collect::<Vec<_>>())),
        Arc::new(StringArray::from(node)),
        Arc::new(Int64Array::from(height)),
    ];
    for (a, q) in ft.qis.iter().enumerate() {
        fields.push(Field::new(format!("level_{}", q.name), DataType::Int64, false));
        cols.push(Arc::new(Int64Array::from((0..n).map(|id| lattice.level(id, a) as i64).collect::<Vec<_>>())));
    }
    fields.extend([
        Field::new("classes", DataType::Int64, false),
        Field::new("min_class_size", DataType::Int64, false),
        Field::new("max_degree", DataType::Float64, false),
        Field::new("mean_degree", DataType::Float64, false),
    ]);
    cols.extend([
        Arc::new(Int64Array::from(classes)) as ArrayRef,
        Arc::new(Int64Array::from(min_size)),
        Arc::new(Float64Array::from(max_deg)),
        Arc::new(Float64Array::from(mean_deg)),
    ]);
    let schema = Arc::new(Schema::new(fields));
    super::glue::mem_table(schema.clone(), vec![RecordBatch::try_new(schema, cols)?])
}
