//! The release of a full-domain node built from the frequency table rather than planned over
//! the source: the table's tuples generalized to the chosen node are its classes, and each
//! (class, sensitive value) row of the table is a cell of rows alike ([`ClassCells`], as
//! h-ceiling builds its release). The source rows are not read again, labels are made once per
//! class, and the adapter gathers the rows straight in their drawn order.
//!
//! It writes what the plan ([`crate::encode::materialize_suppressed`]) writes, row for row as a
//! multiset, under the same schema: a label (`*` when suppressed) per quasi-identifier, the
//! node's bounds (NULL when suppressed), the sensitive column as it is (NULL when suppressed:
//! a suppressed record is a shell that carries no value). So it is used only
//! where the frequency table holds every published column and the rows are in this process
//! ([`counted_columns`]); other sources and a cluster's sessions keep the plan, which runs
//! where the rows are.

use crate::encode::publish::{ClassCells, date_bounds, push_date_bounds, sensitive_values};
use crate::encode::source::Source;
use crate::encode::{FrequencyTable, group, node_label, released};
use crate::error::Result;
use crate::hierarchy::Hierarchy;
use crate::meta::Role;
use crate::release::SUPPRESSED;
use crate::release::labels::{label_array, label_type};
use datafusion::arrow::array::{ArrayRef, Float64Array, new_null_array};
use datafusion::arrow::compute::{cast, concat};
use datafusion::arrow::datatypes::{Field, Schema};
use std::collections::HashSet;
use std::sync::Arc;

/// What a release built from the frequency table needs counted beside the quasi-identifiers:
/// `Some(None)` when it publishes the quasi-identifiers only, `Some(Some(name))` when also the
/// one sensitive column `name`. `None` when the release must be planned over the source: its
/// rows are not in this process (a file, a view), the session runs its plans on a cluster
/// (Ballista: the release stays a plan its executors run), or it publishes a column a
/// frequency table does not hold (set-valued, a kept insensitive one, a second sensitive one).
pub(super) fn counted_columns(source: &Source, keep_insensitive: bool) -> Option<Option<String>> {
    if !source.holds_rows() || source.distributed() {
        return None;
    }
    let meta = source.meta();
    let schema = source.schema();
    let mut others = schema
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|n| released(meta, n, keep_insensitive) && meta.role(n) != Some(Role::QuasiIdentifier));
    match (others.next(), others.next()) {
        (None, _) => Some(None),
        (Some(s), None) if meta.role(s) == Some(Role::Sensitive) => Some(Some(s.clone())),
        _ => None,
    }
}

/// The release of node `levels` with the classes labelled `suppressed` suppressed, from `ft`
/// (counted over the quasi-identifiers and the release's sensitive column, if it has one);
/// `dropped`: the source columns it leaves out. A class is suppressed when its labels are a
/// suppressed class's, the plan's own rule.
pub(super) fn release(
    source: &Source,
    ft: &FrequencyTable,
    levels: &[u8],
    suppressed: &[Vec<String>],
    dropped: Vec<String>,
) -> Result<ClassCells> {
    let schema = source.schema();
    let (g, row_class) = group(ft, levels)?;
    let labels: Vec<Vec<String>> = (ft.qis.iter().zip(levels).zip(&g.codes))
        .map(|((q, &level), codes)| codes.iter().map(|&c| node_label(&q.hierarchy, level as usize, c)).collect())
        .collect();
    let starred: HashSet<Vec<&str>> = suppressed.iter().map(|c| c.iter().map(String::as_str).collect()).collect();
    let gone: Vec<bool> = (0..g.len())
        .map(|c| !starred.is_empty() && starred.contains(&labels.iter().map(|l| l[c].as_str()).collect::<Vec<_>>()))
        .collect();
    // A suppressed record is a shell: its sensitive value is withheld (NULL, the value after
    // the column's last), as the plan withholds it.
    let withheld = ft.sensitive.as_ref().map_or(0, |s| s.values.len() as u32);
    let shells = gone.iter().any(|&g| g);
    let (mut fields, mut cols, mut values) = (Vec::new(), Vec::new(), None);
    for f in schema.fields() {
        if let Some(s) = ft.sensitive.as_ref().filter(|s| s.name == *f.name()) {
            let (field, mut array) = sensitive_values(source.name(), s, &schema)?;
            let mut field = f.as_ref().clone().with_data_type(field.data_type().clone());
            if !starred.is_empty() {
                array = concat(&[array.as_ref(), new_null_array(array.data_type(), 1).as_ref()])?;
                // Nullable as the plan's CASE is whenever classes are suppressed.
                field = field.with_nullable(true);
            }
            values = Some((fields.len(), array));
            fields.push(field);
        } else if let Some(a) = ft.qis.iter().position(|q| q.name == *f.name()) {
            let node = Node { h: &ft.qis[a].hierarchy, level: levels[a] as usize, codes: &g.codes[a] };
            node.columns(f, &labels[a], &gone, &mut fields, &mut cols)?;
        }
    }
    let value = |r: usize| match &ft.sensitive {
        Some(_) if shells && gone[row_class[r] as usize] => withheld,
        Some(s) => s.codes[r],
        None => 0,
    };
    let mut cells = vec![(0, 0, 0); ft.len()];
    crate::parallel::in_ranges(&mut cells, 1, CELL_ROWS, |rows, part| {
        for (cell, r) in part.iter_mut().zip(rows) {
            *cell = (row_class[r], value(r), ft.counts[r]);
        }
    });
    Ok(ClassCells::new(Arc::new(Schema::new(fields)), cols, values, cells, dropped))
}

/// Frequency rows a job of [`release`] makes cells of.
const CELL_ROWS: usize = 1 << 16;

/// One quasi-identifier's classes at the chosen node: their node codes at `level`.
struct Node<'a> {
    h: &'a Hierarchy,
    level: usize,
    codes: &'a [u32],
}

impl Node<'_> {
    /// The class-level columns of quasi-identifier `f`: its label (`*` for a suppressed class),
    /// and for a numeric or date column the node's bounds (NULL for a suppressed class), typed
    /// and nullable as the plan's (whose lookups are outer-joined).
    fn columns(
        &self,
        f: &Field,
        labels: &[String],
        gone: &[bool],
        fields: &mut Vec<Field>,
        cols: &mut Vec<ArrayRef>,
    ) -> Result<()> {
        fields.push(Field::new(f.name(), label_type(), true));
        cols.push(label_array(labels.iter().zip(gone).map(|(l, &g)| if g { SUPPRESSED } else { l.as_str() })));
        let kept = |c: usize| (!gone[c]).then_some(self.codes[c] as usize);
        if self.h.is_numeric() {
            let bound = |c: usize, upper: bool| {
                kept(c).map(|n| {
                    let (lo, hi) = self.h.bounds(self.level, n as u32).expect("numeric node bounds");
                    if upper { hi } else { lo }
                })
            };
            for (suffix, upper) in [("lo", false), ("hi", true)] {
                let v: Float64Array = (0..self.codes.len()).map(|c| bound(c, upper)).collect();
                fields.push(Field::new(format!("{}_{suffix}", f.name()), f.data_type().clone(), true));
                cols.push(cast(&(Arc::new(v) as ArrayRef), f.data_type())?);
            }
        } else if let Some(nodes) = date_bounds(f.data_type(), self.h, self.level) {
            let b: Vec<_> = (0..self.codes.len()).map(|c| kept(c).and_then(|n| nodes[n].clone())).collect();
            push_date_bounds(f, &b, fields, cols)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{KanonConfig, anonymize};
    use crate::encode::source::Source;
    use crate::hierarchy::{HierarchyBuilder, HierarchyKind};
    use crate::meta::{Role, TableMeta};
    use crate::methods::contract::{Release, Rows, Value};
    use crate::progress::Silent;
    use datafusion::arrow::array::{ArrayRef, AsArray, Date32Array, Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion::catalog::view::ViewTable;
    use datafusion::execution::SessionStateBuilder;
    use datafusion::prelude::SessionConfig;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// The same rows and declarations behind a provider that is not in memory (a view), so
    /// that `anonymize` plans the release over the source, as for a file or a cluster's table.
    fn planned(source: &Source) -> Source {
        let view = ViewTable::new(source.frame().unwrap().logical_plan().clone(), None);
        let state = SessionStateBuilder::new().with_default_features().build();
        Source::new(source.name(), Arc::new(view), state, source.meta().clone())
    }

    fn text(v: &Value) -> String {
        match v {
            Value::Text(s) => s.clone(),
            Value::OptText(s) => format!("{s:?}"),
            Value::Float(x) => x.to_string(),
            Value::Int(x) | Value::OptInt(Some(x)) => x.to_string(),
            Value::OptInt(None) => "NULL".into(),
            Value::Bool(b) => b.to_string(),
        }
    }

    /// Rows as text, sorted: the release as a multiset.
    fn sorted_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for b in batches {
            let cols: Vec<ArrayRef> = b.columns().iter().map(|c| cast(c, &DataType::Utf8).unwrap()).collect();
            for r in 0..b.num_rows() {
                rows.push(
                    cols.iter().map(|c| c.as_string::<i32>().iter().nth(r).unwrap().unwrap_or("NULL").into()).collect(),
                );
            }
        }
        rows.sort();
        rows
    }

    /// The release's schema, rows (sorted) and report, built from cells (`Rows::Classes`, which
    /// an in-memory source must give) and planned; the rows as the adapter builds them.
    async fn release(source: &Source, config: &KanonConfig) -> (SchemaRef, Vec<Vec<String>>, Vec<String>) {
        let Release { rows, report, .. } = anonymize(source, config, &Silent).await.unwrap();
        let report = report.unwrap().iter().map(|(n, v)| format!("{n}={}", text(v))).collect();
        match rows {
            Rows::Classes(c) => {
                let order: Vec<u32> = (0..c.rows() as u32).rev().collect();
                (c.schema.clone(), sorted_rows(&[c.batch_in(&order).unwrap()]), report)
            }
            Rows::Plan(df) => {
                let schema = df.schema().inner().clone();
                (schema, sorted_rows(&df.collect().await.unwrap()), report)
            }
            Rows::Batches(..) => panic!("kanon builds no batches"),
        }
    }

    /// Both paths give the same schema (types, nullability, metadata), rows and report.
    async fn same_release(source: &Source, options: &str, k: u64) {
        let config = KanonConfig::new(k).with_options(options).unwrap();
        let counted = anonymize(source, &config, &Silent).await.unwrap();
        assert!(matches!(counted.rows, Rows::Classes(_)), "{options}: an in-memory source's release from cells");
        let (schema, rows, report) = release(source, &config).await;
        let (plan_schema, plan_rows, plan_report) = release(&planned(source), &config).await;
        assert_eq!(schema.fields(), plan_schema.fields(), "{options}");
        assert_eq!(report, plan_report, "{options}");
        assert_eq!(rows.len(), plan_rows.len(), "{options}");
        assert!(rows == plan_rows, "{options}: the releases differ");
    }

    fn adult(qis: usize) -> Source {
        let mut adult = crate::datasets::adult().unwrap();
        if qis == 9 {
            adult.meta.roles = adult.meta.hierarchies.keys().map(|c| (c.clone(), Role::QuasiIdentifier)).collect();
            adult.meta.roles.sort();
        }
        Source::from_batches("adult", adult.batches[0].schema(), adult.batches, adult.meta).unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn adult_releases_from_cells_equal_the_planned_ones() {
        let seven = adult(7);
        for options in ["", "suppression=2", "distinct_l=3", "t=0.2, suppression=5", "metric=dm, suppression=1"] {
            same_release(&seven, options, 5).await;
        }
        let nine = adult(9);
        for (options, k) in [("", 5), ("suppression=2", 10)] {
            same_release(&nine, options, k).await;
        }
    }

    /// A release that publishes a column the frequency table does not hold (a kept insensitive
    /// one), or whose rows are not in this process, is planned over the source.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn other_columns_and_other_sources_keep_the_plan() {
        let keep = KanonConfig::new(5).with_options("keep_insensitive=true").unwrap();
        let release = anonymize(&adult(7), &keep, &Silent).await.unwrap();
        assert!(matches!(release.rows, Rows::Plan(_)), "salary_class is not counted");
        let release = anonymize(&planned(&adult(7)), &KanonConfig::new(5), &Silent).await.unwrap();
        assert!(matches!(release.rows, Rows::Plan(_)), "a view's rows are read by the plan");
        let adult = adult(7);
        let config = SessionConfig::new().with_option_extension(Ballista::default());
        let state = SessionStateBuilder::new().with_config(config).with_default_features().build();
        let on_cluster = Source::new("adult", adult.provider().clone(), state, adult.meta().clone());
        let release = anonymize(&on_cluster, &KanonConfig::new(5), &Silent).await.unwrap();
        assert!(matches!(release.rows, Rows::Plan(_)), "a cluster's executors run the plan");
    }

    datafusion::common::extensions_options! {
        /// Options under Ballista's prefix, as a Ballista session's configuration carries.
        struct Ballista {
            pub job_name: String, default = String::new()
        }
    }

    impl datafusion::config::ConfigExtension for Ballista {
        const PREFIX: &'static str = "ballista";
    }

    /// A hierarchy from leaf-to-root label rows.
    fn hierarchy(name: &str, kind: HierarchyKind, rows: Vec<Vec<String>>) -> Arc<crate::hierarchy::Hierarchy> {
        let mut b = HierarchyBuilder::new(name, kind);
        for (i, r) in rows.into_iter().enumerate() {
            b.row(i + 1, r);
        }
        Arc::new(b.build().unwrap())
    }

    /// A random table: a numeric, a categorical (with NULLs under a `NULL` leaf) and a date
    /// quasi-identifier, a sensitive column and an identifier.
    fn random_source(rows: &[(u8, u8, u8, u8)]) -> Source {
        let ages = hierarchy(
            "age",
            HierarchyKind::Numeric,
            (0..20).map(|a| vec![a.to_string(), format!("{}-{}", a / 5 * 5, a / 5 * 5 + 4), "*".into()]).collect(),
        );
        let cats = hierarchy(
            "cat",
            HierarchyKind::Categorical,
            (0..6)
                .map(|c| vec![format!("c{c}"), format!("g{}", c / 3), "*".into()])
                .chain([vec!["NULL".into(), "g?".into(), "*".into()]])
                .collect(),
        );
        let day = |d: u8| format!("2021-{:02}-{:02}", 1 + d / 28, 1 + d % 28);
        let days = hierarchy(
            "day",
            HierarchyKind::Categorical,
            (0..56).map(|d| vec![day(d), day(d)[..7].to_string(), "2021".into(), "*".into()]).collect(),
        );
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("age", DataType::Int64, false),
            Field::new("cat", DataType::Utf8, true),
            Field::new("day", DataType::Date32, false),
            Field::new("s", DataType::Utf8, false),
        ]));
        let dates = StringArray::from_iter_values(rows.iter().map(|r| day(r.2 % 56)));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..rows.len() as i64)),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| i64::from(r.0 % 20)))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| (r.1 % 7 < 6).then(|| format!("c{}", r.1 % 7))))),
            cast(&(Arc::new(dates) as ArrayRef), &DataType::Date32).unwrap(),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| format!("s{}", r.3 % 4)))),
        ];
        assert!(columns[3].as_any().downcast_ref::<Date32Array>().is_some());
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let mut meta = TableMeta::default();
        for (c, h) in [("age", ages), ("cat", cats), ("day", days)] {
            meta.roles.push((c.into(), Role::QuasiIdentifier));
            meta.hierarchies.insert(c.into(), h);
        }
        meta.roles.push(("s".into(), Role::Sensitive));
        meta.roles.push(("id".into(), Role::Identifier));
        Source::from_batches("t", schema, vec![batch], meta).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// On random tables, with and without suppression and l-diversity, the release from
        /// cells is the planned one.
        #[test]
        fn random_releases_from_cells_equal_the_planned_ones(
            rows in prop::collection::vec(any::<(u8, u8, u8, u8)>(), 8..120),
            k in 2u64..5,
            options in prop::sample::select(vec!["", "suppression=10", "distinct_l=2, suppression=20", "suppression=50"]),
        ) {
            let source = random_source(&rows);
            let config = KanonConfig::new(k).with_options(options).unwrap();
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async {
                // A model no node satisfies is an error on both paths alike.
                if anonymize(&source, &config, &Silent).await.is_err() {
                    assert!(anonymize(&planned(&source), &config, &Silent).await.is_err());
                    return;
                }
                same_release(&source, options, k).await;
            });
        }
    }
}
