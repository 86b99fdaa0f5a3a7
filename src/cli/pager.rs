//! Results longer than the terminal go through a pager, as in psql: `$PAGER`, else
//! `less -FRX` (quit at once when the text fits, keep it on screen after quitting). Only for
//! the REPL writing to a terminal: never into pipes, files or tests.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

/// Show `text` on stdout, through the pager when it has more lines than the terminal.
pub(crate) fn show(text: &[u8]) -> std::io::Result<()> {
    let mut stdout = std::io::stdout();
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    let rows = terminal_size().map(|(rows, _)| rows);
    if !stdout.is_terminal() || rows.is_none_or(|rows| lines < rows) || page(text).is_err() {
        stdout.write_all(text)?;
    }
    stdout.flush()
}

/// Pipe `text` into the pager and wait for the user to leave it.
fn page(text: &[u8]) -> std::io::Result<()> {
    let pager = std::env::var("PAGER").ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "less -FRX".into());
    let mut words = pager.split_whitespace();
    let program = words.next().unwrap_or("less");
    let mut child = Command::new(program).args(words).stdin(Stdio::piped()).spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // The user may quit before reading everything: a broken pipe is not an error.
        let _ = stdin.write_all(text);
    }
    child.wait()?;
    Ok(())
}

/// The terminal's height and width, if stdout is one.
pub(crate) fn terminal_size() -> Option<(usize, usize)> {
    let mut size = nix::libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given.
    let ok = unsafe { nix::libc::ioctl(nix::libc::STDOUT_FILENO, nix::libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_row > 0 && size.ws_col > 0).then_some((size.ws_row as usize, size.ws_col as usize))
}
