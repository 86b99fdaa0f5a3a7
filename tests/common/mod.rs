//! Random tables and hierarchies shared by the property tests.
#![allow(dead_code)]

pub mod audit;

use anonfusion::encode::{FrequencyTable, QiColumn, SensitiveColumn};
use anonfusion::hierarchy::{HierarchyBuilder, HierarchyKind};
use anonfusion::meta::{Role, TableMeta};
use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::prelude::SessionContext;
use std::sync::Arc;

/// A random hierarchy: `leaves` leaves, each level merging neighbouring nodes in random runs.
fn random_hierarchy(
    name: &str,
    leaves: usize,
    height: usize,
    numeric: bool,
    cuts: &[u8],
) -> anonfusion::hierarchy::Hierarchy {
    let kind = if numeric { HierarchyKind::Numeric } else { HierarchyKind::Categorical };
    let mut b = HierarchyBuilder::new(name, kind);
    // Group ids per level: a node at level j+1 merges consecutive nodes of level j.
    let mut ids: Vec<usize> = (0..leaves).collect();
    let mut columns: Vec<Vec<String>> =
        vec![(0..leaves).map(|i| if numeric { (i * 3).to_string() } else { format!("v{i}") }).collect()];
    for j in 1..height {
        let mut next = Vec::with_capacity(leaves);
        let mut cur = 0usize;
        for i in 0..leaves {
            if i > 0 && ids[i] != ids[i - 1] && cuts[(i * 7 + j) % cuts.len()].is_multiple_of(2) {
                cur += 1;
            }
            next.push(cur);
        }
        ids = next;
        columns.push(ids.iter().map(|g| format!("L{j}_{g}")).collect());
    }
    for i in 0..leaves {
        let mut row: Vec<String> = columns.iter().map(|c| c[i].clone()).collect();
        row.push("*".into());
        b.row(i + 1, row);
    }
    b.build().unwrap()
}

/// A random frequency table: `shapes` = (leaves, height, numeric) per quasi-identifier, rows =
/// (seed, count), and `sensitive` distinct values (0 = no sensitive column).
pub fn random_table(
    shapes: &[(usize, usize, bool)],
    cuts: &[u8],
    rows: &[(u32, u64)],
    sensitive: usize,
) -> FrequencyTable {
    let qis: Vec<QiColumn> = shapes
        .iter()
        .enumerate()
        .map(|(a, &(leaves, height, numeric))| {
            let h = Arc::new(random_hierarchy(&format!("q{a}"), leaves, height, numeric, cuts));
            let codes = rows.iter().map(|(r, _)| (r.rotate_left(a as u32 * 8) as usize % leaves) as u32).collect();
            QiColumn { name: format!("q{a}"), hierarchy: h, codes }
        })
        .collect();
    let sens = (sensitive > 0).then(|| SensitiveColumn {
        name: "s".into(),
        values: (0..sensitive).map(|i| format!("s{i}")).collect(),
        codes: rows.iter().map(|(r, _)| (r.rotate_right(5) as usize % sensitive) as u32).collect(),
    });
    FrequencyTable::from_parts(qis, sens, rows.iter().map(|r| r.1).collect()).unwrap()
}

/// Run a statement and collect its result; panics with the statement on error.
pub async fn rows(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The error a statement must fail with (at planning or execution).
pub async fn err(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.collect().await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error from {sql}"),
        },
    }
}

/// The first column of a result as text, row by row (NULL as `NULL`).
pub async fn texts(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in rows(ctx, sql).await {
        let c = cast(b.column(0), &DataType::Utf8).unwrap();
        out.extend(c.as_string::<i32>().iter().map(|v| v.unwrap_or("NULL").to_string()));
    }
    out
}

/// The first value of a one-row result, as an integer (any numeric type).
pub async fn int(ctx: &SessionContext, sql: &str) -> i64 {
    let b = rows(ctx, sql).await;
    let c = cast(b[0].column(0), &DataType::Float64).unwrap();
    c.as_primitive::<Float64Type>().value(0) as i64
}

/// A file in a temporary folder of its own. One folder per call, not per process: the tests of
/// one binary run on parallel threads, and two writing the same name (`sex.csv`) into a shared
/// folder let one read the other's file while it was being truncated ("hierarchy is empty").
pub fn temp_file(name: &str, text: &str) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("anonfusion-test-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Expand a random frequency table into a source table `t` with declared roles.
pub fn register_random(ctx: &SessionContext, registry: &anonfusion::Registry, ft: &anonfusion::encode::FrequencyTable) {
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    let repeat = |r: usize| ft.counts[r] as usize;
    for q in &ft.qis {
        let h = &q.hierarchy;
        if h.is_numeric() {
            let v: Vec<i64> =
                (0..ft.len()).flat_map(|r| vec![h.leaf_value(q.codes[r]).unwrap() as i64; repeat(r)]).collect();
            fields.push(Field::new(&q.name, DataType::Int64, false));
            cols.push(Arc::new(Int64Array::from(v)));
        } else {
            let v: Vec<&str> = (0..ft.len()).flat_map(|r| vec![h.label(0, q.codes[r]); repeat(r)]).collect();
            fields.push(Field::new(&q.name, DataType::Utf8, false));
            cols.push(Arc::new(StringArray::from(v)));
        }
    }
    let s = ft.sensitive.as_ref().unwrap();
    let v: Vec<&str> = (0..ft.len()).flat_map(|r| vec![s.values[s.codes[r] as usize].as_str(); repeat(r)]).collect();
    fields.push(Field::new("s", DataType::Utf8, false));
    cols.push(Arc::new(StringArray::from(v)));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
    ctx.deregister_table("t").unwrap();
    ctx.register_batch("t", batch).unwrap();
    let mut meta = TableMeta::default();
    for q in &ft.qis {
        meta.roles.push((q.name.clone(), Role::QuasiIdentifier));
        meta.hierarchies.insert(q.name.clone(), q.hierarchy.clone());
    }
    meta.roles.push(("s".into(), Role::Sensitive));
    registry.set("t", meta);
}

/// Run SQL from a (non-async) property test on its own runtime.
pub fn run(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Vec<RecordBatch>> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async { ctx.sql(sql).await?.collect().await })
}

/// The h-ceiling paper's Table 1 (name, age, sex, zipcode, disease), as SQL VALUES rows.
pub const TABLE1_ROWS: &str = "('Mary', 37, 'F', 22071, 'Pneumonia'), ('Alice', 35, 'F', 22098, 'Diabetes'), \
     ('Betsy', 36, 'F', 23061, 'Anemia'), ('David', 61, 'M', 55107, 'Pneumonia'), \
     ('Tom', 63, 'M', 55099, 'Diabetes'), ('James', 66, 'M', 55324, 'Diabetes'), ('Eric', 62, 'M', 55229, 'Pneumonia')";

/// Upper-tail standard normal quantile for p = 1e-4.
const Z_1E4: f64 = 3.719_016_485;

/// The chi-square critical value at p = 1e-4 by the Wilson–Hilferty approximation (as in
/// tests/dp.rs).
pub fn critical_value(df: usize) -> f64 {
    let k = df as f64;
    let v = 2.0 / (9.0 * k);
    k * (1.0 - v + Z_1E4 * v.sqrt()).powi(3)
}

/// Pearson's statistic for observed counts against probabilities (summing to 1), adjacent
/// categories merged until each bin expects at least 5 (as in tests/dp.rs). Returns the
/// statistic and the degrees of freedom.
pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> (f64, usize) {
    assert_eq!(observed.len(), probabilities.len());
    let total: u64 = observed.iter().sum();
    let mut bins: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&obs, &p) in observed.iter().zip(probabilities) {
        o += obs as f64;
        e += p * total as f64;
        if e >= 5.0 {
            bins.push((o, e));
            (o, e) = (0.0, 0.0);
        }
    }
    match bins.last_mut() {
        Some(last) => {
            last.0 += o;
            last.1 += e;
        }
        None => bins.push((o, e)),
    }
    assert!(bins.len() >= 2, "a goodness-of-fit test needs at least two bins");
    let stat = bins.iter().map(|(o, e)| (o - e) * (o - e) / e).sum();
    (stat, bins.len() - 1)
}

/// Asserts the fit at p = 1e-4 and returns (statistic, df, critical value).
pub fn assert_fits(what: &str, observed: &[u64], probabilities: &[f64]) -> (f64, usize, f64) {
    let (stat, df) = chi_square(observed, probabilities);
    let crit = critical_value(df);
    eprintln!("{what}: chi2 = {stat:.2}, df = {df}, critical(1e-4) = {crit:.2}");
    assert!(stat < crit, "{what}: chi2 {stat:.2} >= {crit:.2} (df {df})");
    (stat, df, crit)
}

/// Roles and hierarchies of a frequency table's columns (quasi-identifiers, sensitive `s`), as
/// `register_random` declares them.
pub fn meta_of(ft: &anonfusion::encode::FrequencyTable) -> TableMeta {
    let mut meta = TableMeta::default();
    for q in &ft.qis {
        meta.roles.push((q.name.clone(), Role::QuasiIdentifier));
        meta.hierarchies.insert(q.name.clone(), q.hierarchy.clone());
    }
    if let Some(s) = &ft.sensitive {
        meta.roles.push((s.name.clone(), Role::Sensitive));
    }
    meta
}

/// Allow seeded DP calls in `ctx` (`SET anonfusion.seeded_dp = true`): tests that compare
/// releases by seed; a release made so says it is not private.
#[allow(dead_code)]
pub fn allow_seeded_dp(ctx: &SessionContext) {
    ctx.state_ref().write().config_mut().options_mut().set("anonfusion.seeded_dp", "true").unwrap();
}

/// An 8-record random table `t` (sensitive values s0, s1, s2) in a fresh session where seeded DP
/// is allowed and `t` has a privacy budget of `budget`: the table of the huge-ε tests.
pub async fn eight_records(budget: u32) -> SessionContext {
    let records: Vec<(u32, u64)> = (0..8u32).map(|i| (i.wrapping_mul(2_654_435_761), 1)).collect();
    let ft = random_table(&[(6, 2, true), (5, 2, false)], &[1, 2, 3], &records, 3);
    let ctx = SessionContext::new();
    let registry = anonfusion::register_all(&ctx);
    register_random(&ctx, &registry, &ft);
    allow_seeded_dp(&ctx);
    rows(&ctx, &format!("SELECT * FROM set_privacy_budget('t', {budget})")).await;
    ctx
}
