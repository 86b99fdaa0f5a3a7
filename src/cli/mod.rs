//! The `anonfusion` command line: an interactive REPL, piped stdin, scripts (`-f`), one-off
//! statements (`-c`) and the bundled demo. Every mode feeds [`Piece`]s from the splitter to
//! one [`Runner`], so statement handling and backslash commands behave the same everywhere.

pub(crate) mod cancel;
mod commands;
pub(crate) mod complete;
pub(crate) mod demo;
pub(crate) mod evaluate;
pub(crate) mod format;
pub(crate) mod pager;
pub(crate) mod progress;
pub(crate) mod repl;
pub(crate) mod report;
pub(crate) mod split;

use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use format::Format;
use split::{Piece, Splitter};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The bundled demo script; `demo` runs it with statement echo.
pub(crate) const DEMO_SQL: &str = include_str!("../../sql/demo.sql");

/// What the caller should do after a piece ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Quit,
}

/// What a backslash command asks of the runner beyond writing its output.
enum Action {
    Flow(Flow),
    /// `\o FILE` (or `\o` alone: `None`, back to the caller's output).
    Redirect(Option<PathBuf>),
    /// `\i FILE`.
    Include(PathBuf),
}

/// A session plus the display settings the backslash commands change.
pub(crate) struct Runner {
    pub(crate) ctx: SessionContext,
    format: Format,
    timing: bool,
    /// `\x`: tables print one record per block, one line per column.
    expanded: bool,
    /// Print each statement before its result (the demo).
    echo: bool,
    /// Ctrl-C cancels the running statement (the REPL, which installs [`cancel::install`]).
    cancellable: bool,
    /// The session's progress bar, cleared when a statement is cancelled mid-search.
    pub(crate) bar: Arc<progress::Bar>,
    /// `\o FILE`: where results go instead of the caller's output.
    redirect: Option<(PathBuf, std::fs::File)>,
}

impl Runner {
    pub(crate) fn new(ctx: SessionContext, format: Format) -> Self {
        Self {
            ctx,
            format,
            timing: false,
            expanded: false,
            echo: false,
            cancellable: false,
            bar: Arc::default(),
            redirect: None,
        }
    }

    /// Run one statement or command, writing its result to `out` (or to the `\o` file). The
    /// error is the message to show, without the `Error: ` prefix.
    pub async fn run(&mut self, piece: &Piece, out: &mut dyn Write) -> Result<Flow, String> {
        let mut redirect = self.redirect.take();
        let action = {
            let target: &mut dyn Write = match &mut redirect {
                Some((_, file)) => file,
                None => &mut *out,
            };
            self.dispatch(piece, target).await
        };
        self.redirect = redirect;
        match action? {
            Action::Flow(flow) => Ok(flow),
            Action::Redirect(None) => {
                self.redirect = None;
                Ok(Flow::Continue)
            }
            Action::Redirect(Some(path)) => {
                let file = std::fs::File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                self.redirect = Some((path, file));
                Ok(Flow::Continue)
            }
            Action::Include(path) => {
                let script =
                    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                // A script may include another: the recursion is boxed.
                Box::pin(self.run_script(&path.display().to_string(), &script, out)).await
            }
        }
    }

    async fn dispatch(&mut self, piece: &Piece, out: &mut dyn Write) -> Result<Action, String> {
        let started = Instant::now();
        let cpu_started = process_cpu_ms();
        let action = match piece {
            Piece::Command { text, .. } => commands::run(self, text, out).await?,
            Piece::Sql { text, .. } => {
                if self.echo {
                    writeln!(out, "{text};").map_err(|e| e.to_string())?;
                }
                self.sql_cancellable(text, out).await?;
                if self.echo {
                    writeln!(out).map_err(|e| e.to_string())?;
                }
                Action::Flow(Flow::Continue)
            }
        };
        // A toggle reports its own new state; timing it would be noise.
        if self.timing && matches!(piece, Piece::Sql { .. }) {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let cpu = process_cpu_ms() - cpu_started;
            writeln!(out, "Time: {ms:.3} ms, CPU {cpu:.3} ms").map_err(|e| e.to_string())?;
        }
        out.flush().map_err(|e| e.to_string())?;
        Ok(action)
    }

    /// A statement that Ctrl-C cancels when the session is [`Runner::cancellable`]: dropping
    /// its future drops DataFusion's streams, which aborts their tasks.
    async fn sql_cancellable(&self, text: &str, out: &mut dyn Write) -> Result<(), String> {
        if !self.cancellable {
            return self.sql(text, out).await;
        }
        cancel::reset();
        let result = tokio::select! {
            result = self.sql(text, out) => result,
            () = cancel::pressed() => Err(anonfusion::AnonError::Cancelled.to_string()),
        };
        if cancel::requested() {
            // A search stopped mid-way leaves its bar drawn.
            anonfusion::progress::Progress::finish(self.bar.as_ref());
        }
        result
    }

    async fn sql(&self, text: &str, out: &mut dyn Write) -> Result<(), String> {
        // Through sql::run, not ctx.sql: a plain EXPLAIN must plan without publishing or charging.
        let df = anonfusion::sql::run(&self.ctx, text).await.map_err(describe)?;
        let schema = df.schema().inner().clone();
        let batches = df.collect().await.map_err(describe)?;
        self.write(&schema, &batches, out)
    }

    /// A result in the session's format (`\x` applies to tables).
    fn write(
        &self,
        schema: &datafusion::arrow::datatypes::SchemaRef,
        batches: &[datafusion::arrow::array::RecordBatch],
        out: &mut dyn Write,
    ) -> Result<(), String> {
        format::write(self.format, self.expanded, schema, batches, out).map_err(|e| e.to_string())
    }

    /// Run a script, stopping at the first failure with a message that names `name`, the
    /// statement's start line and its first line.
    pub(crate) async fn run_script(&mut self, name: &str, script: &str, out: &mut dyn Write) -> Result<Flow, String> {
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
    /// on; an unterminated statement at the end of input still runs. Returns how many pieces
    /// failed, so the process can exit non-zero.
    pub(crate) async fn run_lines(&mut self, input: impl BufRead, out: &mut dyn Write, err: &mut dyn Write) -> usize {
        let mut splitter = Splitter::new();
        let mut failed = 0;
        for line in input.lines() {
            let Ok(line) = line else {
                let _ = writeln!(err, "Error: cannot read input");
                return failed + 1;
            };
            for piece in splitter.push_line(&line) {
                match self.run_reporting(&piece, out, err).await {
                    Ok(Flow::Quit) => return failed,
                    Ok(Flow::Continue) => {}
                    Err(()) => failed += 1,
                }
            }
        }
        if let Some(piece) = splitter.finish()
            && self.run_reporting(&piece, out, err).await.is_err()
        {
            failed += 1;
        }
        failed
    }

    /// Run a piece; a failure is printed to `err` (once) and the session continues.
    pub(crate) async fn run_reporting(
        &mut self,
        piece: &Piece,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<Flow, ()> {
        match self.run(piece, out).await {
            Ok(flow) => Ok(flow),
            Err(e) => {
                let _ = out.flush();
                let _ = writeln!(err, "Error: {e}");
                let _ = err.flush();
                Err(())
            }
        }
    }
}

/// The message of a DataFusion error ([`anonfusion::error::describe`]).
fn describe(e: DataFusionError) -> String {
    anonfusion::error::describe(&e)
}

/// CPU time of the whole process so far (user and system, every thread), in milliseconds:
/// `\timing` prints a statement's share beside its wall time, so work spread over the cores
/// shows as what it costs the machine, not only what the user waits.
fn process_cpu_ms() -> f64 {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).map_or(0.0, |t| t.tv_sec() as f64 * 1e3 + t.tv_nsec() as f64 / 1e6)
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}
