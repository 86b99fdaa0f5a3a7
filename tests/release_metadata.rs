//! Nothing of the source's metadata is published: every method's release and side tables carry
//! only the metadata the engine defines for them (a DP release's guarantee labels, a catalog's
//! sensitive-column key), whatever schema and field metadata the source held. The defect: a
//! k-anonymous release of a pandas frame kept the frame's `pandas` schema metadata (every
//! original column and dtype, dropped identifiers included), and `COPY ... TO 'x.parquet'`
//! wrote it into the published file.

use anonfusion::sql::ParquetOutput;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::datasource::MemTable;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// What a pandas frame's Arrow schema says of its source: the identifier is named.
const SOURCE_SCHEMA_KEY: &str = "pandas";
const SOURCE_SCHEMA_VALUE: &str = r#"{"columns": [{"name": "patient_id"}, {"name": "name"}]}"#;
/// Field metadata on every source column.
const SOURCE_FIELD_KEY: &str = "source.comment";

async fn run(ctx: &SessionContext, sql: &str) {
    ctx.sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Replace table `name` by the same rows under a schema carrying source metadata, as
/// `Session.register` of a pandas frame does (its declarations stay with the name).
async fn with_source_metadata(ctx: &SessionContext, name: &str) {
    let batches = ctx.table(name).await.unwrap().collect().await.unwrap();
    let schema = ctx.table(name).await.unwrap().schema().inner().clone();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let note = HashMap::from([(SOURCE_FIELD_KEY.to_string(), format!("{} of patient_id", f.name()))]);
            f.as_ref().clone().with_metadata(note)
        })
        .collect();
    let tagged: SchemaRef = Arc::new(Schema::new_with_metadata(
        fields,
        HashMap::from([(SOURCE_SCHEMA_KEY.to_string(), SOURCE_SCHEMA_VALUE.to_string())]),
    ));
    let batches: Vec<RecordBatch> =
        batches.iter().map(|b| RecordBatch::try_new(tagged.clone(), b.columns().to_vec()).unwrap()).collect();
    ctx.deregister_table(name).unwrap();
    ctx.register_table(name, Arc::new(MemTable::try_new(tagged, vec![batches]).unwrap())).unwrap();
}

/// Every method's call, with every side table it can publish turned on.
const CALLS: [&str; 9] = [
    "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 5)",
    "SELECT COUNT(*) FROM generalize('nps', 'nps_g', '1,0,1,0,0')",
    "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 5, 0.3, 'seed=1, diagnostics=true')",
    "SELECT COUNT(*) FROM entropy_anonymize('nps', 'nps_e', 5, 'seed=1, diagnostics=true')",
    "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, 'seed=1, diagnostics=true')",
    "SELECT COUNT(*) FROM dp_histogram('nps', 'nps_dp', 1.0, '3,0,5,0,0', 'seed=3, diagnostics=true')",
    "SELECT COUNT(*) FROM artuc('informs', 'inf_a', 'informs_uc1', 5, 2, 0.5, 1000000, 'seed=1')",
    "SELECT COUNT(*) FROM artuc('informs', 'inf_t', 'informs_uc1', 5, 2, 0.5, 1000000, 'seed=1, variant=anytime')",
    "SELECT COUNT(*) FROM rmr('informs', 'inf_r', 5, 2, 0.5, 1000000, 'seed=1')",
];

/// The outputs of [`CALLS`]: the release names (side tables are `<release>_<suffix>`).
const RELEASES: [&str; 9] = ["nps_k", "nps_g", "nps_h", "nps_e", "nps_ipa", "nps_dp", "inf_a", "inf_t", "inf_r"];

/// The metadata keys the engine itself defines.
const GUARANTEE: &str = "anonfusion.guarantee";
const SENSITIVE_COLUMN: &str = "anonfusion.sensitive_column";

/// A session with NPS-like patients and Informs-like records, both carrying source metadata.
async fn session(config: SessionConfig) -> SessionContext {
    let ctx = SessionContext::new_with_config(config.with_information_schema(true));
    anonfusion::register_all(&ctx);
    // The DP calls below are seeded (so comparable): test fixtures, labelled not private.
    run(&ctx, "SET anonfusion.seeded_dp = true").await;
    run(&ctx, "SELECT * FROM load_dataset('nps', 7000, 1)").await;
    run(&ctx, "SELECT * FROM load_dataset('informs', 400, 1)").await;
    run(&ctx, "SELECT COUNT(*) FROM load_constraints('informs', 'UC1')").await;
    with_source_metadata(&ctx, "nps").await;
    with_source_metadata(&ctx, "informs").await;
    run(&ctx, "SELECT * FROM set_privacy_budget('nps', 10)").await;
    ctx
}

/// Every published table of a release, by name.
fn outputs(ctx: &SessionContext, release: &str) -> Vec<String> {
    let state = ctx.state();
    let schema = state.catalog_list().catalog("datafusion").unwrap().schema("public").unwrap();
    let side = format!("{release}_");
    let mut names: Vec<String> =
        schema.table_names().into_iter().filter(|n| n == release || n.starts_with(&side)).collect();
    names.sort();
    names
}

/// The metadata keys of a schema and its fields: `(schema keys, [(field, key)])`.
fn keys(schema: &Schema) -> (Vec<String>, Vec<(String, String)>) {
    let mut top: Vec<String> = schema.metadata().keys().cloned().collect();
    top.sort();
    let fields =
        schema.fields().iter().flat_map(|f| f.metadata().keys().map(|k| (f.name().clone(), k.clone()))).collect();
    (top, fields)
}

/// Nothing of the source (its schema key or any column's note) in a schema.
fn assert_nothing_of_the_source(what: &str, schema: &Schema) {
    let shown =
        format!("{:?} {:?}", schema.metadata(), schema.fields().iter().map(|f| f.metadata()).collect::<Vec<_>>());
    assert!(
        !shown.contains(SOURCE_SCHEMA_KEY) && !shown.contains(SOURCE_FIELD_KEY) && !shown.contains("patient_id"),
        "{what} carries the source's metadata: {shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_release_and_side_table_carries_only_the_engine_s_metadata() {
    let ctx = session(SessionConfig::new()).await;
    for sql in CALLS {
        run(&ctx, sql).await;
    }
    let mut seen = 0;
    for release in RELEASES {
        let names = outputs(&ctx, release);
        // generalize publishes its release alone; every other method has side tables.
        assert!(names.len() >= if release == "nps_g" { 1 } else { 2 }, "{release}: {names:?}");
        for name in names {
            let schema = ctx.table(&name).await.unwrap().schema().inner().clone();
            assert_nothing_of_the_source(&name, &schema);
            let (top, fields) = keys(&schema);
            // The DP releases keep their guarantee labels; nothing else has schema metadata.
            let dp_release = name == "nps_ipa" || name == "nps_dp";
            assert!(top.iter().all(|k| k.starts_with("anonfusion.")), "{name}: {top:?}");
            assert_eq!(top.contains(&GUARANTEE.to_string()), dp_release, "{name}: {top:?}");
            // Only the catalog names its sensitive column.
            let expected: Vec<(String, String)> = if name == "nps_h_catalog" {
                vec![("sensitive_value".into(), SENSITIVE_COLUMN.into())]
            } else {
                vec![]
            };
            assert_eq!(fields, expected, "{name}");
            // What a query on it returns says the same.
            let result = ctx.sql(&format!("SELECT * FROM {name}")).await.unwrap().collect().await.unwrap();
            if let Some(b) = result.first() {
                assert_nothing_of_the_source(&format!("SELECT * FROM {name}"), &b.schema());
            }
            assert_eq!(unused_dictionary_values(&result), Vec::<String>::new(), "{name}");
            seen += 1;
        }
    }
    assert!(seen >= 22, "only {seen} tables checked");
}

/// The schema and key-value metadata Parquet readers see in a file.
fn parquet_schema(path: &Path) -> (Schema, String) {
    let file = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let kv = format!("{:?}", builder.metadata().file_metadata().key_value_metadata());
    (builder.schema().as_ref().clone(), kv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_of_a_release_writes_nothing_of_the_source() {
    let ctx = session(SessionConfig::new()).await;
    run(&ctx, CALLS[0]).await;
    let dir = std::env::temp_dir().join(format!("anonfusion-release-metadata-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nps_k.parquet");
    run(&ctx, &format!("COPY nps_k TO '{}'", file.display())).await;
    let (schema, kv) = parquet_schema(&file);
    assert_nothing_of_the_source("the COPY of nps_k", &schema);
    assert!(!kv.contains("patient_id"), "{kv}");
    // The source itself, copied, still has its metadata: the test's marker is there to find.
    let original = dir.join("nps.parquet");
    run(&ctx, &format!("COPY nps TO '{}'", original.display())).await;
    assert!(parquet_schema(&original).0.metadata().contains_key(SOURCE_SCHEMA_KEY));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn releases_written_as_parquet_carry_nothing_of_the_source() {
    let dir = std::env::temp_dir().join(format!("anonfusion-release-metadata-out-{}", std::process::id()));
    let ctx = session(ParquetOutput::new(&dir).apply(SessionConfig::new())).await;
    for sql in &CALLS[..3] {
        run(&ctx, sql).await;
    }
    let mut files = 0;
    for table_dir in std::fs::read_dir(&dir).unwrap() {
        for file in std::fs::read_dir(table_dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let (schema, kv) = parquet_schema(&path);
            assert_nothing_of_the_source(&path.display().to_string(), &schema);
            assert!(!kv.contains("patient_id"), "{}: {kv}", path.display());
            files += 1;
        }
    }
    assert!(files >= 3, "{files} files under {}", dir.display());
    for name in ["nps_k", "nps_g", "nps_h", "nps_h_catalog"] {
        let schema = ctx.table(name).await.unwrap().schema().inner().clone();
        assert_nothing_of_the_source(name, &schema);
    }
    // The catalog, written by the client, keeps the key truthful_view reads.
    let catalog = ctx.table("nps_h_catalog").await.unwrap().schema().inner().clone();
    assert!(catalog.field_with_name("sensitive_value").unwrap().metadata().contains_key(SENSITIVE_COLUMN));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The values of every dictionary in `batches` (top-level and inside lists) that no row uses:
/// `column: value`.
fn unused_dictionary_values(batches: &[RecordBatch]) -> Vec<String> {
    fn walk(name: &str, array: &ArrayRef, out: &mut Vec<String>) {
        if let Some(d) = array.as_any_dictionary_opt() {
            let keys = d.normalized_keys();
            let mut used = vec![false; d.values().len()];
            for (i, &k) in keys.iter().enumerate() {
                if d.keys().is_valid(i) {
                    used[k] = true;
                }
            }
            for (v, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
                out.push(format!("{name}: {}", array_value_to_string(d.values(), v).unwrap()));
            }
        } else if let Some(list) = array.as_list_opt::<i32>() {
            walk(name, list.values(), out);
        }
    }
    let mut out = Vec::new();
    for b in batches {
        for (field, column) in b.schema().fields().iter().zip(b.columns()) {
            walk(field.name(), column, &mut out);
        }
    }
    out
}

/// The defect: an h-ceiling release with suppression built its label columns over every class,
/// suppressed ones included, and its sensitive column over every value of the source, so the
/// Arrow dictionaries of a release without the suppressed record still held its exact age and
/// its diagnosis (a pandas categorical or an Arrow IPC file showed them). A published table's
/// dictionaries now hold only what its rows show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suppressed_record_leaves_nothing_in_the_release_s_dictionaries() {
    let ctx = SessionContext::new();
    anonfusion::register_all(&ctx);
    for sql in [
        "CREATE TABLE t (age INT, sex VARCHAR, disease VARCHAR) AS VALUES (20, 'F', 'flu'), (21, 'F', 'asthma'), \
         (24, 'F', 'other'), (30, 'M', 'flu'), (31, 'M', 'flu'), (33, 'M', 'other'), (97, 'F', 'RAREDISEASE')",
        "SELECT COUNT(*) FROM declare_roles('t', 'age=qi, sex=qi, disease=sensitive')",
        "SELECT COUNT(*) FROM interval_hierarchy('t', 'age', '5,10,20,*', 0, 120)",
        "SELECT COUNT(*) FROM flat_hierarchy('t', 'sex', 'values=F|M')",
        "SELECT COUNT(*) FROM hceil_anonymize('t', 'h1', 3, 0.5, 'seed=1, suppression=20')",
    ] {
        run(&ctx, sql).await;
    }
    let release = ctx.table("h1").await.unwrap().collect().await.unwrap();
    let rows: usize = release.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 6, "the rare record is suppressed");
    let shown = datafusion::arrow::util::pretty::pretty_format_batches(&release).unwrap().to_string();
    assert!(!shown.contains("RAREDISEASE") && !shown.contains("97"), "{shown}");
    let unused = unused_dictionary_values(&release);
    assert!(unused.is_empty(), "values no published row shows: {unused:?}");
    assert!(release[0].schema().fields().iter().any(|f| matches!(f.data_type(), DataType::Dictionary(..))));
}

/// A column kept as it is (`keep_insensitive=true`) that is a list keeps its rows but not its
/// item field's metadata (part of the column's type, which the top-level rule did not reach).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_list_column_carries_nothing_of_the_source() {
    let ctx = session(SessionConfig::new()).await;
    let batches = ctx.table("nps").await.unwrap().collect().await.unwrap();
    let schema = ctx.table("nps").await.unwrap().schema().inner().clone();
    let item = Arc::new(
        Field::new("item", DataType::Utf8, true)
            .with_metadata(HashMap::from([(SOURCE_FIELD_KEY.to_string(), "item of patient_id".to_string())])),
    );
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("notes", DataType::List(item.clone()), true));
    let tagged = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let batches: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let n = b.num_rows();
            let values = Arc::new(datafusion::arrow::array::StringArray::from(vec!["note"; n]));
            let notes = ListArray::new(item.clone(), OffsetBuffer::from_lengths(vec![1; n]), values, None);
            let mut columns = b.columns().to_vec();
            columns.push(Arc::new(notes));
            RecordBatch::try_new(tagged.clone(), columns).unwrap()
        })
        .collect();
    ctx.deregister_table("nps").unwrap();
    ctx.register_table("nps", Arc::new(MemTable::try_new(tagged, vec![batches]).unwrap())).unwrap();
    run(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_kept', 5, 'keep_insensitive=true')").await;
    let schema = ctx.table("nps_kept").await.unwrap().schema().inner().clone();
    let notes = schema.field_with_name("notes").expect("the list column is kept");
    assert!(format!("{:?}", notes.data_type()).contains("Utf8"), "{notes:?}");
    assert!(!format!("{schema:?}").contains(SOURCE_FIELD_KEY), "{schema:?}");
    let result = ctx.sql("SELECT * FROM nps_kept").await.unwrap().collect().await.unwrap();
    assert!(!format!("{:?}", result[0].schema()).contains(SOURCE_FIELD_KEY));
    assert_eq!(result.iter().map(|b| b.num_rows()).sum::<usize>(), 7000);
}
