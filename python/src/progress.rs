//! Progress of long searches on Python's `sys.stderr`, so a notebook shows it under the cell
//! (the kernel's own stderr goes to the terminal that started Jupyter, not the notebook). The
//! engine reports counts of lattice nodes only, never data values.

use anonfusion::progress::Progress;
use pyo3::prelude::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Redraws at most this often: each one takes the GIL from the search's threads.
const REDRAW: Duration = Duration::from_millis(200);
const WIDTH: u64 = 30;

#[derive(Debug)]
pub struct StderrBar {
    enabled: bool,
    /// Only while a call waits for its statement: a search that goes on after Ctrl-C stays quiet.
    showing: AtomicBool,
    /// Raised by Ctrl-C while a statement runs ([`crate::wait::Calls::run`]); the engine's
    /// searches stop when they see it.
    pub cancel: AtomicBool,
    state: Mutex<Option<Task>>,
}

#[derive(Debug)]
struct Task {
    name: String,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Option<Instant>,
}

/// While alive, the bar may draw (see [`StderrBar::show`]).
pub struct Showing<'a>(&'a StderrBar);

impl Drop for Showing<'_> {
    fn drop(&mut self) {
        self.0.showing.store(false, Ordering::SeqCst);
    }
}

impl StderrBar {
    pub fn new(enabled: bool) -> Self {
        StderrBar { enabled, showing: AtomicBool::new(false), cancel: AtomicBool::new(false), state: Mutex::new(None) }
    }

    /// Let the bar draw until the returned guard is dropped (the duration of one call).
    pub fn show(&self) -> Showing<'_> {
        self.showing.store(self.enabled, Ordering::SeqCst);
        Showing(self)
    }

    fn visible(&self) -> bool {
        self.showing.load(Ordering::SeqCst)
    }

    /// The task's line, e.g. `hceil search [=========>    ] 120/360 nodes, 4s`.
    fn line(task: &Task) -> String {
        let secs = task.started.elapsed().as_secs();
        if task.total == 0 {
            return format!("{} {} nodes, {secs}s", task.name, task.done);
        }
        let filled = (task.done.min(task.total) * WIDTH / task.total) as usize;
        let bar = format!("{}>{}", "=".repeat(filled), " ".repeat(WIDTH as usize - filled));
        format!("{} [{bar}] {}/{} nodes, {secs}s", task.name, task.done, task.total)
    }

    fn draw(&self, task: &mut Task, force: bool) {
        let now = Instant::now();
        if !self.visible() || (!force && task.drawn.is_some_and(|t| now - t < REDRAW)) {
            return;
        }
        task.drawn = Some(now);
        write_stderr(&format!("\r{}", Self::line(task)));
    }
}

/// Write to `sys.stderr` and flush; a failure to draw must not fail the search.
fn write_stderr(text: &str) {
    Python::attach(|py| {
        if let Ok(stderr) = py.import("sys").and_then(|sys| sys.getattr("stderr")) {
            let _ = stderr.call_method1("write", (text,));
            let _ = stderr.call_method0("flush");
        }
    });
}

impl Progress for StderrBar {
    fn begin(&self, task: &str, total: u64) {
        let mut state = self.state.lock().expect("progress lock");
        let task = state.insert(Task { name: task.to_string(), total, done: 0, started: Instant::now(), drawn: None });
        self.draw(task, true);
    }

    fn advance(&self, n: u64) {
        if let Some(task) = self.state.lock().expect("progress lock").as_mut() {
            task.done += n;
            self.draw(task, false);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Clear the line so results are not interleaved with the bar.
    fn finish(&self) {
        if let Some(task) = self.state.lock().expect("progress lock").take()
            && task.drawn.is_some()
            && self.visible()
        {
            write_stderr(&format!("\r{}\r", " ".repeat(Self::line(&task).len())));
        }
    }
}
