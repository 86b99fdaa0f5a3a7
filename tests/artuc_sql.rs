//! artuc through SQL: the worked example (Figure 1a, Table 4 → Figure 3), the any-time
//! trajectory and a chosen step, the Baseline, bad input that registers nothing, and the SQL
//! call publishing what the library call publishes.

#[path = "artuc/support.rs"]
mod support;

use anonfusion::datasets;
use anonfusion::datasets::rt::{RtPreset, utility_constraints};
use anonfusion::methods::artuc::{ArtucConfig, Source, Variant, call, release};
use anonfusion::progress::Silent;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;
use support::*;

async fn float(ctx: &SessionContext, sql: &str) -> f64 {
    let b = collect(ctx, sql).await;
    cast(b[0].column(0), &DataType::Float64).unwrap().as_primitive::<Float64Type>().value(0)
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => df.collect().await.err().map(|e| e.to_string()).unwrap_or_else(|| panic!("expected an error: {sql}")),
    }
}

fn session() -> SessionContext {
    let (ctx, _registry) = figure_1a().session();
    ctx.register_batch("u", table_4_batch()).unwrap();
    ctx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figure_3_through_sql() {
    let ctx = session();
    let n = float(&ctx, "SELECT COUNT(*) FROM artuc('src', 'r', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    assert_eq!(n, 8.0);
    // NCP 4.2708 / 8 (the paper's 4.28), one code suppressed (record 5's 494.1), three clusters.
    assert!((float(&ctx, "SELECT ncp_sum FROM r_report").await - 4.2708).abs() < 1e-3);
    assert_eq!(float(&ctx, "SELECT suppressed_codes FROM r_report").await, 1.0);
    assert_eq!(float(&ctx, "SELECT clusters FROM r_report").await, 3.0);
    // UL's two terms (Fig. 15b): the suppressed 494.1 costs s(r) = 1 over 8 records.
    assert_eq!(float(&ctx, "SELECT ul_sup FROM r_report").await, 0.125);
    let (ul, ul_gen) = (float(&ctx, "SELECT ul FROM r_report").await, float(&ctx, "SELECT ul_gen FROM r_report").await);
    assert!(ul_gen > 0.0 && (ul_gen + 0.125 - ul).abs() < 1e-12, "UL {ul}, UL_gen {ul_gen}");
    let verified = pretty_format_batches(
        &collect(&ctx, "SELECT check, holds, detail FROM verify_release('src', 'r', 'km=2:2, constraints=u')").await,
    )
    .unwrap()
    .to_string();
    assert!(!verified.contains("| false"), "{verified}");
    let measured = float(&ctx, "SELECT value FROM anon_metrics('src', 'r') WHERE metric = 'ncp'").await;
    assert!((measured - float(&ctx, "SELECT ncp FROM r_report").await).abs() < 1e-9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anytime_registers_its_trajectory_and_releases_a_step() {
    let ctx = session();
    collect(&ctx, "SELECT COUNT(*) FROM artuc('src', 'a', 'u', 2, 2, 0.6, 2, 'pick=first, variant=anytime')").await;
    // NCP 0.323 → 0.534 → 0.75 (docs/artuc.md); within δ = 0.6 the last step is 1, Algorithm 1's.
    assert_eq!(float(&ctx, "SELECT COUNT(*) FROM a_trajectory").await, 3.0);
    assert_eq!(float(&ctx, "SELECT step FROM a_report").await, 1.0);
    assert!((float(&ctx, "SELECT ncp FROM a_report").await - 0.534).abs() < 1e-3);
    // The owner may release any step, beyond δ too: every step is (k,k^m)-anonymous.
    collect(&ctx, "SELECT COUNT(*) FROM artuc('src', 'a2', 'u', 2, 2, 0.6, 2, 'pick=first, variant=anytime, step=2')")
        .await;
    assert!((float(&ctx, "SELECT ncp FROM a2_report").await - 0.75).abs() < 1e-3);
    let v = pretty_format_batches(
        &collect(&ctx, "SELECT holds FROM verify_release('src', 'a2', 'km=2:2, constraints=u')").await,
    )
    .unwrap()
    .to_string();
    assert!(!v.contains("false"), "{v}");
    // No step within the limits: the error says where the trajectory starts.
    let e = error(&ctx, "SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.1, 2, 'pick=first, variant=anytime')").await;
    assert!(e.contains("no step") && e.contains("NCP is 0.32"), "{e}");
    assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_trajectory").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baseline_pre_generalizes() {
    let ctx = session();
    collect(&ctx, "SELECT COUNT(*) FROM artuc('src', 'b', 'u', 2, 2, 1.0, 2, 'variant=baseline')").await;
    assert!((float(&ctx, "SELECT ncp FROM b_report").await - 0.773).abs() < 1e-3);
    let text = pretty_format_batches(&collect(&ctx, "SELECT variant FROM b_report").await).unwrap().to_string();
    assert!(text.contains("baseline"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_named_and_registers_nothing() {
    let ctx = session();
    // u1 and u4 overlap in their demographics with different elements: a conflict.
    ctx.register_batch(
        "conflict",
        constraints_batch(
            &["origin", "gender"],
            &[
                (19, 60, s(&["All", "All"]), s(&["458.1", "458.21", "053.20", "053.71", "494.1", "493.2"])),
                (51, 51, s(&["Africa", "Male"]), s(&["493.2"])),
            ],
        ),
    )
    .unwrap();
    ctx.register_batch(
        "partial",
        constraints_batch(&["origin", "gender"], &[(19, 30, s(&["All", "All"]), s(&["494.1"]))]),
    )
    .unwrap();
    let cases = [
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 0, 0.6, 2)", "m"),
        ("SELECT * FROM artuc('src', 'x', 'u', 9, 2, 0.6, 2)", "k"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 1.5, 2)", "delta"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.6, -1)", "epsilon"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.3, 2, 'pick=first')", "NCP"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.6, 0, 'pick=first')", "suppress"),
        ("SELECT * FROM artuc('src', 'x', 'nope', 2, 2, 0.6, 2)", "nope"),
        ("SELECT * FROM artuc('src', 'x', 'conflict', 2, 2, 0.6, 2)", "conflict"),
        ("SELECT * FROM artuc('src', 'x', 'partial', 2, 2, 0.6, 2)", "cover"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.6, 2, 'variant=best')", "variant"),
        ("SELECT * FROM artuc('src', 'x', 'u', 2, 2, 0.6, 2, 'step=1')", "step"),
    ];
    for (sql, needle) in cases {
        let e = error(&ctx, sql).await;
        assert!(e.to_lowercase().contains(&needle.to_lowercase()), "{sql}: {e}");
        assert!(!ctx.table_exist("x").unwrap() && !ctx.table_exist("x_report").unwrap(), "{sql}");
    }
}

/// The release's rows as sorted lines (the SQL release's rows are shuffled).
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(batches).unwrap().to_string();
    let mut lines: Vec<String> = text.lines().filter(|l| l.starts_with("| ")).skip(1).map(String::from).collect();
    lines.sort();
    lines
}

/// The SQL call and the library call (`call`, as examples/artuc_scale and the bench run it)
/// publish the same release on the same seeded table. The source has several partitions and
/// the session re-chunks them into 97-row batches: the SQL call once read one batch of each
/// partition in turn, which is not the table's order once a scan re-chunks, and on the full
/// EHRD-like table published 228 clusters against the library's 235.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_call_publishes_the_library_release() {
    let ds = datasets::load("ehrd", Some(2_000), None).unwrap();
    let u = utility_constraints(RtPreset::Ehrd, "UC1").unwrap();
    let all = datafusion::arrow::compute::concat_batches(&ds.batches[0].schema(), &ds.batches).unwrap();
    let pieces: Vec<RecordBatch> = (0..7).map(|i| all.slice(i * 300, (2_000 - i * 300).min(300))).collect();
    let parts = vec![pieces[..3].to_vec(), pieces[3..5].to_vec(), pieces[5..].to_vec()];
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_batch_size(97).with_target_partitions(3));
    let registry = anonfusion::register_all(&ctx);
    ctx.register_table("ehrd", Arc::new(MemTable::try_new(all.schema(), parts).unwrap())).unwrap();
    registry.set("ehrd", ds.meta.clone());
    ctx.register_batch("uc1", u.clone()).unwrap();
    collect(
        &ctx,
        &format!(
            "SELECT COUNT(*) FROM artuc('ehrd', 'ea', 'uc1', 10, 2, 0.04, {}, 'seed=7, small_groups=withhold')",
            i64::MAX
        ),
    )
    .await;

    let config = ArtucConfig::new(10, 2, 0.04, u64::MAX).with_options("seed=7, small_groups=withhold").unwrap();
    let source = Source { name: "ehrd", meta: &ds.meta, batches: &ds.batches };
    let out = call(source, ("uc1", &[u]), &config, Variant::Artuc, &Silent).unwrap();
    let m = out.result.measures;
    assert_eq!(float(&ctx, "SELECT clusters FROM ea_report").await, m.clusters as f64);
    assert_eq!(float(&ctx, "SELECT suppressed_codes FROM ea_report").await, m.suppressed_codes as f64);
    assert_eq!(float(&ctx, "SELECT ul_sum FROM ea_report").await, m.ul_sum);
    let library = release::release(&out.table, &out.result).unwrap();
    assert_eq!(rows(&collect(&ctx, "SELECT * FROM ea").await), rows(&library.batches));
}
