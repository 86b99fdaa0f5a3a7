//! Backslash commands, psql's where psql has one: `\q`, `\d`, `\d NAME`, `\df`, `\x`, `\i`,
//! `\o`, `\timing`, `\?`.

use super::format::Format;
use super::{Action, Flow, Runner};
use anonfusion::sql::report::{Column, batch};
use datafusion::arrow::array::StringArray;
use datafusion::arrow::datatypes::{DataType, Field};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// Every command with its usage and what it does: the help and the completion both read it.
pub(crate) const COMMANDS: &[(&str, &str)] = &[
    ("\\q", "quit (also Ctrl-D)"),
    ("\\d", "list tables"),
    ("\\d NAME", "show table NAME: columns, declared roles and hierarchies"),
    ("\\df [PATTERN]", "list table functions (names containing PATTERN): signature and purpose"),
    ("\\x", "toggle expanded display: one line per column, one block per row"),
    ("\\i FILE", "run the statements and commands of FILE"),
    ("\\o [FILE]", "send results to FILE; \\o alone sends them back to the screen"),
    ("\\timing", "toggle printing the wall and CPU time each statement takes"),
    ("\\?", "this help"),
];

pub(super) async fn run(runner: &mut Runner, line: &str, out: &mut dyn Write) -> Result<Action, String> {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or_default();
    let arg = words.next();
    if words.next().is_some() {
        return Err(format!("too many arguments to {command} (see \\?)"));
    }
    let io = |e: std::io::Error| e.to_string();
    match (command, arg) {
        ("\\q", None) => return Ok(Action::Flow(Flow::Quit)),
        ("\\d", None) => list_tables(runner, out).await?,
        ("\\d", Some(name)) => describe_table(runner, name, out).await?,
        ("\\df", pattern) => list_functions(runner, pattern.unwrap_or_default(), out)?,
        ("\\x", None) => {
            runner.expanded = !runner.expanded;
            writeln!(out, "Expanded display is {}.", on_off(runner.expanded)).map_err(io)?;
        }
        ("\\i", Some(file)) => return Ok(Action::Include(PathBuf::from(file))),
        ("\\o", file) => return Ok(Action::Redirect(file.map(PathBuf::from))),
        ("\\timing", None) => {
            runner.timing = !runner.timing;
            writeln!(out, "Timing is {}.", on_off(runner.timing)).map_err(io)?;
        }
        ("\\?", None) => help(out).map_err(io)?,
        ("\\i", None) => return Err("\\i needs a file name (see \\?)".into()),
        _ => return Err(format!("unknown command {line} (see \\?)")),
    }
    Ok(Action::Flow(Flow::Continue))
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

async fn list_tables(runner: &Runner, out: &mut dyn Write) -> Result<(), String> {
    let default_schema = runner.ctx.state().config().options().catalog.default_schema.replace('\'', "''");
    // Tables outside the default schema are shown qualified, so `\d NAME` accepts the name as
    // listed.
    let sql = format!(
        "SELECT CASE WHEN table_schema = '{default_schema}' THEN table_name \
                ELSE table_schema || '.' || table_name END AS name, \
                table_type AS type \
         FROM information_schema.tables \
         WHERE table_schema <> 'information_schema' \
         ORDER BY table_schema <> '{default_schema}', name"
    );
    runner.sql(&sql, out).await
}

/// The columns of a table with the role and hierarchy declared for each (from the system
/// views `anon_roles` and `anon_hierarchies`, so it shows what the functions will use).
async fn describe_table(runner: &Runner, name: &str, out: &mut dyn Write) -> Result<(), String> {
    let provider = runner.ctx.table_provider(name).await.map_err(super::describe)?;
    let schema = provider.schema();
    // The registry keys tables by the table DataFusion resolves (`ADULT` is `adult`, `public.t`
    // is `t`), and the system views name it as `display_name` does.
    let table = anonfusion::session::display_name(&anonfusion::session::resolve(name)).replace('\'', "''");
    let roles =
        lookup(runner, &format!("SELECT column_name, role FROM anon_roles WHERE table_name = '{table}'")).await?;
    let hierarchies = lookup(
        runner,
        &format!(
            "SELECT column_name, kind || ', height ' || height || ', ' || leaves || ' leaves' \
             FROM anon_hierarchies WHERE table_name = '{table}'"
        ),
    )
    .await?;
    let fields = schema.fields();
    let text = |f: &dyn Fn(&Field) -> String| Column::Text(fields.iter().map(|x| f(x)).collect());
    let declared =
        |m: &HashMap<String, String>| Column::OptText(fields.iter().map(|x| m.get(x.name()).cloned()).collect());
    let batch = batch(vec![
        ("column", text(&|f| f.name().clone())),
        ("type", text(&|f| f.data_type().to_string())),
        ("nullable", text(&|f| if f.is_nullable() { "YES" } else { "NO" }.to_string())),
        ("role", declared(&roles)),
        ("hierarchy", declared(&hierarchies)),
    ])
    .map_err(|e| e.to_string())?;
    runner.write(&batch.schema(), &[batch], out)
}

/// A two-column query as a map from the first column to the second.
async fn lookup(runner: &Runner, sql: &str) -> Result<HashMap<String, String>, String> {
    let batches = runner.ctx.sql(sql).await.map_err(super::describe)?.collect().await.map_err(super::describe)?;
    let mut map = HashMap::new();
    for b in &batches {
        let text = |i: usize| datafusion::arrow::compute::cast(b.column(i), &DataType::Utf8).map_err(|e| e.to_string());
        let (keys, values) = (text(0)?, text(1)?);
        let (keys, values) =
            (keys.as_any().downcast_ref::<StringArray>(), values.as_any().downcast_ref::<StringArray>());
        if let (Some(keys), Some(values)) = (keys, values) {
            map.extend(keys.iter().zip(values).filter_map(|(k, v)| Some((k?.to_string(), v?.to_string()))));
        }
    }
    Ok(map)
}

/// Each table function of the session with its signature and purpose, as `\df` lists them.
/// The table format prints one entry per function (name and purpose, then the signature
/// indented), each wrapped to the terminal: a table would pad every row to the longest
/// signature and wrap every line on a 160-column terminal. Other formats get the table.
fn list_functions(runner: &Runner, pattern: &str, out: &mut dyn Write) -> Result<(), String> {
    let docs = anonfusion::sql::docs::TABLE_FUNCTIONS;
    let mut names: Vec<String> =
        runner.ctx.state().table_functions().keys().filter(|n| n.contains(pattern)).cloned().collect();
    names.sort();
    let doc = |name: &str| docs.iter().find(|d| d.name == name);
    if runner.format == Format::Table && !runner.expanded {
        let width = super::pager::terminal_size().map_or(DF_WIDTH, |(_, cols)| cols.clamp(40, DF_WIDTH));
        let io = |e: std::io::Error| e.to_string();
        for name in &names {
            let purpose = doc(name).map_or("", |d| d.purpose);
            let head = if purpose.is_empty() { name.clone() } else { format!("{name}: {purpose}") };
            let mut lines = wrap(&head, width, "", "    ");
            if let Some(d) = doc(name) {
                lines.extend(wrap(&d.usage(), width, "    ", "        "));
                for option in d.option_lines() {
                    lines.extend(wrap(&option, width, "      ", "          "));
                }
            }
            for line in lines {
                writeln!(out, "{line}").map_err(io)?;
            }
        }
        return writeln!(out, "({} function{})", names.len(), if names.len() == 1 { "" } else { "s" }).map_err(io);
    }
    let column = |f: &dyn Fn(&anonfusion::sql::docs::FunctionDoc) -> String| {
        Column::OptText(names.iter().map(|n| doc(n).map(f)).collect())
    };
    let batch = batch(vec![
        ("name", Column::Text(names.clone())),
        ("purpose", column(&|d| d.purpose.to_string())),
        ("signature", column(&|d| d.usage())),
        ("options", column(&|d| d.option_lines().join("; "))),
    ])
    .map_err(|e| e.to_string())?;
    runner.write(&batch.schema(), &[batch], out)
}

/// `\df`'s line width off a terminal, and its widest on one.
const DF_WIDTH: usize = 100;

/// `text` in lines of at most `width` characters where its words allow, broken at spaces:
/// the first line starts with `first`, the others with `rest`. Empty text gives no line.
fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let indent = if lines.is_empty() { first } else { rest };
        if !line.is_empty() && indent.len() + line.chars().count() + 1 + word.chars().count() > width {
            lines.push(format!("{indent}{line}"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(format!("{}{line}", if lines.is_empty() { first } else { rest }));
    }
    lines
}

fn help(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "Statements end with ';' and may span lines; Ctrl-C cancels the running one.")?;
    writeln!(out, "Commands (also inside an open statement, which stays open):")?;
    let width = COMMANDS.iter().map(|(usage, _)| usage.len()).max().unwrap_or(0);
    for (usage, what) in COMMANDS {
        writeln!(out, "  {usage:width$}  {what}")?;
    }
    writeln!(out, "Tab completes keywords, tables, columns, table functions and commands.")?;
    writeln!(out, "Table functions: \\df (use as SELECT * FROM name(...)).")
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_breaks_at_spaces_within_the_width_and_indents() {
        let lines = wrap("f(table, column [, 'right'|'left' [, step]])", 20, "  ", "    ");
        assert_eq!(lines, ["  f(table, column [,", "    'right'|'left'", "    [, step]])"]);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        // A word longer than the width gets a line of its own, unbroken.
        assert_eq!(wrap("a verylongword b", 6, "", ""), ["a", "verylongword", "b"]);
        assert!(wrap("", 10, "", "").is_empty());
    }
}
