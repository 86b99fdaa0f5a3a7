//! The engine on a Ballista cluster gives what it gives locally: the kanon_anonymize and
//! hceil_anonymize releases of the NPS-like table (row for row, order aside), the h-ceiling
//! catalog, and Q1–Q4 through the query-error harness, with releases and catalogs written as
//! Parquet by the cluster; and the seeded ipa_release (sound default and `approx`) and
//! dp_histogram, whose one raw-data pass (the frequency table of cells, one aggregation) runs
//! on the cluster. On a standalone in-process cluster, and on a "remote" one made of
//! our own scheduler and executor (started in-process on free ports). Built only with
//! `--features ballista`.
#![cfg(feature = "ballista")]

use anonfusion::scale::server::{ExecutorOptions, run_executor, run_scheduler};
use anonfusion::scale::{Cluster, session_with_output, to_parquet};
use anonfusion::sql::ParquetOutput;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::datasource::listing::ListingTable;
use datafusion::prelude::SessionContext;
use std::path::{Path, PathBuf};

async fn run(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every row as one string, sorted: releases are compared as multisets.
fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            let cells: Vec<String> =
                b.columns().iter().map(|c| array_value_to_string(c, r).expect("printable cell")).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

/// The same rows, numbers equal up to rounding: an average summed in another order on the
/// cluster may differ in its last bits.
fn assert_same_numbers(what: &str, a: &[String], b: &[String]) {
    assert_eq!(a.len(), b.len(), "{what}: {a:?} vs {b:?}");
    for (ra, rb) in a.iter().zip(b) {
        for (x, y) in ra.split('|').zip(rb.split('|')) {
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(x), Ok(y)) => assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{what}: {ra} vs {rb}"),
                _ => assert_eq!(x, y, "{what}: {ra} vs {rb}"),
            }
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("anonfusion-ballista-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const ROWS: usize = 20_000;

fn setup(rows: usize) -> Vec<String> {
    vec![
        format!("SELECT * FROM load_dataset('nps', {rows}, 1)"),
        "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 5)".into(),
        "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 5, 0.3, 'seed=1')".into(),
    ]
}

fn q(n: usize, release: &str, catalog: Option<&str>) -> String {
    let sql = match n {
        1 => include_str!("../sql/q1.sql"),
        2 => include_str!("../sql/q2.sql"),
        3 => include_str!("../sql/q3.sql"),
        _ => include_str!("../sql/q4.sql"),
    };
    let catalog = catalog.map(|c| format!(", '{c}'")).unwrap_or_default();
    format!("SELECT * FROM query_error('{}', 'nps', '{release}'{catalog})", sql.replace('\'', "''"))
}

/// Seeded (so reproducible, and needing no budget) DP releases: the raw pass is one
/// aggregation, the rest runs on the client from its result.
const DP_CALLS: [&str; 3] = [
    "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, 'seed=1')",
    "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa_a', 1.0, 'guarantee=approx, seed=2')",
    "SELECT COUNT(*) FROM dp_histogram('nps', 'nps_dp', 1.0, '3,0,5,0,0', 'seed=3')",
];

/// The DP releases and their reports are the same on the cluster as locally: the same
/// frequency table gives the same node choice and the same noise under the same seed.
async fn compare_dp(local: &SessionContext, cluster: &SessionContext) {
    for ctx in [local, cluster] {
        run(ctx, "SET anonfusion.seeded_dp = true").await;
        for sql in DP_CALLS {
            run(ctx, sql).await;
        }
    }
    for table in ["nps_ipa", "nps_ipa_a", "nps_dp"] {
        let sql = format!("SELECT * FROM {table}");
        let (a, b) = (sorted_rows(&run(local, &sql).await), sorted_rows(&run(cluster, &sql).await));
        assert!(!a.is_empty(), "{table} is empty");
        assert_eq!(a, b, "{table} differs on the cluster");
        let sql = format!("SELECT node, released_cells, released_records, guarantee FROM {table}_report");
        assert_eq!(sorted_rows(&run(local, &sql).await), sorted_rows(&run(cluster, &sql).await), "{sql}");
    }
}

/// Compare every output of [`setup`] on `cluster` with the local engine's, and check that the
/// cluster's releases and catalog are Parquet tables under `dir`.
async fn compare(local: &SessionContext, cluster: &SessionContext, dir: &Path, rows: usize) {
    for ctx in [local, cluster] {
        for sql in setup(rows) {
            run(ctx, &sql).await;
        }
    }
    for table in ["nps_k", "nps_h", "nps_h_catalog"] {
        let provider = cluster.table_provider(table).await.unwrap();
        let listing = provider.downcast_ref::<ListingTable>().unwrap_or_else(|| panic!("{table} is not Parquet"));
        let path = listing.table_paths()[0].as_str().to_string();
        assert!(path.contains(dir.to_str().unwrap()), "{table} is at {path}, not under {}", dir.display());
    }
    for (table, min_rows) in [("nps_k", rows), ("nps_h", rows), ("nps_h_catalog", 1)] {
        let sql = format!("SELECT * FROM {table}");
        let (a, b) = (sorted_rows(&run(local, &sql).await), sorted_rows(&run(cluster, &sql).await));
        assert!(a.len() >= min_rows, "{table}: {} rows", a.len());
        assert_eq!(a, b, "{table} differs on the cluster");
    }
    for sql in [
        // The catalog's field metadata (which column is sensitive) survives the Parquet trip.
        "SELECT * FROM truthful_view('nps_h', 'nps_h_catalog')",
        "SELECT node, suppressed_records, classes FROM nps_k_report",
        "SELECT node, counterfeit_records, catalog_rows, classes, rce FROM nps_h_report",
    ] {
        assert_eq!(sorted_rows(&run(local, sql).await), sorted_rows(&run(cluster, sql).await), "{sql}");
    }
    for n in 1..=4 {
        for (release, catalog) in [("nps_k", None), ("nps_h", Some("nps_h_catalog"))] {
            let sql = q(n, release, catalog);
            let (a, b) = (sorted_rows(&run(local, &sql).await), sorted_rows(&run(cluster, &sql).await));
            assert!(a.len() > 2, "Q{n} on {release}: {a:?}");
            assert_same_numbers(&format!("Q{n} on {release}"), &a, &b);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_cluster_gives_the_local_releases_and_answers() {
    let dir = scratch("standalone");
    let (cluster, _) = session_with_output(&Cluster::Standalone, ParquetOutput::new(&dir)).await.expect("cluster");
    let local = anonfusion::new_session();
    compare(&local, &cluster, &dir, ROWS).await;
    compare_dp(&local, &cluster).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A free TCP port on localhost (released before use; the race is acceptable in a test).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Our scheduler and executor decode plans that carry in-memory tables (the stock Ballista
/// scheduler rejects them), so a client connected by URL runs the same methods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_scheduler_and_executor_run_the_plans() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { run_scheduler(listener, "localhost").await.expect("scheduler") });
    let work = scratch("executor-work");
    std::fs::create_dir_all(&work).unwrap();
    let opts = ExecutorOptions {
        bind_host: "127.0.0.1".into(),
        external_host: Some("localhost".into()),
        port: free_port(),
        grpc_port: free_port(),
        scheduler_host: "localhost".into(),
        scheduler_port: port,
        concurrent_tasks: 2,
        work_dir: Some(work.to_str().unwrap().into()),
    };
    tokio::spawn(async move { run_executor(opts).await.expect("executor") });
    let dir = scratch("remote");
    let url = format!("df://localhost:{port}");
    let (cluster, _) = session_with_output(&Cluster::Remote(url), ParquetOutput::new(&dir)).await.expect("cluster");
    let local = anonfusion::new_session();
    compare(&local, &cluster, &dir, 7_000).await;
    compare_dp(&local, &cluster).await;
    std::fs::remove_dir_all(&dir).unwrap();
    // Best effort: the executor task still runs until the test's runtime ends.
    let _ = std::fs::remove_dir_all(&work);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn to_parquet_writes_and_registers_and_refuses_a_used_directory() {
    let dir = scratch("to-parquet");
    let ctx = anonfusion::new_session();
    run(&ctx, "SELECT * FROM load_dataset('nps', 7000, 1)").await;
    to_parquet(&ctx, "nps", &dir).await.expect("write");
    assert!(ctx.table_provider("nps").await.unwrap().downcast_ref::<ListingTable>().is_some());
    let n = sorted_rows(&run(&ctx, "SELECT COUNT(*) FROM nps").await);
    assert_eq!(n, vec!["7000".to_string()]);
    let e = to_parquet(&ctx, "nps", &dir).await.unwrap_err().to_string();
    assert!(e.contains("dir") && e.contains("not empty"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cluster_argument_is_checked() {
    assert_eq!(Cluster::parse("standalone").unwrap(), Cluster::Standalone);
    assert_eq!(Cluster::parse("df://localhost:50050").unwrap(), Cluster::Remote("df://localhost:50050".into()));
    assert!(Cluster::parse("localhost").unwrap_err().to_string().contains("scheduler URL"));
}
