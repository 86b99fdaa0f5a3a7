//! The interactive loop on a terminal: line editing, tab completion, a history file appended
//! after every statement, Ctrl-C that cancels the running statement (see [`super::cancel`]),
//! and a pager for long results.

use super::Flow;
use super::Runner;
use super::complete::{Complete, Names};
use super::split::{Piece, Splitter};
use rustyline::Editor;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use std::path::PathBuf;

const PROMPT: &str = "anonfusion> ";
const CONTINUATION: &str = "      ...> ";

/// `$ANONFUSION_HISTORY`, else `~/.anonfusion_history`.
fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ANONFUSION_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".anonfusion_history"))
}

pub async fn run(runner: &mut Runner) -> Result<(), String> {
    let mut editor: Editor<Complete, DefaultHistory> = Editor::new().map_err(|e| e.to_string())?;
    let names = Names::default();
    names.refresh(&runner.ctx).await;
    editor.set_helper(Some(Complete(names.clone())));
    let history = history_path();
    // A missing or unreadable history must not keep anyone from working.
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    super::cancel::install()?;
    runner.cancellable = true;
    println!("anonfusion {}: type \\? for help, \\q to quit.", env!("CARGO_PKG_VERSION"));
    let mut splitter = Splitter::new();
    // The lines of the open statement, so history recalls a multi-line statement whole.
    let mut entry = String::new();
    let mut stderr = std::io::stderr();
    loop {
        let prompt = if splitter.is_idle() { PROMPT } else { CONTINUATION };
        match editor.readline(prompt) {
            Ok(line) => {
                let pieces = splitter.push_line(&line);
                let command = matches!(pieces.as_slice(), [Piece::Command { .. }]);
                if command {
                    // A command inside an open statement is its own history entry.
                    remember(&mut editor, &history, line);
                } else {
                    if !entry.is_empty() {
                        entry.push('\n');
                    }
                    entry.push_str(&line);
                    if splitter.is_idle() {
                        remember(&mut editor, &history, std::mem::take(&mut entry));
                    }
                }
                for piece in pieces {
                    // Results are gathered, then shown (through the pager when long).
                    let mut out = Vec::new();
                    let flow = runner.run_reporting(&piece, &mut out, &mut stderr).await;
                    let _ = super::pager::show(&out);
                    if flow == Ok(Flow::Quit) {
                        return Ok(());
                    }
                    names.refresh(&runner.ctx).await;
                }
            }
            Err(ReadlineError::Interrupted) => {
                splitter.clear();
                entry.clear();
            }
            Err(ReadlineError::Eof) => return Ok(()),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Add an entry to the history and append it to the file at once, so a crash or a killed
/// terminal loses nothing typed before.
fn remember(editor: &mut Editor<Complete, DefaultHistory>, file: &Option<PathBuf>, entry: String) {
    if entry.trim().is_empty() {
        return;
    }
    let _ = editor.add_history_entry(entry);
    if let Some(path) = file {
        let _ = editor.append_history(path);
    }
}
