//! RmR (the ArtUC paper's competitor, `src/methods/rmr`): a worked example whose clusters,
//! NCP and generalized codes follow by hand, and releases on a generated EHRD-like table
//! checked by the independent (k, k^m) verifier.

#[path = "artuc/support.rs"]
mod support;

use anonfusion::hierarchy::HierarchyKind;
use anonfusion::methods::rmr::{RmrConfig, rmr};
use anonfusion::progress::Silent;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::prelude::SessionContext;
use support::*;

/// Six patients: three pairs of close ages far apart, codes from Figure 6's taxonomy. Records
/// 10 and 11 hold one code each, from two chapters (001–139, 390–459).
fn six() -> Source {
    let ages = vec![10, 11, 20, 21, 50, 51];
    let age_rows: Vec<Vec<String>> = ages.iter().map(|a: &i64| vec![a.to_string(), "*".into()]).collect();
    let codes = rows_of(&[
        "053.20;053;050-059;001-139;*",
        "053.71;053;050-059;001-139;*",
        "458.1;458;451-459;390-459;*",
        "493.2;493;490-496;460-519;*",
        "494.1;494;490-496;460-519;*",
    ]);
    Source {
        age_h: hierarchy("age", HierarchyKind::Numeric, &age_rows),
        cats: vec![],
        code_h: hierarchy("codes", HierarchyKind::Codes, &codes),
        codes: vec![
            s(&["053.20"]),
            s(&["458.1"]),
            s(&["493.2", "494.1"]),
            s(&["493.2", "494.1"]),
            s(&["053.71"]),
            s(&["053.71"]),
        ],
        ages,
    }
}

async fn float(ctx: &SessionContext, sql: &str) -> f64 {
    let b = collect(ctx, sql).await;
    cast(b[0].column(0), &DataType::Float64).unwrap().as_primitive::<Float64Type>().value(0)
}

/// k = 2 from the first record: clusters {10, 11}, {20, 21}, {50, 51}, each of NCP 1/41 per
/// record (ages span 41 years). Every cluster has NCP(C) = 2/41; the seed is the first, and
/// its union with {20, 21} costs 4·11/41 − 4/41 = 40/41 against 160/41 with {50, 51}. So at
/// δ = 0.2 RmR merges {10, 11, 20, 21} (NCP (44 + 2)/41/6 = 0.187) and stops (the last merge
/// would give 1); at δ = 0.1 it merges nothing (NCP 1/41). GenDiag with every code in one set
/// generalizes 053.20 and 458.1 of two chapters into one item rather than suppressing them.
#[test]
fn worked_example_merges_by_demographics_within_delta() {
    let t = six().table();
    let cfg = |delta| RmrConfig::new(2, 2, delta, 0).with_options("pick=first").unwrap();
    let r = rmr(&t, &cfg(0.2), &Silent).unwrap();
    let mut sizes: Vec<usize> = r.clusters.iter().map(|c| c.records.len()).collect();
    sizes.sort();
    assert_eq!(sizes, vec![2, 4]);
    assert!((r.measures.ncp - 46.0 / 41.0 / 6.0).abs() < 1e-12, "{}", r.measures.ncp);
    assert_eq!(r.measures.suppressed_codes, 0);
    let rows = published(&t, &r);
    let ages: Vec<&str> = rows.iter().map(|(_, d, _)| d[0].as_str()).collect();
    assert_eq!(ages.iter().filter(|a| **a == "[10-21]").count(), 4, "{rows:?}");
    assert_eq!(ages.iter().filter(|a| **a == "[50-51]").count(), 2, "{rows:?}");
    let across = rows.iter().flat_map(|(_, _, c)| c).any(|c| c.contains("053.20") && c.contains(','));
    assert!(across, "053.20 generalized with another code: {rows:?}");
    assert!(r.measures.ul > 0.0);

    let none = rmr(&t, &cfg(0.1), &Silent).unwrap();
    assert_eq!(none.measures.clusters, 3);
    assert!((none.measures.ncp - 1.0 / 41.0).abs() < 1e-12);
    // Below the formed clusters' NCP: an error naming delta, nothing published.
    let e = rmr(&t, &cfg(0.01), &Silent).unwrap_err().to_string();
    assert!(e.contains("delta") && e.contains("NCP"), "{e}");
}

/// Through SQL on the worked example, then the verifier: every release is (k, k^m)-anonymous,
/// and `anon_metrics` measures the NCP the report states.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_release_verifies() {
    let (ctx, _registry) = six().session();
    assert_eq!(float(&ctx, "SELECT COUNT(*) FROM rmr('src', 'rel', 2, 2, 0.2, 0, 'pick=first')").await, 6.0);
    assert_eq!(float(&ctx, "SELECT clusters FROM rel_report").await, 2.0);
    let checks = verify(&ctx, "km=2:2").await;
    assert!(!checks.is_empty() && checks.iter().all(|c| c.1), "{checks:?}");
    let ncp = float(&ctx, "SELECT value FROM anon_metrics('src', 'rel') WHERE metric = 'ncp'").await;
    assert!((ncp - float(&ctx, "SELECT ncp FROM rel_report").await).abs() < 1e-9);
    let e = ctx.sql("SELECT * FROM rmr('src', 'x', 2, 2, 0.2, 0, 'small_groups=withhold')").await;
    let e = match e {
        Err(e) => e.to_string(),
        Ok(df) => df.collect().await.unwrap_err().to_string(),
    };
    assert!(e.contains("rmr") && e.contains("small_groups"), "{e}");
}

/// A generated EHRD-like table: RmR's release passes the verifier at k = 5, m = 2, keeps NCP
/// within δ, and suppresses nothing (any two codes may share a generalized code).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ehrd_like_release_verifies() {
    let (ctx, _registry) = anonfusion::session();
    collect(&ctx, "SELECT * FROM load_dataset('ehrd', 400, 7)").await;
    collect(&ctx, "SELECT COUNT(*) FROM rmr('ehrd', 'rel', 5, 2, 0.1, 0, 'seed=3')").await;
    assert!(float(&ctx, "SELECT ncp FROM rel_report").await <= 0.1 + 1e-12);
    assert_eq!(float(&ctx, "SELECT suppressed_codes FROM rel_report").await, 0.0);
    for b in collect(&ctx, "SELECT holds, detail FROM verify_release('ehrd', 'rel', 'km=5:2')").await {
        let (h, d) = (b.column(0).as_boolean(), b.column(1).as_string::<i32>());
        for i in 0..b.num_rows() {
            assert!(h.value(i), "{}", d.value(i));
        }
    }
    let seeded = |out: &str| format!("SELECT COUNT(*) FROM rmr('ehrd', '{out}', 5, 2, 0.1, 0, 'seed=3')");
    collect(&ctx, &seeded("again")).await;
    // Same seed, same release.
    let ncp = |t: &str| format!("SELECT ncp * 1e6 + ul + clusters FROM {t}_report");
    assert_eq!(float(&ctx, &ncp("rel")).await, float(&ctx, &ncp("again")).await);
}
