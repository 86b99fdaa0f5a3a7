//! Builders shared by the ArtUC tests: RT sources with declarations, the verifier's constraints
//! table, and readers for `verify_release` / `anon_metrics` results.
#![allow(dead_code)]

use anonfusion::hierarchy::{Hierarchy, HierarchyBuilder, HierarchyKind};
use anonfusion::methods::artuc::{ArtucResult, RtTable, release};
use anonfusion::{Registry, Role, TableMeta};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, ListBuilder, RecordBatch, StringArray, StringBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema};
use datafusion::prelude::SessionContext;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A hierarchy from ARX-shaped rows.
pub fn hierarchy(name: &str, kind: HierarchyKind, rows: &[Vec<String>]) -> Arc<Hierarchy> {
    let mut b = HierarchyBuilder::new(name, kind);
    for (i, r) in rows.iter().enumerate() {
        b.row(i + 1, r.clone());
    }
    Arc::new(b.build().unwrap())
}

pub fn rows_of(text: &[&str]) -> Vec<Vec<String>> {
    text.iter().map(|l| l.split(';').map(String::from).collect()).collect()
}

pub fn list_array(lists: &[Vec<String>]) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for l in lists {
        for c in l {
            b.values().append_value(c);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

/// An RT source: one numeric demographic (`age`), categorical ones, and `codes`.
pub struct Source {
    pub ages: Vec<i64>,
    pub cats: Vec<(String, Arc<Hierarchy>, Vec<String>)>,
    pub age_h: Arc<Hierarchy>,
    pub code_h: Arc<Hierarchy>,
    pub codes: Vec<Vec<String>>,
}

impl Source {
    pub fn batch(&self) -> RecordBatch {
        let mut fields = vec![Field::new("age", DataType::Int64, false)];
        let mut cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(self.ages.clone()))];
        for (name, _, v) in &self.cats {
            fields.push(Field::new(name, DataType::Utf8, false));
            cols.push(Arc::new(StringArray::from(v.clone())));
        }
        let codes = list_array(&self.codes);
        fields.push(Field::new("codes", codes.data_type().clone(), false));
        cols.push(codes);
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    }

    pub fn meta(&self) -> TableMeta {
        let mut meta = TableMeta::default();
        meta.roles.push(("age".into(), Role::QuasiIdentifier));
        meta.hierarchies.insert("age".into(), self.age_h.clone());
        for (name, h, _) in &self.cats {
            meta.roles.push((name.clone(), Role::QuasiIdentifier));
            meta.hierarchies.insert(name.clone(), h.clone());
        }
        meta.roles.push(("codes".into(), Role::SetValued));
        meta.hierarchies.insert("codes".into(), self.code_h.clone());
        meta
    }

    pub fn table(&self) -> RtTable {
        RtTable::from_batches("src", &self.meta(), &[self.batch()]).unwrap()
    }

    /// A session holding the source as `src`, with its declarations.
    pub fn session(&self) -> (SessionContext, Arc<Registry>) {
        let (ctx, registry) = anonfusion::session();
        ctx.register_batch("src", self.batch()).unwrap();
        registry.set("src", self.meta());
        (ctx, registry)
    }
}

/// The constraints as the verifier's table: `age_lo`, `age_hi`, one label column per categorical
/// attribute, `codes`. Written from the test's own description of U, not from the method's model.
pub fn constraints_batch(cats: &[&str], rows: &[(i64, i64, Vec<String>, Vec<String>)]) -> RecordBatch {
    let mut fields = vec![Field::new("age_lo", DataType::Int64, false), Field::new("age_hi", DataType::Int64, false)];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(rows.iter().map(|r| r.0).collect::<Vec<_>>())),
        Arc::new(Int64Array::from(rows.iter().map(|r| r.1).collect::<Vec<_>>())),
    ];
    for (i, c) in cats.iter().enumerate() {
        fields.push(Field::new(*c, DataType::Utf8, false));
        cols.push(Arc::new(StringArray::from(rows.iter().map(|r| r.2[i].clone()).collect::<Vec<_>>())));
    }
    let codes = list_array(&rows.iter().map(|r| r.3.clone()).collect::<Vec<_>>());
    fields.push(Field::new("codes", codes.data_type().clone(), false));
    cols.push(codes);
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
}

pub async fn collect(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// verify_release's rows as (check, holds, detail).
pub async fn verify(ctx: &SessionContext, checks: &str) -> Vec<(String, bool, String)> {
    let mut out = Vec::new();
    for b in collect(ctx, &format!("SELECT * FROM verify_release('src', 'rel', '{checks}')")).await {
        let (c, h, d) = (b.column(0).as_string::<i32>(), b.column(1).as_boolean(), b.column(2).as_string::<i32>());
        for r in 0..b.num_rows() {
            out.push((c.value(r).to_string(), h.value(r), d.value(r).to_string()));
        }
    }
    out
}

/// anon_metrics as a name → value map.
pub async fn metrics(ctx: &SessionContext) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for b in collect(ctx, "SELECT metric, value FROM anon_metrics('src', 'rel')").await {
        let (n, v) = (b.column(0).as_string::<i32>(), b.column(1).as_primitive::<Float64Type>());
        for r in 0..b.num_rows() {
            out.insert(n.value(r).to_string(), v.value(r));
        }
    }
    out
}

/// Register the release as `rel` and the constraints as `u`.
pub fn register(ctx: &SessionContext, table: &RtTable, result: &ArtucResult, constraints: RecordBatch) {
    let rel = release::release(table, result).unwrap();
    let _ = ctx.deregister_table("rel");
    let _ = ctx.deregister_table("u");
    ctx.register_batch("rel", rel.batches[0].clone()).unwrap();
    ctx.register_batch("u", constraints).unwrap();
}

/// Published rows as (class, demographics labels, code labels), sorted.
pub fn published(table: &RtTable, result: &ArtucResult) -> Vec<(i64, Vec<String>, BTreeSet<String>)> {
    let rel = release::release(table, result).unwrap();
    let b = &rel.batches[0];
    let class = b.column(0).as_primitive::<Int64Type>();
    // Label columns are dictionaries (release::labels); read them as text.
    let text = |name: &str| cast(b.column_by_name(name).unwrap(), &DataType::Utf8).unwrap().as_string::<i32>().clone();
    let labels: Vec<_> = table.demographics.iter().map(|q| text(&q.name)).collect();
    let codes = b.column_by_name("codes").unwrap().as_list::<i32>();
    let mut out: Vec<_> = (0..b.num_rows())
        .map(|r| {
            let v = codes.value(r);
            let v = v.as_string_view();
            (
                class.value(r),
                labels.iter().map(|l| l.value(r).to_string()).collect(),
                (0..v.len()).map(|i| v.value(i).to_string()).collect(),
            )
        })
        .collect();
    out.sort();
    out
}

// ---------- the worked example (Figure 1a, Table 4) ----------

pub fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Figure 1a, with Figure 4's hierarchies (Italy, where the data has it, in Germany's place:
/// 8 Origin leaves as Example 3 counts) and Figure 6's ICD-9 taxonomy.
pub fn figure_1a() -> Source {
    let origin = rows_of(&[
        "France;Europe;All",
        "Greece;Europe;All",
        "Italy;Europe;All",
        "Spain;Europe;All",
        "Portugal;Europe;All",
        "Algeria;Africa;All",
        "Nigeria;Africa;All",
        "Ghana;Africa;All",
    ]);
    let codes = rows_of(&[
        "053.20;053;050-059;001-139;*",
        "053.71;053;050-059;001-139;*",
        "458.1;458;451-459;390-459;*",
        "458.21;458;451-459;390-459;*",
        "493.2;493;490-496;460-519;*",
        "494.1;494;490-496;460-519;*",
    ]);
    let ages = vec![19, 22, 28, 30, 51, 51, 47, 44];
    let age_rows: Vec<Vec<String>> =
        [19, 22, 28, 30, 44, 47, 51].iter().map(|a| vec![a.to_string(), "*".into()]).collect();
    Source {
        age_h: hierarchy("age", HierarchyKind::Numeric, &age_rows),
        cats: vec![
            (
                "origin".into(),
                hierarchy("origin", HierarchyKind::Categorical, &origin),
                s(&["France", "Greece", "Italy", "Spain", "Algeria", "Nigeria", "Ghana", "Portugal"]),
            ),
            (
                "gender".into(),
                hierarchy("gender", HierarchyKind::Categorical, &rows_of(&["Male;All", "Female;All"])),
                s(&["Male", "Male", "Female", "Female", "Male", "Male", "Female", "Male"]),
            ),
        ],
        ages,
        code_h: hierarchy("codes", HierarchyKind::Codes, &codes),
        codes: vec![
            s(&["493.2", "494.1", "053.20"]),
            s(&["493.2", "494.1", "053.71"]),
            s(&["494.1", "053.20"]),
            s(&["493.2", "494.1", "053.71"]),
            s(&["493.2"]),
            s(&["493.2", "494.1"]),
            s(&["494.1", "458.1", "458.21"]),
            s(&["458.1", "494.1"]),
        ],
    }
}

/// Table 4 as the verifier's constraints table (u2's 053.70 read as 053.71).
pub fn table_4_batch() -> RecordBatch {
    let all = || s(&["All", "All"]);
    constraints_batch(
        &["origin", "gender"],
        &[
            (19, 50, all(), s(&["458.1", "458.21"])),
            (19, 50, all(), s(&["053.20", "053.71"])),
            (19, 50, all(), s(&["494.1"])),
            (51, 51, s(&["Africa", "Male"]), s(&["493.2"])),
        ],
    )
}
