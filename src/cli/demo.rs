//! `anonfusion demo`: the bundled script (sql/demo.sql), each statement echoed before its
//! result and the script's comments printed as section headers, on a scratch privacy ledger;
//! then one chart, Q1 on every release, written to a file: `--chart FILE`, or a new file in the
//! temporary directory (never a fixed name there: on a shared machine another user's file of
//! that name cannot be overwritten).

use super::{DEMO_SQL, Runner, split};
use anonfusion::Registry;
use anonfusion::dp::ledger::Ledger;
use anonfusion::eval;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Q1 of the papers, the query the chart shows.
const Q1_SQL: &str = include_str!("../../sql/q1.sql");

/// The releases the script makes of `nps`, named as the chart's legend names them, each with
/// its counterfeit catalog if it has one.
const RELEASES: [(&str, &str, Option<&str>); 3] =
    [("k-anonymity", "nps_k10", None), ("h-ceiling", "nps_h", Some("nps_h_catalog")), ("IPA", "nps_ipa", None)];

pub async fn run(
    runner: &mut Runner,
    registry: &Registry,
    chart: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    // The demo spends privacy budget on a table it loads itself: a scratch ledger, so a demo run
    // never charges (or is refused by) the ledger that guards the user's real data.
    let ledger = Ledger::temporary();
    writeln!(
        out,
        "Privacy ledger of this demo: {} (scratch, removed when the demo ends; yours is not touched)",
        ledger.path().display()
    )
    .map_err(io)?;
    writeln!(out).map_err(io)?;
    registry.set_ledger(ledger);
    runner.echo = true;
    let lines: Vec<&str> = DEMO_SQL.lines().collect();
    let mut done = 0;
    for piece in split::split_script(DEMO_SQL) {
        // Lines after the previous statement up to this one (none if they share a line).
        write_header(lines.get(done..piece.line() - 1).unwrap_or_default(), out).map_err(io)?;
        runner.run(&piece, out).await.map_err(|e| format!("sql/demo.sql:{}: {e}", piece.line()))?;
        done = done.max(piece.line() - 1 + piece.text().lines().count());
    }
    let path = write_chart(runner, registry, chart).await?;
    writeln!(out, "\n7. One chart: Q1 on the original and from each release, written to {}", path.display()).map_err(io)
}

/// The comment lines before a statement, without their `--`; blank lines between comment
/// paragraphs are kept. (Each result is followed by a blank line already.)
fn write_header(lines: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
    let text: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| l.is_empty() || l.starts_with("--"))
        .map(|l| l.trim_start_matches("--").strip_prefix(' ').unwrap_or(l.trim_start_matches("--")))
        .skip_while(|l| l.is_empty())
        .collect();
    let end = text.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
    for line in &text[..end] {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Q1 answered from each release next to the original, as an SVG at `chart` or in a new file
/// of the temporary directory.
async fn write_chart(runner: &Runner, registry: &Registry, chart: Option<&Path>) -> Result<PathBuf, String> {
    let mut reports = Vec::new();
    for (name, release, catalog) in RELEASES {
        let report = eval::query_error(&runner.ctx, registry, Q1_SQL, "nps", release, catalog)
            .await
            .map_err(|e| format!("chart: {e}"))?;
        reports.push((name, report));
    }
    let named: Vec<(&str, &eval::QueryReport)> = reports.iter().map(|(n, r)| (*n, r)).collect();
    let title = "Q1: male stroke patients without surgery per 5-year age group";
    let svg = eval::plot::compare_svg(&named, title, "patients");
    let (path, mut file) = match chart {
        Some(p) => (p.to_path_buf(), std::fs::File::create(p)),
        None => new_temp_file(),
    };
    let file = file.as_mut().map_err(|e| format!("cannot write the chart to {}: {e}", path.display()))?;
    file.write_all(svg.as_bytes()).map_err(|e| format!("cannot write the chart to {}: {e}", path.display()))?;
    Ok(path)
}

/// A file of the temporary directory that did not exist before (`anonfusion-demo-q1-PID.svg`,
/// then `-PID-1`, `-PID-2`, ... if taken).
fn new_temp_file() -> (PathBuf, std::io::Result<std::fs::File>) {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let suffix = if n == 0 { String::new() } else { format!("-{n}") };
        let path = std::env::temp_dir().join(format!("anonfusion-demo-q1-{pid}{suffix}.svg"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            opened => return (path, opened),
        }
    }
}
