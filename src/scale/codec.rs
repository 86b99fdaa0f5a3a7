//! Ship in-memory tables inside serialized plans.
//!
//! Every table function returns, and registers, `MemTable`s, and the materialization plan
//! joins small in-memory lookup tables; DataFusion's protobuf codec serializes neither, so a
//! Ballista client could not send a plan that reads them. This codec writes a `MemTable`'s
//! partitions as Arrow IPC streams into the plan and rebuilds the table on the other side;
//! every other provider (Parquet, CSV, views) goes to Ballista's own codec unchanged.

use ballista_core::serde::BallistaLogicalExtensionCodec;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::ipc::reader::StreamReader;
use datafusion::arrow::ipc::writer::StreamWriter;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::MemTable;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use std::sync::Arc;

/// Marks our encoding, so a buffer from Ballista's codec is never mistaken for one.
const MAGIC: &[u8; 8] = b"AFMEMT01";

/// Ballista's logical codec plus `MemTable`s.
#[derive(Debug, Default)]
pub struct MemTableCodec {
    inner: BallistaLogicalExtensionCodec,
}

fn encode(table: &MemTable, buf: &mut Vec<u8>) -> Result<()> {
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(table.batches.len() as u32).to_le_bytes());
    for part in &table.batches {
        // A write in progress (INSERT INTO the table) holds the lock; the plan would race it.
        let batches = part
            .try_read()
            .map_err(|_| DataFusionError::Execution("an in-memory table is being written while shipped".into()))?;
        let mut bytes = Vec::new();
        {
            let mut w = StreamWriter::try_new(&mut bytes, &table.schema())?;
            for b in batches.iter() {
                w.write(b)?;
            }
            w.finish()?;
        }
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(&bytes);
    }
    Ok(())
}

fn decode(mut buf: &[u8], schema: SchemaRef) -> Result<MemTable> {
    let bad = || DataFusionError::Internal("truncated in-memory table in a shipped plan".into());
    let mut take = |n: usize| -> Result<&[u8]> {
        if buf.len() < n {
            return Err(bad());
        }
        let (head, rest) = buf.split_at(n);
        buf = rest;
        Ok(head)
    };
    take(MAGIC.len())?;
    let parts = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?) as usize;
    let mut partitions = Vec::with_capacity(parts);
    for _ in 0..parts {
        let len = u64::from_le_bytes(take(8)?.try_into().map_err(|_| bad())?) as usize;
        let reader = StreamReader::try_new(take(len)?, None)?;
        let batches = reader.collect::<std::result::Result<Vec<RecordBatch>, _>>()?;
        // The scan's schema is authoritative (field metadata may differ from the IPC copy).
        let batches =
            batches.into_iter().map(|b| b.with_schema(schema.clone())).collect::<std::result::Result<Vec<_>, _>>()?;
        partitions.push(batches);
    }
    if partitions.is_empty() {
        partitions.push(Vec::new());
    }
    MemTable::try_new(schema, partitions)
}

impl LogicalExtensionCodec for MemTableCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        if buf.starts_with(MAGIC) {
            Ok(Arc::new(decode(buf, schema)?))
        } else {
            self.inner.try_decode_table_provider(buf, table_ref, schema, ctx)
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.downcast_ref::<MemTable>() {
            Some(mem) => encode(mem, buf),
            None => self.inner.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }
}
