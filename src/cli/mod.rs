//! The `anonfusion` command line: an interactive REPL, piped stdin, scripts (`-f`), one-off
//! statements (`-c`) and the bundled demo. Every mode feeds [`Piece`]s from the splitter to
//! one [`Runner`], so statement handling and backslash commands behave the same everywhere.

mod commands;
pub mod evaluate;
pub mod format;
pub mod progress;
pub mod repl;
pub mod split;

use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use format::Format;
use split::{Piece, Splitter};
use std::io::{BufRead, Write};
use std::time::Instant;

/// The bundled demo script; `demo` runs it with statement echo.
pub const DEMO_SQL: &str = include_str!("../../sql/demo.sql");

/// What the caller should do after a piece ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// A session plus the display settings the backslash commands change.
pub struct Runner {
    pub ctx: SessionContext,
    pub format: Format,
    pub timing: bool,
    /// Print each statement before its result (the demo).
    pub echo: bool,
}

impl Runner {
    pub fn new(ctx: SessionContext, format: Format) -> Self {
        Self { ctx, format, timing: false, echo: false }
    }

    /// Run one statement or command, writing its result to `out`. The error is the message to
    /// show, without the `Error: ` prefix.
    pub async fn run(&mut self, piece: &Piece, out: &mut dyn Write) -> Result<Flow, String> {
        let started = Instant::now();
        let flow = match piece {
            Piece::Command { text, .. } => commands::run(self, text, out).await?,
            Piece::Sql { text, .. } => {
                if self.echo {
                    writeln!(out, "{text};").map_err(|e| e.to_string())?;
                }
                self.sql(text, out).await?;
                if self.echo {
                    writeln!(out).map_err(|e| e.to_string())?;
                }
                Flow::Continue
            }
        };
        // A toggle reports its own new state; timing it would be noise.
        if self.timing && matches!(piece, Piece::Sql { .. }) {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            writeln!(out, "Time: {ms:.3} ms").map_err(|e| e.to_string())?;
        }
        out.flush().map_err(|e| e.to_string())?;
        Ok(flow)
    }

    async fn sql(&self, text: &str, out: &mut dyn Write) -> Result<(), String> {
        let df = self.ctx.sql(text).await.map_err(describe)?;
        let schema = df.schema().inner().clone();
        let batches = df.collect().await.map_err(describe)?;
        format::write(self.format, &schema, &batches, out).map_err(|e| e.to_string())
    }

    /// Run a script, stopping at the first failure with a message that names `name`, the
    /// statement's start line and its first line.
    pub async fn run_script(&mut self, name: &str, script: &str, out: &mut dyn Write) -> Result<Flow, String> {
        for piece in split::split_script(script) {
            match self.run(&piece, out).await {
                Ok(Flow::Continue) => {}
                Ok(Flow::Quit) => return Ok(Flow::Quit),
                Err(e) => {
                    let first = piece.text().lines().next().unwrap_or_default();
                    return Err(format!("{name}:{}: {e}\n  in statement: {}", piece.line(), truncate(first, 80)));
                }
            }
        }
        Ok(Flow::Continue)
    }

    /// The non-interactive session over piped input: errors go to `err` and the session goes
    /// on; an unterminated statement at the end of input still runs.
    pub async fn run_lines(&mut self, input: impl BufRead, out: &mut dyn Write, err: &mut dyn Write) {
        let mut splitter = Splitter::new();
        for line in input.lines() {
            let Ok(line) = line else {
                let _ = writeln!(err, "Error: cannot read input");
                return;
            };
            for piece in splitter.push_line(&line) {
                if self.run_reporting(&piece, out, err).await == Flow::Quit {
                    return;
                }
            }
        }
        if let Some(piece) = splitter.finish() {
            self.run_reporting(&piece, out, err).await;
        }
    }

    /// Run a piece; a failure is printed to `err` and the session continues.
    pub async fn run_reporting(&mut self, piece: &Piece, out: &mut dyn Write, err: &mut dyn Write) -> Flow {
        match self.run(piece, out).await {
            Ok(flow) => flow,
            Err(e) => {
                let _ = out.flush();
                let _ = writeln!(err, "Error: {e}");
                let _ = err.flush();
                Flow::Continue
            }
        }
    }
}

/// The message of a DataFusion error ([`anonfusion::error::describe`]).
fn describe(e: DataFusionError) -> String {
    anonfusion::error::describe(&e)
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}
