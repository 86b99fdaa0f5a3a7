//! The interactive loop on a terminal, with line editing and a history file.

use super::Flow;
use super::Runner;
use super::split::Splitter;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
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
    let mut editor = DefaultEditor::new().map_err(|e| e.to_string())?;
    let history = history_path();
    // A missing or unreadable history must not keep anyone from working.
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    println!("anonfusion {}: type \\? for help, \\q to quit.", env!("CARGO_PKG_VERSION"));
    let mut splitter = Splitter::new();
    // The lines of the open statement, so history recalls a multi-line statement whole.
    let mut entry = String::new();
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    loop {
        let prompt = if splitter.is_idle() { PROMPT } else { CONTINUATION };
        match editor.readline(prompt) {
            Ok(line) => {
                if !entry.is_empty() {
                    entry.push('\n');
                }
                entry.push_str(&line);
                let pieces = splitter.push_line(&line);
                if splitter.is_idle() && !entry.trim().is_empty() {
                    let _ = editor.add_history_entry(std::mem::take(&mut entry));
                } else if splitter.is_idle() {
                    entry.clear();
                }
                for piece in pieces {
                    if runner.run_reporting(&piece, &mut stdout, &mut stderr).await == Flow::Quit {
                        return save(&mut editor, history);
                    }
                }
            }
            Err(ReadlineError::Interrupted) => {
                splitter.clear();
                entry.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.to_string()),
        }
    }
    save(&mut editor, history)
}

fn save(editor: &mut DefaultEditor, history: Option<PathBuf>) -> Result<(), String> {
    if let Some(path) = history {
        let _ = editor.save_history(&path);
    }
    Ok(())
}
