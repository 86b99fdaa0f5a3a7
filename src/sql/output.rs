//! Where a method's release goes: into client memory (the default), or, when the session
//! carries a [`ParquetOutput`], into Parquet files written by the plan's own executors and
//! registered as a listing table.
//!
//! On a Ballista cluster the second option is what keeps the client's memory proportional to
//! the frequency table: the materialization plan runs on the executors and its rows go to
//! storage, never through the client; queries on the release then read the files on the
//! executors too. A local session can use it as well (a release larger than memory).

use crate::error::{AnonError, Result};
use datafusion::arrow::array::{
    Array, ArrayData, ArrayRef, BooleanArray, DictionaryArray, downcast_dictionary_array, make_array,
};
use datafusion::arrow::datatypes::{ArrowDictionaryKeyType, ArrowNativeType, DataType, FieldRef, Schema, SchemaRef};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::catalog::TableProvider;
use datafusion::dataframe::DataFrameWriteOptions;
use datafusion::datasource::MemTable;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Session option (a `SessionConfig` extension): write releases and catalogs as Parquet under
/// `dir`, one fresh subdirectory per table and call. On a cluster, `dir` must be storage that
/// the executors (which write) and the scheduler (which lists the files) share with the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetOutput {
    dir: PathBuf,
}

impl ParquetOutput {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ParquetOutput { dir: dir.into() }
    }

    /// `<temp dir>/anonfusion-<pid>`: the default when none is given. Old releases stay there
    /// until the directory is removed (the engine never deletes files a plan may still read).
    pub fn temp() -> Self {
        ParquetOutput::new(std::env::temp_dir().join(format!("anonfusion-{}", std::process::id())))
    }

    /// `config` with this option set.
    pub fn apply(self, config: SessionConfig) -> SessionConfig {
        config.with_extension(Arc::new(self))
    }

    /// The option of `ctx`'s session, if set.
    pub(crate) fn of(ctx: &SessionContext) -> Option<Arc<ParquetOutput>> {
        ctx.state().config().get_extension::<ParquetOutput>()
    }
}

/// Distinguishes directories written within one process in the same millisecond.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// A directory for one table that no earlier call used: `<dir>/<name>-<millis>-<n>`, so a
/// replaced release's files stay intact for plans that still read them.
fn fresh_dir(out: &ParquetOutput, name: &str) -> PathBuf {
    let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    out.dir.join(format!("{name}-{millis}-{}-{n}", std::process::id()))
}

/// Run `df` and return the table it produced, to be registered as `name` by the caller: in
/// memory, or with [`ParquetOutput`] as Parquet files under a fresh directory. Nothing is
/// registered here; on error a partly written directory is removed.
pub(crate) async fn publish(ctx: &SessionContext, name: &str, df: DataFrame) -> Result<Arc<dyn TableProvider>> {
    match ParquetOutput::of(ctx) {
        None => {
            let schema = df.schema().inner().clone();
            let parts = df.collect_partitioned().await?;
            Ok(Arc::new(MemTable::try_new(schema, parts)?))
        }
        Some(out) => {
            let dir = fresh_dir(&out, name);
            // Rows in random order, drawn where the plan runs: the in-memory path is permuted by
            // the table-function adapter instead (encode::shuffle_rows), so no release keeps
            // its source's row order.
            let df = df.sort(vec![datafusion::functions::math::expr_fn::random().sort(true, true)])?;
            let partial = partial_dir(&dir);
            let written = write_files(df, &partial).await;
            let schema = moved_into_place(&partial, &dir, written)?;
            listing_table(&dir_url(&dir)?, schema)
        }
    }
}

/// Where a fresh directory is written before it is complete: `<dir>.partial`, renamed to
/// `<dir>` only once every file is written, so a failed, cancelled or killed write never leaves
/// a directory that looks like a release.
fn partial_dir(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// `written` (into `partial`), having renamed `partial` to `dir` on success or removed it on
/// error.
fn moved_into_place<T>(partial: &Path, dir: &Path, written: Result<T>) -> Result<T> {
    let written = removed_on_error(partial, written)?;
    if let Err(e) = std::fs::rename(partial, dir) {
        let _ = std::fs::remove_dir_all(partial);
        return Err(AnonError::io(&dir.display().to_string(), e));
    }
    Ok(written)
}

/// `result`, having removed `dir` if it is an error, so a failed write leaves no partial files.
fn removed_on_error<T>(dir: &Path, result: Result<T>) -> Result<T> {
    if result.is_err() {
        // Best effort: the error that matters is the write's.
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

/// The listing URL of a directory of Parquet files. The trailing separator makes DataFusion
/// write a directory of files (one per partition) rather than a single file named after it.
fn dir_url(dir: &Path) -> Result<String> {
    let shown = dir.display().to_string();
    Ok(format!("{}/", dir.to_str().ok_or_else(|| AnonError::io(&shown, "is not valid UTF-8"))?))
}

/// Run `df`, writing its rows as Parquet files into `dir` (created if missing), and return a
/// listing table over them. Where the plan runs, the files are written: on a cluster, by the
/// executors. Only the Ballista scale-out writes directories it names itself.
#[cfg(feature = "ballista")]
pub(crate) async fn write_dir(df: DataFrame, dir: &Path) -> Result<Arc<dyn TableProvider>> {
    let schema = write_files(df, dir).await?;
    listing_table(&dir_url(dir)?, schema)
}

/// Run `df`, writing its rows as Parquet files into `dir` (created if missing); returns the
/// schema written.
///
/// The files embed the plan's Arrow schema without any metadata: a plan over the source carries
/// the source's schema and field metadata (a pandas frame's column list, say), and a written
/// release is published ([`published_schema`]; no release written by a plan has labels).
async fn write_files(df: DataFrame, dir: &Path) -> Result<SchemaRef> {
    let schema = Arc::new(published_schema(df.schema().inner(), Labels::NONE));
    let shown = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|e| AnonError::io(&shown, e))?;
    let config = df.task_ctx().session_config().options().clone();
    let mut parquet = datafusion::config::TableOptions::default_from_session_config(&config).parquet;
    parquet = parquet.with_skip_arrow_metadata(true);
    parquet.arrow_schema(&schema);
    df.write_parquet(&dir_url(dir)?, DataFrameWriteOptions::new(), Some(parquet)).await?;
    Ok(schema)
}

/// A Parquet listing table over the files under `url` with `schema` (the written plan's, so
/// types, nullability and field metadata are the in-memory release's).
pub fn listing_table(url: &str, schema: SchemaRef) -> Result<Arc<dyn TableProvider>> {
    let options = ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
    let config =
        ListingTableConfig::new(ListingTableUrl::parse(url)?).with_listing_options(options).with_schema(schema);
    Ok(Arc::new(ListingTable::try_new(config)?))
}

/// What a published table may say about itself in its metadata (see [`published_schema`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Labels {
    /// The DP guarantee labels ([`GUARANTEE_LABELS`]): only on the release of a call that
    /// charged the privacy ledger, so no other release passes on a label it did not earn.
    pub(crate) guarantee: bool,
    /// The catalog's sensitive-column key on its fields (truthful_view reads it).
    pub(crate) sensitive_column: bool,
}

impl Labels {
    pub(crate) const NONE: Labels = Labels { guarantee: false, sensitive_column: false };
}

/// The schema-level keys of a DP release's guarantee (written by the IPA release).
pub(crate) const GUARANTEE_LABELS: [&str; 3] =
    [crate::methods::ipa::guarantee::METADATA_KEY, "anonfusion.epsilon", "anonfusion.delta"];

/// The one rule on metadata: a published table (a release or a side table, in memory or
/// written) carries only the metadata the engine defines for what it holds: the labels `may`
/// allows, nothing else. A plan over the source carries the source's schema metadata and its
/// columns' field metadata (a pandas frame's `pandas` key lists every original column and
/// dtype, dropped identifiers included); none of it is published, nor the metadata of a nested
/// column's inner fields (a column kept as it is, a list's items, a struct's fields), which is
/// part of the column's type ([`bare_type`]).
pub(crate) fn published_schema(schema: &Schema, may: Labels) -> Schema {
    let keep = |metadata: &HashMap<String, String>, allowed: &[&str]| -> HashMap<String, String> {
        metadata.iter().filter(|(k, _)| allowed.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    let schema_keys: &[&str] = if may.guarantee { &GUARANTEE_LABELS } else { &[] };
    let field_keys: &[&str] =
        if may.sensitive_column { &[crate::methods::hceil::release::SENSITIVE_COLUMN_KEY] } else { &[] };
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| {
            f.as_ref().clone().with_data_type(bare_type(f.data_type())).with_metadata(keep(f.metadata(), field_keys))
        })
        .collect();
    Schema::new_with_metadata(fields, keep(schema.metadata(), schema_keys))
}

/// `ty` with no metadata on any field inside it (a list's item, a struct's or a map's fields).
fn bare_type(ty: &DataType) -> DataType {
    let bare = |f: &FieldRef| -> FieldRef {
        Arc::new(f.as_ref().clone().with_data_type(bare_type(f.data_type())).with_metadata(HashMap::new()))
    };
    match ty {
        DataType::List(f) => DataType::List(bare(f)),
        DataType::LargeList(f) => DataType::LargeList(bare(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(bare(f), *n),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(bare).collect()),
        DataType::Map(f, sorted) => DataType::Map(bare(f), *sorted),
        other => other.clone(),
    }
}

/// A column as published under `ty` (its [`bare_type`]): every dictionary in it, at the top or
/// nested, holds only the values its keys use. A release built from a dictionary of all the
/// source's labels (hceil's classes, suppressed ones included; the sensitive column's domain
/// read from the source) would otherwise carry values no published row shows, a suppressed
/// record's exact age or diagnosis among them, to any reader of the Arrow data (a pandas
/// categorical, an Arrow IPC file).
fn published_column(column: &ArrayRef, ty: &DataType) -> Result<ArrayRef> {
    let nested = matches!(
        ty,
        DataType::Dictionary(..)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Struct(_)
            | DataType::Map(..)
    );
    if !nested {
        return Ok(column.clone());
    }
    Ok(make_array(published_data(column.to_data(), ty)?))
}

/// [`published_column`] on the array's data, recursively: the children rebuilt under their bare
/// types, each dictionary garbage-collected.
fn published_data(data: ArrayData, ty: &DataType) -> Result<ArrayData> {
    if let DataType::Dictionary(..) = data.data_type() {
        let array = make_array(data);
        let array = array.as_ref();
        return downcast_dictionary_array!(
            array => Ok(used_values_only(array)?.to_data()),
            _ => unreachable!("a dictionary type is a dictionary array")
        );
    }
    let child_types: Vec<&DataType> = match ty {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![f.data_type()]
        }
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type()).collect(),
        _ => return Ok(data),
    };
    let children = data
        .child_data()
        .iter()
        .zip(child_types)
        .map(|(child, t)| published_data(child.clone(), t))
        .collect::<Result<Vec<_>>>()?;
    Ok(data.into_builder().data_type(ty.clone()).child_data(children).build()?)
}

/// `dictionary` with only the values some (non-null) key uses, the keys renumbered; the array
/// itself when every value is used.
fn used_values_only<K: ArrowDictionaryKeyType>(dictionary: &DictionaryArray<K>) -> Result<DictionaryArray<K>> {
    let used = dictionary.occupancy();
    if used.count_set_bits() == dictionary.values().len() {
        return Ok(dictionary.clone());
    }
    let mut renumbered = vec![K::Native::default(); dictionary.values().len()];
    for (new, old) in used.set_indices().enumerate() {
        renumbered[old] = K::Native::from_usize(new).expect("fewer values than before fit the key type");
    }
    // A null key's slot holds an arbitrary number: any key in range serves.
    let keys = dictionary.keys().unary(|k| renumbered.get(k.as_usize()).copied().unwrap_or_default());
    let values = datafusion::arrow::compute::filter(dictionary.values(), &BooleanArray::new(used, None))?;
    Ok(DictionaryArray::try_new(keys, values)?)
}

/// A batch's columns as published under `schema` ([`published_column`]), the columns side by
/// side on the pool.
fn published_columns(batch: &RecordBatch, schema: &Schema) -> Result<Vec<ArrayRef>> {
    let jobs: Vec<usize> = (0..batch.num_columns()).collect();
    crate::parallel::map(&jobs, |&i| published_column(batch.column(i), schema.field(i).data_type()))
        .into_iter()
        .collect()
}

/// `table` under [`published_schema`]: an in-memory table's batches are re-labelled (their
/// arrays are shared, not copied), a Parquet table (its files already written without
/// metadata, [`write_files`]) is listed again under the clean schema.
pub(crate) fn published(table: Arc<dyn TableProvider>, may: Labels) -> Result<Arc<dyn TableProvider>> {
    let schema = table.schema();
    let clean = Arc::new(published_schema(&schema, may));
    if let Some(mem) = table.downcast_ref::<MemTable>() {
        let parts = crate::session::runtime::block_on(async {
            let mut parts = Vec::new();
            for part in &mem.batches {
                parts.push(part.read().await.clone());
            }
            parts
        });
        let options = |b: &RecordBatch| RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        let parts = parts
            .into_iter()
            .map(|batches| {
                batches
                    .iter()
                    .map(|b| {
                        let columns = published_columns(b, &clean)?;
                        Ok(RecordBatch::try_new_with_options(clean.clone(), columns, &options(b))?)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(Arc::new(MemTable::try_new(clean, parts)?));
    }
    if clean == schema {
        // Parquet files, written without metadata; their dictionaries are the writer's own,
        // built from the values written.
        return Ok(table);
    }
    if let Some(listing) = table.downcast_ref::<ListingTable>() {
        let config = ListingTableConfig::new_with_multi_paths(listing.table_paths().clone())
            .with_listing_options(listing.options().clone())
            .with_schema(clean);
        return Ok(Arc::new(ListingTable::try_new(config)?));
    }
    Err(AnonError::table("release", "internal: a published table is neither in memory nor Parquet"))
}

/// Publish batches built in the client (a catalog): in memory, or with [`ParquetOutput`] as
/// one Parquet file that the client writes itself into a fresh directory. Shipping them to the
/// executors to write would pass them through a plan message, which Ballista caps at 16 MB.
pub(crate) fn publish_batches(
    ctx: &SessionContext,
    name: &str,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<Arc<dyn TableProvider>> {
    match ParquetOutput::of(ctx) {
        None => super::glue::mem_table(schema, batches),
        Some(out) => Ok(write_from_client(&out, name, schema, &batches)?.1),
    }
}

/// Write `batches` as one Parquet file from the client into a fresh directory under `out`;
/// returns the directory and a listing table over it. A failed write leaves no directory (it is
/// written as `<dir>.partial` and renamed when complete).
pub(crate) fn write_from_client(
    out: &ParquetOutput,
    name: &str,
    schema: SchemaRef,
    batches: &[RecordBatch],
) -> Result<(PathBuf, Arc<dyn TableProvider>)> {
    let dir = fresh_dir(out, name);
    let partial = partial_dir(&dir);
    let shown = partial.display().to_string();
    let written = (|| -> Result<()> {
        std::fs::create_dir_all(&partial).map_err(|e| AnonError::io(&shown, e))?;
        let file = std::fs::File::create(partial.join("part-0.parquet")).map_err(|e| AnonError::io(&shown, e))?;
        let parquet = |e: datafusion::parquet::errors::ParquetError| AnonError::io(&shown, e);
        let mut w = ArrowWriter::try_new(file, schema.clone(), None).map_err(parquet)?;
        for b in batches {
            w.write(b).map_err(parquet)?;
        }
        w.close().map_err(parquet)?;
        Ok(())
    })();
    moved_into_place(&partial, &dir, written)?;
    let table = listing_table(&dir_url(&dir)?, schema)?;
    Ok((dir, table))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A local session with the option writes the release as Parquet, registers a listing
    /// table, and the rows are those of the in-memory release.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn parquet_release_equals_the_in_memory_one() {
        let dir = std::env::temp_dir().join(format!("anonfusion-output-test-{}", std::process::id()));
        let config = ParquetOutput::new(&dir).apply(SessionConfig::new().with_information_schema(true));
        let parquet = SessionContext::new_with_config(config);
        crate::register_all(&parquet);
        let memory = crate::new_session();
        let sql = ["SELECT * FROM load_dataset('nps', 7000, 1)", "SELECT * FROM kanon_anonymize('nps', 'nps_k', 5)"];
        for ctx in [&parquet, &memory] {
            for s in sql {
                ctx.sql(s).await.unwrap().collect().await.unwrap();
            }
        }
        let table = parquet.table_provider("nps_k").await.unwrap();
        assert!(table.downcast_ref::<ListingTable>().is_some(), "the release is not a Parquet table");
        assert!(std::fs::read_dir(&dir).unwrap().next().is_some(), "nothing written under {}", dir.display());
        let q = "SELECT sex, age, age_lo, age_hi, disease, COUNT(*) AS n FROM nps_k GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 5";
        let a = datafusion::arrow::util::pretty::pretty_format_batches(
            &parquet.sql(q).await.unwrap().collect().await.unwrap(),
        )
        .unwrap()
        .to_string();
        let b = datafusion::arrow::util::pretty::pretty_format_batches(
            &memory.sql(q).await.unwrap().collect().await.unwrap(),
        )
        .unwrap()
        .to_string();
        assert_eq!(a, b);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
