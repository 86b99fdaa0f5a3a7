//! Backslash commands: `\q`, `\d`, `\d NAME`, `\timing`, `\?`.

use super::{Flow, Runner, format};
use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::io::Write;
use std::sync::Arc;

pub async fn run(runner: &mut Runner, line: &str, out: &mut dyn Write) -> Result<Flow, String> {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or_default();
    let arg = words.next();
    if words.next().is_some() {
        return Err(format!("too many arguments to {command} (see \\?)"));
    }
    match (command, arg) {
        ("\\q", None) => return Ok(Flow::Quit),
        ("\\d", None) => list_tables(runner, out).await?,
        ("\\d", Some(name)) => describe_table(runner, name, out).await?,
        ("\\timing", None) => {
            runner.timing = !runner.timing;
            writeln!(out, "Timing is {}.", if runner.timing { "on" } else { "off" }).map_err(|e| e.to_string())?;
        }
        ("\\?", None) => help(runner, out).map_err(|e| e.to_string())?,
        _ => return Err(format!("unknown command {line} (see \\?)")),
    }
    Ok(Flow::Continue)
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

async fn describe_table(runner: &Runner, name: &str, out: &mut dyn Write) -> Result<(), String> {
    let provider = runner.ctx.table_provider(name).await.map_err(super::describe)?;
    let schema = provider.schema();
    let column = |f: fn(&Field) -> String| StringArray::from_iter_values(schema.fields().iter().map(|x| f(x)));
    let rows = Arc::new(Schema::new(vec![
        Field::new("column", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("nullable", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        rows.clone(),
        vec![
            Arc::new(column(|f| f.name().clone())),
            Arc::new(column(|f| f.data_type().to_string())),
            Arc::new(column(|f| if f.is_nullable() { "YES" } else { "NO" }.to_string())),
        ],
    )
    .map_err(|e| e.to_string())?;
    format::write(runner.format, &rows, &[batch], out).map_err(|e| e.to_string())
}

fn help(runner: &Runner, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "Statements end with ';' and may span lines. Commands:")?;
    writeln!(out, "  \\q          quit (also Ctrl-D)")?;
    writeln!(out, "  \\d          list tables")?;
    writeln!(out, "  \\d NAME     show the columns of table NAME")?;
    writeln!(out, "  \\timing     toggle printing the time each statement takes")?;
    writeln!(out, "  \\?          this help")?;
    let mut functions: Vec<String> = runner.ctx.state().table_functions().keys().cloned().collect();
    functions.sort();
    writeln!(out, "Table functions (use as SELECT * FROM name(...)):")?;
    for f in functions {
        writeln!(out, "  {f}")?;
    }
    Ok(())
}
