//! Tab completion in the REPL: SQL keywords, table and column names, table functions and
//! backslash commands.
//!
//! Completion runs synchronously inside rustyline while the session's catalog is reached
//! asynchronously, so the names are gathered after each statement ([`Names::refresh`]) and
//! completion reads that snapshot.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::keywords::ALL_KEYWORDS;
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::sync::{Arc, Mutex};

/// Tables, their columns and the table functions of the session, sorted and deduplicated.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names(Arc<Mutex<Vec<String>>>);

impl Names {
    /// Read the session's names again (after a statement may have added or dropped tables).
    pub(crate) async fn refresh(&self, ctx: &SessionContext) {
        let mut names: Vec<String> = ctx.state().table_functions().keys().cloned().collect();
        let state = ctx.state();
        let catalog = &state.config().options().catalog;
        if let Some(schema) = ctx.catalog(&catalog.default_catalog).and_then(|c| c.schema(&catalog.default_schema)) {
            for table in schema.table_names() {
                if let Ok(Some(provider)) = schema.table(&table).await {
                    names.extend(provider.schema().fields().iter().map(|f| f.name().clone()));
                }
                names.push(table);
            }
        }
        names.sort();
        names.dedup();
        *self.0.lock().expect("completion names") = names;
    }

    /// Every completion of the word that ends at `pos` in `line`, and where the word starts.
    pub(crate) fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let start = line[..pos].rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\\')).map_or(0, |i| i + 1);
        let word = &line[start..pos];
        if word.is_empty() {
            return (pos, Vec::new());
        }
        let mut out: Vec<String> = if word.starts_with('\\') {
            super::commands::COMMANDS
                .iter()
                .filter_map(|(usage, _)| usage.split(' ').next())
                .filter(|c| c.starts_with(word))
                .map(String::from)
                .collect()
        } else {
            let names = self.0.lock().expect("completion names");
            let lower = word.to_lowercase();
            // Keywords come in the case the word was typed in (`sel` → `select`).
            let upper = word.chars().next().is_some_and(char::is_uppercase);
            let keywords = ALL_KEYWORDS
                .iter()
                .filter(|k| k.to_lowercase().starts_with(&lower))
                .map(|k| if upper { k.to_string() } else { k.to_lowercase() });
            names.iter().filter(|n| n.to_lowercase().starts_with(&lower)).cloned().chain(keywords).collect()
        };
        out.dedup();
        (start, out)
    }
}

/// The rustyline helper: completion only (rustyline is built without its derive macros, so
/// the other parts are spelled out, with their defaults).
pub(crate) struct Complete(pub(crate) Names);

impl Completer for Complete {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, words) = self.0.complete(line, pos);
        Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
    }
}

impl Hinter for Complete {
    type Hint = String;
}
impl Highlighter for Complete {}
impl Validator for Complete {}
impl Helper for Complete {}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(words: &[&str]) -> Names {
        Names(Arc::new(Mutex::new(words.iter().map(|w| w.to_string()).collect())))
    }

    #[test]
    fn completes_names_keywords_and_commands() {
        let n = names(&["adult", "age", "load_dataset"]);
        assert_eq!(n.complete("SELECT * FROM adu", 17), (14, vec!["adult".to_string()]));
        assert_eq!(n.complete("SELECT * FROM load_d", 20), (14, vec!["load_dataset".to_string()]));
        let (start, words) = n.complete("SEL", 3);
        assert_eq!(start, 0);
        assert!(words.contains(&"SELECT".to_string()), "{words:?}");
        assert!(n.complete("sel", 3).1.contains(&"select".to_string()));
        assert_eq!(n.complete("\\tim", 4), (0, vec!["\\timing".to_string()]));
        assert_eq!(n.complete("SELECT ", 7), (7, vec![]));
    }
}
