//! The ledger file: its line format, its lock and its atomic replacement.
//!
//! The file is the whole ledger, one record a line and an end line with their count, rewritten
//! in full on every change:
//!
//! ```text
//! anonfusion privacy ledger 2	next=4
//! # seq	at_ms	event	fingerprint	rows	table	epsilon_units	delta_units	guarantee	release	method	parts
//! 1	1764000000000	budget-set	9f…	1400000	nps	4294967296	0
//! 2	1764000000500	spent	9f…	1400000	nps	4294967296	0	epsilon-DP	nps_ipa	ipa_release	suppression=0.1, …
//! 3	1764000000900	reserved	9f…	1400000	nps_copy	429496729	0	epsilon-DP		dp_histogram	pid=4242
//! end	records=3
//! ```
//!
//! Fields are tab-separated; `\`, tab, CR and LF inside a field are backslash-escaped. Epsilons
//! are integers in units of 2^-32 and deltas in units of 2^-64, so sums are exact. A change is
//! made under an exclusive lock on `<file>.lock` (read, modify, write), by writing
//! `<file>.tmp`, syncing it, renaming it over the file and syncing the directory: a reader (who
//! takes no lock) and a process killed at any instant see either the old or the new file, never
//! a mix. A file without its end line, or with fewer records than it counts, was cut off
//! (record numbers have gaps, so the numbers alone cannot show it) and is refused.

// The example above is the file's own lines, tabs included, so it can be compared with a real
// ledger byte for byte.
#![allow(clippy::tabs_in_doc_comments)]

use crate::error::{AnonError, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &str = "anonfusion privacy ledger 2";
/// The header of files written before the end line, read as they are (see [`State::parse`]).
const MAGIC_1: &str = "anonfusion privacy ledger 1";
/// The last line of a version 2 file, followed by the number of records.
const END: &str = "end\trecords=";
const COLUMNS: &str =
    "# seq\tat_ms\tevent\tfingerprint\trows\ttable\tepsilon_units\tdelta_units\tguarantee\trelease\tmethod\tparts";

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    /// A first budget; epsilon and delta are the budget.
    BudgetSet,
    BudgetLowered,
    /// Raised with an explicit `force`.
    BudgetRaised,
    /// A release in progress, or one whose process died before it committed: counted as spent.
    Reserved,
    /// A published release and its charge (0 for a seeded call).
    Spent,
}

impl Event {
    fn code(self) -> &'static str {
        match self {
            Event::BudgetSet => "budget-set",
            Event::BudgetLowered => "budget-lowered",
            Event::BudgetRaised => "budget-raised",
            Event::Reserved => "reserved",
            Event::Spent => "spent",
        }
    }

    fn parse(s: &str) -> Option<Event> {
        [Event::BudgetSet, Event::BudgetLowered, Event::BudgetRaised, Event::Reserved, Event::Spent]
            .into_iter()
            .find(|e| e.code() == s)
    }

    pub(super) fn is_budget(self) -> bool {
        matches!(self, Event::BudgetSet | Event::BudgetLowered | Event::BudgetRaised)
    }
}

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    pub(crate) seq: u64,
    pub(crate) at_ms: i64,
    pub(crate) event: Event,
    pub(crate) fingerprint: String,
    pub(crate) rows: u64,
    pub(crate) table: String,
    /// The budget (budget events) or the charge (reserved, spent), in 2^-32.
    pub(crate) epsilon: u64,
    /// As `epsilon`, in 2^-64.
    pub(crate) delta: u64,
    pub(crate) guarantee: String,
    pub(crate) release: String,
    pub(crate) method: String,
    pub(crate) parts: String,
}

/// The whole ledger as read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct State {
    /// The next record's sequence number (never reused, even after a dropped reservation).
    pub(crate) next: u64,
    pub(crate) records: Vec<Record>,
}

impl Default for State {
    fn default() -> Self {
        State { next: 1, records: Vec::new() }
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            '\\' => '\\',
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            _ => return None,
        });
    }
    Some(out)
}

impl State {
    pub(crate) fn to_text(&self) -> String {
        let mut out = format!("{MAGIC}\tnext={}\n{COLUMNS}\n", self.next);
        for r in &self.records {
            let fields = [
                r.seq.to_string(),
                r.at_ms.to_string(),
                r.event.code().to_string(),
                escape(&r.fingerprint),
                r.rows.to_string(),
                escape(&r.table),
                r.epsilon.to_string(),
                r.delta.to_string(),
                escape(&r.guarantee),
                escape(&r.release),
                escape(&r.method),
                escape(&r.parts),
            ];
            out.push_str(&fields.join("\t"));
            out.push('\n');
        }
        out.push_str(&format!("{END}{}\n", self.records.len()));
        out
    }

    /// Parse a whole file; a line that is not a record is an error naming the line (the file
    /// was edited or written by something else, and guessing could lose a spend).
    pub(crate) fn parse(text: &str, shown: &str) -> Result<State> {
        let bad = |line: usize, what: &str| {
            AnonError::argument(
                "privacy ledger",
                "file",
                format!("{shown} line {line}: {what}; the file was not written by anonfusion or was edited"),
            )
        };
        let incomplete = |what: String| {
            AnonError::argument(
                "privacy ledger",
                "file",
                format!(
                    "{shown} is incomplete: {what}; the file was cut off or edited (a full disk, a partial \
                     copy, an editor), and the ledger refuses to work rather than undercount what was \
                     spent: restore the file from a backup"
                ),
            )
        };
        let lines: Vec<&str> = text.lines().collect();
        let Some(header) = lines.first() else { return Err(bad(1, "empty file")) };
        let (rest, checked) = match (header.strip_prefix(MAGIC), header.strip_prefix(MAGIC_1)) {
            (Some(rest), _) => (rest, true),
            (None, Some(rest)) => (rest, false),
            (None, None) => return Err(bad(1, "not a ledger header")),
        };
        let next = rest
            .strip_prefix("\tnext=")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| bad(1, "not a ledger header"))?;
        // Only the end line, which every write puts last, shows a cut: record numbers have gaps
        // (a dropped reservation is removed), so neither they nor `next` show a lost tail, and a
        // cut within the last field still leaves 12 fields. A version 1 file has no end line and
        // cannot be checked: it is read as it is, and its next change rewrites it as version 2.
        let mut body = &lines[1..];
        let mut count = None;
        if checked {
            let ends = lines.len() > 1 && text.ends_with('\n');
            match lines.last().and_then(|l| l.strip_prefix(END)).filter(|_| ends) {
                Some(n) => {
                    let n = n.parse::<usize>().map_err(|_| bad(lines.len(), "the end line's count is not a number"))?;
                    count = Some(n);
                    body = &lines[1..lines.len() - 1];
                }
                None => {
                    return Err(incomplete(format!(
                        "it stops at line {} without its end line 'end<TAB>records=N', so records after that \
                         line may be missing",
                        lines.len()
                    )));
                }
            }
        }
        let mut records = Vec::new();
        for (i, line) in body.iter().enumerate().map(|(i, l)| (i + 1, l)) {
            if line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 12 {
                return Err(bad(i + 1, &format!("{} fields, expected 12", f.len())));
            }
            let num =
                |j: usize| f[j].parse::<u64>().map_err(|_| bad(i + 1, &format!("field {} is not a number", j + 1)));
            let text =
                |j: usize| unescape(f[j]).ok_or_else(|| bad(i + 1, &format!("field {} has a bad escape", j + 1)));
            let record = Record {
                seq: num(0)?,
                at_ms: f[1].parse().map_err(|_| bad(i + 1, "field 2 is not a time"))?,
                event: Event::parse(f[2]).ok_or_else(|| bad(i + 1, "unknown event"))?,
                fingerprint: text(3)?,
                rows: num(4)?,
                table: text(5)?,
                epsilon: num(6)?,
                delta: num(7)?,
                guarantee: text(8)?,
                release: text(9)?,
                method: text(10)?,
                parts: text(11)?,
            };
            if record.seq >= next {
                return Err(bad(i + 1, "sequence number not below the header's next"));
            }
            records.push(record);
        }
        match count {
            Some(n) if n > records.len() => Err(incomplete(format!(
                "its end line (line {}) counts {n} records but only {} are present, so records are missing",
                lines.len(),
                records.len()
            ))),
            Some(n) if n < records.len() => {
                Err(bad(lines.len(), &format!("the end line counts {n} records but {} are present", records.len())))
            }
            _ => Ok(State { next, records }),
        }
    }
}

/// The file, its lock file and its temporary file.
#[derive(Debug)]
pub(super) struct Store {
    pub(crate) path: PathBuf,
}

fn failed(what: &str, path: &Path, e: impl std::fmt::Display) -> AnonError {
    AnonError::argument(
        "privacy ledger",
        "file",
        format!("cannot {what} {}: {e} (ANONFUSION_LEDGER chooses another file)", path.display()),
    )
}

impl Store {
    fn sibling(&self, suffix: &str) -> PathBuf {
        let mut name = self.path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(suffix);
        self.path.with_file_name(name)
    }

    /// The ledger as it is on disk; no file is an empty ledger. Takes no lock: the file is
    /// only ever replaced whole, by rename.
    pub(crate) fn read(&self) -> Result<State> {
        match fs::read_to_string(&self.path) {
            Ok(text) => State::parse(&text, &self.path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(failed("read", &self.path, e)),
        }
    }

    /// Run `change` on the current state under the exclusive lock and write the state if it says
    /// so (`(out, true)`). The state is re-read under the lock, so a change never works
    /// on a copy another process has since replaced.
    pub(crate) fn update<T>(&self, change: impl FnOnce(&mut State) -> Result<(T, bool)>) -> Result<T> {
        let _lock = self.lock()?;
        let mut state = self.read()?;
        let (out, write) = change(&mut state)?;
        if write {
            self.write(&state)?;
        }
        Ok(out)
    }

    /// Held until dropped: closing the file releases the lock, also when the process dies.
    fn lock(&self) -> Result<File> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| failed("create the directory of", &self.path, e))?;
        }
        let lock_path = self.sibling(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| failed("open", &lock_path, e))?;
        file.lock().map_err(|e| failed("lock", &lock_path, e))?;
        Ok(file)
    }

    fn write(&self, state: &State) -> Result<()> {
        let tmp = self.sibling(".tmp");
        let mut f = File::create(&tmp).map_err(|e| failed("create", &tmp, e))?;
        f.write_all(state.to_text().as_bytes()).map_err(|e| failed("write", &tmp, e))?;
        f.sync_all().map_err(|e| failed("sync", &tmp, e))?;
        drop(f);
        fs::rename(&tmp, &self.path).map_err(|e| failed("replace", &self.path, e))?;
        sync_dir(&self.path)
    }
}

/// Make the rename itself durable: on Unix a directory entry is synced through the directory.
#[cfg(unix)]
fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| failed("sync the directory of", path, e))
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64, event: Event, table: &str) -> Record {
        Record {
            seq,
            at_ms: 1_764_000_000_000 + seq as i64,
            event,
            fingerprint: "00ff".into(),
            rows: 3,
            table: table.into(),
            epsilon: 1 << 32,
            delta: 0,
            guarantee: "epsilon-DP".into(),
            release: "r".into(),
            method: "m".into(),
            parts: "a=1, b=2".into(),
        }
    }

    #[test]
    fn text_round_trips_including_awkward_names() {
        let state = State {
            next: 4,
            records: vec![
                record(1, Event::BudgetSet, "plain"),
                record(2, Event::Spent, "tab\there\nnew\\line\r"),
                record(3, Event::Reserved, "ünïcode"),
            ],
        };
        assert_eq!(State::parse(&state.to_text(), "f").unwrap(), state);
    }

    #[test]
    fn a_damaged_file_is_refused_with_its_line() {
        let good = State { next: 2, records: vec![record(1, Event::Spent, "t")] }.to_text();
        for (bad, needle) in [
            (good.replacen("anonfusion", "other", 1), "line 1"),
            (good.replacen("\tspent\t", "\tspend\t", 1), "line 3: unknown event"),
            (good.replacen("next=2", "next=1", 1), "line 3: sequence"),
            (good.replacen("end\t", "1\t2\nend\t", 1), "line 4: 2 fields"),
            (String::new(), "empty file"),
        ] {
            let e = State::parse(&bad, "f").unwrap_err().to_string();
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    /// A ledger whose dropped reservations left gaps in the numbers (4 and 5 are gone), as
    /// `Reservation`'s drop leaves them, so a cut cannot be told from the numbers.
    fn with_gaps() -> State {
        State {
            next: 12,
            records: vec![
                record(1, Event::BudgetSet, "t"),
                record(2, Event::Spent, "t"),
                record(3, Event::Reserved, "tab\there"),
                record(6, Event::Spent, "t"),
                record(11, Event::Spent, "last"),
            ],
        }
    }

    #[test]
    fn every_cut_of_a_ledger_is_refused_as_incomplete_and_the_whole_file_parses() {
        let state = with_gaps();
        let text = state.to_text();
        assert_eq!(State::parse(&text, "/x/ledger.tsv").unwrap(), state);
        let header = text.find('\n').unwrap() + 1;
        let mut line_cuts = 0;
        // Every strict prefix: at each line boundary (the audit's `head -n`) and within every
        // line, the last field included, where a cut still leaves 12 fields.
        for cut in (0..text.len()).filter(|&c| text.is_char_boundary(c)) {
            let e = match State::parse(&text[..cut], "/x/ledger.tsv") {
                Ok(s) => panic!("a cut at byte {cut} parsed, {} records: {:?}", s.records.len(), &text[..cut]),
                Err(e) => e.to_string(),
            };
            // Within the header the header itself is damaged; past it, the message says what
            // happened and names the file.
            if cut >= header {
                assert!(e.contains("/x/ledger.tsv is incomplete") && e.contains("restore"), "cut {cut}: {e}");
            }
            line_cuts += usize::from(cut > 0 && text.as_bytes()[cut - 1] == b'\n');
        }
        // Header, column line, 5 records: the end line is the 8th.
        assert_eq!((line_cuts, text.lines().count()), (7, 8));
        assert!(text.ends_with("\nend\trecords=5\n"), "{text}");
    }

    #[test]
    fn a_record_missing_before_the_end_line_is_refused() {
        let text = with_gaps().to_text();
        let lines: Vec<&str> = text.lines().collect();
        for gone in 2..lines.len() - 1 {
            let mut cut: Vec<&str> = lines.clone();
            cut.remove(gone);
            let e = State::parse(&format!("{}\n", cut.join("\n")), "f").unwrap_err().to_string();
            assert!(e.contains("f is incomplete: its end line (line 7) counts 5 records but only 4"), "{e}");
        }
        let extra = text.replace("end\t", &format!("{}\nend\t", lines[3]));
        let e = State::parse(&extra, "f").unwrap_err().to_string();
        assert!(e.contains("line 9: the end line counts 5 records but 6 are present"), "{e}");
    }

    #[test]
    fn a_version_1_file_is_read_and_rewritten_with_its_end_line() {
        let state = with_gaps();
        let v2 = state.to_text();
        let v1 = v2.replacen(MAGIC, MAGIC_1, 1).replace("end\trecords=5\n", "");
        assert_eq!(State::parse(&v1, "f").unwrap(), state);
        assert_eq!(State::parse(&v1, "f").unwrap().to_text(), v2);
    }
}
