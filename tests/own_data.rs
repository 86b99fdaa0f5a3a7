//! A custodian's own table, without hand-written glue: hierarchies built from the column's
//! values (flat, masking, dates), the bundled ICD-9-CM hierarchy attached by name (with the
//! retired codes of earlier versions), integer-typed codes refused with the fix, roles declared
//! in steps, and the SQL scalar functions one reaches for to mask and pseudonymize.

mod common;
#[path = "artuc/support.rs"]
mod support;

use common::{err, int, rows, temp_file, texts};

use anonfusion::new_session;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;

/// The row of `hierarchy(t, col)` whose leaf is `leaf`, level by level.
async fn path(ctx: &SessionContext, table: &str, column: &str, leaf: &str) -> Vec<String> {
    let b = rows(ctx, &format!("SELECT * FROM hierarchy('{table}', '{column}') WHERE level_0 = '{leaf}'")).await;
    let b = b.iter().find(|b| b.num_rows() > 0).unwrap_or_else(|| panic!("no leaf {leaf}"));
    (0..b.num_columns())
        .map(|j| cast(b.column(j), &DataType::Utf8).unwrap().as_string::<i32>().value(0).to_string())
        .collect()
}

async fn patients(ctx: &SessionContext) {
    rows(
        ctx,
        "CREATE TABLE patients AS SELECT column1 AS zip, column2 AS sex, CAST(column3 AS DATE) AS admitted, \
                column4 AS zip_number, column5 AS disease \
         FROM (VALUES ('02139', 'F', '2021-03-05', 2139, 'flu'), ('02138', 'M', '2019-12-31', 2138, 'asthma'), \
                      ('02141', NULL, '2021-03-20', 2141, 'flu'))",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masking_flat_and_date_hierarchies_are_built_from_the_column() {
    let ctx = new_session();
    patients(&ctx).await;
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'zip=qi, sex=qi, admitted=qi, disease=sensitive')").await;

    rows(&ctx, "SELECT * FROM masking_hierarchy('patients', 'zip', 'right', 1)").await;
    assert_eq!(path(&ctx, "patients", "zip", "02139").await, ["02139", "0213*", "021**", "02***", "0****", "*****"]);
    rows(&ctx, "SELECT * FROM masking_hierarchy('patients', 'zip', 'left', 2)").await;
    assert_eq!(path(&ctx, "patients", "zip", "02141").await, ["02141", "**141", "****1", "*****"]);

    // NULL is its own leaf, kept apart up to the root.
    rows(&ctx, "SELECT * FROM flat_hierarchy('patients', 'sex')").await;
    assert_eq!(
        texts(&ctx, "SELECT level_0 FROM hierarchy('patients', 'sex') ORDER BY level_0").await,
        ["F", "M", "NULL"]
    );
    assert_eq!(texts(&ctx, "SELECT DISTINCT level_1 FROM hierarchy('patients', 'sex')").await, ["*"]);

    rows(&ctx, "SELECT * FROM date_hierarchy('patients', 'admitted')").await;
    assert_eq!(path(&ctx, "patients", "admitted", "2019-12-31").await, ["2019-12-31", "2019-12", "2019", "2010s", "*"]);
    assert_eq!(
        texts(&ctx, "SELECT hierarchy FROM anon_roles WHERE table_name = 'patients' AND column_name = 'admitted'")
            .await,
        ["categorical"]
    );
    // The built hierarchies release like loaded ones.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM generalize('patients', 'patients_g', '3,1,3')").await, 3);
    assert_eq!(texts(&ctx, "SELECT DISTINCT admitted FROM patients_g ORDER BY 1").await, ["2010s", "2020s"]);

    let e = err(&ctx, "SELECT * FROM date_hierarchy('patients', 'zip')").await;
    assert!(e.contains("'zip'") && e.contains("not a DATE"), "{e}");
    let e = err(&ctx, "SELECT * FROM masking_hierarchy('patients', 'zip', 'middle')").await;
    assert!(e.contains("'middle'") && e.contains("right"), "{e}");
    let e = err(&ctx, "SELECT * FROM masking_hierarchy('patients', 'zip', 'right', 0)").await;
    assert!(e.contains("step"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codes_read_as_integers_are_refused_with_the_fix() {
    let ctx = new_session();
    patients(&ctx).await;
    let e = err(&ctx, "SELECT * FROM masking_hierarchy('patients', 'zip_number')").await;
    assert!(e.contains("'zip_number'") && e.contains("integer") && e.contains("leading zeros"), "{e}");
    assert!(e.contains("zip_number VARCHAR") && e.contains("lpad"), "{e}");
    let file = temp_file("zips.csv", "02139;021**;*\n02138;021**;*\n02141;021**;*\n");
    let e =
        err(&ctx, &format!("SELECT * FROM load_hierarchy('patients', 'zip_number', '{file}', 'categorical')")).await;
    assert!(e.contains("integer") && e.contains("leading zeros"), "{e}");
    // Nothing was attached; the text column takes the same file.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM anon_hierarchies WHERE table_name = 'patients'").await, 0);
    rows(&ctx, &format!("SELECT * FROM load_hierarchy('patients', 'zip', '{file}')")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_icd9_hierarchy_attaches_by_name_with_retired_codes() {
    let ctx = new_session();
    // Delimited code strings; 2554, 2765 and 4582 are codes of earlier ICD-9-CM versions.
    rows(
        &ctx,
        "CREATE TABLE visits AS SELECT column1 AS visit, column2 AS codes \
         FROM (VALUES ('v1', '25000 4019'), ('v2', '2554;2765'), ('v3', '4582,486'))",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('visits', 'visit=identifier, codes=set_valued')").await;
    rows(&ctx, "SELECT * FROM load_hierarchy('visits', 'codes', 'bundled:icd9')").await;
    assert_eq!(path(&ctx, "visits", "codes", "2554").await, ["2554", "255", "249-259", "240-279", "*"]);
    assert_eq!(path(&ctx, "visits", "codes", "25000").await, ["25000", "250", "249-259", "240-279", "*"]);
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM hierarchy('visits', 'codes')").await, 14_567 + 218);

    rows(&ctx, "CREATE TABLE odd AS SELECT column1 AS codes FROM (VALUES ('25000 NOTACODE'))").await;
    rows(&ctx, "SELECT * FROM declare_roles('odd', 'codes=set_valued')").await;
    let e = err(&ctx, "SELECT * FROM load_hierarchy('odd', 'codes', 'bundled:icd9')").await;
    // Named by column and count, never by the original value (issue 18: no membership oracle).
    assert!(e.contains("codes") && e.contains("1 distinct") && !e.contains("NOTACODE"), "{e}");
    // unknown_codes=parent: a code outside the hierarchy becomes a leaf under the category its
    // longest prefix names; a category used as a code sits under itself. A code without such a
    // prefix is still an error.
    rows(&ctx, "CREATE TABLE icu AS SELECT column1 AS codes FROM (VALUES ('585 25099'), ('4019'))").await;
    rows(&ctx, "SELECT * FROM declare_roles('icu', 'codes=set_valued')").await;
    let e = err(&ctx, "SELECT * FROM load_hierarchy('icu', 'codes', 'bundled:icd9')").await;
    assert!(e.contains("2 distinct") && !e.contains("25099"), "{e}");
    rows(&ctx, "SELECT * FROM load_hierarchy('icu', 'codes', 'bundled:icd9', 'unknown_codes=parent')").await;
    assert_eq!(path(&ctx, "icu", "codes", "585").await, ["585", "585", "580-589", "580-629", "*"]);
    assert_eq!(path(&ctx, "icu", "codes", "25099").await, ["25099", "250", "249-259", "240-279", "*"]);
    let e = err(&ctx, "SELECT * FROM load_hierarchy('odd', 'codes', 'bundled:icd9', 'unknown_codes=parent')").await;
    assert!(e.contains("1 distinct") && !e.contains("NOTACODE"), "{e}");
    let e = err(&ctx, "SELECT * FROM load_hierarchy('odd', 'codes', 'bundled:icd9', 'unknown_codes=guess')").await;
    // The option named with its values, from its declaration.
    assert!(e.contains("'unknown_codes': must be one of error, parent, suppress"), "{e}");
    let e = err(&ctx, "SELECT * FROM load_hierarchy('odd', 'codes', 'bundled:icd11')").await;
    assert!(e.contains("no bundled hierarchy 'icd11'") && e.contains("icd9"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declare_roles_merges_unless_reset() {
    let ctx = new_session();
    patients(&ctx).await;
    let role = |c: &'static str| {
        let ctx = ctx.clone();
        async move {
            texts(&ctx, &format!("SELECT role FROM anon_roles WHERE table_name = 'patients' AND column_name = '{c}'"))
                .await
                .join("")
        }
    };
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'zip=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'sex=qi')").await;
    // The second call named only sex: zip and disease keep their roles.
    assert_eq!(role("zip").await, "quasi_identifier");
    assert_eq!(role("disease").await, "sensitive");
    assert_eq!(role("sex").await, "quasi_identifier");
    assert_eq!(role("admitted").await, "insensitive");
    // A later call changes a named column's role.
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'zip=identifier', 'merge')").await;
    assert_eq!((role("zip").await, role("sex").await), ("identifier".into(), "quasi_identifier".into()));
    // reset: the call's declaration is the whole declaration.
    rows(&ctx, "SELECT * FROM declare_roles('patients', 'disease=sensitive', 'reset')").await;
    assert_eq!((role("zip").await, role("sex").await), ("insensitive".into(), "insensitive".into()));
    assert_eq!(role("disease").await, "sensitive");
    let e = err(&ctx, "SELECT * FROM declare_roles('patients', 'sex=qi', 'replace')").await;
    assert!(e.contains("'replace'") && e.contains("reset"), "{e}");
    assert_eq!(role("sex").await, "insensitive");
}

/// DataFusion's unicode, crypto, regex and datetime functions are compiled in: masking and
/// pseudonyms in plain SQL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn masking_and_pseudonym_functions_work_in_sql() {
    let ctx = new_session();
    let one = |sql: &'static str| {
        let ctx = ctx.clone();
        async move { texts(&ctx, sql).await.join("") }
    };
    assert_eq!(one("SELECT substr('02139', 1, 3)").await, "021");
    assert_eq!(one("SELECT left('02139', 2)").await, "02");
    assert_eq!(one("SELECT md5('abc')").await, "900150983cd24fb0d6963f7d28e17f72");
    assert_eq!(
        one("SELECT encode(sha256('abc'), 'hex')").await,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(one("SELECT regexp_replace('02139', '[0-9]{2}$', '**')").await, "021**");
    assert_eq!(one("SELECT CAST(date_trunc('month', TIMESTAMP '2021-03-05 10:00:00') AS DATE)").await, "2021-03-01");
}

/// artuc reads a code column given as a delimited string exactly as a list: one splitter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artuc_splits_a_delimited_code_string_like_a_list() {
    let figure = support::figure_1a();
    let (ctx, registry) = figure.session();
    ctx.register_batch("u", support::table_4_batch()).unwrap();
    rows(&ctx, "CREATE TABLE src_s AS SELECT * EXCLUDE (codes), array_to_string(codes, ';') AS codes FROM src").await;
    assert_eq!(texts(&ctx, "SELECT arrow_typeof(codes) FROM src_s LIMIT 1").await, ["Utf8"]);
    registry.set("src_s", figure.meta());
    let report = "SELECT records, clusters, suppressed_codes, ROUND(ncp_sum, 9) FROM";
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src', 'r', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src_s', 'rs', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    let (list, text) =
        (rows(&ctx, &format!("{report} r_report")).await, rows(&ctx, &format!("{report} rs_report")).await);
    assert_eq!(format!("{:?}", list[0].columns()), format!("{:?}", text[0].columns()));
}

/// All of a query's rows as text, for comparing two calls' results cell for cell.
async fn table_text(ctx: &SessionContext, sql: &str) -> String {
    rows(ctx, sql).await.iter().map(|b| format!("{:?}", b.columns())).collect()
}

/// `unknown_codes=suppress`: codes outside the hierarchy are dropped from their records before
/// the method sees them, wherever the column is read (artuc, the metrics, the verifiers), and
/// counted in artuc's report: occurrences and distinct codes, never which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_codes_suppress_drops_and_counts_codes_outside_the_hierarchy() {
    let ctx = new_session();
    rows(&ctx, "CREATE TABLE icu AS SELECT column1 AS codes FROM (VALUES ('4019 NOTACODE'), ('25000;99999;NOTACODE'))")
        .await;
    rows(&ctx, "SELECT * FROM declare_roles('icu', 'codes=set_valued')").await;
    rows(&ctx, "SELECT * FROM load_hierarchy('icu', 'codes', 'bundled:icd9', 'unknown_codes=suppress')").await;
    // Nothing adopted: the hierarchy is the bundled one.
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM hierarchy('icu', 'codes')").await, 14_567 + 218);
    rows(&ctx, "CREATE TABLE people AS SELECT column1 AS sex FROM (VALUES ('F'), ('M'))").await;
    rows(&ctx, "SELECT * FROM declare_roles('people', 'sex=qi')").await;
    let sexes = temp_file("sex_hierarchy.csv", "F;*\nM;*\n");
    let e =
        err(&ctx, &format!("SELECT * FROM load_hierarchy('people', 'sex', '{sexes}', 'unknown_codes=suppress')")).await;
    assert!(e.contains("unknown_codes") && e.contains("kind=codes"), "{e}");

    // Figure 1a with two codes outside its hierarchy in every record, as a delimited string.
    let figure = support::figure_1a();
    let (ctx, registry) = figure.session();
    ctx.register_batch("u", support::table_4_batch()).unwrap();
    rows(
        &ctx,
        "CREATE TABLE src_u AS SELECT * EXCLUDE (codes), array_to_string(codes, ';') || ';999.99 NOTACODE' AS codes \
         FROM src",
    )
    .await;
    let mut meta = figure.meta();
    registry.set("src_e", meta.clone());
    rows(&ctx, "CREATE TABLE src_e AS SELECT * FROM src_u").await;
    let h = meta.hierarchies["codes"].as_ref().clone().suppressing_unknown_codes();
    meta.hierarchies.insert("codes".into(), std::sync::Arc::new(h));
    registry.set("src_u", meta);

    // Without the option: an error with the counts, no code named.
    let e = err(&ctx, "SELECT COUNT(*) FROM artuc('src_e', 're', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    assert!(e.contains("16 diagnosis code occurrence(s), 2 distinct") && e.contains("unknown_codes=suppress"), "{e}");
    assert!(!e.contains("NOTACODE") && !e.contains("999.99"), "{e}");

    // With it: the release, NCP, UL and suppressions of the clean table; the drop counted.
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src', 'r', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src_u', 'ru', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    let report = "SELECT records, clusters, suppressed_codes, ROUND(ncp_sum, 9), ROUND(ul_sum, 9) FROM";
    assert_eq!(
        table_text(&ctx, &format!("{report} r_report")).await,
        table_text(&ctx, &format!("{report} ru_report")).await
    );
    let release = |r: &str| {
        format!("SELECT class_id, age, origin, gender, array_to_string(codes, ';') AS c FROM {r} ORDER BY class_id, c")
    };
    assert_eq!(table_text(&ctx, &release("r")).await, table_text(&ctx, &release("ru")).await);
    let counts = |r: &str| format!("SELECT CONCAT_WS(',', unknown_codes, unknown_codes_distinct) FROM {r}_report");
    assert_eq!(texts(&ctx, &counts("ru")).await, ["16,2"]);
    assert_eq!(texts(&ctx, &counts("r")).await, ["0,0"]);
    // The metrics and the verifier drop the same codes: no suppression is invented.
    let metrics =
        |t: &str, r: &str| format!("SELECT metric, ROUND(value, 9) FROM anon_metrics('{t}', '{r}') ORDER BY metric");
    assert_eq!(table_text(&ctx, &metrics("src", "r")).await, table_text(&ctx, &metrics("src_u", "ru")).await);
    let verify = |t: &str, r: &str| format!("SELECT * FROM verify_release('{t}', '{r}', 'km=2:2, constraints=u')");
    assert_eq!(table_text(&ctx, &verify("src", "r")).await, table_text(&ctx, &verify("src_u", "ru")).await);
}

/// Every reader of a code column reads a delimited string as the list it writes: artuc (above),
/// the verifiers (release and constraints table), anon_metrics (original and release), and the
/// query harness's release reader. A release written to CSV keeps `(053.20,053.71)` one element.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reader_splits_a_delimited_code_string_like_a_list() {
    let figure = support::figure_1a();
    let (ctx, registry) = figure.session();
    ctx.register_batch("u", support::table_4_batch()).unwrap();
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src', 'r', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    // The string-typed twins, joined as COPY ... TO '.csv' joins lists.
    for (t, from) in [("src_s", "src"), ("r_s", "r"), ("u_s", "u")] {
        rows(
            &ctx,
            &format!("CREATE TABLE {t} AS SELECT * EXCLUDE (codes), array_to_string(codes, ';') AS codes FROM {from}"),
        )
        .await;
    }
    assert_eq!(texts(&ctx, "SELECT arrow_typeof(codes) FROM r_s LIMIT 1").await, ["Utf8"]);
    assert!(int(&ctx, "SELECT COUNT(*) FROM r_s WHERE codes LIKE '%(%,%)%'").await > 0, "a generalized code");
    registry.set("src_s", figure.meta());
    // The check's name holds the constraints table's name; its verdict and detail must agree.
    let verify = |t: &str, r: &str, u: &str| {
        format!("SELECT holds, detail, violations FROM verify_release('{t}', '{r}', 'km=2:2, constraints={u}')")
    };
    let list = table_text(&ctx, &verify("src", "r", "u")).await;
    assert_eq!(list, table_text(&ctx, &verify("src_s", "r_s", "u_s")).await);
    assert!(!list.contains("false"), "{list}");
    let metrics =
        |t: &str, r: &str| format!("SELECT metric, ROUND(value, 9) FROM anon_metrics('{t}', '{r}') ORDER BY metric");
    assert_eq!(table_text(&ctx, &metrics("src", "r")).await, table_text(&ctx, &metrics("src_s", "r_s")).await);
    assert_eq!(
        table_text(&ctx, "SELECT * FROM metric_value('src', 'r', 'ul_gen(codes)')").await,
        table_text(&ctx, "SELECT * FROM metric_value('src_s', 'r_s', 'ul_gen(codes)')").await
    );
    // The query harness estimates a code count from the string-typed release as from the list.
    let q = |r: &str| {
        format!(
            "SELECT * FROM query_error('SELECT COUNT(*) FROM src WHERE array_has(codes, ''053.20'')', 'src', '{r}')"
        )
    };
    assert_eq!(table_text(&ctx, &q("r")).await, table_text(&ctx, &q("r_s")).await);
}

/// k-anonymity's own release of a masked column, with a suppressed record, reads back: the
/// suppressed record's `*` is the masking hierarchy's root `*****` (src/release/cover.rs, rule
/// 3), for anon_metrics and the query harness alike (both refused it as "not nodes of the
/// original's hierarchy").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suppressed_record_of_a_masked_column_reads_back() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE visits AS SELECT column1 AS zip, column2 AS disease FROM (VALUES \
         ('02139', 'flu'), ('02139', 'asthma'), ('02139', 'flu'), ('02141', 'flu'), ('02141', 'gout'), \
         ('02141', 'flu'), ('99999', 'asthma'))",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('visits', 'zip=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM masking_hierarchy('visits', 'zip')").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('visits', 'visits_k3', 3, 'suppression=15%')").await;
    assert_eq!(
        texts(&ctx, "SELECT zip FROM visits_k3 ORDER BY zip").await,
        ["*", "02139", "02139", "02139", "02141", "02141", "02141"]
    );
    // Two classes at level 0 and the suppressed record at the root: LM = 1/7.
    let metrics = texts(
        &ctx,
        "SELECT CONCAT(metric, '=', CAST(ROUND(value * 7, 9) AS VARCHAR)) FROM anon_metrics('visits', 'visits_k3') \
         WHERE metric IN ('lm', 'released_records') ORDER BY metric",
    )
    .await;
    assert_eq!(metrics, ["lm=1.0", "released_records=49.0"]);
    // The suppressed record could be any of the three zips: one third of it is in 02139.
    let q = "SELECT * FROM query_error('SELECT COUNT(*) FROM visits WHERE zip = ''02139''', 'visits', 'visits_k3')";
    assert_eq!(int(&ctx, &format!("SELECT CAST(ROUND(estimate * 3) AS BIGINT) FROM ({q})")).await, 10);
}

/// A value outside its hierarchy is counted once, however many distinct tuples of the other
/// quasi-identifiers it occurs in (one unknown ICD-9 code was reported as "336 distinct
/// value(s) not covered": the count was of tuples).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_outside_the_hierarchy_is_counted_once() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE dx (code VARCHAR, sex VARCHAR, age INT) AS VALUES ('4019', 'F', 30), ('NOTACODE', 'F', 31), \
         ('NOTACODE', 'M', 32), ('NOTACODE', 'M', 33), ('25000', 'M', 34)",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('dx', 'code=qi, sex=qi, age=qi')").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('dx', 'sex')").await;
    rows(&ctx, "SELECT * FROM interval_hierarchy('dx', 'age', '10,*', 0, 120)").await;
    let codes = temp_file("dx_codes.csv", "4019;401;*\n25000;250;*\n");
    let e = err(&ctx, &format!("SELECT * FROM load_hierarchy('dx', 'code', '{codes}')")).await;
    assert!(e.contains("'code'") && e.contains(" 1 distinct value(s) not covered"), "{e}");
    assert!(!e.contains("NOTACODE"), "{e}");
}

/// A query on a column the release left out (declared insensitive, dropped by default) says
/// how to keep it, not DataFusion's schema error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_on_a_dropped_column_says_keep_insensitive() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE stays (sex VARCHAR, los INT, note VARCHAR) AS VALUES ('F', 3, 'a'), ('F', 5, 'b'), ('M', 2, 'c'), \
         ('M', 4, 'd')",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('stays', 'sex=qi, los=insensitive')").await;
    rows(&ctx, "SELECT * FROM flat_hierarchy('stays', 'sex')").await;
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('stays', 'stays_k2', 2)").await;
    let q = |c: &str, r: &str| {
        format!("SELECT * FROM query_error('SELECT sex, AVG({c}) FROM stays GROUP BY sex', 'stays', '{r}')")
    };
    let e = err(&ctx, &q("los", "stays_k2")).await;
    assert!(e.contains("'los'") && e.contains("declared insensitive") && e.contains("keep_insensitive=true"), "{e}");
    // A column never declared is insensitive too.
    let e = err(&ctx, &q("note", "stays_k2")).await;
    assert!(e.contains("'note'") && e.contains("declared insensitive") && e.contains("keep_insensitive=true"), "{e}");
    // Kept, it is estimated like any published column.
    rows(&ctx, "SELECT COUNT(*) FROM kanon_anonymize('stays', 'stays_kept', 2, 'keep_insensitive=true')").await;
    assert_eq!(
        texts(&ctx, &format!("SELECT estimate FROM ({}) WHERE group_key = 'F'", q("los", "stays_kept"))).await,
        ["4.0"]
    );
}

/// A date quasi-identifier gets `_lo`/`_hi` like a numeric one, in its DATE type, the first and
/// last day its label names (never the data's own first and last dates), so an analyst can
/// filter a date range; kanon/generalize, h-ceiling and entropy alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_quasi_identifiers_get_date_bounds() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE adm AS SELECT CAST(column1 AS DATE) AS admitted, column2 AS disease FROM (VALUES \
         ('2021-03-05', 'flu'), ('2021-03-20', 'asthma'), ('2021-07-02', 'flu'), ('2019-12-31', 'gout'), \
         ('2019-06-01', 'flu'), ('2018-01-15', 'asthma'))",
    )
    .await;
    rows(&ctx, "SELECT * FROM declare_roles('adm', 'admitted=qi, disease=sensitive')").await;
    rows(&ctx, "SELECT * FROM date_hierarchy('adm', 'admitted')").await;
    rows(&ctx, "SELECT COUNT(*) FROM generalize('adm', 'adm_year', '2')").await;
    assert_eq!(texts(&ctx, "SELECT arrow_typeof(admitted_lo) FROM adm_year LIMIT 1").await, ["Date32"]);
    let bounds = "SELECT DISTINCT CONCAT(admitted, ' ', admitted_lo, ' ', admitted_hi) FROM";
    assert_eq!(
        texts(&ctx, &format!("{bounds} adm_year ORDER BY 1")).await,
        ["2018 2018-01-01 2018-12-31", "2019 2019-01-01 2019-12-31", "2021 2021-01-01 2021-12-31"]
    );
    let in_2019 =
        "SELECT COUNT(*) FROM adm_year WHERE admitted_lo >= DATE '2019-01-01' AND admitted_hi < DATE '2020-01-01'";
    assert_eq!(int(&ctx, in_2019).await, 2);
    rows(&ctx, "SELECT COUNT(*) FROM generalize('adm', 'adm_decade', '3')").await;
    assert_eq!(
        texts(&ctx, &format!("{bounds} adm_decade ORDER BY 1")).await,
        ["2010s 2010-01-01 2019-12-31", "2020s 2020-01-01 2029-12-31"]
    );
    // The root names no range: NULL bounds.
    rows(&ctx, "SELECT COUNT(*) FROM generalize('adm', 'adm_all', '4')").await;
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM adm_all WHERE admitted_lo IS NULL AND admitted = '*'").await, 6);
    // The class-built releases publish the same bounds.
    for sql in [
        "SELECT COUNT(*) FROM hceil_anonymize('adm', 'adm_h', 2, 1.0, 'seed=1')",
        "SELECT COUNT(*) FROM entropy_anonymize('adm', 'adm_e', 2, 'seed=1')",
    ] {
        rows(&ctx, sql).await;
    }
    for r in ["adm_h", "adm_e"] {
        let wrong = format!(
            "SELECT COUNT(*) FROM {r} WHERE admitted <> '*' AND NOT (admitted_lo <= admitted_hi \
             AND CAST(admitted_lo AS VARCHAR) LIKE CONCAT(LEFT(admitted, 3), '%'))"
        );
        assert!(int(&ctx, &format!("SELECT COUNT(*) FROM {r} WHERE admitted_lo IS NOT NULL")).await > 0, "{r}");
        assert_eq!(int(&ctx, &wrong).await, 0, "{r}");
    }
}

/// The first and last day a `date_hierarchy` label names, worked out here from the label alone
/// (`2021-03-05`, `2021-03`, `2021`, `2020s`; `*` names none), as the release must publish them.
fn label_days(label: &str) -> Option<(String, String)> {
    let leap = |y: u32| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let last =
        |y: u32, m: u32| [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m as usize - 1];
    match label.len() {
        10 => Some((label.to_string(), label.to_string())),
        7 => {
            let (y, m) = (label[..4].parse().ok()?, label[5..].parse().ok()?);
            Some((format!("{label}-01"), format!("{label}-{:02}", last(y, m))))
        }
        4 => Some((format!("{label}-01-01"), format!("{label}-12-31"))),
        5 => Some((format!("{}-01-01", &label[..4]), format!("{}-12-31", label[..4].parse::<u32>().ok()? + 9))),
        _ => None,
    }
}

/// `release`'s date column `admitted` carries `admitted_lo`/`admitted_hi` in its DATE type, and
/// every row's bounds are the first and last day of its released label (NULL for `*`): read from
/// the label, so they say no more than it does. Returns the distinct labels released.
async fn check_date_bounds(ctx: &SessionContext, release: &str) -> Vec<String> {
    let ty = format!(
        "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_name = '{release}' \
         AND column_name LIKE 'admitted%' ORDER BY ordinal_position"
    );
    // The label is a dictionary (each label stored once), the bounds in the column's DATE type.
    let expected = ["admitted Dictionary(Int32, Utf8)", "admitted_lo Date32", "admitted_hi Date32"];
    assert_eq!(texts(ctx, &ty).await, expected, "{release}");
    assert!(int(ctx, &format!("SELECT COUNT(*) FROM {release} WHERE admitted_lo IS NOT NULL")).await > 0, "{release}");
    let triples = format!(
        "SELECT DISTINCT admitted || '|' || COALESCE(CAST(admitted_lo AS VARCHAR), 'NULL') || '|' || \
         COALESCE(CAST(admitted_hi AS VARCHAR), 'NULL') FROM {release}"
    );
    let mut labels = Vec::new();
    for t in texts(ctx, &triples).await {
        let [label, lo, hi] = t.split('|').collect::<Vec<_>>()[..] else { panic!("{t}") };
        let expected = label_days(label).map_or(("NULL".into(), "NULL".into()), |b| b);
        assert_eq!((lo.to_string(), hi.to_string()), expected, "{release}: label {label}");
        labels.push(label.to_string());
    }
    labels
}

/// ipa_release (an adaptive plan, a node release, approx and the paper's guarantee)
/// and dp_histogram give a date quasi-identifier `_lo`/`_hi` as the other methods do, from the
/// released label only: a year's bounds are 1 January and 31 December though no source date
/// falls on either (the data's first and last dates would say more than the release).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipa_releases_give_date_quasi_identifiers_bounds_from_the_label() {
    let ctx = new_session();
    rows(
        &ctx,
        "CREATE TABLE adm AS SELECT CASE WHEN value % 2 = 0 THEN 'F' ELSE 'M' END AS sex, \
         make_date(2010 + value % 10, 1 + value % 9, 10 + value % 7) AS admitted, \
         CASE value % 3 WHEN 0 THEN 'flu' WHEN 1 THEN 'asthma' ELSE 'gout' END AS disease \
         FROM generate_series(0, 1999)",
    )
    .await;
    // Seeded, so the test cannot depend on the noise drawn.
    rows(&ctx, "SET anonfusion.seeded_dp = true").await;
    for sql in [
        "SELECT * FROM declare_roles('adm', 'sex=qi, admitted=qi, disease=sensitive')",
        "SELECT * FROM flat_hierarchy('adm', 'sex', 'values=F|M')",
        "SELECT * FROM date_hierarchy('adm', 'admitted', '2010-01-01', '2019-12-31')",
        "SELECT * FROM flat_hierarchy('adm', 'disease', 'values=flu|asthma|gout')",
        "SELECT * FROM set_privacy_budget('adm', 100.0, 'delta=1e-5')",
    ] {
        rows(&ctx, sql).await;
    }
    let calls = [
        // An adaptive plan refining the dates (the automatic plan's private root keeps 2,000
        // rows at `*` for the date, which would test nothing here).
        (
            "ipa_release('adm', 'a_auto', 2.0, 'partition=adaptive, root=0:2, steps=admitted:1|admitted:0, theta=20, seed=1')",
            "a_auto",
        ),
        ("ipa_release('adm', 'a_node', 2.0, 'partition=node, seed=1')", "a_node"),
        ("ipa_release('adm', 'a_approx', 2.0, 'guarantee=approx, delta=1e-6, partition=node, seed=1')", "a_approx"),
        ("ipa_release('adm', 'a_paper', 2.0, 'guarantee=paper, seed=1')", "a_paper"),
        ("dp_histogram('adm', 'a_year', 2.0, '0,2', 'seed=1')", "a_year"),
    ];
    for (call, release) in calls {
        rows(&ctx, &format!("SELECT COUNT(*) FROM {call}")).await;
        check_date_bounds(&ctx, release).await;
    }
    // The year node: every label a year, bounded by its first and last day, which no source
    // date is (source days are the 10th to the 16th).
    let labels = check_date_bounds(&ctx, "a_year").await;
    assert!(!labels.is_empty() && labels.iter().all(|l| l == "*" || l.len() == 4), "{labels:?}");
    let on_bounds = "SELECT COUNT(*) FROM adm WHERE admitted IN (SELECT admitted_lo FROM a_year) \
                     OR admitted IN (SELECT admitted_hi FROM a_year)";
    assert_eq!(int(&ctx, on_bounds).await, 0);
    let in_2013 =
        "SELECT COUNT(*) FROM a_year WHERE admitted_lo >= DATE '2013-01-01' AND admitted_hi <= DATE '2013-12-31'";
    assert_eq!(int(&ctx, in_2013).await, int(&ctx, "SELECT COUNT(*) FROM a_year WHERE admitted = '2013'").await);
}

/// artuc gives a date demographic `_lo`/`_hi` from its released label, and every released row's
/// range covers its record's date: for each released range, at least as many source records
/// have a date in it as released rows show it (each row is a source record, generalized).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artuc_gives_a_date_demographic_bounds_from_the_label() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('ehrd', 600, 1)").await;
    rows(
        &ctx,
        "CREATE TABLE adm AS SELECT make_date(2010 + age % 10, 1 + age % 12, 10 + age % 7) AS admitted, gender, codes \
         FROM ehrd",
    )
    .await;
    for sql in [
        "SELECT * FROM declare_roles('adm', 'admitted=qi, gender=qi, codes=set_valued')",
        "SELECT * FROM date_hierarchy('adm', 'admitted', '2010-01-01', '2019-12-31')",
        "SELECT * FROM flat_hierarchy('adm', 'gender')",
        "SELECT * FROM load_hierarchy('adm', 'codes', 'bundled:icd9')",
        "SELECT COUNT(*) FROM utility_constraints('adm', 'uc', 'admitted=2, gender=*', 'chapter')",
        "SELECT COUNT(*) FROM artuc('adm', 'ra', 'uc', 5, 2, 0.9, 1000000, 'seed=1')",
    ] {
        rows(&ctx, sql).await;
    }
    let labels = check_date_bounds(&ctx, "ra").await;
    assert!(labels.iter().any(|l| l != "*"), "{labels:?}");
    let uncovered = "SELECT COUNT(*) FROM (SELECT r.n, COUNT(a.admitted) AS m FROM \
                     (SELECT admitted_lo, admitted_hi, COUNT(*) AS n FROM ra WHERE admitted_lo IS NOT NULL \
                     GROUP BY 1, 2) r LEFT JOIN adm a ON a.admitted BETWEEN r.admitted_lo AND r.admitted_hi \
                     GROUP BY r.admitted_lo, r.admitted_hi, r.n) WHERE n > m";
    assert_eq!(int(&ctx, uncovered).await, 0);
    assert_eq!(int(&ctx, "SELECT COUNT(*) FROM ra").await, 600);
}

/// `utility_constraints`: a custodian's own ArtUC constraints without writing the table by hand.
/// Age bands of 12 crossed with the ICD-9 chapters give the same release as the paper's UC1
/// (`load_constraints`, which pairs bands and chapters in a cycle: the pairing does not matter,
/// docs/artuc.md), and the table has the documented shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utility_constraints_builds_bands_by_code_sets() {
    let ctx = new_session();
    rows(&ctx, "SELECT * FROM load_dataset('ehrd', 2000, 1)").await;
    rows(&ctx, "SELECT COUNT(*) FROM load_constraints('ehrd', 'UC1')").await;
    let n = int(&ctx, "SELECT COUNT(*) FROM utility_constraints('ehrd', 'my_uc', 'age=12, gender=*', 'chapter')").await;
    assert_eq!(n, 8 * 19, "8 age bands x 19 chapters");
    assert_eq!(
        texts(
            &ctx,
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'my_uc' ORDER BY ordinal_position"
        )
        .await,
        ["constraint", "age_lo", "age_hi", "gender", "codes"]
    );
    assert_eq!(
        texts(&ctx, "SELECT DISTINCT CONCAT(age_lo, '-', age_hi) FROM my_uc ORDER BY 1 LIMIT 2").await,
        ["0-11", "12-23"]
    );
    let run = |uc: &str, out: &str| {
        format!("SELECT COUNT(*) FROM artuc('ehrd', '{out}', '{uc}', 5, 2, 0.1, 1000000, 'seed=1')")
    };
    rows(&ctx, &run("ehrd_uc1", "a_paper")).await;
    rows(&ctx, &run("my_uc", "a_mine")).await;
    let report = |r: &str| {
        format!("SELECT CONCAT(clusters, ' ', suppressed_codes, ' ', ROUND(ncp, 9), ' ', ROUND(ul, 9)) FROM {r}_report")
    };
    assert_eq!(texts(&ctx, &report("a_paper")).await, texts(&ctx, &report("a_mine")).await);
    let verify = "SELECT COUNT(*) FROM verify_release('ehrd', 'a_mine', 'km=5:2, constraints=my_uc') WHERE NOT holds";
    assert_eq!(int(&ctx, verify).await, 0);

    // A declared list of code sets, and a categorical demographic cut at a level.
    let n =
        int(&ctx, "SELECT COUNT(*) FROM utility_constraints('ehrd', 'lists', 'gender=0', 'list: 250, 401; 428')").await;
    assert_eq!(n, 2 * 2, "2 genders x 2 code sets");
    assert_eq!(
        texts(&ctx, "SELECT DISTINCT array_to_string(codes, ',') FROM lists ORDER BY 1").await,
        ["250,401", "428"]
    );
    for (sql, words) in [
        ("'height=10', 'chapter'", &["'height'", "age, gender"][..]),
        ("'age=x', 'chapter'", &["'age=x'"][..]),
        ("'', 'paragraph'", &["'paragraph'", "chapter"][..]),
        ("'', 'list: 250; NOTACODE'", &["'NOTACODE'"][..]),
    ] {
        let e = err(&ctx, &format!("SELECT * FROM utility_constraints('ehrd', 'bad', {sql})")).await;
        assert!(words.iter().all(|w| e.contains(w)), "{sql}: {e}");
        assert!(!ctx.table_exist("bad").unwrap(), "{sql}");
    }
}

/// A code set identifies a patient as a quasi-identifier does, and only artuc generalizes it:
/// kanon (full-domain and local) and `generalize` leave it out, as the class-built releases
/// (h-ceiling, IPA, entropy) do, and kanon's report names it among the dropped columns (kanon and generalize once published the codes as
/// they were, beside a release whose report said k). The metrics and the query harness read
/// those releases without it, and a query on the codes says only artuc publishes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_set_is_published_by_artuc_only() {
    let figure = support::figure_1a();
    let (ctx, _registry) = figure.session();
    ctx.register_batch("u", support::table_4_batch()).unwrap();
    let calls = [
        ("k", "kanon_anonymize('src', 'k', 2)"),
        ("kk", "kanon_anonymize('src', 'kk', 2, 'keep_insensitive=true')"),
        ("kl", "kanon_anonymize('src', 'kl', 2, 'local=recoding')"),
        ("g", "generalize('src', 'g', '1,1,1')"),
    ];
    for (release, call) in calls {
        rows(&ctx, &format!("SELECT COUNT(*) FROM {call}")).await;
        let columns =
            texts(&ctx, &format!("SELECT column_name FROM information_schema.columns WHERE table_name = '{release}'"))
                .await;
        assert!(!columns.iter().any(|c| c == "codes"), "{call}: {columns:?}");
    }
    assert!(texts(&ctx, "SELECT dropped_columns FROM k_report").await[0].contains("codes"));
    rows(&ctx, "SELECT COUNT(*) FROM artuc('src', 'r', 'u', 2, 2, 0.6, 2, 'pick=first')").await;
    assert_eq!(
        int(&ctx, "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'r' AND column_name = 'codes'")
            .await,
        1
    );
    // Read without the codes: metrics, and a query that does not name them.
    assert!(int(&ctx, "SELECT COUNT(*) FROM anon_metrics('src', 'k')").await > 0);
    rows(&ctx, "SELECT * FROM query_error('SELECT COUNT(*) FROM src', 'src', 'k')").await;
    let e = err(
        &ctx,
        "SELECT * FROM query_error('SELECT COUNT(*) FROM src WHERE array_has(codes, ''053.20'')', 'src', 'k')",
    )
    .await;
    assert!(e.contains("'codes'") && e.contains("only artuc publishes code sets"), "{e}");
}
