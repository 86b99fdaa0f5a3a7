//! The progress bar long lattice searches draw on stderr. indicatif hides it when stderr is
//! not a terminal, so scripts, pipes and tests see nothing; the bar is cleared when the
//! search ends, so results are not interleaved with it. It also passes the REPL's Ctrl-C to
//! the searches ([`super::cancel`]).

use anonfusion::progress::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub(crate) struct Bar {
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress for Bar {
    fn begin(&self, task: &str, total: u64) {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} nodes, {elapsed}") {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(task.to_string());
        if let Some(old) = self.bar.lock().expect("progress lock").replace(bar) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        if let Some(b) = self.bar.lock().expect("progress lock").as_ref() {
            b.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(b) = self.bar.lock().expect("progress lock").take() {
            b.finish_and_clear();
        }
    }

    fn cancelled(&self) -> bool {
        super::cancel::requested()
    }
}
