//! The README cannot rot: every ```sql block of README.md runs, in order, in one session of the
//! binary, from the repository root, on a scratch ledger; any failing statement fails the test
//! and names the block's line in the README. A block fenced ```sql no-run is skipped (and
//! counted). Also the demo: every section of its story, on a scratch ledger, with its chart.

use std::path::Path;
use std::process::{Command, Output};

/// The ```sql blocks of `markdown`: (line of the fence, its info string's words after `sql`,
/// the body).
fn sql_blocks(markdown: &str) -> Vec<(usize, Vec<String>, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, Vec<String>, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                let mut words = info.split_whitespace();
                if words.next() == Some("sql") {
                    open = Some((i + 1, words.map(String::from).collect(), String::new()));
                } else if !info.trim().is_empty() {
                    // Another language's block: skip to its closing fence.
                    open = Some((i + 1, vec!["other".into()], String::new()));
                }
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, _, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md: a code block is not closed");
    blocks.into_iter().filter(|(_, info, _)| info.first().map(String::as_str) != Some("other")).collect()
}

fn anonfusion(args: &[&str], ledger_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anonfusion"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("ANONFUSION_LEDGER", ledger_dir.join("ledger.tsv"))
        .env("TMPDIR", ledger_dir)
        .output()
        .expect("run anonfusion")
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("anonfusion-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn every_sql_block_of_the_readme_runs_in_order() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let blocks = sql_blocks(&readme);
    let dir = scratch("readme");
    let mut files = Vec::new();
    let mut skipped = 0;
    for (line, info, body) in &blocks {
        if info.iter().any(|w| w == "no-run") {
            skipped += 1;
            continue;
        }
        // The file's name is what a failure names: the README line of the block. Its last
        // statement marks where the block's output ends.
        let file = dir.join(format!("README.md-block-at-line-{line}.sql"));
        std::fs::write(&file, format!("{body}SELECT '{END_OF_BLOCK}{line}' AS readme_block;\n")).unwrap();
        files.push(file.display().to_string());
    }
    println!("README.md: {} sql blocks, {} run, {skipped} skipped (no-run)", blocks.len(), files.len());
    assert!(files.len() >= 8, "the README's examples were not found: {} blocks", files.len());
    let mut args = vec!["-f"];
    args.extend(files.iter().map(String::as_str));
    let out = anonfusion(&args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "a README statement failed:\n{}\n(last output: {})",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout).lines().rev().take(5).collect::<Vec<_>>().join(" / ")
    );
    // Each block prints at most a screenful: a reader who pastes it sees all of it (issue 37:
    // the README's SQL printed ~77,000 lines, `SELECT *` on 30,000-row releases).
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let ends: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.contains(END_OF_BLOCK)).map(|(i, _)| i).collect();
    assert_eq!(ends.len(), files.len(), "every block's end marker is printed");
    let mut start = 0;
    for &end in &ends {
        // The marker's own table: border, header, separator above its row, a border below.
        let printed = end.saturating_sub(3).saturating_sub(start);
        let block = lines[end].split(END_OF_BLOCK).nth(1).unwrap_or_default().trim_end_matches([' ', '|']);
        assert!(printed <= SCREENFUL, "README.md block at line {block} prints {printed} lines (at most {SCREENFUL})");
        start = end + 2;
    }
}

/// Lines a README block may print: a terminal's screenful.
const SCREENFUL: usize = 50;

/// The text of the statement that ends each README block's output.
const END_OF_BLOCK: &str = "end of README block at line ";

#[test]
fn the_demo_tells_the_story_on_a_scratch_ledger() {
    let dir = scratch("demo");
    let out = anonfusion(&["demo"], &dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "demo failed:\n{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    // The script's comments are the section headers, in order, each before its statements.
    let sections = [
        "1. Load.",
        "2. k-anonymity under an h-ceiling",
        "3. Differentially private",
        "4. The k-anonymous",
        "5. Demographics plus",
        "6. What each release costs",
        "7. One chart",
    ];
    let at: Vec<usize> =
        sections.iter().map(|s| stdout.find(s).unwrap_or_else(|| panic!("no section '{s}':\n{stdout}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "sections out of order: {at:?}");
    assert!(!stdout.contains("\n-- "), "comments are printed without their dashes");
    // Every method, the catalog, the truthful view, the ledger and the verifier ran.
    for call in [
        "hceil_anonymize(",
        "nps_h_catalog",
        "truthful_view(",
        "ipa_release(",
        "anon_privacy_ledger",
        "artuc(",
        "verify_release(",
    ] {
        assert!(stdout.contains(call), "the demo does not show {call}");
    }
    assert!(!stdout.contains("| false "), "a verification failed:\n{stdout}");
    // The budget was charged to a scratch ledger under the demo's temporary directory, not to
    // $ANONFUSION_LEDGER (which this run points into the same directory: it must stay unwritten).
    assert!(stdout.contains("Privacy ledger of this demo:") && stdout.contains("scratch"));
    let charge = |l: &&str| l.contains("| release ") && l.contains("| nps_ipa ") && l.contains("| epsilon-DP ");
    assert!(stdout.lines().any(|l| charge(&l)), "the ledger shows no charge:\n{stdout}");
    assert!(!dir.join("ledger.tsv").exists(), "the demo wrote the user's ledger");
    // The side-by-side table: each query's ARE row for the three releases.
    assert!(stdout.contains("| query | age_group | original | k_anonymity | h_ceiling | ipa"), "{stdout}");
    assert_eq!(stdout.matches("| ARE ").count(), 4, "{stdout}");
    // The chart goes to a new file of the temporary directory, named in the last line: a file
    // of another user under a fixed name there made the demo fail (issue 37).
    let chart = stdout.trim_end().rsplit_once("written to ").map(|(_, p)| std::path::PathBuf::from(p));
    let chart = chart.unwrap_or_else(|| panic!("the demo does not say where the chart went:\n{stdout}"));
    assert!(chart.starts_with(&dir) && chart.file_name().is_some_and(|n| n != "anonfusion-demo-q1.svg"), "{chart:?}");
    let svg = std::fs::read_to_string(&chart).unwrap_or_else(|e| panic!("no chart at {}: {e}", chart.display()));
    assert!(svg.contains("h-ceiling (ARE") && svg.contains("IPA (ARE") && svg.contains("age (bands of 5)"));
    // --chart FILE puts it where the user says.
    let mine = dir.join("mine.svg");
    let out = anonfusion(&["demo", "--chart", mine.to_str().unwrap()], &dir);
    assert!(out.status.success(), "demo --chart failed:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).trim_end().ends_with(&format!("written to {}", mine.display())));
    let mine = std::fs::read_to_string(&mine).unwrap();
    assert!(mine.contains("h-ceiling (ARE") && mine.contains("IPA (ARE"), "{mine}");
    let _ = std::fs::remove_dir_all(&dir);
}
