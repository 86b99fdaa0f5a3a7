//! Every table a session publishes (releases, reports, catalogs, trajectories, constraint sets,
//! the loaded datasets) survives `COPY ... TO` CSV and Parquet and reading back: the Parquet
//! copy holds the same rows, and the engine reads its own files back where it reads releases
//! and catalogs (anon_metrics, truthful_view, verify_release, query_error) with the same
//! answers. A catalog's `class_ids` written to CSV as `1;14` was refused ("negative count or no
//! class ids"), and a catalog read back from Parquet had lost the metadata naming its sensitive
//! column (issue 37).

mod common;

use common::{rows, texts};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;

/// Every row of a result as one line of text, sorted: equal multisets of rows, whatever the
/// column types (a Parquet string reads back as Utf8View).
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let fmts: Vec<ArrayFormatter> =
            b.columns().iter().map(|c| ArrayFormatter::try_new(c, &opts).unwrap()).collect();
        for r in 0..b.num_rows() {
            out.push(fmts.iter().map(|f| f.value(r).to_string()).collect::<Vec<_>>().join(" | "));
        }
    }
    out.sort();
    out
}

async fn table_lines(ctx: &SessionContext, sql: &str) -> Vec<String> {
    lines(&rows(ctx, sql).await)
}

/// The methods' calls, small and seeded: every kind of published table.
const CALLS: &[&str] = &[
    "SELECT * FROM load_dataset('adult')",
    "SELECT COUNT(*) FROM generalize('adult', 'gen', '1,0,0,1,1,1,1')",
    "SELECT COUNT(*) FROM kanon_anonymize('adult', 'k5', 5, 'suppression=2')",
    "SELECT COUNT(*) FROM hceil_anonymize('adult', 'hc', 5, 0.3, 'seed=1')",
    "SELECT COUNT(*) FROM entropy_anonymize('adult', 'ent', 3, 'seed=1')",
    "SELECT * FROM load_dataset('nps', 7000, 7)",
    "SELECT COUNT(*) FROM ipa_release('nps', 'ipa', 1.0, 'seed=3')",
    "SELECT COUNT(*) FROM dp_histogram('nps', 'hist', 0.5, '2,0,5,0,0', 'seed=3')",
    "SELECT * FROM load_dataset('informs', 4000, 1)",
    "SELECT COUNT(*) FROM load_constraints('informs', 'UC1')",
    "SELECT COUNT(*) FROM artuc('informs', 'art', 'informs_uc1', 10, 2, 0.2, 200000, 'seed=1, variant=anytime')",
    "SELECT COUNT(*) FROM rmr('informs', 'rm', 10, 2, 0.2, 200000, 'seed=1')",
];

/// Releases with their original and catalog, as the readers take them.
const RELEASES: &[(&str, &str, Option<&str>)] = &[
    ("gen", "adult", None),
    ("k5", "adult", None),
    ("hc", "adult", Some("hc_catalog")),
    ("ent", "adult", None),
    ("ipa", "nps", None),
    ("art", "informs", None),
    ("rm", "informs", None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_published_table_reads_back_from_csv_and_parquet() {
    let ctx = anonfusion::new_session();
    common::allow_seeded_dp(&ctx);
    for sql in CALLS {
        rows(&ctx, sql).await;
    }
    let tables = texts(
        &ctx,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    )
    .await;
    for t in ["hc_catalog", "hc_report", "art_trajectory", "informs_uc1", "ipa_report", "hist"] {
        assert!(tables.iter().any(|x| x == t), "{t} was not published: {tables:?}");
    }
    let dir = std::env::temp_dir().join(format!("anonfusion-round-trip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for t in &tables {
        for (ext, stored) in [("csv", "CSV"), ("parquet", "PARQUET")] {
            let file = dir.join(format!("{t}.{ext}"));
            rows(&ctx, &format!("COPY {t} TO '{}'", file.display())).await;
            let options = if ext == "csv" { " OPTIONS ('format.has_header' 'true')" } else { "" };
            rows(
                &ctx,
                &format!("CREATE EXTERNAL TABLE {t}_{ext} STORED AS {stored} LOCATION '{}'{options}", file.display()),
            )
            .await;
            let (n, back) = (format!("SELECT COUNT(*) FROM {t}"), format!("SELECT COUNT(*) FROM {t}_{ext}"));
            assert_eq!(texts(&ctx, &n).await, texts(&ctx, &back).await, "{t} through {ext}: rows");
        }
        // Parquet keeps the values themselves.
        assert_eq!(
            table_lines(&ctx, &format!("SELECT * FROM {t}")).await,
            table_lines(&ctx, &format!("SELECT * FROM {t}_parquet")).await,
            "{t} through Parquet"
        );
    }

    // The engine reads its own files back as it reads the tables it published.
    for (release, original, catalog) in RELEASES {
        let metrics = |r: &str, c: Option<String>| {
            let c = c.map_or(String::new(), |c| format!(", '{c}'"));
            format!("SELECT metric, ROUND(value, 9) FROM anon_metrics('{original}', '{r}'{c})")
        };
        let want = table_lines(&ctx, &metrics(release, catalog.map(String::from))).await;
        for ext in ["csv", "parquet"] {
            let back = format!("{release}_{ext}");
            let got = table_lines(&ctx, &metrics(&back, catalog.map(|c| format!("{c}_{ext}")))).await;
            assert_eq!(want, got, "anon_metrics on {release} read back from {ext}");
        }
    }
    // The catalog: verify_release and truthful_view read it back; from Parquet it still names
    // its sensitive column, from CSV (no metadata) the column is given.
    let check =
        |r: &str, c: &str| format!("SELECT holds FROM verify_release('adult', '{r}', 'k=5, h=0.3, catalog', '{c}')");
    let want = table_lines(&ctx, &check("hc", "hc_catalog")).await;
    assert!(!want.iter().any(|l| l.contains("false")), "{want:?}");
    for ext in ["csv", "parquet"] {
        assert_eq!(want, table_lines(&ctx, &check(&format!("hc_{ext}"), &format!("hc_catalog_{ext}"))).await, "{ext}");
    }
    let view = texts(&ctx, "SELECT COUNT(*) FROM truthful_view('hc', 'hc_catalog')").await;
    let parquet = texts(&ctx, "SELECT COUNT(*) FROM truthful_view('hc_parquet', 'hc_catalog_parquet')").await;
    let csv = texts(&ctx, "SELECT COUNT(*) FROM truthful_view('hc_csv', 'hc_catalog_csv', 'occupation')").await;
    assert_eq!((&view, &view), (&parquet, &csv));
    // The query harness estimates from the read-back release and catalog as from the tables.
    let q = |r: &str, c: &str| {
        format!(
            "SELECT group_key, estimate FROM query_error('SELECT sex, COUNT(*) FROM adult GROUP BY sex', \
             'adult', '{r}', '{c}')"
        )
    };
    let want = table_lines(&ctx, &q("hc", "hc_catalog")).await;
    for ext in ["csv", "parquet"] {
        assert_eq!(want, table_lines(&ctx, &q(&format!("hc_{ext}"), &format!("hc_catalog_{ext}"))).await, "{ext}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
