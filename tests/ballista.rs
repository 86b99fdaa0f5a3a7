//! The engine on a standalone in-process Ballista cluster gives what it gives locally: the
//! k-anonymous release of the NPS-like table (row for row, order aside) and the Q1 numbers of
//! the query-error harness. Built only with `--features ballista`.
#![cfg(feature = "ballista")]

use anonfusion::scale::{Cluster, session};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::prelude::SessionContext;

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

const SETUP: [&str; 2] =
    ["SELECT * FROM load_dataset('nps', 20000, 1)", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 5)"];

fn q1() -> String {
    format!("SELECT * FROM query_error('{}', 'nps', 'nps_k')", include_str!("../sql/q1.sql").replace('\'', "''"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kanon_and_q1_match_the_local_engine() {
    let local = anonfusion::new_session();
    let (cluster, _registry) = session(&Cluster::Standalone).await.expect("standalone cluster");
    for ctx in [&local, &cluster] {
        for sql in SETUP {
            run(ctx, sql).await;
        }
    }
    let release = "SELECT * FROM nps_k";
    let (a, b) = (sorted_rows(&run(&local, release).await), sorted_rows(&run(&cluster, release).await));
    assert_eq!(a.len(), 20000);
    assert_eq!(a, b, "the release differs on the cluster");
    let report = "SELECT node, suppressed_records, classes FROM nps_k_report";
    assert_eq!(sorted_rows(&run(&local, report).await), sorted_rows(&run(&cluster, report).await));
    let (a, b) = (sorted_rows(&run(&local, &q1()).await), sorted_rows(&run(&cluster, &q1()).await));
    assert!(a.len() > 2, "{a:?}");
    assert_eq!(a, b, "Q1 differs on the cluster");
}

#[test]
fn cluster_argument_is_checked() {
    assert_eq!(Cluster::parse("standalone").unwrap(), Cluster::Standalone);
    assert_eq!(Cluster::parse("df://localhost:50050").unwrap(), Cluster::Remote("df://localhost:50050".into()));
    assert!(Cluster::parse("localhost").unwrap_err().to_string().contains("scheduler URL"));
}
