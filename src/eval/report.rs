//! The per-group comparison of original and estimated answers, and its summary.
//!
//! Relative error of a group: |estimate - original| / max(|original|, 1). The floor of 1 keeps
//! groups whose original answer is 0 (an estimate of 0.4 patients where there are none is an
//! error of 0.4, not infinity) and leaves every other count untouched; ARE (ArtUC paper,
//! Def. 7) is the mean of these relative errors. A group missing on one side answers 0 for
//! COUNT and SUM; for AVG it has no answer and is left out of the summary.

use super::dist::Val;
use crate::error::Result;
use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::cmp::Ordering;
use std::sync::Arc;

/// One group of one query.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupError {
    pub key: String,
    pub original: Option<f64>,
    pub estimate: Option<f64>,
}

impl GroupError {
    pub fn abs_error(&self) -> Option<f64> {
        Some((self.estimate? - self.original?).abs())
    }
    pub fn rel_error(&self) -> Option<f64> {
        Some(self.abs_error()? / self.original?.abs().max(1.0))
    }
}

/// The summary row: totals (counts and sums only), mean absolute error and ARE over the
/// groups with both answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub groups: usize,
    pub total_original: Option<f64>,
    pub total_estimate: Option<f64>,
    pub mean_abs_error: Option<f64>,
    pub are: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct QueryReport {
    pub query: String,
    pub groups: Vec<GroupError>,
    /// COUNT and SUM answers add up across groups; AVG ones do not.
    pub additive: bool,
}

/// Group order: numbers by value before text, part by part.
pub fn compare_keys(a: &[Val], b: &[Val]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Val::Num(p), Val::Num(q)) => p.total_cmp(q),
            (Val::Num(_), _) => Ordering::Less,
            (_, Val::Num(_)) => Ordering::Greater,
            (p, q) => p.key_text().cmp(&q.key_text()),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

impl QueryReport {
    pub fn summary(&self) -> Summary {
        let both: Vec<&GroupError> = self.groups.iter().filter(|g| g.abs_error().is_some()).collect();
        let mean = |f: &dyn Fn(&GroupError) -> f64| {
            (!both.is_empty()).then(|| both.iter().map(|g| f(g)).sum::<f64>() / both.len() as f64)
        };
        let total = |f: &dyn Fn(&GroupError) -> Option<f64>| {
            self.additive.then(|| self.groups.iter().filter_map(f).sum::<f64>())
        };
        Summary {
            groups: both.len(),
            total_original: total(&|g| g.original),
            total_estimate: total(&|g| g.estimate),
            mean_abs_error: mean(&|g| g.abs_error().unwrap_or(0.0)),
            are: mean(&|g| g.rel_error().unwrap_or(0.0)),
        }
    }

    pub fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("group_key", DataType::Utf8, false),
            Field::new("original", DataType::Float64, true),
            Field::new("estimate", DataType::Float64, true),
            Field::new("abs_error", DataType::Float64, true),
            Field::new("rel_error", DataType::Float64, true),
        ]))
    }

    /// One row per group, then the `SUMMARY` row (original and estimate: totals; abs_error:
    /// mean absolute error; rel_error: ARE).
    pub fn to_batch(&self) -> Result<RecordBatch> {
        let s = self.summary();
        let mut key: Vec<String> = self.groups.iter().map(|g| g.key.clone()).collect();
        key.push("SUMMARY".into());
        let col = |f: &dyn Fn(&GroupError) -> Option<f64>, last: Option<f64>| -> ArrayRef {
            Arc::new(Float64Array::from(self.groups.iter().map(f).chain([last]).collect::<Vec<_>>()))
        };
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(key)),
            col(&|g| g.original, s.total_original),
            col(&|g| g.estimate, s.total_estimate),
            col(&|g| g.abs_error(), s.mean_abs_error),
            col(&|g| g.rel_error(), s.are),
        ];
        Ok(RecordBatch::try_new(Self::schema(), cols)?)
    }

    /// A plain-text table for the command line.
    pub fn to_text(&self) -> String {
        let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
        let mut rows: Vec<[String; 5]> =
            vec![["group_key", "original", "estimate", "abs_error", "rel_error"].map(String::from)];
        for g in &self.groups {
            rows.push([g.key.clone(), f(g.original), f(g.estimate), f(g.abs_error()), f(g.rel_error())]);
        }
        let s = self.summary();
        rows.push(["SUMMARY".into(), f(s.total_original), f(s.total_estimate), f(s.mean_abs_error), f(s.are)]);
        let widths: Vec<usize> = (0..5).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for (i, r) in rows.iter().enumerate() {
            let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
            if i == 0 {
                out.push_str(&format!(
                    "|{}|\n",
                    widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("|")
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_originals_use_a_floor_of_one() {
        let g = |o: f64, e: f64| GroupError { key: "k".into(), original: Some(o), estimate: Some(e) };
        let r = QueryReport { query: String::new(), groups: vec![g(0.0, 0.5), g(10.0, 8.0)], additive: true };
        assert_eq!(r.groups[0].rel_error(), Some(0.5));
        assert_eq!(r.groups[1].rel_error(), Some(0.2));
        let s = r.summary();
        assert!((s.are.unwrap() - 0.35).abs() < 1e-12);
        assert_eq!(s.total_original, Some(10.0));
        assert_eq!(r.to_batch().unwrap().num_rows(), 3);
    }
}
