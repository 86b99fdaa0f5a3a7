//! `anonfusion evaluate`: set up tables (scripts, statements), then compare each query file's
//! answer on the original table with its estimate from the release, per group, optionally
//! with an SVG chart per query, and the release's two-way-marginal score; with `--risk`, the
//! re-identification risk of both (`risk_report`). The estimation itself lives in
//! `anonfusion::eval`.

use super::Runner;
use super::format::{self, Format};
use anonfusion::Registry;
use anonfusion::eval::{self, Agg, QueryReport};
use datafusion::prelude::SessionContext;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub(crate) struct EvaluateArgs {
    /// The original table (its roles and hierarchies must be declared, e.g. by load_dataset)
    #[arg(long, value_name = "TABLE")]
    original: String,
    /// The release to estimate from
    #[arg(long, value_name = "TABLE")]
    release: String,
    /// A counterfeit catalog (class_ids, sensitive_value, count): counterfeit-aware estimates
    #[arg(long, value_name = "TABLE")]
    catalog: Option<String>,
    /// SQL scripts run first to set up the tables (repeatable)
    #[arg(long = "setup", value_name = "FILE")]
    setup: Vec<PathBuf>,
    /// SQL statements run after the setup scripts, e.g. "SELECT * FROM load_dataset('nps')" (repeatable)
    #[arg(long = "load", value_name = "SQL", allow_hyphen_values = true)]
    load: Vec<String>,
    /// Write an SVG chart of original vs estimate per group (several queries: FILE_1.svg, ...)
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write one self-contained HTML page for an ethics board: method and parameters, the
    /// guarantee re-checked by verify_release (and the privacy ledger), re-identification
    /// risk of the original and the release, utility, and each query's error with its chart
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// Chart title (default: the first line of the query file)
    #[arg(long)]
    title: Option<String>,
    /// Also print risk_report for the original and the release (and fill the report's risk
    /// section), with these options (e.g. "population=301620"; "" for the defaults; the
    /// catalog is passed on)
    #[arg(long, value_name = "OPTIONS")]
    risk: Option<String>,
    /// Query files, one query each
    #[arg(required = true, value_name = "QUERY_FILE")]
    queries: Vec<PathBuf>,
}

/// Run the subcommand; the error is the message to show.
/// `ctx` and `registry` are the binary's session (local, or on a Ballista cluster): the harness
/// needs the registry of roles and hierarchies that the setup statements fill.
pub async fn run(
    args: &EvaluateArgs,
    format: Format,
    ctx: &SessionContext,
    registry: &Registry,
    out: &mut dyn Write,
) -> Result<(), String> {
    let mut runner = Runner::new(ctx.clone(), format);
    let mut sink = std::io::sink();
    for file in &args.setup {
        let script = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        runner.run_script(&file.display().to_string(), &script, &mut sink).await?;
    }
    for statement in &args.load {
        runner.run_script("--load", statement, &mut sink).await?;
    }
    let mut summaries = Vec::new();
    let mut sections = Vec::new();
    for (i, file) in args.queries.iter().enumerate() {
        let sql = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let report = eval::query_error(ctx, registry, &sql, &args.original, &args.release, args.catalog.as_deref())
            .await
            .map_err(|e| format!("{}: {e}", file.display()))?;
        writeln!(out, "{}: {}", file.display(), first_line(&sql)).map_err(|e| e.to_string())?;
        let batch = report.to_batch().map_err(|e| e.to_string())?;
        format::write(format, false, &QueryReport::schema(), &[batch], out).map_err(|e| e.to_string())?;
        let title = args.title.clone().unwrap_or_else(|| first_line(&sql));
        if let Some(plot) = &args.plot {
            let path = plot_path(plot, i, args.queries.len());
            std::fs::write(&path, eval::plot::svg(&report, &title, &y_label(&sql)))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            writeln!(out, "chart: {}", path.display()).map_err(|e| e.to_string())?;
        }
        if args.report.is_some() {
            let svg = eval::plot::svg(&report, &title, &y_label(&sql));
            let file = file.display().to_string();
            sections.push(super::report::QuerySection { file, title, summary: report.summary(), svg });
        }
        summaries.push(report.summary());
    }
    if summaries.len() > 1 {
        writeln!(out, "{}", workload_line(&summaries)).map_err(|e| e.to_string())?;
    }
    let score =
        anonfusion::metrics::two_way_marginal(ctx, registry, &args.original, &args.release, args.catalog.as_deref())
            .await
            .map_err(|e| e.to_string())?;
    if let Some((score, pairs)) = score {
        writeln!(
            out,
            "two-way-marginal score: {score:.1} of 1000 (mean over {pairs} attribute pairs of 1 - L1/2, default bins; \
             metric_value(..., 'two_way_marginal') for others)"
        )
        .map_err(|e| e.to_string())?;
    }
    if let Some(options) = &args.risk {
        risk(args, options, &mut runner, out).await?;
    }
    if let Some(path) = &args.report {
        let subject = super::report::Subject {
            original: &args.original,
            release: &args.release,
            catalog: args.catalog.as_deref(),
            risk_options: args.risk.as_deref(),
        };
        let page = super::report::page(ctx, &subject, &sections, score).await;
        std::fs::write(path, page).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        writeln!(out, "report: {}", path.display()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `risk_report` of the original and of the release, as the SQL function prints them; a
/// release it refuses (a DP release) gets its message, not a failed evaluation.
async fn risk(args: &EvaluateArgs, options: &str, runner: &mut Runner, out: &mut dyn Write) -> Result<(), String> {
    let queries = super::report::risk_queries(&args.original, &args.release, args.catalog.as_deref(), options);
    for (what, sql) in queries {
        writeln!(out, "re-identification risk of the {what}:").map_err(|e| e.to_string())?;
        if let Err(e) = runner.run_script("--risk", &format!("{sql};"), out).await {
            writeln!(out, "{e}").map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The workload's ARE over the original's groups (mean of the queries'), the union ARE, and
/// the groups missing from or spurious in the estimates.
fn workload_line(summaries: &[eval::Summary]) -> String {
    let mean = |f: &dyn Fn(&eval::Summary) -> Option<f64>| {
        let v: Vec<f64> = summaries.iter().filter_map(f).collect();
        if v.is_empty() { "-".to_string() } else { format!("{:.6}", v.iter().sum::<f64>() / v.len() as f64) }
    };
    let missing: usize = summaries.iter().map(|s| s.missing.groups).sum();
    let spurious: usize = summaries.iter().map(|s| s.spurious.groups).sum();
    let records: f64 = summaries.iter().map(|s| s.spurious.mass).sum();
    format!(
        "workload ARE over {} queries: {} over the original's groups ({} over the union); \
         {missing} groups missing, {spurious} spurious ({records:.1} estimated records)",
        summaries.len(),
        mean(&eval::Summary::are),
        mean(&|s| s.union.are)
    )
}

/// The first non-empty line of a query file, comment marks removed.
fn first_line(sql: &str) -> String {
    sql.lines().map(|l| l.trim().trim_start_matches("--").trim()).find(|l| !l.is_empty()).unwrap_or("query").to_string()
}

fn y_label(sql: &str) -> String {
    match eval::parse_query(sql).map(|q| q.agg) {
        Ok(Agg::CountStar) => "COUNT(*)".into(),
        Ok(Agg::Count(c)) => format!("COUNT({c})"),
        Ok(Agg::Sum(c)) => format!("SUM({c})"),
        Ok(Agg::Avg(c)) => format!("AVG({c})"),
        Err(_) => "answer".into(),
    }
}

/// `out.svg` for one query; `out_1.svg`, `out_2.svg`, ... for several.
fn plot_path(plot: &Path, i: usize, n: usize) -> PathBuf {
    if n == 1 {
        return plot.to_path_buf();
    }
    let stem = plot.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "plot".into());
    plot.with_file_name(format!("{stem}_{}.svg", i + 1))
}
