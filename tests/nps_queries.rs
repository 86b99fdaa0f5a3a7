//! The synthetic NPS-like table reproduces the published answers of the papers' Q1–Q4
//! (`original` column of the IPA paper's Tables 9–12): counts exactly, averages within 0.05.

mod common;

use common::{int, rows};

use anonfusion::new_session;
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use std::collections::BTreeMap;
use std::time::Instant;

const Q1: &str = include_str!("../sql/q1.sql");
const Q2: &str = include_str!("../sql/q2.sql");
const Q3: &str = include_str!("../sql/q3.sql");
const Q4: &str = include_str!("../sql/q4.sql");
const Q3_10Y: &str = include_str!("../sql/q3_10y.sql");
const Q4_10Y: &str = include_str!("../sql/q4_10y.sql");
const PUBLISHED: &str = include_str!("data/nps_published_query_results.csv");

/// A two-column answer (age group, value) as a map, whatever numeric types DataFusion chose.
async fn answer(ctx: &SessionContext, sql: &str) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::new();
    for b in rows(ctx, sql).await {
        let col = |i: usize| cast(b.column(i), &DataType::Float64).unwrap();
        let (g, v) = (col(0), col(1));
        let (g, v) = (g.as_primitive::<Float64Type>(), v.as_primitive::<Float64Type>());
        for r in 0..b.num_rows() {
            assert!(!g.is_null(r) && !v.is_null(r), "{sql}: NULL in row {r}");
            assert!(out.insert(g.value(r) as i64, v.value(r)).is_none(), "{sql}: group {} twice", g.value(r));
        }
    }
    out
}

/// The published `original` answers of one query: age group → value.
fn published(query: &str) -> BTreeMap<i64, f64> {
    let mut lines = PUBLISHED.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (q, g, o) = (at("query"), at("age_group"), at("original"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f.len() > o && f[q] == query)
        .map(|f| (f[g].parse().unwrap(), f[o].parse().unwrap()))
        .collect()
}

/// Counts must match exactly; a published 0 is a group the query does not return.
fn assert_counts(query: &str, got: &BTreeMap<i64, f64>) {
    let want = published(query);
    assert_eq!(want.len(), 18, "{query}: published rows");
    for (g, v) in got {
        assert!(want.contains_key(g), "{query}: unpublished group {g} with {v} patients");
    }
    for (g, w) in &want {
        assert_eq!(got.get(g).copied().unwrap_or(0.0), *w, "{query}: group {g}");
    }
}

fn assert_averages(query: &str, got: &BTreeMap<i64, f64>) {
    let want = published(query);
    assert_eq!(want.len(), 9, "{query}: published rows");
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{query}: groups");
    for (g, w) in &want {
        let v = got[g];
        assert!((v - w).abs() < 0.05, "{query}: group {g}: {v} vs published {w}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_table_reproduces_published_q1_to_q4() {
    let ctx = new_session();
    let t = Instant::now();
    rows(&ctx, "SELECT * FROM load_dataset('nps')").await;
    eprintln!("load_dataset('nps'), 1,375,900 rows: {:?}", t.elapsed());
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM nps").await, 1_375_900);
    assert_eq!(int(&ctx, "SELECT rows FROM load_dataset('nps')").await, 1_375_900);
    assert_eq!(int(&ctx, "SELECT lattice_nodes FROM load_dataset('nps')").await, 5 * 2 * 6 * 3 * 2);

    let q1 = answer(&ctx, Q1).await;
    let q2 = answer(&ctx, Q2).await;
    assert_counts("Q1", &q1);
    assert_counts("Q2", &q2);
    assert_eq!(q1.values().sum::<f64>(), 3_134.0);
    assert_eq!(q2.values().sum::<f64>(), 2_912.0);
    assert_averages("Q3", &answer(&ctx, Q3_10Y).await);
    assert_averages("Q4", &answer(&ctx, Q4_10Y).await);

    // The printed 5-year Q3/Q4 run on the same groups as Q1/Q2, and their weighted means are the
    // 10-year answers (10-year label L = 5-year groups L-5 and L).
    for (counts, five, ten) in [(&q1, Q3, Q3_10Y), (&q2, Q4, Q4_10Y)] {
        let five = answer(&ctx, five).await;
        assert_eq!(five.keys().collect::<Vec<_>>(), counts.keys().collect::<Vec<_>>());
        for (l, avg) in answer(&ctx, ten).await {
            let parts: Vec<i64> = [l - 5, l].into_iter().filter(|g| five.contains_key(g)).collect();
            let n: f64 = parts.iter().map(|g| counts[g]).sum();
            let sum: f64 = parts.iter().map(|g| counts[g] * five[g]).sum();
            assert!((sum / n - avg).abs() < 1e-9, "label {l}");
        }
    }

    // Background rows hold no stroke without surgery; the realistic rest of the table.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM nps WHERE disease = 'stroke' AND surgery = 'N'").await, 6_046);
    let surgery = int(&ctx, "SELECT COUNT(*) FROM nps WHERE surgery = 'Y'").await as f64 / 1_375_900.0;
    assert!((0.10..=0.20).contains(&surgery), "surgery share {surgery}");
    let female = int(&ctx, "SELECT COUNT(*) FROM nps WHERE sex = 'F'").await as f64 / 1_375_900.0;
    assert!((0.45..=0.55).contains(&female), "female share {female}");
    assert_eq!(int(&ctx, "SELECT COUNT(DISTINCT location) FROM nps").await, 16);
    assert_eq!(
        int(&ctx, "SELECT COUNT(*) FROM nps WHERE age < 0 OR age > 99 OR length_of_stay < 0 OR length_of_stay > 359")
            .await,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smaller_table_keeps_the_counts_and_too_small_fails_cleanly() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('nps', 100000, 42)").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM nps").await, 100_000);
    assert_counts("Q1", &answer(&ctx, Q1).await);
    assert_counts("Q2", &answer(&ctx, Q2).await);
    assert_averages("Q3", &answer(&ctx, Q3_10Y).await);
    assert_averages("Q4", &answer(&ctx, Q4_10Y).await);

    let e = match ctx.sql("SELECT * FROM load_dataset('nps', 1000)").await {
        Err(e) => e.to_string(),
        Ok(df) => df.collect().await.expect_err("1000 rows is below the cohort").to_string(),
    };
    assert!(e.contains("rows") && e.contains("6046"), "{e}");
    // The failed call left the loaded table alone.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM nps").await, 100_000);
}
