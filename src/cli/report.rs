//! `anonfusion evaluate ... --report FILE.html`: one self-contained page a custodian can hand to
//! an ethics board. No script, no stylesheet or font from the network: inline CSS and the query
//! charts as inline SVG, so the file opens offline and prints as it shows.
//!
//! Every number on the page comes from the engine's own SQL surface, the same a custodian can
//! rerun by hand, so the page says nothing the tables do not:
//! - method and parameters: the release's `<release>_report` row;
//! - the guarantee: the claim the report makes, re-checked by `verify_release` (code that
//!   shares nothing with the method), and for a differentially private release the privacy
//!   ledger's records of the source;
//! - re-identification risk: `risk_report` on the original and on the release;
//! - utility: `anon_metrics` and the two-way-marginal score;
//! - query error: each query's summary and its chart (original against estimate per group).
//!
//! The page holds numbers computed from the original (risks, exact answers per group): it is
//! for the custodian and the board, not for publication, and says so at its top.

use anonfusion::eval::Summary;
use anonfusion::eval::plot::escape as esc;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use std::fmt::Write as _;

/// One query of the workload as the page shows it.
pub(crate) struct QuerySection {
    pub(crate) file: String,
    pub(crate) title: String,
    pub(crate) summary: Summary,
    pub(crate) svg: String,
}

/// What the page is about: table names as the session knows them.
pub(crate) struct Subject<'a> {
    pub(crate) original: &'a str,
    pub(crate) release: &'a str,
    pub(crate) catalog: Option<&'a str>,
    /// `risk_report`'s options (a declared population, a threshold), as `--risk` gave them.
    pub(crate) risk_options: Option<&'a str>,
}

/// The ids of the page's sections, in order (the browser test checks each is rendered).
pub(crate) const SECTIONS: [&str; 5] = ["method", "guarantee", "risk", "utility", "queries"];

/// Build the page.
pub(crate) async fn page(
    ctx: &SessionContext,
    subject: &Subject<'_>,
    queries: &[QuerySection],
    score: Option<(f64, usize)>,
) -> String {
    let report = first_row(ctx, &format!("SELECT * FROM {}", ident(&format!("{}_report", subject.release)))).await;
    let mut body = String::new();
    section(&mut body, SECTIONS[0], "Method and parameters", &method(subject, &report));
    section(&mut body, SECTIONS[1], "Guarantee", &guarantee(ctx, subject, &report).await);
    section(&mut body, SECTIONS[2], "Re-identification risk", &risk(ctx, subject).await);
    section(&mut body, SECTIONS[3], "Utility", &utility(ctx, subject, score).await);
    section(&mut body, SECTIONS[4], "Query error", &query_error(queries));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Release report: {release}</title><style>{STYLE}</style></head><body>\
         <header><h1>Release report: {release}</h1><p>Release <code>{release}</code> of <code>{original}</code>. \
         For the custodian and the ethics board: this page holds numbers computed from the original table \
         (risks, exact answers per group). It is not for publication.</p></header>{body}</body></html>\n",
        release = esc(subject.release),
        original = esc(subject.original),
    )
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}\
h1{font-size:1.6em}h2{border-bottom:2px solid #447;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.2em .6em;text-align:left}\
th{background:#eef}td.num{text-align:right}.holds{color:#060;font-weight:bold}.fails{color:#a00;font-weight:bold}\
.note{color:#555}code{background:#f4f4f4;padding:0 .2em}svg{max-width:100%;height:auto}";

fn section(out: &mut String, id: &str, title: &str, body: &str) {
    let _ = write!(out, "<section id=\"{id}\"><h2>{title}</h2>{body}</section>");
}

/// The report row as (column, value) pairs; empty when the release has no report table.
type Row = Vec<(String, String)>;

fn method(subject: &Subject<'_>, report: &Result<Row, String>) -> String {
    match report {
        Ok(row) => format!(
            "<p>From <code>{}_report</code>.</p>{}",
            esc(subject.release),
            key_values(row.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        ),
        Err(e) => note(&format!(
            "No report table <code>{}_report</code>: the release was not made by an engine method in this \
             session ({}).",
            esc(subject.release),
            esc(e)
        )),
    }
}

async fn guarantee(ctx: &SessionContext, subject: &Subject<'_>, report: &Result<Row, String>) -> String {
    let Ok(row) = report else {
        return note("No claim to check: the release has no report table.");
    };
    let get = |k: &str| row.iter().find(|(c, _)| c == k).map(|(_, v)| v.as_str());
    let mut out = String::new();
    if let Some(text) = get("guarantee") {
        let _ = write!(out, "<p>The release states: <strong>{}</strong>.</p>", esc(text));
        out.push_str(&ledger(ctx, subject).await);
        return out;
    }
    let Some(checks) = claimed_checks(get("method").unwrap_or(""), &get) else {
        return note("This method makes no privacy claim that verify_release checks (a plain generalization).");
    };
    let catalog = subject
        .catalog
        .map(str::to_string)
        .or_else(|| (get("method") == Some("hceil_anonymize")).then(|| format!("{}_catalog", subject.release)));
    let sql = format!(
        "SELECT * FROM verify_release({}, {}, {}{})",
        lit(subject.original),
        lit(subject.release),
        lit(&checks),
        catalog.as_deref().map(|c| format!(", {}", lit(c))).unwrap_or_default()
    );
    let _ = write!(
        out,
        "<p>The release claims <code>{}</code>. Checked by <code>verify_release</code>, whose code shares \
         nothing with the method:</p>",
        esc(&checks)
    );
    out.push_str(&query_table(ctx, &sql).await);
    out
}

/// The checks `verify_release` runs for what a method's report claims; `None` for a method
/// that claims nothing it checks.
fn claimed_checks<'a>(method: &str, get: &dyn Fn(&str) -> Option<&'a str>) -> Option<String> {
    match method {
        "kanon_anonymize" => get("models").map(str::to_string),
        "hceil_anonymize" => Some(format!("k={}, h={}, catalog", get("k")?, get("h")?)),
        "entropy_anonymize" => Some(format!("k={}", get("k")?)),
        "artuc" | "rmr" => Some(format!("km={}:{}", get("k")?, get("m")?)),
        _ => None,
    }
}

async fn ledger(ctx: &SessionContext, subject: &Subject<'_>) -> String {
    let sql = format!(
        "SELECT seq, event, guarantee, release, method, epsilon, delta, parts, budget, spent, remaining \
         FROM anon_privacy_ledger WHERE table_name = {} ORDER BY seq",
        lit(subject.original)
    );
    format!(
        "<p>The privacy ledger's account of <code>{}</code> (every release charged to it):</p>{}",
        esc(subject.original),
        query_table(ctx, &sql).await
    )
}

async fn risk(ctx: &SessionContext, subject: &Subject<'_>) -> String {
    let given = subject.risk_options.unwrap_or("");
    let [(_, original), (_, release)] = risk_queries(subject.original, subject.release, subject.catalog, given);
    let options = if given.trim().is_empty() {
        "no population declared (--risk 'population=N' or 'fraction=f' for journalist, marketer and population uniqueness)"
            .to_string()
    } else {
        format!("options <code>{}</code>", esc(given))
    };
    format!(
        "<p>From <code>risk_report</code>, {options}; docs/risk.md gives each formula and its source.</p>\
         <h3>Original table</h3>{}<h3>Release</h3>{}",
        query_table(ctx, &original).await,
        query_table(ctx, &release).await
    )
}

/// `risk_report` of the original and of the release with the custodian's options; a
/// catalog is passed on so an h-ceiling release is read as its catalog's reader can read it
/// (docs/risk.md).
pub(crate) fn risk_queries(
    original: &str,
    release: &str,
    catalog: Option<&str>,
    options: &str,
) -> [(&'static str, String); 2] {
    let release_options = match catalog {
        Some(c) if options.trim().is_empty() => format!("catalog={c}"),
        Some(c) => format!("{options}, catalog={c}"),
        None => options.to_string(),
    };
    let sql = |release: &str, options: &str| {
        format!("SELECT measure, value, detail FROM risk_report({}, {}, {})", lit(original), lit(release), lit(options))
    };
    [("original", sql("", options)), ("release", sql(release, &release_options))]
}

async fn utility(ctx: &SessionContext, subject: &Subject<'_>, score: Option<(f64, usize)>) -> String {
    let sql = match subject.catalog {
        Some(c) => {
            format!("SELECT * FROM anon_metrics({}, {}, {})", lit(subject.original), lit(subject.release), lit(c))
        }
        None => format!("SELECT * FROM anon_metrics({}, {})", lit(subject.original), lit(subject.release)),
    };
    let mut out = query_table(ctx, &sql).await;
    match score {
        Some((score, pairs)) => {
            let _ = write!(
                out,
                "<p>Two-way-marginal score: <strong>{score:.1}</strong> of 1000 (mean over {pairs} attribute pairs \
                 of 1 &minus; L1/2 between the original's and the release's joint histograms).</p>"
            );
        }
        None => out.push_str(&note("No two-way-marginal score: fewer than two declared attributes.")),
    }
    out
}

fn query_error(queries: &[QuerySection]) -> String {
    if queries.is_empty() {
        return note("No query files were given.");
    }
    let mut out = String::new();
    for q in queries {
        let are = q.summary.are().map(|a| format!("{a:.6}")).unwrap_or_else(|| "-".into());
        let _ = write!(
            out,
            "<h3>{}</h3><p><code>{}</code>: average relative error {are} over the original's groups; \
             {} groups missing from the estimates, {} spurious.</p>{}",
            esc(&q.title),
            esc(&q.file),
            q.summary.missing.groups,
            q.summary.spurious.groups,
            inline_svg(&q.svg)
        );
    }
    out
}

/// An SVG document as an inline element (its XML declaration dropped).
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// The first row of a query as (column, value) pairs.
async fn first_row(ctx: &SessionContext, sql: &str) -> Result<Row, String> {
    let batches = collect(ctx, sql).await?;
    let batch = batches.iter().find(|b| b.num_rows() > 0).ok_or("no rows")?;
    let cells = row_strings(batch)?;
    Ok(batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .zip(cells.into_iter().next().unwrap_or_default())
        .collect())
}

/// A query's result as an HTML table, or its error as a note (a refusal is part of the report:
/// risk_report says why it gives no number for a DP release).
async fn query_table(ctx: &SessionContext, sql: &str) -> String {
    match collect(ctx, sql).await {
        Ok(batches) => table(&batches),
        Err(e) => note(&esc(&e)),
    }
}

async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

fn table(batches: &[RecordBatch]) -> String {
    let Some(first) = batches.first() else { return note("(no rows)") };
    let schema = first.schema();
    let mut out = String::from("<table><tr>");
    for f in schema.fields() {
        let _ = write!(out, "<th>{}</th>", esc(f.name()));
    }
    out.push_str("</tr>");
    let numeric: Vec<bool> = schema.fields().iter().map(|f| f.data_type().is_numeric()).collect();
    for batch in batches {
        let rows = match row_strings(batch) {
            Ok(r) => r,
            Err(e) => return note(&esc(&e)),
        };
        for row in rows {
            out.push_str("<tr>");
            for (value, &num) in row.iter().zip(&numeric) {
                let class = match value.as_str() {
                    "true" => " class=\"holds\"",
                    "false" => " class=\"fails\"",
                    _ if num => " class=\"num\"",
                    _ => "",
                };
                let _ = write!(out, "<td{class}>{}</td>", esc(value));
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</table>");
    out
}

fn key_values<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::from("<table>");
    for (k, v) in pairs {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    out.push_str("</table>");
    out
}

/// Every row of a batch as display strings (NULL as `NULL`).
fn row_strings(batch: &RecordBatch) -> Result<Vec<Vec<String>>, String> {
    let options = FormatOptions::default().with_null("NULL");
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok((0..batch.num_rows()).map(|r| formatters.iter().map(|f| f.value(r).to_string()).collect()).collect())
}

fn note(html: &str) -> String {
    format!("<p class=\"note\">{html}</p>")
}

/// A SQL string literal.
fn lit(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A quoted SQL identifier.
fn ident(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
        assert_eq!(lit("o'brien"), "'o''brien'");
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn checks_follow_each_methods_claim() {
        let report = [("models", "k=5, distinct_l=3"), ("k", "5"), ("h", "0.3"), ("m", "2")];
        let get = |key: &str| report.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        assert_eq!(claimed_checks("kanon_anonymize", &get).as_deref(), Some("k=5, distinct_l=3"));
        assert_eq!(claimed_checks("hceil_anonymize", &get).as_deref(), Some("k=5, h=0.3, catalog"));
        assert_eq!(claimed_checks("entropy_anonymize", &get).as_deref(), Some("k=5"));
        assert_eq!(claimed_checks("artuc", &get).as_deref(), Some("km=5:2"));
        assert_eq!(claimed_checks("generalize", &get), None);
    }

    #[test]
    fn svg_loses_its_declaration_only() {
        assert_eq!(inline_svg("<?xml version=\"1.0\"?>\n<svg a=\"1\"></svg>"), "<svg a=\"1\"></svg>");
    }
}
