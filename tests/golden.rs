//! Golden outputs: a seeded call of every method on bundled tables, every table it registers
//! (release, report, catalog, side tables) written as text under `tests/golden/` and compared
//! byte for byte, so a refactor proves it changes no release. Rows are compared as a multiset
//! (sorted, identical rows counted): a release's row order is a shuffle, not content. Columns
//! that measure the run rather than its result are left out ([`run_dependent`]); everything
//! else, Arrow field metadata included, must match.
//!
//! After a change that is meant to alter an output, regenerate and review the diff:
//! `ANONFUSION_BLESS=1 cargo test --test golden`.

mod common;

use common::rows;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Tables loaded before the calls: sources, not outputs.
const SOURCES: [&str; 3] = ["adult_5k", "nps", "informs"];

const SETUP: [&str; 5] = [
    "SELECT * FROM load_dataset('adult', 5000, 1, 'adult_5k')",
    "SELECT * FROM load_dataset('nps', 20000, 7)",
    "SELECT * FROM load_dataset('informs', 4000, 1)",
    "SELECT * FROM set_privacy_budget('nps', 100.0, 'delta=1e-6')",
    "SELECT * FROM load_constraints('informs', 'UC1')",
];

/// One seeded call per method and mode; the golden file is named after the output table.
const CALLS: [(&str, &str); 17] = [
    ("adult_g", "SELECT COUNT(*) FROM generalize('adult_5k', 'adult_g', '1,0,0,1,1,1,1')"),
    ("adult_k5", "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'adult_k5', 5)"),
    ("adult_l3", "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'adult_l3', 5, 'suppression=2, distinct_l=3')"),
    ("adult_t", "SELECT COUNT(*) FROM kanon_anonymize('adult_5k', 'adult_t', 5, 'metric=ncp, suppression=2, t=0.15')"),
    ("adult_h", "SELECT COUNT(*) FROM hceil_anonymize('adult_5k', 'adult_h', 5, 0.3, 'seed=1')"),
    ("adult_hs", "SELECT COUNT(*) FROM hceil_anonymize('adult_5k', 'adult_hs', 5, NULL, 'seed=1')"),
    ("adult_e", "SELECT COUNT(*) FROM entropy_anonymize('adult_5k', 'adult_e', 3, 'seed=1, diagnostics=true')"),
    ("nps_k10", "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k10', 10)"),
    ("nps_h", "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.3, 'seed=1')"),
    ("nps_ipa", "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0, 'seed=1')"),
    ("nps_node", "SELECT COUNT(*) FROM ipa_release('nps', 'nps_node', 1.0, 'partition=node, seed=2')"),
    ("nps_approx", "SELECT COUNT(*) FROM ipa_release('nps', 'nps_approx', 1.0, 'guarantee=approx, seed=3')"),
    ("nps_hist", "SELECT COUNT(*) FROM dp_histogram('nps', 'nps_hist', 0.5, '2,0,5,0,0', 'seed=4')"),
    ("adult_rec", "SELECT COUNT(*) FROM as_records('adult_5k', 'adult_rec', 'adult_l3', 'seed=6')"),
    ("nps_syn", "SELECT COUNT(*) FROM dp_synthesize('nps', 'nps_syn', 1.0, 'seed=5')"),
    ("informs_a", "SELECT COUNT(*) FROM artuc('informs', 'informs_a', 'informs_uc1', 10, 2, 0.2, 200000, 'seed=1')"),
    ("informs_r", "SELECT COUNT(*) FROM rmr('informs', 'informs_r', 10, 2, 0.2, 200000, 'seed=1')"),
];

/// Report columns that depend on the machine, not the inputs: times (`*_ms`) and ArtUC's count
/// of GenDiag runs (its work queue on all cores skips pairs a finished run already beats, so
/// how many run depends on the cores and their timing; the release does not).
fn run_dependent(column: &str) -> bool {
    column.ends_with("_ms") || column == "gendiag_runs"
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Every table the catalog holds, by name.
async fn table_names(ctx: &SessionContext) -> Vec<String> {
    let batches = rows(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").await;
    let mut names: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(0).as_string::<i32>();
            (0..c.len()).map(|i| c.value(i).to_string()).collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names
}

/// `table` as text: its schema (names, types, field metadata in key order), then its rows
/// sorted, each prefixed by how many times it occurs. Timing columns are left out.
async fn dump(ctx: &SessionContext, table: &str) -> String {
    let df = ctx.table(table).await.unwrap();
    let schema = df.schema().as_arrow().clone();
    let kept: Vec<usize> = (0..schema.fields().len()).filter(|&i| !run_dependent(schema.field(i).name())).collect();
    let mut out = format!("## {table}\n");
    for &i in &kept {
        let f = schema.field(i);
        let meta: BTreeMap<_, _> = f.metadata().iter().collect();
        out += &format!("# {}: {} {:?}\n", f.name(), f.data_type(), meta);
    }
    let table_meta: BTreeMap<_, _> = schema.metadata().iter().collect();
    out += &format!("# table metadata {table_meta:?}\n");
    let batches: Vec<RecordBatch> = df.collect().await.unwrap();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let options = FormatOptions::default().with_null("NULL");
    for b in &batches {
        let formatters: Vec<ArrayFormatter> =
            kept.iter().map(|&i| ArrayFormatter::try_new(b.column(i).as_ref(), &options).unwrap()).collect();
        for r in 0..b.num_rows() {
            let line: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            *counts.entry(line.join("\t")).or_default() += 1;
        }
    }
    for (line, n) in counts {
        out += &format!("{n}\t{line}\n");
    }
    out
}

/// Runs every call in one session and returns, per call, the text of every table it registered.
async fn outputs() -> Vec<(String, String)> {
    let ctx = anonfusion::new_session();
    common::allow_seeded_dp(&ctx);
    for sql in SETUP {
        rows(&ctx, sql).await;
    }
    let mut seen = table_names(&ctx).await;
    let mut out = Vec::new();
    for (name, sql) in CALLS {
        rows(&ctx, sql).await;
        let now = table_names(&ctx).await;
        let mut text = String::new();
        for t in now.iter().filter(|t| !seen.contains(t) && !SOURCES.contains(&t.as_str())) {
            text += &dump(&ctx, t).await;
        }
        out.push((name.to_string(), text));
        seen = now;
    }
    out
}

#[tokio::test]
async fn every_method_gives_its_golden_output() {
    let dir = golden_dir();
    let bless = std::env::var_os("ANONFUSION_BLESS").is_some();
    let mut differ = Vec::new();
    for (name, text) in outputs().await {
        let path = dir.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if want != text {
            let line = want
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(text.lines().count()));
            differ.push(format!("{name} (first difference at line {})", line + 1));
        }
    }
    assert!(
        differ.is_empty(),
        "outputs differ from tests/golden/: {differ:?} (ANONFUSION_BLESS=1 regenerates them; review the diff)"
    );
}
