//! `anonfusion evaluate ... --report FILE.html` for one release of each method, rendered by a
//! real browser: headless Chromium dumps the page's DOM as it rendered it (every section there,
//! the guarantee re-checked) and takes a screenshot, which must not be blank.
//!
//! Chromium: Debian's `chromium-headless-shell` (or `chromium`), which .ci/run installs when it
//! is missing. Without it these tests fail and say so: a report nobody rendered is not tested.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const SECTIONS: [&str; 5] = ["method", "guarantee", "risk", "utility", "queries"];

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("anonfusion-report-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `evaluate` with `load` statements and one query; the page's path.
fn report(name: &str, original: &str, release: &str, load: &[&str], query: &str, extra: &[&str]) -> PathBuf {
    let dir = scratch(name);
    let query_file = dir.join("q.sql");
    std::fs::File::create(&query_file).unwrap().write_all(query.as_bytes()).unwrap();
    let page = dir.join("release.html");
    let mut command = Command::new(env!("CARGO_BIN_EXE_anonfusion"));
    command
        .env("ANONFUSION_HISTORY", "/nonexistent/dir/history")
        .env("ANONFUSION_LEDGER", dir.join("ledger.tsv"))
        .args(["evaluate", "--original", original, "--release", release]);
    for statement in load {
        command.args(["--load", statement]);
    }
    command.args(extra);
    command.arg("--report").arg(&page).arg(&query_file);
    let out = command.output().expect("the anonfusion binary starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("report: {}", page.display())), "{stdout}");
    page
}

/// The installed headless Chromium.
fn chromium() -> &'static str {
    for candidate in ["chromium-headless-shell", "chromium"] {
        if Command::new(candidate).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return candidate;
        }
    }
    panic!("no headless Chromium: install Debian's chromium-headless-shell (apt-get install chromium-headless-shell)");
}

/// Chromium's DOM of the rendered page, and the size of its screenshot in bytes.
fn render(page: &Path) -> (String, u64) {
    let url = format!("file://{}", page.display());
    let dom = Command::new(chromium()).args(BROWSER).args(["--dump-dom", &url]).output().unwrap();
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let rendered = (String::from_utf8(dom.stdout).unwrap(), screenshot(page));
    // The checks quote the DOM they fail on; the files are not needed after this.
    std::fs::remove_dir_all(page.parent().unwrap()).unwrap();
    rendered
}

const BROWSER: [&str; 4] = ["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"];

/// A 1200 x 2400 screenshot of a page, as PNG bytes on disk: its size.
fn screenshot(page: &Path) -> u64 {
    let png = page.with_extension("png");
    let shot = Command::new(chromium())
        .args(BROWSER)
        .args(["--window-size=1200,2400", "--hide-scrollbars"])
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
    std::fs::metadata(&png).unwrap().len()
}

/// The screenshot of an empty page of the same size: what "blank" compresses to.
fn blank_screenshot() -> u64 {
    static BLANK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BLANK.get_or_init(blank_page_screenshot)
}

fn blank_page_screenshot() -> u64 {
    let page = scratch("blank").join("blank.html");
    std::fs::write(&page, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let bytes = screenshot(&page);
    std::fs::remove_dir_all(page.parent().unwrap()).unwrap();
    bytes
}

/// The text of one `<section id=...>` of the DOM.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom.find(&format!("<section id=\"{id}\">")).unwrap_or_else(|| panic!("no section {id}"));
    let end = dom[start..].find("</section>").map_or(dom.len(), |e| start + e);
    &dom[start..end]
}

/// What every page must show once rendered: each section with its heading and content, no
/// error in place of a table, and a screenshot that is not blank: PNG compresses a uniform page
/// to a few kilobytes, so a rendered page of tables, text and a chart is many times larger.
fn check_page(dom: &str, screenshot_bytes: u64) {
    for id in SECTIONS {
        let s = section(dom, id);
        assert!(s.contains("<h2>"), "section {id} has no heading");
        assert!(s.contains("<table>") || s.contains("<svg"), "section {id} has no table or chart: {s}");
    }
    assert!(section(dom, "queries").contains("<svg"), "the query chart is not inline");
    assert!(!dom.contains("not found"), "a table function or table is missing: {dom}");
    let blank = blank_screenshot();
    assert!(
        screenshot_bytes > 10 * blank,
        "the screenshot ({screenshot_bytes} bytes) is about as blank as an empty page ({blank})"
    );
}

/// The guarantee section re-checked the claim and every check held.
fn check_verified(dom: &str) {
    let g = section(dom, "guarantee");
    assert!(g.contains("verify_release"), "{g}");
    assert!(g.contains("class=\"holds\""), "no check held: {g}");
    assert!(!g.contains("class=\"fails\""), "a check failed: {g}");
}

const ADULT: &str = "SELECT * FROM load_dataset('adult', 5000, 1)";
const ADULT_Q: &str = "SELECT sex, COUNT(*) FROM adult GROUP BY sex";
const NPS: &str = "SELECT * FROM load_dataset('nps', 20000, 7)";
const NPS_BUDGET: &str = "SELECT * FROM set_privacy_budget('nps', 10.0)";
const NPS_Q: &str = "SELECT FLOOR(age/10)*10 AS decade, COUNT(*) FROM nps GROUP BY FLOOR(age/10)*10";

#[test]
fn kanon_report() {
    let load = [ADULT, "SELECT COUNT(*) FROM kanon_anonymize('adult', 'adult_k5', 5, 'suppression=2')"];
    let (dom, shot) = render(&report("kanon", "adult", "adult_k5", &load, ADULT_Q, &["--risk", "population=300000"]));
    check_page(&dom, shot);
    check_verified(&dom);
    assert!(section(&dom, "method").contains("kanon_anonymize"));
    let risk = section(&dom, "risk");
    assert!(risk.contains("population=300000") && risk.contains("journalist"), "{risk}");
}

#[test]
fn hceil_report() {
    let load = [ADULT, "SELECT COUNT(*) FROM hceil_anonymize('adult', 'adult_h', 5, 0.3)"];
    let (dom, shot) = render(&report("hceil", "adult", "adult_h", &load, ADULT_Q, &["--catalog", "adult_h_catalog"]));
    check_page(&dom, shot);
    check_verified(&dom);
    assert!(section(&dom, "guarantee").contains("catalog"));
}

#[test]
fn entropy_report() {
    let load = [ADULT, "SELECT COUNT(*) FROM entropy_anonymize('adult', 'adult_e', 3)"];
    let (dom, shot) = render(&report("entropy", "adult", "adult_e", &load, ADULT_Q, &[]));
    check_page(&dom, shot);
    check_verified(&dom);
}

#[test]
fn artuc_report() {
    let load = [
        "SELECT * FROM load_dataset('informs', 4000, 1)",
        "SELECT * FROM load_constraints('informs', 'UC1')",
        "SELECT COUNT(*) FROM artuc('informs', 'informs_a', 'informs_uc1', 10, 2, 0.2, 200000)",
    ];
    let q = "SELECT race, COUNT(*) FROM informs GROUP BY race";
    let (dom, shot) = render(&report("artuc", "informs", "informs_a", &load, q, &[]));
    check_page(&dom, shot);
    check_verified(&dom);
}

/// A differentially private release: the page states the guarantee and shows the ledger's
/// account of the source, with the call's charge.
fn check_dp(dom: &str, method: &str) {
    let g = section(dom, "guarantee");
    assert!(g.contains("differentially private"), "{g}");
    assert!(g.contains(method), "the ledger does not show the call: {g}");
}

#[test]
fn ipa_report() {
    let load = [NPS, NPS_BUDGET, "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0)"];
    let (dom, shot) = render(&report("ipa", "nps", "nps_ipa", &load, NPS_Q, &[]));
    check_page(&dom, shot);
    check_dp(&dom, "ipa_release");
}

#[test]
fn dp_synthesize_report() {
    let load = [NPS, NPS_BUDGET, "SELECT COUNT(*) FROM dp_synthesize('nps', 'nps_syn', 1.0)"];
    let (dom, shot) = render(&report("synth", "nps", "nps_syn", &load, NPS_Q, &[]));
    check_page(&dom, shot);
    check_dp(&dom, "dp_synthesize");
}
