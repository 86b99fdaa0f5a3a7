//! Output formats for query results.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Boxed ASCII table
    #[default]
    Table,
    /// CSV with a header row
    Csv,
    /// A JSON array of objects
    Json,
    /// A GitHub-style pipe table
    Markdown,
}

/// Write a result. A result without columns (DDL, `SET`) prints nothing in any format.
pub fn write(
    format: Format,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    if schema.fields().is_empty() {
        return Ok(());
    }
    let batches: Vec<&RecordBatch> = batches.iter().filter(|b| b.num_rows() > 0).collect();
    // An empty result still shows its header, so it reads as "no rows" rather than "nothing".
    let empty = RecordBatch::new_empty(schema.clone());
    let batches = if batches.is_empty() { vec![&empty] } else { batches };
    match format {
        Format::Table => {
            let owned: Vec<RecordBatch> = batches.into_iter().cloned().collect();
            let table = datafusion::arrow::util::pretty::pretty_format_batches(&owned)?;
            writeln!(out, "{table}")?;
        }
        Format::Csv => {
            let mut writer = datafusion::arrow::csv::WriterBuilder::new().with_header(true).build(&mut *out);
            for b in batches {
                writer.write(b)?;
            }
        }
        Format::Json => {
            let mut writer = datafusion::arrow::json::ArrayWriter::new(&mut *out);
            writer.write_batches(&batches)?;
            writer.finish()?;
            drop(writer);
            writeln!(out)?;
        }
        Format::Markdown => write_markdown(schema, &batches, out)?,
    }
    Ok(())
}

fn write_markdown(schema: &SchemaRef, batches: &[&RecordBatch], out: &mut dyn Write) -> Result<(), ArrowError> {
    let header: Vec<String> = schema.fields().iter().map(|f| cell(f.name())).collect();
    writeln!(out, "| {} |", header.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(header.len()))?;
    let options = FormatOptions::default();
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| cell(&f.value(row).to_string())).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
    }
    Ok(())
}

/// A pipe or a line break inside a value would break the table's row structure.
fn cell(value: &str) -> String {
    value.replace('|', "\\|").replace("\r\n", "<br>").replace('\n', "<br>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn batch() -> RecordBatch {
        let schema =
            Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, true), Field::new("s", DataType::Utf8, true)]));
        let n = Arc::new(Int64Array::from(vec![Some(1), None]));
        let s = Arc::new(StringArray::from(vec![Some("a|b"), Some("x\ny")]));
        RecordBatch::try_new(schema, vec![n, s]).unwrap()
    }

    fn render(format: Format, batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        write(format, &batch().schema(), batches, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn markdown_escapes_cells() {
        assert_eq!(render(Format::Markdown, &[batch()]), "| n | s |\n|---|---|\n| 1 | a\\|b |\n|  | x<br>y |\n");
    }

    #[test]
    fn empty_results_keep_their_header() {
        assert_eq!(render(Format::Csv, &[]), "n,s\n");
        assert_eq!(render(Format::Json, &[]), "[]\n");
        assert_eq!(render(Format::Markdown, &[]), "| n | s |\n|---|---|\n");
    }

    #[test]
    fn json_is_an_array_of_objects() {
        assert_eq!(render(Format::Json, &[batch()]), "[{\"n\":1,\"s\":\"a|b\"},{\"s\":\"x\\ny\"}]\n");
    }
}
