//! The interactive REPL, driven through a pseudo-terminal as a user at a terminal drives it:
//! Ctrl-C cancels the running statement and keeps the session, history is written per
//! statement, Tab completes, long results go through the pager. Also, without a terminal,
//! the cancellation the REPL relies on: a search told to stop registers nothing and spends
//! no budget.

mod common;

use anonfusion::progress::Progress;
use common::{err, int, rows};
use nix::pty::{Winsize, openpty};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PROMPT: &str = "anonfusion> ";
/// What rustyline writes to ask the terminal where the cursor is.
const CURSOR_QUERY: &[u8] = b"\x1b[6n";

/// The REPL binary on the slave side of a pseudo-terminal, as its controlling terminal (so
/// Ctrl-C typed into the master becomes SIGINT), with everything it writes collected.
struct Repl {
    child: Child,
    master: File,
    seen: Arc<Mutex<Vec<u8>>>,
    /// Where the next `expect` starts looking.
    mark: usize,
    dir: PathBuf,
}

impl Repl {
    /// `rows` lines tall (wide enough that no line wraps); `pager` as `$PAGER`, if any.
    fn start(test: &str, rows: u16, pager: Option<&str>) -> Repl {
        let dir = std::env::temp_dir().join(format!("anonfusion-repl-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let size = Winsize { ws_row: rows, ws_col: 400, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = openpty(Some(&size), None).expect("a pseudo-terminal");
        let mut command = Command::new(env!("CARGO_BIN_EXE_anonfusion"));
        command
            .env("ANONFUSION_HISTORY", dir.join("history"))
            // Never the user's privacy ledger.
            .env("ANONFUSION_LEDGER", dir.join("ledger.tsv"))
            .env("TERM", "xterm")
            .env_remove("PAGER")
            .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
            .stdout(Stdio::from(pty.slave.try_clone().unwrap()))
            .stderr(Stdio::from(pty.slave.try_clone().unwrap()));
        if let Some(p) = pager {
            command.env("PAGER", p);
        }
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                nix::unistd::setsid()?;
                if nix::libc::ioctl(0, nix::libc::TIOCSCTTY as _, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("the anonfusion binary starts");
        drop(command);
        drop(pty.slave);
        let master = File::from(pty.master);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (mut reader, sink) = (master.try_clone().unwrap(), seen.clone());
        let mut answer = master.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let mut asked = 0;
            // Ends when the child is gone (EIO on Linux).
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let mut seen = sink.lock().unwrap();
                seen.extend_from_slice(&buf[..n]);
                // Answer rustyline's cursor-position query as a terminal does (top left), so
                // it never waits for an answer and takes typed-ahead text for one.
                let queries = seen.windows(CURSOR_QUERY.len()).filter(|w| *w == CURSOR_QUERY).count();
                for _ in asked..queries {
                    let _ = answer.write_all(b"\x1b[1;1R");
                }
                asked = queries;
            }
        });
        Repl { child, master, seen, mark: 0, dir }
    }

    fn send(&mut self, bytes: &str) {
        self.master.write_all(bytes.as_bytes()).unwrap();
    }

    /// Wait for `what` after the previous match, up to `secs` seconds.
    fn expect(&mut self, what: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            {
                let seen = self.seen.lock().unwrap();
                let text = String::from_utf8_lossy(&seen[self.mark..]);
                if let Some(i) = text.find(what) {
                    self.mark += text[..i].len() + what.len();
                    return;
                }
            }
            if Instant::now() > deadline {
                panic!("waited {secs} s for {what:?}; the REPL wrote:\n{}", self.output());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// At the prompt, type `line` and wait for `shown` in what it prints.
    fn run(&mut self, line: &str, shown: &str) {
        self.expect(PROMPT, 30);
        self.send(&format!("{line}\r"));
        self.expect(shown, 60);
    }

    fn output(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

impl Drop for Repl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const LOAD_ADULT: &str = "SELECT * FROM load_dataset('adult');";

#[test]
fn ctrl_c_cancels_the_running_statement_and_keeps_the_session() {
    let mut repl = Repl::start("ctrl-c", 1000, None);
    repl.run(LOAD_ADULT, "| adult      | 30162");
    repl.run("SELECT 'before' AS marker, COUNT(*) AS n FROM adult;", "| before | 30162 |");
    // The exhaustive search evaluates every candidate node (several seconds in the dev build);
    // its progress bar shows that it is under way, and Ctrl-C goes in mid-search.
    repl.run(
        "SELECT COUNT(*) FROM hceil_anonymize('adult', 'adult_h', 5, NULL, 'search=exhaustive');",
        "h-ceiling: counterfeits and catalogs",
    );
    repl.send("\x03");
    repl.expect("cancelled by the user", 60);
    // A query that DataFusion executes (streams, no search): hours of rows, cancelled.
    repl.run("SELECT COUNT(*) FROM range(0, 1000000000000) AS t(n) WHERE n % 7 = 3;", "WHERE n % 7 = 3;");
    std::thread::sleep(Duration::from_millis(500));
    repl.send("\x03");
    repl.expect("cancelled by the user", 60);
    // The same session: a new statement runs, the earlier table is there, the cancelled call
    // left nothing behind.
    repl.run("SELECT 'still here' AS status;", "| still here |");
    repl.run("SELECT 'after' AS marker, COUNT(*) AS n FROM adult;", "| after  | 30162 |");
    repl.run(
        "SELECT COUNT(*) AS leftovers FROM information_schema.tables WHERE table_name LIKE 'adult_h%';",
        "| 0         |",
    );
    // Ctrl-C at the prompt drops the line being typed, as before.
    repl.expect(PROMPT, 30);
    repl.send("SELECT 'dropped'\x03");
    repl.run("SELECT 'typed after' AS t;", "| typed after |");
    assert!(!repl.output().contains("| dropped"), "{}", repl.output());
}

/// Lines typed ahead are kept, as psql keeps them: three statements pasted at once (a terminal
/// without bracketed paste) all run, and so do two typed while a statement runs. rustyline
/// read the whole paste into a buffer it dropped after the first line.
#[test]
fn lines_typed_ahead_all_run_in_order() {
    let mut repl = Repl::start("type-ahead", 1000, None);
    repl.expect(PROMPT, 30);
    repl.send("SELECT 'first' AS a;\rSELECT 'second' AS b;\rSELECT 'third' AS c;\r");
    for shown in ["| first |", "| second |", "| third |"] {
        repl.expect(shown, 60);
    }
    repl.run("SELECT COUNT(*) AS slow FROM range(0, 200000000) AS t(n) WHERE n % 7 = 3;", "WHERE n % 7 = 3;");
    repl.send("SELECT 'fourth' AS d;\rSELECT 'fifth' AS e;\r");
    for shown in ["| slow ", "| fourth |", "| fifth |"] {
        repl.expect(shown, 120);
    }
}

/// Ctrl-C `wait` into `call` (typed at the prompt): the prompt is back within `limit`, the
/// call said "cancelled by the user", nothing named `out*` is registered and the ledger holds
/// only the budget. Returns the time from Ctrl-C to the prompt.
fn cancel_during(repl: &mut Repl, call: &str, wait: Duration, limit: Duration) -> Duration {
    repl.run(call, call.trim_end_matches(';'));
    std::thread::sleep(wait);
    let sent = Instant::now();
    repl.send("\x03");
    repl.expect("cancelled by the user", 120);
    repl.expect(PROMPT, 120);
    let took = sent.elapsed();
    assert!(took < limit, "{call}: the prompt came back {took:?} after Ctrl-C");
    // At the prompt already (just seen).
    repl.send("SELECT COUNT(*) AS leftovers FROM information_schema.tables WHERE table_name LIKE 'out%';\r");
    repl.expect("| 0         |", 60);
    repl.run(
        "SELECT COUNT(*) AS charges, COALESCE(SUM(epsilon), 0) AS spent FROM anon_privacy_ledger WHERE event NOT IN ('ledger', 'budget set');",
        "| 0       | 0",
    );
    eprintln!("{call}: the prompt came back {took:?} after Ctrl-C");
    took
}

/// Ctrl-C cancels the differentially private and the k-anonymity methods on an NPS-like table
/// of 8 M rows: the default `ipa_release` (the table's declared adaptive plan) and
/// `kanon_anonymize` with suppression and l-diversity both stop, register nothing and charge
/// nothing (the issue's case: they ran to the end, registered, and ipa charged ε). The Ctrl-C
/// goes in while each reads and aggregates the table, before any noise. The table is larger
/// than the bundled 1,375,900 rows because kanon's first call on those now takes about 0.5 s in
/// the dev build, less than the wait before the Ctrl-C; on 8 M rows it takes seconds. The bound
/// is loose for a shared CI machine; the latencies measured by hand are in the issue's report.
#[test]
fn ctrl_c_cancels_ipa_and_kanon_on_a_large_nps_table() {
    let mut repl = Repl::start("ctrl-c-methods", 1000, None);
    repl.run("SELECT rows AS loaded FROM load_dataset('nps', 8000000, 1);", "| 8000000 |");
    repl.run("SELECT 'budget set' AS done FROM set_privacy_budget('nps', 5.0);", "| budget set |");
    for (call, wait) in [
        ("SELECT COUNT(*) FROM ipa_release('nps', 'out_ipa', 1.0);", Duration::from_millis(400)),
        (
            "SELECT COUNT(*) FROM kanon_anonymize('nps', 'out_k', 5, 'suppression=1%, distinct_l=3');",
            Duration::from_millis(800),
        ),
    ] {
        cancel_during(&mut repl, call, wait, Duration::from_secs(5));
    }
    repl.run("SELECT 'still here' AS status;", "| still here |");
}

/// Ctrl-C cancels `artuc` on the full EHRD-like table (208,387 records, UC1, the benchmark's
/// k 10, m 2, delta 0.04) within 2 s, registering nothing. Four seconds in, the call has formed
/// its clusters (about 2 s in the dev build) and runs GenDiag on every one of them (about 8 s),
/// which had no checkpoint: Ctrl-C there took 6 to 10 s to answer; it now answers within one
/// GenDiag run per core (0.1 to 0.3 s measured by hand, in the issue's report).
#[test]
fn ctrl_c_cancels_artuc_during_its_gendiag_pass() {
    let mut repl = Repl::start("ctrl-c-artuc", 1000, None);
    repl.run("SELECT rows AS loaded FROM load_dataset('ehrd');", "| 208387 |");
    repl.run("SELECT COUNT(*) AS loaded FROM load_constraints('ehrd', 'UC1');", "| loaded");
    let call = "SELECT COUNT(*) FROM artuc('ehrd', 'out_a', 'ehrd_uc1', 10, 2, 0.04, 100000000, \
                'seed=7, small_groups=withhold');";
    cancel_during(&mut repl, call, Duration::from_secs(4), Duration::from_secs(2));
    repl.run("SELECT 'still here' AS status;", "| still here |");
}

#[test]
fn history_is_written_after_each_statement() {
    let mut repl = Repl::start("history", 1000, None);
    repl.run("SELECT 'remembered' AS h;", "| remembered |");
    repl.run("\\timing", "Timing is on.");
    // Killed without \q: what was typed is already on disk.
    let history = repl.dir.join("history");
    repl.child.kill().unwrap();
    repl.child.wait().unwrap();
    let text = std::fs::read_to_string(&history).unwrap_or_default();
    assert!(text.contains("SELECT 'remembered' AS h;") && text.contains("\\timing"), "{text}");
}

#[test]
fn tab_completes_tables_columns_and_functions() {
    let mut repl = Repl::start("complete", 1000, None);
    repl.run("SELECT * FROM load_data\t('adult');", "| adult      | 30162");
    repl.run("SELECT COUNT(DISTINCT marital_st\t) AS n_status FROM adu\t;", "| 7        |");
    repl.run("\\tim\t", "Timing is on.");
}

#[test]
fn long_results_go_through_the_pager_and_short_ones_do_not() {
    let mut repl = Repl::start("pager", 10, Some("sed s/^/paged:/"));
    repl.run("SELECT 'short' AS s;", "| short |");
    repl.run("SELECT * FROM generate_series(1, 30) AS t(n) ORDER BY n;", "paged:| 30 |");
    let out = repl.output();
    assert!(!out.contains("paged:| short"), "{out}");
}

#[test]
fn commands_run_inside_an_open_statement() {
    let mut repl = Repl::start("open", 1000, None);
    repl.expect(PROMPT, 30);
    repl.send("SELECT 6 * 7\r");
    repl.expect("...> ", 30);
    repl.send("\\x\r");
    repl.expect("Expanded display is on.", 30);
    repl.send("AS answer;\r");
    repl.expect("answer | 42", 30);
}

/// A reporter that asks every search to stop at its first tick.
#[derive(Debug)]
struct StopAtOnce(AtomicBool);

impl Progress for StopAtOnce {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {
        self.0.store(true, Ordering::SeqCst);
    }
    fn finish(&self) {}
    fn cancelled(&self) -> bool {
        true
    }
}

async fn table_names(ctx: &datafusion::prelude::SessionContext) -> Vec<String> {
    let batches = rows(ctx, "SELECT table_name FROM information_schema.tables ORDER BY table_name").await;
    let mut names = Vec::new();
    for b in &batches {
        let c = datafusion::arrow::compute::cast(b.column(0), &datafusion::arrow::datatypes::DataType::Utf8).unwrap();
        let c = c.as_any().downcast_ref::<datafusion::arrow::array::StringArray>().unwrap();
        names.extend(c.iter().flatten().map(String::from));
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_search_registers_nothing_and_spends_no_budget() {
    let (ctx, registry) = anonfusion::session();
    rows(&ctx, LOAD_ADULT).await;
    rows(&ctx, "SELECT * FROM set_privacy_budget('adult', 5.0, 'delta=1e-6')").await;
    let stop = Arc::new(StopAtOnce(AtomicBool::new(false)));
    registry.set_progress(stop.clone());
    let tables = table_names(&ctx).await;
    // Every ledger row and the budget spent, in millionths of epsilon.
    let ledger =
        "SELECT COUNT(*) * 1000000000 + COALESCE(CAST(MAX(spent) * 1e6 AS BIGINT), 0) FROM anon_privacy_ledger";
    let before = int(&ctx, ledger).await;
    for call in [
        "hceil_anonymize('adult', 'out', 5, NULL, 'search=exhaustive')",
        "hceil_anonymize('adult', 'out', 5, 0.5)",
        "entropy_anonymize('adult', 'out', 5)",
        "ipa_release('adult', 'out', 1.0)",
        // Stopped before its first tick: the call's pipeline is raced against the flag from
        // the ledger's pass over the rows on (sql::block_on_cancellable).
        "kanon_anonymize('adult', 'out', 5, 'search=optimal')",
    ] {
        stop.0.store(false, Ordering::SeqCst);
        let e = err(&ctx, &format!("SELECT COUNT(*) FROM {call}")).await;
        assert!(e.contains("cancelled by the user"), "{call}: {e}");
        assert_eq!(table_names(&ctx).await, tables, "{call} registered nothing");
        assert_eq!(int(&ctx, ledger).await, before, "{call} spent nothing");
    }
    // The session goes on: the same call runs once nobody asks it to stop.
    registry.set_progress(anonfusion::progress::silent());
    assert!(int(&ctx, "SELECT COUNT(*) FROM hceil_anonymize('adult', 'out', 5, 0.5, 'seed=1')").await > 0);
}
