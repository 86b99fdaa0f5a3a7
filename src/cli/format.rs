//! Output formats for query results.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use std::io::Write;
use std::sync::Arc;

/// Text outputs (the table printer, CSV, Markdown) show a list (a code set, a catalog's
/// `class_ids`) as its elements joined by this, the rule `COPY ... TO '.csv'` follows too;
/// JSON keeps lists as arrays.
pub(crate) const LIST_DELIMITER: &str = anonfusion::sql::copy::CSV_LIST_DELIMITER;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum Format {
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

/// Write a result, `expanded` (`\\x`) where the format is the table. A result without
/// columns (DDL, `SET`) prints nothing in any format.
pub(crate) fn write(
    format: Format,
    expanded: bool,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<(), ArrowError> {
    if schema.fields().is_empty() {
        return Ok(());
    }
    if expanded && format == Format::Table {
        return write_expanded(schema, batches, out);
    }
    let (schema, batches) = if format == Format::Json {
        (schema.clone(), batches.to_vec())
    } else {
        (text_schema(schema), batches.iter().map(lists_as_text).collect::<Result<Vec<_>, _>>()?)
    };
    let schema = &schema;
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

/// `\\x`: one block per row, one `name | value` line per column, as psql's expanded display.
fn write_expanded(schema: &SchemaRef, batches: &[RecordBatch], out: &mut dyn Write) -> Result<(), ArrowError> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let options = FormatOptions::default();
    let mut record = 0;
    for batch in batches {
        let batch = lists_as_text(batch)?;
        let formatters = formatters(&batch, &options)?;
        for row in 0..batch.num_rows() {
            record += 1;
            let values: Vec<String> = formatters.iter().map(|f| f.value(row).to_string()).collect();
            let longest = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
            let title = format!("-[ RECORD {record} ]");
            let rule = (width + 3 + longest).saturating_sub(title.chars().count());
            writeln!(out, "{title}{}", "-".repeat(rule))?;
            for (name, value) in names.iter().zip(&values) {
                writeln!(out, "{name:width$} | {value}")?;
            }
        }
    }
    if record == 0 {
        writeln!(out, "(0 rows)")?;
    }
    Ok(())
}

/// The schema with every list column as text (see [`LIST_DELIMITER`]).
fn text_schema(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| if is_list(f.data_type()) { Field::new(f.name(), DataType::Utf8, true) } else { f.as_ref().clone() })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

fn is_list(t: &DataType) -> bool {
    matches!(t, DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..))
}

/// A batch whose list columns are replaced by their elements joined with [`LIST_DELIMITER`]
/// (a NULL list stays NULL; an empty list is the empty string).
fn lists_as_text(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    if !batch.schema().fields().iter().any(|f| is_list(f.data_type())) {
        return Ok(batch.clone());
    }
    let columns = batch
        .columns()
        .iter()
        .map(|c| if is_list(c.data_type()) { joined(c) } else { Ok(c.clone()) })
        .collect::<Result<_, _>>()?;
    RecordBatch::try_new(text_schema(&batch.schema()), columns)
}

fn joined(list: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let options = FormatOptions::default();
    let element = |row: usize| -> Option<ArrayRef> {
        match list.data_type() {
            DataType::List(_) => Some(list.as_list::<i32>().value(row)),
            DataType::LargeList(_) => Some(list.as_list::<i64>().value(row)),
            DataType::FixedSizeList(..) => Some(list.as_fixed_size_list().value(row)),
            _ => None,
        }
    };
    let mut out = Vec::with_capacity(list.len());
    for row in 0..list.len() {
        let Some(values) = element(row).filter(|_| list.is_valid(row)) else {
            out.push(None);
            continue;
        };
        let f = ArrayFormatter::try_new(values.as_ref(), &options)?;
        let parts: Vec<String> = (0..values.len()).map(|i| f.value(i).to_string()).collect();
        out.push(Some(parts.join(LIST_DELIMITER)));
    }
    Ok(Arc::new(StringArray::from(out)))
}

/// One display formatter per column of `batch`.
fn formatters<'a>(batch: &'a RecordBatch, options: &'a FormatOptions) -> Result<Vec<ArrayFormatter<'a>>, ArrowError> {
    batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), options)).collect()
}

fn write_markdown(schema: &SchemaRef, batches: &[&RecordBatch], out: &mut dyn Write) -> Result<(), ArrowError> {
    let header: Vec<String> = schema.fields().iter().map(|f| cell(f.name())).collect();
    writeln!(out, "| {} |", header.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(header.len()))?;
    let options = FormatOptions::default();
    for batch in batches {
        let formatters = formatters(batch, &options)?;
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
        write(format, false, &batch().schema(), batches, &mut out).unwrap();
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

    fn codes() -> RecordBatch {
        use datafusion::arrow::array::ListBuilder;
        use datafusion::arrow::array::StringBuilder;
        let mut b = ListBuilder::new(StringBuilder::new());
        b.values().append_value("250.00");
        b.values().append_value("401.9");
        b.append(true);
        b.append(true);
        b.append_null();
        let codes: ArrayRef = Arc::new(b.finish());
        RecordBatch::try_from_iter(vec![("codes", codes)]).unwrap()
    }

    #[test]
    fn lists_are_delimited_text_except_in_json() {
        let b = codes();
        let render = |format| {
            let mut out = Vec::new();
            write(format, false, &b.schema(), std::slice::from_ref(&b), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // A one-column CSV quotes an empty field (else the line would be blank).
        assert_eq!(render(Format::Csv), "codes\n250.00;401.9\n\"\"\n\"\"\n");
        assert_eq!(render(Format::Markdown), "| codes |\n|---|\n| 250.00;401.9 |\n|  |\n|  |\n");
        assert!(render(Format::Table).contains("| 250.00;401.9 |"), "{}", render(Format::Table));
        assert_eq!(render(Format::Json), "[{\"codes\":[\"250.00\",\"401.9\"]},{\"codes\":[]},{}]\n");
    }

    #[test]
    fn expanded_shows_one_block_per_row() {
        let mut out = Vec::new();
        write_expanded(&batch().schema(), &[batch()], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "-[ RECORD 1 ]\nn | 1\ns | a|b\n-[ RECORD 2 ]\nn | \ns | x\ny\n");
        let mut out = Vec::new();
        write_expanded(&batch().schema(), &[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "(0 rows)\n");
    }

    #[test]
    fn json_is_an_array_of_objects() {
        assert_eq!(render(Format::Json, &[batch()]), "[{\"n\":1,\"s\":\"a|b\"},{\"s\":\"x\\ny\"}]\n");
    }
}
