//! Releases built from classes rather than from source rows (the h-ceiling and entropy
//! methods): one value per class and published column, then one row per record, taken from
//! its class. Rows are laid out class by class and value by value, so a row's position says
//! nothing about which source record it came from.

use super::format_number;
use crate::encode::{FrequencyTable, SensitiveColumn};
use crate::error::{AnonError, Result};
use crate::hierarchy::Hierarchy;
use crate::meta::{Role, TableMeta};
use crate::release::labels::{label_array, label_field, label_type};
use datafusion::arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchOptions, StringArray, UInt32Array,
};
use datafusion::arrow::compute::{cast, take};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::functions_nested::expr_fn::range;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{DataFrame, col, ident, lit};
use std::sync::Arc;

/// Rows per record batch of a release.
const BATCH_ROWS: usize = 65_536;

/// A numeric class range as published: `37`, or `[35-37]`.
pub(crate) fn range_label(lo: f64, hi: f64) -> String {
    if lo == hi { format_number(lo) } else { format!("[{}-{}]", format_number(lo), format_number(hi)) }
}

/// A numeric quasi-identifier's class-level `<name>_lo` / `<name>_hi` columns, in the source
/// column's type, appended to `fields` and `cols`.
pub(crate) fn push_bounds(
    source: &Field,
    lo: Vec<f64>,
    hi: Vec<f64>,
    fields: &mut Vec<Field>,
    cols: &mut Vec<ArrayRef>,
) -> Result<()> {
    for (suffix, v) in [("lo", lo), ("hi", hi)] {
        fields.push(Field::new(format!("{}_{suffix}", source.name()), source.data_type().clone(), false));
        cols.push(cast(&(Arc::new(Float64Array::from(v)) as ArrayRef), source.data_type())?);
    }
    Ok(())
}

/// Bounds of a date quasi-identifier: for each node of `level`, the first and last day its
/// label names, as `YYYY-MM-DD` (`date_hierarchy`'s labels: a day, `2021-03` the month,
/// `2021` the year, `2020s` the decade). Read from the label alone, so they say nothing the
/// label does not (the first and last dates of the data under a node would). The root `*`, the
/// NULL leaf and any other label have none (NULL). None when `source` is no date column.
pub(crate) fn date_bounds(source: &DataType, h: &Hierarchy, level: usize) -> Option<DateBounds> {
    if !matches!(source, DataType::Date32 | DataType::Date64) || h.is_numeric() {
        return None;
    }
    Some(h.level(level).labels.iter().map(|l| label_days(l)).collect())
}

/// The first and last day a date hierarchy's label names (see [`date_bounds`]).
fn label_days(label: &str) -> Option<(String, String)> {
    let number = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse::<u32>().ok()).flatten();
    let days_in = |y: u32, m: u32| match m {
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let parts: Vec<&str> = label.split('-').collect();
    let (lo, hi) = match parts.as_slice() {
        [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2 => {
            let (y, m, d) = (number(y)?, number(m)?, number(d)?);
            ((1..=12).contains(&m) && (1..=days_in(y, m)).contains(&d)).then_some(((y, m, d), (y, m, d)))?
        }
        [y, m] if y.len() == 4 && m.len() == 2 => {
            let (y, m) = (number(y)?, number(m)?);
            (1..=12).contains(&m).then(|| ((y, m, 1), (y, m, days_in(y, m))))?
        }
        [y] if y.len() == 4 => {
            let y = number(y)?;
            ((y, 1, 1), (y, 12, 31))
        }
        [d] if d.len() == 5 && d.ends_with("0s") => {
            let y = number(&d[..4])?;
            ((y, 1, 1), (y + 9, 12, 31))
        }
        _ => return None,
    };
    let text = |(y, m, d): (u32, u32, u32)| format!("{y:04}-{m:02}-{d:02}");
    Some((text(lo), text(hi)))
}

/// Per node of a level: its first and last day, when its label names days.
pub(crate) type DateBounds = Vec<Option<(String, String)>>;

/// [`date_bounds`] of every level, 0 to the root.
pub(crate) fn date_bounds_by_level(source: &DataType, h: &Hierarchy) -> Option<Vec<DateBounds>> {
    (0..=h.height()).map(|level| date_bounds(source, h, level)).collect()
}

/// A date quasi-identifier's `<name>_lo` / `<name>_hi` columns from per-row bounds (None:
/// NULL), in the source column's type.
pub(crate) fn push_date_bounds(
    source: &Field,
    bounds: &[Option<(String, String)>],
    fields: &mut Vec<Field>,
    cols: &mut Vec<ArrayRef>,
) -> Result<()> {
    for (suffix, upper) in [("lo", false), ("hi", true)] {
        let days: StringArray = bounds.iter().map(|b| b.as_ref().map(|(lo, hi)| if upper { hi } else { lo })).collect();
        fields.push(Field::new(format!("{}_{suffix}", source.name()), source.data_type().clone(), true));
        cols.push(cast(&(Arc::new(days) as ArrayRef), source.data_type())?);
    }
    Ok(())
}

/// The sensitive column's field and its distinct values: text as a dictionary of them
/// ([`sensitive_values_type`]), any other type in the source column's type. A text value is then stored
/// once per release and a row holds a 4-byte key (a 50 M-row release of NPS-like diseases 4
/// bytes a row instead of 13.5), and gathering a release's rows moves keys, as for its labels.
/// Numbers stay numbers: SQL adds and averages them.
pub(crate) fn sensitive_values(table: &str, sens: &SensitiveColumn, source: &Schema) -> Result<(Field, ArrayRef)> {
    let ty = source.field_with_name(&sens.name).map(|f| f.data_type().clone()).unwrap_or(DataType::Utf8);
    if sensitive_values_type(&ty).is_some() {
        return Ok((label_field(&sens.name), label_array(sens.values.iter().map(String::as_str))));
    }
    let values: ArrayRef = cast(&(Arc::new(StringArray::from(sens.values.clone())) as ArrayRef), &ty)
        .map_err(|_| AnonError::column(table, &sens.name, format!("cannot be written back as {ty}")))?;
    Ok((Field::new(&sens.name, ty, false), values))
}

/// The type a release gives a sensitive column of source type `ty` when it is not `ty`:
/// [`label_type`] for text, or a dictionary of text (a pandas categorical).
pub(crate) fn sensitive_values_type(ty: &DataType) -> Option<DataType> {
    fn is_text(ty: &DataType) -> bool {
        match ty {
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
            DataType::Dictionary(_, values) => is_text(values),
            _ => false,
        }
    }
    is_text(ty).then(label_type)
}

/// A class-built release's schema: the class-level `fields`, then the sensitive column typed by
/// [`sensitive_values`]; with that column's distinct values, for [`class_rows`].
pub(crate) fn release_schema(
    table: &str,
    sens: &SensitiveColumn,
    source: &Schema,
    mut fields: Vec<Field>,
) -> Result<(SchemaRef, ArrayRef)> {
    let (field, values) = sensitive_values(table, sens, source)?;
    fields.push(field);
    Ok((Arc::new(Schema::new(fields)), values))
}

/// The class and the sensitive value of every row, for [`class_rows`], from cells
/// `(class, value, rows)` laid out in the order given: a cell's rows are adjacent and alike.
/// The rows are written on the pool ([`crate::parallel::repeat_by`]), the two columns side by
/// side.
pub(crate) fn cell_rows(cells: &[(u32, u32, u64)]) -> (Vec<u32>, Vec<u32>) {
    crate::parallel::join(
        || crate::parallel::repeat_by(cells, |c| (c.0, c.2 as usize)),
        || crate::parallel::repeat_by(cells, |c| (c.1, c.2 as usize)),
    )
}

/// The release's batches: row i is class `row_class[i]` (an index into the class-level
/// columns) with sensitive value `row_value[i]` (an index into `values`). Batches are built
/// on the process's pool, in the order of the rows.
pub(crate) fn class_rows(
    schema: &SchemaRef,
    class_cols: &[ArrayRef],
    values: &ArrayRef,
    row_class: &[u32],
    row_value: &[u32],
) -> Result<Vec<RecordBatch>> {
    let chunks: Vec<(&[u32], &[u32])> = row_class.chunks(BATCH_ROWS).zip(row_value.chunks(BATCH_ROWS)).collect();
    let batches = crate::parallel::map(&chunks, |&(cs, vs)| -> Result<RecordBatch> {
        let (ci, vi) = (UInt32Array::from(cs.to_vec()), UInt32Array::from(vs.to_vec()));
        let mut cols: Vec<ArrayRef> = class_cols.iter().map(|c| take(c, &ci, None)).collect::<Result<_, _>>()?;
        cols.push(take(values, &vi, None)?);
        Ok(RecordBatch::try_new(schema.clone(), cols)?)
    });
    batches.into_iter().collect()
}

/// A release before its rows exist: class-level columns, the values of the one column that
/// varies within a class (the sensitive one, when the release has it) and the cells (class,
/// value, rows). Expanded in the client ([`ClassCells::batch_in`]) it is the
/// [`crate::release::Published`] table every method returns; expanded by a plan
/// ([`ClassCells::expand`]) the client never holds the rows. Named for what it holds, since
/// it is a builder of the release, not the release. h-ceiling builds one from its classes and
/// counterfeits; `kanon_anonymize` from its frequency table generalized to the chosen node.
pub(crate) struct ClassCells {
    pub(crate) schema: SchemaRef,
    class_cols: Vec<ArrayRef>,
    /// The value column's place among the schema's columns and its distinct values (a cell's
    /// value indexes them); `None` when the release has no such column (every cell's value 0).
    values: Option<(usize, ArrayRef)>,
    cells: Vec<(u32, u32, u64)>,
    /// Source columns the release leaves out (neither identifier, quasi-identifier nor
    /// sensitive).
    pub(crate) dropped: Vec<String>,
}

impl ClassCells {
    /// `schema`'s columns are `class_cols` (one entry per class each) with the value column
    /// inserted at its place; `cells` are (class, value, rows), laid out in the order a
    /// release's rows are numbered before they are permuted.
    pub(crate) fn new(
        schema: SchemaRef,
        class_cols: Vec<ArrayRef>,
        values: Option<(usize, ArrayRef)>,
        cells: Vec<(u32, u32, u64)>,
        dropped: Vec<String>,
    ) -> Self {
        debug_assert_eq!(schema.fields().len(), class_cols.len() + usize::from(values.is_some()));
        ClassCells { schema, class_cols, values, cells, dropped }
    }

    /// How many rows the release has.
    pub(crate) fn rows(&self) -> usize {
        self.cells.iter().map(|c| c.2 as usize).sum()
    }

    /// Each schema column's source array and the indices that gather it: `classes` for a
    /// class-level column, `values` for the value column.
    fn gathers<'a>(
        &'a self,
        classes: &'a UInt32Array,
        values: &'a UInt32Array,
    ) -> Vec<(&'a ArrayRef, &'a UInt32Array)> {
        let mut out: Vec<(&ArrayRef, &UInt32Array)> = self.class_cols.iter().map(|c| (c, classes)).collect();
        if let Some((at, v)) = &self.values {
            out.insert(*at, (v, values));
        }
        out
    }

    /// The rows, built in the client, as one batch in a uniformly random order drawn with
    /// `rng`: the cells' rows shuffled ([`super::shuffle::shuffled`]), then each column gathered
    /// once from the class-level arrays, on the process's pool (columns side by side, each in
    /// ranges of rows: [`super::shuffle::gather_rows`]), with no batches in the cells' order
    /// built first. The same batch as [`ClassCells::batch_in`] of the order
    /// `permutation(rows, rng)` draws, without the order drawn first and the rows then
    /// gathered by it.
    pub(crate) fn batch_drawn(&self, rng: &mut impl rand::Rng) -> Result<RecordBatch> {
        let laid_out = self.row_cells();
        let drawn = super::shuffle::shuffled(&laid_out, rng);
        drop(laid_out);
        self.batch_of(drawn)
    }

    /// The rows as one batch: row `i` is row `order[i]` of the cells laid out in their order
    /// (`order` a permutation of the rows). For tests that choose the order.
    #[cfg(test)]
    pub(crate) fn batch_in(&self, order: &[u32]) -> Result<RecordBatch> {
        self.batch_of(crate::parallel::gather(&self.row_cells(), order))
    }

    /// The cell of each row, rows laid out cell by cell.
    fn row_cells(&self) -> Vec<u32> {
        let sizes: Vec<(u32, usize)> = self.cells.iter().enumerate().map(|(i, c)| (i as u32, c.2 as usize)).collect();
        crate::parallel::repeat_by(&sizes, |&s| s)
    }

    /// The rows whose cells are `row_cell`, in that order. Each row's class and value are read
    /// from the cells (an array as long as the cells, not the rows, so it stays in cache), then
    /// `row_cell` is dropped (a 50 M-row release's peak holds two arrays of rows beside its
    /// columns, not three) and each column gathered once.
    fn batch_of(&self, row_cell: Vec<u32>) -> Result<RecordBatch> {
        let rows = row_cell.len();
        let of_cells = |f: fn(&(u32, u32, u64)) -> u32| {
            let per_cell: Vec<u32> = self.cells.iter().map(f).collect();
            UInt32Array::from(crate::parallel::gather(&per_cell, &row_cell))
        };
        let (classes, values) = match self.values {
            Some(_) => crate::parallel::join(|| of_cells(|c| c.0), || of_cells(|c| c.1)),
            None => (of_cells(|c| c.0), UInt32Array::from(Vec::<u32>::new())),
        };
        drop(row_cell);
        let columns = self.gathers(&classes, &values);
        let columns = crate::parallel::map(&columns, |&(c, rows)| super::shuffle::gather_rows(c, rows));
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns.into_iter().collect::<Result<_, _>>()?,
            &options,
        )?)
    }

    /// One row per cell: the release's columns and the cell's row count. As many rows as the
    /// chosen node has (class, value) pairs, however many records the release holds.
    pub(crate) fn cells(&self) -> Result<RecordBatch> {
        let classes = UInt32Array::from_iter_values(self.cells.iter().map(|c| c.0));
        let values = UInt32Array::from_iter_values(self.cells.iter().map(|c| c.1));
        let mut fields: Vec<Field> = self.schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut cols: Vec<ArrayRef> =
            self.gathers(&classes, &values).into_iter().map(|(c, i)| take(c, i, None)).collect::<Result<_, _>>()?;
        fields.push(Field::new(N, DataType::Int64, false));
        cols.push(Arc::new(Int64Array::from_iter_values(self.cells.iter().map(|c| c.2 as i64))));
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?)
    }

    /// The rows as a plan over `cells` (a table of [`ClassCells::cells`]), each cell expanded to
    /// its rows by `unnest(range(n))`, so that a cluster's executors build them and the client
    /// never holds them. Rows come cell by cell, as in the client, so their order says nothing
    /// about source records.
    pub(crate) fn expand(&self, cells: DataFrame) -> Result<DataFrame> {
        let out: Vec<Expr> = self.schema.fields().iter().map(|f| ident(f.name())).collect();
        Ok(cells.with_column(I, range(lit(0i64), col(N), lit(1i64)))?.unnest_columns(&[I])?.select(out)?)
    }
}

/// The cells' row count and the unnested index: names no source column can take (a release's
/// columns are source columns, their `_lo`/`_hi` bounds and `class_id`).
const N: &str = "__anonfusion_rows";
const I: &str = "__anonfusion_row";

/// A declared source as a class-built release reads it (h-ceiling, entropy, IPA): what the
/// methods aggregate, and what their releases take column types and dropped columns from.
pub(crate) struct Source<'a> {
    pub(crate) table: &'a str,
    pub(crate) meta: &'a TableMeta,
    /// The declared sensitive column's name.
    pub(crate) sensitive: &'a str,
    pub(crate) schema: SchemaRef,
    /// Over the declared quasi-identifiers and the sensitive column.
    pub(crate) ft: FrequencyTable,
}

impl<'a> Source<'a> {
    /// The frequency table over the declared quasi-identifiers and the sensitive column of a
    /// read [`super::source::Source`].
    pub(crate) async fn of(source: &'a super::source::Source) -> Result<Self> {
        Self::of_bounded(source, None).await
    }

    /// [`Self::of`], with each privacy unit's rows bounded first when `bound` is given
    /// ([`super::contribution`]).
    pub(crate) async fn of_bounded(
        source: &'a super::source::Source,
        bound: Option<&super::contribution::Contribution>,
    ) -> Result<Self> {
        let (table, meta) = (source.name(), source.meta());
        let sensitive = meta.sensitive(table)?;
        let ft = match bound {
            Some(b) => super::contribution::bounded_frequency_table(source, sensitive, b).await?,
            None => super::frequency_table_of(source, Some(sensitive)).await?,
        };
        Ok(Source { table, meta, sensitive, schema: source.schema(), ft })
    }

    /// The sensitive column's codes and values in the frequency table.
    pub(crate) fn sensitive_column(&self) -> Result<&SensitiveColumn> {
        self.ft.declared_sensitive(self.table)
    }

    /// The declared quasi-identifiers in the source's column order (a release's order), each
    /// with its index in the frequency table.
    pub(crate) fn qis(&self) -> Result<Vec<(&Field, usize)>> {
        let meta = self.meta;
        let qis = self.schema.fields().iter().filter(|f| meta.role(f.name()) == Some(Role::QuasiIdentifier));
        qis.map(|f| match self.ft.qis.iter().position(|q| q.name == *f.name()) {
            Some(a) => Ok((f.as_ref(), a)),
            None => Err(AnonError::column(
                self.table,
                f.name(),
                "is a declared quasi-identifier missing from the frequency table",
            )),
        })
        .collect()
    }

    /// [`release_schema`] for this source.
    pub(crate) fn release_schema(&self, fields: Vec<Field>) -> Result<(SchemaRef, ArrayRef)> {
        release_schema(self.table, self.sensitive_column()?, &self.schema, fields)
    }

    /// [`dropped_columns`] of this source.
    pub(crate) fn dropped_columns(&self) -> Vec<String> {
        dropped_columns(&self.schema, self.meta)
    }
}

/// Source columns a class-built release leaves out: everything but the quasi-identifiers and
/// the sensitive attribute (identifiers are never published and are not listed). A built row
/// has no value to show for an insensitive column, and a NULL there would mark it.
pub(crate) fn dropped_columns(source: &Schema, meta: &TableMeta) -> Vec<String> {
    source
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|n| !matches!(meta.role(n), Some(Role::QuasiIdentifier | Role::Sensitive | Role::Identifier)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::label_days;

    #[test]
    fn a_date_label_names_its_first_and_last_day() {
        let days = |l: &str| label_days(l).map(|(a, b)| format!("{a}..{b}"));
        assert_eq!(days("2021-03-05").as_deref(), Some("2021-03-05..2021-03-05"));
        assert_eq!(days("2020-02").as_deref(), Some("2020-02-01..2020-02-29"));
        assert_eq!(days("1900-02").as_deref(), Some("1900-02-01..1900-02-28"));
        assert_eq!(days("2021").as_deref(), Some("2021-01-01..2021-12-31"));
        assert_eq!(days("2010s").as_deref(), Some("2010-01-01..2019-12-31"));
        for other in ["*", "NULL", "2021-13", "2021-02-30", "20x1", "2015s", "21"] {
            assert_eq!(days(other), None, "{other}");
        }
    }

    #[test]
    fn a_text_sensitive_column_is_released_as_a_dictionary_and_a_number_as_itself() {
        use super::{sensitive_values, sensitive_values_type};
        use crate::encode::SensitiveColumn;
        use crate::release::labels::label_type;
        use datafusion::arrow::array::AsArray;
        use datafusion::arrow::compute::cast;
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        let sens = |values: &[&str]| SensitiveColumn {
            name: "s".into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            codes: vec![],
        };
        let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        for ty in [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View, dictionary] {
            assert_eq!(sensitive_values_type(&ty), Some(label_type()), "{ty}");
            let source = Schema::new(vec![Field::new("s", ty.clone(), true)]);
            let (field, values) = sensitive_values("t", &sens(&["flu", "stroke"]), &source).unwrap();
            assert_eq!((field.data_type(), values.data_type()), (&label_type(), &label_type()), "{ty}");
            // A code indexes the values in the order of the frequency table's list.
            let text = cast(&values, &DataType::Utf8).unwrap();
            assert_eq!(text.as_string::<i32>().iter().flatten().collect::<Vec<_>>(), ["flu", "stroke"]);
        }
        let source = Schema::new(vec![Field::new("s", DataType::Int64, false)]);
        assert_eq!(sensitive_values_type(&DataType::Int64), None);
        let (field, values) = sensitive_values("t", &sens(&["3", "10"]), &source).unwrap();
        assert_eq!(field.data_type(), &DataType::Int64);
        assert_eq!(values.as_primitive::<datafusion::arrow::datatypes::Int64Type>().values(), &[3, 10]);
    }
}
