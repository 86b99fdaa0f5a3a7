//! The `anonfusion` binary driven through piped stdin and its flags.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The binary with no history file and the privacy ledger at `ledger`.
fn anonfusion(ledger: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_anonfusion"));
    command.env("ANONFUSION_HISTORY", "/nonexistent/dir/history").env("ANONFUSION_LEDGER", ledger);
    command
}

fn run(args: &[&str], stdin: &str) -> Output {
    // Never the user's privacy ledger: a test that touched it would fail here.
    let mut child = anonfusion(Path::new("/nonexistent/dir/ledger.tsv"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the anonfusion binary starts");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn multi_line_statement() {
    let out = run(&[], "SELECT\n 1 + 1\n AS two;\n");
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| two |"), "{stdout}");
    assert!(stdout.contains("| 2   |"), "{stdout}");
}

#[test]
fn an_error_does_not_end_the_session() {
    let out = run(&[], "SELECT * FROM no_such_table;\nSELECT 40 + 2 AS answer;\n");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stderr.starts_with("Error: "), "{stderr}");
    assert!(stderr.contains("no_such_table"), "{stderr}");
    assert!(stdout.contains("| 42     |"), "{stdout}");
}

#[test]
fn describe_lists_tables_and_columns() {
    let out = run(&[], "CREATE TABLE t AS VALUES (1);\n\\d\n\\d t\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| t "), "{stdout}");
    assert!(stdout.contains("anon_roles"), "{stdout}");
    assert!(stdout.contains("anon_hierarchies"), "{stdout}");
    assert!(stdout.contains("| column1 | Int64 |"), "{stdout}");
}

#[test]
fn quit_ends_the_session() {
    let out = run(&[], "SELECT 1 AS first;\n\\q\nSELECT 2 AS second;\n");
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("first") && !stdout.contains("second"), "{stdout}");
}

#[test]
fn script_stops_at_the_failing_statement() {
    let dir = std::env::temp_dir().join(format!("anonfusion-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.sql");
    let script = "-- setup\nCREATE TABLE s AS VALUES (1);\nSELECT 'one;' AS a;\n\n\nSELECT *\n  FROM missing_table;\nSELECT 'never' AS b;\n";
    std::fs::write(&path, script).unwrap();
    let out = run(&["-f", path.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).ok();
    assert!(!out.status.success());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("one;") && !stdout.contains("never"), "{stdout}");
    assert!(stderr.contains("broken.sql:6:"), "{stderr}");
    assert!(stderr.contains("missing_table"), "{stderr}");
    assert!(stderr.contains("in statement: SELECT *"), "{stderr}");
}

#[test]
fn output_formats() {
    let sql = "SELECT 1 AS n, 'a,b' AS s UNION ALL SELECT 2, 'c' ORDER BY n";
    let csv = run(&["--format", "csv", "-c", sql], "");
    assert!(csv.status.success(), "{}", text(&csv.stderr));
    assert_eq!(text(&csv.stdout), "n,s\n1,\"a,b\"\n2,c\n");

    let json = run(&["--format", "json", "-c", sql], "");
    assert_eq!(text(&json.stdout), "[{\"n\":1,\"s\":\"a,b\"},{\"n\":2,\"s\":\"c\"}]\n");

    let md = run(&["--format", "markdown", "-c", sql], "");
    assert_eq!(text(&md.stdout), "| n | s |\n|---|---|\n| 1 | a,b |\n| 2 | c |\n");

    // DDL prints nothing; -c may hold several statements and may be repeated.
    let ddl =
        run(&["--format", "csv", "-c", "CREATE TABLE x AS VALUES (7); SELECT * FROM x", "-c", "SELECT 8 AS y"], "");
    assert!(ddl.status.success(), "{}", text(&ddl.stderr));
    assert_eq!(text(&ddl.stdout), "column1\n7\ny\n8\n");
}

#[test]
fn timing_prints_elapsed_and_cpu_time() {
    let out = run(&[], "\\timing\nSELECT 1;\n");
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("Time: ")).unwrap_or_else(|| panic!("{stdout}"));
    // "Time: 1.234 ms, CPU 0.987 ms": both parse as milliseconds.
    let (wall, cpu) =
        line.strip_prefix("Time: ").and_then(|l| l.split_once(" ms, CPU ")).unwrap_or_else(|| panic!("{line}"));
    let cpu = cpu.strip_suffix(" ms").unwrap_or_else(|| panic!("{line}"));
    assert!(wall.parse::<f64>().unwrap() >= 0.0 && cpu.parse::<f64>().unwrap() >= 0.0, "{line}");
}

#[test]
fn help_lists_every_command() {
    let out = run(&[], "\\?\n");
    let stdout = text(&out.stdout);
    for word in ["\\q", "\\d NAME", "\\df", "\\x", "\\i FILE", "\\o [FILE]", "\\timing", "\\?", "Ctrl-C"] {
        assert!(stdout.contains(word), "{word} missing from {stdout}");
    }
}

#[test]
fn df_lists_each_table_function_with_signature_and_purpose() {
    let out = run(&[], "\\df\n\\df hceil\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for word in ["load_dataset(name [, rows", "generalize(source, output", "ipa_release", "set_privacy_budget"] {
        assert!(stdout.contains(word), "{word} missing from {stdout}");
    }
    // One entry per function, wrapped: no line pads to the longest signature (issue 37: every
    // row was padded and wrapped 3 times on a 160-column terminal). Off a terminal, 100 columns.
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "{stdout}");
    let end_of_all = " functions)\n";
    let filtered = &stdout[stdout.find(end_of_all).unwrap() + end_of_all.len()..];
    assert!(filtered.contains("hceil_anonymize: k-anonymity under an h-ceiling"), "{filtered}");
    assert!(filtered.contains("\n    hceil_anonymize(source, output, k [, h"), "{filtered}");
    // Each declared option on its own line, with its values and default.
    assert!(filtered.contains("\n      objective: one of rce, charged, fewest; default rce."), "{filtered}");
    assert!(!filtered.contains("load_dataset"), "{filtered}");
    // Other formats keep the table.
    let out = run(&["--format", "csv"], "\\df hceil\n");
    assert!(text(&out.stdout).starts_with("name,purpose,signature,options\n"), "{}", text(&out.stdout));
}

#[test]
fn describe_shows_roles_and_hierarchies() {
    let out = run(&[], "SELECT * FROM load_dataset('adult');\n\\d ADULT\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| column         | type  | nullable | role             | hierarchy "), "{stdout}");
    assert!(
        stdout.contains("| age            | Int64 | NO       | quasi_identifier | numeric, height 4, 100 leaves"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| occupation     | Utf8  | NO       | sensitive        | categorical, height 2, 14 leaves"),
        "{stdout}"
    );
}

#[test]
fn expanded_display_toggles() {
    let out = run(&[], "\\x\nSELECT 1 AS a, 'two' AS bee;\n\\x\nSELECT 3 AS c;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Expanded display is on.\n-[ RECORD 1 ]\na   | 1\nbee | two\nExpanded display is off.\n+---+\n| c |\n+---+\n| 3 |\n+---+\n"
    );
}

#[test]
fn include_runs_a_file_and_output_redirects_results() {
    let dir = std::env::temp_dir().join(format!("anonfusion-cli-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (script, results) = (dir.join("setup.sql"), dir.join("results.txt"));
    std::fs::write(&script, "CREATE TABLE from_file AS SELECT 'included' AS t;\n\\timing\n").unwrap();
    let input = format!(
        "\\i {}\n\\timing\n\\o {}\nSELECT t FROM from_file;\n\\o\nSELECT 'on screen' AS s;\n",
        script.display(),
        results.display()
    );
    let out = run(&[], &input);
    let written = std::fs::read_to_string(&results).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Timing is on.") && stdout.contains("Timing is off."), "{stdout}");
    assert!(stdout.contains("on screen") && !stdout.contains("| included"), "{stdout}");
    assert_eq!(written, "+----------+\n| t        |\n+----------+\n| included |\n+----------+\n");
    // A missing file is an error naming it.
    let out = run(&["-c", "\\i /nonexistent/script.sql"], "");
    assert!(!out.status.success() && text(&out.stderr).contains("cannot read /nonexistent/script.sql"));
}

#[test]
fn a_command_inside_an_open_statement_runs_and_leaves_it_open() {
    let out = run(&["--format", "csv"], "SELECT 6 * 7\n\\timing\nAS answer;\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("Timing is on.\nanswer\n42\nTime: "), "{stdout}");
}

#[test]
fn piped_errors_exit_non_zero() {
    let out = run(&[], "SELECT * FROM no_such_table;\nSELECT 40 + 2 AS answer;\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("| 42     |"), "the session goes on after the error");
    assert_eq!(text(&out.stderr).lines().filter(|l| l.starts_with("Error: ")).count(), 1, "{}", text(&out.stderr));
    assert!(run(&[], "SELECT 1;\n").status.success());
}

#[test]
fn scripts_and_commands_print_each_error_once() {
    let dir = std::env::temp_dir().join(format!("anonfusion-cli-once-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.sql");
    std::fs::write(&path, "SELECT * FROM missing_table;\n").unwrap();
    let from_file = run(&["-f", path.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).ok();
    for out in [from_file, run(&["-c", "SELECT * FROM missing_table"], "")] {
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        assert_eq!(stderr.matches("missing_table").count(), 2, "the error and its statement, once: {stderr}");
        assert_eq!(stderr.lines().filter(|l| l.starts_with("Error: ")).count(), 1, "{stderr}");
    }
}

#[test]
fn list_columns_print_as_delimited_text() {
    let sql = "SELECT make_array('250.00', '401.9') AS codes, 1 AS n";
    let table = run(&["-c", sql], "");
    assert!(table.status.success(), "{}", text(&table.stderr));
    assert!(text(&table.stdout).contains("| 250.00;401.9 | 1 |"), "{}", text(&table.stdout));
    let csv = run(&["--format", "csv", "-c", sql], "");
    assert_eq!(text(&csv.stdout), "codes,n\n250.00;401.9,1\n");
    let json = run(&["--format", "json", "-c", sql], "");
    assert_eq!(text(&json.stdout), "[{\"codes\":[\"250.00\",\"401.9\"],\"n\":1}]\n");
}

#[test]
fn no_pager_in_pipes() {
    let mut child = anonfusion(Path::new("/nonexistent/dir/ledger.tsv"))
        .env("PAGER", "sed s/^/paged:/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"SELECT * FROM generate_series(1, 500) AS t(n);\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| 500 |") && !stdout.contains("paged:"), "{stdout}");
}

#[test]
fn commands_and_scripts_run_in_the_order_given() {
    let dir = std::env::temp_dir().join(format!("anonfusion-cli-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("q.sql");
    std::fs::write(&path, "-- reads the table the -c before it made\nSELECT v * 2 AS doubled FROM made_by_c;\n")
        .unwrap();
    let out =
        run(&["-c", "CREATE TABLE made_by_c AS SELECT 21 AS v", "-f", path.to_str().unwrap(), "--format", "csv"], "");
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("42"), "{}", text(&out.stdout));
    // A -c value may start with a comment, e.g. a whole script file's text.
    let out = run(&["-c", "-- a comment first\nSELECT 7 AS seven", "--format", "csv"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains('7'));
}

/// The CLI plans every statement through `anonfusion::sql::run`: a plain EXPLAIN of a DP release
/// is refused and charges nothing (issue 18), where `ctx.sql` would have released and charged.
#[test]
fn explain_in_the_cli_neither_publishes_nor_charges() {
    let dir = std::env::temp_dir().join(format!("anonfusion-cli-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ledger = dir.join("ledger.tsv");
    let _ = std::fs::remove_file(&ledger);
    let out = anonfusion(&ledger)
        .args(["-c", "SELECT COUNT(*) FROM load_dataset('nps', 10000, 7)"])
        .args(["-c", "SELECT * FROM set_privacy_budget('nps', 5)"])
        .args(["-c", "EXPLAIN SELECT COUNT(*) FROM ipa_release('nps', 'nps_dp', 1.0)"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(stderr.contains("EXPLAIN without ANALYZE has no effect"), "{stderr}");
    let out = anonfusion(&ledger)
        .args(["-c", "SELECT COUNT(*) FROM load_dataset('nps', 10000, 7)"])
        .args(["-c", "SELECT COUNT(*) AS released FROM anon_privacy_ledger WHERE release IS NOT NULL"])
        // The control: a real release is recorded, so the count above could have been 1.
        .args(["-c", "SELECT COUNT(*) FROM ipa_release('nps', 'nps_dp', 1.0)"])
        .args(["-c", "SELECT COUNT(*) AS released FROM anon_privacy_ledger WHERE release IS NOT NULL"])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("released\n0\n"), "EXPLAIN recorded nothing: {stdout}");
    assert!(stdout.contains("released\n1\n"), "the real release is recorded: {stdout}");
}
